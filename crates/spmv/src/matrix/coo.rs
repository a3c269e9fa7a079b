//! Coordinate (triplet) storage: the form files are read into and generators produce.
//!
//! ```text
//!     | 1 . 2 |      rows = [0, 0, 2, 2, 2]
//! A = | . . . |      cols = [0, 2, 0, 1, 2]
//!     | 3 4 5 |      vals = [1, 2, 3, 4, 5]
//! ```
//! Entries may come in any order and may repeat; converting to CSR sorts them and sums
//! repeated positions (the Matrix Market convention).

use super::{Csr, Scalar};
use crate::error::{Error, Result};

/// A sparse matrix as (row, column, value) triplets in any order, repeats allowed (see the
/// module doc); every index lies inside the matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Coo<T> {
    nrows: usize,
    ncols: usize,
    rows: Vec<u32>,
    cols: Vec<u32>,
    vals: Vec<T>,
}

impl<T: Scalar> Coo<T> {
    /// Checks lengths and that every index is inside the matrix.
    pub fn new_checked(
        nrows: usize, ncols: usize, rows: Vec<u32>, cols: Vec<u32>, vals: Vec<T>,
    ) -> Result<Self> {
        if nrows > u32::MAX as usize + 1 || ncols > u32::MAX as usize + 1 {
            return Err(Error::InvalidMatrix(format!(
                "{nrows} x {ncols} does not fit 32-bit indices"
            )));
        }
        if rows.len() != cols.len() || rows.len() != vals.len() {
            return Err(Error::InvalidMatrix(format!(
                "triplet arrays differ in length: {} rows, {} cols, {} values",
                rows.len(),
                cols.len(),
                vals.len()
            )));
        }
        if let Some(i) = rows.iter().position(|&r| r as usize >= nrows) {
            return Err(Error::InvalidMatrix(format!(
                "entry {i} has row {} beyond nrows = {nrows}",
                rows[i]
            )));
        }
        if let Some(i) = cols.iter().position(|&c| c as usize >= ncols) {
            return Err(Error::InvalidMatrix(format!(
                "entry {i} has column {} beyond ncols = {ncols}",
                cols[i]
            )));
        }
        Ok(Coo { nrows, ncols, rows, cols, vals })
    }

    /// # Safety
    /// Equal lengths and every index inside the matrix (see [`Coo::new_checked`]).
    pub unsafe fn new_unchecked(
        nrows: usize, ncols: usize, rows: Vec<u32>, cols: Vec<u32>, vals: Vec<T>,
    ) -> Self {
        debug_assert!(rows.len() == cols.len() && rows.len() == vals.len());
        Coo { nrows, ncols, rows, cols, vals }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Stored entries, repeats counted.
    pub fn nnz(&self) -> usize {
        self.vals.len()
    }
    /// Row of each triplet.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }
    /// Column of each triplet.
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }
    /// Value of each triplet.
    pub fn vals(&self) -> &[T] {
        &self.vals
    }

    /// Sorts by (row, column) and sums repeated positions. A counting sort by row, then a
    /// sort of each row by column: O(nnz + nrows) plus the per-row sorts.
    pub fn to_csr(&self) -> Csr<T> {
        use rayon::prelude::*;
        let (m, nnz) = (self.nrows, self.nnz());
        let mut row_ptr = vec![0usize; m + 1];
        for &r in &self.rows {
            row_ptr[r as usize + 1] += 1;
        }
        for r in 0..m {
            row_ptr[r + 1] += row_ptr[r];
        }
        let mut next = row_ptr.clone();
        let mut entries: Vec<(u32, T)> = vec![(0, T::ZERO); nnz];
        for i in 0..nnz {
            let r = self.rows[i] as usize;
            entries[next[r]] = (self.cols[i], self.vals[i]);
            next[r] += 1;
        }
        // Sort each row and merge repeats in place; remember each row's merged length.
        let lengths: Vec<usize> = split_rows_mut(&mut entries, &row_ptr)
            .into_par_iter()
            .map(|row| {
                row.sort_unstable_by_key(|e| e.0);
                let mut len = 0;
                for i in 0..row.len() {
                    if len > 0 && row[len - 1].0 == row[i].0 {
                        let v = row[i].1;
                        row[len - 1].1 += v;
                    } else {
                        row[len] = row[i];
                        len += 1;
                    }
                }
                len
            })
            .collect();
        let total: usize = lengths.iter().sum();
        let mut new_ptr = Vec::with_capacity(m + 1);
        new_ptr.push(0);
        let mut col_idx = Vec::with_capacity(total);
        let mut values = Vec::with_capacity(total);
        for r in 0..m {
            for &(c, v) in &entries[row_ptr[r]..row_ptr[r] + lengths[r]] {
                col_idx.push(c);
                values.push(v);
            }
            new_ptr.push(col_idx.len());
        }
        // SAFETY: indices were in range (Coo invariant), rows are sorted and merged.
        unsafe { Csr::new_unchecked(m, self.ncols, new_ptr, col_idx, values) }
    }
}

/// `data` cut into one mutable slice per row: row `r` is `data[row_ptr[r]..row_ptr[r + 1]]`
/// (`row_ptr` starts at 0 and ends at `data.len()`), so rows can be worked on in parallel.
pub(crate) fn split_rows_mut<'a, E>(data: &'a mut [E], row_ptr: &[usize]) -> Vec<&'a mut [E]> {
    let mut rows = Vec::with_capacity(row_ptr.len().saturating_sub(1));
    let mut rest = data;
    for w in row_ptr.windows(2) {
        let (head, tail) = rest.split_at_mut(w[1] - w[0]);
        rows.push(head);
        rest = tail;
    }
    rows
}
