//! ELL SpMV on the CPU, over the column-major arrays: blocks of 64 consecutive rows run in
//! parallel; inside a block the slots are swept column by column (slot t of all 64 rows is
//! contiguous), each row stopping at its own length, as the GPU's threads do.

use rayon::prelude::*;

use super::Ell;
use crate::matrix::Scalar;

const ROWS_PER_TASK: usize = 64;

pub fn spmv<T: Scalar>(a: &Ell<T>, x: &[T], y: &mut [T]) {
    debug_assert_eq!((x.len(), y.len()), (a.ncols, a.nrows), "callers check the lengths");
    let m = a.nrows;
    y.par_chunks_mut(ROWS_PER_TASK).enumerate().for_each(|(b, y_block)| {
        let r0 = b * ROWS_PER_TASK;
        let lens = &a.row_len[r0..r0 + y_block.len()];
        let longest = lens.iter().copied().max().unwrap_or(0) as usize;
        y_block.fill(T::ZERO);
        for t in 0..longest {
            let slots = t * m + r0..t * m + r0 + y_block.len();
            let (cols, vals) = (&a.col[slots.clone()], &a.val[slots]);
            for (i, yr) in y_block.iter_mut().enumerate() {
                if t < lens[i] as usize {
                    *yr += vals[i] * x[cols[i] as usize];
                }
            }
        }
    });
}
