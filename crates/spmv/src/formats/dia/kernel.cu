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

// `unused`: the table argument every coded kernel takes (one argument list for all codecs).
#define DIA_KERNELS(T, S)                                                                                   \
    extern "C" __global__ void dia_##S(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,       \
                                       const T* __restrict__ data, const T* __restrict__ unused,            \
                                       const T* __restrict__ x, T* __restrict__ y) {                        \
        dia_rows<T>(m, n, diagonals, offsets, data, x, y);                                                 \
    }

// Over coded values (formats/values): dia{codec}_S, the same additions in the same order as
// diagonal_sum, the value of slot i·m + r decoded by the loader V.
template <typename T, typename V>
__device__ __forceinline__ void dia_rows_coded(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,
                                               const void* __restrict__ codes, const T* __restrict__ table,
                                               const T* __restrict__ x, T* __restrict__ y) {
    u32 r;
    if (!thread_row(m, r)) return;
    const V val(codes, table);
    T sum = 0;
    u64 slot = r;
    for (u32 i = 0; i < diagonals; ++i, slot += m) {
        u32 c = r + (u32)load_ro(offsets + i);
        if (c < n) sum += val.get(slot) * load_ro(x + c);
    }
    y[r] = sum;
}

#define DIA_CODED(T, S, CODEC, V)                                                                            \
    extern "C" __global__ void dia##CODEC##_##S(u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets, \
                                                const void* __restrict__ codes, const T* __restrict__ table,   \
                                                const T* __restrict__ x, T* __restrict__ y) {                  \
        dia_rows_coded<T, V>(m, n, diagonals, offsets, codes, table, x, y);                                   \
    }
#define DIA_CODED_f64(CODEC, V) DIA_CODED(double, f64, CODEC, V)
#define DIA_CODED_f32(CODEC, V) DIA_CODED(float, f32, CODEC, V)

DIA_KERNELS(double, f64)
DIA_KERNELS(float, f32)
VALUES_CODED_f64(DIA_CODED_f64)
VALUES_CODED_f32(DIA_CODED_f32)
