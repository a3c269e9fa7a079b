// SELL-C-σ for a block of k vectors, Y = alpha·A·X + beta·Y, in common.cuh's two shapes. Each
// column's sum runs in kernel.cu's order: column j of Y has the bits of the single product A·x_j.
// Sorted row i's slots: entry e of the row at first + e·step, for e < width (kernel.cu's layout).
template <typename O>
struct SellRow {
    O first;
    u32 step, width;
    __device__ __forceinline__ SellRow(u32 i, u32 m, u32 c, const O* __restrict__ slice_ptr,
                                       const u32* __restrict__ slice_width) {
        u32 s = i / c, top = s * c;
        first = slice_ptr[s] + (i - top);
        step = min(c, m - top);
        width = slice_width[s];
    }
    template <typename T, typename Add>
    __device__ __forceinline__ void each(const u32* __restrict__ col, const T* __restrict__ val, Add add) const {
        O p = first;
        for (u32 e = 0; e < width; ++e, p += step) add(val[p], col[p]);
    }
};

// Tiles: kernel.cu's thread per sorted row.
template <typename T, typename O, bool ROW>
__device__ __forceinline__ void sell_block(u32 m, u32 n, u32 k, u32 c, const u32* __restrict__ perm,
                                           const O* __restrict__ slice_ptr, const u32* __restrict__ slice_width,
                                           const u32* __restrict__ col, const T* __restrict__ val,
                                           const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= m) return;
    const SellRow<O> r((u32)g, m, c, slice_ptr, slice_width);
    block_tiles<T, 1, ROW>(true, perm[g], m, n, k, x, y, alpha, beta, [&](auto add) { r.each(col, val, add); });
}

// Lanes: a group of G lanes per sorted row, P columns each.
template <typename T, typename O, int G, int P>
__device__ __forceinline__ void sell_lanes(u32 m, u32 n, u32 k, u32 c, const u32* __restrict__ perm,
                                           const O* __restrict__ slice_ptr, const u32* __restrict__ slice_width,
                                           const u32* __restrict__ col, const T* __restrict__ val,
                                           const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u64 g = lanes_row<G>();
    if (g >= m) return;  // the whole group: it shares the row
    const SellRow<O> r((u32)g, m, c, slice_ptr, slice_width);
    block_lanes<T, G, P>(perm[g], k, x, y, alpha, beta, [&](auto add) { r.each(col, val, add); });
}

#define SELL_BLOCK_KERNEL(T, S, O, SUFFIX, LAYOUT, ROW)                                                         \
    extern "C" __global__ void sell_block##SUFFIX##_##LAYOUT##_##S(                                             \
        u32 m, u32 n, u32 k, u32 c, const u32* perm, const O* slice_ptr, const u32* slice_width, const u32* col, \
        const T* val, const T* x, T* y, T alpha, T beta) {                                                       \
        sell_block<T, O, ROW>(m, n, k, c, perm, slice_ptr, slice_width, col, val, x, y, alpha, beta);          \
    }
#define SELL_LANES_KERNEL(T, S, O, SUFFIX, NAME, G, P)                                                            \
    extern "C" __global__ void sell_block##SUFFIX##_lanes_##NAME##G##_##S(                                        \
        u32 m, u32 n, u32 k, u32 c, const u32* perm, const O* slice_ptr, const u32* slice_width, const u32* col, \
        const T* val, const T* x, T* y, T alpha, T beta) {                                                       \
        sell_lanes<T, O, G, P>(m, n, k, c, perm, slice_ptr, slice_width, col, val, x, y, alpha, beta);         \
    }
#define SELL_BLOCK_KERNELS(T, S)                           \
    SELL_BLOCK_KERNEL(T, S, u32, , row, true)             \
    SELL_BLOCK_KERNEL(T, S, u32, , col, false)            \
    SELL_BLOCK_KERNEL(T, S, u64, _o64, row, true)         \
    SELL_BLOCK_KERNEL(T, S, u64, _o64, col, false)        \
    LANES_KERNELS(SELL_LANES_KERNEL, T, S)

SELL_BLOCK_KERNELS(double, f64)
SELL_BLOCK_KERNELS(float, f32)
