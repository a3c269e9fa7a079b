// DRM kernel (Algorithm 2 of the DRM paper): one CUDA block per sub-block, one thread per row.
// A launch covers the sub-blocks block_base .. block_base + gridDim.x, all with
// blockDim.x / h segments (h = the paper's nrows). Thread tid takes segment rnum = tid / h of
// its sub-block: rinx = drm_blo[bid] + rnum in merged order, original segment drm_index[rinx],
// row drm_index[rinx]*h + tid mod h. The slot of lane l on stored diagonal i is
// drm_val[i*h + l] (64-bit). Edge guards: threads past the sub-block's segments, rows past m
// (short last segment), columns outside the matrix (diagonal_sum of diagonals.cuh).
template <typename T>
__device__ __forceinline__ void drm_rows(u32 m, u32 n, u32 h, u32 block_base, const u32* __restrict__ drm_blo,
                                         const u32* __restrict__ drm_index, const u32* __restrict__ drm_dnum,
                                         const int* __restrict__ drm_off, const T* __restrict__ drm_val,
                                         const T* __restrict__ x, T* __restrict__ y) {
    u32 bid = block_base + blockIdx.x;
    u32 tid = threadIdx.x;
    u32 rnum = tid / h;
    u32 lane = tid - rnum * h;
    u32 first = drm_blo[bid];
    if (rnum >= drm_blo[bid + 1] - first) return;
    u32 rinx = first + rnum;
    u32 row = drm_index[rinx] * h + lane;  // < m + h <= 2^31 + 1024: no overflow
    if (row >= m) return;
    u32 begin = drm_dnum[rinx], end = drm_dnum[rinx + 1];
    y[row] = diagonal_sum(row, n, drm_off, begin, end, drm_val + (u64)begin * h + lane, h, x);
}

#define DRM_KERNELS(T, S)                                                                                   \
    extern "C" __global__ void drm_##S(u32 m, u32 n, u32 h, u32 block_base, const u32* __restrict__ drm_blo,  \
                                       const u32* __restrict__ drm_index, const u32* __restrict__ drm_dnum, \
                                       const int* __restrict__ drm_off, const T* __restrict__ drm_val,      \
                                       const T* __restrict__ x, T* __restrict__ y) {                        \
        drm_rows<T>(m, n, h, block_base, drm_blo, drm_index, drm_dnum, drm_off, drm_val, x, y);             \
    }

DRM_KERNELS(double, f64)
DRM_KERNELS(float, f32)
