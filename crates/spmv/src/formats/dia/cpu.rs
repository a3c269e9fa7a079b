//! DIA SpMV on the CPU: chunks of rows over rayon's threads; within a chunk the diagonals
//! are streamed one after the other (each row adds them in ascending order, as the kernel).

use super::{diagonals, Dia};
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Dia<T>, x: &[T], y: &mut [T]) {
    diagonals::spmv_dia(&a.offsets, &a.data, x, y, |_, _| {});
}
