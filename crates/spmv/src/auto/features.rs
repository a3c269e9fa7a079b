//! The features `auto` chooses by: a few numbers that describe a CSR matrix's shape, row
//! lengths, diagonal structure, locality and value redundancy, computed in two parallel
//! passes over the rows.

use std::collections::HashSet;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::matrix::{Csr, Scalar};

/// The L2 cache of the GPU the model was trained on (the H200's, bytes): sizes are measured
/// against it.
pub const TRAINING_L2_BYTES: f64 = 62_914_560.0;

/// How many numbers [`Features::vector`] gives.
pub const FEATURES: usize = 11;

/// Rows sampled for the diagonal, locality and value features.
pub const SAMPLED_ROWS: usize = 1 << 12;

/// What `auto` knows of a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// Number of rows.
    pub rows: f64,
    /// Number of columns.
    pub cols: f64,
    /// Number of stored entries.
    pub nnz: f64,
    /// Mean entries per row.
    pub mean_row: f64,
    /// Standard deviation of the row lengths over their mean (0 for all rows equal).
    pub row_cv: f64,
    /// The longest row over the mean.
    pub max_over_mean: f64,
    /// Rows without entries, as a fraction.
    pub empty_rows: f64,
    /// Occupied diagonals × rows over nnz: the padding of DIA (1 for full diagonals).
    pub diagonal_fill: f64,
    /// Mean over the rows of the span of their columns over the columns (0: banded, 1: spread).
    pub col_spread: f64,
    /// CSR bytes in f64 (values, columns, offsets, x, y) over the L2 cache.
    pub size_over_l2: f64,
    /// Distinct values over the entries of the sampled rows (0: a few values repeated, as in
    /// a stencil, which the compressed-value variants (`values=auto`) store in a byte or
    /// two; 1: every value different). Tables written before it was a feature read 1.
    #[serde(default = "all_distinct")]
    pub distinct_values: f64,
}

fn all_distinct() -> f64 {
    1.0
}

impl Features {
    /// The features of `a` measured against an L2 cache of `l2_bytes`. Row lengths come from
    /// every row (the offsets only); the diagonals and column spans from at most
    /// [`SAMPLED_ROWS`] rows evenly spaced, so that the cost stays far below a conversion's.
    pub fn of<T: Scalar>(a: &Csr<T>, l2_bytes: f64) -> Self {
        let (m, n, nnz) = (a.nrows(), a.ncols(), a.nnz());
        let mean = if m == 0 { 0.0 } else { nnz as f64 / m as f64 };
        let (sq, max, empty) = (0..m)
            .into_par_iter()
            .map(|r| {
                let len = a.row_len(r);
                ((len as f64 - mean).powi(2), len, usize::from(len == 0))
            })
            .reduce(|| (0.0, 0, 0), |x, y| (x.0 + y.0, x.1.max(y.1), x.2 + y.2));
        // The sample: every step-th row.
        let step = m.div_ceil(SAMPLED_ROWS).max(1);
        let sample: Vec<usize> = (0..m).step_by(step).collect();
        type Sampled = (HashSet<i64>, HashSet<u64>, usize, f64);
        let (diagonals, values, sampled_nnz, span) = sample
            .par_iter()
            .fold(
                || (HashSet::new(), HashSet::new(), 0usize, 0.0),
                |(mut set, mut values, count, span): Sampled, &r| {
                    let (cols, vals) = a.row(r);
                    set.extend(cols.iter().map(|&c| c as i64 - r as i64));
                    values.extend(vals.iter().map(|v| v.to_f64().to_bits()));
                    let row_span = match (cols.iter().min(), cols.iter().max()) {
                        (Some(lo), Some(hi)) => (hi - lo) as f64 / n.max(1) as f64,
                        _ => 0.0,
                    };
                    (set, values, count + cols.len(), span + row_span)
                },
            )
            .reduce(
                || (HashSet::new(), HashSet::new(), 0, 0.0),
                |(mut x, mut vx, cx, sx), (y, vy, cy, sy)| {
                    x.extend(y);
                    vx.extend(vy);
                    (x, vx, cx + cy, sx + sy)
                },
            );
        let m_f = m.max(1) as f64;
        Features {
            rows: m as f64,
            cols: n as f64,
            nnz: nnz as f64,
            mean_row: mean,
            row_cv: if mean > 0.0 { (sq / m_f).sqrt() / mean } else { 0.0 },
            max_over_mean: if mean > 0.0 { max as f64 / mean } else { 0.0 },
            empty_rows: empty as f64 / m_f,
            // Occupied diagonals × sampled rows over sampled entries: DIA's padding ratio.
            diagonal_fill: if sampled_nnz > 0 {
                diagonals.len() as f64 * sample.len() as f64 / sampled_nnz as f64
            } else {
                1.0
            },
            col_spread: span / sample.len().max(1) as f64,
            size_over_l2: (12.0 * nnz as f64 + 4.0 * (m as f64 + 1.0) + 8.0 * (m + n) as f64)
                / l2_bytes,
            distinct_values: if sampled_nnz > 0 {
                values.len() as f64 / sampled_nnz as f64
            } else {
                1.0
            },
        }
    }

    /// The numbers the distance between matrices is measured on (logarithms of the scales).
    pub fn vector(&self) -> [f64; FEATURES] {
        let lg = |v: f64| (v.max(0.0) + 1.0).log10();
        [
            lg(self.rows),
            lg(self.nnz),
            lg(self.mean_row),
            self.row_cv.min(20.0),
            lg(self.max_over_mean),
            self.empty_rows,
            lg(self.diagonal_fill),
            self.col_spread,
            lg(self.size_over_l2),
            self.distinct_values,
            // The longest row in entries: on a small matrix a kernel that gives a row to one
            // group of lanes waits for it, however its mean and spread compare (`Chem97Zt`:
            // 970 entries in a row of 2,541 rows; leave-one-out over the graph table 0.74 →
            // 0.91 there, 0.974 → 0.975 over all; docs/auto.md).
            lg(self.max_over_mean * self.mean_row),
        ]
    }
}
