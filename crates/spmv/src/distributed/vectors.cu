// Vector work of the distributed solvers (distributed/cg.rs), on one part's own entries.
// Dots are summed in f64 in a fixed order: per thread over its grid-stride elements (a grid
// of DIST_BLOCKS blocks of 256 threads), per block by a halving tree into partial[block];
// the host adds the blocks' sums in block order and the parts' in part order, so a solve
// gives the same bits run after run. Products and sums are rounded one by one (no FMA).

#define DIST_THREADS 256

#define DIST_KERNELS(T, S)                                                                                   \
    extern "C" __global__ void __launch_bounds__(DIST_THREADS)                                               \
        dist_dot_##S(u64 n, const T* __restrict__ a, const T* __restrict__ b, double* __restrict__ partial) { \
        __shared__ double s[DIST_THREADS];                                                                   \
        double sum = 0;                                                                                      \
        for (u64 i = blockIdx.x * (u64)DIST_THREADS + threadIdx.x; i < n; i += (u64)gridDim.x * DIST_THREADS) \
            sum = __dadd_rn(sum, __dmul_rn((double)a[i], (double)b[i]));                                     \
        s[threadIdx.x] = sum;                                                                                \
        __syncthreads();                                                                                     \
        for (int half = DIST_THREADS / 2; half > 0; half /= 2) {                                            \
            if (threadIdx.x < half) s[threadIdx.x] = __dadd_rn(s[threadIdx.x], s[threadIdx.x + half]);      \
            __syncthreads();                                                                                 \
        }                                                                                                    \
        if (threadIdx.x == 0) partial[blockIdx.x] = s[0];                                                    \
    }                                                                                                        \
    /* y += alpha·x */                                                                                       \
    extern "C" __global__ void dist_axpy_##S(u64 n, double alpha, const T* __restrict__ x, T* __restrict__ y) { \
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)  \
            y[i] = (T)__dadd_rn((double)y[i], __dmul_rn(alpha, (double)x[i]));                              \
    }                                                                                                        \
    /* y = x + beta·y */                                                                                     \
    extern "C" __global__ void dist_xpby_##S(u64 n, double beta, const T* __restrict__ x, T* __restrict__ y) { \
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)  \
            y[i] = (T)__dadd_rn((double)x[i], __dmul_rn(beta, (double)y[i]));                                \
    }

DIST_KERNELS(double, f64)
DIST_KERNELS(float, f32)
