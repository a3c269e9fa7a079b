// CSR-vector (csr/kernel.cu and csr/coded.cu): LANES consecutive threads per row, strided
// loop, shuffle reduction. Groups past the last row stay alive (sum 0) so the full-warp
// shuffle mask is valid. V: the loader of the values' codec, C: of the columns
// (formats/values/values.cuh); `row_base` is read by ColsDelta16 only. O: the row offsets'
// type (u32 below 2^31 entries, so i + LANES cannot wrap; u64 beyond).
template <typename T, typename O, int LANES, typename V, typename C, bool SCALED>
__device__ __forceinline__ void csr_vector(u32 m, const O* __restrict__ row_ptr, const void* __restrict__ cols,
                                           const u32* __restrict__ row_base, const void* __restrict__ codes,
                                           const T* __restrict__ table, const T* __restrict__ x, T* __restrict__ y,
                                           T alpha, T beta) {
    const V val(codes, table);
    u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    int lane = threadIdx.x % LANES;
    bool active = row < m;
    acc_t<T> sum = 0;
    if (active) {
        const C col(cols, row_base, row);
        O end = row_ptr[row + 1];
        for (O i = row_ptr[row] + lane; i < end; i += LANES) sum += val.get(i) * to_acc(load_ro(x + col.get(i)));
    }
    sum = group_sum(sum, LANES);
    if (active && lane == 0) store_y<T, SCALED>(y + row, sum, alpha, beta);
}
