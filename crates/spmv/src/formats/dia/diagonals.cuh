// Device code shared by the diagonal family's kernels (DIA, HDC, HDIA, DRM, DIA-Adaptive's
// BRCSD layouts), prepended to each of their modules.

// The row of this thread in a grid of one thread per row; false past the last of m rows.
__device__ __forceinline__ bool thread_row(u32 m, u32& row) {
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    row = (u32)g;
    return g < m;
}

// As thread_row, with the row's place in blocks of h rows: its block row / h and its lane
// row mod h (HDIA's hacks, BRCSD-II's blocks).
__device__ __forceinline__ bool thread_block_row(u32 m, u32 h, u32& row, u32& block, u32& lane) {
    if (!thread_row(m, row)) return false;
    block = row / h;
    lane = row - block * h;
    return true;
}

// Row `row`'s sum over the stored diagonals begin .. end, whose slots for this row are
// p, p + stride, p + 2·stride ... (64-bit pointer steps: slot counts may exceed 2^32).
// Rows and columns are below 2^31, so the column row + offset computed in 32-bit unsigned
// arithmetic is < n exactly when it lies inside the matrix (a negative column wraps to
// >= 2^31 > n): one compare guards both edges. The offset of diagonal i is the same for
// every thread that reads it at once: a broadcast.
template <typename T>
__device__ __forceinline__ T diagonal_sum(u32 row, u32 n, const int* __restrict__ offsets, u32 begin, u32 end,
                                          const T* __restrict__ p, u32 stride, const T* __restrict__ x) {
    T sum = 0;
    for (u32 i = begin; i < end; ++i, p += stride) {
        u32 c = row + (u32)load_ro(offsets + i);
        if (c < n) sum += *p * load_ro(x + c);
    }
    return sum;
}
