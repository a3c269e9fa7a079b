#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with .device-bundle carried:
#   1. the test binaries in $DEVICE_TESTS with --include-ignored (GPU tests included),
#      matrices from the bundle, each stopped after $TEST_TIMEOUT seconds (default 600);
#   2. `spmv bench` on the shared matrices and on the inputs in $BENCH_INPUTS (files or
#      generator specs; "default" for the default set), with the formats in $BENCH_FORMATS (default all), f64 and f32;
#      with $BENCH_DEVICES (e.g. 0,0 or 2), the inputs spread over those devices (bench --devices);
#   3. with $COMPARE_INPUTS and bin/spmv-old in the bundle: both binaries on those inputs,
#      and scripts/compare-bench.py's ratios (new/old median time);
# and prints a summary last. Logs and JSON go to $OUT when set (the device tool returns it).
set -uo pipefail
# shellcheck source=device-env.sh
. "$(dirname "$0")/device-env.sh"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader

export SPMV_MATRICES="$PWD/$bundle/matrices"
export SPMV_REQUIRE_NVRTC=1 SPMV_REQUIRE_NCCL=1
summary=()
status=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
    # The test binaries with GPU tests; the CPU-only ones run in CI instead.
    for name in ${DEVICE_TESTS:-spmv-lib gpu gpu_deterministic gpu_diagonal gpu_brcp values reorder pagerank quickstart-example kernels_compile}; do
        t="$bundle/tests/$name"
        log=/tmp/test-$name.log
        # shellcheck disable=SC2086
        timeout "${TEST_TIMEOUT:-600}" "$t" --include-ignored ${TEST_FILTER:-} > "$log" 2>&1
        rc=$?
        { echo "===== $name (rc=$rc)"; cat "$log"; } >> "$out/tests.log"
        line=$(grep -E '^test result:' "$log" | tail -1)
        summary+=("test $name: rc=$rc ${line:-no result line}")
        if [ $rc -ne 0 ]; then
            status=1
            grep -E -A 30 '^failures:' "$log" | head -60
        fi
    done
fi

formats="${BENCH_FORMATS:-all}"
reps="${BENCH_REPS:-100}"
if [ "${SKIP_BENCH_SHARED:-0}" != 1 ]; then
    "$bundle/bin/spmv" bench "$bundle/matrices" --formats "$formats" --precision f64,f32 --reps "$reps" \
        --json "$out/bench-shared.json" > "$out/bench-shared.txt" 2> /tmp/bench-shared.err
    rc=$?
    [ $rc -ne 0 ] && status=1
    summary+=("bench shared matrices: rc=$rc $(grep -E '^# (all|FAILED)' "$out/bench-shared.txt")")
fi
if [ -n "${BENCH_INPUTS:-}" ]; then
    [ "$BENCH_INPUTS" = default ] && BENCH_INPUTS=""   # no inputs: spmv's default set
    # shellcheck disable=SC2086
    "$bundle/bin/spmv" bench $BENCH_INPUTS --formats "$formats" --precision f64,f32 --reps "$reps" \
        ${BENCH_DEVICES:+--devices "$BENCH_DEVICES"} --json "$out/bench-large.json" > "$out/bench-large.txt" 2> /tmp/bench-large.err
    rc=$?
    [ $rc -ne 0 ] && status=1
    cat "$out/bench-large.txt"
    summary+=("bench large: rc=$rc $(grep -E '^# (all|FAILED)' "$out/bench-large.txt")")
fi
if [ -n "${COMPARE_INPUTS:-}" ] && [ -x "$bundle/bin/spmv-old" ]; then
    # The previous binary and this one on the same inputs, one after the other, f64 and f32.
    for which in spmv-old spmv; do
        # shellcheck disable=SC2086
        "$bundle/bin/$which" bench $COMPARE_INPUTS --formats "$formats" --precision f64,f32 --reps "$reps" \
            --json "$out/compare-$which.json" > "$out/compare-$which.txt" 2> /tmp/bench-compare-$which.err
    done
    python3 scripts/compare-bench.py "$out/compare-spmv-old.json" "$out/compare-spmv.json" > "$out/compare.txt"
    grep -E '^#' "$out/compare.txt"
    summary+=("compare with the previous binary: $(grep -E 'geometric mean|slower' "$out/compare.txt" | tr '\n' ' ')")
fi
tail -n 3 /tmp/bench-*.err 2>/dev/null
[ -f "$out/bench-shared.txt" ] && grep -E '^#' "$out/bench-shared.txt"
echo "==================== summary ===================="
printf '%s\n' "${summary[@]}"
exit $status
