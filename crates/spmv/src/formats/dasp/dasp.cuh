// DASP kernels (formats/dasp/mod.rs has the layout). One launch computes every row class:
// the grid's warps are cut into consecutive ranges, one per kind of work, and each warp
// takes one unit of its range (every branch below is uniform over a warp, so the MMAs and
// shuffles always run with all 32 lanes):
//   long groups | medium warps (loop_num row-blocks each) | 1&3 tiles | 4 tiles | 2&2 tiles
//   | group-1 rows (32 per warp) | empty rows (32 per warp)
// Matrix data (values, columns) is read once: streaming loads (ld.global.cs) keep it out of
// the way of x in the caches. y is written in the original row order. x and y come as an IO
// (common.cuh): one vector (the single product) or IO::P columns of a block (block.cu), each
// column through the same MMAs in the same order, so column j has A·x_j's bits.
// Row ids, tile and group indices are 32-bit (the conversion checks every count); slot
// indices and irreg_ptr are of type O: u32 below 2^31 stored slots, u64 from there on (the
// `_o64` kernels, formats/offsets.rs), so that 32 · tile + lane cannot wrap. Sums run in
// acc_t<T> (common.cuh): T itself, f32 for half_t.
// Each of the four value arrays (long, regular, irregular, short slots) comes as a values.cuh
// loader V built from two arguments (codes, table): ValuesFull for the plain kernels
// (kernel.cu), the coded loaders for `dasp:values=…` (coded.cu, f64 and f32), so that the
// MMAs see the same operands, bit for bit, whatever the codec.

#define FULL_MASK 0xffffffffu

// Sums 8 x 4 tiles with the diagonal trick: lane l holds A[l/4][l%4] (a slot's value) and,
// as B[l%4][l/4], the x of that same slot, so diag(A·B) holds the 8 pieces' dot products.
// After any number of `mma` calls, `row_sum` returns piece i's total (i = lane / 4, in
// acc_t<T>) in every lane of the quad 4i .. 4i + 3.
template <typename T>
struct Diagonal;

// FP64 on the tensor cores: mma.m8n8k4 (DMMA). Lane l holds C[l/4][2(l%4)] and
// C[l/4][2(l%4) + 1], so C[i][i] is element i % 2 of lane 4i + i/2.
template <>
struct Diagonal<double> {
    double c0 = 0.0, c1 = 0.0;
    __device__ __forceinline__ void mma(double a, double b) {
        asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                     : "+d"(c0), "+d"(c1)
                     : "d"(a), "d"(b));
    }
    __device__ __forceinline__ double row_sum() const {
        u32 i = (threadIdx.x % 32) / 4;
        return __shfl_sync(FULL_MASK, (i & 1) ? c1 : c0, 4 * i + i / 2);
    }
};

// FP32 has no exact tensor-core shape (TF32 rounds the inputs): the same tiles on the CUDA
// cores, each lane its slot's product, summed over the quad in a fixed order.
template <>
struct Diagonal<float> {
    float acc = 0.0f;
    __device__ __forceinline__ void mma(float a, float b) { acc = fmaf(a, b, acc); }
    __device__ __forceinline__ float row_sum() const {
        float v = acc + __shfl_xor_sync(FULL_MASK, acc, 1);
        return v + __shfl_xor_sync(FULL_MASK, v, 2);
    }
};

