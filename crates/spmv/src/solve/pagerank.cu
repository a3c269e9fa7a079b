// PageRank's vector work on the GPU, between two products y = Gᵀ·r (see solve/pagerank.rs):
//   pagerank_update: r_next[i] = α·(y[i] + d/n) + (1 − α), in place in y, where d is the
//                    dangling nodes' rank sum (a device scalar, never read by the host); each
//                    block also writes its max |r_next − r| and its sum of r_next over
//                    dangling nodes.
//   pagerank_finish: one block reduces the block values into the next d and the residual
//                    max |r_next − r| (the only value the host reads, one scalar per check).
// Both reductions run in a fixed order for a given n (fixed grid, fixed trees): the solver's
// own arithmetic is deterministic; only the SpMV format can make a run differ from another.

// Threads per block of pagerank_update and pagerank_finish (powers of two, as the trees
// need); the launch code uses the same values.
#define PR_UPDATE_BLOCK 256
#define PR_FINISH_BLOCK 1024

template <typename T>
__device__ __forceinline__ T pr_infinity() {
    return (T)__longlong_as_double(0x7ff0000000000000ULL);
}

// |a − b|, with NaN turned into +∞ so that a NaN rank can never look converged (fmax
// ignores NaN operands).
template <typename T>
__device__ __forceinline__ T pr_abs_diff(T a, T b) {
    T d = fabs(a - b);
    return d == d ? d : pr_infinity<T>();
}

template <typename T>
__device__ __forceinline__ void pagerank_update(u32 n, T alpha, T teleport, T inv_n, const T* __restrict__ dangling_sum,
                                                const unsigned char* __restrict__ dangling, const T* __restrict__ rank,
                                                T* __restrict__ next, T* __restrict__ block_max_diff,
                                                T* __restrict__ block_dangling_sum) {
    __shared__ T s_max[PR_UPDATE_BLOCK];
    __shared__ T s_sum[PR_UPDATE_BLOCK];
    const T share = dangling_sum[0] * inv_n;
    T max_diff = 0, dangling_part = 0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const T v = alpha * (next[i] + share) + teleport;
        next[i] = v;
        max_diff = fmax(max_diff, pr_abs_diff(v, rank[i]));
        if (dangling[i]) dangling_part += v;
    }
    tree_reduce<PR_UPDATE_BLOCK>(s_max, s_sum, max_diff, dangling_part, tree_max(), tree_add());
    if (threadIdx.x == 0) {
        block_max_diff[blockIdx.x] = max_diff;
        block_dangling_sum[blockIdx.x] = dangling_part;
    }
}

template <typename T>
__device__ __forceinline__ void pagerank_finish(u32 blocks, const T* __restrict__ block_max_diff,
                                                const T* __restrict__ block_dangling_sum, T* __restrict__ dangling_sum,
                                                T* __restrict__ max_diff) {
    __shared__ T s_max[PR_FINISH_BLOCK];
    __shared__ T s_sum[PR_FINISH_BLOCK];
    T m = 0, s = 0;
    for (u32 b = threadIdx.x; b < blocks; b += PR_FINISH_BLOCK) {
        m = fmax(m, block_max_diff[b]);
        s += block_dangling_sum[b];
    }
    tree_reduce<PR_FINISH_BLOCK>(s_max, s_sum, m, s, tree_max(), tree_add());
    if (threadIdx.x == 0) {
        dangling_sum[0] = s;
        max_diff[0] = m;
    }
}

#define PAGERANK_KERNELS(T, S)                                                                                     \
    extern "C" __global__ void __launch_bounds__(PR_UPDATE_BLOCK) pagerank_update_##S(                              \
        u32 n, T alpha, T teleport, T inv_n, const T* __restrict__ dangling_sum,                                    \
        const unsigned char* __restrict__ dangling, const T* __restrict__ rank, T* __restrict__ next,               \
        T* __restrict__ block_max_diff, T* __restrict__ block_dangling_sum) {                                       \
        pagerank_update<T>(n, alpha, teleport, inv_n, dangling_sum, dangling, rank, next, block_max_diff,           \
                           block_dangling_sum);                                                                     \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(PR_FINISH_BLOCK) pagerank_finish_##S(                              \
        u32 blocks, const T* __restrict__ block_max_diff, const T* __restrict__ block_dangling_sum,                  \
        T* __restrict__ dangling_sum, T* __restrict__ max_diff) {                                                   \
        pagerank_finish<T>(blocks, block_max_diff, block_dangling_sum, dangling_sum, max_diff);                     \
    }

PAGERANK_KERNELS(double, f64)
PAGERANK_KERNELS(float, f32)
