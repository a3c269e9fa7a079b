# Sourced by the device scripts (on the GPU machine, from the repository root): puts the
# folders of NVRTC 13 and cuSPARSE 12 (CUDA toolkit or the image's Python wheels) on the
# library path (libcuda comes with the driver), and sets $bundle and $out.
bundle="${BUNDLE:-.device-bundle}"
# The packed bundle (scripts/device-bundle.sh), unpacked once per machine.
if [ -f .device-pack/bundle.tar.xz ] && [ ! -x "$bundle/bin/spmv" ]; then
    mkdir -p "$bundle" && tar -xJf .device-pack/bundle.tar.xz -C "$bundle"
fi
out="${OUT:-/tmp/spmv-out}"
mkdir -p "$out"
# NCCL (the distributed exchange's `nccl` mode) comes as libnccl.so.2 in the image's Python
# wheels (nvidia-nccl), under the Python's site-packages.
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)
for lib in libnvrtc.so.13 libcusparse.so.12 libnccl.so.2; do
    dir=$(find /usr/local/cuda*/ /usr/lib /opt ${site:+"$site/nvidia"} -name "$lib" -print -quit 2>/dev/null | xargs -r dirname)
    [ -n "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
# The machines' rule: NVLink multicast stays off (KINDS.md), also for programs we start.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