// FP16 on the tensor cores: mma.m16n8k16 with f32 accumulators (HMMA; sm_80/90 run the
// m8n8k4 f16 shape DASP used without tensor cores). Lane (g, t) = (l/4, l%4) holds A[g][2t,
// 2t+1] and A[g][2t+8, 2t+9] (rows 8-15 of A stay zero), B[2t, 2t+1][g] and B[2t+8,
// 2t+9][g], and C[g][2t, 2t+1]. The diagonal trick carries over: B's column g is the x of
// A's row g, entry for entry, so C[g][g] = row g's dot product, element g % 2 of lane
// 4g + g/2 as in FP64. One MMA takes 16 entries per row: four 8 x 4 tiles of the same 8
// rows side by side (K = 4·tile + k; add_tiles), or one tile with K 4-15 zero (`mma`).
template <>
struct Diagonal<half_t> {
    float c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
    // a01/a89: this lane's A[g][2t, 2t+1] and A[g][2t+8, 2t+9] as f16 pairs (low half
    // first); b01/b89 the matching B elements.
    __device__ __forceinline__ void hmma(u32 a01, u32 a89, u32 b01, u32 b89) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
            : "r"(a01), "r"(0u), "r"(a89), "r"(0u), "r"(b01), "r"(b89));
    }
    // One tile, a slot per lane (lane 4i + k holds entry k of row i): lanes (g, 0) and (g, 1)
    // take entries 0-1 and 2-3 of row g from their quad by shuffles.
    __device__ __forceinline__ void mma(half_t a, half_t b) {
        u32 lane = threadIdx.x % 32, t = lane % 4;
        u32 a_pair = a.bits | (__shfl_down_sync(FULL_MASK, (u32)a.bits, 1) << 16);
        u32 b_pair = b.bits | (__shfl_down_sync(FULL_MASK, (u32)b.bits, 1) << 16);
        u32 src = (lane & ~3u) + 2 * (t & 1);
        a_pair = __shfl_sync(FULL_MASK, a_pair, src);
        b_pair = __shfl_sync(FULL_MASK, b_pair, src);
        hmma(t < 2 ? a_pair : 0u, 0u, t < 2 ? b_pair : 0u, 0u);
    }
    __device__ __forceinline__ float row_sum() const {
        u32 i = (threadIdx.x % 32) / 4;
        return __shfl_sync(FULL_MASK, (i & 1) ? c1 : c0, 4 * i + i / 2);
    }
};

// Sum over the 8 quads of a warp (lane 4i holds piece i's total), fixed order; every lane
// gets the total.
template <typename T>
__device__ __forceinline__ T quads_sum(T v) {
    v += __shfl_xor_sync(FULL_MASK, v, 4);
    v += __shfl_xor_sync(FULL_MASK, v, 8);
    return v + __shfl_xor_sync(FULL_MASK, v, 16);
}

// Slot i's value as the MMA operand type T: loaded as stored, or decoded (exactly).
template <typename T, typename V, typename O>
__device__ __forceinline__ T operand(const V& val, O i) {
    return from_acc<T>(val.stream(i));
}
template <typename T, typename O>
__device__ __forceinline__ T operand(const ValuesFull<T>& val, O i) {
    return load_cs(val.v + i);
}

// A slot of a tile for this lane: its value and the x of its column in each of the IO's
// columns (0 and 0 for a lane past the end, so that padding lanes still join the MMA).
template <typename T, typename V, typename O, typename IO>
__device__ __forceinline__ void load_slot(const u32* __restrict__ cid, const V& val, const IO& io, O slot, bool valid,
                                          T& a, T (&b)[IO::P]) {
    a = T();
#pragma unroll
    for (int j = 0; j < IO::P; ++j) b[j] = T();
    if (valid) {
        a = operand<T>(val, slot);
        io.gather(load_cs(cid + slot), b);
    }
}

// Adds entry e's products val[e]·x_j[cid[e]] to sums[j], in acc_t<T> (exact for f16 in f32).
template <typename T, typename V, typename O, typename IO>
__device__ __forceinline__ void add_products(acc_t<T> (&sums)[IO::P], const u32* __restrict__ cid, const V& val,
                                             const IO& io, O e) {
    const acc_t<T> a = to_acc(operand<T>(val, e));
    T x[IO::P];
    io.gather(load_cs(cid + e), x);
#pragma unroll
    for (int j = 0; j < IO::P; ++j) {
        if (io.has(j)) sums[j] += a * to_acc(x[j]);
    }
}

// Zeroed per-column sums.
template <typename S, int P>
__device__ __forceinline__ void zero(S (&s)[P]) {
#pragma unroll
    for (int j = 0; j < P; ++j) s[j] = S();
}

// The loader of part `val` seen from slot `first` on (the short groups share one array).
template <typename T, typename O>
__device__ __forceinline__ ValuesFull<T> from_slot(const ValuesFull<T>& val, O first) {
    ValuesFull<T> v = val;
    v.v += first;
    return v;
}
template <typename V>
struct Shifted {
    V inner;
    u64 first;
    __device__ __forceinline__ auto stream(u64 i) const { return inner.stream(first + i); }
};
template <typename V, typename O>
__device__ __forceinline__ Shifted<V> from_slot(const V& val, O first) {
    return Shifted<V>{val, first};
}

