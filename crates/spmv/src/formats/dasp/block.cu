// DASP's block kernels over full values (dasp.cuh's kernel over common.cuh's BlockColumns):
// BLOCK_TILE columns of Y = α·A·X + β·Y per launch, row-major (`_row`) or column-major
// (`_col`) X and Y, with 32-bit slot indices and, as `_o64`, 64-bit ones. A module of their
// own: only block products compile it.

DASP_FULL_VALUES(DASP_BLOCK_KERNELS)
