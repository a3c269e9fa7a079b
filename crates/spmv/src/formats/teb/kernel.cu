// TEB kernels: one thread block per TEB block (blockIdx.x = block b, rows
// blo_idx[b] .. blo_idx[b+1] of the reordered matrix, entries row_ptr[row] .. row_ptr[row+1]).
// Device indices are 32-bit; the conversion checks rows <= 2^32 - 1 - 2048 (so `row +=
// blockDim.x` cannot wrap) and nnz <= 2^32 - 1.

// teb (Algorithm 3): thread t handles the block's rows t, t + blockDim.x, ... with a serial
// loop (the paper maps one thread to one row; a block with more rows than threads loops
// instead of dropping them) and writes y[perm[row]].
template <typename T>
__device__ __forceinline__ void teb_rows(const u32* __restrict__ blo_idx, const u32* __restrict__ row_ptr,
                                         const u32* __restrict__ perm, const u32* __restrict__ col,
                                         const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u32 first = blo_idx[blockIdx.x], last = blo_idx[blockIdx.x + 1];
    for (u32 row = first + threadIdx.x; row < last; row += blockDim.x) {
        T sum = 0;
        u32 end = row_ptr[row + 1];
        for (u32 i = row_ptr[row]; i < end; ++i) sum += val[i] * load_ro(x + col[i]);
        y[perm[row]] = sum;
    }
}

// teb-lanes, rows of a block shared by groups of LANES lanes (LANES <= 32, a power of two):
// group g takes rows first + g, first + g + groups, ...; the loop bound is uniform over the
// block so that every lane of a warp reaches the shuffles of group_sum.
template <typename T, int LANES>
__device__ __forceinline__ void teb_groups(u32 first, u32 last, const u32* __restrict__ row_ptr,
                                           const u32* __restrict__ perm, const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u32 group = threadIdx.x / LANES, lane = threadIdx.x % LANES, groups = blockDim.x / LANES;
    for (u32 base = first; base < last; base += groups) {
        u32 row = base + group;
        bool active = row < last;
        T sum = 0;
        if (active) {
            u32 end = row_ptr[row + 1];
#pragma unroll 4
            for (u32 i = row_ptr[row] + lane; i < end; i += LANES) sum += val[i] * load_ro(x + col[i]);
        }
        sum = group_sum(sum, LANES);
        if (active && lane == 0) y[perm[row]] = sum;
    }
}

// teb-lanes, one row by the whole thread block: warp shuffles, then one shared-memory pass.
// Called by every thread of the block (it synchronises); fixed order: deterministic.
template <typename T>
__device__ __forceinline__ T teb_block_row(u32 row, const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x) {
    __shared__ T partial[32];
    u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    T sum = 0;
    u32 end = row_ptr[row + 1];
#pragma unroll 4
    for (u32 i = row_ptr[row] + threadIdx.x; i < end; i += blockDim.x) sum += val[i] * load_ro(x + col[i]);
    sum = group_sum(sum, 32);
    if (lane == 0) partial[warp] = sum;
    __syncthreads();
    T total = 0;
    if (warp == 0) {
        total = lane < warps ? partial[lane] : T(0);
        total = group_sum(total, 32);
    }
    __syncthreads();  // partial is reused by the next row
    return total;     // valid in thread 0
}

// teb-lanes: the TEB arrays and blocks, a better mapping of threads to rows inside each
// block. blockDim.x is a multiple of 32; every branch below depends only on the block's
// data, so it is uniform over the block.
// - The merge puts every empty row (length 0 always fits) into one block, right after its
//   first row: reordered rows empty_begin..empty_end of block empty_block (found on the
//   host; an empty range when there is no such run). All thread blocks share writing their
//   zeros, grid-stride, and that block skips them, so it no longer loops over all of them.
// - A block's longest rows come first (the begin-cursor row; in the last block, its rows in
//   sorted order): leading rows of at least blockDim entries get the whole thread block each.
// - The other rows get LANES lanes each, LANES the smallest power of two >= a quarter of
//   their mean length (about four entries per lane, 1..32).
template <typename T>
__device__ __forceinline__ void teb_lanes(u32 empty_block, u32 empty_begin, u32 empty_end, const u32* __restrict__ blo_idx,
                                          const u32* __restrict__ row_ptr, const u32* __restrict__ perm,
                                          const u32* __restrict__ col, const T* __restrict__ val,
                                          const T* __restrict__ x, T* __restrict__ y) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 r = empty_begin + (u64)blockIdx.x * blockDim.x + threadIdx.x; r < empty_end; r += stride) {
        y[perm[r]] = T(0);
    }
    u32 row = blo_idx[blockIdx.x], last = blo_idx[blockIdx.x + 1];
    if (blockIdx.x == empty_block && empty_begin < empty_end) {  // empty_begin = row + 1
        T sum = teb_block_row<T>(row, row_ptr, col, val, x);
        if (threadIdx.x == 0) y[perm[row]] = sum;
        row = empty_end;
    }
    while (row < last && row_ptr[row + 1] - row_ptr[row] >= blockDim.x) {
        T sum = teb_block_row<T>(row, row_ptr, col, val, x);
        if (threadIdx.x == 0) y[perm[row]] = sum;
        ++row;
    }
    if (row >= last) return;
    u32 nnz = row_ptr[last] - row_ptr[row];
    u32 rows = last - row;
    u32 quarter = (u32)(((u64)nnz + 4ull * rows - 1) / (4ull * rows));  // ceil(mean / 4)
    if (quarter <= 1) teb_groups<T, 1>(row, last, row_ptr, perm, col, val, x, y);
    else if (quarter <= 2) teb_groups<T, 2>(row, last, row_ptr, perm, col, val, x, y);
    else if (quarter <= 4) teb_groups<T, 4>(row, last, row_ptr, perm, col, val, x, y);
    else if (quarter <= 8) teb_groups<T, 8>(row, last, row_ptr, perm, col, val, x, y);
    else if (quarter <= 16) teb_groups<T, 16>(row, last, row_ptr, perm, col, val, x, y);
    else teb_groups<T, 32>(row, last, row_ptr, perm, col, val, x, y);
}

#define TEB_ARGS(T) const u32* __restrict__ blo_idx, const u32* __restrict__ row_ptr,          \
                    const u32* __restrict__ perm, const u32* __restrict__ col,                 \
                    const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y
#define TEB_PASS blo_idx, row_ptr, perm, col, val, x, y

#define TEB_KERNELS(T, S)                                                                    \
    extern "C" __global__ void teb_rows_##S(TEB_ARGS(T)) { teb_rows<T>(TEB_PASS); }        \
    extern "C" __global__ void teb_lanes_##S(u32 empty_block, u32 empty_begin, u32 empty_end,     \
                                             TEB_ARGS(T)) {                                      \
        teb_lanes<T>(empty_block, empty_begin, empty_end, TEB_PASS);                             \
    }

TEB_KERNELS(double, f64)
TEB_KERNELS(float, f32)
