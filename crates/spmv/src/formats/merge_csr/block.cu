// Merge-path CSR's block kernels, Y = α·A·X + β·Y, BLOCK_TILE columns per launch
// (merge_csr.cuh's tile walk per column, common.cuh's BlockColumns): the tile kernels
// merge_csr_block_ITEMS[_o64]_LAYOUT_S with each column's carries at column·tiles, then the
// fixup merge_csr_fixup_block_LAYOUT_S (carry.cuh). A module of its own: only block products
// compile it.

#define MERGE_BLOCK_ARGS(T, O)                                                                           \
    MERGE_MATRIX_ARGS(T, O), acc_t<T>* __restrict__ tile_carry, acc_t<T>* __restrict__ tile_head, u32 tiles, \
        u32 n, u32 k, u32 j0, const T* __restrict__ x, T* __restrict__ y, T alpha, T beta
#define MERGE_BLOCK_PASS(T, ROW)                                                                          \
    m, path, tile_row, row_ptr, col, val,                                                                 \
        BlockColumns<T, ROW>{x, y, m, n, k, j0, min((u32)BLOCK_TILE, k - j0), alpha, beta}, tile_carry, \
        tile_head, tiles

#define MERGE_BLOCK_LAYOUT(T, S, ITEMS, LAYOUT, ROW)                                                        \
    extern "C" __global__ void __launch_bounds__(32 * MERGE_WARPS, 1)                                      \
        merge_csr_block_##ITEMS##_##LAYOUT##_##S(MERGE_BLOCK_ARGS(T, u32)) {                               \
        merge_csr<T, u32, ITEMS>(MERGE_BLOCK_PASS(T, ROW));                                                \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(32 * MERGE_WARPS, 1)                                      \
        merge_csr_block_##ITEMS##_o64_##LAYOUT##_##S(MERGE_BLOCK_ARGS(T, u64)) {                           \
        merge_csr<T, u64, ITEMS>(MERGE_BLOCK_PASS(T, ROW));                                                \
    }
#define MERGE_BLOCK_ITEMS(T, S, ITEMS)              \
    MERGE_BLOCK_LAYOUT(T, S, ITEMS, row, true)      \
    MERGE_BLOCK_LAYOUT(T, S, ITEMS, col, false)

#define MERGE_BLOCK_KERNELS(T, S)              \
    MERGE_EACH_ITEMS(MERGE_BLOCK_ITEMS, T, S) \
    CARRY_FIXUP_BLOCK_KERNELS(merge_csr_fixup, T, S)

MERGE_BLOCK_KERNELS(double, f64)
MERGE_BLOCK_KERNELS(float, f32)
MERGE_BLOCK_KERNELS(half_t, f16)
