//! JDS (jagged diagonal storage): rows sorted by length, stored diagonal by diagonal.
//!
//! The rows are sorted by length, longest first, with a *stable* sort: rows of equal length
//! keep their original order. `perm[i]` is the original row at sorted position `i`. The
//! sorted rows are then stored column-major without padding: jagged diagonal `t` holds the
//! `t`-th entry of every sorted row that has more than `t` entries, in sorted order, and
//! starts at `iter_ptr[t]` (`iter_ptr` has `max_row_len + 1` entries, the last is `nnz`).
//!
//! ```text
//!     | 1 . 2 . |  row 0: 2 entries     perm     = [2, 0, 4, 3, 1]
//!     | . . . . |  row 1: 0             iter_ptr = [0, 4, 7, 8]
//! A = | 3 4 5 . |  row 2: 3                          |diag 0  |diag 1|d2|
//!     | . 6 . . |  row 3: 1             values   = [3, 1, 7, 6, 4, 2, 8, 5]
//!     | . . 7 8 |  row 4: 2             col_idx  = [0, 0, 2, 1, 1, 2, 3, 2]
//! ```
//! Rows 0 and 4 have the same length and keep their order (0 before 4); the empty row 1
//! sorts last and appears in no diagonal.
//!
//! Because the rows are sorted, diagonal `t` holds exactly the sorted rows `0..n_t` with
//! `n_t = iter_ptr[t+1] - iter_ptr[t]`: sorted row `i` has an entry in diagonal `t` iff
//! `i < n_t`, and that entry sits at `iter_ptr[t] + i`. The kernel uses this test instead
//! of a row-length array (no extra array to read; `iter_ptr` is the same for every thread,
//! so its loads are broadcasts). One thread per sorted row walks the diagonals while its
//! row has entries and writes `y[perm[i]]`; rows with no entries (the tail of the sorted
//! order) leave the loop at once and write 0. Neighbouring threads read neighbouring
//! entries of each diagonal (coalesced), and sorted rows give a warp similar trip counts.
//! While diagonal `t + 3` still holds its row, a thread takes diagonals `t .. t + 3` in one
//! step (4 independent loads in flight: the loop's exit test otherwise serialises a long
//! row's loads; this halved the time on a power-law graph), then finishes one at a time.
//!
//! Device indices are 32-bit: `perm`, `iter_ptr` and `col_idx` are `u32`, so conversion
//! fails with [`Error::Format`] when there are more than 2^32 − 1 rows or entries.

mod cpu;
mod gpu;

use rayon::prelude::*;

use super::FormatInfo;
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "jds", source: include_str!("kernel.cu"), headers: &[] };

const NAME: &str = "jds";

/// Entries copied per rayon task during conversion.
const FILL_CHUNK: usize = 1 << 14;

/// A matrix in jagged diagonal storage (see the module doc for the layout).
pub struct Jds<T> {
    nrows: usize,
    ncols: usize,
    /// Sorted position → original row.
    perm: Vec<u32>,
    /// Start of each jagged diagonal, `max_row_len + 1` entries.
    iter_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    mean_row_len: f64,
}

/// Stable sort of the rows by length, descending: sorted position → original row.
pub(crate) fn sort_rows_by_length(row_ptr: &[usize], rows: &mut [u32]) {
    let len = |r: &u32| std::cmp::Reverse(row_ptr[*r as usize + 1] - row_ptr[*r as usize]);
    if rows.len() > 1 << 16 {
        rows.par_sort_by_key(len); // stable
    } else {
        rows.sort_by_key(len); // stable
    }
}

/// Checks the 32-bit limits of the device arrays.
pub(crate) fn check_u32_limits<T: Scalar>(format: &'static str, a: &Csr<T>) -> Result<()> {
    if a.nrows() > u32::MAX as usize {
        return Err(Error::format(format, format!("{} rows exceed 32-bit row indices", a.nrows())));
    }
    super::check_nnz_u32(format, a.nnz())
}

