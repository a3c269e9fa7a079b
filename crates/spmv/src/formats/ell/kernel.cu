// ELL kernel (also HYB's ELL part). col and val are column-major m x K arrays: slot t of
// row r at t*m + r (64-bit offsets: m*K may exceed 2^32). One thread per row; the thread
// stops at row_len[r] (<= K), so padding slots are never read.

template <typename T>
__device__ __forceinline__ void ell_rows(u32 m, const u32* __restrict__ row_len, const u32* __restrict__ col,
                                         const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    u32 len = row_len[row];
    T sum = T(0);
    u64 p = row;
#pragma unroll 4
    for (u32 t = 0; t < len; ++t, p += m) sum += val[p] * load_ro(x + col[p]);
    y[row] = sum;
}

#define ELL_KERNELS(T, S)                                                                              \
    extern "C" __global__ void ell_##S(u32 m, const u32* __restrict__ row_len, const u32* __restrict__ col, \
                                       const T* __restrict__ val, const T* __restrict__ x,            \
                                       T* __restrict__ y) {                                           \
        ell_rows<T>(m, row_len, col, val, x, y);                                                      \
    }

ELL_KERNELS(double, f64)
ELL_KERNELS(float, f32)
