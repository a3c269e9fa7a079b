//! CSR SpMV on the CPU: rows split over rayon's threads.

use rayon::prelude::*;

use crate::formats::values::EncodedValues;
use crate::matrix::{mul_acc, Csr, Scalar};

pub fn spmv<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) {
    a.spmv_parallel(x, y)
}

/// The same sums in the same order as [`spmv`], with the values decoded from `values`: the
/// same bits.
pub fn spmv_coded<T: Scalar>(a: &Csr<T>, values: &EncodedValues<T>, x: &[T], y: &mut [T]) {
    let row_ptr = a.row_ptr();
    y.par_iter_mut().with_min_len(256).enumerate().for_each(|(r, yr)| {
        let (cols, _) = a.row(r);
        let first = row_ptr[r];
        let sum = cols.iter().enumerate().fold(T::Acc::ZERO, |s, (k, &c)| mul_acc(s, values.get(first + k), x[c as usize]));
        *yr = T::from_acc(sum);
    });
}
