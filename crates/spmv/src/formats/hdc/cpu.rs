//! HDC SpMV on the CPU: chunks of rows over rayon's threads; the DIA part streamed diagonal
//! by diagonal, then each row's CSR entries.

use super::Hdc;
use crate::formats::dia::diagonals;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Hdc<T>, x: &[T], y: &mut [T]) {
    diagonals::spmv_dia(&a.offsets, &a.data, x, y, |row0, out| {
        for (l, s) in out.iter_mut().enumerate() {
            let (begin, end) = (a.row_ptr[row0 + l] as usize, a.row_ptr[row0 + l + 1] as usize);
            for (&c, &v) in a.col_idx[begin..end].iter().zip(&a.values[begin..end]) {
                *s += v * x[c as usize];
            }
        }
    });
}
