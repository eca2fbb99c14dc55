# make docs-results: from make check's shuttle rows (RESULTS/shuttle.tsv), what the baselines'
# iterations explored (the bound's `distinct=D last-new=L`, models/src/harness.rs
# `shuttle_run::Distinct`; docs/mutants.md, "What the iterations explore"). Two tables:
#
# -v table=summary: per scheduler and iteration count (make check runs the static area's rows
#   at its budget, the rows on a module's version at 2,000), the rows, the share of iterations
#   that ran a schedule no earlier iteration had run (lowest, median, highest), how many rows
#   found no new schedule in their second half (L at most half the iterations), and the five
#   rows with the lowest share.
# -v table=same: the baselines of one scenario under different variants (`scenario@variant`,
#   and the `-3ix`, `-fold` and `-pipeline` twins) that counted the same D with the same L under
#   one scheduler, where D is below the iterations (a run whose every iteration was new says
#   nothing here). Equal pairs are what two runs of one program give; they are not a proof that
#   the two ran the same executions.
# -v table=kills: per scheduler and iteration count, the mutant rows, how many a claim required
#   killed (expected "killed") and the latest first killing iteration among them, how many were
#   killed where a miss was allowed (expected "survives") and the latest of those, and the
#   margin of each latest kill to the iterations (docs/running.md, "The PCT budget": PCT's cap
#   rests on its kills coming early).
BEGIN { FS = OFS = "\t" }
table == "kills" && $1 == "shuttle" && $4 != "baseline" {
    split($5, w, " "); g = w[1] SUBSEP (word($5, "iterations") + 0)
    if (!(g in km)) korder[++kgroups] = g
    km[g]++
    fk = word($5, "first-killed-at") + 0
    if ($6 == "killed") { claims[g]++; if (fk > lastclaim[g]) lastclaim[g] = fk }
    else if ($7 == "killed") { accepted[g]++; if (fk > lastacc[g]) lastacc[g] = fk }
    next
}
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
    s = s SUBSEP it
    n[s]++
    share[s, n[s]] = d / it
    row[s, n[s]] = $2 " " $3
    dist[s, n[s]] = d
    if (l * 2 <= it) sat[s]++
    if (!(s in seen)) { seen[s] = 1; order[++groups] = s }
}
function margin(it, k) { return k <= 0 ? "-" : (it / k < 10 ? sprintf("%.1fx", it / k) : sprintf("%.0fx", it / k)) }
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
    if (table == "kills") {
        print "scheduler", "iterations>", "mutant rows>", "claimed kills>", "latest claimed first kill>", "margin>", "kills where a miss was allowed>", "latest of those>", "margin>"
        for (g = 1; g <= kgroups; g++) {
            split(korder[g], k, SUBSEP)
            print k[1], k[2], km[korder[g]], claims[korder[g]] + 0, lastclaim[korder[g]] + 0, margin(k[2], lastclaim[korder[g]]), accepted[korder[g]] + 0, lastacc[korder[g]] + 0, margin(k[2], lastacc[korder[g]])
        }
        exit
    }
    if (table == "same") {
        print "progress", "scheduler", "distinct>", "last new>", "rows"
        for (g = 1; g <= groups; g++) {
            if (count[order[g]] < 2) continue
            split(order[g], k, SUBSEP)
            print k[1], k[2], k[4], k[5], rows[order[g]]
        }
        exit
    }
    print "scheduler", "iterations each>", "baseline rows>", "distinct share: lowest>", "median>", "highest>", "rows with no new schedule in their second half>", "lowest five (progress scenario: distinct schedules)"
    for (g = 1; g <= groups; g++) {
        s = order[g]; m = n[s]; split(s, sk, SUBSEP)
        by_share(s, m)
        low = ""
        for (i = 1; i <= 5 && i <= m; i++)
            low = low (i > 1 ? "; " : "") row[s, idx[i]] ": " dist[s, idx[i]]
        med = (m % 2) ? share[s, idx[(m + 1) / 2]] : (share[s, idx[m / 2]] + share[s, idx[m / 2 + 1]]) / 2
        printf "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%s\n", sk[1], sk[2], m, share[s, idx[1]], med, share[s, idx[m]], sat[s] + 0, low
    }
}
