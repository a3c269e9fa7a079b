// HDC for a block of k vectors, Y = alpha·A·X + beta·Y, in common.cuh's shapes: a row's entries
// in kernel.cu's order (its stored diagonals, then its entries of the CSR part), so column j of
// Y has the bits of the single product A·x_j.
template <typename T, typename Add>
__device__ __forceinline__ void hdc_row(u32 r, u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,
                                        const T* __restrict__ data, u32 csr_entries, const u32* __restrict__ row_ptr,
                                        const u32* __restrict__ col, const T* __restrict__ val, Add add) {
    const T* p = data + r;
    for (u32 i = 0; i < diagonals; ++i, p += m) {
        u32 c = r + (u32)load_ro(offsets + i);
        if (c < n) add(to_acc(*p), c);
    }
    if (csr_entries) {
        const u32 end = row_ptr[r + 1];
        for (u32 e = row_ptr[r]; e < end; ++e) add(to_acc(val[e]), col[e]);
    }
}

#define HDC_BLOCK_ARGS(T)                                                                                      \
    u32 m, u32 n, u32 k, u32 diagonals, const int* __restrict__ offsets, const T* __restrict__ data,           \
        u32 csr_entries, const u32* __restrict__ row_ptr, const u32* __restrict__ col, const T* __restrict__ val, \
        const T* __restrict__ x, T* __restrict__ y, T alpha, T beta
#define HDC_ROW(R) hdc_row<T>(R, m, n, diagonals, offsets, data, csr_entries, row_ptr, col, val, add)

// Tiles: kernel.cu's thread per row.
template <typename T, bool ROW>
__device__ __forceinline__ void hdc_block(HDC_BLOCK_ARGS(T)) {
    u32 r;
    if (!thread_row(m, r)) return;
    block_tiles<T, 1, ROW>(true, r, m, n, k, x, y, alpha, beta, [&](auto add) { HDC_ROW(r); });
}

// Lanes: a group of G lanes per row, P columns each.
template <typename T, int G, int P>
__device__ __forceinline__ void hdc_lanes(HDC_BLOCK_ARGS(T)) {
    const u64 g = lanes_row<G>();
    if (g >= m) return;  // the whole group: it shares the row
    block_lanes<T, G, P>(g, k, x, y, alpha, beta, [&](auto add) { HDC_ROW((u32)g); });
}

#define HDC_PASS m, n, k, diagonals, offsets, data, csr_entries, row_ptr, col, val, x, y, alpha, beta
#define HDC_BLOCK_KERNEL(T, S, LAYOUT, ROW) \
    extern "C" __global__ void hdc_block_##LAYOUT##_##S(HDC_BLOCK_ARGS(T)) { hdc_block<T, ROW>(HDC_PASS); }
// LANES_KERNELS_OF's shape; HDC has 32-bit offsets only (O and SUFFIX unused).
#define HDC_LANES_KERNEL(T, S, O, SUFFIX, NAME, G, P) \
    extern "C" __global__ void hdc_lanes_##NAME##G##_##S(HDC_BLOCK_ARGS(T)) { hdc_lanes<T, G, P>(HDC_PASS); }
#define HDC_BLOCK_KERNELS(T, S)          \
    HDC_BLOCK_KERNEL(T, S, row, true)    \
    HDC_BLOCK_KERNEL(T, S, col, false)   \
    LANES_KERNELS_OF(HDC_LANES_KERNEL, T, S, u32, )

HDC_BLOCK_KERNELS(double, f64)
HDC_BLOCK_KERNELS(float, f32)
