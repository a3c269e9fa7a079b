// Merge-path CSR's single product y = A·x (merge_csr.cuh): merge_csr_ITEMS_S, then, when rows
// cross tiles, merge_csr_fixup_S (carry.cuh).

#define MERGE_ARGS(T, O)                                                                                     \
    MERGE_MATRIX_ARGS(T, O), const T* __restrict__ x, T* __restrict__ y, acc_t<T>* __restrict__ tile_carry, \
        acc_t<T>* __restrict__ tile_head, u32 tiles
#define MERGE_PASS(T) m, path, tile_row, row_ptr, col, val, OneVector<T>{x, y}, tile_carry, tile_head, tiles

// merge_csr_ITEMS_S with 32-bit path coordinates and row offsets, merge_csr_ITEMS_o64_S with
// 64-bit ones (formats/offsets.rs).
#define MERGE_ITEMS(T, S, ITEMS)                                                                                     \
    extern "C" __global__ void __launch_bounds__(32 * MERGE_WARPS) merge_csr_##ITEMS##_##S(MERGE_ARGS(T, u32)) {     \
        merge_csr<T, u32, ITEMS>(MERGE_PASS(T));                                                                     \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(32 * MERGE_WARPS) merge_csr_##ITEMS##_o64_##S(MERGE_ARGS(T, u64)) { \
        merge_csr<T, u64, ITEMS>(MERGE_PASS(T));                                                                     \
    }

#define MERGE_KERNELS(T, S)              \
    MERGE_EACH_ITEMS(MERGE_ITEMS, T, S) \
    CARRY_FIXUP_KERNEL(merge_csr_fixup, T, S)

MERGE_KERNELS(double, f64)
MERGE_KERNELS(float, f32)
MERGE_KERNELS(half_t, f16)
