// PBC kernel: one thread block per PBC block, one thread per row of the block; the block is
// an ELL array of its own width stored column-major: entry t of the block's row `lane` is at
// block_slot_ptr[b] + t*h + lane (h = rows of the block). Padding slots hold 0 and a valid
// column, so the loop runs the block's width without a branch. Device indices are 32-bit:
// the conversion checks that the stored slots fit a u32 and rows <= 2^32 - 1 - 2048 (so
// `lane += blockDim.x` cannot wrap).
template <typename T>
__device__ __forceinline__ void pbc(const u32* __restrict__ block_row_ptr, const u32* __restrict__ block_width,
                                    const u32* __restrict__ block_slot_ptr, const u32* __restrict__ perm,
                                    const u32* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x,
                                    T* __restrict__ y) {
    u32 b = blockIdx.x;
    u32 first = block_row_ptr[b];
    u32 h = block_row_ptr[b + 1] - first;
    u32 w = block_width[b];
    u32 base = block_slot_ptr[b];
    for (u32 lane = threadIdx.x; lane < h; lane += blockDim.x) {
        T sum = 0;
        u32 p = base + lane;
        for (u32 t = 0; t < w; ++t, p += h) sum += val[p] * load_ro(x + col[p]);
        y[perm[first + lane]] = sum;
    }
}

#define PBC_ARGS(T) const u32* __restrict__ block_row_ptr, const u32* __restrict__ block_width,      \
                    const u32* __restrict__ block_slot_ptr, const u32* __restrict__ perm,             \
                    const u32* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x,  \
                    T* __restrict__ y
#define PBC_PASS block_row_ptr, block_width, block_slot_ptr, perm, col, val, x, y

F64_F32_KERNELS(pbc, PBC_ARGS, PBC_PASS)
