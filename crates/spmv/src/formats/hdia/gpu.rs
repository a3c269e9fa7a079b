//! Upload of the HDIA kernel.

use super::{Hdia, KERNELS, NAME};
use crate::error::Result;
use crate::formats::dia::diagonals;
use crate::formats::{arg_u32, Arg, OneKernel};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub(super) fn upload<T: Scalar>(gpu: &Gpu, a: &Hdia<T>) -> Result<OneKernel<T>> {
    let args = vec![
        Arg::Dims,
        // Below 2^31 by the conversion's checks.
        Arg::Count(arg_u32(NAME, "hack rows", a.hack_rows)?),
        Arg::u32s(gpu, &a.blocks.diag_ptr)?,
        Arg::i32s(gpu, &a.blocks.offsets)?,
        Arg::values(gpu, &a.blocks.values)?,
    ];
    let kernel = diagonals::row_kernel::<T>(gpu, &KERNELS, "hdia", a.nrows)?;
    // SAFETY: the arguments match hdia_<T>(u32, u32, u32, const u32*, const int*, const T*,
    // const T*, T*). Threads stop at m = y.len(); hack r / h < hacks, so hack_offsets
    // (hacks + 1 entries) is read in bounds; stored diagonal i < hack_offsets[hacks] =
    // offsets.len() and its slots i*h + lane < data.len(); the column guard keeps x
    // indices below n = x.len().
    Ok(unsafe { OneKernel::new(kernel, args) })
}
