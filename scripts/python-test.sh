#!/usr/bin/env bash
# Builds the Python package's wheel (crates/spmv-py, maturin, abi3: CPython >= 3.9) into
# target/wheels, installs it in a virtual environment (target/py-venv, with numpy, scipy and
# pytest from PyPI) and runs its pytest suite (-rs: each skipped test with its reason). On a
# machine without a GPU the package runs on the CPU and the CUDA-array tests are skipped.
# Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/py-venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.5,<2" "numpy>=1.21" "scipy>=1.8" "pytest>=7"
rm -rf "$root/target/wheels"
"$venv/bin/maturin" build --release --strip --compatibility linux \
    --manifest-path "$root/crates/spmv-py/Cargo.toml" --out "$root/target/wheels" --interpreter "$venv/bin/python" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$root"/target/wheels/spmv-*.whl
cd "$root/crates/spmv-py"
"$venv/bin/python" -m pytest tests -q -rs "$@"
