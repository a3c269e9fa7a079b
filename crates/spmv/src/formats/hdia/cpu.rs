//! HDIA SpMV on the CPU: hacks over rayon's threads, each hack's block streamed diagonal by
//! diagonal into its rows of `y`.

use super::Hdia;
use crate::formats::dia::diagonals;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Hdia<T>, x: &[T], y: &mut [T]) {
    let (h, b) = (a.hack_rows, &a.blocks);
    diagonals::spmv_row_blocks(h, x, y, |k| {
        let (begin, end) = (b.diag_ptr[k] as usize, b.diag_ptr[k + 1] as usize);
        (&b.offsets[begin..end], &b.values[begin * h..end * h])
    });
}
