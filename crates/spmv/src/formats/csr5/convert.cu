// CSR5's conversion on the GPU (convert=gpu): from the CSR arrays on the device to the arrays
// of csr5/mod.rs, bit for bit the host conversion's. Every kernel writes each output element
// from one thread (no atomics), so the result does not depend on scheduling.
//
// 1. csr5_count_rows: rows with entries per chunk of CSR5_CHUNK rows (the host scans the few
//    counts; when no row is empty the row map is skipped and row_ptr serves as the starts).
// 2. csr5_map_rows: row_map (rows with entries), empty_rows, and starts[i] = row_ptr[row_map[i]].
// 3. csr5_tile_base: row starts before each tile (binary search in the starts).
// 4. csr5_bits: one 32-bit word per lane of each tile: the starts among its sigma entries.
// 5. csr5_transpose_S: col5/val5 in the tile-transposed order, zero padding.
// 6. csr5_segment_rows: the carry segments' tile rows to original rows (through row_map).

#define CSR5_CONVERT_BLOCK 256
#define CSR5_CHUNK (CSR5_CONVERT_BLOCK * 4)

__device__ __forceinline__ bool csr5_row_has_entries(u32 m, const u32* __restrict__ row_ptr, u64 r) {
    return r < m && row_ptr[r] < row_ptr[r + 1];
}

extern "C" __global__ void __launch_bounds__(CSR5_CONVERT_BLOCK)
    csr5_count_rows(u32 m, const u32* __restrict__ row_ptr, u32* __restrict__ chunk_counts) {
    const u64 first = blockIdx.x * (u64)CSR5_CHUNK;  // 64-bit: m may lie near 2^32
    u32 count = 0;
    for (u32 i = 0; i < CSR5_CHUNK; i += CSR5_CONVERT_BLOCK) {
        count += __syncthreads_count(csr5_row_has_entries(m, row_ptr, first + i + threadIdx.x));
    }
    if (threadIdx.x == 0) chunk_counts[blockIdx.x] = count;
}

// chunk_offsets[b]: rows with entries before chunk b (the host's exclusive scan of the counts).
extern "C" __global__ void __launch_bounds__(CSR5_CONVERT_BLOCK)
    csr5_map_rows(u32 m, const u32* __restrict__ row_ptr, const u32* __restrict__ chunk_offsets,
                  u32* __restrict__ row_map, u32* __restrict__ empty_rows, u32* __restrict__ starts) {
    __shared__ u32 warp_counts[CSR5_CONVERT_BLOCK / 32];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const u64 first = blockIdx.x * (u64)CSR5_CHUNK;
    u32 before_step = chunk_offsets[blockIdx.x];  // rows with entries before this step's rows
    for (u32 i = 0; i < CSR5_CHUNK; i += CSR5_CONVERT_BLOCK) {
        const u64 r = first + i + threadIdx.x;
        const bool full = csr5_row_has_entries(m, row_ptr, r);
        const u32 ballot = __ballot_sync(0xffffffffu, full);
        if (lane == 0) warp_counts[warp] = __popc(ballot);
        __syncthreads();
        u32 before = before_step + __popc(ballot & ((1u << lane) - 1));
        u32 step_total = 0;
        for (u32 w = 0; w < CSR5_CONVERT_BLOCK / 32; ++w) {
            if (w < warp) before += warp_counts[w];
            step_total += warp_counts[w];
        }
        if (r < m) {
            if (full) {
                row_map[before] = (u32)r;
                starts[before] = row_ptr[r];
            } else {
                empty_rows[r - before] = (u32)r;  // r - before: empty rows before r
            }
        }
        before_step += step_total;
        __syncthreads();  // warp_counts is rewritten by the next step
    }
}

// The first index i in starts[0..n) with starts[i] >= e.
__device__ __forceinline__ u32 csr5_first_start_at(const u32* __restrict__ starts, u32 n, u64 e) {
    u32 lo = 0, hi = n;
    while (lo < hi) {
        const u32 mid = lo + (hi - lo) / 2;
        if ((u64)starts[mid] < e) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// tile_base[t] for t in 0..=tiles: real row starts below t·tile, plus the virtual row at nnz.
extern "C" __global__ void __launch_bounds__(CSR5_CONVERT_BLOCK)
    csr5_tile_base(u32 tiles, u32 tile, u32 nnz, u32 nstarts, const u32* __restrict__ starts,
                   u32* __restrict__ tile_base) {
    for (u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x; t <= tiles; t += (u64)gridDim.x * blockDim.x) {
        const u64 e = t * tile;
        tile_base[t] = csr5_first_start_at(starts, nstarts, e) + (nnz < e ? 1u : 0u);
    }
}

// bits[w] for the lane word w in 0..words: entries w·sigma .. (w+1)·sigma (tile = 32·sigma, so
// word t·32 + l covers exactly lane l's entries of tile t); bit k set where a row starts.
extern "C" __global__ void __launch_bounds__(CSR5_CONVERT_BLOCK)
    csr5_bits(u32 words, u32 sigma, u32 nnz, u32 nstarts, const u32* __restrict__ starts, u32* __restrict__ bits) {
    for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < words; w += (u64)gridDim.x * blockDim.x) {
        const u64 lo = w * sigma, hi = lo + sigma;
        u32 word = 0;
        for (u32 i = csr5_first_start_at(starts, nstarts, lo); i < nstarts && starts[i] < hi; ++i) {
            word |= 1u << (u32)(starts[i] - lo);
        }
        if (lo <= nnz && nnz < hi) word |= 1u << (u32)(nnz - lo);
        bits[w] = word;
    }
}

// Slot s of tile t (s = k·32 + l) holds entry t·tile + l·sigma + k, or zero padding past nnz.
// Writes are coalesced; the reads of a warp fall in one tile's span.
template <typename T>
__device__ __forceinline__ void csr5_transpose(u32 padded, u32 sigma, u32 nnz, const u32* __restrict__ col,
                                               const T* __restrict__ val, u32* __restrict__ col5, T* __restrict__ val5) {
    const u32 tile = 32 * sigma;
    for (u64 slot = blockIdx.x * (u64)blockDim.x + threadIdx.x; slot < padded; slot += (u64)gridDim.x * blockDim.x) {
        const u64 t = slot / tile, within = slot % tile;
        const u64 e = t * tile + (within % 32) * sigma + within / 32;
        const bool real = e < nnz;
        col5[slot] = real ? col[e] : 0u;
        val5[slot] = real ? val[e] : from_acc<T>((acc_t<T>)0);
    }
}

#define CSR5_TRANSPOSE(T, S)                                                                                   \
    extern "C" __global__ void __launch_bounds__(CSR5_CONVERT_BLOCK)                                           \
        csr5_transpose_##S(u32 padded, u32 sigma, u32 nnz, const u32* __restrict__ col, const T* __restrict__ val, \
                           u32* __restrict__ col5, T* __restrict__ val5) {                                     \
        csr5_transpose<T>(padded, sigma, nnz, col, val, col5, val5);                                           \
    }

CSR5_TRANSPOSE(double, f64)
CSR5_TRANSPOSE(float, f32)
CSR5_TRANSPOSE(half_t, f16)

extern "C" __global__ void __launch_bounds__(CSR5_CONVERT_BLOCK)
    csr5_segment_rows(u32 n, const u32* __restrict__ row_map, u32* __restrict__ rows) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        rows[i] = row_map[rows[i]];
    }
}
