// BRCP kernels: the main kernel (slot sums, warp segmented sum, direct stores for rows inside
// one block, enter/leave partial sums for rows that span blocks, zeros for empty rows) and the
// span kernel (each spanning row's partial sums added in block order). No floating-point
// atomics: every value is computed by a fixed thread in a fixed order, so results are bitwise
// the same on every run. See formats/brcp/mod.rs.
//
// Device indices are 32-bit: stored slots < 2^32 (checked at conversion) and every block is at
// least one entry wide, so slot numbers (blocks * 32) fit a u32; blocks < 2^31 (tile flag).

// Must match TILE_WARPS, CHUNK_WIDTH, WIDE_TILE and NO_ROW in mod.rs (a unit test checks the text).
#define BRCP_TILE_WARPS 32
#define BRCP_CHUNK 1024
#define BRCP_WIDE 0x80000000u
#define BRCP_NO_ROW 0xffffffffu
#define BRCP_BLOCK (BRCP_TILE_WARPS * 32)

// Sum of the products of one slot over entries t = first, first + step, ... < end; p is
// the slot's first entry (block_ptr[b] + lane), entry t at p + 32 t.
template <typename T>
__device__ __forceinline__ T brcp_slot_sum(const u32* __restrict__ col, const T* __restrict__ val,
                                           const T* __restrict__ x, u32 p, u32 first, u32 end, u32 step) {
    T sum = 0;
#pragma unroll 4
    for (u32 t = first; t < end; t += step) {
        const u32 q = p + t * 32;
        sum += val[q] * load_ro(x + col[q]);
    }
    return sum;
}

// The warp's runs of block b: `v` is this lane's slot sum. All 32 lanes must call it.
template <typename T>
__device__ __forceinline__ void brcp_runs(u32 b, u32 lane, T v, u32 blocks, const u32* __restrict__ row_perm,
                                          const unsigned char* __restrict__ row_seg_len, T* __restrict__ y,
                                          T* __restrict__ enter, T* __restrict__ leave) {
    const u32 slot = b * 32 + lane;
    const u32 len = row_seg_len[slot];
    const bool head = len != 0;
    // Segmented inclusive scan: `open` = no run starts in the lanes summed so far, so the
    // lower neighbour's sum is still this run's. Lane l ends with the sum of its run's slots
    // from the run's head to l, in a fixed tree order.
    T sum = v;
    bool open = !head;
#pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
        const T lower = __shfl_up_sync(0xffffffffu, sum, d);
        const int lower_open = __shfl_up_sync(0xffffffffu, (int)open, d);
        if (lane >= d && open) {
            sum = lower + sum;
            open = lower_open != 0;
        }
    }
    // The head fetches its run's total from the run's last lane.
    const T run = __shfl_sync(0xffffffffu, sum, head ? lane + len - 1 : lane);
    if (!head) return;
    const u32 row = row_perm[slot];
    if (lane == 0 && b > 0 && row_perm[slot - 1] == row) {
        enter[b] = run;  // continues a row from block b - 1 (maybe into b + 1 as well)
    } else if (lane + len == 32 && b + 1 < blocks && row_perm[slot + len] == row) {  // next block's first slot
        leave[b] = run;  // the first part of a row that goes on in block b + 1
    } else {
        y[row] = run;  // the whole row is in this block
    }
}

