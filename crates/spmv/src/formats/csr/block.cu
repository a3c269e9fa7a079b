// CSR for a block of k vectors, Y = alpha·A·X + beta·Y (full values and 32-bit columns), in
// common.cuh's two shapes. Tiles: LANES consecutive threads per row (1: CSR-scalar), each
// column's sum in csr_vector's order (strided over the row, then the group's shuffle tree), so
// column j of Y has the bits of the single product A·x_j.

template <typename T, typename O, int LANES, bool ROW>
__device__ __forceinline__ void csr_block(u32 m, u32 n, u32 k, const O* __restrict__ row_ptr, const u32* __restrict__ col,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const ValuesFull<T> val(codes, table);
    const u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    const int lane = threadIdx.x % LANES;
    const bool active = row < m;
    O begin = 0, end = 0;
    if (active) {
        begin = row_ptr[row] + lane;
        end = row_ptr[row + 1];
    }
    block_tiles<T, LANES, ROW>(active && lane == 0, row, m, n, k, x, y, alpha, beta, [&](auto add) {
        for (O i = begin; i < end; i += LANES) add(val.get(i), col[i]);
    });
}

// Row-major blocks of k >= BLOCK_TILE vectors (block_lanes, G lanes per row of P columns each):
// each column summed in the row's order, so column j has the bits of CSR-scalar's A·x_j. The
// group reads G entries at once, one per lane (two coalesced loads, not two per entry), and
// passes them round in order. Loading the next G entries while adding these (one memory latency
// a batch instead of two) was measured on an H100 and not kept: 5-8% faster at k = 16 and 32 on
// small matrices with rows of 100-300 entries, 6-16% slower at k = 8 and 2-7% slower on larger
// ones (lab/results/lanes-prefetch-h100.txt); such rows go to cuSPARSE's SpMM instead
// (formats/device.rs, RowShape::lanes_wait_on_longest_row).
template <typename T, typename O, int G, int P>
__device__ __forceinline__ void csr_lanes(u32 m, u32 n, u32 k, const O* __restrict__ row_ptr, const u32* __restrict__ col,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const ValuesFull<T> val(codes, table);
    const u64 row = lanes_row<G>();
    if (row >= m) return;  // the whole group: it shares the row
    const O begin = row_ptr[row], end = row_ptr[row + 1];
    const u32 sub = threadIdx.x % G, mask = group_mask<G>();
    block_lanes<T, G, P>(row, k, x, y, alpha, beta, [&](auto add) {
        for (O base = begin; base < end; base += G) {
            acc_t<T> v = 0;
            u32 c = 0;
            if (base + sub < end) {
                v = to_acc(val.get(base + sub));
                c = col[base + sub];
            }
            const u32 count = (u32)min((O)G, end - base);
#pragma unroll 4
            for (u32 t = 0; t < count; ++t) add(__shfl_sync(mask, v, t, G), __shfl_sync(mask, c, t, G));
        }
    });
}

#define CSR_BLOCK_KERNEL(T, S, O, SUFFIX, LANES, LAYOUT, ROW)                                                     \
    extern "C" __global__ void csr_block_##LANES##SUFFIX##_##LAYOUT##_##S(                                        \
        u32 m, u32 n, u32 k, const O* row_ptr, const u32* col, const void* codes, const T* table, const T* x, T* y, \
        T alpha, T beta) {                                                                                         \
        csr_block<T, O, LANES, ROW>(m, n, k, row_ptr, col, codes, table, x, y, alpha, beta);                       \
    }
#define CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, LANES)          \
    CSR_BLOCK_KERNEL(T, S, O, SUFFIX, LANES, row, true)   \
    CSR_BLOCK_KERNEL(T, S, O, SUFFIX, LANES, col, false)
#define CSR_BLOCK_LANES(T, S, O, SUFFIX)        \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 1)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 2)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 4)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 8)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 16)      \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 32)
#define CSR_LANES_KERNEL(T, S, O, SUFFIX, NAME, G, P)                                                               \
    extern "C" __global__ void csr_lanes##SUFFIX##_##NAME##G##_##S(u32 m, u32 n, u32 k, const O* row_ptr,              \
                                                                   const u32* col, const void* codes, const T* table,  \
                                                                   const T* x, T* y, T alpha, T beta) {                \
        csr_lanes<T, O, G, P>(m, n, k, row_ptr, col, codes, table, x, y, alpha, beta);                                 \
    }
#define CSR_BLOCK_KERNELS(T, S)             \
    CSR_BLOCK_LANES(T, S, u32, )            \
    CSR_BLOCK_LANES(T, S, u64, _o64)        \
    LANES_KERNELS(CSR_LANES_KERNEL, T, S)

CSR_BLOCK_KERNELS(double, f64)
CSR_BLOCK_KERNELS(float, f32)
CSR_BLOCK_KERNELS(half_t, f16)
