//! AMF-CSR SpMV on the CPU: the sub-blocks over rayon's threads (each owns a contiguous
//! range of rows, so `y` is split safely); inside, each folded row's entries are streamed
//! in order and each row's sum is written when its last entry is reached.

use rayon::prelude::*;

use super::AmfCsr;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &AmfCsr<T>, x: &[T], y: &mut [T]) {
    let (row_ptr, cols, vals) = (&a.row_ptr, &a.col_idx, &a.values);
    // Each sub-block's rows, as a slice of y.
    let mut pieces = Vec::with_capacity(a.sub_blocks());
    let mut rest = y;
    for s in a.sub_block_ptr.windows(2) {
        let (r0, r1) =
            (a.row_block_ptr[s[0] as usize] as usize, a.row_block_ptr[s[1] as usize] as usize);
        let (mine, more) = std::mem::take(&mut rest).split_at_mut(r1 - r0);
        rest = more;
        pieces.push((s[0] as usize..s[1] as usize, r0, mine));
    }
    pieces.into_par_iter().for_each(|(row_blocks, first_row, out)| {
        for k in row_blocks {
            let (r0, r1) = (a.row_block_ptr[k] as usize, a.row_block_ptr[k + 1] as usize);
            // The folded row: entries row_ptr[r0]..row_ptr[r1], split at the row ends.
            let mut row = r0;
            let mut sum = T::ZERO;
            for e in row_ptr[r0] as usize..row_ptr[r1] as usize {
                while row_ptr[row + 1] as usize <= e {
                    out[row - first_row] = sum; // row ended (or is empty)
                    (sum, row) = (T::ZERO, row + 1);
                }
                sum += vals[e] * x[cols[e] as usize];
            }
            while row < r1 {
                out[row - first_row] = sum;
                (sum, row) = (T::ZERO, row + 1);
            }
        }
    });
}