// Adds the tiles first .. end - 1 (32 slots each, slot indices in O) of `cid`/`val` to `acc`
// (one per column of the IO), loading BATCH tiles before their MMAs so that a warp has that
// many loads in flight (2: more cost registers and measured slower on the H200).
template <typename O, typename T, typename V, typename IO>
__device__ __forceinline__ void add_tiles(Diagonal<T> (&acc)[IO::P], const u32* __restrict__ cid, const V& val,
                                          const IO& io, u32 first, u32 end) {
    const int BATCH = 2;
    u32 lane = threadIdx.x % 32;
    u32 t = first;
    for (; t + BATCH <= end; t += BATCH) {
        T a[BATCH], b[BATCH][IO::P];
#pragma unroll
        for (int j = 0; j < BATCH; ++j) load_slot(cid, val, io, O(32) * (t + j) + lane, true, a[j], b[j]);
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
#pragma unroll
            for (int q = 0; q < IO::P; ++q) {
                if (io.has(q)) acc[q].mma(a[j], b[j][q]);
            }
        }
    }
    for (; t < end; ++t) {
        T a, b[IO::P];
        load_slot(cid, val, io, O(32) * t + lane, true, a, b);
#pragma unroll
        for (int q = 0; q < IO::P; ++q) {
            if (io.has(q)) acc[q].mma(a, b[q]);
        }
    }
}

// Four tiles per HMMA (see Diagonal<half_t>): lane (g, t) takes slots 4g + 2(t%2) + {0, 1}
// of tiles first + t/2 and first + 2 + t/2, as pairs (two halves, two columns per load); a
// tile at or past `end` counts as zeros.
template <typename O, typename IO>
__device__ __forceinline__ void add_tiles(Diagonal<half_t> (&acc)[IO::P], const u32* __restrict__ cid,
                                          const ValuesFull<half_t>& values, const IO& io, u32 first, u32 end) {
    const half_t* __restrict__ val = values.v;
    u32 lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    u32 offset = 4 * g + 2 * (t & 1);
    for (u32 tile = first; tile < end; tile += 4) {
        u32 pair[2] = {0u, 0u}, xs[2][IO::P] = {};
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            u32 at = tile + 2 * j + t / 2;
            if (at < end) {
                O slot = O(32) * at + offset;
                pair[j] = __ldcs(reinterpret_cast<const unsigned int*>(val + slot));
                uint2 c = __ldcs(reinterpret_cast<const uint2*>(cid + slot));
                half_t lo[IO::P], hi[IO::P];
                io.gather(c.x, lo);
                io.gather(c.y, hi);
#pragma unroll
                for (int q = 0; q < IO::P; ++q) xs[j][q] = lo[q].bits | ((u32)hi[q].bits << 16);
            }
        }
#pragma unroll
        for (int q = 0; q < IO::P; ++q) {
            if (io.has(q)) acc[q].hmma(pair[0], pair[1], xs[0][q], xs[1][q]);
        }
    }
}

