// CSR kernels. Device row offsets and column indices are 32-bit (checked on upload).

// CSR-scalar: one thread per row, serial loop over the row.
template <typename T>
__device__ __forceinline__ void csr_scalar(u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    T sum = 0;
    u32 end = row_ptr[row + 1];
    for (u32 i = row_ptr[row]; i < end; ++i) sum += val[i] * load_ro(x + col[i]);
    y[row] = sum;
}

// CSR-vector: LANES consecutive threads per row, strided loop, shuffle reduction.
// Groups past the last row stay alive (sum 0) so the full-warp shuffle mask is valid.
template <typename T, int LANES>
__device__ __forceinline__ void csr_vector(u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    int lane = threadIdx.x % LANES;
    bool active = row < m;
    T sum = 0;
    if (active) {
        u32 end = row_ptr[row + 1];
        for (u32 i = row_ptr[row] + lane; i < end; i += LANES) sum += val[i] * load_ro(x + col[i]);
    }
    sum = group_sum(sum, LANES);
    if (active && lane == 0) y[row] = sum;
}

#define CSR_ARGS(T) u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ col, \
                    const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y
#define CSR_PASS m, row_ptr, col, val, x, y

#define CSR_KERNELS(T, S)                                                                              \
    extern "C" __global__ void csr_scalar_##S(CSR_ARGS(T)) { csr_scalar<T>(CSR_PASS); }               \
    extern "C" __global__ void csr_vector_2_##S(CSR_ARGS(T)) { csr_vector<T, 2>(CSR_PASS); }          \
    extern "C" __global__ void csr_vector_4_##S(CSR_ARGS(T)) { csr_vector<T, 4>(CSR_PASS); }          \
    extern "C" __global__ void csr_vector_8_##S(CSR_ARGS(T)) { csr_vector<T, 8>(CSR_PASS); }          \
    extern "C" __global__ void csr_vector_16_##S(CSR_ARGS(T)) { csr_vector<T, 16>(CSR_PASS); }        \
    extern "C" __global__ void csr_vector_32_##S(CSR_ARGS(T)) { csr_vector<T, 32>(CSR_PASS); }

CSR_KERNELS(double, f64)
CSR_KERNELS(float, f32)
