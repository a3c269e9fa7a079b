// Helpers shared by every kernel module; prepended to each module's source before NVRTC.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;

// Sum `v` over groups of `width` consecutive lanes (width a power of two <= 32); the
// group's first lane gets the total.
template <typename T>
__device__ __forceinline__ T group_sum(T v, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset, width);
    }
    return v;
}

// Read-only load through the non-coherent cache (x is gathered, never written).
template <typename T>
__device__ __forceinline__ T load_ro(const T* p) {
    return __ldg(p);
}

// Writes a row's result: y = sum, or with SCALED y = alpha·sum + beta·y (y read only when
// beta != 0, so a NaN-poisoned y is fine with beta = 0). A format with scaled kernels (CSR)
// instantiates both, so its plain y = A·x path carries no extra argument or branch.
template <typename T, bool SCALED>
__device__ __forceinline__ void store_y(T* y, T sum, T alpha, T beta) {
    if (SCALED) {
        *y = beta == (T)0 ? alpha * sum : alpha * sum + beta * *y;
    } else {
        *y = sum;
    }
}
