// DIA kernel: one thread per row. data is diagonal-major: the slot of row r on diagonal i is
// data[i*m + r] (diagonal_sum in diagonals.cuh: 64-bit slot steps, one compare guards both
// edges of the matrix).
template <typename T>
__device__ __forceinline__ void dia_rows(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,
                                         const T* __restrict__ data, const T* __restrict__ x, T* __restrict__ y) {
    u32 r;
    if (!thread_row(m, r)) return;
    y[r] = diagonal_sum(r, n, offsets, 0, diagonals, data + r, m, x);
}

#define DIA_KERNELS(T, S)                                                                                   \
    extern "C" __global__ void dia_##S(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,       \
                                       const T* __restrict__ data, const T* __restrict__ x, T* __restrict__ y) { \
        dia_rows<T>(m, n, diagonals, offsets, data, x, y);                                                 \
    }

DIA_KERNELS(double, f64)
DIA_KERNELS(float, f32)
