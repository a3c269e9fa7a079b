//! Shared machinery: argument checks and a parallel two-pass CSR builder.

use std::cell::{Cell, RefCell};
use std::ops::Range;

use rayon::prelude::*;

use crate::{Csr, Error, Result, Scalar};

thread_local! {
    /// The rows the generators build on this thread ([`in_window`]); `None`: all of them.
    static WINDOW: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    /// [`build_from_columns`]'s buffer for counting a row's columns.
    static COLUMNS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Runs `generate` so that the generator it calls builds only rows `rows` of its matrix (a
/// matrix of `rows.len()` rows, the columns of the whole): the row block that one process of
/// a multi-process run holds. Every generator's rows are functions of their index (and the
/// seed), so the block holds the whole matrix's rows; the memory checks count the block.
pub(crate) fn in_window<R>(rows: Range<usize>, generate: impl FnOnce() -> R) -> R {
    with_window(Some((rows.start, rows.end)), generate)
}

/// Runs `generate` for the whole matrix, whatever window is set (a matrix that a generator
/// builds from another: `blockdiag`'s block).
pub(crate) fn whole<R>(generate: impl FnOnce() -> R) -> R {
    with_window(None, generate)
}

fn with_window<R>(rows: Option<(usize, usize)>, generate: impl FnOnce() -> R) -> R {
    /// Puts the previous window back, on return or unwinding.
    struct Restore(Option<(usize, usize)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            WINDOW.set(self.0);
        }
    }
    let _restore = Restore(WINDOW.replace(rows));
    generate()
}

/// The rows of an `nrows`-row matrix that the generators build now: the window's, clipped,
/// or all.
pub(crate) fn window(nrows: usize) -> Range<usize> {
    match WINDOW.get() {
        Some((start, end)) => start.min(nrows)..end.min(nrows),
        None => 0..nrows,
    }
}

/// Largest row or column count: indices must fit `u32`.
pub const MAX_DIM: u64 = 1 << 32;

/// Largest number of entries a generator agrees to produce (about 800 GB in f64 CSR);
/// beyond it the request is taken for a typo rather than run into an allocation abort.
pub const MAX_NNZ: u64 = 1 << 36;

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Generator(msg.into()))
}

/// `what` (a row or column count) must fit 32-bit indices.
pub(crate) fn check_dim(family: &str, what: &str, n: u64) -> Result<()> {
    if n > MAX_DIM {
        return err(format!(
            "{family}: {what} = {n} is too large for 32-bit indices (at most 2^32 = {MAX_DIM})"
        ));
    }
    Ok(())
}

/// The (expected) entry count must stay below [`MAX_NNZ`], and the host must hold what
/// building `rows` rows of `nnz` entries takes: a column index and an f64 value per entry,
/// and per row the row pointer and the row length [`build_rows`] holds beside it (16
/// bytes), plus `extra` bytes of the family's own scratch. Checked before anything is
/// allocated, so a spec too large is an error with the estimate, not an abort.
pub(crate) fn check_size(family: &str, rows: u64, nnz: f64, extra: f64) -> Result<()> {
    if nnz.is_nan() || nnz > MAX_NNZ as f64 {
        return err(format!(
            "{family}: would produce about {nnz:.3e} entries, more than the limit of 2^36 = {MAX_NNZ}"
        ));
    }
    // Only the window's rows are built (and their share of the entries, for the estimate).
    let built = window(usize::try_from(rows).unwrap_or(usize::MAX)).len() as f64;
    let share = if rows == 0 { 1.0 } else { built / rows as f64 };
    let bytes = nnz * share * 12.0 + (built + 1.0) * 16.0 + extra;
    crate::error::check_host_memory(
        || {
            let entries = if nnz < 1e7 { format!("{nnz:.0}") } else { format!("{nnz:.3e}") };
            format!("{family}: {rows} rows and about {entries} entries")
        },
        bytes.min(u64::MAX as f64) as u64,
    )
}

/// A finite, non-negative mean row length.
pub(crate) fn check_mean(family: &str, mean: f64) -> Result<()> {
    if !(mean.is_finite() && mean >= 0.0) {
        return err(format!("{family}: mean row length must be a finite number >= 0, got {mean}"));
    }
    Ok(())
}

