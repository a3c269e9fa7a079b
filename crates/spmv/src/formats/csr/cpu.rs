//! CSR SpMV on the CPU: rows split over rayon's threads (on the calling thread where they do
//! not pay: `matrix::threads`).

use rayon::prelude::*;

use crate::formats::values::columns::Delta16Columns;
use crate::formats::values::EncodedValues;
use crate::matrix::{mul_acc, threads, Csr, Scalar};

pub fn spmv<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) {
    a.spmv_parallel(x, y)
}

/// The same sums in the same order as [`spmv`], with the values decoded from `values` and the
/// columns from `cols` where given: the same bits.
pub fn spmv_coded<T: Scalar>(
    a: &Csr<T>, values: Option<&EncodedValues<T>>, cols: Option<&Delta16Columns>, x: &[T],
    y: &mut [T],
) {
    let row_ptr = a.row_ptr();
    let row = |(r, yr): (usize, &mut T)| {
        let (row_cols, row_vals) = a.row(r);
        let first = row_ptr[r];
        let sum = (0..row_cols.len()).fold(T::Acc::ZERO, |s, k| {
            let v = values.map_or(row_vals[k], |v| v.get(first + k));
            let c = cols.map_or(row_cols[k], |c| c.col(r, first + k));
            mul_acc(s, v, x[c as usize])
        });
        *yr = T::from_acc(sum);
    };
    // On the calling thread where rayon's threads do not pay (the same sums either way).
    threads::cpu_product(
        a.cpu_work(),
        y,
        |y| y.iter_mut().enumerate().for_each(row),
        |y| y.par_iter_mut().with_min_len(256).enumerate().for_each(row),
    );
}
