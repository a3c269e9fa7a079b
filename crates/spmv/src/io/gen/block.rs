//! Block-diagonal replication.

use super::build::{build_rows, check_dim, check_size, err};
use crate::{Csr, Result, Scalar};

/// `diag(a, a, ..., a)` with `k` copies: a `k·nrows × k·ncols` matrix, copy `b` occupying
/// rows `b·nrows..` and columns `b·ncols..`. `k = 0` gives a 0 × 0 matrix. Useful to scale
/// a small real matrix up to a size that fills the GPU while keeping its row structure.
pub fn block_diag<T: Scalar>(a: &Csr<T>, k: usize) -> Result<Csr<T>> {
    const F: &str = "blockdiag";
    let (m, n) = (a.nrows(), a.ncols());
    let rows = (m as u64).checked_mul(k as u64);
    let cols = (n as u64).checked_mul(k as u64);
    let (Some(rows), Some(cols)) = (rows, cols) else {
        return err(format!("{F}: {k} copies of a {m} x {n} matrix overflow"));
    };
    check_dim(F, &format!("rows ({k} x {m})"), rows)?;
    check_dim(F, &format!("cols ({k} x {n})"), cols)?;
    check_size(F, rows, a.nnz() as f64 * k as f64, 0.0)?;
    let (rows, cols) = (rows as usize, cols as usize);
    let len = |r: usize| a.row_len(r % m);
    let fill = |r: usize, _: &mut Vec<u32>, c: &mut [u32], v: &mut [T]| {
        let (src_c, src_v) = a.row(r % m);
        let shift = ((r / m) * n) as u32;
        for (dst, &s) in c.iter_mut().zip(src_c) {
            *dst = s + shift;
        }
        v.copy_from_slice(src_v);
    };
    Ok(build_rows(rows, cols, len, fill))
}
