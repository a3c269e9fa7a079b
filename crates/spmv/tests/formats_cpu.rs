//! Every registered format's CPU SpMV against the oracle, in f64 and f32, on the edge cases
//! and on every real matrix.

mod common;

use spmv::formats::registry;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Scalar};

fn check_all<T: Scalar>(matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    use rayon::prelude::*;
    matrices
        .par_iter()
        .flat_map_iter(|(name, a64)| {
            let a: Csr<T> = a64.cast();
            let x = test_vector::<T>(a.ncols());
            let oracle = Oracle::new(&a, &x);
            registry::<T>().into_iter().filter_map(move |info| {
                let format = match (info.build)(&a) {
                    Ok(f) => f,
                    // A format may refuse a matrix it cannot hold (too much padding, index
                    // overflow): the benchmark's "unsupported"; each format's unit tests check
                    // its own limits. Any other error is a failure.
                    Err(spmv::Error::Format { .. }) => return None,
                    Err(e) => return Some(format!("{name} / {} / {}: conversion failed: {e}", info.name, T::SUFFIX)),
                };
                let mut y = vec![T::nan(); a.nrows()];
                format.spmv_cpu(&x, &mut y);
                let check = oracle.check(&y);
                (!check.passed()).then(|| format!("{name} / {} / {}: {check:?}", info.name, T::SUFFIX))
            }).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn cpu_formats_match_oracle_on_edge_cases() {
    let cases = common::edge_cases();
    let mut failures = check_all::<f64>(&cases);
    failures.extend(check_all::<f32>(&cases));
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn cpu_formats_match_oracle_on_shared_matrices() {
    let matrices = common::shared_matrices();
    let mut failures = check_all::<f64>(&matrices);
    failures.extend(check_all::<f32>(&matrices));
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn oracle_catches_wrong_results() {
    // A check that cannot fail is no check: a missing entry, a NaN, a wrong empty row fail.
    let a = common::edge_cases().into_iter().find(|(n, _)| n.starts_with("empty rows")).unwrap().1;
    let x = test_vector::<f64>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    let mut y = vec![0.0; a.nrows()];
    a.spmv_serial(&x, &mut y);
    assert!(oracle.check(&y).passed());
    let mut bad = y.clone();
    let (cols, vals) = a.row(1);
    bad[1] -= vals[0] * x[cols[0] as usize];
    assert!(!oracle.check(&bad).passed(), "a dropped entry must fail");
    let mut bad = y.clone();
    bad[5] = f64::NAN;
    assert!(!oracle.check(&bad).passed(), "NaN must fail");
    let mut bad = y.clone();
    bad[0] = 1e-300; // row 0 is empty: anything but 0 is wrong
    assert!(!oracle.check(&bad).passed(), "a value in an empty row must fail");
    // f32 rounding of a correct result passes.
    let a32: Csr<f32> = a.cast();
    let x32 = test_vector::<f32>(a.ncols());
    let mut y32 = vec![0.0f32; a.nrows()];
    a32.spmv_parallel(&x32, &mut y32);
    assert!(Oracle::new(&a32, &x32).check(&y32).passed());
}
