#!/usr/bin/env bash
# Compression, the per-matrix bound and reordering (docs/compression.md) on the GPU machine,
# with .device-bundle/bin and .device-bundle/matrices carried (scripts/device-bundle.sh):
#   1. f64: uncompressed and compressed (values=auto) formats with cuSPARSE, on the default
#      set's generated matrices and the shared matrices, one run;
#   2. f64 with --reorder rcm and --reorder degree on the generated matrices (cuSPARSE too);
#   3. f32: the same formats as step 1 on the generated matrices;
# then the tables (scripts/compression-tables.py).
#   CMP_SKIP   steps to skip, e.g. "2 3"
#   CMP_SHARED 0: step 1 on the generated matrices only
#   CMP_REORDER the reorderings of step 2 (default "rcm degree")
set -uo pipefail
. "$(dirname "$0")/device-env.sh"
bin="$bundle/bin"
reps="${BENCH_REPS:-100}"
skip=" ${CMP_SKIP:-} "
generated=$(sed -n '/^pub const DEFAULT_SPECS: /,/^];/p' crates/spmv/src/io/inputs.rs | grep -o '"[^"]*"' | tr -d '"' | tr '\n' ' ')
# dasp:values=auto,max_len=512: kron's rows of 257-512 entries as medium rows (docs/dasp.md).
formats="csr-vector,csr-vector:values=auto,csr5,csr5:values=auto,dia,dia:values=auto,merge-csr,sell-c-sigma,dasp,dasp:values=auto,dasp:values=auto,max_len=512,cusparse-alg1,cusparse-alg2"
shared="$bundle/matrices"
[ "${CMP_SHARED:-1}" = 0 ] && shared=""
# shellcheck disable=SC2086
run() { # name, then bench arguments
    local name=$1; shift
    "$bin/spmv" bench "$@" --reps "$reps" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.err"
    echo "$name: rc=$? $(grep -E '^# (all|FAILED)' "$out/$name.txt")"
}
# shellcheck disable=SC2086
[[ $skip == *" 1 "* ]] || run cmp-f64 $generated $shared --formats "$formats" --precision f64
for method in ${CMP_REORDER:-rcm degree}; do
    # shellcheck disable=SC2086
    [[ $skip == *" 2 "* ]] || run "cmp-$method" $generated --formats "$formats" --precision f64 --reorder "$method"
done
# shellcheck disable=SC2086
[[ $skip == *" 3 "* ]] || run cmp-f32 $generated --formats "$formats" --precision f32
for f in "$out"/cmp-*.json; do
    python3 scripts/compression-tables.py "$f" > "${f%.json}-tables.md"
done
echo "==================== summary ===================="
for f in "$out"/cmp-*-tables.md; do echo "== $f"; grep -E '^(#|\| geomean|target)' "$f"; done
