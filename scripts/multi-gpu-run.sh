#!/usr/bin/env bash
# Issue 17's runs on a machine of two (or more) GPUs (device kind nvidia-h200-x2), from the
# repository root with .device-pack carried (bash scripts/device-bundle.sh here). One call
# does what $MULTI_PARTS names (default: all of them — more than the 10 minutes a device call
# may take, so run it as three calls: MULTI_PARTS="tests python", "default", "strong cg weak";
# on one H200 the cg part took 2.5 minutes at the default size):
#   tests    the distributed tests with part i on device i mod 2: products equal to the whole
#            matrix on one GPU (edge cases, generated and every square shared matrix; bitwise
#            for the position-independent formats), CG and PageRank against one GPU, NCCL's
#            bits against the peer copies', the bench over devices
#   default  `spmv bench` on the default set with --devices 2, every row checked
#   strong   SpMV on $MULTI_MATRIX (default poisson3d:n=560: 1.76e8 rows, 1.23e9 entries) on
#            one GPU, then over two (peer copies, then NCCL): halo bytes and exchange time
#   cg       CG on it for $MULTI_ITERS iterations (default 300): one GPU (the CUDA-graph
#            solver), two GPUs (peer, NCCL); the per-iteration times give the speed-up
#   weak     SpMV and CG with the rows per GPU held: $MULTI_MATRIX on one GPU against
#            $MULTI_WEAK (default poisson3d:n=706, 2.0x the rows) on two
#   python   (when .device-py holds the wheel, scripts/python-device.sh's first step) the
#            package's tests with SPMV_TEST_DEVICES=2: its devices= test spreads over both
# MULTI_DEVICES (default 2) is what --devices gets.
# NVLink multicast stays off (scripts/device-env.sh sets NCCL_NVLS_ENABLE=0). Logs and JSON
# go to $OUT/multi.tgz; a summary comes last.
set -uo pipefail
# shellcheck source=device-env.sh
. "$(dirname "$0")/device-env.sh"
export SPMV_MATRICES="$PWD/$bundle/matrices" SPMV_REQUIRE_NVRTC=1 SPMV_REQUIRE_NCCL=1
spmv="$bundle/bin/spmv"
parts="${MULTI_PARTS:-tests default strong cg weak python}"
matrix="${MULTI_MATRIX:-poisson3d:n=560}"
weak="${MULTI_WEAK:-poisson3d:n=706}"
iters="${MULTI_ITERS:-300}"
devs="${MULTI_DEVICES:-2}"   # 0,0 tries the script on one GPU
formats="${MULTI_FORMATS:-dia:values=auto,csr-vector,merge-csr,dasp,auto}"
res=/tmp/multi
mkdir -p "$res"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -4
echo "NCCL: $(find / -name 'libnccl.so.2*' -print -quit 2>/dev/null)"
summary=()

# run NAME CMD...: the command's output to $res/NAME.txt (shown), its status and wall time
# to the summary.
run() {
    local name=$1 t0 rc
    shift
    t0=$(date +%s)
    "$@" > "$res/$name.txt" 2> "$res/$name.err"
    rc=$?
    tail -25 "$res/$name.txt"
    [ $rc -ne 0 ] && tail -5 "$res/$name.err"
    summary+=("$name: rc=$rc, $(($(date +%s) - t0)) s")
}

# The b2b time of each format in a bench JSON, one line.
bench_line() {
    python3 - "$1" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print("  ".join(f"{r['format']}: {r['back_to_back_ms']:.3f} ms" + (f" (exch {r['exchange_ms']*1e3:.0f} us, halo {r['halo_bytes']/1e6:.2f} MB)" if r.get("exchange_ms") else "")
                for r in rows if r["status"] == "ok"))
EOF
}

for part in $parts; do
    case $part in
    tests)
        run tests timeout 560 "$bundle/tests/distributed" --include-ignored
        summary+=("  $(grep -E '^test result' "$res/tests.txt" | tail -1)")
        ;;
    default)
        for ex in peer nccl; do
            run "default-$ex" "$spmv" bench --formats all --precision f64 --reps 30 --devices "$devs" --exchange "$ex" \
                --json "$res/default-$ex.json"
            summary+=("  $(grep -E '^# (all|FAILED)' "$res/default-$ex.txt")")
        done
        ;;
    strong)
        run strong-1 "$spmv" bench "$matrix" --formats "$formats" --reps 20 --warmup 3 --json "$res/strong-1.json"
        summary+=("  1 GPU: $(bench_line "$res/strong-1.json")")
        for ex in peer nccl; do
            run "strong-2-$ex" "$spmv" bench "$matrix" --formats "$formats" --reps 20 --warmup 3 --devices "$devs" --exchange "$ex" \
                --json "$res/strong-2-$ex.json"
            summary+=("  2 GPUs $ex: $(bench_line "$res/strong-2-$ex.json")")
        done
        ;;
    cg)
        for f in csr-vector dia:values=auto; do
            tag=${f%%:*}
            run "cg-1-$tag" "$spmv" solve "$matrix" --format "$f" --max-iter "$iters" --tol 1e-14 --json "$res/cg-1-$tag.json"
            summary+=("  $(head -1 "$res/cg-1-$tag.txt")")
            for ex in peer nccl; do
                run "cg-2-$tag-$ex" "$spmv" solve "$matrix" --format "$f" --max-iter "$iters" --tol 1e-14 --devices "$devs" \
                    --exchange "$ex" --json "$res/cg-2-$tag-$ex.json"
                summary+=("  $(head -1 "$res/cg-2-$tag-$ex.txt")")
            done
        done
        ;;
    weak)
        run weak-2 "$spmv" bench "$weak" --formats "$formats" --reps 20 --warmup 3 --devices "$devs" --json "$res/weak-2.json"
        summary+=("  2 GPUs, $weak: $(bench_line "$res/weak-2.json")")
        run weak-cg-2 "$spmv" solve "$weak" --format dia:values=auto --max-iter "$iters" --tol 1e-14 --devices "$devs" \
            --json "$res/weak-cg-2.json"
        summary+=("  $(head -1 "$res/weak-cg-2.txt")")
        ;;
    python)
        if ls .device-py/spmv-*.whl > /dev/null 2>&1; then
            mkdir -p /tmp/pylib
            python3 -m pip install --quiet --no-index --no-deps --target /tmp/pylib .device-py/spmv-*.whl
            (cd crates/spmv-py && PYTHONPATH=/tmp/pylib SPMV_TEST_DEVICES=2 timeout 300 python3 -m pytest tests -q -rs \
                -p no:cacheprovider -k "not shared_matrices") > "$res/python.txt" 2>&1
            summary+=("python: rc=$? $(tail -1 "$res/python.txt")")
        fi
        ;;
    *) echo "unknown part $part" ;;
    esac
done
tar -czf "$out/multi.tgz" -C "$res" .
echo "==================== summary"
for s in "${summary[@]}"; do echo "$s"; done
