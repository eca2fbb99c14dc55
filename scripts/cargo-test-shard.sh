#!/usr/bin/env bash
# Runs `cargo test ARGS... -- TESTARGS...`, or with a shard only its share of the tests.
#
#   scripts/cargo-test-shard.sh BPSPEC SHARD ARGS... -- TESTARGS...
#
# BPSPEC is the bpspec binary; SHARD is i/N, or empty for every test. With a shard, the tests of
# each test target are listed (`-- --list`), each test's key is TARGET::NAME, `bpspec shard`
# keeps those of shard i (a stable hash: every machine computes the same split), and each target
# runs only those (`--exact`). A target with none is not run.
set -euo pipefail
bpspec=$1 shard=$2
shift 2
args=() targs=()
while (($#)) && [ "$1" != "--" ]; do args+=("$1"); shift; done
(($#)) && shift
targs=("$@")
if [ -z "$shard" ]; then
    exec cargo test "${args[@]}" -- "${targs[@]}"
fi
list=$(cargo test "${args[@]}" -- --list --format terse 2>&1)
target="" status=0 ran=0
declare -A names
while IFS= read -r line; do
    case "$line" in
    *"Running unittests "*) target="--lib" ;;
    *"Running tests/"*)
        t=${line#*Running tests/}
        target="--test=${t%%.rs*}" ;;
    *": test")
        [ -n "$target" ] && names[$target]+="${line%: test}"$'\n' ;;
    esac
done <<<"$list"
for target in "${!names[@]}"; do
    mapfile -t mine < <(printf '%s' "${names[$target]}" | "$bpspec" shard "$shard" --prefix="$target::")
    ((${#mine[@]})) || continue
    ran=$((ran + ${#mine[@]}))
    cargo test "${args[@]}" "$target" -- "${targs[@]}" --exact "${mine[@]}" || status=$?
done
echo "shard $shard: ran $ran tests"
exit $status
