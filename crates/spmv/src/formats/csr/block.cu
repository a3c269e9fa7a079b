// CSR for a block of k vectors, Y = alpha·A·X + beta·Y (full values and 32-bit columns):
// LANES consecutive threads per row (1: CSR-scalar), each lane accumulating a tile of
// BLOCK_TILE columns of X at once in registers (block_at in common.cuh). Every column's sum
// runs in csr_vector's order (strided over the row, then the group's shuffle tree), so column
// j of Y has the bits of the single product A·x_j.

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
    for (u32 j0 = 0; j0 < k; j0 += BLOCK_TILE) {
        const u32 kt = min((u32)BLOCK_TILE, k - j0);
        acc_t<T> acc[BLOCK_TILE];
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) acc[t] = 0;
        for (O i = begin; i < end; i += LANES) {
            const acc_t<T> v = val.get(i);
            const u64 c = col[i];
#pragma unroll
            for (int t = 0; t < BLOCK_TILE; ++t) {
                if (t < kt) acc[t] += v * to_acc(load_ro(x + block_at<ROW>(c, j0 + t, n, k)));
            }
        }
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) acc[t] = group_sum(acc[t], LANES);
        if (active && lane == 0) {
#pragma unroll
            for (int t = 0; t < BLOCK_TILE; ++t) {
                if (t < kt) store_y<T, true>(y + block_at<ROW>(row, j0 + t, m, k), acc[t], alpha, beta);
            }
        }
    }
}

// Row-major blocks of k > BLOCK_TILE vectors: a warp per row, lane l taking columns l, l + 32,
// ...; each column summed in the row's order, so column j has the bits of CSR-scalar's A·x_j.
template <typename T, typename O>
__device__ __forceinline__ void csr_lanes(u32 m, u32 n, u32 k, const O* __restrict__ row_ptr, const u32* __restrict__ col,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const ValuesFull<T> val(codes, table);
    const u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (row >= m) return;  // the whole warp: it shares the row
    const O begin = row_ptr[row], end = row_ptr[row + 1];
    for (u32 j = threadIdx.x % 32; j < k; j += 32) {
        acc_t<T> acc = 0;
        for (O i = begin; i < end; ++i) acc += val.get(i) * to_acc(load_ro(x + (u64)col[i] * k + j));
        store_y<T, true>(y + row * k + j, acc, alpha, beta);
    }
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
#define CSR_LANES_KERNEL(T, S, O, SUFFIX)                                                                         \
    extern "C" __global__ void csr_lanes##SUFFIX##_##S(u32 m, u32 n, u32 k, const O* row_ptr, const u32* col,        \
                                                      const void* codes, const T* table, const T* x, T* y, T alpha, \
                                                      T beta) {                                                     \
        csr_lanes<T, O>(m, n, k, row_ptr, col, codes, table, x, y, alpha, beta);                                    \
    }
#define CSR_BLOCK_KERNELS(T, S)             \
    CSR_BLOCK_LANES(T, S, u32, )            \
    CSR_BLOCK_LANES(T, S, u64, _o64)        \
    CSR_LANES_KERNEL(T, S, u32, )           \
    CSR_LANES_KERNEL(T, S, u64, _o64)

CSR_BLOCK_KERNELS(double, f64)
CSR_BLOCK_KERNELS(float, f32)
CSR_BLOCK_KERNELS(half_t, f16)
