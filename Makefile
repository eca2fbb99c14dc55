# bpspec: two entry points. Each runs its parts (one per checker run) and ends with one results
# table (bpspec report), written also as JSON and JUnit XML: results/report.json, report.xml.
#   make test   the whole test suite (CI runs this; loom at preemption bound 2)
#   make check  every model check at its larger bound
#   make check SHARD=i/N   shard i of N (every part split by a stable hash); merge the shards'
#                          results directories with `bpspec report DIR...` (docs/results.md)
# Every part runs through `bpspec part`: its output goes to results/logs/PART.log, its progress
# to stderr, and its verdict to a row of the table. The parts run concurrently (JOBS); the exit
# status is the table's verdict. make check first builds everything its parts run (one part,
# `build`, with a row of its own), so the other rows' seconds are checking time; then it runs the
# parts longest first. Every checker of make check but the oracle, and loom and shuttle in make
# test, use the optimised checked profile (`checked` in Cargo.toml): loom and shuttle each in
# their own target dir (their cfgs differ), the spec, seq_trace and the tortures one build in
# target/. The oracle's tests run in the test profile, the build make test runs them in: their
# time is the Erlang nodes' (docs/running.md), and an optimised build of them cost more CPU than
# it saved.

CARGO        ?= cargo
RESULTS      ?= $(CURDIR)/results
SHARD        ?=
JOBS         ?= 2
TEST_JOBS    ?= 1
LOOM_FLAGS   := --cfg loom --cfg crossbeam_loom
SHUTTLE_FLAGS:= --cfg shuttle
CHECKED      := --profile checked
BPSPEC       := $(CURDIR)/target/debug/bpspec
PART          = $(BPSPEC) part --results $(RESULTS)
# For parts that are one unit: run in the shard its name hashes to.
WHOLE         = $(if $(SHARD),--shard $(SHARD))
# For cargo test parts: each test in the shard its name hashes to.
TESTSHARD     = scripts/cargo-test-shard.sh $(BPSPEC) "$(SHARD)"
OTP_ROOT     ?= $(BPSPEC_OTP_ROOT)
OTP_RELEASE  := $(shell erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]),halt().' 2>/dev/null)
NO_OTP_ROOT   = $(if $(OTP_ROOT),,--skip "BPSPEC_OTP_ROOT is not set (scripts/otp-root.sh builds an OTP root)")

# Bounds. make test uses the small ones; make check the large ones.
TEST_LOOM_BOUND    ?= 2
CHECK_LOOM_BOUND   ?= 3
CHECK_EPOCH_LOOM_BOUND ?= 2
TEST_SHUTTLE_ITERS ?= 2000
CHECK_SHUTTLE_ITERS?= 50000
# ...of which a PCT row runs at most this many (docs/running.md, "The PCT budget").
CHECK_SHUTTLE_PCT_ITERS ?= 20000
# The oracle: conformance cases per property and random differential scenarios
# (docs/conformance.md); make test runs 256 and 300.
ORACLE_CHECK_CASES ?= 4096
ORACLE_CHECK_DIFF  ?= 3000

.PHONY: test check check-build build-loom build-shuttle build-checked bin report bench perf-doc scale-doc rate fmt clean-results test-parts check-parts book \
	test-std test-oracle test-oracle-root test-loom test-shuttle test-spec-batch \
	loom shuttle spec-check check-seqtrace oracle-check oracle-check-root \
	torture-test torture-check erts-torture

test: clean-results bin
	$(MAKE) -j$(TEST_JOBS) test-parts
	$(MAKE) report

check: clean-results bin
	$(MAKE) check-build
	$(MAKE) -j$(JOBS) check-parts
	$(MAKE) report

bin:
	$(CARGO) build -q -p bpspec

report:
	$(BPSPEC) report $(RESULTS)

test-parts: test-std test-oracle test-oracle-root test-loom test-shuttle test-spec-batch torture-test

# Longest first (the parts' seconds in docs/running.md), so both cores stay busy to the end; the
# two oracle parts apart (side by side, each ran half again as long as alone).
check-parts: shuttle loom torture-check oracle-check erts-torture oracle-check-root spec-check check-seqtrace

