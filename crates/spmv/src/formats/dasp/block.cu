// DASP's block kernels over full values (dasp.cuh's BlockColumns): BLOCK_TILE columns of
// Y = α·A·X + β·Y per launch, row-major (`_row`) or column-major (`_col`) X and Y, with 32-bit
// slot indices and, as `_o64`, 64-bit ones. A module of their own: only block products
// compile it.

DASP_BLOCK_KERNELS(double, f64, , ValuesFull<double>, u32)
DASP_BLOCK_KERNELS(float, f32, , ValuesFull<float>, u32)
DASP_BLOCK_KERNELS(half_t, f16, , ValuesFull<half_t>, u32)
DASP_BLOCK_KERNELS(double, f64, _o64, ValuesFull<double>, u64)
DASP_BLOCK_KERNELS(float, f32, _o64, ValuesFull<float>, u64)
DASP_BLOCK_KERNELS(half_t, f16, _o64, ValuesFull<half_t>, u64)
