// DIA for a block of k vectors, Y = alpha·A·X + beta·Y, in common.cuh's two shapes. V loads the
// values (ValuesFull, or a codec of formats/values); each column's sum runs in kernel.cu's
// order, so column j of Y has the bits of the single product A·x_j.
// Row r's entries in kernel.cu's order: diagonal i's slot i·m + r where its column lies inside.
template <typename T, typename V, typename Add>
__device__ __forceinline__ void dia_row(u32 r, u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,
                                        const V& val, Add add) {
    u64 slot = r;
    for (u32 i = 0; i < diagonals; ++i, slot += m) {
        u32 c = r + (u32)load_ro(offsets + i);
        if (c < n) add(val.get(slot), c);
    }
}

// Tiles: kernel.cu's thread per row.
template <typename T, typename V, bool ROW>
__device__ __forceinline__ void dia_block(u32 m, u32 n, u32 k, u32 diagonals, const int* __restrict__ offsets,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u32 r;
    if (!thread_row(m, r)) return;
    const V val(codes, table);
    block_tiles<T, 1, ROW>(true, r, m, n, k, x, y, alpha, beta,
                           [&](auto add) { dia_row<T>(r, m, n, diagonals, offsets, val, add); });
}

// Lanes: a group of G lanes per row, P columns each.
template <typename T, typename V, int G, int P>
__device__ __forceinline__ void dia_lanes(u32 m, u32 n, u32 k, u32 diagonals, const int* __restrict__ offsets,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    u64 g = lanes_row<G>();
    if (g >= m) return;  // the whole group: it shares the row
    const V val(codes, table);
    block_lanes<T, G, P>(g, k, x, y, alpha, beta,
                   [&](auto add) { dia_row<T>((u32)g, m, n, diagonals, offsets, val, add); });
}

#define DIA_BLOCK_KERNEL(T, S, CODEC, V, LAYOUT, ROW)                                                       \
    extern "C" __global__ void dia_block##CODEC##_##LAYOUT##_##S(                                            \
        u32 m, u32 n, u32 k, u32 diagonals, const int* offsets, const void* codes, const T* table, const T* x, \
        T* y, T alpha, T beta) {                                                                             \
        dia_block<T, V, ROW>(m, n, k, diagonals, offsets, codes, table, x, y, alpha, beta);                 \
    }
#define DIA_LANES_KERNEL(T, S, CODEC, V, NAME, G, P)                                                           \
    extern "C" __global__ void dia_block##CODEC##_lanes_##NAME##G##_##S(u32 m, u32 n, u32 k, u32 diagonals,    \
                                                                        const int* offsets, const void* codes,   \
                                                                        const T* table, const T* x, T* y,        \
                                                                        T alpha, T beta) {                       \
        dia_lanes<T, V, G, P>(m, n, k, diagonals, offsets, codes, table, x, y, alpha, beta);                    \
    }
// LANES_KERNELS_OF's shape, with the codec's suffix and loader where it passes O and SUFFIX.
#define DIA_BLOCK_LAYOUTS(T, S, CODEC, V)        \
    DIA_BLOCK_KERNEL(T, S, CODEC, V, row, true)  \
    DIA_BLOCK_KERNEL(T, S, CODEC, V, col, false) \
    LANES_KERNELS_OF(DIA_LANES_KERNEL, T, S, CODEC, V)
#define DIA_BLOCK_f64(CODEC, V) DIA_BLOCK_LAYOUTS(double, f64, CODEC, V)
#define DIA_BLOCK_f32(CODEC, V) DIA_BLOCK_LAYOUTS(float, f32, CODEC, V)

DIA_BLOCK_f64(, ValuesFull<double>)
DIA_BLOCK_f32(, ValuesFull<float>)
VALUES_CODED_f64(DIA_BLOCK_f64)
VALUES_CODED_f32(DIA_BLOCK_f32)
