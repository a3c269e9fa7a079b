//! TEB SpMV on the CPU: the blocks over rayon's threads (Algorithm 3 with a task per TEB
//! block), each row of a block a serial loop, written to `y[perm[row]]`; all on the calling
//! thread where threads do not pay (`matrix::threads`).

use rayon::prelude::*;

use super::Teb;
use crate::formats::row_writer::RowWriter;
use crate::matrix::{threads, Scalar};

pub fn spmv<T: Scalar>(a: &Teb<T>, x: &[T], y: &mut [T]) {
    let (row_ptr, cols, vals, perm) = (&a.row_ptr, &a.col_idx, &a.values, &a.perm);
    let out = RowWriter::new(y, perm.len());
    let block = |w: &[u32]| {
        for row in w[0] as usize..w[1] as usize {
            let (start, end) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
            let mut sum = T::ZERO;
            for (&c, &v) in cols[start..end].iter().zip(&vals[start..end]) {
                sum += v * x[c as usize];
            }
            // SAFETY: perm is a permutation of 0..nrows (built by Teb's conversion), y has
            // nrows = perm.len() elements (checked by RowWriter::new), and each reordered row
            // belongs to exactly one block.
            unsafe { out.write(perm[row] as usize, sum) };
        }
    };
    // On the calling thread where rayon's threads do not pay (the same sums either way).
    let blocks = &a.blo_idx;
    threads::cpu_product(
        vals.len() + perm.len(),
        (),
        |()| blocks.windows(2).for_each(block),
        |()| blocks.par_windows(2).for_each(block),
    );
}
