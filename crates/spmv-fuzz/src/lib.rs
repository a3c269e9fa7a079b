//! What the fuzz targets in `fuzz/` check, as plain functions: `cargo fuzz` drives them
//! with libFuzzer (nightly, see `docs/fuzzing.md`), and this crate's tests replay them on a
//! fixed set of generated inputs so that CI (stable, no libFuzzer) runs the same checks.
//!
//! Each function takes arbitrary bytes. Errors are the expected outcome for most inputs; a
//! panic (including a failed check here) is a bug the fuzzer reports.

use spmv::formats::{self, registry};
use spmv::io::{read_matrix_market_bytes_with, write_matrix_market_to, ReadOptions};
use spmv::reference::{test_vector, Oracle};
use spmv::{Coo, Csr, Scalar};

/// The Matrix Market reader on arbitrary bytes (plain or gzip), in every precision, with
/// and without non-finite values allowed. Whatever it accepts must be a valid CSR matrix
/// whose shape matches the header, and writing it out and reading it back must give the
/// same matrix.
pub fn matrix_market(data: &[u8]) {
    read_and_round_trip::<f64>(data);
    read_and_round_trip::<f32>(data);
    read_and_round_trip::<spmv::f16>(data);
}

/// Row and column counts above which the fuzz targets do not read a file: its row pointers
/// alone would pass libFuzzer's 2 GB allocation limit. Such sizes are refused or read by
/// the memory check, which `crates/spmv-cli/tests/cli/hostile.rs` tests under `ulimit -v`.
const FUZZ_MAX_DIM: usize = 1 << 24;

fn read_and_round_trip<T: Scalar>(data: &[u8]) {
    let header = spmv::io::mtx::read_header_bytes(data);
    if header.as_ref().is_ok_and(|h| h.nrows.max(h.ncols) > FUZZ_MAX_DIM) {
        return;
    }
    for allow_non_finite in [false, true] {
        let options = ReadOptions { allow_non_finite };
        let Ok(a) = read_matrix_market_bytes_with::<T>(data, &options) else { continue };
        let header = header.as_ref().expect("a file that reads has a header that reads");
        assert_eq!(
            (a.nrows(), a.ncols()),
            (header.nrows, header.ncols),
            "shape differs from the size line"
        );
        let (m, n, row_ptr, cols, vals) = a.clone().into_parts();
        let again = Csr::new_checked(m, n, row_ptr, cols, vals)
            .expect("the reader returned an invalid CSR matrix");
        if !allow_non_finite {
            assert!(
                again.values().iter().all(|v| v.to_f64().is_finite()),
                "a non-finite value passed the default check"
            );
        }
        let mut text = Vec::new();
        write_matrix_market_to(&mut text, &a).expect("writing to memory");
        let back =
            read_matrix_market_bytes_with::<T>(&text, &ReadOptions { allow_non_finite: true })
                .expect("what was written reads back");
        assert_eq!(
            (back.nrows(), back.ncols(), back.row_ptr(), back.col_idx()),
            (a.nrows(), a.ncols(), a.row_ptr(), a.col_idx())
        );
        let same = |u: &T, v: &T| {
            u.to_f64().to_bits() == v.to_f64().to_bits()
                || (u.to_f64().is_nan() && v.to_f64().is_nan())
        };
        assert!(
            back.values().iter().zip(a.values()).all(|(u, v)| same(u, v)),
            "values change on a write and read back"
        );
    }
}

/// Parameter values the fuzzer picks from for any format key (valid, invalid and extreme).
const PARAM_VALUES: &[&str] = &[
    "auto", "0", "1", "2", "3", "4", "7", "8", "16", "32", "33", "64", "256", "1000000", "0.5",
    "0.75", "1.0", "-1", "x",
];

/// Reads `data` one byte at a time; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn below(&mut self, n: usize) -> usize {
        let v = usize::from(self.byte()) | usize::from(self.byte()) << 8;
        v % n.max(1)
    }
}

