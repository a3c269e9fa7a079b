//! Upload of the HDC kernels (one product and a block of vectors).

use super::{Hdc, BLOCK_KERNELS, KERNELS, NAME};
use crate::error::Result;
use crate::formats::dia::diagonals;
use crate::formats::{arg_u32, Arg, BlockKernels, LanesRule, OneKernel};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub(super) fn upload<T: Scalar>(gpu: &Gpu, a: &Hdc<T>) -> Result<OneKernel<T>> {
    let args = vec![
        Arg::Dims,
        // Both counts below 2^32 by the conversion's checks.
        Arg::Count(arg_u32(NAME, "diagonals", a.offsets.len())?),
        Arg::i32s(gpu, &a.offsets)?,
        Arg::values(gpu, &a.data)?,
        Arg::Count(arg_u32(NAME, "CSR entries", a.values.len())?),
        Arg::u32s(gpu, &a.row_ptr)?,
        Arg::u32s(gpu, &a.col_idx)?,
        Arg::values(gpu, &a.values)?,
    ];
    let kernel = diagonals::row_kernel::<T>(gpu, &KERNELS, "hdc", a.nrows)?;
    let (tiles, lanes) = ("hdc_block".to_string(), "hdc_lanes".to_string());
    let rule = LanesRule::THREAD_PER_ROW;
    let block = BlockKernels::new(&BLOCK_KERNELS, tiles, lanes, kernel.config(), a.nrows, rule)?;
    // SAFETY: the arguments match HDC_ARGS(T), and block.cu's HDC_BLOCK_ARGS(T) with k after
    // (m, n). Threads stop at m = y.len() (block.cu: the block's rows); data holds
    // diagonals·m slots; row_ptr has m + 1 entries bounding col_idx and values, whose columns
    // are < n by the CSR invariants; the DIA column guard keeps x indices < n (block.cu forms
    // the indices of X and Y in 64 bits).
    Ok(unsafe { OneKernel::new(kernel, args).with_block(block) })
}