# Every build the parts of make check run, as one part with its own row (checker "build"): loom,
# shuttle and the checked build side by side (JOBS), each cargo with its own target dir.
check-build:
	$(PART) build --checker build --scenario "loom, shuttle and checked builds" \
	--bound "profile=checked jobs=$(JOBS)" -- $(MAKE) -j$(JOBS) build-loom build-shuttle build-checked

build-loom:
	RUSTFLAGS="$(LOOM_FLAGS)" $(CARGO) test -q -p bpspec-models $(CHECKED) --target-dir target/loom --no-run

build-shuttle:
	RUSTFLAGS="$(SHUTTLE_FLAGS)" $(CARGO) test -q -p bpspec-models $(CHECKED) --target-dir target/shuttle --no-run

build-checked:
	$(CARGO) build -q $(CHECKED) -p bpspec
	$(CARGO) test -q $(CHECKED) -p bpspec-seqtrace --test model --no-run
	$(CARGO) test -q -p bpspec-oracle --test conformance --test differential --no-run

# make test -----------------------------------------------------------------------------------

test-std:
	$(PART) workspace --checker cargo-test --scenario workspace --bound "all but bpspec-oracle" $(WHOLE) -- \
	$(CARGO) test --workspace --exclude bpspec-oracle

test-oracle:
	$(PART) oracle-otp$(OTP_RELEASE) --checker oracle --scenario "conformance+differential" \
	--bound "otp=$(OTP_RELEASE) (erl on PATH) conformance-cases=256 differential-cases=300" $(WHOLE) -- \
	env -u BPSPEC_OTP_ROOT $(CARGO) test -p bpspec-oracle

test-oracle-root:
	$(PART) oracle-otp-root --checker oracle --scenario "differential on OTP root" \
	--bound "otp-root=$(OTP_ROOT)" $(WHOLE) $(NO_OTP_ROOT) -- \
	env BPSPEC_OTP_ROOT=$(OTP_ROOT) $(CARGO) test -p bpspec-oracle -- otp_root a_node_crash

# test-loom / test-shuttle (and loom / shuttle in make check) run every test binary of
# bpspec-models, among them the load models (models/tests/load_loom.rs, load_shuttle.rs; each
# row's seconds are in docs/results/check-loom.tsv and check-shuttle.tsv).
test-loom:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=test LOOM_MAX_PREEMPTIONS=$(TEST_LOOM_BOUND) LOOM_MAX_BRANCHES=20000 \
	RUSTFLAGS="$(LOOM_FLAGS)" $(PART) loom --checker loom --no-row -- \
	$(TESTSHARD) -p bpspec-models $(CHECKED) --target-dir target/loom -- --test-threads=2

test-shuttle:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=test BPSPEC_SHUTTLE_ITERS=$(TEST_SHUTTLE_ITERS) SHUTTLE_SILENCE_WARNINGS=1 \
	RUSTFLAGS="$(SHUTTLE_FLAGS)" $(PART) shuttle --checker shuttle --no-row -- \
	$(TESTSHARD) -p bpspec-models $(CHECKED) --target-dir target/shuttle

# The wait plans in the stateright model (docs/spec.md §12): the hit-path batch models under both
# batch plans, the pipelined call_time reader model, and their kill-matrix rows, one row each
# (debug binary; make check's spec-check runs every such model and row at release speed).
test-spec-batch:
	$(PART) spec-batch --checker stateright --no-row -- \
	$(BPSPEC) check --mutants --threads 1 --model b2f2 --model b2f2b --model pt2f1 \
	  --results $(RESULTS) $(WHOLE)

# make check ----------------------------------------------------------------------------------

loom:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=check LOOM_MAX_PREEMPTIONS=$(CHECK_LOOM_BOUND) LOOM_MAX_BRANCHES=20000 \
	BPSPEC_EPOCH_LOOM_BOUND=$(CHECK_EPOCH_LOOM_BOUND) RUSTFLAGS="$(LOOM_FLAGS)" $(PART) loom --checker loom --no-row -- \
	$(TESTSHARD) -p bpspec-models $(CHECKED) --target-dir target/loom -- --test-threads=2

