// CSR kernels (f64, f32, and f16 summed in f32: acc_t in common.cuh). Device row offsets and column indices are 32-bit (checked on upload).
// Each kernel comes plain (y = A·x) and with `_ab` (y = alpha·A·x + beta·y, see
// store_y in common.cuh): the plain ones take no extra arguments or branches.

// CSR-scalar: one thread per row, serial loop over the row.
template <typename T, bool SCALED>
__device__ __forceinline__ void csr_scalar(u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y,
                                           T alpha, T beta) {
    u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    acc_t<T> sum = 0;
    u32 end = row_ptr[row + 1];
    for (u32 i = row_ptr[row]; i < end; ++i) sum += to_acc(val[i]) * to_acc(load_ro(x + col[i]));
    store_y<T, SCALED>(y + row, sum, alpha, beta);
}

// CSR-vector: LANES consecutive threads per row, strided loop, shuffle reduction.
// Groups past the last row stay alive (sum 0) so the full-warp shuffle mask is valid.
template <typename T, int LANES, bool SCALED>
__device__ __forceinline__ void csr_vector(u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y,
                                           T alpha, T beta) {
    u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    int lane = threadIdx.x % LANES;
    bool active = row < m;
    acc_t<T> sum = 0;
    if (active) {
        u32 end = row_ptr[row + 1];
        for (u32 i = row_ptr[row] + lane; i < end; i += LANES) sum += to_acc(val[i]) * to_acc(load_ro(x + col[i]));
    }
    sum = group_sum(sum, LANES);
    if (active && lane == 0) store_y<T, SCALED>(y + row, sum, alpha, beta);
}

#define CSR_ARGS(T) u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col, \
                    const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y
#define CSR_PASS m, row_ptr, col, val, x, y

// NAME_S (y = A·x) and NAME_ab_S (y = alpha·A·x + beta·y) from one device function; the
// variadic argument is the function with its template arguments but the last (SCALED).
#define CSR_KERNEL(NAME, S, T, ...)                                                                    \
    extern "C" __global__ void NAME##_##S(CSR_ARGS(T)) { __VA_ARGS__, false>(CSR_PASS, T(), T()); }   \
    extern "C" __global__ void NAME##_ab_##S(CSR_ARGS(T), T alpha, T beta) {                           \
        __VA_ARGS__, true>(CSR_PASS, alpha, beta);                                                     \
    }

#define CSR_KERNELS(T, S)                                                                              \
    CSR_KERNEL(csr_scalar, S, T, csr_scalar<T)                                                         \
    CSR_KERNEL(csr_vector_2, S, T, csr_vector<T, 2)                                                    \
    CSR_KERNEL(csr_vector_4, S, T, csr_vector<T, 4)                                                    \
    CSR_KERNEL(csr_vector_8, S, T, csr_vector<T, 8)                                                    \
    CSR_KERNEL(csr_vector_16, S, T, csr_vector<T, 16)                                                  \
    CSR_KERNEL(csr_vector_32, S, T, csr_vector<T, 32)

CSR_KERNELS(double, f64)
CSR_KERNELS(float, f32)
CSR_KERNELS(half_t, f16)
