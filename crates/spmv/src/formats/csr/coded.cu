// CSR-vector over coded values and/or 16-bit column deltas (formats/values):
// csr_vector_LANES{codec}{_d16}_S, plain only (the handle applies alpha and beta). A module of
// its own, so that matrices stored in full never compile it. 32-bit row offsets only.

#define CSR_CODED_ARGS(T) u32 m, const u32* __restrict__ row_ptr, const void* __restrict__ cols,               \
                          const u32* __restrict__ row_base, const void* __restrict__ codes, const T* __restrict__ table, \
                          const T* __restrict__ x, T* __restrict__ y

#define CSR_VECTOR_CODED(LANES, S, T, NAME, V, C)                                                  \
    extern "C" __global__ void csr_vector_##LANES##NAME##_##S(CSR_CODED_ARGS(T)) {                  \
        csr_vector<T, u32, LANES, V, C, false>(m, row_ptr, cols, row_base, codes, table, x, y, T(), T()); \
    }
#define CSR_VECTOR_CODED_LANES(S, T, NAME, V, C) \
    CSR_VECTOR_CODED(2, S, T, NAME, V, C)        \
    CSR_VECTOR_CODED(4, S, T, NAME, V, C)        \
    CSR_VECTOR_CODED(8, S, T, NAME, V, C)        \
    CSR_VECTOR_CODED(16, S, T, NAME, V, C)       \
    CSR_VECTOR_CODED(32, S, T, NAME, V, C)
// Every coded value codec with full and with 16-bit columns.
#define CSR_CODED_BOTH(S, T, CODEC, V)                      \
    CSR_VECTOR_CODED_LANES(S, T, CODEC, V, ColsFull)        \
    CSR_VECTOR_CODED_LANES(S, T, CODEC##_d16, V, ColsDelta16)
#define CSR_CODED_f64(CODEC, V) CSR_CODED_BOTH(f64, double, CODEC, V)
#define CSR_CODED_f32(CODEC, V) CSR_CODED_BOTH(f32, float, CODEC, V)
#define CSR_CODED_f16(CODEC, V) CSR_CODED_BOTH(f16, half_t, CODEC, V)

VALUES_CODED_f64(CSR_CODED_f64)
VALUES_CODED_f32(CSR_CODED_f32)
VALUES_CODED_f16(CSR_CODED_f16)
// Full values with 16-bit columns.
CSR_VECTOR_CODED_LANES(f64, double, _d16, ValuesFull<double>, ColsDelta16)
CSR_VECTOR_CODED_LANES(f32, float, _d16, ValuesFull<float>, ColsDelta16)
CSR_VECTOR_CODED_LANES(f16, half_t, _d16, ValuesFull<half_t>, ColsDelta16)
