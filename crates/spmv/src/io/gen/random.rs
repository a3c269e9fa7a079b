//! Random sparsity patterns: uniform row lengths, power-law row lengths, a few long rows.
//!
//! Row `r` draws from its own stream `Rng::stream(seed, TAG, r)`; an entry's value is a
//! hash of `(seed, r, c)` (see [`super::rng::entry_value`]), uniform in (-1, 1) and exact in
//! `f32`. Columns within a row are distinct, uniform over all `k`-subsets of the columns.

use rayon::prelude::*;

use super::build::{build_rows, check_dim, check_mean, check_size, err};
use super::rng::{entry_value, pareto_weight, Rng};
use crate::{Csr, Result};

const TAG_RANDOM: u64 = 0x7261_6E64_6F6D; // "random"
const TAG_POWER: u64 = 0x706F_7765_726C_6177; // "powerlaw"
const TAG_LONG: u64 = 0x6C6F_6E67_726F_7773; // "longrows"

/// Writes `k` distinct values of `[0, n)`, sorted, into `out` (all of them when `k >= n`).
/// Sparse draws (k ≤ n/4) sample with replacement, sort, drop repeats and top up; denser
/// ones use selection sampling (Knuth's algorithm S), one pass over `[0, n)`.
pub(crate) fn sample_distinct(rng: &mut Rng, n: u64, k: usize, out: &mut Vec<u32>) {
    out.clear();
    if k as u64 >= n {
        out.extend((0..n).map(|c| c as u32));
        return;
    }
    if (k as u64) <= n / 4 {
        while out.len() < k {
            let need = k - out.len();
            out.extend((0..need).map(|_| rng.below(n) as u32));
            out.sort_unstable();
            out.dedup();
        }
    } else {
        let mut left = k as u64;
        let mut i = 0u64;
        while left > 0 {
            if rng.below(n - i) < left {
                out.push(i as u32);
                left -= 1;
            }
            i += 1;
        }
    }
}

/// Fills a row from a sorted column list, with the hashed values of `seed`.
fn emit(seed: u64, r: usize, src: &[u32], cols: &mut [u32], vals: &mut [f64]) {
    cols.copy_from_slice(src);
    for (v, &c) in vals.iter_mut().zip(src) {
        *v = entry_value(seed, r, c);
    }
}

pub(crate) fn check_random(nrows: usize, ncols: usize, mean_row_len: f64) -> Result<()> {
    const F: &str = "random";
    check_dim(F, "rows", nrows as u64)?;
    check_dim(F, "cols", ncols as u64)?;
    check_mean(F, mean_row_len)?;
    check_size(F, nrows as u64, nrows as f64 * mean_row_len.min(ncols as f64), 0.0)
}

/// An `nrows × ncols` matrix whose row lengths are uniform on `{0, 1, ..., ⌊2·mean⌋}` (mean
/// `mean_row_len` when `2·mean` is a whole number, close to it otherwise; capped at `ncols`),
/// with distinct uniformly random columns and values uniform in (-1, 1).
pub fn random_uniform(
    nrows: usize, ncols: usize, mean_row_len: f64, seed: u64,
) -> Result<Csr<f64>> {
    check_random(nrows, ncols, mean_row_len)?;
    let mean = mean_row_len.min(ncols as f64);
    let width = 2.0 * mean + 1.0;
    let draw_len = move |rng: &mut Rng| ((rng.unit() * width) as usize).min(ncols);
    let len = move |r: usize| draw_len(&mut Rng::stream(seed, TAG_RANDOM, r as u64));
    let fill = move |r: usize, scratch: &mut Vec<u32>, cols: &mut [u32], vals: &mut [f64]| {
        let mut rng = Rng::stream(seed, TAG_RANDOM, r as u64);
        let k = draw_len(&mut rng);
        sample_distinct(&mut rng, ncols as u64, k, scratch);
        emit(seed, r, scratch, cols, vals);
    };
    Ok(build_rows(nrows, ncols, len, fill))
}

pub(crate) fn check_power_law(n: usize, mean_row_len: f64, exponent: f64) -> Result<()> {
    const F: &str = "powerlaw";
    check_dim(F, "n", n as u64)?;
    check_mean(F, mean_row_len)?;
    if !(exponent.is_finite() && exponent > 1.0) {
        return err(format!(
            "{F}: exp (exponent) must be a finite number > 1 (row-length density ∝ len^-exp), got {exponent}"
        ));
    }
    // The row weights and lengths (8 bytes each) live beside the rows built.
    check_size(F, n as u64, n as f64 * mean_row_len.min(n as f64), 8.0 * n as f64)
}

