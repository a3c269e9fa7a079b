//! Formats whose reductions cross warps — `coo-segmented` (chunk carries) and `dasp` (long
//! rows summed by the last warp to finish; with `max_len=8` most rows of these matrices are
//! long) — give bit-identical results run after run on the GPU (and pass the oracle), on
//! matrices with very uneven rows: rows spanning many chunks, runs of empty rows, every edge
//! case. Run on a CUDA machine with `--include-ignored`.

use crate::common;

use spmv::formats::{build, parse_spec};
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Scalar};

const RUNS: usize = 5;
const FORMATS: &[&str] = &["coo-segmented", "dasp", "dasp:max_len=8"];

/// Runs the format `RUNS` times, each into a NaN-poisoned `y`; returns what went wrong.
fn check<T: Scalar>(
    gpu: &std::sync::Arc<Gpu>, name: &str, a64: &Csr<f64>, format: &str,
) -> Vec<String> {
    let a: Csr<T> = a64.cast();
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    if oracle.range_error::<T>().is_some() {
        return Vec::new(); // beyond f16's range: unsupported, nothing to compare
    }
    let label = format!("{name} / {format} / {}", T::SUFFIX);
    let runs = || -> spmv::Result<Vec<Vec<T>>> {
        let device = build(&parse_spec(format)?, &a)?.upload(gpu)?;
        let x_dev = gpu.upload(&x)?;
        let mut y_dev = gpu.alloc::<T>(a.nrows())?;
        (0..RUNS)
            .map(|_| {
                gpu.fill(&mut y_dev, T::nan())?;
                device.spmv(&x_dev, &mut y_dev)?;
                gpu.download(&y_dev)
            })
            .collect()
    };
    let ys = match runs() {
        Ok(ys) => ys,
        Err(e) => return vec![format!("{label}: {e}")],
    };
    let mut failures = Vec::new();
    let bits = |y: &[T]| y.iter().map(|v| v.to_f64().to_bits()).collect::<Vec<u64>>();
    let first = bits(&ys[0]);
    for (i, y) in ys.iter().enumerate() {
        let check = oracle.check(y);
        if !check.passed() {
            failures.push(format!("{label} (run {i}): {check:?}"));
        }
        let b = bits(y);
        if b != first {
            let rows = b.iter().zip(&first).filter(|(p, q)| p != q).count();
            let row = b.iter().zip(&first).position(|(p, q)| p != q).unwrap();
            failures.push(format!(
                "{label}: run {i} differs from run 0 in {rows} rows (first: row {row})"
            ));
        }
    }
    failures
}

fn matrices() -> Vec<(String, Csr<f64>)> {
    let mut v: Vec<(String, Csr<f64>)> =
        ["powerlaw:n=200000,mean=8,exp=2.1", "longrows:n=100000,short=4,count=3,long=50000"]
            .iter()
            .map(|spec| {
                (
                    spec.to_string(),
                    spmv::io::gen::generate(spec).unwrap_or_else(|e| panic!("{spec}: {e}")),
                )
            })
            .collect();
    v.extend(common::edge_cases());
    v
}

#[test]
#[ignore = "needs a CUDA device"]
fn cross_warp_reductions_are_bit_identical_across_runs() {
    let gpu = common::gpu();
    let mut failures = Vec::new();
    for (name, a) in matrices() {
        for format in FORMATS {
            failures.extend(check::<f64>(&gpu, &name, &a, format));
            failures.extend(check::<f32>(&gpu, &name, &a, format));
            if format.starts_with("dasp") {
                failures.extend(check::<spmv::f16>(&gpu, &name, &a, format));
            }
        }
    }
    common::assert_clean(failures);
}
