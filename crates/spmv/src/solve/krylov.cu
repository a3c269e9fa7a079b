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
// MINRES (Paige–Saunders; a positive definite preconditioner), per iteration (q = A·v first):
//   kr_mr_alpha     q −= (β/β_old)·r1, v·q;  ALPHA: α
//   kr_mr_beta      q −= (α/β)·r2, r1 = r2, r2 = q, y = M⁻¹·r2, r2·y;  BETA: β' = √(r2·y),
//                   the QR factor's Givens rotation (δ, ε, γ, c, s) and φ, φ̄
//   kr_mr_update    w = (v − ε_old·w'' − δ·w')/γ (w'' = w', w' = w), x += φ·w, v = y/β';
//                   CHECK: ‖r‖ ≈ φ̄ against the tolerance
// GMRES(m) (right-preconditioned, restarted), one cycle of m Arnoldi steps j = 0, …, m − 1
// (v_{j+1} = A·M⁻¹·v_j first, from v_j as the step before left it, unnormalised; the basis is
// addressed through a table of m + 1 pointers):
//   kr_gm_dots      v_j /= h, v_{j+1} /= h (the normalisation deferred from the step before),
//                   h = V_{≤j}·v_{j+1};  H1: column j of H = h
//   kr_gm_subtract  v_{j+1} −= V_{≤j}·h, then h = V_{≤j}·v_{j+1} (classical Gram–Schmidt, and
//                   the second pass's dots);  H2: column j += h
//   kr_gm_subtract  v_{j+1} −= V_{≤j}·h, ‖v_{j+1}‖², z = M⁻¹·v_{j+1};  ARNOLDI: h_{j+1,j}, the
//                   rotations of column j, the residual estimate |g_{j+1}|; the cycle is done
//                   when it meets the tolerance, at the basis' end, at max_iter or at an
//                   invariant subspace
// then kr_gm_update (y = R⁻¹·g in every block, x += M⁻¹·V·y), V_0 = A·x, kr_gm_restart
// (V_0 = b − V_0, ‖V_0‖², z = M⁻¹·V_0; RESTART: the true residual's test, else h = β,
// g = (β, 0, …)). Steps of a done cycle do nothing until the restart.
// Sums are in f64 in a fixed order (solve/krylov.rs's `device_order_sum` is the same order
// on the host): per thread over its grid-stride elements (a grid fixed by n), per block by a
// halving tree, then the block sums, thread t taking blocks t, t + 256, …, and a halving
// tree. Products and sums are rounded one by one (__dmul_rn, __dadd_rn: never fused into an
// FMA), as the host computes them, so given the same products the host solver gives the
// same bits. Once STATUS is set every kernel leaves the vectors alone, so x is the iterate at
// the stop, and launches queued past it (up to the next read-back) change nothing.

#define KR_BLOCK 256

// The scalars in s[] (KR_<slot>) and the STATUS codes (KR_ST_*) come from solve/engine.rs's
// `slot` and solve/krylov.rs's `stop`, as headers of this module: written once, in Rust.

// The finishing steps (kr_step's `op`).
#define KR_OP_CG_PQ 0
#define KR_OP_CG_RZ 1
#define KR_OP_BI_RV 2
#define KR_OP_BI_S 3
#define KR_OP_BI_OMEGA 4
#define KR_OP_BI_RHO 5
#define KR_OP_TOTALS 6  // only store the totals (the step runs on the host: distributed solves)
#define KR_OP_MR_ALPHA 7
#define KR_OP_MR_BETA 8
#define KR_OP_MR_CHECK 9
#define KR_OP_GM_H1 10
#define KR_OP_GM_H2 11
#define KR_OP_GM_ARNOLDI 12
#define KR_OP_GM_RESTART 13

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
__device__ __forceinline__ double kr_div(double a, double b) { return __ddiv_rn(a, b); }
// √(a² + b²), rounded step by step (not hypot: the host computes the same bits).
__device__ __forceinline__ double kr_norm2(double a, double b) { return __dsqrt_rn(kr_add(kr_mul(a, a), kr_mul(b, b))); }

__device__ __forceinline__ bool kr_running(const double* __restrict__ s) { return s[KR_STATUS] == KR_ST_RUNNING; }

