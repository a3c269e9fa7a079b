// CSR for a block of k vectors, Y = alpha·A·X + beta·Y (full values and 32-bit columns):
// LANES consecutive threads per row (1: CSR-scalar), each lane accumulating a tile of
// BLOCK_TILE columns of X at once in registers, so the matrix is read once per tile, not once
// per vector. Every column's sum runs in csr_vector's order (strided over the row, then the
// group's shuffle tree), so column j of Y has the bits of the single product A·x_j. X and Y
// are both row-major (ROW: X[c·k + j], Y[r·k + j]) or both column-major (X[j·n + c]).

#define BLOCK_TILE 8

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
            const T* __restrict__ xc = ROW ? x + c * k + j0 : x + (u64)j0 * n + c;
#pragma unroll
            for (int t = 0; t < BLOCK_TILE; ++t) {
                if (t < kt) acc[t] += v * to_acc(load_ro(ROW ? xc + t : xc + (u64)t * n));
            }
        }
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) acc[t] = group_sum(acc[t], LANES);
        if (active && lane == 0) {
#pragma unroll
            for (int t = 0; t < BLOCK_TILE; ++t) {
                if (t < kt) store_y<T, true>(ROW ? y + row * k + j0 + t : y + (u64)(j0 + t) * m + row, acc[t], alpha, beta);
            }
        }
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
#define CSR_BLOCK_KERNELS(T, S)             \
    CSR_BLOCK_LANES(T, S, u32, )            \
    CSR_BLOCK_LANES(T, S, u64, _o64)

CSR_BLOCK_KERNELS(double, f64)
CSR_BLOCK_KERNELS(float, f32)
CSR_BLOCK_KERNELS(half_t, f16)
