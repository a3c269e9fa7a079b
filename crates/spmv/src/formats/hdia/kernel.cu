// HDIA kernel: one thread per row; row r is lane r mod h of hack r / h (h = 32 in the
// registered format, so a warp is one hack). Hack k holds the stored diagonals
// hack_offsets[k] .. hack_offsets[k+1]; the slot of lane l on stored diagonal i is
// data[i*h + l] (64-bit: the slot count may exceed 2^32), summed by diagonal_sum of
// diagonals.cuh.
template <typename T>
__device__ __forceinline__ void hdia_rows(u32 m, u32 n, u32 h, const u32* __restrict__ hack_offsets,
                                          const int* __restrict__ offsets, const T* __restrict__ data,
                                          const T* __restrict__ x, T* __restrict__ y) {
    u32 r, hack, lane;
    if (!thread_block_row(m, h, r, hack, lane)) return;
    u32 begin = hack_offsets[hack], end = hack_offsets[hack + 1];
    y[r] = diagonal_sum(r, n, offsets, begin, end, data + (u64)begin * h + lane, h, x);
}

#define HDIA_KERNELS(T, S)                                                                                    \
    extern "C" __global__ void hdia_##S(u32 m, u32 n, u32 h, const u32* __restrict__ hack_offsets,           \
                                        const int* __restrict__ offsets, const T* __restrict__ data,          \
                                        const T* __restrict__ x, T* __restrict__ y) {                         \
        hdia_rows<T>(m, n, h, hack_offsets, offsets, data, x, y);                                            \
    }

HDIA_KERNELS(double, f64)
HDIA_KERNELS(float, f32)
