#!/usr/bin/env bash
# The BRCP paper's SpMV experiments (docs/brcp.md) on the GPU machine, from the repository
# root with .device-bundle carried (scripts/device-bundle.sh builds it here):
#   1. the GPU tests gpu_brcp (20 bit-identical runs) and gpu (every format vs the oracle);
#   2. the error experiment: y = A·1 against the exact result, matrices as stored and as
#      PageRank matrices Gᵀ (bin/brcp_errors, from crates/spmv/examples/brcp_errors.rs);
#   3. `spmv bench` of BRC, BRCP, LightSpMV and cuSPARSE on the shared graph matrices and on
#      large generated power-law graphs, f64 and f32.
# Logs and JSON go to $OUT (the device tool returns at most 8 files). SKIP_TESTS=1 skips 1;
# each step has a time limit so that a slow one leaves the others their results. BUNDLE
# names another bundle folder (one holding bin/, tests/gpu, tests/gpu_brcp and matrices/).
set -uo pipefail
# shellcheck source=device-env.sh
. "$(dirname "$0")/device-env.sh"
export SPMV_MATRICES="$PWD/$bundle/matrices" SPMV_REQUIRE_NVRTC=1

# The graph matrices among the shared ones (MANIFEST.tsv kinds "graph"), 1000 rows and up.
graphs=/tmp/brcp-graphs
mkdir -p "$graphs"
for name in NotreDame_www wiki-Vote cond-mat-2005 ca-GrQc hep-th PGPgiantcompo EVA Roget netscience power \
    minnesota usroads-48 bfly cage9 pesa nopoly cs4 cti data delaunay_n12 delaunay_n13 delaunay_n16 fe_4elt2 \
    luxembourg_osm t60k uk vsp_model1_crew1_cr42_south31; do
    ln -sf "$SPMV_MATRICES/$name.mtx.gz" "$graphs/"
done
formats="${BRCP_FORMATS:-brc,brcp,lightspmv,cusparse-alg1,cusparse-alg2}"
large="${BRCP_LARGE:-kron:scale=20 kron:scale=21 powerlaw:n=1000000,mean=8,exp=2.1 powerlaw:n=4000000,mean=8,exp=2.1}"
# The error experiment's large inputs (PageRank matrices; its JSON is written at the end).
errors_large="${BRCP_ERRORS_LARGE:-kron:scale=20 powerlaw:n=1000000,mean=8,exp=2.1}"
reps="${BRCP_REPS:-100}"
summary=()

if [ "${SKIP_TESTS:-0}" != 1 ]; then
    for name in gpu_brcp gpu; do
        timeout "${TEST_TIMEOUT:-40}" "$bundle/tests/$name" --include-ignored --nocapture > /tmp/test.log 2>&1
        rc=$?
        { echo "===== $name (rc=$rc)"; cat /tmp/test.log; } >> "$out/tests.log"
        summary+=("test $name: rc=$rc $(grep -E '^test result:' /tmp/test.log | tail -1)")
        [ $rc -ne 0 ] && grep -E -A 20 '^failures:' /tmp/test.log | head -40
    done
fi

# shellcheck disable=SC2086
timeout "${ERRORS_TIMEOUT:-25}" "$bundle/bin/brcp_errors" "$graphs" --formats "$formats" --values file --runs 10 \
    --json "$out/brcp-errors-file.json" > /tmp/errors-file.md
summary+=("errors (file values): rc=$?")
# shellcheck disable=SC2086
timeout "${ERRORS_TIMEOUT:-25}" "$bundle/bin/brcp_errors" "$graphs" $errors_large --formats "$formats" --values pagerank \
    --runs 10 --json "$out/brcp-errors-pagerank.json" > /tmp/errors-pagerank.md
summary+=("errors (PageRank values): rc=$?")

timeout "${BENCH_TIMEOUT:-30}" "$bundle/bin/spmv" bench "$graphs" --formats "$formats" --precision f64,f32 \
    --reps "$reps" --json "$out/brcp-graphs.json" > "$out/brcp-graphs.txt" 2> /tmp/bench-graphs.err
summary+=("bench graphs: rc=$? $(grep -E '^# (all|FAILED)' "$out/brcp-graphs.txt")")
# shellcheck disable=SC2086
timeout "${LARGE_TIMEOUT:-60}" "$bundle/bin/spmv" bench $large --formats "$formats" --precision f64,f32 \
    --reps "$reps" --json "$out/brcp-large.json" > "$out/brcp-large.txt" 2> /tmp/bench-large.err
summary+=("bench large: rc=$? $(grep -E '^# (all|FAILED)' "$out/brcp-large.txt")")

grep -E 'rows differ' "$out/tests.log" 2>/dev/null | head -12
grep -E '^#' "$out/brcp-graphs.txt" "$out/brcp-large.txt" 2>/dev/null
grep -E 'NotreDame|wiki-Vote|kron' /tmp/errors-pagerank.md | head -20
tail -n 3 /tmp/bench-*.err
echo "==================== summary ===================="
printf '%s\n' "${summary[@]}"
