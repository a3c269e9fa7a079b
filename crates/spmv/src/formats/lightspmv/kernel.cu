// LightSpMV (Liu & Schmidt 2018), vector-level dynamic row distribution on plain CSR.
// Device row offsets and column indices are 32-bit; rows < 2^31 (checked on conversion), so
// the row counter, which passes m by at most one fetch per warp, never wraps.
//
// A warp holds 32 / LANES vectors of LANES lanes. Its lane 0 takes the next 32 / LANES rows
// from the global counter with one atomicAdd and broadcasts the first of them; vector v of
// the warp computes row base + v. The loop condition (base < m) is the same for the whole
// warp, so every shuffle below runs with all 32 lanes present.
//
// The sum of a row depends only on the row (never on which warp took it): lane l of the
// vector adds the entries l, l + LANES, l + 2·LANES ... of the row in order, then group_sum
// combines the LANES partial sums in a fixed tree. With LANES = 32 and a row longer than 32,
// the lanes start at the row's start rounded down to a multiple of 32 (aligned, coalesced
// loads) and skip the entries before the row: still a function of the row alone.
template <typename T, int LANES>
__device__ __forceinline__ void lightspmv(u32 m, u32* __restrict__ row_counter, const u32* __restrict__ row_ptr,
                                          const u32* __restrict__ col, const T* __restrict__ val,
                                          const T* __restrict__ x, T* __restrict__ y) {
    constexpr u32 VECTORS_PER_WARP = 32 / LANES;
    const u32 warp_lane = threadIdx.x & 31;
    const u32 vector = warp_lane / LANES;
    const u32 lane = warp_lane % LANES;
    u32 base = 0;
    if (warp_lane == 0) base = atomicAdd(row_counter, VECTORS_PER_WARP);
    base = __shfl_sync(0xffffffffu, base, 0);
    while (base < m) {
        const u32 row = base + vector;
        T sum = 0;
        if (row < m) {
            const u32 start = row_ptr[row], end = row_ptr[row + 1];
            if (LANES == 32 && end - start > 32) {
                u32 i = (start & ~31u) + lane;  // <= start + 31 < end
                if (i >= start) sum += val[i] * load_ro(x + col[i]);
                for (i += 32; i < end; i += 32) sum += val[i] * load_ro(x + col[i]);
            } else {
                for (u32 i = start + lane; i < end; i += LANES) sum += val[i] * load_ro(x + col[i]);
            }
        }
        sum = group_sum(sum, LANES);
        if (row < m && lane == 0) y[row] = sum;
        if (warp_lane == 0) base = atomicAdd(row_counter, VECTORS_PER_WARP);
        base = __shfl_sync(0xffffffffu, base, 0);
    }
}

#define LIGHTSPMV_ARGS(T) u32 m, u32* __restrict__ row_counter, const u32* __restrict__ row_ptr,           \
                          const u32* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x, \
                          T* __restrict__ y
#define LIGHTSPMV_PASS m, row_counter, row_ptr, col, val, x, y

#define LIGHTSPMV_KERNELS(T, S)                                                                                  \
    extern "C" __global__ void lightspmv_2_##S(LIGHTSPMV_ARGS(T)) { lightspmv<T, 2>(LIGHTSPMV_PASS); }           \
    extern "C" __global__ void lightspmv_4_##S(LIGHTSPMV_ARGS(T)) { lightspmv<T, 4>(LIGHTSPMV_PASS); }           \
    extern "C" __global__ void lightspmv_8_##S(LIGHTSPMV_ARGS(T)) { lightspmv<T, 8>(LIGHTSPMV_PASS); }           \
    extern "C" __global__ void lightspmv_16_##S(LIGHTSPMV_ARGS(T)) { lightspmv<T, 16>(LIGHTSPMV_PASS); }         \
    extern "C" __global__ void lightspmv_32_##S(LIGHTSPMV_ARGS(T)) { lightspmv<T, 32>(LIGHTSPMV_PASS); }

LIGHTSPMV_KERNELS(double, f64)
LIGHTSPMV_KERNELS(float, f32)
