//! LightSpMV on the CPU: the same dynamic row distribution, with rayon's threads in place
//! of warps. Every thread takes the next batch of rows from a shared atomic counter until
//! none are left, so a thread that drew long rows simply takes fewer batches.
//!
//! Each row is summed in the kernel's order: `lanes` partial sums, partial `l` adding the
//! row's entries `l, l + lanes, ...` (for 32 lanes and a row longer than 32, positions
//! counted from the row's start rounded down to a multiple of 32), then combined by the
//! shuffle tree (`p[l] += p[l + offset]` for offset = lanes/2 ... 1). The result therefore
//! never depends on which thread took the row. (The GPU contracts `s + a·x` into an FMA,
//! the CPU does not: the two agree to rounding, not bit for bit.)

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::LightSpmv;
use crate::formats::row_writer::RowWriter;
use crate::formats::shuffle_down_sum;
use crate::matrix::Scalar;

/// Entries a thread takes per fetch from the counter (in whole rows, at least one): enough
/// to make the atomic negligible, small enough to balance rows of very different lengths.
const ENTRIES_PER_FETCH: usize = 4096;

/// Rows per fetch for a matrix with this mean row length.
pub(super) fn rows_per_fetch(mean_row_len: f64) -> usize {
    (ENTRIES_PER_FETCH as f64 / mean_row_len.max(1.0)).clamp(1.0, ENTRIES_PER_FETCH as f64) as usize
}

/// One row summed as the kernel's vector of `lanes` lanes sums it.
#[inline]
pub(super) fn row_sum<T: Scalar>(
    start: usize, cols: &[u32], vals: &[T], x: &[T], lanes: usize,
) -> T {
    let mut partial = [T::ZERO; 32];
    // Position of entry 0 within its lane group: 0, or start mod 32 in the aligned case.
    let shift = if lanes == 32 && cols.len() > 32 { start % 32 } else { 0 };
    for (k, (&c, &v)) in cols.iter().zip(vals).enumerate() {
        partial[(k + shift) % lanes] += v * x[c as usize];
    }
    shuffle_down_sum(&mut partial[..lanes])
}

pub fn spmv<T: Scalar>(a: &LightSpmv<T>, x: &[T], y: &mut [T]) {
    let csr = &a.csr;
    debug_assert_eq!(x.len(), csr.ncols(), "callers check the lengths");
    let (m, lanes) = (csr.nrows(), a.lanes as usize);
    let batch = rows_per_fetch(csr.mean_row_len());
    let row_counter = AtomicUsize::new(0);
    let out = RowWriter::new(y, csr.nrows());
    // One worker per thread; a worker that starts late (or runs after another on the same
    // thread) finds fewer rows left, which is the point of the counter.
    (0..rayon::current_num_threads()).into_par_iter().with_max_len(1).for_each(|_| loop {
        let first = row_counter.fetch_add(batch, Ordering::Relaxed);
        if first >= m {
            break;
        }
        for r in first..(first + batch).min(m) {
            let (cols, vals) = csr.row(r);
            let sum = row_sum(csr.row_ptr()[r], cols, vals, x, lanes);
            // SAFETY: r < m = y.len(), and the counter hands each row to exactly one worker.
            unsafe { out.write(r, sum) };
        }
    });
}
