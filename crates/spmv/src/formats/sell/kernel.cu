// SELL-C-σ kernel: one thread per sorted row, C (rows per slice) a run-time argument.
// Rows are 32-bit; slot offsets O are u32 below 2^31 stored slots (entries + padding) and u64
// from there on (the `_o64` kernels, formats/offsets.rs), so p += h cannot wrap.
//
// Slice s holds sorted rows s*C .. s*C + h - 1, h = min(C, m - s*C) (the last slice may be
// partial and stores only its real rows); entry t of its row `lane` is at
// slice_ptr[s] + t*h + lane. With C = 32 and blockDim a multiple of 32, a warp is one slice:
// uniform trip count, 32 consecutive slots per load.
template <typename T, typename O>
__device__ __forceinline__ void sell(u32 m, u32 c, const u32* __restrict__ perm, const O* __restrict__ slice_ptr,
                                     const u32* __restrict__ slice_width, const u32* __restrict__ col,
                                     const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= m) return;  // padding rows of the last slice: no thread writes them
    u32 i = (u32)g;
    u32 s = i / c;
    u32 first = s * c;  // <= i < m: no overflow
    u32 lane = i - first;
    u32 h = min(c, m - first);
    u32 w = slice_width[s];
    O p = slice_ptr[s] + lane;
    T sum = 0;
    for (u32 t = 0; t < w; ++t, p += h) sum += val[p] * load_ro(x + col[p]);
    y[perm[i]] = sum;  // 0 for an empty row (w may be > 0: padding adds 0 * x[valid column])
}

#define SELL_ARGS(T, O) u32 m, u32 c, const u32* __restrict__ perm, const O* __restrict__ slice_ptr,  \
                     const u32* __restrict__ slice_width, const u32* __restrict__ col,               \
                     const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y
#define SELL_PASS m, c, perm, slice_ptr, slice_width, col, val, x, y

#define SELL_KERNELS(T, S)                                                                  \
    extern "C" __global__ void sell_##S(SELL_ARGS(T, u32)) { sell<T, u32>(SELL_PASS); }     \
    extern "C" __global__ void sell_o64_##S(SELL_ARGS(T, u64)) { sell<T, u64>(SELL_PASS); }

SELL_KERNELS(double, f64)
SELL_KERNELS(float, f32)