# The refinement runs are part of the shuttle targets (models/tests/refine.rs,
# BPSPEC_SHUTTLE_ITERS / 2 iterations per scenario and scheduler).
shuttle:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=check BPSPEC_SHUTTLE_ITERS=$(CHECK_SHUTTLE_ITERS) \
	BPSPEC_SHUTTLE_PCT_ITERS=$(CHECK_SHUTTLE_PCT_ITERS) SHUTTLE_SILENCE_WARNINGS=1 \
	RUSTFLAGS="$(SHUTTLE_FLAGS)" $(PART) shuttle --checker shuttle --no-row -- \
	$(TESTSHARD) -p bpspec-models $(CHECKED) --target-dir target/shuttle

# spec: the stateright models at full size (s3f2x2: DFS with symmetry over schedulers) and the
# exact kill matrix; one row per model and per kill-matrix entry.
spec-check:
	$(PART) spec --checker stateright --no-row -- \
	$(CARGO) run $(CHECKED) -q -p bpspec -- check --mutants --results $(RESULTS) $(WHOLE)

# seq_trace (seqtrace/): the stateright model at its larger bound (4 processes, 3 hops).
check-seqtrace:
	$(PART) seqtrace --checker seqtrace --scenario model --bound "procs=4 hops=3" $(WHOLE) -- \
	env BPSPEC_SEQTRACE_PROCS=4 BPSPEC_SEQTRACE_HOPS=3 \
	$(CARGO) test $(CHECKED) -p bpspec-seqtrace --test model larger_bound -- --ignored --nocapture

# The oracle at larger bounds against the Erlang/OTP on PATH, and on the OTP root if there is one.
oracle-check:
	$(PART) oracle-check-otp$(OTP_RELEASE) --checker oracle --scenario "conformance+differential" \
	--bound "otp=$(OTP_RELEASE) (erl on PATH) conformance-cases=$(ORACLE_CHECK_CASES) differential-cases=$(ORACLE_CHECK_DIFF)" $(WHOLE) -- \
	env -u BPSPEC_OTP_ROOT BPSPEC_CONFORMANCE_CASES=$(ORACLE_CHECK_CASES) BPSPEC_DIFF_CASES=$(ORACLE_CHECK_DIFF) \
	$(CARGO) test -p bpspec-oracle --test conformance --test differential

oracle-check-root:
	$(PART) oracle-check-otp-root --checker oracle --scenario "differential on OTP root" \
	--bound "otp-root=$(OTP_ROOT) differential-cases=$(ORACLE_CHECK_DIFF)" $(WHOLE) $(NO_OTP_ROOT) -- \
	env BPSPEC_OTP_ROOT=$(OTP_ROOT) BPSPEC_DIFF_CASES=$(ORACLE_CHECK_DIFF) \
	$(CARGO) test -p bpspec-oracle --test differential -- otp_root a_node_crash

# Every benchmark of reference/benches/ in one run (docs/perf.md); each prints its tables.
# `make perf-doc` runs them with BPSPEC_BENCH_RESULTS=docs/results, so the committed
# docs/results/perf-*.tsv are that run's output (perf-rate.tsv: `bpspec rate`), and regenerates the book's blocks from them.
bench:
	$(CARGO) bench -p bpspec-reference

perf-doc:
	BPSPEC_BENCH_RESULTS=docs/results $(CARGO) bench -p bpspec-reference
	$(CARGO) run --release -q -p bpspec -- rate --out docs/results/perf-rate.tsv
	BPSPEC_BLESS=1 $(CARGO) test -p bpspec --test docs

