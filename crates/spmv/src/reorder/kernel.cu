// The passes around a product on P·A·Pᵀ (reorder/format.rs): x into the permuted order, y
// back into the original one. Both read through an index and write coalesced.

#define REORDER_KERNELS(T, S)                                                                          \
    extern "C" __global__ void gather_##S(u32 n, const u32* __restrict__ old_of_new,                   \
                                          const T* __restrict__ x, T* __restrict__ xp) {               \
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) \
            xp[i] = load_ro(x + old_of_new[i]);                                                         \
    }                                                                                                  \
    extern "C" __global__ void scatter_##S(u32 n, const u32* __restrict__ new_of_old,                  \
                                           const T* __restrict__ yp, T* __restrict__ y) {              \
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) \
            y[i] = load_ro(yp + new_of_old[i]);                                                         \
    }

REORDER_KERNELS(double, f64)
REORDER_KERNELS(float, f32)
REORDER_KERNELS(half_t, f16)
