//! Upload of the ELL kernel (also HYB's ELL part).

use super::{Ell, KERNELS};
use crate::error::Result;
use crate::formats::{arg_u32, OneKernel};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

/// The ELL kernel over `ell`; it writes every `y[r]`: the sum of the row's ELL entries.
pub(crate) fn upload<T: Scalar>(
    gpu: &Gpu, ell: &Ell<T>, format: &'static str,
) -> Result<OneKernel<T>> {
    let nrows = arg_u32(format, "rows", ell.nrows)?;
    let kernel = Kernel::for_type::<T>(gpu, &KERNELS, "ell", grid_for(ell.nrows as u64, BLOCK)?)?;
    // SAFETY: the arguments match ell_<T>(u32 m, const u32*, const u32*, const T*, const
    // T*, T*); rows < m = y.len() by the bound check; slots t*m + r < m*K since
    // t < row_len[r] <= K; columns < ncols = x.len() (CSR invariants).
    unsafe { OneKernel::entries(gpu, kernel, &[nrows], &[&ell.row_len], (&ell.col, &ell.val)) }
}