# How the cost of checking grows (docs/perf.md, "How the cost grows"): the spec's states and
# time against schedulers, functions and sessions (`bpspec scale`), and loom's executions
# against its preemption bound (models/tests/loom_scale.rs, an ignored generator test).
scale-doc:
	$(CARGO) run --release -q -p bpspec -- scale --out docs/results/perf-scale.tsv
	rm -rf target/scale && mkdir -p target/scale
	BPSPEC_SCALE_RESULTS=$(CURDIR)/target/scale RUSTFLAGS="$(LOOM_FLAGS)" $(CARGO) test -q -p bpspec-models \
	  $(CHECKED) --target-dir target/loom --test loom_scale -- --ignored --nocapture
	{ echo "# written by models/tests/loom_scale.rs (make scale-doc), $$(date -u '+%Y-%m-%d %H:%M UTC'), load average $$(cut -d' ' -f1-3 /proc/loadavg) at the end; do not edit."; \
	  cat target/scale/loom-scale.tsv; } > docs/results/loom-scale.tsv
	BPSPEC_BLESS=1 $(CARGO) test -p bpspec --test docs

# The spec's checking rate next to a two-phase-commit model, in one run (docs/perf.md).
rate:
	$(CARGO) run --release -q -p bpspec -- rate

fmt:
	$(CARGO) fmt --all

# The book (docs/, table of contents docs/SUMMARY.md) as HTML in target/book; mdbook is installed
# with cargo when it is not on PATH. Generated tables and timelines are checked by
# cli/tests/docs.rs (BPSPEC_BLESS=1 cargo test -p bpspec --test docs regenerates them).
MDBOOK ?= $(shell command -v mdbook 2>/dev/null || echo $(HOME)/.cargo/bin/mdbook)
book:
	@test -x "$(MDBOOK)" || $(CARGO) install mdbook --locked
	$(MDBOOK) build
	@echo "the book: target/book/index.html"

clean-results:
	rm -rf $(RESULTS)

# docs/orderings.md: every ordering site weakened under loom at make test's bound
# (models/tests/orderings_loom.rs), then the table regenerated from that run and the source.
.PHONY: orderings-doc
orderings-doc:
	rm -rf $(RESULTS)/orderings
	BPSPEC_RESULTS=$(RESULTS)/orderings LOOM_MAX_PREEMPTIONS=$(TEST_LOOM_BOUND) LOOM_MAX_BRANCHES=20000 \
	RUSTFLAGS="$(LOOM_FLAGS)" $(CARGO) test -p bpspec-models $(CHECKED) --target-dir target/loom --test orderings_loom -- --test-threads=2
	BPSPEC_BLESS=1 BPSPEC_ORDERINGS_RESULTS=$(RESULTS)/orderings/loom.tsv $(CARGO) test -p bpspec-reference --test orderings

