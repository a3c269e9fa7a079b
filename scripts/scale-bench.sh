#!/usr/bin/env bash
# Issue 17's one-GPU scale run, on the GPU machine from the repository root, with the CLI
# carried (.device-cli/spmv.tar.xz, from `bash scripts/scale-bench.sh pack` here):
#   1. `spmv bench` on a generated matrix of more than 2^31 entries (default
#      poisson3d:n=800: 5.1e8 rows, 3.6e9 entries, 43 GB in CSR f64), every result checked
#      against the oracle on every row, 64-bit offsets chosen by the formats themselves;
#   2. `spmv solve` (CG) on it for a bounded number of iterations, the true residual
#      computed on the host.
# Host and GPU memory, wall times and the JSON go to $OUT; a summary comes last.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = pack ]; then
    cargo build --release -p spmv-cli
    mkdir -p .device-cli
    tar -cf - -C target/release spmv | xz -T0 -6 > .device-cli/spmv.tar.xz
    du -sh .device-cli/spmv.tar.xz
    exit 0
fi
# shellcheck source=device-env.sh
. "$(dirname "$0")/device-env.sh"
mkdir -p .device-bundle/bin
[ -x .device-bundle/bin/spmv ] || xz -dc .device-cli/spmv.tar.xz | tar -xf - -C .device-bundle/bin
spmv=.device-bundle/bin/spmv
out="${OUT:-/tmp}"
matrix="${SCALE_MATRIX:-poisson3d:n=800}"
formats="${SCALE_FORMATS:-auto,dia:values=auto,csr-vector,merge-csr,cusparse-alg1}"
summary=()
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
free -g | head -2
# The GPU's memory in use, sampled every second in the background (the peak goes in the summary).
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -l 1 > /tmp/gpu-mem.log 2>/dev/null &
smi=$!

run() {
    local what=$1
    shift
    local t0 rc
    t0=$(date +%s.%N)
    # GNU time reports the host's peak memory, where the machine has it.
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -v "$@" > "$out/$what.txt" 2> "/tmp/$what.err"
    else
        "$@" > "$out/$what.txt" 2> "/tmp/$what.err"
    fi
    rc=$?
    local wall rss
    wall=$(python3 -c "import time; print(round(time.time() - $t0))")
    rss=$(grep 'Maximum resident' "/tmp/$what.err" | awk '{printf "%.1f GB", $6 / 1e6}')
    cat "$out/$what.txt"
    grep -v -e '^\s' -e 'Command being timed' "/tmp/$what.err" | tail -20
    summary+=("$what: rc=$rc, wall $wall s, host peak ${rss:-?}")
}

if [ "${SCALE_SKIP_BENCH:-0}" != 1 ]; then
    run bench "$spmv" bench "$matrix" --formats "$formats" --reps "${SCALE_REPS:-20}" --warmup 3 --json "$out/scale-bench.json"
fi
if [ "${SCALE_SKIP_SOLVE:-0}" != 1 ]; then
    run solve "$spmv" solve "$matrix" --format "${SCALE_SOLVE_FORMAT:-auto}" --max-iter "${SCALE_ITERS:-300}" --tol 1e-10 \
        --check-every 50 --json "$out/scale-solve.json"
fi
kill $smi 2>/dev/null
peak=$(sort -n /tmp/gpu-mem.log | tail -1)
echo "===== summary"
for s in "${summary[@]}"; do echo "$s"; done
echo "GPU memory in use, peak: ${peak:-?} MiB"
