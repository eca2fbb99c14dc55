# make docs-results: from make check's shuttle rows (RESULTS/shuttle.tsv), the baselines of one
# scenario under different variants (`scenario@variant`, the scenario without a suffix as
# "default") whose runs under one scheduler counted the same distinct schedules with the same
# last new one (`distinct=D last-new=L`), where D is below the iterations (a run whose every
# iteration was new says nothing here). Equal pairs are what two runs of one program give; they
# are not a proof that the two ran the same executions. docs/mutants.md, "What the iterations
# explore".
BEGIN { FS = OFS = "\t" }
function word(b, k,    v) {
    if (index(b, k "=") == 0) return ""
    v = b; sub(".*" k "=", "", v); sub(/ .*/, "", v); return v
}
$1 == "shuttle" && $4 == "baseline" && word($5, "distinct") != "" {
    split($5, w, " "); s = w[1]
    it = word($5, "iterations") + 0; d = word($5, "distinct") + 0; l = word($5, "last-new") + 0
    if (d >= it) next
    n = split($3, a, "@")
    base = a[1]; sub(/-(3ix|fold|pipeline)$/, "", base)
    key = $2 SUBSEP s SUBSEP base SUBSEP d SUBSEP l
    if (!(key in rows)) order[++groups] = key
    rows[key] = rows[key] (rows[key] == "" ? "" : ", ") "`" $3 "`"
    count[key]++
}
END {
    print "progress", "scheduler", "distinct>", "last new>", "rows"
    for (g = 1; g <= groups; g++) {
        key = order[g]
        if (count[key] < 2) continue
        split(key, k, SUBSEP)
        print k[1], k[2], k[4], k[5], rows[key]
    }
}
