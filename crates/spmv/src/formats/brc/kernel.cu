// BRC kernel: one warp per block of 32 slots, one atomicAdd per slot. See formats/brc/mod.rs.
// Device indices are 32-bit: stored slots (entries + padding) are checked against 2^32 - 1 at
// conversion, and every block has width >= 1, so slot numbers (blocks * 32) fit a u32 too.

#define BRC_NO_ROW 0xffffffffu

// Entry t of slot `lane` of block b is at block_ptr[b] + t*32 + lane: a warp's loads of one
// t are 32 consecutive elements. y must hold 0 before the launch (the host fills it).
template <typename T>
__device__ __forceinline__ void brc(u32 blocks, const u32* __restrict__ block_ptr, const u32* __restrict__ row_perm,
                                    const u32* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x,
                                    T* y) {
    const u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 b = g >> 5;
    if (b >= blocks) return;
    const u32 lane = threadIdx.x & 31;
    const u32 base = block_ptr[b];
    const u32 width = (block_ptr[b + 1] - base) >> 5;
    u32 p = base + lane;
    T sum = 0;
#pragma unroll 4
    for (u32 t = 0; t < width; ++t, p += 32) sum += val[p] * load_ro(x + col[p]);
    const u32 row = row_perm[(u32)g];  // g = b*32 + lane < blocks*32
    // A row cut into pieces gets one add per piece, in the order the warps finish.
    if (row != BRC_NO_ROW) atomicAdd(y + row, sum);
}

#define BRC_KERNELS(T, S)                                                                                     \
    extern "C" __global__ void brc_##S(u32 blocks, const u32* __restrict__ block_ptr,                        \
                                       const u32* __restrict__ row_perm, const u32* __restrict__ col,        \
                                       const T* __restrict__ val, const T* __restrict__ x, T* y) {           \
        brc<T>(blocks, block_ptr, row_perm, col, val, x, y);                                                  \
    }

BRC_KERNELS(double, f64)
BRC_KERNELS(float, f32)
