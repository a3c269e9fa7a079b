//! Compressed sparse row storage, the hub every format converts from.
//!
//! ```text
//!     | 1 . 2 |      row_ptr = [0, 2, 2, 5]      (row r is row_ptr[r]..row_ptr[r+1])
//! A = | . . . |      col_idx = [0, 2, 0, 1, 2]
//!     | 3 4 5 |      values  = [1, 2, 3, 4, 5]
//! ```
//! Row offsets are `usize` so a host matrix may hold more than 2^31 (or 2^32) entries;
//! a GPU path that stores 32-bit offsets checks `nnz` and returns a clear error instead.
//! Column indices are `u32`, strictly increasing within a row (no duplicates).
//!
//! The three arrays are shared (`Arc`), and a matrix is never changed after it is built, so
//! `clone` copies no entries: a format that keeps the CSR it was built from (CSR-vector,
//! merge-CSR, CSR5 …) costs no second copy of a matrix that fills most of the host's memory.
//! A block of rows ([`Csr::row_block`]) shares its runs of the larger matrix's columns and
//! values the same way: a distributed matrix's parts are cut from the input without copying it.

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use super::{mul_acc, threads, Coo, Scalar};
use crate::error::{Error, Result};

/// A sparse matrix in compressed sparse row form (layout and invariants in the module doc);
/// immutable once built, its arrays shared between clones.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr<T> {
    nrows: usize,
    ncols: usize,
    row_ptr: Shared<usize>,
    col_idx: Shared<u32>,
    values: Shared<T>,
}

/// An array shared between matrices: the whole of a vector, or a run of it (a block of a
/// larger matrix's rows, [`Csr::row_block`], shares that matrix's columns and values).
#[derive(Clone, Debug)]
struct Shared<V> {
    all: Arc<Vec<V>>,
    run: Range<usize>,
}

impl<V: Clone> Shared<V> {
    /// Entries `within` of this array, shared.
    fn sub(&self, within: Range<usize>) -> Self {
        let start = self.run.start + within.start;
        Shared { all: self.all.clone(), run: start..start + within.len() }
    }
    /// The entries as a vector of their own, copied only when another matrix still shares
    /// them (or this is a run of a longer vector).
    fn into_vec(mut self) -> Vec<V>
    where
        V: Send + Sync,
    {
        if self.run == (0..self.all.len()) {
            match Arc::try_unwrap(self.all) {
                Ok(v) => return v,
                Err(all) => self.all = all,
            }
        }
        self.all[self.run].par_iter().cloned().collect()
    }
}

impl<V> From<Vec<V>> for Shared<V> {
    fn from(v: Vec<V>) -> Self {
        Shared { run: 0..v.len(), all: Arc::new(v) }
    }
}

impl<V> std::ops::Deref for Shared<V> {
    type Target = [V];
    fn deref(&self) -> &[V] {
        &self.all[self.run.clone()]
    }
}

impl<V: PartialEq> PartialEq for Shared<V> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Scalar> Csr<T> {
    /// Builds a CSR matrix after checking every invariant: `row_ptr` has `nrows + 1`
    /// monotone entries starting at 0 and ending at `nnz`, columns are below `ncols` and
    /// strictly increasing within each row.
    pub fn new_checked(
        nrows: usize, ncols: usize, row_ptr: Vec<usize>, col_idx: Vec<u32>, values: Vec<T>,
    ) -> Result<Self> {
        let bad = |msg: String| Err(Error::InvalidMatrix(msg));
        if ncols > u32::MAX as usize + 1 {
            return bad(format!("{ncols} columns do not fit 32-bit column indices"));
        }
        if row_ptr.len() != nrows + 1 {
            return bad(format!(
                "row_ptr has {} entries, expected nrows + 1 = {}",
                row_ptr.len(),
                nrows + 1
            ));
        }
        if col_idx.len() != values.len() {
            return bad(format!("{} column indices but {} values", col_idx.len(), values.len()));
        }
        if row_ptr[0] != 0 || row_ptr[nrows] != col_idx.len() {
            return bad(format!(
                "row_ptr must run from 0 to nnz = {}, found {}..{}",
                col_idx.len(),
                row_ptr[0],
                row_ptr[nrows]
            ));
        }
        if let Some(r) = (0..nrows).find(|&r| row_ptr[r] > row_ptr[r + 1]) {
            return bad(format!("row_ptr decreases at row {r}"));
        }
        let problem = (0..nrows).into_par_iter().find_map_first(|r| {
            let cols = &col_idx[row_ptr[r]..row_ptr[r + 1]];
            if let Some(&c) = cols.iter().find(|&&c| c as usize >= ncols) {
                return Some(format!("row {r} has column {c}, beyond ncols = {ncols}"));
            }
            if let Some(w) = cols.windows(2).find(|w| w[0] >= w[1]) {
                return Some(format!(
                    "row {r} has columns out of order or repeated ({} then {})",
                    w[0], w[1]
                ));
            }
            None
        });
        match problem {
            Some(msg) => bad(msg),
            None => Ok(Csr {
                nrows,
                ncols,
                row_ptr: row_ptr.into(),
                col_idx: col_idx.into(),
                values: values.into(),
            }),
        }
    }

