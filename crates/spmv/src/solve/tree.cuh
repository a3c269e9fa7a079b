// The block reduction the solvers' kernels share (krylov.cu's sums, pagerank.cu's max and
// sum); prepended to both modules.
#pragma once

// Two values per thread of a block of N threads (N a power of two) reduced by a fixed tree:
// they go into the shared arrays s_u and s_v (N elements each), every level combines element
// t with t + half in place (u by op_u, v by op_v), and every thread ends with the totals. The
// order is fixed, so a result is the same bits in every run.
template <int N, typename U, typename V, typename OpU, typename OpV>
__device__ __forceinline__ void tree_reduce(U* s_u, V* s_v, U& u, V& v, OpU op_u, OpV op_v) {
    const u32 t = threadIdx.x;
    s_u[t] = u;
    s_v[t] = v;
    __syncthreads();
    for (u32 half = N / 2; half > 0; half /= 2) {
        if (t < half) {
            op_u(s_u[t], s_u[t + half]);
            op_v(s_v[t], s_v[t + half]);
        }
        __syncthreads();
    }
    u = s_u[0];
    v = s_v[0];
}

// tree_reduce's combining steps, in place: a = a + b, a = max(a, b).
struct tree_add {
    template <typename T>
    __device__ __forceinline__ void operator()(T& a, T b) const {
        a += b;
    }
};
struct tree_max {
    template <typename T>
    __device__ __forceinline__ void operator()(T& a, T b) const {
        a = fmax(a, b);
    }
};
