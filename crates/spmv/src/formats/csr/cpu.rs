//! CSR SpMV on the CPU: rows split over rayon's threads.

use crate::matrix::{Csr, Scalar};

pub fn spmv<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) {
    a.spmv_parallel(x, y)
}
