// CSR kernels (f64, f32, and f16 summed in f32: acc_t in common.cuh). Column indices are 32-bit;
// row offsets O are 32-bit (below 2^31 entries) or 64-bit (the `_o64` kernels, formats/offsets.rs).
// Values come as (codes, table) read through a loader of formats/values/values.cuh (here the
// values themselves; coded values and 16-bit columns are in coded.cu).
// Each kernel comes plain (y = A·x) and with `_ab` (y = alpha·A·x + beta·y, see
// store_y in common.cuh): the plain ones take no extra arguments or branches.

// CSR-scalar: one thread per row, serial loop over the row.
template <typename T, typename O, bool SCALED>
__device__ __forceinline__ void csr_scalar(u32 m, const O* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const void* __restrict__ codes, const T* __restrict__ table,
                                           const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const ValuesFull<T> val(codes, table);
    u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    acc_t<T> sum = 0;
    O end = row_ptr[row + 1];
    for (O i = row_ptr[row]; i < end; ++i) sum += val.get(i) * to_acc(load_ro(x + col[i]));
    store_y<T, SCALED>(y + row, sum, alpha, beta);
}

#define CSR_ARGS(T, O) u32 m, const O* __restrict__ row_ptr, const u32* __restrict__ col, \
                    const void* __restrict__ codes, const T* __restrict__ table, const T* __restrict__ x, T* __restrict__ y
#define CSR_PASS m, row_ptr, col, codes, table, x, y

// NAME_S (y = A·x) and NAME_ab_S (y = alpha·A·x + beta·y) from one device function; the
// variadic argument is the function with its template arguments but the last (SCALED).
#define CSR_KERNEL(NAME, S, T, O, ...)                                                                 \
    extern "C" __global__ void NAME##_##S(CSR_ARGS(T, O)) { __VA_ARGS__, false>(CSR_PASS, T(), T()); } \
    extern "C" __global__ void NAME##_ab_##S(CSR_ARGS(T, O), T alpha, T beta) {                        \
        __VA_ARGS__, true>(CSR_PASS, alpha, beta);                                                     \
    }

// CSR-vector over full values and columns, in CSR_ARGS (no row bases).
template <typename T, typename O, int LANES, bool SCALED>
__device__ __forceinline__ void csr_vector_full(CSR_ARGS(T, O), T alpha, T beta) {
    csr_vector<T, O, LANES, ValuesFull<T>, ColsFull, SCALED>(m, row_ptr, col, nullptr, codes, table, x, y, alpha, beta);
}

// Every kernel with offsets of width O, named NAME{SUFFIX}_S.
#define CSR_KERNELS_OF(T, S, O, SUFFIX)                                                                \
    CSR_KERNEL(csr_scalar##SUFFIX, S, T, O, csr_scalar<T, O)                                           \
    CSR_KERNEL(csr_vector_2##SUFFIX, S, T, O, csr_vector_full<T, O, 2)                                 \
    CSR_KERNEL(csr_vector_4##SUFFIX, S, T, O, csr_vector_full<T, O, 4)                                 \
    CSR_KERNEL(csr_vector_8##SUFFIX, S, T, O, csr_vector_full<T, O, 8)                                 \
    CSR_KERNEL(csr_vector_16##SUFFIX, S, T, O, csr_vector_full<T, O, 16)                               \
    CSR_KERNEL(csr_vector_32##SUFFIX, S, T, O, csr_vector_full<T, O, 32)
#define CSR_KERNELS(T, S)          \
    CSR_KERNELS_OF(T, S, u32, )    \
    CSR_KERNELS_OF(T, S, u64, _o64)

CSR_KERNELS(double, f64)
CSR_KERNELS(float, f32)
CSR_KERNELS(half_t, f16)