// Long rows: warp w = up to warp_groups consecutive groups of 64 entries of one row (two MMAs
// per group). Its sums go to partial[P·w + j]; the warp that finishes a row's last piece (an
// integer counter per row, reset by that warp for the next launch) adds the row's partials
// in warp order: deterministic, whichever warp arrives last. A row of one warp skips all that.
template <typename O, typename T, typename V, typename IO>
__device__ __forceinline__ void dasp_long(u32 w, u32 warp_groups, const u32* __restrict__ rows,
                                          const u32* __restrict__ group_ptr, const u32* __restrict__ warp_ptr,
                                          const u32* __restrict__ warp_row, const u32* __restrict__ cid,
                                          const V& val, acc_t<T>* partial, u32* count, const IO& io) {
    constexpr int P = IO::P;
    u32 lane = threadIdx.x % 32;
    u32 r = warp_row[w];
    u32 first_warp = warp_ptr[r], warps = warp_ptr[r + 1] - first_warp;
    u32 g = group_ptr[r] + warp_groups * (w - first_warp), g_end = min(g + warp_groups, group_ptr[r + 1]);
    u32 row = rows[r];
    Diagonal<T> acc[P];
    add_tiles<O>(acc, cid, val, io, 2 * g, 2 * g_end);  // a group is two tiles
    acc_t<T> sum[P];
#pragma unroll
    for (int j = 0; j < P; ++j) sum[j] = quads_sum(acc[j].row_sum());
    if (warps == 1) {
        if (lane == 0) {
#pragma unroll
            for (int j = 0; j < P; ++j) {
                if (io.has(j)) io.put(row, j, sum[j]);
            }
        }
        return;
    }
    u32 arrived = 0;
    if (lane == 0) {
#pragma unroll
        for (int j = 0; j < P; ++j) partial[(u64)P * w + j] = sum[j];
        __threadfence();  // the partials are visible before the counter says so
        arrived = atomicAdd(count + r, 1u);
    }
    if (__shfl_sync(FULL_MASK, arrived, 0) != warps - 1) return;
    __threadfence();
#pragma unroll
    for (int j = 0; j < P; ++j) {
        acc_t<T> total = 0;
        for (u32 p = lane; p < warps; p += 32) total += __ldcg(partial + (u64)P * (first_warp + p) + j);  // L2: fresh
        total = group_sum(total, 32);
        if (lane == 0 && io.has(j)) io.put(row, j, total);
    }
    if (lane == 0) count[r] = 0;
}

// Medium rows: warp = loop_num consecutive row-blocks of 8 sorted rows. Regular tiles by MMA;
// the irregular rest by 4 lanes per row (lanes 4i .. 4i + 3 for row i, a fixed-order quad
// sum), added to the tile sum in lane 4i. The index loads of a block are issued together
// (they are independent) so that a warp waits for one memory latency, not a chain of them.
template <typename O, typename T, typename V, typename IO>
__device__ __forceinline__ void dasp_medium(u32 first_block, u32 loop_num, u32 medium, const u32* __restrict__ rows,
                                            const u32* __restrict__ block_tile_ptr, const u32* __restrict__ reg_cid,
                                            const V& reg_val, const O* __restrict__ irreg_ptr,
                                            const u32* __restrict__ irreg_cid, const V& irreg_val, const IO& io) {
    constexpr int P = IO::P;
    u32 lane = threadIdx.x % 32, i = lane / 4, k = lane % 4;
    u32 blocks = (medium + 7) / 8;
    for (u32 block = first_block; block < first_block + loop_num && block < blocks; ++block) {
        u32 m = 8 * block + i;  // this quad's row in sorted order
        bool valid = m < medium;
        u32 t = block_tile_ptr[block], t_end = block_tile_ptr[block + 1];
        O e = valid ? irreg_ptr[m] + k : 0, e_end = valid ? irreg_ptr[m + 1] : 0;
        u32 row = valid ? rows[m] : 0;
        Diagonal<T> acc[P];
        add_tiles<O>(acc, reg_cid, reg_val, io, t, t_end);
        acc_t<T> rest[P];
        zero(rest);
        for (; e + 4 < e_end; e += 8) {
            add_products<T>(rest, irreg_cid, irreg_val, io, e);
            add_products<T>(rest, irreg_cid, irreg_val, io, e + 4);
        }
        if (e < e_end) add_products<T>(rest, irreg_cid, irreg_val, io, e);
#pragma unroll
        for (int j = 0; j < P; ++j) {
            acc_t<T> sum = acc[j].row_sum();
            rest[j] += __shfl_xor_sync(FULL_MASK, rest[j], 1);
            rest[j] += __shfl_xor_sync(FULL_MASK, rest[j], 2);
            if (k == 0 && valid && io.has(j)) io.put(row, j, sum + rest[j]);
        }
    }
}

