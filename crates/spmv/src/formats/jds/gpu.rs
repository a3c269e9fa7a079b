//! Upload of the JDS kernel.

use super::{Jds, KERNELS, NAME};
use crate::error::Result;
use crate::formats::{arg_u32, OneKernel};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub(super) fn upload<T: Scalar>(gpu: &Gpu, a: &Jds<T>) -> Result<OneKernel<T>> {
    // Both hold by construction (Jds::new checks rows and nnz against u32::MAX, and
    // the diagonal count is at most the longest row ≤ nnz).
    let nrows = arg_u32(NAME, "rows", a.nrows)?;
    let diagonals = arg_u32(NAME, "jagged diagonals", a.jagged_diagonals())?;
    let kernel = Kernel::for_type::<T>(gpu, &KERNELS, "jds", grid_for(a.nrows as u64, BLOCK)?)?;
    // SAFETY: the arguments match JDS_ARGS(T). Threads stop at nrows; offsets stay below
    // iter_ptr[diagonals] = nnz = the length of col_idx and values; columns < ncols =
    // x.len() by the CSR invariants; perm is a permutation of 0..nrows = y.len().
    unsafe {
        OneKernel::entries(
            gpu,
            kernel,
            &[nrows, diagonals],
            &[&a.perm, &a.iter_ptr],
            (&a.col_idx, &a.values),
        )
    }
}
