# make docs-results: from make check's loom rows (RESULTS/loom.tsv), every scenario whose
# baseline runs under more than one variant (a wait plan: `scenario@batch`, `@batch-elide-idle`,
# `@pipeline`, the default plan without a suffix; a load protocol: `@blocking`, `@nonblocking`;
# the placement on a module's version: `@versions`, and a plan on a version:
# `@batch@versions`), one line per scenario: each variant's
# executions (with its bound where it is not the first variant's), and the variants that ran exactly as many as
# some other variant of the same scenario. Equal counts at the same bound are what two runs of one exploration give;
# they do not prove the two explored the same executions, but a variant whose count differs
# from every other did reach code the others do not run (docs/fewer-waits.md, "What each
# variant's loom rows explore").
BEGIN { FS = OFS = "\t" }
$1 == "loom" && $4 == "baseline" {
    n = split($3, a, "@")
    scenario = a[1]
    # Everything after the scenario: `batch`, `versions`, or a plan on a version `batch@versions`.
    variant = (n > 1) ? substr($3, length(a[1]) + 2) : "default"
    exe = $5; sub(/.*executions=/, "", exe); sub(/[^0-9].*/, "", exe)
    bound = $5; sub(/.*preemption=/, "", bound); sub(/[^0-9].*/, "", bound)
    key = $2 SUBSEP scenario
    if (!(key in count)) { order[++groups] = key }
    count[key]++
    name[key, count[key]] = variant
    execs[key, count[key]] = exe
    bounds[key, count[key]] = bound
}
END {
    print "progress", "scenario", "bound>", "executions per variant", "variants with as many executions as another"
    for (g = 1; g <= groups; g++) {
        key = order[g]
        if (count[key] < 2) continue
        split(key, k, SUBSEP)
        runs = ""; same = ""
        for (i = 1; i <= count[key]; i++) {
            runs = runs (i > 1 ? ", " : "") name[key, i] " " execs[key, i] \
                (bounds[key, i] != bounds[key, 1] ? " (bound " bounds[key, i] ")" : "")
            for (j = 1; j <= count[key]; j++) {
                if (j != i && execs[key, j] == execs[key, i] && bounds[key, j] == bounds[key, i]) {
                    same = same (same == "" ? "" : ", ") name[key, i]
                    break
                }
            }
        }
        print k[1], k[2], bounds[key, 1], runs, (same == "" ? "-" : same)
    }
}
