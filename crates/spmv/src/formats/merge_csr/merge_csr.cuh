// Merge-path CSR (Merrill & Garland 2016); the layout and the order of every addition are
// documented in merge_csr/mod.rs, and merge_csr/cpu.rs does the same steps on the CPU.
//
// One warp per tile of 32·ITEMS merge items (row ends and entries), four warps per block, no
// __syncthreads (warps share nothing). Products and row ends of the tile are staged in shared
// memory with coalesced loads; each lane then walks ITEMS items. A fixup kernel (one warp per
// segment, a row crossing tiles) sums the tiles' carries (carry.cuh). x and y come as an IO
// (common.cuh): one vector (kernel.cu) or BLOCK_TILE columns of a block (block.cu): the tile's
// entries are read once, then each column staged and walked in turn exactly as the single
// product does it.

#define MERGE_WARPS 4

template <typename T, typename O, int ITEMS, typename IO>
__device__ __forceinline__ void merge_csr(u32 m, O path, const u32* __restrict__ tile_row,
                                          const O* __restrict__ row_ptr, const u32* __restrict__ col,
                                          const T* __restrict__ val, const IO& io,
                                          acc_t<T>* __restrict__ tile_carry, acc_t<T>* __restrict__ tile_head,
                                          u32 tiles) {
    typedef acc_t<T> A;
    constexpr u32 TILE = 32 * ITEMS;
    // One buffer per warp holds the tile's products (entries of them) and then its row ends
    // (rows + 1 of them, as u32 counted from the tile's first entry j0, so that 64-bit
    // offsets O need no more room): entries + rows = the tile's items, so the two together
    // take TILE products' room and a sentinel. Less shared memory leaves more L1 for x.
    __shared__ A s_buf[MERGE_WARPS][TILE + 1];
    const u32 warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    const u32 t = blockIdx.x * MERGE_WARPS + warp;
    if (t >= tiles) return;  // whole warps leave: the shuffles below see all 32 lanes

    // Path coordinates (diagonals d, entries j) in O; everything inside the tile in u32.
    const O d0 = (O)t * TILE, d1 = min(d0 + TILE, path);
    const u32 i0 = tile_row[t], i1 = tile_row[t + 1];
    const O j0 = d0 - i0, j1 = d1 - i1;
    const u32 rows = i1 - i0, entries = (u32)(j1 - j0);
    A* s_prod = s_buf[warp];
    u32* s_end = reinterpret_cast<u32*>(s_prod + entries);
    // The ends of rows i0 .. i1 - 1 lie in j0 .. j1 (the path passes them inside the tile).
#pragma unroll
    for (u32 k = lane; k < TILE; k += 32) {
        if (k < rows) s_end[k] = (u32)(row_ptr[i0 + k + 1] - j0);
    }
    if (lane == 0) s_end[rows] = entries;  // sentinel: past the last row end, only entries remain
    // The tile's first row began in an earlier tile when the tile starts inside it.
    const bool continues = i0 < m && j0 > row_ptr[i0];
    __syncwarp();

    // This lane's start on the path (the same for every column): a binary search among the
    // tile's row ends.
    const u32 dl = (u32)min((O)(lane * ITEMS), d1 - d0);
    u32 lo = dl > entries ? dl - entries : 0, hi = min(dl, rows);
    while (lo < hi) {
        const u32 mid = (lo + hi) / 2;
        if (s_end[mid] + mid + 1 <= dl) lo = mid + 1;
        else hi = mid;
    }
    const u32 remaining = min((u32)ITEMS, (u32)(d1 - d0) - dl);

    // The tile's entries, read once into registers (ITEMS a lane, coalesced) for every column.
    T a[ITEMS];
    u32 c[ITEMS];
#pragma unroll
    for (u32 i = 0; i < ITEMS; ++i) {
        const u32 k = lane + 32 * i;
        if (k < entries) {
            a[i] = load_cs(val + j0 + k);
            c[i] = load_cs(col + j0 + k);
        }
    }
    for (int q = 0; q < IO::P && io.has(q); ++q) {
#pragma unroll
        for (u32 i = 0; i < ITEMS; ++i) {
            const u32 k = lane + 32 * i;
            if (k < entries) s_prod[k] = to_acc(a[i]) * to_acc(io.at(c[i], q));
        }
        __syncwarp();

        u32 li = lo, j = dl - lo;  // j: entries from j0
        A sum = 0, own = 0;
        int first = -1;  // local row of the first row end this lane meets
#pragma unroll
        for (u32 step = 0; step < ITEMS; ++step) {
            if (step < remaining) {
                if (j < s_end[li]) {
                    sum += s_prod[j];
                    ++j;
                } else {
                    if (first < 0) {
                        first = (int)li;
                        own = sum;
                    } else {
                        io.put(i0 + li, q, sum);
                    }
                    sum = 0;
                    ++li;
                }
            }
        }
        // Column q's carries at q·tiles (a single product's only column: q = 0).
        finish_tile_lanes(lane, i0 + li, sum, first >= 0, i0 + (u32)first, own, continues, i0,
                          tile_carry + (u64)q * tiles, tile_head + (u64)q * tiles, t,
                          [&](u32 row, A v) { io.put(row, q, v); });
        // The walk has read s_prod before the next column's products go there.
        if (IO::P > 1) __syncwarp();
    }
}

// X(T, S, ITEMS) for each tile size the format offers (mod.rs's `items`).
#define MERGE_EACH_ITEMS(X, T, S) X(T, S, 3) X(T, S, 5) X(T, S, 7) X(T, S, 9) X(T, S, 11) X(T, S, 15)

// The matrix's arguments of the tile kernels.
#define MERGE_MATRIX_ARGS(T, O)                                                                       \
    u32 m, O path, const u32* __restrict__ tile_row, const O* __restrict__ row_ptr,                  \
        const u32* __restrict__ col, const T* __restrict__ val
