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
CHECK_EPOCH_LOOM_BOUND ?= 2
TEST_SHUTTLE_ITERS ?= 2000
CHECK_SHUTTLE_ITERS?= 50000

.PHONY: test check test-std test-loom test-shuttle loom shuttle report bench fmt clean-results

test: clean-results test-std test-loom test-shuttle report

test-std:
	$(CARGO) test --workspace

test-loom:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=test LOOM_MAX_PREEMPTIONS=$(TEST_LOOM_BOUND) LOOM_MAX_BRANCHES=20000 \
	RUSTFLAGS="$(LOOM_FLAGS)" $(CARGO) test -p bpspec-models --release --target-dir target/loom -- --test-threads=2

test-shuttle:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=test BPSPEC_SHUTTLE_ITERS=$(TEST_SHUTTLE_ITERS) SHUTTLE_SILENCE_WARNINGS=1 \
	RUSTFLAGS="$(SHUTTLE_FLAGS)" $(CARGO) test -p bpspec-models --release --target-dir target/shuttle

check: clean-results loom shuttle report

loom:
	BPSPEC_RESULTS=$(RESULTS) BPSPEC_RUN=check LOOM_MAX_PREEMPTIONS=$(CHECK_LOOM_BOUND) LOOM_MAX_BRANCHES=20000 \
	BPSPEC_EPOCH_LOOM_BOUND=$(CHECK_EPOCH_LOOM_BOUND) RUSTFLAGS="$(LOOM_FLAGS)" $(CARGO) test -p bpspec-models --release --target-dir target/loom -- --test-threads=2

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
