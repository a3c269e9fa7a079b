// JDS kernel: one thread per sorted row. Device indices are 32-bit (nnz and rows are
// checked against 2^32 - 1 at conversion, so every offset below fits a u32).
//
// Diagonal t holds sorted rows 0 .. iter_ptr[t+1] - iter_ptr[t] - 1 (rows are sorted by
// length, descending), so sorted row i has an entry in diagonal t iff i < that count, at
// iter_ptr[t] + i. Rows with no entries leave the loop at once and write 0.

// Diagonals handled per step while the row is known to be long enough: their loads are
// independent, so a long row keeps JDS_UNROLL loads in flight instead of one.
#define JDS_UNROLL 4

template <typename T>
__device__ __forceinline__ void jds(u32 m, u32 diagonals, const u32* __restrict__ perm,
                                    const u32* __restrict__ iter_ptr, const u32* __restrict__ col,
                                    const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= m) return;
    u32 i = (u32)g;
    T sum = 0;
    u32 t = 0;
    // Whole steps: diagonal t + JDS_UNROLL - 1 holds row i, so the row has entries in all of
    // t .. t + JDS_UNROLL - 1 (iter_ptr reads are the same address across the warp: broadcasts).
    while (diagonals - t >= JDS_UNROLL && i < iter_ptr[t + JDS_UNROLL] - iter_ptr[t + JDS_UNROLL - 1]) {
#pragma unroll
        for (int k = 0; k < JDS_UNROLL; ++k) {
            u32 p = iter_ptr[t + k] + i;
            sum += val[p] * load_ro(x + col[p]);
        }
        t += JDS_UNROLL;
    }
    // The rest, one diagonal at a time, while diagonal t holds row i.
    for (; t < diagonals; ++t) {
        u32 start = iter_ptr[t];
        if (i >= iter_ptr[t + 1] - start) break;
        u32 p = start + i;
        sum += val[p] * load_ro(x + col[p]);
    }
    y[perm[i]] = sum;  // 0 for an empty row
}

#define JDS_ARGS(T) u32 m, u32 diagonals, const u32* __restrict__ perm, const u32* __restrict__ iter_ptr, \
                    const u32* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x,       \
                    T* __restrict__ y
#define JDS_PASS m, diagonals, perm, iter_ptr, col, val, x, y

F64_F32_KERNELS(jds, JDS_ARGS, JDS_PASS)
