# bpspec: two entry points.
#   make test   the whole test suite (CI runs this; loom at preemption bound 2)
#   make check  every model check at its larger bound, then one results table
# Each checker builds into its own target dir, so switching cfgs never rebuilds the others.

CARGO        ?= cargo
RESULTS      ?= $(CURDIR)/results
LOOM_FLAGS   := --cfg loom --cfg crossbeam_loom -C debug-assertions
SHUTTLE_FLAGS:= --cfg shuttle -C debug-assertions

# Bounds. CI (make test) uses the small ones; make check the large ones.
TEST_LOOM_BOUND    ?= 2
CHECK_LOOM_BOUND   ?= 3
TEST_SHUTTLE_ITERS ?= 2000
CHECK_SHUTTLE_ITERS?= 50000

.PHONY: test check test-std test-loom test-shuttle loom shuttle report bench fmt clean-results

test: clean-results test-std test-loom test-shuttle torture-test report

test-std:
	$(CARGO) test --workspace

test-loom:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=test LOOM_MAX_PREEMPTIONS=$(TEST_LOOM_BOUND) LOOM_MAX_BRANCHES=20000 \
	RUSTFLAGS="$(LOOM_FLAGS)" $(CARGO) test -p bpspec-models --release --target-dir target/loom -- --test-threads=2

test-shuttle:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=test BPSPEC_SHUTTLE_ITERS=$(TEST_SHUTTLE_ITERS) SHUTTLE_SILENCE_WARNINGS=1 \
	RUSTFLAGS="$(SHUTTLE_FLAGS)" $(CARGO) test -p bpspec-models --release --target-dir target/shuttle

check: clean-results loom shuttle torture-check erts-torture report

loom:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=check LOOM_MAX_PREEMPTIONS=$(CHECK_LOOM_BOUND) LOOM_MAX_BRANCHES=20000 \
	RUSTFLAGS="$(LOOM_FLAGS)" $(CARGO) test -p bpspec-models --release --target-dir target/loom -- --test-threads=2

shuttle:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=check BPSPEC_SHUTTLE_ITERS=$(CHECK_SHUTTLE_ITERS) SHUTTLE_SILENCE_WARNINGS=1 \
	RUSTFLAGS="$(SHUTTLE_FLAGS)" $(CARGO) test -p bpspec-models --release --target-dir target/shuttle

report:
	$(CARGO) run -q -p bpspec -- report $(RESULTS)

bench:
	$(CARGO) bench -p bpspec-reference

fmt:
	$(CARGO) fmt --all

clean-results:
	rm -rf $(RESULTS)

# seq_trace (seqtrace/): the stateright model at its larger bound (4 processes, 3 hops).
.PHONY: check-seqtrace
check: check-seqtrace
check-seqtrace:
	BPSPEC_SEQTRACE_PROCS=4 BPSPEC_SEQTRACE_HOPS=3 $(CARGO) test --release -p bpspec-seqtrace --test model larger_bound -- --ignored --nocapture
# The oracle at larger bounds (docs/conformance.md): conformance with 4,096 cases per property and
# 3,000 random scenarios against the installed Erlang/OTP. make test runs 256 and 300.
ORACLE_CHECK_CASES ?= 4096
ORACLE_CHECK_DIFF  ?= 3000
.PHONY: oracle-check
check: oracle-check
oracle-check:
	BPSPEC_CONFORMANCE_CASES=$(ORACLE_CHECK_CASES) BPSPEC_DIFF_CASES=$(ORACLE_CHECK_DIFF) \
	$(CARGO) test -p bpspec-oracle --release --test conformance --test differential

# spec (issue 3): the stateright models at full size (s3f2x2: DFS with symmetry over schedulers),
# and the exact kill matrix (the CLI exits 1 if any mutant breaks other properties than
# spec/src/model/matrix.rs expects). The refinement runs are part of the shuttle targets
# (models/tests/refine.rs, BPSPEC_SHUTTLE_ITERS / 2 iterations per scenario and scheduler).
.PHONY: spec-check
spec-check:
	$(CARGO) run --release -q -p bpspec -- check --mutants

check: spec-check

# The engine torture (docs/torture.md): real scheduler threads under pattern churn. make test:
# one million hits at 2 and at 8 schedulers (checked debug build). make check: 34 million hits at
# each of 2, 4 and 8 schedulers in the optimised checked build (profile torture), then every
# wait-removal mutant under the torture for TORTURE_MUTANT_SECS each. Rows: checker "torture".
TEST_TORTURE_HITS   ?= 1000000
CHECK_TORTURE_HITS  ?= 34000000
TORTURE_MUTANT_SECS ?= 30
.PHONY: torture-test torture-check erts-torture
torture-test:
	BPSPEC_RESULTS=$(RESULTS) $(CARGO) run -q -p bpspec -- torture --schedulers 2,8 --hits $(TEST_TORTURE_HITS)
torture-check:
	BPSPEC_RESULTS=$(RESULTS) $(CARGO) run -q --profile torture -p bpspec -- torture --schedulers 2,4,8 \
	  --hits $(CHECK_TORTURE_HITS) --mutants --mutant-seconds $(TORTURE_MUTANT_SECS)
# The ERTS torture against a real node (the OTP on PATH, or the root in BPSPEC_OTP_ROOT; chroot
# needs root). A crash or an inconsistency is a finding about ERTS: it is reported in the table
# (checker "erts-torture") and does not stop make check.
ERTS_TORTURE_SECS ?= 60
erts-torture:
	-BPSPEC_RESULTS=$(RESULTS) $(CARGO) run -q -p bpspec -- oracle torture \
	  $(if $(BPSPEC_OTP_ROOT),--otp-root $(BPSPEC_OTP_ROOT)) --schedulers 2,4,8 --seconds $(ERTS_TORTURE_SECS)