    /// Builds a CSR matrix without checking.
    ///
    /// # Safety
    /// The caller guarantees the invariants listed at [`Csr::new_checked`]; kernels index
    /// `x` by column without bounds checks on the GPU, so a violation is memory-unsafe there.
    pub unsafe fn new_unchecked(
        nrows: usize, ncols: usize, row_ptr: Vec<usize>, col_idx: Vec<u32>, values: Vec<T>,
    ) -> Self {
        debug_assert_eq!(row_ptr.len(), nrows + 1);
        debug_assert_eq!(col_idx.len(), values.len());
        Csr {
            nrows,
            ncols,
            row_ptr: row_ptr.into(),
            col_idx: col_idx.into(),
            values: values.into(),
        }
    }

    /// An `nrows × ncols` matrix with no entries.
    pub fn zeros(nrows: usize, ncols: usize) -> Self {
        Csr {
            nrows,
            ncols,
            row_ptr: vec![0; nrows + 1].into(),
            col_idx: Vec::new().into(),
            values: Vec::new().into(),
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Number of stored entries (explicit zeros included).
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }
    /// Row offsets, `nrows + 1` of them: row `r` is `row_ptr[r]..row_ptr[r + 1]`.
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }
    /// Column of each entry, strictly increasing within a row.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each entry, in the order of `col_idx`.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// The raw parts `(nrows, ncols, row_ptr, col_idx, values)` (each array copied only
    /// when a clone of this matrix still shares it).
    pub fn into_parts(self) -> (usize, usize, Vec<usize>, Vec<u32>, Vec<T>) {
        let (row_ptr, col_idx) = (self.row_ptr.into_vec(), self.col_idx.into_vec());
        (self.nrows, self.ncols, row_ptr, col_idx, self.values.into_vec())
    }