// Short pieces of 4 slots, 8 per tile; warp = `tiles` consecutive tiles of its group (pieces
// `count` of them, slots from `slots`), lane l taking slot l of each. SPLIT = 1 (1&3) or 2
// (2&2): two MMAs, the first with the x of slots 0 .. SPLIT-1 of each piece only, the second
// with the rest, so one tile yields two rows per piece; SPLIT = 0 (group 4): one MMA, one row
// per piece.
template <typename O, typename T, int SPLIT, typename V, typename IO>
__device__ __forceinline__ void dasp_short(u32 first_tile, u32 tiles, u32 count, const u32* __restrict__ rows,
                                           const u32* __restrict__ cid, const V& val, const IO& io) {
    constexpr int P = IO::P;
    u32 lane = threadIdx.x % 32, k = lane % 4;
    for (u32 tile = first_tile; tile < first_tile + tiles && 8 * tile < count; ++tile) {
        u32 piece = 8 * tile + lane / 4;
        bool valid = piece < count;
        T a, b[P];
        load_slot(cid, val, io, O(32) * tile + lane, valid, a, b);
        if (SPLIT == 0) {
            u32 row = valid ? rows[piece] : 0;
#pragma unroll
            for (int j = 0; j < P; ++j) {
                if (!io.has(j)) continue;
                Diagonal<T> acc;
                acc.mma(a, b[j]);
                acc_t<T> sum = acc.row_sum();
                if (k == 0 && valid) io.put(row, j, sum);
            }
        } else {
            u32 row1 = valid ? rows[2 * piece] : 0, row2 = valid ? rows[2 * piece + 1] : 0;
#pragma unroll
            for (int j = 0; j < P; ++j) {
                if (!io.has(j)) continue;
                Diagonal<T> first, second;
                first.mma(a, k < SPLIT ? b[j] : T());
                second.mma(a, k < SPLIT ? T() : b[j]);
                acc_t<T> s1 = first.row_sum(), s2 = second.row_sum();
                if (k == 0 && valid) {
                    io.put(row1, j, s1);
                    io.put(row2, j, s2);
                }
            }
        }
    }
}

// The matrix's arguments of every DASP kernel (x and y, or a block's, follow them).
#define DASP_ARGS(T, O)                                                                                       \
    u32 long_warps, u32 medium_warps, u32 warps_13, u32 warps_4, u32 warps_22, u32 warps_1, u32 warps_empty, \
        u32 long_warp_groups, const u32* __restrict__ long_rows, const u32* __restrict__ long_group_ptr,     \
        const u32* __restrict__ long_warp_ptr, const u32* __restrict__ long_warp_row,                        \
        const u32* __restrict__ long_cid, const void* long_val, const T* long_table,                       \
        acc_t<T>* long_partial, u32* long_count, u32 loop_num, u32 medium, const u32* __restrict__ medium_rows,      \
        const u32* __restrict__ block_tile_ptr, const u32* __restrict__ reg_cid, const void* reg_val,            \
        const T* reg_table, const O* __restrict__ irreg_ptr, const u32* __restrict__ irreg_cid,                \
        const void* irreg_val, const T* irreg_table,                                                             \
        u32 short_tiles, u32 n13, u32 n4, u32 n22, u32 n1, const u32* __restrict__ short_rows, const u32* __restrict__ short_cid, \
        const void* short_val, const T* short_table, u32 n_empty, const u32* __restrict__ empty_rows
#define DASP_PASS                                                                                                  \
    long_warps, medium_warps, warps_13, warps_4, warps_22, warps_1, warps_empty, long_warp_groups, long_rows,      \
        long_group_ptr, long_warp_ptr, long_warp_row, long_cid, long_val, long_table, long_partial, long_count,   \
        loop_num, medium, medium_rows, block_tile_ptr, reg_cid, reg_val, reg_table, irreg_ptr, irreg_cid,          \
        irreg_val, irreg_table, short_tiles, n13, n4, n22, n1, short_rows, short_cid, short_val, short_table,      \
        n_empty, empty_rows

