// The deterministic carry-out of formats that split rows between lanes and tiles
// (formats/carry/mod.rs has the scheme and its CPU emulation, bit for bit).

// After each lane of a warp has walked its share: `key` is the row open at the lane's end and
// `carry` its sum for it; `first_row`/`own` the lane's first completed row and its part of it
// (has_first false: none). Completes each first row (write(row, total)), keeps the part of
// `head_row` (the row that began in an earlier tile) in tile_head[t], and stores the tile's
// carry in tile_carry[t]. All 32 lanes must be present.
template <typename A, typename Write>
__device__ __forceinline__ void finish_tile_lanes(u32 lane, u32 key, A carry, bool has_first, u32 first_row, A own,
                                                  bool has_head_row, u32 head_row, A* __restrict__ tile_carry,
                                                  A* __restrict__ tile_head, u32 t, Write write) {
    A scan = carry;
#pragma unroll
    for (u32 offset = 1; offset < 32; offset *= 2) {
        const A up = __shfl_up_sync(0xffffffffu, scan, offset);
        const u32 up_key = __shfl_up_sync(0xffffffffu, key, offset);
        if (lane >= offset && up_key == key) scan = up + scan;
    }
    const A before = __shfl_up_sync(0xffffffffu, scan, 1);
    const u32 before_key = __shfl_up_sync(0xffffffffu, key, 1);
    if (has_first) {
        const A total = (lane > 0 && before_key == first_row) ? own + before : own;
        if (has_head_row && first_row == head_row) tile_head[t] = total;
        else write(first_row, total);
    }
    if (lane == 31) tile_carry[t] = scan;
}

// One warp per segment: y[seg_row] = tile_head[end] + the carries of tiles first..end, for
// each column q of the IO (common.cuh), whose carries and heads lie at q·tiles.
template <typename T, typename IO>
__device__ __forceinline__ void carry_fixup(u32 segments, const u32* __restrict__ seg_row,
                                            const u32* __restrict__ seg_first, const u32* __restrict__ seg_end,
                                            const acc_t<T>* __restrict__ tile_carry,
                                            const acc_t<T>* __restrict__ tile_head, const IO& io, u32 tiles) {
    typedef acc_t<T> A;
    const u32 s = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (s >= segments) return;  // whole warps
    const u32 first = seg_first[s], end = seg_end[s];
    for (int q = 0; q < IO::P && io.has(q); ++q) {
        const A* carry = tile_carry + (u64)q * tiles;
        A sum = 0;
        for (u32 k = first + lane; k < end; k += 32) sum += carry[k];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (lane == 0) io.put(seg_row[s], q, tile_head[(u64)q * tiles + end] + sum);
    }
}

// extern "C" NAME_S: the fixup kernel for element type T.
#define CARRY_FIXUP_KERNEL(NAME, T, S)                                                                    \
    extern "C" __global__ void NAME##_##S(u32 segments, const u32* __restrict__ seg_row,                \
                                          const u32* __restrict__ seg_first, const u32* __restrict__ seg_end, \
                                          const acc_t<T>* __restrict__ tile_carry,                      \
                                          const acc_t<T>* __restrict__ tile_head, T* __restrict__ y) {  \
        carry_fixup<T>(segments, seg_row, seg_first, seg_end, tile_carry, tile_head, OneVector<T>{nullptr, y}, 0); \
    }

// extern "C" NAME_block_LAYOUT_S: the fixup of a block product's pass (common.cuh's
// BlockColumns: columns j0 .. j0 + BLOCK_TILE - 1 below k of Y, m rows, row- or column-major).
#define CARRY_FIXUP_BLOCK_KERNEL(NAME, T, S, LAYOUT, ROW)                                                     \
    extern "C" __global__ void NAME##_block_##LAYOUT##_##S(                                                  \
        u32 segments, const u32* __restrict__ seg_row, const u32* __restrict__ seg_first,                    \
        const u32* __restrict__ seg_end, const acc_t<T>* __restrict__ tile_carry,                           \
        const acc_t<T>* __restrict__ tile_head, T* __restrict__ y, u32 m, u32 k, u32 j0, u32 tiles, T alpha, \
        T beta) {                                                                                            \
        const BlockColumns<T, ROW> io{nullptr, y, m, 0, k, j0, min((u32)BLOCK_TILE, k - j0), alpha, beta};  \
        carry_fixup<T>(segments, seg_row, seg_first, seg_end, tile_carry, tile_head, io, tiles);             \
    }
#define CARRY_FIXUP_BLOCK_KERNELS(NAME, T, S)            \
    CARRY_FIXUP_BLOCK_KERNEL(NAME, T, S, row, true)      \
    CARRY_FIXUP_BLOCK_KERNEL(NAME, T, S, col, false)
