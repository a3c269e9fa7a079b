// DIA kernel: one thread per row. data is diagonal-major: the slot of row r on diagonal i is
// data[i*m + r] (64-bit offsets: S*m may exceed 2^32). Rows and columns are below 2^31, so
// c = r + offset computed in 32-bit unsigned arithmetic is < n exactly when the column lies
// inside the matrix (a negative column wraps to >= 2^31 > n): one compare guards both edges.
template <typename T>
__device__ __forceinline__ void dia_rows(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,
                                         const T* __restrict__ data, const T* __restrict__ x, T* __restrict__ y) {
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= m) return;
    u32 r = (u32)g;
    const T* p = data + r;
    T sum = 0;
    for (u32 i = 0; i < diagonals; ++i, p += m) {
        u32 c = r + (u32)load_ro(offsets + i);  // the same offset for the whole warp: a broadcast
        if (c < n) sum += *p * load_ro(x + c);
    }
    y[r] = sum;
}

#define DIA_KERNELS(T, S)                                                                                   \
    extern "C" __global__ void dia_##S(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,       \
                                       const T* __restrict__ data, const T* __restrict__ x, T* __restrict__ y) { \
        dia_rows<T>(m, n, diagonals, offsets, data, x, y);                                                 \
    }

DIA_KERNELS(double, f64)
DIA_KERNELS(float, f32)
