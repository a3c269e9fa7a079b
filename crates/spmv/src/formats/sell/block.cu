// SELL-C-σ for a block of k vectors, Y = alpha·A·X + beta·Y: kernel.cu's thread per sorted row,
// accumulating a tile of BLOCK_TILE columns of X at once (block_at in common.cuh), so the slots
// are read once per tile. Each column's sum runs in kernel.cu's order: column j of Y has the
// bits of the single product A·x_j.
template <typename T, typename O, bool ROW>
__device__ __forceinline__ void sell_block(u32 m, u32 n, u32 k, u32 c, const u32* __restrict__ perm,
                                           const O* __restrict__ slice_ptr, const u32* __restrict__ slice_width,
                                           const u32* __restrict__ col, const T* __restrict__ val,
                                           const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= m) return;
    u32 i = (u32)g;
    u32 s = i / c;
    u32 first = s * c;
    u32 lane = i - first;
    u32 h = min(c, m - first);
    u32 w = slice_width[s];
    u64 row = perm[i];
    for (u32 j0 = 0; j0 < k; j0 += BLOCK_TILE) {
        const u32 kt = min((u32)BLOCK_TILE, k - j0);
        T acc[BLOCK_TILE];
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) acc[t] = 0;
        O p = slice_ptr[s] + lane;
        for (u32 e = 0; e < w; ++e, p += h) {
            const T v = val[p];
            const u64 cc = col[p];
#pragma unroll
            for (int t = 0; t < BLOCK_TILE; ++t) {
                if (t < kt) acc[t] += v * load_ro(x + block_at<ROW>(cc, j0 + t, n, k));
            }
        }
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) {
            if (t < kt) store_y<T, true>(y + block_at<ROW>(row, j0 + t, m, k), acc[t], alpha, beta);
        }
    }
}

// Row-major blocks of k > BLOCK_TILE vectors: a warp per sorted row, lane l taking columns l,
// l + 32, ... (every lane reads the same slot: a broadcast).
template <typename T, typename O>
__device__ __forceinline__ void sell_lanes(u32 m, u32 n, u32 k, u32 c, const u32* __restrict__ perm,
                                           const O* __restrict__ slice_ptr, const u32* __restrict__ slice_width,
                                           const u32* __restrict__ col, const T* __restrict__ val,
                                           const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u64 g = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (g >= m) return;  // the whole warp: it shares the row
    u32 i = (u32)g;
    u32 s = i / c;
    u32 first = s * c;
    u32 lane = i - first;
    u32 h = min(c, m - first);
    u32 w = slice_width[s];
    u64 row = perm[i];
    for (u32 j = threadIdx.x % 32; j < k; j += 32) {
        T acc = 0;
        O p = slice_ptr[s] + lane;
        for (u32 e = 0; e < w; ++e, p += h) acc += val[p] * load_ro(x + (u64)col[p] * k + j);
        store_y<T, true>(y + row * k + j, acc, alpha, beta);
    }
}

#define SELL_BLOCK_KERNEL(T, S, O, SUFFIX, LAYOUT, ROW)                                                         \
    extern "C" __global__ void sell_block##SUFFIX##_##LAYOUT##_##S(                                             \
        u32 m, u32 n, u32 k, u32 c, const u32* perm, const O* slice_ptr, const u32* slice_width, const u32* col, \
        const T* val, const T* x, T* y, T alpha, T beta) {                                                       \
        sell_block<T, O, ROW>(m, n, k, c, perm, slice_ptr, slice_width, col, val, x, y, alpha, beta);          \
    }
#define SELL_LANES_KERNEL(T, S, O, SUFFIX)                                                                        \
    extern "C" __global__ void sell_block##SUFFIX##_lanes_##S(                                                    \
        u32 m, u32 n, u32 k, u32 c, const u32* perm, const O* slice_ptr, const u32* slice_width, const u32* col, \
        const T* val, const T* x, T* y, T alpha, T beta) {                                                       \
        sell_lanes<T, O>(m, n, k, c, perm, slice_ptr, slice_width, col, val, x, y, alpha, beta);               \
    }
#define SELL_BLOCK_KERNELS(T, S)                           \
    SELL_BLOCK_KERNEL(T, S, u32, , row, true)             \
    SELL_BLOCK_KERNEL(T, S, u32, , col, false)            \
    SELL_BLOCK_KERNEL(T, S, u64, _o64, row, true)         \
    SELL_BLOCK_KERNEL(T, S, u64, _o64, col, false)        \
    SELL_LANES_KERNEL(T, S, u32, )                        \
    SELL_LANES_KERNEL(T, S, u64, _o64)

SELL_BLOCK_KERNELS(double, f64)
SELL_BLOCK_KERNELS(float, f32)
