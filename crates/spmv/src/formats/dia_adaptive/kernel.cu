// DIA-Adaptive's blocked layouts (its DIA layout runs DIA's kernel). One thread per row,
// each row adding its diagonals in ascending order (diagonal_sum of diagonals.cuh).

// BRCSD-I: one CUDA block per piece (at most blockDim.x rows of one row block). Row block b
// spans rows block_row[b] .. block_row[b+1] (height h) with the diagonals
// block_diag[b] .. block_diag[b+1]; its slot of local row l on its diagonal i is
// data[block_data[b] + i*h + l].
template <typename T>
__device__ __forceinline__ void brcsd1_rows(u32 n, const u32* __restrict__ piece_row, const u32* __restrict__ piece_block,
                                            const u32* __restrict__ block_row, const u32* __restrict__ block_diag,
                                            const int* __restrict__ offsets, const u64* __restrict__ block_data,
                                            const T* __restrict__ data, const T* __restrict__ x, T* __restrict__ y) {
    u32 p = blockIdx.x;
    u32 r = piece_row[p] + threadIdx.x;
    if (r >= piece_row[p + 1]) return;
    u32 b = piece_block[p];
    u32 first = block_row[b];
    u32 h = block_row[b + 1] - first;
    u32 begin = block_diag[b], end = block_diag[b + 1];
    y[r] = diagonal_sum(r, n, offsets, begin, end, data + block_data[b] + (r - first), h, x);
}

// BRCSD-II: blocks of bh rows; group g holds blocks group_block[g] .. group_block[g+1], all
// with the offsets group_diag[g] .. group_diag[g+1]; block k of the group starts at slot
// group_data[g] + k*dig*bh. A thread finds its block's group by binary search (the same
// search for every thread of a block, so the loads are broadcasts).
template <typename T>
__device__ __forceinline__ void brcsd2_rows(u32 m, u32 n, u32 bh, u32 groups, const u32* __restrict__ group_block,
                                            const u32* __restrict__ group_diag, const int* __restrict__ offsets,
                                            const u64* __restrict__ group_data, const T* __restrict__ data,
                                            const T* __restrict__ x, T* __restrict__ y) {
    u32 r, blk, lane;
    if (!thread_block_row(m, bh, r, blk, lane)) return;
    u32 lo = 0, hi = groups;  // group_block[lo] <= blk < group_block[hi]
    while (hi - lo > 1) {
        u32 mid = lo + (hi - lo) / 2;
        if (load_ro(group_block + mid) <= blk) lo = mid; else hi = mid;
    }
    u32 begin = group_diag[lo];
    u32 dig = group_diag[lo + 1] - begin;
    const T* q = data + group_data[lo] + (u64)(blk - group_block[lo]) * dig * bh + lane;
    y[r] = diagonal_sum(r, n, offsets, begin, begin + dig, q, bh, x);
}

#define BRCSD1_ARGS(T) u32 n, const u32* __restrict__ piece_row, const u32* __restrict__ piece_block,          \
                       const u32* __restrict__ block_row, const u32* __restrict__ block_diag,                   \
                       const int* __restrict__ offsets, const u64* __restrict__ block_data,                     \
                       const T* __restrict__ data, const T* __restrict__ x, T* __restrict__ y
#define BRCSD2_ARGS(T) u32 m, u32 n, u32 bh, u32 groups, const u32* __restrict__ group_block,                   \
                       const u32* __restrict__ group_diag, const int* __restrict__ offsets,                     \
                       const u64* __restrict__ group_data, const T* __restrict__ data,                          \
                       const T* __restrict__ x, T* __restrict__ y

#define DIA_ADAPTIVE_KERNELS(T, S)                                                                             \
    extern "C" __global__ void brcsd1_##S(BRCSD1_ARGS(T)) {                                                   \
        brcsd1_rows<T>(n, piece_row, piece_block, block_row, block_diag, offsets, block_data, data, x, y);   \
    }                                                                                                         \
    extern "C" __global__ void brcsd2_##S(BRCSD2_ARGS(T)) {                                                   \
        brcsd2_rows<T>(m, n, bh, groups, group_block, group_diag, offsets, group_data, data, x, y);          \
    }

DIA_ADAPTIVE_KERNELS(double, f64)
DIA_ADAPTIVE_KERNELS(float, f32)