impl<T: Scalar> Jds<T> {
    /// Converts from CSR: a stable sort of the rows by length, then each jagged diagonal
    /// filled in parallel (diagonals and chunks of each diagonal are rayon tasks).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        check_u32_limits(NAME, a)?;
        let (m, nnz) = (a.nrows(), a.nnz());
        let row_ptr = a.row_ptr();
        let mut perm: Vec<u32> = (0..m as u32).into_par_iter().collect();
        sort_rows_by_length(row_ptr, &mut perm);

        // n_t = rows with more than t entries, from the histogram of row lengths.
        let max_len =
            if m == 0 { 0 } else { row_ptr[perm[0] as usize + 1] - row_ptr[perm[0] as usize] };
        let mut count = vec![0usize; max_len + 1];
        for r in 0..m {
            count[row_ptr[r + 1] - row_ptr[r]] += 1;
        }
        // Suffix sums: count[t] becomes the number of rows with length > t.
        let mut above = 0;
        for c in count.iter_mut().rev() {
            let here = *c;
            *c = above;
            above += here;
        }
        let mut iter_ptr = Vec::with_capacity(max_len + 1);
        iter_ptr.push(0u32);
        for t in 0..max_len {
            iter_ptr.push(iter_ptr[t] + count[t] as u32); // ≤ nnz ≤ u32::MAX
        }
        debug_assert_eq!(*iter_ptr.last().unwrap() as usize, nnz);

        // Split the output into one slice per diagonal, then fill them in parallel.
        let mut col_idx = vec![0u32; nnz];
        let mut values = vec![T::ZERO; nnz];
        let mut diagonals = Vec::with_capacity(max_len);
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        for (t, &n) in count.iter().take(max_len).enumerate() {
            let (c, cr) = std::mem::take(&mut cols_rest).split_at_mut(n);
            let (v, vr) = std::mem::take(&mut vals_rest).split_at_mut(n);
            (cols_rest, vals_rest) = (cr, vr);
            diagonals.push((t, c, v));
        }
        let (src_cols, src_vals) = (a.col_idx(), a.values());
        diagonals.into_par_iter().for_each(|(t, cols, vals)| {
            cols.par_chunks_mut(FILL_CHUNK)
                .zip(vals.par_chunks_mut(FILL_CHUNK))
                .enumerate()
                .for_each(|(chunk, (cols, vals))| {
                    let first = chunk * FILL_CHUNK;
                    for (j, (c, v)) in cols.iter_mut().zip(vals.iter_mut()).enumerate() {
                        let p = row_ptr[perm[first + j] as usize] + t;
                        *c = src_cols[p];
                        *v = src_vals[p];
                    }
                });
        });
        Ok(Jds {
            nrows: m,
            ncols: a.ncols(),
            perm,
            iter_ptr,
            col_idx,
            values,
            mean_row_len: a.mean_row_len(),
        })
    }

    /// Sorted position → original row.
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }
    /// Start of each jagged diagonal (`max_row_len + 1` entries, the last is `nnz`).
    pub fn iter_ptr(&self) -> &[u32] {
        &self.iter_ptr
    }
    /// Column of each entry, diagonal after diagonal, sorted rows in order within one.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each entry, in the order of `col_idx`.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Number of jagged diagonals (= the longest row's length).
    pub fn jagged_diagonals(&self) -> usize {
        self.iter_ptr.len() - 1
    }
    /// Device bytes: `perm`, `iter_ptr`, `col_idx` (all `u32`) and `values`.
    pub fn device_bytes(&self) -> usize {
        super::bytes_of!(self.perm, self.iter_ptr, self.col_idx, self.values)
    }
}

impl<T: Scalar> SpmvFormat<T> for Jds<T> {
    fn stats(&self) -> FormatStats {
        let (nnz, diagonals) = (self.values.len(), self.jagged_diagonals());
        FormatStats::new(self.device_bytes(), nnz, nnz, diagonals, self.mean_row_len)
            .with([("jagged_diagonals", diagonals as f64)])
    }
    super::cpu_and_device!(gpu::upload);
}

/// The registry's entry for `jds` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "jds",
        "JDS, rows sorted by length, jagged diagonals column-major; one thread per sorted row",
        |a, _| Ok(Box::new(Jds::new(a)?)),
    )
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
