// Utility kernels of the runtime: the copy kernel that measures the bandwidth roofline,
// and a fill kernel used to poison outputs before a run.

// 16-byte vectorised copy, grid-stride: n16 = number of 16-byte words.
extern "C" __global__ void copy_16b(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n16) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) {
        dst[i] = src[i];
    }
}

#define FILL(T, S)                                                                  \
    extern "C" __global__ void fill_##S(T* __restrict__ dst, T value, u64 n) {      \
        u64 stride = (u64)gridDim.x * blockDim.x;                                   \
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) \
            dst[i] = value;                                                         \
    }
FILL(double, f64)
FILL(float, f32)
FILL(half_t, f16)

// y = alpha·t + beta·y, the epilogue of y = α·A·x + β·y for formats whose kernels write
// A·x only, rounded as store_y rounds. beta = 0 does not read y (it may hold NaN); t == y
// is allowed (in place).
#define AXPBY(T, S)                                                                            \
    extern "C" __global__ void axpby_##S(u64 n, T alpha, const T* t, T beta, T* y) {          \
        u64 stride = (u64)gridDim.x * blockDim.x;                                              \
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)           \
            store_y<T, true>(y + i, to_acc(t[i]), alpha, beta);                                \
    }
AXPBY(double, f64)
AXPBY(float, f32)
AXPBY(half_t, f16)

// out = inᵀ for a rows × cols row-major `in` (out is cols × rows, row-major): a block of
// vectors between row-major and column-major storage (device.rs's block fallback). A thread
// takes one index of the longer side and loops over the shorter one (a block's k vectors): the
// accesses along the longer side are coalesced across a warp, the others cover one contiguous
// run per warp, and no element pays a 64-bit division and remainder.
#define TRANSPOSE(T, S)                                                                        \
    extern "C" __global__ void transpose_##S(u64 rows, u64 cols, const T* __restrict__ in,    \
                                              T* __restrict__ out) {                            \
        const u64 stride = (u64)gridDim.x * blockDim.x;                                        \
        const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;                          \
        if (rows >= cols) {                                                                    \
            for (u64 r = first; r < rows; r += stride)                                         \
                for (u64 c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];           \
        } else {                                                                               \
            for (u64 c = first; c < cols; c += stride)                                         \
                for (u64 r = 0; r < rows; ++r) out[c * rows + r] = in[r * cols + c];           \
        }                                                                                      \
    }
TRANSPOSE(double, f64)
TRANSPOSE(float, f32)
TRANSPOSE(half_t, f16)
