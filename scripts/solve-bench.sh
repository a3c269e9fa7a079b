#!/usr/bin/env bash
# The Krylov solvers on the GPU (docs/solve.md), in one device call.
#
# Here:    bash scripts/solve-bench.sh pack
#          builds the release CLI and the `solve` and `kernels_compile` test binaries and packs
#          them with the shared matrices into .device-solve/solve.tar.xz (git-ignored; carry
#          ".device-solve").
# Device:  bash scripts/solve-bench.sh
#          1. the GPU tests of tests/solve.rs and kernels_compile (SKIP_TESTS=1 skips them);
#          2. `spmv solve` on poisson3d:n=128 (CG, CG + Jacobi, BiCGSTAB; auto and csr-vector),
#             each iteration against the sum of its parts;
#          3. the CUDA graph's effect: small matrices with and without --no-graph;
#          4. CG to 1e-8 on the shared SPD matrices and Poisson problems, `spmv solve` beside
#             CuPy's cg (scripts/solve-cupy.py) in the same session, and the geometric mean
#             of the time ratio;
#          a summary last; everything in $OUT/solve.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = pack ]; then
    set -e
    cargo build --release -p spmv-cli
    rm -rf .device-solve/stage && mkdir -p .device-solve/stage/bin .device-solve/stage/tests .device-solve/stage/matrices
    cp target/release/spmv .device-solve/stage/bin/
    cargo test --release -p spmv --test solve --test kernels_compile --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    try: msg = json.loads(line)
    except ValueError: continue
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["profile"]["test"]:
        print(msg["executable"], msg["target"]["name"])
' | while read -r exe name; do cp "$exe" ".device-solve/stage/tests/$name"; done
    strip .device-solve/stage/bin/* .device-solve/stage/tests/*
    cp "${SPMV_SHARED:-../shared}"/matrices/*.mtx.gz .device-solve/stage/matrices/
    tar -cf - -C .device-solve/stage . | xz -T0 -6 > .device-solve/solve.tar.xz
    rm -rf .device-solve/stage
    du -sh .device-solve/solve.tar.xz
    exit 0
fi

bundle=/tmp/solve-bundle
mkdir -p "$bundle" && tar -xJf .device-solve/solve.tar.xz -C "$bundle"
BUNDLE="$bundle" . scripts/device-env.sh
res=/tmp/solve-results
rm -rf "$res" && mkdir -p "$res"
export SPMV_MATRICES="$bundle/matrices" SPMV_REQUIRE_NVRTC=1
spmv="$bundle/bin/spmv"
summary=()
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$res/gpu.txt"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
    for name in solve kernels_compile; do
        timeout "${TEST_TIMEOUT:-500}" "$bundle/tests/$name" --include-ignored --nocapture > "$res/test-$name.log" 2>&1
        rc=$?
        summary+=("test $name: rc=$rc $(grep -E '^test result:' "$res/test-$name.log" | tail -1)")
        [ $rc -ne 0 ] && grep -E -A 40 '^failures:' "$res/test-$name.log" | head -80
    done
    grep -h "without a CUDA graph" "$res/test-solve.log" | head -3
fi

# One `spmv solve` run: its summary lines on stdout, its JSON kept.
solve() { # label, then the arguments
    local label=$1
    shift
    timeout 300 "$spmv" solve "$@" --json "$res/$label.json" > "$res/$label.txt" 2> "$res/$label.err"
    echo "[$label rc=$?] $(tr '\n' ' ' < "$res/$label.txt")"
}

if [ "${SKIP_LARGE:-0}" != 1 ]; then
    echo "== poisson3d:n=128, tol 1e-8"
    solve p128-cg-auto poisson3d:n=128 --tol 1e-8 --repeat 3
    solve p128-cg-csrvector poisson3d:n=128 --tol 1e-8 --format csr-vector --repeat 3
    solve p128-cg-jacobi poisson3d:n=128 --tol 1e-8 --precond jacobi --repeat 3
    solve p128-cg-f32 poisson3d:n=128 --tol 1e-3 --precision f32 --repeat 3
    solve p128-bicgstab poisson3d:n=128 --tol 1e-8 --method bicgstab --repeat 3
    solve p128-cg-nograph poisson3d:n=128 --tol 1e-8 --no-graph --repeat 3
fi

echo "== the CUDA graph on small matrices (CG, tol 1e-8, read-back every 10)"
for m in nos4 bcsstk08 gr_30_30 poisson2d:n=100 poisson3d:n=32; do
    f="$bundle/matrices/$m.mtx.gz"
    [ -f "$f" ] || f=$m
    l=$(echo "$m" | tr ':=' '__')
    solve "graph-$l" "$f" --tol 1e-8 --max-iter 20000 --repeat 3
    solve "nograph-$l" "$f" --tol 1e-8 --max-iter 20000 --no-graph --repeat 3
done

echo "== CG against CuPy (b = ones, tol 1e-8, no preconditioner)"
spd="nos4 nos5 nos6 bcsstk02 bcsstk04 bcsstk07 bcsstk08 bcsstk09 bcsstk21 gr_30_30 lund_a 1138_bus"
gen="poisson2d:n=100 poisson2d:n=1000 poisson3d:n=64 poisson3d:n=128"
inputs=()
for m in $spd; do inputs+=("$bundle/matrices/$m.mtx.gz"); done
for g in $gen; do inputs+=("$g"); done
for i in "${inputs[@]}"; do
    l=$(basename "$i" .mtx.gz | tr ':=' '__')
    solve "ours-$l" "$i" --tol 1e-8 --max-iter 20000 --repeat 4
done
timeout 500 python3 scripts/solve-cupy.py --tol 1e-8 --max-iter 20000 "${inputs[@]}" > "$res/cupy.jsonl" 2> "$res/cupy.err"
summary+=("cupy: rc=$? $(wc -l < "$res/cupy.jsonl") results")
python3 - "$res" <<'EOF' | tee "$res/compare.txt"
import glob, json, math, os, sys
res = sys.argv[1]
cupy = {}
for line in open(os.path.join(res, "cupy.jsonl")):
    r = json.loads(line)
    cupy[r["matrix"].replace(":", "_").replace("=", "_")] = r
print(f"{'matrix':<18} {'rows':>9} {'it ours':>8} {'it cupy':>8} {'ms ours':>9} {'ms cupy':>9} {'ours/cupy':>9} {'us/it ours':>10} {'us/it cupy':>10}")
ratios = []
for path in sorted(glob.glob(os.path.join(res, "ours-*.json"))):
    o = json.load(open(path))
    key = os.path.basename(path)[5:-5]
    c = cupy.get(key)
    if c is None:
        continue
    both = o["outcome"] == "converged" and c["converged"]
    ratio = o["solve_ms"] / c["ms"]
    if both:
        ratios.append(ratio)
    print(f"{key:<18} {o['rows']:>9} {o['iterations']:>8} {c['iterations']:>8} {o['solve_ms']:>9.2f} {c['ms']:>9.2f} {ratio:>9.3f} "
          f"{1e3 * o['ms_per_iteration']:>10.1f} {1e3 * c['ms'] / max(c['iterations'], 1):>10.1f}{'' if both else '  (not both converged)'}")
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"geometric mean of ours/cupy over {len(ratios)} problems both converged: {g:.3f}")
EOF
summary+=("$(tail -1 "$res/compare.txt")")

tar -czf "${OUT:-/tmp}/solve.tar.gz" -C /tmp solve-results
echo "===== summary"
printf '%s\n' "${summary[@]}"
