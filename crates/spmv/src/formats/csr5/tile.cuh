// CSR5's tile kernel (Liu & Vinter 2015) with a deterministic carry-out, templated on the
// values' loader (formats/values/values.cuh); the layout and the order of every
// addition are documented in csr5/mod.rs, and csr5/cpu.rs does the same steps on the CPU.
//
// csr5_SIGMA_S: one warp per tile of 32·SIGMA entries (stored transposed: step k of the 32
// lanes is one coalesced load), four tiles per block; each lane walks its SIGMA entries in
// registers; a set bit in its flags closes the open row. Then finish_tile_lanes (carry.cuh).
// The kernel also zeroes the empty rows. csr5_fixup_S: rows crossing tiles (carry.cuh).

#define CSR5_WARPS 4

template <typename T, int SIGMA, typename V>
__device__ __forceinline__ void csr5(u32 nnz, u32 real_rows, u32 tiles, const u32* __restrict__ tile_base,
                                     const u32* __restrict__ bits, const u32* __restrict__ col5,
                                     const void* __restrict__ codes, const T* __restrict__ table,
                                     const u32* __restrict__ row_map, u32 has_map,
                                     const u32* __restrict__ empty_rows, u32 empty, const T* __restrict__ x,
                                     T* __restrict__ y, acc_t<T>* __restrict__ tile_carry,
                                     acc_t<T>* __restrict__ tile_head) {
    typedef acc_t<T> A;
    constexpr u32 TILE = 32 * SIGMA;
    const V val5(codes, table);
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < empty; i += gridDim.x * blockDim.x) {
        y[empty_rows[i]] = from_acc<T>((A)0);
    }
    const u32 lane = threadIdx.x & 31;
    const u32 t = blockIdx.x * CSR5_WARPS + threadIdx.x / 32;
    if (t >= tiles) return;  // whole warps leave: the shuffles below see all 32 lanes

    // The lane's products, loaded step by step (coalesced across the lanes).
    A p[SIGMA];
    const u32 first_entry = t * TILE + lane * SIGMA;
#pragma unroll
    for (int k = 0; k < SIGMA; ++k) {
        const u32 slot = t * TILE + k * 32 + lane;
        p[k] = first_entry + k < nnz ? val5.stream(slot) * to_acc(load_ro(x + load_cs(col5 + slot))) : (A)0;
    }
    const u32 my_bits = bits[t * 32 + lane];
    // Set bits of the lanes before this one (the paper's y_offset): an exclusive warp scan.
    u32 before = __popc(my_bits);
#pragma unroll
    for (u32 offset = 1; offset < 32; offset *= 2) {
        const u32 up = __shfl_up_sync(0xffffffffu, before, offset);
        if (lane >= offset) before += up;
    }
    before -= __popc(my_bits);
    const u32 base = tile_base[t];
    u32 row = base + before - 1;  // the row open before the lane's first entry (wraps before row 0)
    A sum = 0, own = 0;
    bool has_first = false;
    u32 first_row = 0;
    auto write = [&](u32 r, A v) {
        if (r < real_rows) y[has_map ? row_map[r] : r] = from_acc<T>(v);
    };
#pragma unroll
    for (int k = 0; k < SIGMA; ++k) {
        if ((my_bits >> k) & 1u) {
            if (!has_first) {
                has_first = true;
                first_row = row;
                own = sum;
            } else {
                write(row, sum);
            }
            sum = 0;
            ++row;
        }
        sum += p[k];
    }
    finish_tile_lanes(lane, row, sum, has_first, first_row, own, base > 0, base - 1, tile_carry, tile_head, t, write);
}

#define CSR5_ARGS(T) u32 nnz, u32 real_rows, u32 tiles, const u32* __restrict__ tile_base, const u32* __restrict__ bits, \
                     const u32* __restrict__ col5, const void* __restrict__ codes, const T* __restrict__ table,         \
                     const u32* __restrict__ row_map,                                                                   \
                     u32 has_map, const u32* __restrict__ empty_rows, u32 empty, const T* __restrict__ x,              \
                     T* __restrict__ y, acc_t<T>* __restrict__ tile_carry, acc_t<T>* __restrict__ tile_head
#define CSR5_PASS nnz, real_rows, tiles, tile_base, bits, col5, codes, table, row_map, has_map, empty_rows, empty, x, y, \
                  tile_carry, tile_head

// csr5_SIGMA{codec}_S for the loader V of the values' codec (empty codec: full values).
#define CSR5_SIGMA(T, S, SIGMA, CODEC, V)                                                                \
    extern "C" __global__ void __launch_bounds__(32 * CSR5_WARPS) csr5_##SIGMA##CODEC##_##S(CSR5_ARGS(T)) { \
        csr5<T, SIGMA, V>(CSR5_PASS);                                                                    \
    }

#define CSR5_SIGMAS(T, S, CODEC, V) \
    CSR5_SIGMA(T, S, 4, CODEC, V)   \
    CSR5_SIGMA(T, S, 8, CODEC, V)   \
    CSR5_SIGMA(T, S, 12, CODEC, V)  \
    CSR5_SIGMA(T, S, 16, CODEC, V)  \
    CSR5_SIGMA(T, S, 24, CODEC, V)  \
    CSR5_SIGMA(T, S, 32, CODEC, V)
