#!/usr/bin/env bash
# The DASP paper's experiment on the GPU machine (docs/dasp.md), with .device-bundle/bin and
# .device-bundle/matrices carried. Writes to $OUT:
#   dasp-f64-anchors.*  every format in FP64 on the anchor matrices (the five generated specs
#                       and the 50 real ones of ../shared/anchors), with anchors-compare.py's
#                       tables for dasp and for the per-matrix best;
#   dasp-f16.*          dasp, csr-vector and cuSPARSE ALG1/ALG2 in FP16 on every shared
#                       matrix and the five generated specs, with ratio-summary.py;
#   dasp-f64-shared.*   (DASP_SHARED_F64=1) every format in FP64 on every shared matrix;
# and the row-class tables of dasp-classes.py for each run.
set -uo pipefail
. "$(dirname "$0")/device-env.sh"
bin="$bundle/bin"
anchors="$bin/anchors/h200-f64-anchors.tsv"
generated="$(grep -v '^#' "$anchors" | cut -f1 | grep ':' | tr '\n' ' ')"
reps="${BENCH_REPS:-50}"
bench() { # name, then the bench arguments
    local name=$1
    shift
    "$bin/spmv" bench "$@" --reps "$reps" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.err"
    echo "$name: rc=$? $(grep -E '^# (all|FAILED)' "$out/$name.txt")"
}
# shellcheck disable=SC2086
bench dasp-f64-anchors $generated "$bin/anchors/matrices" --formats all --precision f64
python3 scripts/anchors-compare.py "$out/dasp-f64-anchors.json" "$anchors" --format dasp > "$out/dasp-f64-anchors-dasp.md"
python3 scripts/anchors-compare.py "$out/dasp-f64-anchors.json" "$anchors" > "$out/dasp-f64-anchors-best.md"
# shellcheck disable=SC2086
bench dasp-f16 $generated "$bundle/matrices" --formats dasp,csr-vector,cusparse-alg1,cusparse-alg2 --precision f16
if [ "${DASP_SHARED_F64:-0}" = 1 ]; then
    bench dasp-f64-shared "$bundle/matrices" --formats all --precision f64
fi
for run in "$out"/dasp-f*.json; do
    echo "== $(basename "$run")"
    python3 scripts/dasp-classes.py "$run"
    for base in cusparse-alg1 cusparse-alg2; do python3 scripts/ratio-summary.py "$run" dasp "$base"; done
done
tail -1 "$out/dasp-f64-anchors-dasp.md"
tail -1 "$out/dasp-f64-anchors-best.md"