// One CUDA block per tile (tiles[t], tiles[t + 1] & ~BRCP_WIDE = its block range): a narrow
// tile gives each warp one block. A wide tile is chunk c = tile_chunk[t] of one block: entries
// c*BRCP_CHUNK .. of every slot, warp w summing those = w (mod BRCP_TILE_WARPS) and warp 0
// adding the partial sums in warp order. A block of several chunks (consecutive tiles) meets
// in its last chunk to finish: each chunk stores its lane sums in chunk_sums[t][lane], then
// counts itself in chunk_count[first tile]; the one that sees the count complete adds the
// chunks' sums in chunk order (read through L2: other SMs wrote them), resets the counter for
// the next product and goes on to the runs. Every thread of the grid also zeroes empty rows
// (grid-stride), so the grid may have more CUDA blocks than tiles.
template <typename T>
__device__ __forceinline__ void brcp(u32 tile_count, const u32* __restrict__ tiles,
                                     const u32* __restrict__ tile_chunk, u32 blocks,
                                     const u32* __restrict__ block_ptr, const u32* __restrict__ row_perm,
                                     const unsigned char* __restrict__ row_seg_len, const u32* __restrict__ col,
                                     const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y,
                                     T* __restrict__ enter, T* __restrict__ leave, u32 empty_count,
                                     const u32* __restrict__ empty_rows, T* chunk_sums, u32* chunk_count) {
    __shared__ T partial[BRCP_TILE_WARPS][32];
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < empty_count; i += stride) y[empty_rows[i]] = T(0);
    if (blockIdx.x >= tile_count) return;

    const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const u32 info = tiles[blockIdx.x];
    const u32 first = info & ~BRCP_WIDE;
    u32 b;
    T v;
    if (!(info & BRCP_WIDE)) {
        b = first + warp;
        if (b >= (tiles[blockIdx.x + 1] & ~BRCP_WIDE)) return;  // whole warp
        const u32 base = block_ptr[b];
        v = brcp_slot_sum(col, val, x, base + lane, 0, (block_ptr[b + 1] - base) >> 5, 1);
    } else {
        // The whole CUDA block takes this branch, so __syncthreads is safe.
        b = first;
        const u32 base = block_ptr[b];
        const u32 width = (block_ptr[b + 1] - base) >> 5;
        const u32 chunk = tile_chunk[blockIdx.x];
        const u32 chunks = (width + BRCP_CHUNK - 1) / BRCP_CHUNK;
        const u32 t0 = chunk * BRCP_CHUNK;
        partial[warp][lane] =
            brcp_slot_sum(col, val, x, base + lane, t0 + warp, min(width, t0 + BRCP_CHUNK), BRCP_TILE_WARPS);
        __syncthreads();
        if (warp != 0) return;
        v = partial[0][lane];
#pragma unroll
        for (u32 w = 1; w < BRCP_TILE_WARPS; ++w) v += partial[w][lane];
        if (chunks > 1) {
            const u32 first_tile = blockIdx.x - chunk;
            chunk_sums[(u64)blockIdx.x * 32 + lane] = v;
            __threadfence();  // the sums are visible before the count says so
            __syncwarp();     // every lane's sum and fence come before lane 0's count
            u32 arrived = 0;
            if (lane == 0) arrived = atomicAdd(chunk_count + first_tile, 1u);
            arrived = __shfl_sync(0xffffffffu, arrived, 0);
            if (arrived != chunks - 1) return;  // another chunk finishes this block
            __threadfence();
            const T* sums = chunk_sums + (u64)first_tile * 32 + lane;
            v = __ldcg(sums);
            for (u32 c = 1; c < chunks; ++c) v += __ldcg(sums + (u64)c * 32);
            if (lane == 0) chunk_count[first_tile] = 0;  // ready for the next product
        }
    }
    brcp_runs(b, lane, v, blocks, row_perm, row_seg_len, y, enter, leave);
}

// One thread per spanning row: y[row] = ((leave[first] + enter[first + 1]) + ...) + enter[last].
template <typename T>
__device__ __forceinline__ void brcp_spans(u32 span_count, const u32* __restrict__ span_row,
                                           const u32* __restrict__ span_first, const u32* __restrict__ span_last,
                                           const T* __restrict__ enter, const T* __restrict__ leave,
                                           T* __restrict__ y) {
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= span_count) return;
    const u32 last = span_last[k];
    u32 b = span_first[k];
    T sum = leave[b];
    while (++b <= last) sum += enter[b];
    y[span_row[k]] = sum;
}

#define BRCP_KERNELS(T, S)                                                                                    \
    extern "C" __global__ void __launch_bounds__(BRCP_BLOCK)                                                 \
        brcp_##S(u32 tile_count, const u32* __restrict__ tiles, const u32* __restrict__ tile_chunk,          \
                 u32 blocks, const u32* __restrict__ block_ptr, const u32* __restrict__ row_perm,             \
                 const unsigned char* __restrict__ row_seg_len, const u32* __restrict__ col,                  \
                 const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y, T* __restrict__ enter, \
                 T* __restrict__ leave, u32 empty_count, const u32* __restrict__ empty_rows, T* chunk_sums,   \
                 u32* chunk_count) {                                                                          \
        brcp<T>(tile_count, tiles, tile_chunk, blocks, block_ptr, row_perm, row_seg_len, col, val, x, y, enter, \
                leave, empty_count, empty_rows, chunk_sums, chunk_count);                                     \
    }                                                                                                         \
    extern "C" __global__ void brcp_spans_##S(u32 span_count, const u32* __restrict__ span_row,              \
                                              const u32* __restrict__ span_first,                             \
                                              const u32* __restrict__ span_last, const T* __restrict__ enter, \
                                              const T* __restrict__ leave, T* __restrict__ y) {               \
        brcp_spans<T>(span_count, span_row, span_first, span_last, enter, leave, y);                          \
    }

BRCP_KERNELS(double, f64)
BRCP_KERNELS(float, f32)
