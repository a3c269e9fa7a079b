//! Every registered format's CPU SpMV against the oracle, in f64, f32 and f16, on the edge cases
//! and on every real matrix: y = A·x into a NaN-poisoned y, and y = α·A·x + β·y for
//! α, β ∈ {0, 1, −2.5}.

use crate::common;

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
            // Beyond f16's range (values or sums): the benchmark's "unsupported".
            let fits = oracle.range_error::<T>().is_none();
            registry::<T>()
                .into_iter()
                .filter(move |_| fits)
                .filter_map(move |info| {
                    let format = match info.build(&a) {
                        Ok(f) => f,
                        // A format may refuse a matrix it cannot hold (too much padding, index
                        // overflow): the benchmark's "unsupported"; each format's unit tests check
                        // its own limits. Any other error is a failure.
                        Err(spmv::Error::Format { .. }) => return None,
                        Err(e) => {
                            return Some(format!(
                                "{name} / {} / {}: conversion failed: {e}",
                                info.name,
                                T::SUFFIX
                            ))
                        }
                    };
                    let label = format!("{name} / {} / {}", info.name, T::SUFFIX);
                    let mut bad = Vec::new();
                    let mut y = vec![T::nan(); a.nrows()];
                    format.spmv(&x, &mut y).unwrap();
                    let check = oracle.check(&y);
                    if !check.passed() {
                        bad.push(format!("{label}: {check:?}"));
                    }
                    let y0 = common::start_vector::<T>(a.nrows());
                    for (alpha, beta) in common::alpha_beta::<T>() {
                        // β = 0 must not read y: poison it; otherwise start from y0.
                        let mut y =
                            if beta == T::ZERO { vec![T::nan(); a.nrows()] } else { y0.clone() };
                        format.apply(alpha, &x, beta, &mut y).unwrap();
                        let check = oracle.check_scaled(alpha, beta, &y0, &y);
                        if !check.passed() {
                            bad.push(format!("{label} (α = {alpha}, β = {beta}): {check:?}"));
                        }
                    }
                    (!bad.is_empty()).then(|| bad.join("\n"))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every format on `matrices` in f64, f32 and (those that run in it) f16.
fn check_both(matrices: &[(String, Csr<f64>)]) {
    common::assert_clean(common::every_precision!(check_all(matrices)));
}

#[test]
fn cpu_formats_match_oracle_on_edge_cases() {
    check_both(&common::edge_cases());
}

#[test]
fn cpu_formats_match_oracle_on_shared_matrices() {
    check_both(common::shared_matrices());
}

#[test]
fn cpu_wrong_vector_lengths_are_errors_naming_the_format() {
    let a = common::edge_cases().into_iter().find(|(n, _)| n.starts_with("tall")).unwrap().1;
    for info in registry::<f64>() {
        let Ok(format) = info.build(&a) else { continue };
        let mut y = vec![0.0; a.nrows()];
        let e = format.apply(1.0, &vec![0.0; a.ncols() + 1], 0.0, &mut y).unwrap_err();
        assert!(matches!(e, spmv::Error::Shape(_)) && e.to_string().contains(info.name), "{e}");
        let mut short = vec![0.0; a.nrows() - 1];
        assert!(matches!(
            format.spmv(&vec![0.0; a.ncols()], &mut short),
            Err(spmv::Error::Shape(_))
        ));
    }
}

#[test]
fn scaled_check_catches_wrong_scaling() {
    let a = common::edge_cases().into_iter().find(|(n, _)| n.starts_with("empty rows")).unwrap().1;
    let x = test_vector::<f64>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    let y0 = common::start_vector::<f64>(a.nrows());
    let mut ax = vec![0.0; a.nrows()];
    a.spmv_serial(&x, &mut ax);
    let right: Vec<f64> = ax.iter().zip(&y0).map(|(s, y)| -2.5 * s + y).collect();
    assert!(oracle.check_scaled(-2.5, 1.0, &y0, &right).passed());
    // β ignored, α applied twice, α dropped: all fail.
    let no_beta: Vec<f64> = ax.iter().map(|s| -2.5 * s).collect();
    assert!(!oracle.check_scaled(-2.5, 1.0, &y0, &no_beta).passed());
    let twice: Vec<f64> = ax.iter().zip(&y0).map(|(s, y)| 6.25 * s + y).collect();
    assert!(!oracle.check_scaled(-2.5, 1.0, &y0, &twice).passed());
    assert!(!oracle.check_scaled(-2.5, 1.0, &y0, &ax).passed());
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

#[test]
fn f16_through_the_front_door() {
    use spmv::{f16, Backend, Matrix};
    // A file read straight into f16: 1.5 and -2 are exact, 0.1 rounds to the nearest f16.
    let dir = std::env::temp_dir().join(format!("spmv-f16-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.mtx");
    std::fs::write(
        &path,
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.5\n1 2 -2\n2 2 0.1\n",
    )
    .unwrap();
    let a = Matrix::<f16>::read(&path).unwrap();
    assert_eq!(a.csr().values(), &[f16::from_f64(1.5), f16::from_f64(-2.0), f16::from_f64(0.1)]);
    let x = [f16::from_f64(1.0), f16::from_f64(0.5)];
    let mut y = [f16::NAN; 2];
    a.to_device(&Backend::Cpu, "dasp").unwrap().apply(f16::ONE, &x, f16::ZERO, &mut y).unwrap();
    assert_eq!(y, [f16::from_f64(0.5), f16::from_f64(0.1 * 0.5)]);
    // A format without f16 kernels says so, naming itself.
    let e = a.to_device(&Backend::Cpu, "ell").unwrap_err().to_string();
    assert!(e.contains("ell") && e.contains("f16"), "{e}");
    // Values past ±65504 make the matrix unsupported in f16, not wrong.
    let big: Csr<f16> =
        Csr::new_checked(1, 2, vec![0, 2], vec![0, 1], vec![1e5, 1.0]).unwrap().cast();
    let oracle = Oracle::new(&big, &test_vector::<f16>(2));
    assert!(oracle.range_error::<f16>().is_some_and(|e| e.contains("f16")));
    std::fs::remove_dir_all(&dir).unwrap();
}
