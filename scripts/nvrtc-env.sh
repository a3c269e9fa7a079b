#!/usr/bin/env bash
# Installs NVRTC 13 from PyPI (the nvidia-cuda-nvrtc wheel) into target/nvrtc once, and
# prints the folder to put on LD_LIBRARY_PATH. NVRTC compiles CUDA C without a GPU, so
# machines with no CUDA can still check that every kernel compiles for sm_90.
# Usage: export LD_LIBRARY_PATH="$(scripts/nvrtc-env.sh)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/target/nvrtc"
lib="$dest/nvidia/cu13/lib"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
        nvidia-cuda-nvrtc==13.0.88 >&2
fi
echo "$lib"
