//! COO SpMV on the CPU, over the triplet arrays (sorted by row).
//!
//! Both paths cut the entries into chunks that run in parallel. A chunk *owns* a contiguous
//! range of `y`: the rows whose last entry lies in the chunk plus the empty rows just
//! before them (the last chunk also owns the empty rows at the end), so parallel chunks
//! write disjoint slices of `y`.

use rayon::prelude::*;

use super::Triplets;
use crate::matrix::Scalar;

/// Entries per parallel chunk of [`accumulate`] (cut at the next row start).
const ACCUMULATE_CHUNK: usize = 8192;

/// First row owned by the chunk that starts at entry `b` (`0 < b < nnz`): the row of entry
/// `b` when it continues from entry `b - 1`, else the row after the one entry `b - 1` ends.
fn owned_from(rows: &[u32], b: usize) -> usize {
    let p = rows[b - 1];
    if rows[b] == p {
        p as usize
    } else {
        p as usize + 1
    }
}

/// Splits `y` at the chunks' first owned rows: `bounds` are chunk starts (entry indices,
/// `bounds[0] = 0`, each below `nnz`); chunk `k` gets `(first row, slice)`, the last chunk
/// runs to the end of `y`.
fn split_owned<'a, T>(
    rows: &[u32], bounds: &[usize], mut y: &'a mut [T],
) -> Vec<(usize, &'a mut [T])> {
    let mut out = Vec::with_capacity(bounds.len());
    let mut offset = 0;
    for k in 0..bounds.len() {
        let end =
            if k + 1 < bounds.len() { owned_from(rows, bounds[k + 1]) } else { offset + y.len() };
        let (head, tail) = std::mem::take(&mut y).split_at_mut(end - offset);
        out.push((offset, head));
        y = tail;
        offset = end;
    }
    out
}

/// `y[row] += val · x[col]` for every entry (what the atomic kernel does; the caller zeroes
/// `y` or, in HYB, has written the ELL part). Chunks of about 8192 entries cut at row
/// starts run in parallel; each adds its entries in order.
pub(crate) fn accumulate<T: Scalar>(t: &Triplets<T>, x: &[T], y: &mut [T]) {
    accumulate_chunked(t, x, y, ACCUMULATE_CHUNK)
}

/// [`accumulate`] with chunks of about `chunk` entries (at least one row each).
pub(crate) fn accumulate_chunked<T: Scalar>(t: &Triplets<T>, x: &[T], y: &mut [T], chunk: usize) {
    assert!(chunk > 0);
    let (rows, cols, vals) = (&t.rows, &t.cols, &t.vals);
    let nnz = vals.len();
    if nnz == 0 {
        return;
    }
    debug_assert!(rows.windows(2).all(|w| w[0] <= w[1]), "COO rows must be sorted");
    let mut bounds = vec![0];
    loop {
        let target = bounds[bounds.len() - 1] + chunk;
        if target >= nnz {
            break;
        }
        let row = rows[target - 1];
        let next = target + rows[target..].partition_point(|&r| r == row);
        if next >= nnz {
            break;
        }
        bounds.push(next);
    }
    let parts = split_owned(rows, &bounds, y);
    parts.into_par_iter().enumerate().for_each(|(k, (first, part))| {
        let end = bounds.get(k + 1).copied().unwrap_or(nnz);
        for i in bounds[k]..end {
            part[rows[i] as usize - first] += vals[i] * x[cols[i] as usize];
        }
    });
}

/// The first pass of the segmented reduction, chunks of `chunk` entries in parallel: each
/// chunk zeroes the rows it owns, stores the in-chunk sum of every row that ends inside it,
/// and returns its carry, `(row, partial sum)` of its last row when that row continues
/// into the next chunk. `nnz > 0`.
pub(crate) fn segmented_chunks<T: Scalar>(
    t: &Triplets<T>, x: &[T], y: &mut [T], chunk: usize,
) -> Vec<Option<(u32, T)>> {
    let (rows, cols, vals) = (&t.rows, &t.cols, &t.vals);
    let nnz = vals.len();
    assert!(chunk > 0 && nnz > 0);
    let bounds: Vec<usize> = (0..nnz).step_by(chunk).collect();
    let parts = split_owned(rows, &bounds, y);
    parts
        .into_par_iter()
        .zip(bounds.par_iter())
        .map(|((first, part), &c0)| {
            part.fill(T::ZERO);
            let c1 = (c0 + chunk).min(nnz);
            let mut run = T::ZERO;
            for i in c0..c1 {
                let row = rows[i];
                let head = i == c0 || rows[i - 1] != row;
                let v = vals[i] * x[cols[i] as usize];
                run = if head { v } else { run + v };
                let continues = i + 1 < nnz && rows[i + 1] == row;
                if !continues {
                    part[row as usize - first] = run;
                } else if i + 1 == c1 {
                    return Some((row, run));
                }
            }
            None
        })
        .collect()
}

/// `y = A·x` by the segmented reduction of `coo-segmented` with chunks of `chunk` entries:
/// [`segmented_chunks`], then each run of equal carry rows is summed in chunk order and
/// added to the row's value (`y[row] + (c_first + … + c_last)`, as the GPU's second kernel).
pub(crate) fn spmv_segmented<T: Scalar>(t: &Triplets<T>, x: &[T], y: &mut [T], chunk: usize) {
    if t.vals.is_empty() {
        y.par_iter_mut().for_each(|v| *v = T::ZERO);
        return;
    }
    let carries = segmented_chunks(t, x, y, chunk);
    let mut carries = carries.into_iter().flatten().peekable();
    while let Some((row, mut sum)) = carries.next() {
        while let Some(&(_, v)) = carries.peek().filter(|(r, _)| *r == row) {
            sum += v;
            carries.next();
        }
        let r = row as usize;
        y[r] += sum;
    }
}