# The engine torture (docs/torture.md): real scheduler threads under pattern churn; it writes its
# own rows (checker "torture"). make test: one million hits at 2 and at 8 schedulers (checked
# debug build), then wait-without-new-period, which it must kill. make check: 34 million hits at
# each of 2, 4 and 8 schedulers (102 million in all) in the optimised checked build (profile
# checked), the schedulers waiting for the stager after every CHECK_TORTURE_PACE hits; a run that
# TORTURE_SECS stops short of its hits, or that churned less than its minimums, is a failed row.
# Then every wait-removal mutant for TORTURE_MUTANT_SECS each. Both then run the wait plans other
# than ERTS's (TORTURE_PLANS, `--wait-plan`; docs/fewer-waits.md): make test TEST_TORTURE_HITS at 2
# and at 8 schedulers per plan, make check CHECK_TORTURE_PLAN_HITS (rows `churn-sN@PLAN`). Both
# run the torture on a module's version (`--versions`) at 2 schedulers under ERTS's plan and
# every TORTURE_PLANS one (rows `churn-s2[@PLAN]@versions`), at the plans' hits.
# The load torture (docs/torture.md §3, `--load`): the code-loading engine under loads, deletes,
# purges and trace_pattern, both protocols. make test: TEST_LOAD_TORTURE_HITS calls at 2 and at 8
# schedulers per protocol, then load-clear-old-at-once, which it must kill; then killing purges
# (code:purge/1, `--purge kill,mixed`) at 2 schedulers per protocol, and load-purge-skip-check
# under them, which it must kill. make check: CHECK_LOAD_TORTURE_HITS calls at each of 2, 4 and
# 8 schedulers per protocol and purge mode (LOAD_TORTURE_PURGES; LOAD_TORTURE_SECS bounds each
# run), then every load mutant at 2 schedulers for LOAD_TORTURE_MUTANT_SECS each (the purge's
# mutants under each purge mode). Both add one run with LW1 folded into the removal's W1
# (`--lw1-fold`, NonBlocking): make test at 2 schedulers, mixed purges, TEST_LOAD_TORTURE_HITS;
# make check at 2 and 8, LOAD_TORTURE_PURGES, CHECK_LOAD_FOLD_HITS, then its mutant sweep at 2
# schedulers for CHECK_LOAD_FOLD_MUTANT_SECS each (its kills come within 0.8 s; its three
# survivors take the whole bound: docs/torture.md §3). Both add one run with more than one
# process per scheduler (`--procs`, NonBlocking): make test 2 processes on each of 2
# schedulers, killing purges, TEST_LOAD_TORTURE_HITS; make check 3 on each of 4,
# LOAD_TORTURE_PURGES, CHECK_LOAD_PROCS_HITS. Both add the collector (`--collect`: trace_info
# of call_time and call_count under the churn, both protocols): make test at 2 schedulers,
# TEST_LOAD_TORTURE_HITS, then collect-free-before-last-wait, which it must kill; make check at
# 2 and 8, LOAD_TORTURE_PURGES, CHECK_LOAD_PROCS_HITS. The time bound is a watchdog, not a size:
# make test's load runs stop at LOAD_TORTURE_SECS, make check's at CHECK_LOAD_TORTURE_SECS (a
# blocking load at 4 schedulers made 258 thousand hits/s with shuttle's part on the other core,
# 3.0 million idle: 60 s left it short of its 20 million; docs/torture.md §3).
TEST_LOAD_TORTURE_HITS   ?= 1000000
CHECK_LOAD_FOLD_HITS     ?= 4000000
CHECK_LOAD_FOLD_MUTANT_SECS ?= 5
CHECK_LOAD_PROCS_HITS    ?= 4000000
CHECK_LOAD_TORTURE_HITS  ?= 20000000
LOAD_TORTURE_SECS        ?= 60
CHECK_LOAD_TORTURE_SECS  ?= 300
LOAD_TORTURE_MUTANT_SECS ?= 10
LOAD_TORTURE_PURGES      ?= mixed
TEST_TORTURE_HITS   ?= 1000000
CHECK_TORTURE_HITS  ?= 34000000
CHECK_TORTURE_PLAN_HITS ?= 4000000
TORTURE_PLANS       ?= batch,batch-elide-idle,pipeline
CHECK_TORTURE_PACE  ?= 4096
TORTURE_SECS        ?= 300
TORTURE_MUTANT_SECS ?= 5
torture-test:
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --schedulers 2,8 --hits $(TEST_TORTURE_HITS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-plans --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --schedulers 2,8 --hits $(TEST_TORTURE_HITS) --wait-plan $(TORTURE_PLANS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-mutant --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --schedulers 4 --mutant wait-without-new-period --mutant-seconds 60
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-versions --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --versions --schedulers 2 --hits $(TEST_TORTURE_HITS) --wait-plan erts,$(TORTURE_PLANS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --schedulers 2,8 --hits $(TEST_LOAD_TORTURE_HITS) --seconds $(LOAD_TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-3ix --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --protocols nonblocking --code-ix 3ix --schedulers 2 --hits $(TEST_LOAD_TORTURE_HITS) --seconds $(LOAD_TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-fold --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --protocols nonblocking --lw1-fold --purge mixed --schedulers 2 --hits $(TEST_LOAD_TORTURE_HITS) --seconds $(LOAD_TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-procs --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --protocols nonblocking --procs 2 --purge kill --schedulers 2 --hits $(TEST_LOAD_TORTURE_HITS) --seconds $(LOAD_TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-mutant --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --schedulers 2 --mutant load-clear-old-at-once --mutant-seconds 60
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-kill --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --purge kill,mixed --schedulers 2 --hits $(TEST_LOAD_TORTURE_HITS) --seconds $(LOAD_TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-kill-mutant --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --purge kill --schedulers 2 --mutant load-purge-skip-check --mutant-seconds 60
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-collect --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --collect --schedulers 2 --hits $(TEST_LOAD_TORTURE_HITS) --seconds $(LOAD_TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-collect-mutant --checker torture --no-row $(WHOLE) -- \
	$(BPSPEC) torture --load --collect --schedulers 2 --mutant collect-free-before-last-wait --mutant-seconds 60
torture-check:
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture --checker torture --no-row $(WHOLE) -- \
	$(CARGO) run -q $(CHECKED) -p bpspec -- torture --schedulers 2,4,8 \
	  --hits $(CHECK_TORTURE_HITS) --pace $(CHECK_TORTURE_PACE) --seconds $(TORTURE_SECS) \
	  --mutants --mutant-seconds $(TORTURE_MUTANT_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-plans --checker torture --no-row $(WHOLE) -- \
	$(CARGO) run -q $(CHECKED) -p bpspec -- torture --schedulers 2,8 --wait-plan $(TORTURE_PLANS) \
	  --hits $(CHECK_TORTURE_PLAN_HITS) --pace $(CHECK_TORTURE_PACE) --seconds $(TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-versions --checker torture --no-row $(WHOLE) -- \
	$(CARGO) run -q $(CHECKED) -p bpspec -- torture --versions --schedulers 2 --wait-plan erts,$(TORTURE_PLANS) \
	  --hits $(CHECK_TORTURE_PLAN_HITS) --pace $(CHECK_TORTURE_PACE) --seconds $(TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load --checker torture --no-row $(WHOLE) -- \
	$(CARGO) run -q $(CHECKED) -p bpspec -- torture --load --schedulers 2,4,8 --purge $(LOAD_TORTURE_PURGES) \
	  --hits $(CHECK_LOAD_TORTURE_HITS) --seconds $(CHECK_LOAD_TORTURE_SECS) \
	  --mutants --mutant-seconds $(LOAD_TORTURE_MUTANT_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-fold --checker torture --no-row $(WHOLE) -- \
	$(CARGO) run -q $(CHECKED) -p bpspec -- torture --load --protocols nonblocking --lw1-fold --schedulers 2,8 \
	  --purge $(LOAD_TORTURE_PURGES) --hits $(CHECK_LOAD_FOLD_HITS) --seconds $(CHECK_LOAD_TORTURE_SECS) \
	  --mutants --mutant-seconds $(CHECK_LOAD_FOLD_MUTANT_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-procs --checker torture --no-row $(WHOLE) -- \
	$(CARGO) run -q $(CHECKED) -p bpspec -- torture --load --protocols nonblocking --procs 3 --schedulers 4 \
	  --purge $(LOAD_TORTURE_PURGES) --hits $(CHECK_LOAD_PROCS_HITS) --seconds $(CHECK_LOAD_TORTURE_SECS)
	BPSPEC_RESULTS=$(RESULTS) $(PART) torture-load-collect --checker torture --no-row $(WHOLE) -- \
	$(CARGO) run -q $(CHECKED) -p bpspec -- torture --load --collect --schedulers 2,8 \
	  --purge $(LOAD_TORTURE_PURGES) --hits $(CHECK_LOAD_PROCS_HITS) --seconds $(CHECK_LOAD_TORTURE_SECS)
# The ERTS torture against a real node (the OTP on PATH, or the root in OTP_ROOT; chroot needs
# root). A crash or an inconsistency is a finding about ERTS: it is reported in the table (checker
# "erts-torture") and does not stop make check.
ERTS_TORTURE_SECS ?= 45
erts-torture:
	-BPSPEC_RESULTS=$(RESULTS) $(PART) erts-torture --checker erts-torture --no-row $(WHOLE) -- \
	$(BPSPEC) oracle torture $(if $(OTP_ROOT),--otp-root $(OTP_ROOT)) --schedulers 2,4,8 \
	  --seconds $(ERTS_TORTURE_SECS)

# The result files the book's generated tables select from (docs/results.md): every *.tsv of
# RESULTS (a make check's results directory) copied to docs/results/check-NAME.tsv under a line
# naming where and when it ran, the parts' times (RESULTS/parts/times.tsv, written by bpspec
# part) as docs/results/check-parts.tsv, then every generated block rewritten from them.
# make docs-results RESULTS=DIR
.PHONY: docs-results
docs-results:
	@test -n "$$(ls $(RESULTS)/*.tsv 2>/dev/null)" || { echo "no *.tsv in $(RESULTS) (run make check first)"; exit 2; }
	for f in $(RESULTS)/*.tsv; do \
	  { echo "# make check's rows (RESULTS/$$(basename $$f)), $$(date -u -r $$f '+%F %H:%M UTC'); copied by make docs-results"; \
	    cat $$f; } > docs/results/check-$$(basename $$f); \
	done
	@test -s $(RESULTS)/parts/times.tsv || { echo "no $(RESULTS)/parts/times.tsv (bpspec part writes it)"; exit 2; }
	{ echo "# make check's parts (RESULTS/parts/times.tsv, written by bpspec part), $$(date -u -r $(RESULTS)/parts/times.tsv '+%F %H:%M UTC'); made by make docs-results; do not edit."; \
	  echo "# CPU: user and system seconds of everything the part ran and waited for; cores: (user + system) / wall."; \
	  printf 'part\tstarted (min:s)>\twall (s)>\tuser (s)>\tsystem (s)>\tcores>\n'; \
	  sort -t"$$(printf '\t')" -k2,2n $(RESULTS)/parts/times.tsv | awk -F'\t' \
	    'NR == 1 { t0 = $$2 } { d = $$2 - t0; w = ($$3 > 0) ? $$3 : 1; \
	       printf "%s\t%d:%02d\t%.0f\t%.0f\t%.0f\t%.2f\n", $$1, d / 60, d % 60, $$3, $$4, $$5, ($$4 + $$5) / w; \
	       u += $$4; s += $$5; if ($$2 + $$3 > end) end = $$2 + $$3 } \
	     END { w = end - t0; if (w <= 0) w = 1; \
	       printf "all parts, first start to last end\t0:00\t%.0f\t%.0f\t%.0f\t%.2f\n", end - t0, u, s, (u + s) / w }'; \
	} > docs/results/check-parts.tsv
	{ echo "# make check's loom baselines under more than one variant (RESULTS/loom.tsv), $$(date -u -r $(RESULTS)/loom.tsv '+%F %H:%M UTC'); made by make docs-results (scripts/loom-variants.awk); do not edit."; \
	  awk -f scripts/loom-variants.awk $(RESULTS)/loom.tsv; } > docs/results/check-loom-variants.tsv
	{ echo "# make check's shuttle baselines, what their iterations explored (RESULTS/shuttle.tsv), $$(date -u -r $(RESULTS)/shuttle.tsv '+%F %H:%M UTC'); made by make docs-results (scripts/shuttle-explored.awk); do not edit."; \
	  awk -v table=summary -f scripts/shuttle-explored.awk $(RESULTS)/shuttle.tsv; } > docs/results/check-shuttle-distinct.tsv
	{ echo "# make check's shuttle baselines of one scenario whose variants counted the same schedules (RESULTS/shuttle.tsv), $$(date -u -r $(RESULTS)/shuttle.tsv '+%F %H:%M UTC'); made by make docs-results (scripts/shuttle-explored.awk); do not edit."; \
	  awk -v table=same -f scripts/shuttle-explored.awk $(RESULTS)/shuttle.tsv; } > docs/results/check-shuttle-same.tsv
	{ echo "# make check's shuttle mutant rows, how late their kills came (RESULTS/shuttle.tsv), $$(date -u -r $(RESULTS)/shuttle.tsv '+%F %H:%M UTC'); made by make docs-results (scripts/shuttle-explored.awk); do not edit."; \
	  awk -v table=kills -f scripts/shuttle-explored.awk $(RESULTS)/shuttle.tsv; } > docs/results/check-shuttle-kills.tsv
	BPSPEC_BLESS=1 $(CARGO) test -p bpspec --test docs generated_blocks_and_timelines_are_fresh