    /// Column indices and values of row `r`.
    #[inline]
    pub fn row(&self, r: usize) -> (&[u32], &[T]) {
        let range = self.row_ptr[r]..self.row_ptr[r + 1];
        (&self.col_idx[range.clone()], &self.values[range])
    }
    /// The rows before `at` and the rows from `at` on, as two matrices (same columns) that
    /// share this matrix's columns and values ([`Csr::row_block`]).
    pub fn split_rows(&self, at: usize) -> (Csr<T>, Csr<T>) {
        (self.row_block(0..at), self.row_block(at..self.nrows))
    }
    /// Rows `rows` as a matrix of their own (same columns) that shares this matrix's columns
    /// and values: only the row offsets of a block that does not start at row 0 are new.
    pub fn row_block(&self, rows: Range<usize>) -> Csr<T> {
        let entries = self.row_ptr[rows.start]..self.row_ptr[rows.end];
        let row_ptr = if entries.start == 0 {
            self.row_ptr.sub(rows.start..rows.end + 1)
        } else {
            let offsets = &self.row_ptr[rows.start..=rows.end];
            offsets.par_iter().map(|&p| p - entries.start).collect::<Vec<_>>().into()
        };
        Csr {
            nrows: rows.len(),
            ncols: self.ncols,
            row_ptr,
            col_idx: self.col_idx.sub(entries.clone()),
            values: self.values.sub(entries),
        }
    }
    /// The same rows and values (shared) in `ncols` columns, with each entry's column
    /// replaced by `col_idx`'s where given (one per entry), else kept.
    ///
    /// # Safety
    /// As [`Csr::new_unchecked`]: every row's columns strictly increasing and below `ncols`.
    pub unsafe fn with_columns(&self, ncols: usize, col_idx: Option<Vec<u32>>) -> Csr<T> {
        debug_assert!(col_idx.as_ref().is_none_or(|c| c.len() == self.nnz()));
        Csr {
            nrows: self.nrows,
            ncols,
            row_ptr: self.row_ptr.clone(),
            col_idx: col_idx.map_or_else(|| self.col_idx.clone(), Shared::from),
            values: self.values.clone(),
        }
    }
    /// Number of entries in row `r` (panics if `r >= nrows`).
    pub fn row_len(&self, r: usize) -> usize {
        self.row_ptr[r + 1] - self.row_ptr[r]
    }
    /// Length of the longest row (0 without rows).
    pub fn max_row_len(&self) -> usize {
        (0..self.nrows).map(|r| self.row_len(r)).max().unwrap_or(0)
    }
    /// `nnz / nrows` (0 without rows).
    pub fn mean_row_len(&self) -> f64 {
        if self.nrows == 0 {
            0.0
        } else {
            self.nnz() as f64 / self.nrows as f64
        }
    }

    /// The same matrix in another precision (values rounded to nearest; the structure shared).
    pub fn cast<U: Scalar>(&self) -> Csr<U> {
        Csr {
            nrows: self.nrows,
            ncols: self.ncols,
            row_ptr: self.row_ptr.clone(),
            col_idx: self.col_idx.clone(),
            values: self
                .values
                .par_iter()
                .map(|v| U::from_f64(v.to_f64()))
                .collect::<Vec<_>>()
                .into(),
        }
    }

    /// Coordinate form, entries in row-major order.
    pub fn to_coo(&self) -> Coo<T> {
        let mut rows = Vec::with_capacity(self.nnz());
        for r in 0..self.nrows {
            rows.extend(std::iter::repeat_n(r as u32, self.row_len(r)));
        }
        // SAFETY: rows < nrows and columns < ncols by the CSR invariants.
        unsafe {
            Coo::new_unchecked(
                self.nrows,
                self.ncols,
                rows,
                self.col_idx.to_vec(),
                self.values.to_vec(),
            )
        }
    }

