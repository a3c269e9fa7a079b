#!/usr/bin/env bash
# The load-balanced CSR formats (merge-csr, csr5; docs/load-balanced.md) on the GPU machine, with
# .device-bundle/bin and .device-bundle/matrices carried (scripts/device-bundle.sh):
#   1. f64, every format, on the default set's generated matrices and the shared matrices,
#      one run (so "best other format" and the cuSPARSE ratios come from the same run);
#   2. f32 and f16: the load-balanced formats against cuSPARSE and the other CSR formats;
#   3. merge-csr's `items` and csr5's `sigma` on the generated matrices;
#   4. csr5 converted on the host and on the GPU (csr5:convert=gpu), f64 and f32;
# then the tables (scripts/load-balanced-tables.py) and the anchors (anchors-compare.py).
#   LB_FORMATS  the formats of the study (default: merge-csr,csr5)
#   LB_SKIP     steps to skip, e.g. "2 3"
set -uo pipefail
. "$(dirname "$0")/device-env.sh"
bin="$bundle/bin"
reps="${BENCH_REPS:-100}"
study="${LB_FORMATS:-merge-csr,csr5}"
skip=" ${LB_SKIP:-} "
generated=$(sed -n '/^pub const DEFAULT_SPECS: /,/^];/p' crates/spmv/src/io/inputs.rs | grep -o '"[^"]*"' | tr -d '"' | tr '\n' ' ')
# shellcheck disable=SC2086
run() { # name, then bench arguments
    local name=$1; shift
    "$bin/spmv" bench "$@" --reps "$reps" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.err"
    echo "$name: rc=$? $(grep -E '^# (all|FAILED)' "$out/$name.txt")"
}
# shellcheck disable=SC2086
[[ $skip == *" 1 "* ]] || run lb-f64 $generated "$bundle/matrices" --formats all --precision f64
# shellcheck disable=SC2086
[[ $skip == *" 2 "* ]] || run lb-f32-f16 $generated "$bundle/matrices" \
    --formats "$study,csr-vector,lightspmv,dasp,cusparse-alg1,cusparse-alg2" --precision f32,f16
items=$(printf 'merge-csr:items=%s,' 3 5 7 9 11 15)$(printf 'csr5:sigma=%s,' 4 8 12 16 24 32)
# shellcheck disable=SC2086
[[ $skip == *" 3 "* ]] || run lb-items $generated --formats "${items%,},cusparse-alg1" --precision f64,f32
# shellcheck disable=SC2086
[[ $skip == *" 4 "* ]] || run lb-convert $generated "$bundle/matrices" --formats "csr5,csr5:convert=gpu" --precision f64,f32
for f in "$out"/lb-*.json; do
    if [[ $f == *lb-convert.json ]]; then
        python3 scripts/csr5-conversion-table.py "$f" > "${f%.json}-tables.md"
        continue
    fi
    formats=$study
    [[ $f == *lb-items.json ]] && formats=${items%,}
    python3 scripts/load-balanced-tables.py "$f" --formats "$formats" --anchors "$bin/anchors/h200-f64-anchors.tsv" > "${f%.json}-tables.md"
done
echo "==================== summary ===================="
for f in "$out"/lb-*-tables.md; do echo "== $f"; grep -E '^(#|\| geomean|.* geomean )' "$f"; done
