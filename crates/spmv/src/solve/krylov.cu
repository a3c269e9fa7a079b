// The Krylov solvers' vector work on the GPU, between the products of the format's own
// kernels (solve/krylov_gpu.rs). Every scalar lives on the device, in `s` (f64; indices
// below): the host reads them only every check_every iterations, and the convergence test
// runs here, every iteration, so the iteration count does not depend on check_every.
//
// Every kernel that sums ends with a finishing step (kr_finish, run by the block that
// finishes last): the totals, then the scalar step `op`. Conjugate gradients, per iteration
// (q = A·p first):
//   kr_dots         p·q;  PQ: α = rz / pq; pq ≤ 0 (not SPD) or a non-finite value stops
//   kr_cg_update    x += α·p, r −= α·q, z = M⁻¹·r, r·z and r·r;  RZ: converged when
//                   r·r ≤ tol²·‖b‖²; β = rz' / rz
//   kr_cg_direction p = z + β·p
// BiCGSTAB (right-preconditioned), per iteration:
//   kr_bi_direction p = r + β·(p − ω·v), p̂ = M⁻¹·p;  then v = A·p̂
//   kr_dots         r̂·v;  RV: α = ρ / r̂·v
//   kr_bi_s         s = r − α·v (in r), ŝ = M⁻¹·s, s·s;  S: s·s small enough → the
//                   iteration ends with x += α·p̂ (ω = 0);  then t = A·ŝ
//   kr_dots         t·t, t·s;  OMEGA: ω = t·s / t·t
//   kr_bi_update    x += α·p̂ + ω·ŝ, r = s − ω·t, r̂·r and r·r;  RHO: convergence,
//                   breakdowns, β = (ρ'/ρ)·(α/ω)
// Sums are in f64 in a fixed order (solve/krylov.rs's `device_order_sum` is the same order
// on the host): per thread over its grid-stride elements (a grid fixed by n), per block by a
// halving tree, then the block sums, thread t taking blocks t, t + 256, …, and a halving
// tree. Products and sums are rounded one by one (__dmul_rn, __dadd_rn: never fused into an
// FMA), as the host computes them, so given the same products the host solver gives the
// same bits. Once STATUS is set every kernel leaves the vectors alone, so x is the iterate at
// the stop, and launches queued past it (up to the next read-back) change nothing.

#define KR_BLOCK 256

// Scalars in s[], shared by both methods.
#define KR_STATUS 0       // one of KR_ST_*
#define KR_STATUS_ITER 1  // the iteration that set it
#define KR_ITER 2         // iterations completed
#define KR_TOL2 3         // (tol·‖b‖)²
#define KR_RR 4           // r·r of the last test
#define KR_VALUE 5        // the quantity a breakdown reports (p·A·p)
// Conjugate gradients.
#define KR_CG_RZ 6
#define KR_CG_ALPHA 7
#define KR_CG_BETA 8
// BiCGSTAB.
#define KR_BI_RHO 6
#define KR_BI_ALPHA 7
#define KR_BI_OMEGA 8
#define KR_BI_BETA 9
#define KR_BI_S_CONVERGED 10

// STATUS values (solve/krylov_gpu.rs names them).
#define KR_ST_RUNNING 0
#define KR_ST_CONVERGED 1
#define KR_ST_NON_FINITE 2
#define KR_ST_NOT_SPD 3     // CG: p·A·p ≤ 0
#define KR_ST_RZ_ZERO 4     // CG: r·M⁻¹r = 0 with r ≠ 0
#define KR_ST_RHO_ZERO 5    // BiCGSTAB: ρ = r̂·r = 0
#define KR_ST_RV_ZERO 6     // BiCGSTAB: r̂·v = 0
#define KR_ST_TT_ZERO 7     // BiCGSTAB: t·t = 0
#define KR_ST_OMEGA_ZERO 8  // BiCGSTAB: ω = 0

// The finishing steps (kr_step's `op`).
#define KR_OP_CG_PQ 0
#define KR_OP_CG_RZ 1
#define KR_OP_BI_RV 2
#define KR_OP_BI_S 3
#define KR_OP_BI_OMEGA 4
#define KR_OP_BI_RHO 5
#define KR_OP_TOTALS 6  // only store the totals (the step runs on the host: distributed solves)
#define KR_U 11
#define KR_V 12