    /// Aᵀ in CSR: row c holds column c's entries, in the order of their rows (so a product
    /// with it sums each column in row order, the same bits every time). An error for a matrix
    /// whose rows would not fit the transpose's 32-bit column indices.
    pub fn transpose(&self) -> Result<Csr<T>> {
        if self.nrows > u32::MAX as usize + 1 {
            return Err(Error::Unsupported(format!(
                "the transpose of a matrix of {} rows: its columns do not fit 32-bit indices",
                self.nrows
            )));
        }
        let mut row_ptr = vec![0usize; self.ncols + 1];
        for &c in self.col_idx.iter() {
            row_ptr[c as usize + 1] += 1;
        }
        for c in 0..self.ncols {
            row_ptr[c + 1] += row_ptr[c];
        }
        let mut next = row_ptr[..self.ncols].to_vec();
        let mut col_idx = vec![0u32; self.nnz()];
        let mut values = vec![T::ZERO; self.nnz()];
        for r in 0..self.nrows {
            let (cols, vals) = self.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                let at = &mut next[c as usize];
                col_idx[*at] = r as u32;
                values[*at] = v;
                *at += 1;
            }
        }
        Ok(Csr {
            nrows: self.ncols,
            ncols: self.nrows,
            row_ptr: row_ptr.into(),
            col_idx: col_idx.into(),
            values: values.into(),
        })
    }

    /// `y = A·x` serially, summed in `T::Acc` (the simple loop; see `reference` for the oracle).
    pub fn spmv_serial(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        self.rows_into(0, x, y);
    }

    /// Rows `first..first + y.len()` of `A·x` into `y`, one after another.
    fn rows_into(&self, first: usize, x: &[T], y: &mut [T]) {
        let (cols, vals) = (&self.col_idx[..], &self.values[..]);
        let offsets = &self.row_ptr[first..=first + y.len()];
        for (yr, run) in y.iter_mut().zip(offsets.windows(2)) {
            let (cols, vals) = (&cols[run[0]..run[1]], &vals[run[0]..run[1]]);
            let sum = (cols.iter().zip(vals))
                .fold(T::Acc::ZERO, |s, (&c, &v)| mul_acc(s, v, x[c as usize]));
            *yr = T::from_acc(sum);
        }
    }

    /// Whether a CPU product of this matrix always runs on the calling thread
    /// ([`threads::SERIAL_WORK`]).
    pub(crate) fn runs_serially(&self) -> bool {
        self.cpu_work() < threads::SERIAL_WORK
    }

    /// A CPU product's work for [`threads::cpu_product`]: entries plus rows.
    pub(crate) fn cpu_work(&self) -> usize {
        self.nnz() + self.nrows
    }

    /// `parts + 1` row indices from 0 to `nrows` that cut the rows into contiguous runs of
    /// about `nnz / parts` entries each (a run ends at the first row boundary past its
    /// share; rows are never split; without entries the rows are split evenly).
    pub fn balanced_row_starts(&self, parts: usize) -> Vec<usize> {
        let (m, nnz, parts) = (self.nrows, self.nnz(), parts.max(1));
        let mut starts = vec![0usize; parts + 1];
        for (k, start) in starts.iter_mut().enumerate().skip(1) {
            *start = if nnz == 0 {
                m * k / parts
            } else {
                // The first row that begins at or after the k-th share of the entries.
                let share = (nnz as u128 * k as u128 / parts as u128) as usize;
                self.row_ptr.partition_point(|&p| p < share).min(m)
            };
        }
        starts[parts] = m;
        starts
    }

    /// `y = A·x` over rayon's threads in runs of consecutive rows of about equal entries
    /// ([`RUNS_PER_THREAD`] per thread), each run a serial loop; on the calling thread alone
    /// where threads do not pay ([`threads::cpu_product`]). The same sums either way: each
    /// row is summed alone, in its own order.
    pub fn spmv_parallel(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        threads::cpu_product(
            self.cpu_work(),
            y,
            |y| self.rows_into(0, x, y),
            |y| self.rows_over_threads(x, y),
        )
    }

    /// [`Csr::spmv_parallel`]'s runs of rows over rayon's threads.
    fn rows_over_threads(&self, x: &[T], y: &mut [T]) {
        let starts = self.balanced_row_starts(rayon::current_num_threads() * RUNS_PER_THREAD);
        let mut runs = Vec::with_capacity(starts.len() - 1);
        let mut rest = y;
        for w in starts.windows(2) {
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
            runs.push((w[0], run));
            rest = tail;
        }
        runs.into_par_iter().for_each(|(first, y)| self.rows_into(first, x, y));
    }
}