/// One format's CPU path on a matrix and a spec decoded from arbitrary bytes: the spec may
/// be refused (an error, never a panic), and the conversion may decline the matrix; whatever
/// is built must match the oracle for y = A·x (y poisoned with NaN) and for y = α·A·x + β·y.
pub fn formats_cpu(data: &[u8]) {
    let mut bytes = Bytes(data);
    let all = registry::<f64>();
    let info = &all[bytes.below(all.len())];
    let mut spec = info.name.to_string();
    for p in info.params {
        let choice = bytes.byte();
        if choice % 2 == 0 {
            continue; // the default
        }
        spec.push(if spec.contains(':') { ',' } else { ':' });
        spec.push_str(&format!(
            "{}={}",
            p.key,
            PARAM_VALUES[usize::from(choice / 2) % PARAM_VALUES.len()]
        ));
    }
    let precision = bytes.byte() % 3;
    let a = matrix(&mut bytes);
    let Ok(spec) = formats::parse_spec(&spec) else { return };
    match precision {
        0 => check_format::<f64>(&spec, &a),
        1 => check_format::<f32>(&spec, &a.cast()),
        _ => check_format::<spmv::f16>(&spec, &a.cast()),
    }
}

/// A matrix of up to 48 × 48 from the bytes, with rows of every length from 0 to full:
/// entries at decoded positions, or (a flag byte) whole rows and columns filled, with
/// values from a small set that includes exact cancellations and subnormals.
fn matrix(bytes: &mut Bytes) -> Csr<f64> {
    const VALUES: &[f64] =
        &[1.0, -1.0, 0.5, 3.0, -2.25, 1e-300, -7.0, 1e10, 0.0, 1e-320, 65504.0, -1e-3];
    let nrows = bytes.below(49);
    let ncols = bytes.below(49);
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    if nrows > 0 && ncols > 0 {
        let count = bytes.below(400);
        for _ in 0..count {
            let kind = bytes.byte();
            let (r, c) = (bytes.below(nrows), bytes.below(ncols));
            let v = VALUES[usize::from(kind >> 4) % VALUES.len()];
            match kind % 8 {
                0 => (0..ncols).for_each(|c| {
                    rows.push(r as u32);
                    cols.push(c as u32);
                    vals.push(v);
                }),
                1 => (0..nrows).for_each(|r| {
                    rows.push(r as u32);
                    cols.push(c as u32);
                    vals.push(v);
                }),
                _ => {
                    rows.push(r as u32);
                    cols.push(c as u32);
                    vals.push(v);
                }
            }
        }
    }
    Coo::new_checked(nrows, ncols, rows, cols, vals).expect("indices are in range").to_csr()
}

fn check_format<T: Scalar>(spec: &spmv::formats::FormatSpec, a: &Csr<T>) {
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(a, &x);
    if oracle.range_error::<T>().is_some() {
        return; // beyond the precision's range: the benchmark's "unsupported"
    }
    let Ok(format) = formats::build(spec, a) else { return };
    let mut y = vec![T::nan(); a.nrows()];
    format.spmv(&x, &mut y).expect("vectors of the right length");
    let check = oracle.check(&y);
    assert!(
        check.passed(),
        "{spec} in {} on a {} x {} matrix with {} entries: {check:?}",
        T::SUFFIX,
        a.nrows(),
        a.ncols(),
        a.nnz()
    );
    let y0: Vec<T> = (0..a.nrows()).map(|i| T::from_f64(0.25 * (i % 7) as f64 - 0.5)).collect();
    // Σ|a_ij·x_j| per row: α·A·x + β·y that could pass the precision's range is not checked
    // (in f16, 65504 is near).
    let magnitude: Vec<f64> = (0..a.nrows())
        .map(|r| {
            let (cols, vals) = a.row(r);
            cols.iter().zip(vals).map(|(&c, v)| (v.to_f64() * x[c as usize].to_f64()).abs()).sum()
        })
        .collect();
    for (alpha, beta) in [(1.0, 0.0), (-2.5, 1.0), (0.0, -2.5), (1.0, 1.0)] {
        let fits = magnitude
            .iter()
            .zip(&y0)
            .all(|(m, y)| alpha.abs() * m + (beta * y.to_f64()).abs() < 0.5 * T::MAX);
        if !fits {
            continue;
        }
        let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
        let mut y = if beta == T::ZERO { vec![T::nan(); a.nrows()] } else { y0.clone() };
        format.apply(alpha, &x, beta, &mut y).expect("vectors of the right length");
        let check = oracle.check_scaled(alpha, beta, &y0, &y);
        assert!(
            check.passed(),
            "{spec} in {} (alpha = {alpha}, beta = {beta}) on a {} x {} matrix: {check:?}",
            T::SUFFIX,
            a.nrows(),
            a.ncols()
        );
    }
}

#[cfg(test)]
mod tests;