// The sums of u and v over a block of N threads (one of each per thread), by a fixed tree
// (tree.cuh); thread 0 gets them.
template <int N>
__device__ __forceinline__ void kr_tree_sum(double& u, double& v) {
    __shared__ double s_u[N];
    __shared__ double s_v[N];
    tree_reduce<N>(s_u, s_v, u, v, tree_add(), tree_add());
}

__device__ __forceinline__ double kr_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double kr_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double kr_sub(double a, double b) { return __dsub_rn(a, b); }

__device__ __forceinline__ bool kr_running(const double* __restrict__ s) { return s[KR_STATUS] == KR_ST_RUNNING; }

#define KR_FOR_EACH(i, n) \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x, stride_ = (u64)gridDim.x * blockDim.x; i < (n); i += stride_)

__device__ __forceinline__ void kr_stop(double* __restrict__ s, double status, double iteration) {
    s[KR_STATUS] = status;
    s[KR_STATUS_ITER] = iteration;
}

// The scalar step `op` on the totals u, v (thread 0 of the last block).
__device__ __forceinline__ void kr_step(double u, double v, u32 op, double* __restrict__ s) {
    if (!kr_running(s)) return;
    if (op == KR_OP_TOTALS) {
        s[KR_U] = u;
        s[KR_V] = v;
        return;
    }
    const double k = s[KR_ITER] + 1.0;  // this iteration
    switch (op) {
        case KR_OP_CG_PQ:  // u = p·q
            s[KR_VALUE] = u;
            if (!isfinite(u) || !isfinite(s[KR_CG_RZ])) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (u <= 0.0) kr_stop(s, KR_ST_NOT_SPD, k);
            else s[KR_CG_ALPHA] = s[KR_CG_RZ] / u;
            break;
        case KR_OP_CG_RZ:  // u = r·z, v = r·r
            s[KR_ITER] = k;
            s[KR_RR] = v;
            if (!isfinite(u) || !isfinite(v)) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (v <= s[KR_TOL2]) kr_stop(s, KR_ST_CONVERGED, k);
            else if (u == 0.0) kr_stop(s, KR_ST_RZ_ZERO, k);
            else {
                s[KR_CG_BETA] = u / s[KR_CG_RZ];
                s[KR_CG_RZ] = u;
            }
            break;
        case KR_OP_BI_RV:  // u = r̂·v
            if (!isfinite(u)) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (u == 0.0) kr_stop(s, KR_ST_RV_ZERO, k);
            else s[KR_BI_ALPHA] = s[KR_BI_RHO] / u;
            break;
        case KR_OP_BI_S:  // u = s·s
            if (!isfinite(u)) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (u <= s[KR_TOL2]) {
                s[KR_BI_S_CONVERGED] = 1.0;
                s[KR_RR] = u;
            }
            break;
        case KR_OP_BI_OMEGA:  // u = t·t, v = t·s
            if (s[KR_BI_S_CONVERGED] != 0.0) s[KR_BI_OMEGA] = 0.0;
            else if (!isfinite(u) || !isfinite(v)) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (u == 0.0) kr_stop(s, KR_ST_TT_ZERO, k);
            else s[KR_BI_OMEGA] = v / u;
            break;
        case KR_OP_BI_RHO:  // u = r̂·r, v = r·r
            s[KR_ITER] = k;
            if (s[KR_BI_S_CONVERGED] != 0.0) {
                kr_stop(s, KR_ST_CONVERGED, k);
                break;
            }
            s[KR_RR] = v;
            if (!isfinite(u) || !isfinite(v)) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (v <= s[KR_TOL2]) kr_stop(s, KR_ST_CONVERGED, k);
            else if (s[KR_BI_OMEGA] == 0.0) kr_stop(s, KR_ST_OMEGA_ZERO, k);
            else if (u == 0.0) kr_stop(s, KR_ST_RHO_ZERO, k);
            else {
                s[KR_BI_BETA] = (u / s[KR_BI_RHO]) * (s[KR_BI_ALPHA] / s[KR_BI_OMEGA]);
                s[KR_BI_RHO] = u;
            }
            break;
    }
}

