// COO kernels: the textbook atomic kernel, a warp-aggregated variant (HYB's COO part) and a deterministic
// segmented reduction. Entries are sorted by row; row and column indices are 32-bit.

#define COO_NO_ROW 0xffffffffu

// ---------------------------------------------------------------------------------------
// coo-atomic: y[row] += val * x[col] for every entry, by atomicAdd (y zeroed, or holding
// HYB's ELL part, beforehand). Grid-stride loop: in each step consecutive threads take
// consecutive entries, so the loads are coalesced. 64-bit entry index.
template <typename T>
__device__ __forceinline__ void coo_atomic(u64 nnz, const u32* __restrict__ rows, const u32* __restrict__ cols,
                                           const T* __restrict__ vals, const T* __restrict__ x, T* y) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nnz; i += stride) {
        atomicAdd(y + rows[i], vals[i] * load_ro(x + cols[i]));
    }
}

// The same sum with the atomics aggregated per warp (HYB's COO part): a warp takes 32
// consecutive entries, adds up the entries of each row among them with a segmented shuffle
// reduction (rows are sorted, so a row's entries are adjacent lanes), and the first lane of
// each row does one atomicAdd. Long rows get one atomic per 32 entries instead of 32. The
// loop bound is uniform per warp (i0 is the warp's first entry), so all 32 lanes shuffle.
template <typename T>
__device__ __forceinline__ void coo_atomic_warp(u64 nnz, const u32* __restrict__ rows,
                                                const u32* __restrict__ cols, const T* __restrict__ vals,
                                                const T* __restrict__ x, T* y) {
    const u32 lane = threadIdx.x & 31;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i0 = (u64)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); i0 < nnz; i0 += stride) {
        u64 i = i0 + lane;
        u32 row = COO_NO_ROW;
        T v = T(0);
        if (i < nnz) {
            row = rows[i];
            v = vals[i] * load_ro(x + cols[i]);
        }
        // After the step with offset d, lane l holds the sum of its row's entries among
        // lanes l .. l + 2d - 1 (the row's entries are consecutive lanes).
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            T other = __shfl_down_sync(0xffffffffu, v, d);
            u32 other_row = __shfl_down_sync(0xffffffffu, row, d);
            if (lane + d < 32 && other_row == row) v += other;
        }
        u32 prev_row = __shfl_up_sync(0xffffffffu, row, 1);
        if (row != COO_NO_ROW && (lane == 0 || prev_row != row)) atomicAdd(y + row, v);
    }
}

// ---------------------------------------------------------------------------------------
// coo-segmented. One block per chunk of COO_SEG_CHUNK entries; see formats/coo/mod.rs.
// Must match SEGMENT_BLOCK and SEGMENT_ITEMS in mod.rs (a unit test checks the text).
#define COO_SEG_BLOCK 256
#define COO_SEG_ITEMS 4
#define COO_SEG_CHUNK (COO_SEG_BLOCK * COO_SEG_ITEMS)
#define COO_SEG_WARPS (COO_SEG_BLOCK / 32)

// The segmented-sum operator on (flag, sum) pairs, `prev` before `cur`: flag = a row starts
// in the range, sum = the sum since the last row start (or of the whole range).
template <typename T>
__device__ __forceinline__ void seg_combine(bool prev_flag, T prev_sum, bool& flag, T& sum) {
    if (!flag) sum = prev_sum + sum;
    flag = flag || prev_flag;
}

// Zeroes y[lo..hi) (a run of empty rows), serially: runs are at most ZERO_GAP_LIMIT rows
// long when the host asks for this (otherwise it filled y with 0 first).
template <typename T>
__device__ __forceinline__ void zero_rows(T* y, u32 lo, u32 hi) {
    for (u32 r = lo; r < hi; ++r) y[r] = T(0);
}

