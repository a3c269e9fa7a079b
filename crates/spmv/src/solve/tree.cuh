// The block reduction the solvers' kernels share (krylov.cu's sums, pagerank.cu's max and
// sum); prepended to both modules.
#pragma once

// Two values per thread of a block of N threads (N a power of two, at least 64) reduced by a
// fixed tree: they go into the shared arrays s_u and s_v (N elements each), every level
// combines element t with t + half (u by op_u, v by op_v), and every thread ends with the
// totals. The levels down to 32 run in shared memory; the last warp finishes in registers
// (a shuffle from lane t + half is the same operand as element t + half), so it waits at 4
// barriers instead of log2(N) + 1. The order is fixed, so a result is the same bits in
// every run.
template <int N, typename U, typename V, typename OpU, typename OpV>
__device__ __forceinline__ void tree_reduce(U* s_u, V* s_v, U& u, V& v, OpU op_u, OpV op_v) {
    static_assert(N >= 64 && (N & (N - 1)) == 0, "a power of two of at least two warps");
    const u32 t = threadIdx.x;
    s_u[t] = u;
    s_v[t] = v;
    __syncthreads();
    for (u32 half = N / 2; half > 32; half /= 2) {
        if (t < half) {
            op_u(s_u[t], s_u[t + half]);
            op_v(s_v[t], s_v[t + half]);
        }
        __syncthreads();
    }
    if (t < 32) {
        U a = s_u[t];
        V b = s_v[t];
        op_u(a, s_u[t + 32]);
        op_v(b, s_v[t + 32]);
        for (u32 half = 16; half > 0; half /= 2) {
            op_u(a, __shfl_down_sync(0xffffffffu, a, half));
            op_v(b, __shfl_down_sync(0xffffffffu, b, half));
        }
        if (t == 0) {  // every lane has read its elements: the shuffles synchronised the warp
            s_u[0] = a;
            s_v[0] = b;
        }
    }
    __syncthreads();
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
