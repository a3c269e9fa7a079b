// AMF-CSR kernel: one thread block per sub-block, one warp per row-block (folded row) at a
// time. The folded row's entries are contiguous (its rows are consecutive CSR rows), so the
// warp reads them 32 at a time, coalesced, and splits them back into rows with a segmented
// scan keyed by row; a row that runs past the 32 entries carries its partial sum into the
// next round. Fixed order, no atomics: deterministic. Device indices are 32-bit (nnz and
// rows <= 2^32 - 1 - 64 are checked at conversion, so `base + 32` and `r + 32` cannot wrap).
#define FULL_MASK 0xffffffffu

template <typename T>
__device__ __forceinline__ void amf_csr(const u32* __restrict__ sub_block_ptr, const u32* __restrict__ row_block_ptr,
                                        const u32* __restrict__ row_ptr, const u32* __restrict__ col,
                                        const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    u32 lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    u32 k_end = sub_block_ptr[blockIdx.x + 1];
    for (u32 k = sub_block_ptr[blockIdx.x] + warp; k < k_end; k += warps) {  // uniform per warp
        u32 r0 = row_block_ptr[k], r1 = row_block_ptr[k + 1];
        for (u32 r = r0 + lane; r < r1; r += 32) {
            if (row_ptr[r] == row_ptr[r + 1]) y[r] = T(0);  // empty rows own no entry
        }
        u32 e_end = row_ptr[r1];
        T carry = 0;  // partial sum of the row that continues from the previous round
        for (u32 base = row_ptr[r0]; base < e_end; base += 32) {  // uniform per warp
            u32 e = base + lane;
            bool valid = e < e_end;
            T v = 0;
            u32 row = 0xffffffffu, row_end = 0;
            if (valid) {
                v = val[e] * load_ro(x + col[e]);
                // The row holding entry e: the last r in [r0, r1) with row_ptr[r] <= e (the
                // non-empty one among rows starting at e).
                u32 lo = r0, hi = r1 - 1;
                while (lo < hi) {
                    u32 mid = lo + (hi - lo + 1) / 2;
                    if (row_ptr[mid] <= e) lo = mid; else hi = mid - 1;
                }
                row = lo;
                row_end = row_ptr[row + 1];
            }
            if (lane == 0) v += carry;  // lane 0's row is the one the carry belongs to
            // Inclusive segmented scan: rows are contiguous runs of lanes.
            for (int off = 1; off < 32; off *= 2) {
                T up = __shfl_up_sync(FULL_MASK, v, off);
                u32 up_row = __shfl_up_sync(FULL_MASK, row, off);
                if (lane >= off && up_row == row) v += up;
            }
            if (valid && e + 1 == row_end) y[row] = v;  // the row's last entry holds its sum
            T last = __shfl_sync(FULL_MASK, v, 31);
            u32 last_end = __shfl_sync(FULL_MASK, row_end, 31);
            carry = (base + 32 < e_end && last_end > base + 32) ? last : T(0);
        }
    }
}

#define AMF_ARGS(T) const u32* __restrict__ sub_block_ptr, const u32* __restrict__ row_block_ptr,  \
                    const u32* __restrict__ row_ptr, const u32* __restrict__ col,                 \
                    const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y
#define AMF_PASS sub_block_ptr, row_block_ptr, row_ptr, col, val, x, y

F64_F32_KERNELS(amf_csr, AMF_ARGS, AMF_PASS)
