#!/usr/bin/env bash
# The BRCP paper's PageRank experiment (docs/pagerank.md), run on the GPU machine from the
# repository root with the bundle carried (built here by scripts/device-bundle.sh):
#   1. the shared graph matrices ($PR_GRAPHS), every format in $PR_FORMATS (default all);
#   2. the large generated graphs ($PR_LARGE), formats $PR_LARGE_FORMATS (default all);
# f64 and f32, each graph with its exact ranking (oracle SpMV in f64 on the CPU, tol 1e-12)
# for the top-100 agreement. Text and JSON go to $OUT (stderr to $OUT/experiment.log);
# scripts/pagerank-to-markdown.py makes the tables.
set -uo pipefail
# shellcheck source=device-env.sh
. "$(dirname "$0")/device-env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader

# Directed web/social graphs, collaboration networks and the DIMACS10 graphs of the shared set.
graphs="${PR_GRAPHS:-NotreDame_www wiki-Vote cond-mat-2005 ca-GrQc hep-th PGPgiantcompo delaunay_n13 delaunay_n16
  luxembourg_osm usroads-48 t60k fe_4elt2 cs4 cti vsp_model1_crew1_cr42_south31 bfly}"
files=()
for g in $graphs; do files+=("$bundle/matrices/$g.mtx.gz"); done
common=(--precision f64,f32 --exact --top 10 --max-iter "${PR_MAX_ITER:-300}")
status=0
if [ "${PR_SKIP_SHARED:-0}" != 1 ]; then
    "$bundle/bin/spmv" pagerank "${files[@]}" --format "${PR_FORMATS:-all}" --runs "${PR_RUNS:-5}" "${common[@]}" \
        --json "$out/pagerank-shared.json" > "$out/pagerank-shared.txt" 2>> "$out/experiment.log" || status=1
fi
# shellcheck disable=SC2086
"$bundle/bin/spmv" pagerank ${PR_LARGE:-kron:scale=20 powerlaw:n=2000000,mean=8,exp=2.1} \
    --format "${PR_LARGE_FORMATS:-all}" --runs "${PR_LARGE_RUNS:-3}" "${common[@]}" \
    --json "$out/pagerank-large.json" > "$out/pagerank-large.txt" 2>> "$out/experiment.log" || status=1
cat "$out/pagerank-large.txt"
tail -n 5 "$out/experiment.log"
exit $status