// m rows (< 2^32 - 1), nnz entries (< 2^32), launched with exactly ceil(nnz / CHUNK)
// blocks of COO_SEG_BLOCK threads. Writes y[row] for every row that ends in the chunk, the
// chunk's carry (carry_row[b] = row or COO_NO_ROW, carry_val[b]), and, when zero_gaps is
// set, 0 to the empty rows before each row start (and after the last entry).
template <typename T>
__device__ __forceinline__ void coo_segmented(u32 m, u32 nnz, const u32* __restrict__ rows,
                                              const u32* __restrict__ cols, const T* __restrict__ vals,
                                              const T* __restrict__ x, T* __restrict__ y,
                                              u32* __restrict__ carry_row, T* __restrict__ carry_val,
                                              u32 zero_gaps) {
    __shared__ u32 s_row[COO_SEG_CHUNK + 1];  // + the row of the first entry after the chunk
    __shared__ T s_val[COO_SEG_CHUNK];
    __shared__ bool s_warp_flag[COO_SEG_WARPS];
    __shared__ T s_warp_sum[COO_SEG_WARPS];

    const u32 tid = threadIdx.x;
    const u32 c0 = (u32)((u64)blockIdx.x * COO_SEG_CHUNK);  // < nnz < 2^32
    const u32 count = min((u32)COO_SEG_CHUNK, nnz - c0);   // entries in this chunk, >= 1

    // 1. Striped, coalesced loads of rows and products into shared memory.
#pragma unroll
    for (int k = 0; k < COO_SEG_ITEMS; ++k) {
        u32 j = k * COO_SEG_BLOCK + tid;
        if (j < count) {
            u32 i = c0 + j;
            s_row[j] = rows[i];
            s_val[j] = vals[i] * load_ro(x + cols[i]);
        }
    }
    if (tid == 0) s_row[count] = (count < nnz - c0) ? rows[c0 + count] : COO_NO_ROW;
    __syncthreads();

    // 2. Each thread's COO_SEG_ITEMS consecutive entries, reduced under the operator.
    const u32 base = tid * COO_SEG_ITEMS;
    u32 r[COO_SEG_ITEMS];
    T v[COO_SEG_ITEMS];
    bool flag = false;
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < COO_SEG_ITEMS; ++k) {
        u32 j = base + k;
        if (j < count) {
            r[k] = s_row[j];
            v[k] = s_val[j];
            bool head = j == 0 || s_row[j - 1] != r[k];
            if (head) {
                flag = true;
                sum = v[k];
            } else {
                sum += v[k];
            }
        }
    }

    // Block-wide exclusive scan of the (flag, sum) pairs in thread order. Every thread of
    // the block takes part (threads without entries hold the identity (false, 0)), so the
    // full-warp shuffle mask is valid.
    const u32 lane = tid & 31, warp = tid >> 5;
    bool inc_flag = flag;
    T inc_sum = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        bool f = __shfl_up_sync(0xffffffffu, (int)inc_flag, d) != 0;
        T s = __shfl_up_sync(0xffffffffu, inc_sum, d);
        if (lane >= (u32)d) seg_combine(f, s, inc_flag, inc_sum);
    }
    bool ex_flag = __shfl_up_sync(0xffffffffu, (int)inc_flag, 1) != 0;
    T ex_sum = __shfl_up_sync(0xffffffffu, inc_sum, 1);
    if (lane == 0) {
        ex_flag = false;
        ex_sum = T(0);
    }
    if (lane == 31) {
        s_warp_flag[warp] = inc_flag;
        s_warp_sum[warp] = inc_sum;
    }
    __syncthreads();
    // Combine the totals of the warps before this one, in order, then this lane's prefix.
    bool pre_flag = false;
    T pre_sum = T(0);
    for (u32 w = 0; w < warp; ++w) {
        bool f = s_warp_flag[w];
        T s = s_warp_sum[w];
        seg_combine(pre_flag, pre_sum, f, s);
        pre_flag = f;
        pre_sum = s;
    }
    seg_combine(pre_flag, pre_sum, ex_flag, ex_sum);

    // 3. Walk the entries again: ex_sum is the sum of the row open before them.
    T run = ex_sum;
#pragma unroll
    for (int k = 0; k < COO_SEG_ITEMS; ++k) {
        u32 j = base + k;
        if (j < count) {
            u32 row = r[k];
            bool head = j == 0 || s_row[j - 1] != row;
            run = head ? v[k] : run + v[k];
            if (zero_gaps && head) {
                // Empty rows between the previous entry's row and this one.
                u32 lo = 0;
                if (j > 0) {
                    lo = s_row[j - 1] + 1;
                } else if (c0 > 0) {
                    u32 p = rows[c0 - 1];
                    lo = p == row ? row : p + 1;
                }
                zero_rows(y, lo, row);
            }
            u32 next = s_row[j + 1];  // s_row[count]: the next chunk's first row, or COO_NO_ROW
            if (next != row) {
                y[row] = run;
                // The matrix's last entry: empty rows after it.
                if (zero_gaps && next == COO_NO_ROW) zero_rows(y, row + 1, m);
            }
            if (j == count - 1) {
                bool continues = next == row;
                carry_row[blockIdx.x] = continues ? row : COO_NO_ROW;
                carry_val[blockIdx.x] = continues ? run : T(0);
            }
        }
    }
}

// Second pass of coo-segmented, one thread per chunk: the thread at the start of each run
// of equal carry rows sums the run in chunk order and adds it to y[row], which holds the
// row's sum from the chunk where it ends (first pass, earlier on the stream).
template <typename T>
__device__ __forceinline__ void coo_segmented_fixup(u32 chunks, const u32* __restrict__ carry_row,
                                                    const T* __restrict__ carry_val, T* __restrict__ y) {
    u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= chunks) return;
    u32 row = carry_row[b];
    if (row == COO_NO_ROW || (b > 0 && carry_row[b - 1] == row)) return;
    T sum = carry_val[b];
    for (u64 c = b + 1; c < chunks && carry_row[c] == row; ++c) sum += carry_val[c];
    y[row] += sum;
}

#define COO_ENTRIES(T) const u32* __restrict__ rows, const u32* __restrict__ cols, const T* __restrict__ vals, \
                       const T* __restrict__ x

#define COO_KERNELS(T, S)                                                                                     \
    extern "C" __global__ void coo_atomic_##S(u64 nnz, COO_ENTRIES(T), T* y) {                               \
        coo_atomic<T>(nnz, rows, cols, vals, x, y);                                                           \
    }                                                                                                         \
    extern "C" __global__ void coo_atomic_warp_##S(u64 nnz, COO_ENTRIES(T), T* y) {                          \
        coo_atomic_warp<T>(nnz, rows, cols, vals, x, y);                                                      \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(COO_SEG_BLOCK)                                              \
        coo_segmented_##S(u32 m, u32 nnz, COO_ENTRIES(T), T* __restrict__ y, u32* __restrict__ carry_row,    \
                          T* __restrict__ carry_val, u32 zero_gaps) {                                         \
        coo_segmented<T>(m, nnz, rows, cols, vals, x, y, carry_row, carry_val, zero_gaps);                   \
    }                                                                                                         \
    extern "C" __global__ void coo_segmented_fixup_##S(u32 chunks, const u32* __restrict__ carry_row,        \
                                                       const T* __restrict__ carry_val, T* __restrict__ y) { \
        coo_segmented_fixup<T>(chunks, carry_row, carry_val, y);                                              \
    }

COO_KERNELS(double, f64)
COO_KERNELS(float, f32)