// The Jacobi step of a vector's entry i: out[i] = d[i]·v (stored, and returned) when a
// preconditioner is in use (use_d), else v itself, unstored (the caller's M⁻¹·v is then v).
template <typename T>
__device__ __forceinline__ T kr_precond(T v, const T* __restrict__ d, u32 use_d, T* __restrict__ out, u64 i) {
    if (!use_d) return v;
    const T z = (T)kr_mul((double)v, (double)d[i]);
    out[i] = z;
    return z;
}

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
        case KR_OP_MR_ALPHA:  // u = v·q
            s[KR_MR_ALPHA] = u;
            if (!isfinite(u)) kr_stop(s, KR_ST_NON_FINITE, k);
            break;
        case KR_OP_MR_BETA: {  // u = r2·M⁻¹r2
            if (!isfinite(u)) {
                kr_stop(s, KR_ST_NON_FINITE, k);
                break;
            }
            if (u < 0.0) {
                s[KR_VALUE] = u;
                kr_stop(s, KR_ST_PRECONDITIONER, k);
                break;
            }
            const double alpha = s[KR_MR_ALPHA], cs = s[KR_MR_CS], sn = s[KR_MR_SN], dbar = s[KR_MR_DBAR];
            const double beta = __dsqrt_rn(u);
            s[KR_MR_OLDB] = s[KR_MR_BETA];
            s[KR_MR_BETA] = beta;
            s[KR_MR_OLDEPS] = s[KR_MR_EPS];
            s[KR_MR_DELTA] = kr_add(kr_mul(cs, dbar), kr_mul(sn, alpha));
            const double gbar = kr_sub(kr_mul(sn, dbar), kr_mul(cs, alpha));
            s[KR_MR_EPS] = kr_mul(sn, beta);
            s[KR_MR_DBAR] = -kr_mul(cs, beta);
            const double gamma = kr_norm2(gbar, beta);
            s[KR_MR_GAMMA] = gamma;
            if (!isfinite(gamma)) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (gamma == 0.0) kr_stop(s, KR_ST_GAMMA_ZERO, k);
            else {
                const double c = kr_div(gbar, gamma), sn2 = kr_div(beta, gamma), phibar = s[KR_MR_PHIBAR];
                s[KR_MR_CS] = c;
                s[KR_MR_SN] = sn2;
                s[KR_MR_PHI] = kr_mul(c, phibar);
                s[KR_MR_PHIBAR] = kr_mul(sn2, phibar);
            }
            break;
        }
        case KR_OP_MR_CHECK: {  // after the update: ‖r‖ ≈ φ̄·‖b‖/β₁
            s[KR_ITER] = k;
            const double r = kr_mul(s[KR_MR_PHIBAR], s[KR_MR_SCALE]);
            s[KR_RR] = kr_mul(r, r);
            if (!isfinite(s[KR_RR])) kr_stop(s, KR_ST_NON_FINITE, k);
            else if (s[KR_RR] <= s[KR_TOL2]) kr_stop(s, KR_ST_CONVERGED, k);
            break;
        }
    }
}

// GMRES's arrays after the scalars, for a basis of m + 1 vectors: the dots' totals t (m + 1),
// g (m + 1), the rotations c and s (m each) and H (column-major, m + 1 rows, m columns).
struct kr_gm_at {
    u32 m;
    __device__ __forceinline__ explicit kr_gm_at(const double* s) : m((u32)s[KR_GM_M]) {}
    __device__ __forceinline__ u32 t(u32 k) const { return KR_SCALARS + k; }
    __device__ __forceinline__ u32 g(u32 k) const { return KR_SCALARS + (m + 1) + k; }
    __device__ __forceinline__ u32 c(u32 k) const { return KR_SCALARS + 2 * (m + 1) + k; }
    __device__ __forceinline__ u32 sn(u32 k) const { return KR_SCALARS + 2 * (m + 1) + m + k; }
    __device__ __forceinline__ u32 h(u32 row, u32 col) const { return KR_SCALARS + 2 * (m + 1) + 2 * m + col * (m + 1) + row; }
};

// Whether GMRES's Arnoldi steps run: the solve runs and the cycle is not done.
__device__ __forceinline__ bool kr_gm_active(const double* __restrict__ s) { return kr_running(s) && s[KR_GM_DONE] == 0.0; }

// GMRES's scalar steps run in the last block of a kernel, by all its threads: what thread 0
// alone computes in order, the others stage beforehand or store in parallel, because one
// thread's chain of loads and stores through global memory costs a round trip each.