impl<T: Scalar> Csr<T> {
    /// `T = A·X` for a block of `block.k` vectors (X in `block.layout`, of `ncols` rows), into
    /// `t`, row-major (`t[i·k + j]`): each row's entries are read once for every column, and
    /// column j's sums run in the order of [`Csr::spmv_parallel`] (the same bits as A·x_j).
    /// Rows over rayon's threads where they pay, as the single product decides.
    pub(crate) fn block_product(&self, x: &[T], block: crate::operator::Block, t: &mut [T]) {
        let (n, k) = (self.ncols, block.k);
        assert_eq!(x.len(), n * k, "X has the wrong length");
        assert_eq!(t.len(), self.nrows * k, "T has the wrong length");
        if k == 0 {
            return;
        }
        let row_major = block.layout == crate::operator::Layout::RowMajor;
        // Rows first .. first + t.len() / k of T.
        let rows = |first: usize, t: &mut [T]| {
            for (i, out) in t.chunks_mut(k).enumerate() {
                let run = self.row_ptr[first + i]..self.row_ptr[first + i + 1];
                let (cols, vals) = (&self.col_idx[run.clone()], &self.values[run]);
                // BLOCK columns at a time: their sums stay in registers.
                for (j0, out) in (0..k).step_by(BLOCK).zip(out.chunks_mut(BLOCK)) {
                    let mut sums = [T::Acc::ZERO; BLOCK];
                    match (row_major, out.len()) {
                        // Fixed widths keep the sums in vector registers (2× faster on the
                        // 2-core VM, poisson3d:n=100, 8 vectors).
                        (true, 8) => sums_at_width::<T, 8>(cols, vals, x, k, j0, &mut sums),
                        (true, 4) => sums_at_width::<T, 4>(cols, vals, x, k, j0, &mut sums),
                        (true, width) => {
                            for (&c, &v) in cols.iter().zip(vals) {
                                let xs = &x[c as usize * k + j0..][..width];
                                for (sum, &xv) in sums.iter_mut().zip(xs) {
                                    *sum = mul_acc(*sum, v, xv);
                                }
                            }
                        }
                        (false, width) => {
                            for (&c, &v) in cols.iter().zip(vals) {
                                for (jj, sum) in sums[..width].iter_mut().enumerate() {
                                    *sum = mul_acc(*sum, v, x[(j0 + jj) * n + c as usize]);
                                }
                            }
                        }
                    }
                    for (o, &sum) in out.iter_mut().zip(sums.iter()) {
                        *o = T::from_acc(sum);
                    }
                }
            }
        };
        threads::cpu_product(
            self.cpu_work().saturating_mul(k),
            t,
            |t| rows(0, t),
            |t| {
                let starts =
                    self.balanced_row_starts(rayon::current_num_threads() * RUNS_PER_THREAD);
                let mut runs = Vec::with_capacity(starts.len() - 1);
                let mut rest = t;
                for w in starts.windows(2) {
                    let (run, tail) = std::mem::take(&mut rest).split_at_mut((w[1] - w[0]) * k);
                    runs.push((w[0], run));
                    rest = tail;
                }
                runs.into_par_iter().for_each(|(first, t)| rows(first, t));
            },
        )
    }
}

/// One row's sums for vectors j0 .. j0 + W of a row-major X (k a row) into `sums[..W]`, in
/// the single product's order; W fixed at compile time.
#[inline(always)]
fn sums_at_width<T: Scalar, const W: usize>(
    cols: &[u32], vals: &[T], x: &[T], k: usize, j0: usize, sums: &mut [T::Acc; BLOCK],
) {
    let mut acc = [T::Acc::ZERO; W];
    for (&c, &v) in cols.iter().zip(vals) {
        let at = c as usize * k + j0;
        let xs: &[T; W] = x[at..at + W].try_into().expect("W entries");
        for (sum, &xv) in acc.iter_mut().zip(xs) {
            *sum = mul_acc(*sum, v, xv);
        }
    }
    sums[..W].copy_from_slice(&acc);
}

/// Columns of a CPU block product whose sums run together ([`Csr::block_product`]).
const BLOCK: usize = 8;

/// Runs of rows per rayon thread in a CPU product ([`Csr::spmv_parallel`]): several, so that
/// a thread that finishes early takes another. Runs rather than rows as rayon's items: a row
/// of a few entries costs less than rayon's bookkeeping of an item (the product with rows as
/// items was 1.36× slower, geomean over the 22 shared matrices of ≥ 5·10^4 stored entries on
/// 2 cores: docs/auto.md).
const RUNS_PER_THREAD: usize = 8;

#[cfg(test)]
mod tests {

