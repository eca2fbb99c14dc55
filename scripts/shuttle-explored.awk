# make docs-results: from make check's shuttle rows (RESULTS/shuttle.tsv), what the baselines'
# iterations explored (the bound's `distinct=D last-new=L`, models/src/harness.rs
# `shuttle_run::Distinct`; docs/mutants.md, "What the iterations explore"). Two tables:
#
# -v table=summary: per scheduler, the rows, the share of iterations that ran a schedule no
#   earlier iteration had run (lowest, median, highest), how many rows found no new schedule in
#   their second half (L at most half the iterations), and the five rows with the lowest share.
# -v table=same: the baselines of one scenario under different variants (`scenario@variant`,
#   and the `-3ix`, `-fold` and `-pipeline` twins) that counted the same D with the same L under
#   one scheduler, where D is below the iterations (a run whose every iteration was new says
#   nothing here). Equal pairs are what two runs of one program give; they are not a proof that
#   the two ran the same executions.
BEGIN { FS = OFS = "\t" }
function word(b, k,    v) {
    if (index(b, k "=") == 0) return ""
    v = b; sub(".*" k "=", "", v); sub(/ .*/, "", v); return v
}
$1 == "shuttle" && $4 == "baseline" && word($5, "distinct") != "" {
    split($5, w, " "); s = w[1]
    it = word($5, "iterations") + 0; d = word($5, "distinct") + 0; l = word($5, "last-new") + 0
    if (table == "same") {
        if (d >= it) next
        base = $3; sub(/@.*/, "", base); sub(/-(3ix|fold|pipeline)$/, "", base)
        key = $2 SUBSEP s SUBSEP base SUBSEP d SUBSEP l
        if (!(key in rows)) order[++groups] = key
        rows[key] = rows[key] (rows[key] == "" ? "" : ", ") "`" $3 "`"
        count[key]++
        next
    }
    n[s]++
    share[s, n[s]] = d / it
    row[s, n[s]] = $2 " " $3
    dist[s, n[s]] = d
    iters[s] = it
    if (l * 2 <= it) sat[s]++
    if (!(s in seen)) { seen[s] = 1; order[++groups] = s }
}
# idx[1..m]: the rows of scheduler s by their share, lowest first (insertion sort).
function by_share(s, m,    i, j, t) {
    for (i = 1; i <= m; i++) idx[i] = i
    for (i = 2; i <= m; i++) {
        t = idx[i]; j = i - 1
        while (j >= 1 && share[s, idx[j]] > share[s, t]) { idx[j + 1] = idx[j]; j-- }
        idx[j + 1] = t
    }
}
END {
    if (table == "same") {
        print "progress", "scheduler", "distinct>", "last new>", "rows"
        for (g = 1; g <= groups; g++) {
            if (count[order[g]] < 2) continue
            split(order[g], k, SUBSEP)
            print k[1], k[2], k[4], k[5], rows[order[g]]
        }
        exit
    }
    print "scheduler", "baseline rows>", "iterations each>", "distinct share: lowest>", "median>", "highest>", "rows with no new schedule in their second half>", "lowest five (progress scenario: distinct schedules)"
    for (g = 1; g <= groups; g++) {
        s = order[g]; m = n[s]
        by_share(s, m)
        low = ""
        for (i = 1; i <= 5 && i <= m; i++)
            low = low (i > 1 ? "; " : "") row[s, idx[i]] ": " dist[s, idx[i]]
        med = (m % 2) ? share[s, idx[(m + 1) / 2]] : (share[s, idx[m / 2]] + share[s, idx[m / 2 + 1]]) / 2
        printf "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%s\n", s, m, iters[s], share[s, idx[1]], med, share[s, idx[m]], sat[s] + 0, low
    }
}
