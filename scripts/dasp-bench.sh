#!/usr/bin/env bash
# DASP against the anchors (../shared/anchors/h200-f64-anchors.tsv): runs on the GPU
# machine with .device-bundle/bin carried (scripts/device-bundle.sh copies the anchors file
# and the anchor matrices there). `spmv bench` over the anchor matrices (the five generated
# specs and the 50 shared ones), then scripts/anchors-compare.py.
#   DASP_FORMATS   formats to run (default: dasp and the cuSPARSE CSR algorithms)
#   DASP_INPUTS    inputs instead of the anchor set (e.g. only the generated specs)
#   DASP_PRECISION f64 (default) or a list
set -uo pipefail
. "$(dirname "$0")/device-env.sh"
bin="$bundle/bin"
anchors="$bin/anchors/h200-f64-anchors.tsv"
formats="${DASP_FORMATS:-dasp,cusparse-alg1,cusparse-alg2}"
if [ -n "${DASP_INPUTS:-}" ]; then
    inputs=$DASP_INPUTS
else
    inputs="$(grep -v '^#' "$anchors" | cut -f1 | grep ':' | tr '\n' ' ') $bin/anchors/matrices"
fi
# shellcheck disable=SC2086
"$bin/spmv" bench $inputs --formats "$formats" --precision "${DASP_PRECISION:-f64}" --reps "${BENCH_REPS:-100}" \
    --json "$out/dasp.json" > "$out/dasp.txt" 2> "$out/dasp.err"
rc=$?
cat "$out/dasp.txt"
tail -5 "$out/dasp.err"
python3 scripts/anchors-compare.py "$out/dasp.json" "$anchors" --format dasp | tail -62
echo "bench rc=$rc"