/// An `n × n` matrix with power-law row lengths: each row draws a Pareto weight
/// `w = U^(-1/(exponent-1))` (density ∝ w^-exponent, w ≥ 1), and row lengths are
/// `min(n, λ·w)`, randomly rounded, with `λ` chosen so the expected total is `n·mean_row_len`
/// (the capped rows' excess goes to the others). Columns are distinct and uniformly random.
/// `exponent` must be > 1; between 1 and 2 the distribution has no mean and a few rows take
/// most entries, above 3 the lengths are nearly uniform.
pub fn power_law(n: usize, mean_row_len: f64, exponent: f64, seed: u64) -> Result<Csr<f64>> {
    check_power_law(n, mean_row_len, exponent)?;
    let mean = mean_row_len.min(n as f64);
    let inv = 1.0 / (exponent - 1.0);
    // Weights (capped at 1e150 so their sum stays finite), computed without libm so the
    // same seed gives the same bits on every platform.
    let weights: Vec<f64> = (0..n)
        .into_par_iter()
        .with_min_len(4096)
        .map(|r| {
            let mut rng = Rng::stream(seed, TAG_POWER, r as u64);
            let u = 1.0 - rng.unit(); // (0, 1]
            pareto_weight(u, inv)
        })
        .collect();
    let lambda = water_fill(&weights, n as f64, n as f64 * mean);
    let lens: Vec<usize> = weights
        .par_iter()
        .enumerate()
        .with_min_len(4096)
        .map(|(r, &w)| {
            let mut rng = Rng::stream(seed, TAG_POWER ^ 1, r as u64);
            let x = (lambda * w).min(n as f64);
            ((x + rng.unit()).floor() as usize).min(n)
        })
        .collect();
    drop(weights);
    let lens = &lens;
    let fill = move |r: usize, scratch: &mut Vec<u32>, cols: &mut [u32], vals: &mut [f64]| {
        let mut rng = Rng::stream(seed, TAG_POWER ^ 2, r as u64);
        sample_distinct(&mut rng, n as u64, lens[r], scratch);
        emit(seed, r, scratch, cols, vals);
    };
    Ok(build_rows(n, n, |r| lens[r], fill))
}

/// The scale `λ` with `Σ min(cap, λ·w_i) = target` (weights > 0); all rows at `cap` when
/// the target is out of reach. Exact: sort descending, find how many rows are capped.
fn water_fill(weights: &[f64], cap: f64, target: f64) -> f64 {
    if weights.is_empty() || target <= 0.0 {
        return 0.0;
    }
    let mut w = weights.to_vec();
    w.par_sort_unstable_by(|a, b| b.total_cmp(a));
    // suffix[j] = Σ_{i ≥ j} w[i]
    let mut suffix = vec![0.0; w.len() + 1];
    for j in (0..w.len()).rev() {
        suffix[j] = suffix[j + 1] + w[j];
    }
    for j in 0..w.len() {
        // Rows 0..j capped, the rest scaled by λ.
        let lambda = (target - j as f64 * cap) / suffix[j];
        if lambda <= 0.0 {
            break;
        }
        if lambda * w[j] <= cap {
            return lambda;
        }
    }
    f64::INFINITY // every row capped
}

pub(crate) fn check_long_rows(
    n: usize, short_len: usize, long_count: usize, long_len: usize,
) -> Result<()> {
    const F: &str = "longrows";
    check_dim(F, "n", n as u64)?;
    if long_count > n {
        return err(format!("{F}: count = {long_count} long rows do not fit in n = {n} rows"));
    }
    // A row cannot hold more distinct columns than there are: refuse rather than clamp (an
    // empty matrix has no rows to hold them).
    for (key, len) in [("short", short_len), ("long", long_len)] {
        if n > 0 && len > n {
            return err(format!("{F}: {key} = {len} entries per row exceed the n = {n} columns"));
        }
    }
    let nnz = (n - long_count) as f64 * short_len as f64 + long_count as f64 * long_len as f64;
    check_size(F, n as u64, nnz, 4.0 * long_count as f64)
}

/// An `n × n` matrix where every row has `short_len` distinct random columns except
/// `long_count` randomly chosen rows with `long_len` (both at most `n`). The
/// classic worst case for ELLPACK-like formats and for one-thread-per-row kernels.
pub fn long_rows(
    n: usize, short_len: usize, long_count: usize, long_len: usize, seed: u64,
) -> Result<Csr<f64>> {
    check_long_rows(n, short_len, long_count, long_len)?;
    let (short, long) = (short_len.min(n), long_len.min(n)); // equal unless n = 0
    let mut which = Vec::new();
    sample_distinct(&mut Rng::stream(seed, TAG_LONG, u64::MAX), n as u64, long_count, &mut which);
    let which = &which;
    let len = move |r: usize| if which.binary_search(&(r as u32)).is_ok() { long } else { short };
    let fill = move |r: usize, scratch: &mut Vec<u32>, cols: &mut [u32], vals: &mut [f64]| {
        let mut rng = Rng::stream(seed, TAG_LONG, r as u64);
        sample_distinct(&mut rng, n as u64, cols.len(), scratch);
        emit(seed, r, scratch, cols, vals);
    };
    Ok(build_rows(n, n, len, fill))
}
