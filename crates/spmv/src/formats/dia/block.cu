// DIA for a block of k vectors, Y = alpha·A·X + beta·Y: kernel.cu's thread per row, accumulating
// a tile of BLOCK_TILE columns of X at once (block_at in common.cuh), so the diagonals are read
// once per tile. V loads the values (ValuesFull, or a codec of formats/values); each column's
// sum runs in kernel.cu's order, so column j of Y has the bits of the single product A·x_j.
template <typename T, typename V, bool ROW>
__device__ __forceinline__ void dia_block(u32 m, u32 n, u32 k, u32 diagonals, const int* __restrict__ offsets,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u32 r;
    if (!thread_row(m, r)) return;
    const V val(codes, table);
    for (u32 j0 = 0; j0 < k; j0 += BLOCK_TILE) {
        const u32 kt = min((u32)BLOCK_TILE, k - j0);
        T acc[BLOCK_TILE];
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) acc[t] = 0;
        u64 slot = r;
        for (u32 i = 0; i < diagonals; ++i, slot += m) {
            u32 c = r + (u32)load_ro(offsets + i);
            if (c < n) {
                const T v = val.get(slot);
#pragma unroll
                for (int t = 0; t < BLOCK_TILE; ++t) {
                    if (t < kt) acc[t] += v * load_ro(x + block_at<ROW>(c, j0 + t, n, k));
                }
            }
        }
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) {
            if (t < kt) store_y<T, true>(y + block_at<ROW>(r, j0 + t, m, k), acc[t], alpha, beta);
        }
    }
}

// Row-major blocks of k > BLOCK_TILE vectors: a warp per row, lane l taking columns l, l + 32,
// ... (every lane reads the same slot: a broadcast).
template <typename T, typename V>
__device__ __forceinline__ void dia_lanes(u32 m, u32 n, u32 k, u32 diagonals, const int* __restrict__ offsets,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u64 g = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (g >= m) return;  // the whole warp: it shares the row
    u32 r = (u32)g;
    const V val(codes, table);
    for (u32 j = threadIdx.x % 32; j < k; j += 32) {
        T acc = 0;
        u64 slot = r;
        for (u32 i = 0; i < diagonals; ++i, slot += m) {
            u32 c = r + (u32)load_ro(offsets + i);
            if (c < n) acc += val.get(slot) * load_ro(x + (u64)c * k + j);
        }
        store_y<T, true>(y + (u64)r * k + j, acc, alpha, beta);
    }
}

#define DIA_BLOCK_KERNEL(T, S, CODEC, V, LAYOUT, ROW)                                                       \
    extern "C" __global__ void dia_block##CODEC##_##LAYOUT##_##S(                                            \
        u32 m, u32 n, u32 k, u32 diagonals, const int* offsets, const void* codes, const T* table, const T* x, \
        T* y, T alpha, T beta) {                                                                             \
        dia_block<T, V, ROW>(m, n, k, diagonals, offsets, codes, table, x, y, alpha, beta);                 \
    }
#define DIA_LANES_KERNEL(T, S, CODEC, V)                                                                    \
    extern "C" __global__ void dia_block##CODEC##_lanes_##S(u32 m, u32 n, u32 k, u32 diagonals,              \
                                                            const int* offsets, const void* codes,             \
                                                            const T* table, const T* x, T* y, T alpha, T beta) { \
        dia_lanes<T, V>(m, n, k, diagonals, offsets, codes, table, x, y, alpha, beta);                        \
    }
#define DIA_BLOCK_LAYOUTS(T, S, CODEC, V)           \
    DIA_BLOCK_KERNEL(T, S, CODEC, V, row, true)     \
    DIA_BLOCK_KERNEL(T, S, CODEC, V, col, false)    \
    DIA_LANES_KERNEL(T, S, CODEC, V)
#define DIA_BLOCK_f64(CODEC, V) DIA_BLOCK_LAYOUTS(double, f64, CODEC, V)
#define DIA_BLOCK_f32(CODEC, V) DIA_BLOCK_LAYOUTS(float, f32, CODEC, V)

DIA_BLOCK_f64(, ValuesFull<double>)
DIA_BLOCK_f32(, ValuesFull<float>)
VALUES_CODED_f64(DIA_BLOCK_f64)
VALUES_CODED_f32(DIA_BLOCK_f32)
