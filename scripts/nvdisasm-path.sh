#!/usr/bin/env bash
# Installs nvdisasm from PyPI (the nvidia-cuda-nvdisasm wheel) into target/nvdisasm once, and
# prints the binary's path. With NVRTC's cubins it lets a machine without a GPU read the SASS
# of a kernel (crates/spmv/tests/kernels/sass.rs: DASP's tensor-core instructions).
# Usage: export SPMV_NVDISASM="$(scripts/nvdisasm-path.sh)"
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/target/nvdisasm"
bin="$dest/nvidia/cu13/bin/nvdisasm"
if [ ! -x "$bin" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
        nvidia-cuda-nvdisasm==13.2.51 >&2
fi
echo "$bin"
