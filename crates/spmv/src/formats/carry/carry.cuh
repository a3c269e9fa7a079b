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

// One warp per segment: y[seg_row] = tile_head[end] + the carries of tiles first..end.
template <typename T>
__device__ __forceinline__ void carry_fixup(u32 segments, const u32* __restrict__ seg_row,
                                            const u32* __restrict__ seg_first, const u32* __restrict__ seg_end,
                                            const acc_t<T>* __restrict__ tile_carry,
                                            const acc_t<T>* __restrict__ tile_head, T* __restrict__ y) {
    typedef acc_t<T> A;
    const u32 s = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (s >= segments) return;  // whole warps
    const u32 first = seg_first[s], end = seg_end[s];
    A sum = 0;
    for (u32 k = first + lane; k < end; k += 32) sum += tile_carry[k];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[seg_row[s]] = from_acc<T>(tile_head[end] + sum);
}

// extern "C" NAME_S: the fixup kernel for element type T.
#define CARRY_FIXUP_KERNEL(NAME, T, S)                                                                    \
    extern "C" __global__ void NAME##_##S(u32 segments, const u32* __restrict__ seg_row,                \
                                          const u32* __restrict__ seg_first, const u32* __restrict__ seg_end, \
                                          const acc_t<T>* __restrict__ tile_carry,                      \
                                          const acc_t<T>* __restrict__ tile_head, T* __restrict__ y) {  \
        carry_fixup<T>(segments, seg_row, seg_first, seg_end, tile_carry, tile_head, y);                 \
    }