/// Rows per parallel task.
const BLOCK: usize = 2048;

/// Builds an `nrows × ncols` CSR matrix row by row, in parallel and in two passes: `len(r)`
/// gives the length of row `r`, then `fill(r, scratch, cols, vals)` writes exactly that many
/// strictly increasing columns below `ncols` and their values. `scratch` is a buffer the
/// fill may reuse between rows of one task. Both closures must be pure functions of `r`,
/// so the result is independent of the thread count. Under [`in_window`] only the window's
/// rows are built (a matrix of that many rows).
pub(crate) fn build_rows<T, L, F>(nrows: usize, ncols: usize, len: L, fill: F) -> Csr<T>
where
    T: Scalar,
    L: Fn(usize) -> usize + Sync,
    F: Fn(usize, &mut Vec<u32>, &mut [u32], &mut [T]) + Sync,
{
    let rows = window(nrows);
    let (first, nrows) = (rows.start, rows.len());
    let lens: Vec<usize> = rows.into_par_iter().with_min_len(BLOCK).map(&len).collect();
    let mut row_ptr = Vec::with_capacity(nrows + 1);
    row_ptr.push(0usize);
    let mut total = 0usize;
    for &l in &lens {
        total += l;
        row_ptr.push(total);
    }
    drop(lens);
    let mut col_idx = vec![0u32; total];
    let mut values = vec![T::ZERO; total];
    {
        // Split the arrays at block boundaries, one task per block of rows.
        let mut tasks = Vec::with_capacity(nrows.div_ceil(BLOCK));
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        let mut start = 0;
        while start < nrows {
            let end = (start + BLOCK).min(nrows);
            let n = row_ptr[end] - row_ptr[start];
            let (c, cr) = cols_rest.split_at_mut(n);
            let (v, vr) = vals_rest.split_at_mut(n);
            tasks.push((start, end, c, v));
            cols_rest = cr;
            vals_rest = vr;
            start = end;
        }
        let row_ptr = &row_ptr;
        tasks.into_par_iter().with_max_len(1).for_each_init(
            Vec::new,
            |scratch, (start, end, mut c, mut v)| {
                for r in start..end {
                    let n = row_ptr[r + 1] - row_ptr[r];
                    let (rc, cr) = std::mem::take(&mut c).split_at_mut(n);
                    let (rv, vr) = std::mem::take(&mut v).split_at_mut(n);
                    fill(first + r, scratch, rc, rv);
                    debug_assert!(
                        rc.windows(2).all(|w| w[0] < w[1]),
                        "row {r} not strictly increasing"
                    );
                    debug_assert!(
                        rc.iter().all(|&x| (x as usize) < ncols),
                        "row {r} out of bounds"
                    );
                    c = cr;
                    v = vr;
                }
            },
        );
    }
    // SAFETY: row_ptr is the prefix sum of the row lengths; every fill writes strictly
    // increasing columns below ncols (the generators' contract, checked in debug builds
    // and by the tests through `Csr::new_checked`).
    unsafe { Csr::new_unchecked(nrows, ncols, row_ptr, col_idx, values) }
}

/// [`build_rows`] for generators that find a row's columns before they know how many there
/// are: `columns(r, out)` writes row `r`'s columns into `out` (strictly increasing, below
/// `ncols`), once to count them and again to fill the row, and `values(r, cols, vals)` gives
/// their values. Both must be pure functions of `r`.
pub(crate) fn build_from_columns<C, V>(
    nrows: usize, ncols: usize, columns: C, values: V,
) -> Csr<f64>
where
    C: Fn(usize, &mut Vec<u32>) + Sync,
    V: Fn(usize, &[u32], &mut [f64]) + Sync,
{
    let len = |r: usize| {
        COLUMNS.with_borrow_mut(|out| {
            columns(r, out);
            out.len()
        })
    };
    let fill = |r: usize, out: &mut Vec<u32>, cols: &mut [u32], vals: &mut [f64]| {
        columns(r, out);
        cols.copy_from_slice(out);
        values(r, cols, vals);
    };
    build_rows(nrows, ncols, len, fill)
}