// The block's sums u and v into partial[2·block], partial[2·block + 1]; the block that
// stores last then sums all blocks' (in block order, as the host does) and runs step `op`,
// and resets the counter for the next kernel.
__device__ __forceinline__ void kr_reduce(double u, double v, double* __restrict__ partial, u32* __restrict__ counter, u32 op,
                                          double* __restrict__ s) {
    kr_tree_sum<KR_BLOCK>(u, v);
    __shared__ bool last;
    const u32 t = threadIdx.x;
    if (t == 0) {
        partial[2 * blockIdx.x] = u;
        partial[2 * blockIdx.x + 1] = v;
        __threadfence();  // the partial sums are visible before the count says so
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    u = 0.0;
    v = 0.0;
    for (u32 b = t; b < gridDim.x; b += KR_BLOCK) {  // __ldcg: from L2, where the other blocks wrote
        u = kr_add(u, __ldcg(&partial[2 * b]));
        v = kr_add(v, __ldcg(&partial[2 * b + 1]));
    }
    kr_tree_sum<KR_BLOCK>(u, v);
    if (t == 0) {
        kr_step(u, v, op, s);
        *counter = 0;
    }
}

// a·b and a·c, then step `op`.
template <typename T>
__device__ __forceinline__ void kr_dots(u32 n, double* __restrict__ s, const T* __restrict__ a, const T* __restrict__ b,
                                        const T* __restrict__ c, double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    double u = 0.0, v = 0.0;
    if (kr_running(s)) {
        KR_FOR_EACH(i, n) {
            const double ai = (double)a[i];
            u = kr_add(u, kr_mul(ai, (double)b[i]));
            v = kr_add(v, kr_mul(ai, (double)c[i]));
        }
    }
    kr_reduce(u, v, partial, counter, op, s);
}

// CG: x += α·p, r −= α·q, z = M⁻¹·r (only with a preconditioner: d is the inverse diagonal;
// without one z is r), r·z and r·r, then step RZ.
template <typename T>
__device__ __forceinline__ void kr_cg_update(u32 n, double* __restrict__ s, const T* __restrict__ p, const T* __restrict__ q,
                                             const T* __restrict__ d, u32 use_d, T* __restrict__ x, T* __restrict__ r,
                                             T* __restrict__ z, double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    double rz = 0.0, rr = 0.0;
    if (kr_running(s)) {
        const double alpha = s[KR_CG_ALPHA];
        KR_FOR_EACH(i, n) {
            x[i] = (T)kr_add((double)x[i], kr_mul(alpha, (double)p[i]));
            const T ri = (T)kr_sub((double)r[i], kr_mul(alpha, (double)q[i]));
            r[i] = ri;
            T zi = ri;
            if (use_d) {
                zi = (T)kr_mul((double)ri, (double)d[i]);
                z[i] = zi;
            }
            rz = kr_add(rz, kr_mul((double)ri, (double)zi));
            rr = kr_add(rr, kr_mul((double)ri, (double)ri));
        }
    }
    kr_reduce(rz, rr, partial, counter, op, s);  // KR_OP_CG_RZ, or KR_OP_TOTALS
}

// CG: p = z + β·p.
template <typename T>
__device__ __forceinline__ void kr_cg_direction(u32 n, const double* __restrict__ s, const T* __restrict__ z, T* __restrict__ p) {
    if (!kr_running(s)) return;
    const double beta = s[KR_CG_BETA];
    KR_FOR_EACH(i, n) p[i] = (T)kr_add((double)z[i], kr_mul(beta, (double)p[i]));
}

// BiCGSTAB: p = r + β·(p − ω·v), and p̂ = M⁻¹·p with a preconditioner (else p̂ is p).
template <typename T>
__device__ __forceinline__ void kr_bi_direction(u32 n, const double* __restrict__ s, const T* __restrict__ r,
                                                const T* __restrict__ v, const T* __restrict__ d, u32 use_d, T* __restrict__ p,
                                                T* __restrict__ p_hat) {
    if (!kr_running(s)) return;
    const double beta = s[KR_BI_BETA], omega = s[KR_BI_OMEGA];
    KR_FOR_EACH(i, n) {
        const T pi = (T)kr_add((double)r[i], kr_mul(beta, kr_sub((double)p[i], kr_mul(omega, (double)v[i]))));
        p[i] = pi;
        if (use_d) p_hat[i] = (T)kr_mul((double)pi, (double)d[i]);
    }
}

// BiCGSTAB: s = r − α·v (in r), ŝ = M⁻¹·s with a preconditioner (else ŝ is s), and s·s, then
// step S.
template <typename T>
__device__ __forceinline__ void kr_bi_s(u32 n, double* __restrict__ s, const T* __restrict__ v, const T* __restrict__ d,
                                        u32 use_d, T* __restrict__ r, T* __restrict__ s_hat, double* __restrict__ partial,
                                        u32* __restrict__ counter, u32 op) {
    double ss = 0.0;
    if (kr_running(s)) {
        const double alpha = s[KR_BI_ALPHA];
        KR_FOR_EACH(i, n) {
            const T si = (T)kr_sub((double)r[i], kr_mul(alpha, (double)v[i]));
            r[i] = si;
            if (use_d) s_hat[i] = (T)kr_mul((double)si, (double)d[i]);
            ss = kr_add(ss, kr_mul((double)si, (double)si));
        }
    }
    kr_reduce(ss, 0.0, partial, counter, op, s);  // KR_OP_BI_S, or KR_OP_TOTALS
}

// BiCGSTAB: x += α·p̂ + ω·ŝ, r = s − ω·t (s is in r; ŝ is s without a preconditioner), r̂·r
// and r·r, then step RHO.
template <typename T>
__device__ __forceinline__ void kr_bi_update(u32 n, double* __restrict__ s, const T* __restrict__ p_hat,
                                             const T* __restrict__ s_hat, const T* __restrict__ t, const T* __restrict__ r_hat,
                                             u32 use_d, T* __restrict__ x, T* __restrict__ r, double* __restrict__ partial,
                                             u32* __restrict__ counter, u32 op) {
    double rho = 0.0, rr = 0.0;
    if (kr_running(s)) {
        const double alpha = s[KR_BI_ALPHA], omega = s[KR_BI_OMEGA];
        KR_FOR_EACH(i, n) {
            const double si = (double)r[i];
            const double shi = use_d ? (double)s_hat[i] : si;
            x[i] = (T)kr_add(kr_add((double)x[i], kr_mul(alpha, (double)p_hat[i])), kr_mul(omega, shi));
            const T ri = (T)kr_sub(si, kr_mul(omega, (double)t[i]));
            r[i] = ri;
            rho = kr_add(rho, kr_mul((double)r_hat[i], (double)ri));
            rr = kr_add(rr, kr_mul((double)ri, (double)ri));
        }
    }
    kr_reduce(rho, rr, partial, counter, op, s);  // KR_OP_BI_RHO, or KR_OP_TOTALS
}

#define KR_KERNELS(T, S)                                                                                                  \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_dots_##S(u32 n, double* s, const T* a, const T* b, const T* c, double* partial, u32* counter, u32 op) {       \
        kr_dots<T>(n, s, a, b, c, partial, counter, op);                                                                 \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_cg_update_##S(u32 n, double* s, const T* p, const T* q, const T* d, u32 use_d, T* x, T* r, T* z,              \
                         double* partial, u32* counter, u32 op) {                                                                \
        kr_cg_update<T>(n, s, p, q, d, use_d, x, r, z, partial, counter, op);                                                \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK) kr_cg_direction_##S(u32 n, const double* s, const T* z, T* p) { \
        kr_cg_direction<T>(n, s, z, p);                                                                                  \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_bi_direction_##S(u32 n, const double* s, const T* r, const T* v, const T* d, u32 use_d, T* p, T* p_hat) {     \
        kr_bi_direction<T>(n, s, r, v, d, use_d, p, p_hat);                                                              \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_bi_s_##S(u32 n, double* s, const T* v, const T* d, u32 use_d, T* r, T* s_hat, double* partial, u32* counter, u32 op) { \
        kr_bi_s<T>(n, s, v, d, use_d, r, s_hat, partial, counter, op);                                                       \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_bi_update_##S(u32 n, double* s, const T* p_hat, const T* s_hat, const T* t, const T* r_hat, u32 use_d, T* x,  \
                         T* r, double* partial, u32* counter, u32 op) {                                                          \
        kr_bi_update<T>(n, s, p_hat, s_hat, t, r_hat, use_d, x, r, partial, counter, op);                                    \
    }

KR_KERNELS(double, f64)
KR_KERNELS(float, f32)