    #[test]
    fn parallel_products_on_either_side_of_the_serial_threshold_are_the_serial_bits() {
        for rows in [100, 40_000] {
            let a = crate::io::gen::generate(&format!("random:rows={rows},mean=5")).unwrap();
            assert_eq!(a.runs_serially(), rows == 100);
            let x: Vec<f64> = (0..a.ncols()).map(|i| 1.0 / (1.0 + i as f64)).collect();
            let (mut serial, mut parallel) = (vec![0.0; a.nrows()], vec![f64::NAN; a.nrows()]);
            a.spmv_serial(&x, &mut serial);
            a.spmv_parallel(&x, &mut parallel);
            let bits = |v: &[f64]| v.iter().map(|t| t.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&serial), bits(&parallel), "{rows} rows");
        }
    }

    #[test]
    fn transpose_swaps_rows_and_columns_and_twice_is_the_matrix() {
        let a = crate::io::gen::generate("random:rows=300,cols=200,mean=5").unwrap();
        let t = a.transpose().unwrap();
        assert_eq!((t.nrows(), t.ncols(), t.nnz()), (200, 300, a.nnz()));
        for r in 0..a.nrows() {
            let (cols, vals) = a.row(r);
            for (&c, &v) in cols.iter().zip(vals) {
                let (tc, tv) = t.row(c as usize);
                let at = tc.binary_search(&(r as u32)).expect("entry in the transpose");
                assert_eq!(tv[at], v);
            }
        }
        assert_eq!(t.transpose().unwrap(), a);
        let empty = super::Csr::<f64>::zeros(0, 5).transpose().unwrap();
        assert_eq!((empty.nrows(), empty.ncols()), (5, 0));
    }

    #[test]
    fn split_rows_gives_the_rows_on_either_side() {
        let a = crate::io::gen::generate("random:rows=300,cols=200,mean=5").unwrap();
        for at in [0, 1, 17, 150, 299, 300] {
            let (front, back) = a.clone().split_rows(at);
            assert_eq!(
                (front.nrows(), back.nrows(), front.ncols(), back.ncols()),
                (at, 300 - at, 200, 200)
            );
            for r in 0..300 {
                let got = if r < at { front.row(r) } else { back.row(r - at) };
                assert_eq!(got, a.row(r), "split at {at}, row {r}");
            }
        }
    }
    use std::sync::Arc;

    #[test]
    fn clones_share_the_entries_and_into_parts_copies_only_shared_arrays() {
        let a = crate::io::gen::generate("kron:scale=12").unwrap();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.col_idx.all, &b.col_idx.all));
        assert!(Arc::ptr_eq(&a.values.all, &b.values.all));
        let cast = a.cast::<f32>();
        assert!(Arc::ptr_eq(&a.row_ptr.all, &cast.row_ptr.all));
        let (m, n, p, c, v) = b.into_parts(); // a still shares them: copied
        assert_eq!(super::Csr::new_checked(m, n, p, c, v).unwrap(), a);
        let e = super::Csr::<f32>::zeros(3, 0);
        assert_eq!(e.clone(), e);
    }

    #[test]
    fn row_blocks_share_the_entries_and_copy_out_only_their_own() {
        let a = crate::io::gen::generate("random:rows=300,cols=200,mean=5").unwrap();
        for rows in [0..300, 0..0, 0..17, 17..300, 150..151, 299..300, 300..300] {
            let block = a.row_block(rows.clone());
            assert!(Arc::ptr_eq(&a.values.all, &block.values.all), "{rows:?}");
            assert_eq!((block.nrows(), block.ncols()), (rows.len(), 200));
            assert_eq!(block.row_ptr()[0], 0);
            for r in rows.clone() {
                assert_eq!(block.row(r - rows.start), a.row(r), "block {rows:?}, row {r}");
            }
            let (_, _, p, c, v) = block.clone().into_parts();
            assert_eq!(super::Csr::new_checked(rows.len(), 200, p, c, v).unwrap(), block);
            // A block equals the same rows built on their own.
            let own = super::Csr::new_checked(
                rows.len(),
                200,
                block.row_ptr().to_vec(),
                block.col_idx().to_vec(),
                block.values().to_vec(),
            );
            assert_eq!(own.unwrap(), block);
        }
        let (front, _) = a.split_rows(100);
        // SAFETY: every column + 1 stays increasing and below 201.
        let shifted = unsafe {
            front.with_columns(201, Some(front.col_idx().iter().map(|c| c + 1).collect()))
        };
        assert!(Arc::ptr_eq(&shifted.values.all, &a.values.all));
        assert_eq!(shifted.row(5).0.iter().map(|c| c - 1).collect::<Vec<_>>(), front.row(5).0);
        // SAFETY: the same columns in as many columns.
        let same = unsafe { front.with_columns(200, None) };
        assert_eq!(same, front);
    }
}
