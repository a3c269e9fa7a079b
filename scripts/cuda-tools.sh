#!/usr/bin/env bash
# Installs NVRTC 13 and nvdisasm from PyPI (the nvidia-cuda-nvrtc and nvidia-cuda-nvdisasm
# wheels) into target/cuda-tools once, and prints the shell lines that put them to use:
# NVRTC's folder on LD_LIBRARY_PATH, nvdisasm's path in SPMV_NVDISASM. NVRTC compiles CUDA C
# without a GPU and nvdisasm reads the machine code of its cubins, so a machine with no CUDA
# can still check that every kernel compiles for sm_90 (crates/spmv/tests/kernels).
# Usage: eval "$(scripts/cuda-tools.sh)"
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/target/cuda-tools"
lib="$dest/nvidia/cu13/lib"
bin="$dest/nvidia/cu13/bin/nvdisasm"
if [ ! -e "$lib/libnvrtc.so.13" ] || [ ! -x "$bin" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
        nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-nvdisasm==13.2.51 >&2
fi
echo "export LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
echo "export SPMV_NVDISASM=\"$bin\""
