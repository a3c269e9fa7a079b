// HDC kernel: one thread per row. DIA part as in the DIA kernel (data[i*m + r], summed by
// diagonal_sum of diagonals.cuh), then the row's entries of the CSR part, skipped altogether
// when that part is empty (csr_entries == 0).
template <typename T>
__device__ __forceinline__ void hdc_rows(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,
                                         const T* __restrict__ data, u32 csr_entries, const u32* __restrict__ row_ptr,
                                         const u32* __restrict__ col, const T* __restrict__ val,
                                         const T* __restrict__ x, T* __restrict__ y) {
    u32 r;
    if (!thread_row(m, r)) return;
    T sum = diagonal_sum(r, n, offsets, 0, diagonals, data + r, m, x);
    if (csr_entries) {
        u32 end = row_ptr[r + 1];
        for (u32 k = row_ptr[r]; k < end; ++k) sum += val[k] * load_ro(x + col[k]);
    }
    y[r] = sum;
}

#define HDC_ARGS(T) u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets, const T* __restrict__ data, \
                    u32 csr_entries, const u32* __restrict__ row_ptr, const u32* __restrict__ col,            \
                    const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y

#define HDC_KERNELS(T, S)                                                                                   \
    extern "C" __global__ void hdc_##S(HDC_ARGS(T)) {                                                      \
        hdc_rows<T>(m, n, diagonals, offsets, data, csr_entries, row_ptr, col, val, x, y);                 \
    }

HDC_KERNELS(double, f64)
HDC_KERNELS(float, f32)
