#!/usr/bin/env bash
# The Python package on the GPU machine (docs/python.md), in one device call.
# Here:   bash scripts/python-test.sh (builds target/wheels), then
#         mkdir -p .device-py && cp target/wheels/spmv-*.whl .device-py/ (plus pytest's wheels
#         when the device's python3 lacks pytest: pip download pytest -d .device-py);
#         the shared matrices travel in .device-solve/solve.tar.xz (scripts/solve-bench.sh pack).
# Device: bash scripts/python-device.sh   (carry .device-py and .device-solve)
#         1. the pytest suite with the GPU, CuPy and PyTorch (SKIP_PYTEST=1 skips it);
#         2. scripts/python-bench.py: op.apply(x, y) (auto) against CuPy's and PyTorch's CSR
#            products on the shared matrices and the default set, f64;
#         results in $OUT/python.tar.gz, a summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=/tmp/unused . scripts/device-env.sh
res=/tmp/python-results
rm -rf "$res" /tmp/pylib && mkdir -p "$res" /tmp/pylib /tmp/pymat
tar -xJf .device-solve/solve.tar.xz -C /tmp/pymat ./matrices
python3 -c "import pytest" 2>/dev/null || python3 -m pip install --quiet --no-index --no-deps --target /tmp/pylib .device-py/{pytest,pluggy,iniconfig,packaging,pygments}-*.whl
python3 -m pip install --quiet --no-index --no-deps --target /tmp/pylib .device-py/spmv-*.whl
export PYTHONPATH=/tmp/pylib SPMV_MATRICES=/tmp/pymat/matrices
python3 -c "import sys, numpy, scipy, cupy, torch, spmv; print(sys.version.split()[0], 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__, 'spmv', spmv.__version__, spmv.gpu_available())" | tee "$res/versions.txt"
summary=()
if [ "${SKIP_PYTEST:-0}" != 1 ]; then
    (cd crates/spmv-py && timeout 300 python3 -m pytest tests -q -rs -p no:cacheprovider) > "$res/pytest.log" 2>&1
    summary+=("pytest: rc=$? $(tail -1 "$res/pytest.log")")
    tail -15 "$res/pytest.log"
fi
timeout 420 python3 scripts/python-bench.py /tmp/pymat/matrices data/matrices --default-set > "$res/bench-f64.jsonl" 2> "$res/bench-f64.err"
summary+=("bench: rc=$? $(tail -1 "$res/bench-f64.err")")
tar -czf "${OUT:-/tmp}/python.tar.gz" -C /tmp python-results
echo "===== summary"
printf '%s\n' "${summary[@]}"
