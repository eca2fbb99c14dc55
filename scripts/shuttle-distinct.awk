# make docs-results: from make check's shuttle rows (RESULTS/shuttle.tsv), what the baselines'
# iterations explored (the bound's `distinct=D last-new=L`, models/src/harness.rs
# `shuttle_run::Distinct`): per scheduler, the rows, the share of iterations that ran a schedule
# no earlier iteration had run (lowest, median, highest), and how many rows stopped finding new
# schedules in their second half (L at most half the iterations); then the five rows of each
# scheduler with the lowest share. docs/mutants.md, "What the iterations explore".
BEGIN { FS = OFS = "\t" }
function word(b, k,    v) {
    if (index(b, k "=") == 0) return ""
    v = b; sub(".*" k "=", "", v); sub(/ .*/, "", v); return v
}
$1 == "shuttle" && $4 == "baseline" && word($5, "distinct") != "" {
    split($5, w, " "); s = w[1]
    it = word($5, "iterations"); d = word($5, "distinct"); l = word($5, "last-new")
    n[s]++
    share[s, n[s]] = d / it
    row[s, n[s]] = $2 " " $3
    dist[s, n[s]] = d
    iters[s] = it
    if (l * 2 <= it + 0) sat[s]++
    if (!(s in seen)) { seen[s] = 1; order[++k] = s }
}
function sort(s, m,    i, j, t, u) {
    for (i = 1; i <= m; i++) idx[i] = i
    for (i = 2; i <= m; i++) {
        t = idx[i]; j = i - 1
        while (j >= 1 && share[s, idx[j]] > share[s, t]) { idx[j + 1] = idx[j]; j-- }
        idx[j + 1] = t
    }
}
END {
    print "scheduler", "baseline rows>", "iterations each>", "distinct share: lowest>", "median>", "highest>", "rows with no new schedule in their second half>", "lowest five (progress scenario: distinct schedules)"
    for (q = 1; q <= k; q++) {
        s = order[q]; m = n[s]
        sort(s, m)
        low = ""
        for (i = 1; i <= 5 && i <= m; i++)
            low = low (i > 1 ? "; " : "") row[s, idx[i]] ": " dist[s, idx[i]]
        med = (m % 2) ? share[s, idx[(m + 1) / 2]] : (share[s, idx[m / 2]] + share[s, idx[m / 2 + 1]]) / 2
        printf "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%s\n", s, m, iters[s], share[s, idx[1]], med, share[s, idx[m]], sat[s] + 0, low
    }
}