// The restart's step `op` on u = ‖r‖² (thread 0): RESTART (the true residual's test, else
// h = β, g = (β, 0, …) and a new cycle), or TOTALS (the step runs on the host: distributed
// solves).
__device__ __forceinline__ void kr_gm_restart_step(double u, u32 op, double* __restrict__ s) {
    if (threadIdx.x != 0 || !kr_running(s)) return;
    if (op == KR_OP_TOTALS) {
        s[KR_U] = u;
        return;
    }
    const kr_gm_at at(s);
    const double k = s[KR_ITER];
    s[KR_RR] = u;
    if (!isfinite(u)) kr_stop(s, KR_ST_NON_FINITE, k);
    else if (u <= s[KR_TOL2]) kr_stop(s, KR_ST_CONVERGED, k);
    else if (s[KR_GM_BREAK] != 0.0) kr_stop(s, KR_ST_SINGULAR, k);
    else if (k >= s[KR_GM_MAX_ITER]) kr_stop(s, KR_ST_LIMIT, k);
    else {
        const double beta = __dsqrt_rn(u);
        s[KR_GM_HNEXT] = beta;
        s[at.g(0)] = beta;
        for (u32 i = 1; i <= at.m; ++i) s[at.g(i)] = 0.0;
        s[KR_GM_DONE] = 0.0;
        s[KR_GM_J] = 0.0;
    }
}

// The Arnoldi step's `op` on u = ‖v_{j+1}‖²: ARNOLDI (h_{j+1,j}, the earlier rotations of
// column j, its own rotation, the residual estimate |g_{j+1}| and whether the cycle is done),
// or TOTALS. Column j of H and the rotations are staged in shared memory by the block first.
__device__ __forceinline__ void kr_gm_arnoldi_step(double u, u32 op, u32 j, double* __restrict__ s) {
    if (!kr_running(s)) return;  // the same s for every thread: they all return, or none
    const u32 t = threadIdx.x;
    if (op == KR_OP_TOTALS) {
        if (t == 0) s[KR_U] = u;
        return;
    }
    if (s[KR_GM_DONE] != 0.0) return;
    const kr_gm_at at(s);
    __shared__ double col[KR_GM_MAX_M + 1], cs[KR_GM_MAX_M], sns[KR_GM_MAX_M];
    for (u32 i = t; i <= j; i += KR_BLOCK) {
        col[i] = s[at.h(i, j)];
        if (i < j) {
            cs[i] = s[at.c(i)];
            sns[i] = s[at.sn(i)];
        }
    }
    __syncthreads();
    if (t != 0) return;
    const double k = s[KR_ITER] + 1.0;
    s[KR_ITER] = k;
    const double hnext = __dsqrt_rn(u);
    s[KR_GM_HNEXT] = hnext;
    double a = col[0];
    for (u32 i = 0; i < j; ++i) {  // the earlier rotations, in order
        const double b = col[i + 1], c = cs[i], sn = sns[i];
        s[at.h(i, j)] = kr_add(kr_mul(c, a), kr_mul(sn, b));
        a = kr_sub(kr_mul(c, b), kr_mul(sn, a));
    }
    const double r = kr_norm2(a, hnext);
    if (!isfinite(r)) {
        kr_stop(s, KR_ST_NON_FINITE, k);
        return;
    }
    if (r == 0.0) {  // singular: update with the columns before j, then stop
        s[KR_GM_BREAK] = 1.0;
        s[KR_GM_DONE] = 1.0;
        s[KR_GM_J] = j;
        return;
    }
    const double c = kr_div(a, r), sn = kr_div(hnext, r), g = s[at.g(j)];
    s[at.c(j)] = c;
    s[at.sn(j)] = sn;
    s[at.h(j, j)] = r;
    s[at.g(j)] = kr_mul(c, g);
    const double gnext = -kr_mul(sn, g);
    s[at.g(j + 1)] = gnext;
    const double rr = kr_mul(gnext, gnext);
    s[KR_RR] = rr;
    if (rr <= s[KR_TOL2] || hnext == 0.0 || k >= s[KR_GM_MAX_ITER] || j + 1 == at.m) {
        s[KR_GM_DONE] = 1.0;
        s[KR_GM_J] = j + 1;
    }
}

// y = R⁻¹·g for the J = s[GM_J] columns of the rotated H, by back substitution.
__device__ __forceinline__ void kr_gm_solve(const double* __restrict__ s, double* __restrict__ y) {
    const kr_gm_at at(s);
    const u32 J = (u32)s[KR_GM_J];
    for (u32 k = J; k-- > 0;) {
        double acc = s[at.g(k)];
        for (u32 l = k + 1; l < J; ++l) acc = kr_sub(acc, kr_mul(s[at.h(k, l)], y[l]));
        y[k] = kr_div(acc, s[at.h(k, k)]);
    }
}

