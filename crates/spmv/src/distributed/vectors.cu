// Vector work of the distributed solvers (distributed/cg.rs), on one part's own entries.
// Dots are summed in f64 in a fixed order: per thread over its grid-stride elements (a grid
// of DIST_BLOCKS blocks of 256 threads), per block by a halving tree into partial[block];
// the host adds the blocks' sums in block order and the parts' in part order, so a solve
// gives the same bits run after run. Products and sums are rounded one by one (no FMA).

#define DIST_THREADS 256

// A thread's sum into partial[block] by the halving tree (every thread of the block calls it).
__device__ void dist_block_sum(double sum, double* __restrict__ partial) {
    __shared__ double s[DIST_THREADS];
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int half = DIST_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) s[threadIdx.x] = __dadd_rn(s[threadIdx.x], s[threadIdx.x + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

#define DIST_FOR_EACH(i, n) for (u64 i = blockIdx.x * (u64)DIST_THREADS + threadIdx.x; i < n; i += (u64)gridDim.x * DIST_THREADS)

#define DIST_KERNELS(T, S)                                                                                   \
    extern "C" __global__ void __launch_bounds__(DIST_THREADS)                                               \
        dist_dot_##S(u64 n, const T* __restrict__ a, const T* __restrict__ b, double* __restrict__ partial) { \
        double sum = 0;                                                                                      \
        DIST_FOR_EACH(i, n) sum = __dadd_rn(sum, __dmul_rn((double)a[i], (double)b[i]));                     \
        dist_block_sum(sum, partial);                                                                        \
    }                                                                                                        \
    /* CG's update in one pass: x += alpha·p, r -= alpha·q, and r·r summed like dist_dot (the */           \
    /* same bits as the three separately, with one read of r fewer) */                                      \
    extern "C" __global__ void __launch_bounds__(DIST_THREADS) dist_cg_update_##S(                          \
        u64 n, double alpha, const T* __restrict__ p, const T* __restrict__ q, T* __restrict__ x, T* __restrict__ r, \
        double* __restrict__ partial) {                                                                      \
        double sum = 0;                                                                                      \
        DIST_FOR_EACH(i, n) {                                                                                \
            x[i] = (T)__dadd_rn((double)x[i], __dmul_rn(alpha, (double)p[i]));                              \
            const T ri = (T)__dadd_rn((double)r[i], __dmul_rn(-alpha, (double)q[i]));                       \
            r[i] = ri;                                                                                       \
            sum = __dadd_rn(sum, __dmul_rn((double)ri, (double)ri));                                         \
        }                                                                                                    \
        dist_block_sum(sum, partial);                                                                        \
    }                                                                                                        \
    /* y = x + beta·y */                                                                                     \
    extern "C" __global__ void dist_xpby_##S(u64 n, double beta, const T* __restrict__ x, T* __restrict__ y) { \
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)  \
            y[i] = (T)__dadd_rn((double)x[i], __dmul_rn(beta, (double)y[i]));                                \
    }

DIST_KERNELS(double, f64)
DIST_KERNELS(float, f32)
