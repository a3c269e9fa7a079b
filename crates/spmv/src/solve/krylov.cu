// Conjugate gradients' vector work on the GPU, between two products q = A·p (solve/krylov_gpu.rs).
// Every scalar lives on the device, in `s` (f64; the indices below): the host reads them only
// every check_every iterations. Per iteration:
//   kr_dot2      partial sums of p·q per block                      (after q = A·p)
//   kr_finish    PQ: pq, α = rz / pq; a breakdown (pq ≤ 0) or a non-finite value sets STATUS
//   kr_cg_update x += α·p, r −= α·q, z = M⁻¹·r, partial sums of r·z and r·r
//   kr_finish    RZ: β = rz' / rz, rz = rz', rr
//   kr_cg_direction p = z + β·p
// Dots are summed in f64 per thread (grid-stride, a grid fixed by n), per block by a fixed
// tree, and over the blocks by one block's fixed tree: the same bits in every run. Once STATUS
// is set the update kernels leave x, r and p alone, so x is the last iterate before it.

#define KR_BLOCK 256
#define KR_FINISH_BLOCK 1024

// Scalars in s[].
#define KR_RZ 0
#define KR_PQ 1
#define KR_ALPHA 2
#define KR_BETA 3
#define KR_RR 4
#define KR_STATUS 5  // 0 running, 1 p·A·p ≤ 0, 2 non-finite, 3 r·z = 0 with r ≠ 0, 4 r = 0 exactly
#define KR_STATUS_ITER 6

// The sums of u and v over a block of N threads (one of each per thread), by a fixed tree;
// thread 0 gets them.
template <int N>
__device__ __forceinline__ void kr_tree_sum(double& u, double& v) {
    __shared__ double s_u[N];
    __shared__ double s_v[N];
    const u32 t = threadIdx.x;
    s_u[t] = u;
    s_v[t] = v;
    __syncthreads();
    for (u32 half = N / 2; half > 0; half /= 2) {
        if (t < half) {
            s_u[t] += s_u[t + half];
            s_v[t] += s_v[t + half];
        }
        __syncthreads();
    }
    u = s_u[0];
    v = s_v[0];
}

// The block's sums of u and v into partial[2·block], partial[2·block + 1].
__device__ __forceinline__ void kr_block_store(double u, double v, double* __restrict__ partial) {
    kr_tree_sum<KR_BLOCK>(u, v);
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = u;
        partial[2 * blockIdx.x + 1] = v;
    }
}

template <typename T>
__device__ __forceinline__ void kr_dot2(u32 n, const T* __restrict__ a, const T* __restrict__ b, double* __restrict__ partial) {
    double u = 0.0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) u += (double)a[i] * (double)b[i];
    kr_block_store(u, 0.0, partial);
}

// One block: the two totals of `blocks` partial pairs, then the step `op` (0: PQ, 1: RZ).
__device__ __forceinline__ void kr_finish(u32 blocks, const double* __restrict__ partial, u32 op, u32 iteration,
                                          double* __restrict__ s) {
    const u32 t = threadIdx.x;
    double u = 0.0, v = 0.0;
    for (u32 b = t; b < blocks; b += KR_FINISH_BLOCK) {
        u += partial[2 * b];
        v += partial[2 * b + 1];
    }
    kr_tree_sum<KR_FINISH_BLOCK>(u, v);
    if (t != 0 || s[KR_STATUS] != 0.0) return;
    double status = 0.0;
    if (op == 0) {  // u = p·q
        s[KR_PQ] = u;
        if (!isfinite(u) || !isfinite(s[KR_RZ])) status = 2.0;
        else if (u <= 0.0) status = 1.0;
        else s[KR_ALPHA] = s[KR_RZ] / u;
    } else {  // u = r·z, v = r·r
        s[KR_RR] = v;
        if (!isfinite(u) || !isfinite(v)) status = 2.0;
        else if (u == 0.0) status = v == 0.0 ? 4.0 : 3.0;
        if (status == 0.0) {
            s[KR_BETA] = u / s[KR_RZ];
            s[KR_RZ] = u;
        }
    }
    if (status != 0.0) {
        s[KR_STATUS] = status;
        s[KR_STATUS_ITER] = iteration;
    }
}

// x += α·p, r −= α·q, z = M⁻¹·r (d = the inverse diagonal when use_d, else z = r), and the
// block sums of r·z and r·r.
template <typename T>
__device__ __forceinline__ void kr_cg_update(u32 n, const double* __restrict__ s, const T* __restrict__ p,
                                             const T* __restrict__ q, const T* __restrict__ d, u32 use_d, T* __restrict__ x,
                                             T* __restrict__ r, T* __restrict__ z, double* __restrict__ partial) {
    double rz = 0.0, rr = 0.0;
    if (s[KR_STATUS] == 0.0) {
        const double alpha = s[KR_ALPHA];
        const u64 stride = (u64)gridDim.x * blockDim.x;
        for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            x[i] = (T)((double)x[i] + alpha * (double)p[i]);
            const T ri = (T)((double)r[i] - alpha * (double)q[i]);
            r[i] = ri;
            const T zi = use_d ? (T)((double)ri * (double)d[i]) : ri;
            z[i] = zi;
            rz += (double)ri * (double)zi;
            rr += (double)ri * (double)ri;
        }
    }
    kr_block_store(rz, rr, partial);
}

// p = z + β·p.
template <typename T>
__device__ __forceinline__ void kr_cg_direction(u32 n, const double* __restrict__ s, const T* __restrict__ z, T* __restrict__ p) {
    if (s[KR_STATUS] != 0.0) return;
    const double beta = s[KR_BETA];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = (T)((double)z[i] + beta * (double)p[i]);
}

extern "C" __global__ void __launch_bounds__(KR_FINISH_BLOCK) kr_finish_kernel(u32 blocks, const double* partial, u32 op,
                                                                                u32 iteration, double* s) {
    kr_finish(blocks, partial, op, iteration, s);
}

#define KR_KERNELS(T, S)                                                                                                \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK) kr_dot2_##S(u32 n, const T* a, const T* b, double* partial) { \
        kr_dot2<T>(n, a, b, partial);                                                                                  \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                             \
        kr_cg_update_##S(u32 n, const double* s, const T* p, const T* q, const T* d, u32 use_d, T* x, T* r, T* z,      \
                         double* partial) {                                                                            \
        kr_cg_update<T>(n, s, p, q, d, use_d, x, r, z, partial);                                                       \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK) kr_cg_direction_##S(u32 n, const double* s, const T* z, T* p) { \
        kr_cg_direction<T>(n, s, z, p);                                                                                \
    }

KR_KERNELS(double, f64)
KR_KERNELS(float, f32)