// The block's sums u and v into partial[2·block], partial[2·block + 1]; the block that
// stores last then sums all blocks' (in block order, as the host does), calls finish(u, v)
// in every one of its threads (a finish that is one thread's work tests threadIdx.x) and
// resets the counter for the next kernel.
template <typename Finish>
__device__ __forceinline__ void kr_reduce_with(double u, double v, double* __restrict__ partial, u32* __restrict__ counter,
                                               Finish finish) {
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
    finish(u, v);
    if (t == 0) *counter = 0;
}

// kr_reduce_with whose finish is the totals' step `op` (thread 0's).
__device__ __forceinline__ void kr_reduce(double u, double v, double* __restrict__ partial, u32* __restrict__ counter, u32 op,
                                          double* __restrict__ s) {
    kr_reduce_with(u, v, partial, counter, [&](double u, double v) {
        if (threadIdx.x == 0) kr_step(u, v, op, s);
    });
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
            const T zi = kr_precond(ri, d, use_d, z, i);
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
        kr_precond(pi, d, use_d, p_hat, i);
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
            kr_precond(si, d, use_d, s_hat, i);
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

// MINRES: q −= (β/β_old)·r1 (nothing before the second iteration, β_old = 0), v·q, then step
// ALPHA.
template <typename T>
__device__ __forceinline__ void kr_mr_alpha(u32 n, double* __restrict__ s, const T* __restrict__ v, const T* __restrict__ r1,
                                            T* __restrict__ q, double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    double vq = 0.0;
    if (kr_running(s)) {
        const double oldb = s[KR_MR_OLDB];
        const double c = oldb == 0.0 ? 0.0 : kr_div(s[KR_MR_BETA], oldb);
        KR_FOR_EACH(i, n) {
            const T qi = (T)kr_sub((double)q[i], kr_mul(c, (double)r1[i]));
            q[i] = qi;
            vq = kr_add(vq, kr_mul((double)v[i], (double)qi));
        }
    }
    kr_reduce(vq, 0.0, partial, counter, op, s);  // KR_OP_MR_ALPHA, or KR_OP_TOTALS
}

// MINRES: q −= (α/β)·r2, then r1 = r2, r2 = q, y = M⁻¹·r2 (y is r2 without a preconditioner),
// r2·y, then step BETA.
template <typename T>
__device__ __forceinline__ void kr_mr_beta(u32 n, double* __restrict__ s, const T* __restrict__ q, const T* __restrict__ d,
                                           u32 use_d, T* __restrict__ r1, T* __restrict__ r2, T* __restrict__ y,
                                           double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    double ry = 0.0;
    if (kr_running(s)) {
        const double c = kr_div(s[KR_MR_ALPHA], s[KR_MR_BETA]);
        KR_FOR_EACH(i, n) {
            const T r2i = r2[i];
            const T qi = (T)kr_sub((double)q[i], kr_mul(c, (double)r2i));
            r1[i] = r2i;
            r2[i] = qi;
            const T yi = kr_precond(qi, d, use_d, y, i);
            ry = kr_add(ry, kr_mul((double)qi, (double)yi));
        }
    }
    kr_reduce(ry, 0.0, partial, counter, op, s);  // KR_OP_MR_BETA, or KR_OP_TOTALS
}

// MINRES: w = (v − ε_old·w2 − δ·w1)/γ, w2 = w1, w1 = w, x += φ·w, v = y/β' (y is r2 without a
// preconditioner), then step CHECK.
template <typename T>
__device__ __forceinline__ void kr_mr_update(u32 n, double* __restrict__ s, const T* __restrict__ y, T* __restrict__ v,
                                             T* __restrict__ w1, T* __restrict__ w2, T* __restrict__ x,
                                             double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    if (kr_running(s)) {
        const double oldeps = s[KR_MR_OLDEPS], delta = s[KR_MR_DELTA], gamma = s[KR_MR_GAMMA], phi = s[KR_MR_PHI];
        const double beta = s[KR_MR_BETA];
        KR_FOR_EACH(i, n) {
            const double w1i = (double)w1[i];
            const T wi = (T)kr_div(kr_sub(kr_sub((double)v[i], kr_mul(oldeps, (double)w2[i])), kr_mul(delta, w1i)), gamma);
            w2[i] = w1[i];
            w1[i] = wi;
            x[i] = (T)kr_add((double)x[i], kr_mul(phi, (double)wi));
            if (beta != 0.0) v[i] = (T)kr_div((double)y[i], beta);
        }
    }
    kr_reduce(0.0, 0.0, partial, counter, op, s);  // KR_OP_MR_CHECK, or KR_OP_TOTALS
}

// GMRES's dot products t_k = v_k·w for k ≤ j (V: the basis' m + 1 pointers), KR_GM_CHUNK at
// a time: each thread sums its grid-stride elements, the block's tree takes the chunk
// together (one set of barriers for all of them), block b stores t_k's share in
// partial[k·blocks + b], and the block that stores last sums the shares in block order into
// t, then runs step `op` (H1, H2, or TOTALS: only t). The order of every sum is that of
// kr_reduce's. The pointers are not __restrict__: the callers write w and v_j in the same
// kernel, just before.
#define KR_GM_CHUNK 8

// The chunk's values of every thread (count ≤ KR_GM_CHUNK of them) summed over the block by
// tree_reduce's order; thread 0 gets the totals in acc.
__device__ __forceinline__ void kr_tree_chunk(double (&acc)[KR_GM_CHUNK], u32 count) {
    __shared__ double sh[KR_GM_CHUNK][KR_BLOCK];
    const u32 t = threadIdx.x;
#pragma unroll
    for (u32 c = 0; c < KR_GM_CHUNK; ++c)
        if (c < count) sh[c][t] = acc[c];
    __syncthreads();
    for (u32 half = KR_BLOCK / 2; half > 32; half /= 2) {
        if (t < half)
#pragma unroll
            for (u32 c = 0; c < KR_GM_CHUNK; ++c)
                if (c < count) sh[c][t] = kr_add(sh[c][t], sh[c][t + half]);
        __syncthreads();
    }
    if (t < 32) {
#pragma unroll
        for (u32 c = 0; c < KR_GM_CHUNK; ++c) {
            if (c < count) {
                double a = kr_add(sh[c][t], sh[c][t + 32]);
                for (u32 half = 16; half > 0; half /= 2) a = kr_add(a, __shfl_down_sync(0xffffffffu, a, half));
                acc[c] = a;
            }
        }
    }
    __syncthreads();  // the chunk's shared sums are read before the next chunk writes them
}

// The block's share of t_k = v_k·w for the chunk k0, …, k0 + count − 1: each thread sums its
// grid-stride elements, then kr_tree_chunk; thread 0 gets the block's sums in acc.
template <typename T>
__device__ __forceinline__ void kr_gm_chunk_sums(u32 n, const T* const* V, const T* w, u32 k0, u32 count,
                                                 double (&acc)[KR_GM_CHUNK]) {
    const T* vk[KR_GM_CHUNK];
#pragma unroll
    for (u32 c = 0; c < KR_GM_CHUNK; ++c) {
        acc[c] = 0.0;
        vk[c] = c < count ? V[k0 + c] : nullptr;
    }
    KR_FOR_EACH(i, n) {
        const double wi = (double)w[i];
#pragma unroll
        for (u32 c = 0; c < KR_GM_CHUNK; ++c)
            if (c < count) acc[c] = kr_add(acc[c], kr_mul((double)vk[c][i], wi));
    }
    kr_tree_chunk(acc, count);
}

template <typename T>
__device__ __forceinline__ void kr_gm_multidot(u32 n, double* __restrict__ s, const T* const* V, const T* w, u32 j,
                                               double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    const u32 t = threadIdx.x, G = gridDim.x;
    for (u32 k0 = 0; k0 <= j; k0 += KR_GM_CHUNK) {
        const u32 count = min(KR_GM_CHUNK, j + 1 - k0);
        double acc[KR_GM_CHUNK];
        kr_gm_chunk_sums<T>(n, V, w, k0, count, acc);
        if (t == 0)
#pragma unroll
            for (u32 c = 0; c < KR_GM_CHUNK; ++c)
                if (c < count) partial[(k0 + c) * G + blockIdx.x] = acc[c];
    }
    __shared__ bool last;
    if (t == 0) {
        __threadfence();
        last = atomicAdd(counter, 1u) == G - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (u32 k0 = 0; k0 <= j; k0 += KR_GM_CHUNK) {
        const u32 count = min(KR_GM_CHUNK, j + 1 - k0);
        double acc[KR_GM_CHUNK];
#pragma unroll
        for (u32 c = 0; c < KR_GM_CHUNK; ++c) acc[c] = 0.0;
        for (u32 b = t; b < G; b += KR_BLOCK)
#pragma unroll
            for (u32 c = 0; c < KR_GM_CHUNK; ++c)
                if (c < count) acc[c] = kr_add(acc[c], __ldcg(&partial[(k0 + c) * G + b]));
        kr_tree_chunk(acc, count);
        __shared__ double totals[KR_GM_CHUNK];
        if (t == 0)
#pragma unroll
            for (u32 c = 0; c < KR_GM_CHUNK; ++c)
                if (c < count) totals[c] = acc[c];
        __syncthreads();
        // Thread c stores t_{k0+c} and, in steps H1 and H2, H's entry (k0 + c, j): = t or += t.
        if (t < count && kr_running(s)) {
            const kr_gm_at at(s);
            const u32 k = k0 + t;
            const double total = totals[t];
            s[at.t(k)] = total;
            if (op != KR_OP_TOTALS && s[KR_GM_DONE] == 0.0)
                s[at.h(k, j)] = op == KR_OP_GM_H1 ? total : kr_add(s[at.h(k, j)], total);
        }
        __syncthreads();  // totals is read before the next chunk writes it
    }
    if (t == 0) *counter = 0;
}

// w_i − Σ_{k ≤ j} t_k·V[k][i] in f64, in k order (the bits of a plain loop). The loads of a
// chunk of KR_GM_CHUNK basis vectors are issued before its subtractions, so that the chain of
// subtractions does not wait on one load at a time.
template <typename T>
__device__ __forceinline__ double kr_gm_minus(double wi, const double* t, const T* const* V, u32 j, u64 i) {
    u32 k = 0;
    for (; k + KR_GM_CHUNK <= j + 1; k += KR_GM_CHUNK) {
        double v[KR_GM_CHUNK];
#pragma unroll
        for (u32 c = 0; c < KR_GM_CHUNK; ++c) v[c] = (double)V[k + c][i];
#pragma unroll
        for (u32 c = 0; c < KR_GM_CHUNK; ++c) wi = kr_sub(wi, kr_mul(t[k + c], v[c]));
    }
    for (; k <= j; ++k) wi = kr_sub(wi, kr_mul(t[k], (double)V[k][i]));
    return wi;
}

// v_j /= h and v_{j+1} /= h, h = h_{j,j−1} (or β): the normalisation step j − 1 deferred.
template <typename T>
__device__ __forceinline__ void kr_gm_normalise(u32 n, const double* __restrict__ s, T* const* V, u32 j) {
    T* v = V[j];
    T* w = V[j + 1];
    const double h = s[KR_GM_HNEXT];
    KR_FOR_EACH(i, n) {
        v[i] = (T)kr_div((double)v[i], h);
        w[i] = (T)kr_div((double)w[i], h);
    }
}

// GMRES's first kernel of Arnoldi step j. v_j was left unnormalised by the step before (or
// the restart), and v_{j+1} = A·M⁻¹·v_j made from it: both are divided by h = h_{j,j−1} (or
// β) here, which saves a kernel per step; then t_k = v_k·v_{j+1} for k ≤ j and step `op`
// (H1: column j of H = t).
template <typename T>
__device__ __forceinline__ void kr_gm_dots(u32 n, double* __restrict__ s, T* const* V, u32 j, double* __restrict__ partial,
                                           u32* __restrict__ counter, u32 op) {
    if (!kr_gm_active(s)) return;  // a done cycle's step (every block sees the same s)
    kr_gm_normalise<T>(n, s, V, j);
    kr_gm_multidot<T>(n, s, V, V[j + 1], j, partial, counter, op);
}

// GMRES: v_{j+1} −= Σ_{k ≤ j} t_k·v_k (in k order, in f64, rounded once), then either
// (`norm` 0) the second pass's dots t_k = v_k·v_{j+1} and step `op` (H2: column j += t), or
// (`norm` 1) ‖v_{j+1}‖² and z = M⁻¹·v_{j+1} (with a preconditioner; v_{j+1} stays
// unnormalised until the next step's kr_gm_dots) and step `op` (ARNOLDI: h_{j+1,j}, the
// rotations of column j, the residual estimate |g_{j+1}|; the cycle is done when it meets
// the tolerance, at the basis' end, at max_iter or at an invariant subspace). TOTALS for
// either: only the sums.
template <typename T>
__device__ __forceinline__ void kr_gm_subtract(u32 n, double* __restrict__ s, T* const* V, u32 j, u32 norm,
                                               const T* __restrict__ d, u32 use_d, T* __restrict__ z,
                                               double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    if (!kr_gm_active(s)) return;  // a done cycle's step (every block sees the same s)
    T* w = V[j + 1];
    const double* t = s + kr_gm_at(s).t(0);
    double ww = 0.0;
    KR_FOR_EACH(i, n) {
        const T wt = (T)kr_gm_minus<T>((double)w[i], t, V, j, i);
        w[i] = wt;
        if (norm) {
            ww = kr_add(ww, kr_mul((double)wt, (double)wt));
            kr_precond(wt, d, use_d, z, i);
        }
    }
    if (norm)
        kr_reduce_with(ww, 0.0, partial, counter, [&](double u, double) { kr_gm_arnoldi_step(u, op, j, s); });
    else
        kr_gm_multidot<T>(n, s, V, w, j, partial, counter, op);
}

// GMRES's dot products t_k = v_k·w (k ≤ j) in a grid of one block, into tk (shared; every
// thread sees them on return): the order of kr_gm_multidot's with one block, whose second
// stage adds the block's sum to 0.0 and then zeros.
template <typename T>
__device__ __forceinline__ void kr_gm_block_dots(u32 n, const T* const* V, const T* w, u32 j, double* tk) {
    for (u32 k0 = 0; k0 <= j; k0 += KR_GM_CHUNK) {
        const u32 count = min(KR_GM_CHUNK, j + 1 - k0);
        double acc[KR_GM_CHUNK];
        kr_gm_chunk_sums<T>(n, V, w, k0, count, acc);
        if (threadIdx.x == 0)
#pragma unroll
            for (u32 c = 0; c < KR_GM_CHUNK; ++c)
                if (c < count) tk[k0 + c] = kr_add(0.0, acc[c]);
    }
    __syncthreads();
}

// GMRES's Arnoldi step j as one kernel, for a grid of one block (n ≤ ONE_BLOCK_ROWS): what
// kr_gm_dots, kr_gm_subtract (H2) and kr_gm_subtract (ARNOLDI) do in turn, with the same
// operations in the same order, so the same bits, but no round trips between kernels or
// through a grid's partial sums. Every thread handles the same elements in every phase.
template <typename T>
__device__ __forceinline__ void kr_gm_fused(u32 n, double* __restrict__ s, T* const* V, u32 j, const T* __restrict__ d,
                                            u32 use_d, T* __restrict__ z) {
    if (!kr_gm_active(s)) return;
    __shared__ double t1[KR_GM_MAX_M + 1], t2[KR_GM_MAX_M + 1];
    const u32 t = threadIdx.x;
    const kr_gm_at at(s);
    kr_gm_normalise<T>(n, s, V, j);
    T* w = V[j + 1];
    kr_gm_block_dots<T>(n, V, w, j, t1);  // H1
    KR_FOR_EACH(i, n) w[i] = (T)kr_gm_minus<T>((double)w[i], t1, V, j, i);
    kr_gm_block_dots<T>(n, V, w, j, t2);  // H2
    double ww = 0.0;
    KR_FOR_EACH(i, n) {
        const T wt = (T)kr_gm_minus<T>((double)w[i], t2, V, j, i);
        w[i] = wt;
        ww = kr_add(ww, kr_mul((double)wt, (double)wt));
        kr_precond(wt, d, use_d, z, i);
    }
    // Column j of H and the dots' last totals, as the two multidot finishes leave them.
    for (u32 k = t; k <= j; k += KR_BLOCK) {
        s[at.t(k)] = t2[k];
        s[at.h(k, j)] = kr_add(t1[k], t2[k]);
    }
    double unused = 0.0;
    kr_tree_sum<KR_BLOCK>(ww, unused);  // its barriers also publish the stores above
    kr_gm_arnoldi_step(kr_add(0.0, ww), KR_OP_GM_ARNOLDI, j, s);
}

// GMRES at a cycle's end: y = R⁻¹·g (every block solves the small system itself), then
// x += M⁻¹·(V·y).
template <typename T>
__device__ __forceinline__ void kr_gm_update(u32 n, const double* __restrict__ s, const T* const* __restrict__ V,
                                             const T* __restrict__ d, u32 use_d, T* __restrict__ x) {
    if (!kr_running(s)) return;
    __shared__ double y[KR_GM_MAX_M];
    if (threadIdx.x == 0) kr_gm_solve(s, y);
    __syncthreads();
    const u32 J = (u32)s[KR_GM_J];
    KR_FOR_EACH(i, n) {
        double t = 0.0;
        for (u32 k = 0; k < J; ++k) t = kr_add(t, kr_mul(y[k], (double)V[k][i]));
        if (use_d) t = kr_mul((double)d[i], t);
        x[i] = (T)kr_add((double)x[i], t);
    }
}

// GMRES's restart: r = b − A·x (A·x in r; r is v_0, unnormalised until kr_gm_dots), ‖r‖²,
// z = M⁻¹·r with a preconditioner, then step `op` (RESTART, or TOTALS).
template <typename T>
__device__ __forceinline__ void kr_gm_restart(u32 n, double* __restrict__ s, const T* __restrict__ b, T* __restrict__ r,
                                              const T* __restrict__ d, u32 use_d, T* __restrict__ z,
                                              double* __restrict__ partial, u32* __restrict__ counter, u32 op) {
    double rr = 0.0;
    if (kr_running(s)) {
        KR_FOR_EACH(i, n) {
            const T ri = (T)kr_sub((double)b[i], (double)r[i]);
            r[i] = ri;
            rr = kr_add(rr, kr_mul((double)ri, (double)ri));
            kr_precond(ri, d, use_d, z, i);
        }
    }
    kr_reduce_with(rr, 0.0, partial, counter, [&](double u, double) { kr_gm_restart_step(u, op, s); });
}

#define KR_KERNELS(T, S)                                                                                                 \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_dots_##S(u32 n, double* s, const T* a, const T* b, const T* c, double* partial, u32* counter, u32 op) {       \
        kr_dots<T>(n, s, a, b, c, partial, counter, op);                                                                 \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_cg_update_##S(u32 n, double* s, const T* p, const T* q, const T* d, u32 use_d, T* x, T* r, T* z,              \
                         double* partial, u32* counter, u32 op) {                                                        \
        kr_cg_update<T>(n, s, p, q, d, use_d, x, r, z, partial, counter, op);                                            \
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
        kr_bi_s<T>(n, s, v, d, use_d, r, s_hat, partial, counter, op);                                                   \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_bi_update_##S(u32 n, double* s, const T* p_hat, const T* s_hat, const T* t, const T* r_hat, u32 use_d, T* x,  \
                         T* r, double* partial, u32* counter, u32 op) {                                                  \
        kr_bi_update<T>(n, s, p_hat, s_hat, t, r_hat, use_d, x, r, partial, counter, op);                                \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_mr_alpha_##S(u32 n, double* s, const T* v, const T* r1, T* q, double* partial, u32* counter, u32 op) {        \
        kr_mr_alpha<T>(n, s, v, r1, q, partial, counter, op);                                                            \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_mr_beta_##S(u32 n, double* s, const T* q, const T* d, u32 use_d, T* r1, T* r2, T* y, double* partial,         \
                       u32* counter, u32 op) {                                                                           \
        kr_mr_beta<T>(n, s, q, d, use_d, r1, r2, y, partial, counter, op);                                               \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_mr_update_##S(u32 n, double* s, const T* y, T* v, T* w1, T* w2, T* x, double* partial, u32* counter, u32 op) { \
        kr_mr_update<T>(n, s, y, v, w1, w2, x, partial, counter, op);                                                    \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_gm_dots_##S(u32 n, double* s, T* const* V, u32 j, double* partial, u32* counter, u32 op) {                    \
        kr_gm_dots<T>(n, s, V, j, partial, counter, op);                                                                 \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK) kr_gm_subtract_##S(                                           \
        u32 n, double* s, T* const* V, u32 j, u32 norm, const T* d, u32 use_d, T* z, double* partial, u32* counter, u32 op) { \
        kr_gm_subtract<T>(n, s, V, j, norm, d, use_d, z, partial, counter, op);                                          \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_gm_fused_##S(u32 n, double* s, T* const* V, u32 j, const T* d, u32 use_d, T* z) {                             \
        kr_gm_fused<T>(n, s, V, j, d, use_d, z);                                                                         \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_gm_update_##S(u32 n, const double* s, const T* const* V, const T* d, u32 use_d, T* x) {                       \
        kr_gm_update<T>(n, s, V, d, use_d, x);                                                                           \
    }                                                                                                                    \
    extern "C" __global__ void __launch_bounds__(KR_BLOCK)                                                               \
        kr_gm_restart_##S(u32 n, double* s, const T* b, T* r, const T* d, u32 use_d, T* z, double* partial, u32* counter, \
                          u32 op) {                                                                                      \
        kr_gm_restart<T>(n, s, b, r, d, use_d, z, partial, counter, op);                                                 \
    }

KR_KERNELS(double, f64)
KR_KERNELS(float, f32)