// The dispatch over the warp ranges (see the top of the file). short_rows lists the rows of
// the 1&3 pairs, the 4 pieces, the 2&2 pairs and group 1, in the order of their slots.
template <typename T, typename O, typename V, typename IO>
__device__ __forceinline__ void dasp(DASP_ARGS(T, O), const IO& io) {
    constexpr int P = IO::P;
    u32 w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    V long_v(long_val, long_table), reg_v(reg_val, reg_table), irreg_v(irreg_val, irreg_table);
    V short_v(short_val, short_table);
    if (w < long_warps) {
        dasp_long<O, T>(w, long_warp_groups, long_rows, long_group_ptr, long_warp_ptr, long_warp_row, long_cid,
                        long_v, long_partial, long_count, io);
        return;
    }
    w -= long_warps;
    if (w < medium_warps) {
        dasp_medium<O, T>(w * loop_num, loop_num, medium, medium_rows, block_tile_ptr, reg_cid, reg_v, irreg_ptr,
                          irreg_cid, irreg_v, io);
        return;
    }
    w -= medium_warps;
    if (w < warps_13) {
        dasp_short<O, T, 1>(w * short_tiles, short_tiles, n13, short_rows, short_cid, short_v, io);
        return;
    }
    w -= warps_13;
    O slots = O(4) * n13;
    u32 row0 = 2 * n13;
    if (w < warps_4) {
        dasp_short<O, T, 0>(w * short_tiles, short_tiles, n4, short_rows + row0, short_cid + slots,
                            from_slot(short_v, slots), io);
        return;
    }
    w -= warps_4;
    slots += O(4) * n4;
    row0 += n4;
    if (w < warps_22) {
        dasp_short<O, T, 2>(w * short_tiles, short_tiles, n22, short_rows + row0, short_cid + slots,
                            from_slot(short_v, slots), io);
        return;
    }
    w -= warps_22;
    slots += O(4) * n22;
    row0 += 2 * n22;
    if (w < warps_1) {
        u32 p = 32 * w + lane;
        if (p < n1) {
            acc_t<T> sum[P];
            zero(sum);
            add_products<T>(sum, short_cid + slots, from_slot(short_v, slots), io, p);
            const u32 row = short_rows[row0 + p];
#pragma unroll
            for (int j = 0; j < P; ++j) {
                if (io.has(j)) io.put(row, j, sum[j]);
            }
        }
        return;
    }
    w -= warps_1;
    if (w < warps_empty) {
        u32 p = 32 * w + lane;
        if (p < n_empty) {
#pragma unroll
            for (int j = 0; j < P; ++j) {
                if (io.has(j)) io.put(empty_rows[p], j, acc_t<T>());
            }
        }
    }
}

// The kernel dasp<SUFFIX>_<S> over values of loader V, slot indices of type O: y = A·x.
#define DASP_KERNEL(T, S, SUFFIX, V, O)                                                                        \
    extern "C" __global__ void __launch_bounds__(256)                                                         \
        dasp##SUFFIX##_##S(DASP_ARGS(T, O), const T* __restrict__ x, T* __restrict__ y) {                     \
        dasp<T, O, V>(DASP_PASS, OneVector<T>{x, y});                                                         \
    }

// The block kernels dasp_block_<row|col><SUFFIX>_<S>: columns j0 .. j0 + BLOCK_TILE - 1 (those
// below k) of Y = α·A·X + β·Y, X of n rows and Y of m, k columns each (block.cu); the host
// launches one per BLOCK_TILE columns.
#define DASP_BLOCK_KERNEL(T, S, SUFFIX, V, O, LAYOUT, ROW)                                                      \
    extern "C" __global__ void __launch_bounds__(256, 1) dasp_block_##LAYOUT##SUFFIX##_##S(                       \
        DASP_ARGS(T, O), u32 m, u32 n, u32 k, u32 j0, const T* __restrict__ x, T* __restrict__ y, T alpha,    \
        T beta) {                                                                                              \
        dasp<T, O, V>(DASP_PASS, BlockColumns<T, ROW>{x, y, m, n, k, j0, min((u32)BLOCK_TILE, k - j0), alpha, beta}); \
    }
#define DASP_BLOCK_KERNELS(T, S, SUFFIX, V, O)            \
    DASP_BLOCK_KERNEL(T, S, SUFFIX, V, O, row, true)      \
    DASP_BLOCK_KERNEL(T, S, SUFFIX, V, O, col, false)

// X(T, S, SUFFIX, V, O) for the kernels over full values: f64, f32 and f16, with 32-bit slot
// indices and, as `_o64`, 64-bit ones (from 2^31 stored slots on).
#define DASP_FULL_VALUES(X)                        \
    X(double, f64, , ValuesFull<double>, u32)      \
    X(float, f32, , ValuesFull<float>, u32)        \
    X(half_t, f16, , ValuesFull<half_t>, u32)      \
    X(double, f64, _o64, ValuesFull<double>, u64)  \
    X(float, f32, _o64, ValuesFull<float>, u64)    \
    X(half_t, f16, _o64, ValuesFull<half_t>, u64)
