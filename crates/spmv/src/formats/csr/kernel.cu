// CSR kernels (f64, f32, and f16 summed in f32: acc_t in common.cuh). Device row offsets and column indices are 32-bit (checked on upload).
// Values come as (codes, table) read through a loader of formats/values/values.cuh: the
// values themselves for the plain kernels, coded ones for csr_vector_LANES{codec}_S.
// Each kernel comes plain (y = A·x) and with `_ab` (y = alpha·A·x + beta·y, see
// store_y in common.cuh): the plain ones take no extra arguments or branches.

// CSR-scalar: one thread per row, serial loop over the row.
template <typename T, bool SCALED>
__device__ __forceinline__ void csr_scalar(u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const void* __restrict__ codes, const T* __restrict__ table,
                                           const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const ValuesFull<T> val(codes, table);
    u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    acc_t<T> sum = 0;
    u32 end = row_ptr[row + 1];
    for (u32 i = row_ptr[row]; i < end; ++i) sum += val.get(i) * to_acc(load_ro(x + col[i]));
    store_y<T, SCALED>(y + row, sum, alpha, beta);
}

// CSR-vector: LANES consecutive threads per row, strided loop, shuffle reduction.
// Groups past the last row stay alive (sum 0) so the full-warp shuffle mask is valid.
// V: the loader of the values' codec (formats/values/values.cuh).
template <typename T, int LANES, typename V, bool SCALED>
__device__ __forceinline__ void csr_vector(u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const void* __restrict__ codes, const T* __restrict__ table,
                                           const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const V val(codes, table);
    u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    int lane = threadIdx.x % LANES;
    bool active = row < m;
    acc_t<T> sum = 0;
    if (active) {
        u32 end = row_ptr[row + 1];
        for (u32 i = row_ptr[row] + lane; i < end; i += LANES) sum += val.get(i) * to_acc(load_ro(x + col[i]));
    }
    sum = group_sum(sum, LANES);
    if (active && lane == 0) store_y<T, SCALED>(y + row, sum, alpha, beta);
}

#define CSR_ARGS(T) u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col, \
                    const void* __restrict__ codes, const T* __restrict__ table, const T* __restrict__ x, T* __restrict__ y
#define CSR_PASS m, row_ptr, col, codes, table, x, y

// NAME_S (y = A·x) and NAME_ab_S (y = alpha·A·x + beta·y) from one device function; the
// variadic argument is the function with its template arguments but the last (SCALED).
#define CSR_KERNEL(NAME, S, T, ...)                                                                    \
    extern "C" __global__ void NAME##_##S(CSR_ARGS(T)) { __VA_ARGS__, false>(CSR_PASS, T(), T()); }   \
    extern "C" __global__ void NAME##_ab_##S(CSR_ARGS(T), T alpha, T beta) {                           \
        __VA_ARGS__, true>(CSR_PASS, alpha, beta);                                                     \
    }

// CSR-vector over coded values: csr_vector_LANES{codec}_S, plain only (the handle applies
// alpha and beta). The full codec's kernels are the ones above.
#define CSR_VECTOR_CODED(LANES, S, T, CODEC, LOADER)                                          \
    extern "C" __global__ void csr_vector_##LANES##CODEC##_##S(CSR_ARGS(T)) {                  \
        csr_vector<T, LANES, LOADER, false>(CSR_PASS, T(), T());                               \
    }
#define CSR_VECTOR_CODED_ALL_LANES(CODEC, LOADER, S, T) \
    CSR_VECTOR_CODED(2, S, T, CODEC, LOADER)            \
    CSR_VECTOR_CODED(4, S, T, CODEC, LOADER)            \
    CSR_VECTOR_CODED(8, S, T, CODEC, LOADER)            \
    CSR_VECTOR_CODED(16, S, T, CODEC, LOADER)           \
    CSR_VECTOR_CODED(32, S, T, CODEC, LOADER)
#define CSR_CODED_f64(CODEC, LOADER) CSR_VECTOR_CODED_ALL_LANES(CODEC, LOADER, f64, double)
#define CSR_CODED_f32(CODEC, LOADER) CSR_VECTOR_CODED_ALL_LANES(CODEC, LOADER, f32, float)
#define CSR_CODED_f16(CODEC, LOADER) CSR_VECTOR_CODED_ALL_LANES(CODEC, LOADER, f16, half_t)

#define CSR_KERNELS(T, S)                                                                              \
    CSR_KERNEL(csr_scalar, S, T, csr_scalar<T)                                                         \
    CSR_KERNEL(csr_vector_2, S, T, csr_vector<T, 2, ValuesFull<T>)                                     \
    CSR_KERNEL(csr_vector_4, S, T, csr_vector<T, 4, ValuesFull<T>)                                     \
    CSR_KERNEL(csr_vector_8, S, T, csr_vector<T, 8, ValuesFull<T>)                                     \
    CSR_KERNEL(csr_vector_16, S, T, csr_vector<T, 16, ValuesFull<T>)                                   \
    CSR_KERNEL(csr_vector_32, S, T, csr_vector<T, 32, ValuesFull<T>)

CSR_KERNELS(double, f64)
CSR_KERNELS(float, f32)
CSR_KERNELS(half_t, f16)
VALUES_CODED_f64(CSR_CODED_f64)
VALUES_CODED_f32(CSR_CODED_f32)
VALUES_CODED_f16(CSR_CODED_f16)
