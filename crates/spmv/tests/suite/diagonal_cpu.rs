//! The diagonal family (DIA, HDIA, HDC, DIA-Adaptive, DRM) on the CPU against the oracle,
//! f64 and f32, on generated diagonal matrices; what they refuse, and their statistics.
//! (`formats_cpu` checks every registered format on the edge cases and the real matrices.)

use crate::common;
use crate::common::diagonal;

use spmv::formats::find;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Error, Scalar};

/// Runs every diagonal format; returns the failures and the (matrix, format) pairs refused.
fn check<T: Scalar>(name: &str, a64: &Csr<f64>) -> (Vec<String>, Vec<String>) {
    let a: Csr<T> = a64.cast();
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    let (mut failures, mut refused) = (Vec::new(), Vec::new());
    for format in diagonal::FORMATS {
        let label = format!("{name} / {format} / {}", T::SUFFIX);
        let f = match find::<T>(format).unwrap().build(&a) {
            Ok(f) => f,
            Err(Error::Format { reason, .. }) => {
                if !reason.contains("padded zeros") {
                    failures.push(format!("{label}: a refusal must name the padding: {reason}"));
                }
                refused.push(format.to_string());
                continue;
            }
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        let mut y = vec![T::nan(); a.nrows()];
        f.spmv(&x, &mut y).unwrap();
        let c = oracle.check(&y);
        if !c.passed() {
            failures.push(format!("{label}: {c:?}"));
        }
        let s = f.stats();
        let extra = |key: &str| s.extra.iter().find(|(k, _)| k == key).map(|e| e.1);
        // Padded zeros are derived from these two (FormatStats::padded_zeros).
        if s.stored < s.nnz || s.nnz != a.nnz() {
            failures.push(format!(
                "{label}: stored {} for {} entries (matrix nnz {})",
                s.stored,
                s.nnz,
                a.nnz()
            ));
        }
        for key in ["operand_variance", "operand_cv", "preprocess_ms"] {
            if !extra(key).is_some_and(|v| v.is_finite() && v >= 0.0) {
                failures
                    .push(format!("{label}: statistic {key} missing or invalid: {:?}", extra(key)));
            }
        }
    }
    (failures, refused)
}

#[test]
fn diagonal_formats_match_the_oracle_on_generated_diagonal_matrices() {
    let mut failures = Vec::new();
    for (name, a, dia_accepts) in diagonal::matrices() {
        for (f, refused) in [check::<f64>(&name, &a), check::<f32>(&name, &a)] {
            failures.extend(f);
            // Only DIA may refuse these matrices, and only those with scattered points.
            let allowed: &[String] = if dia_accepts { &[] } else { &["dia".to_string()] };
            if refused != allowed {
                failures.push(format!("{name}: refused by {refused:?}, expected {allowed:?}"));
            }
        }
    }
    common::assert_clean(failures);
}

#[test]
fn diagonal_formats_match_the_oracle_on_edge_cases() {
    let mut failures = Vec::new();
    for (name, a) in common::edge_cases() {
        failures.extend(check::<f64>(&name, &a).0);
        failures.extend(check::<f32>(&name, &a).0);
    }
    common::assert_clean(failures);
}

#[test]
fn hdia_and_drm_store_the_same_slots_and_drm_balances_them() {
    for (name, a, _) in diagonal::matrices() {
        let stats = |format: &str| find::<f64>(format).unwrap().build(&a).unwrap().stats();
        let (hdia, drm) = (stats("hdia"), stats("drm"));
        assert_eq!(hdia.stored, drm.stored, "{name}");
        let extra = |s: &spmv::formats::FormatStats, key: &str| {
            s.extra.iter().find(|(k, _)| k == key).unwrap().1
        };
        // DRM's segments are HDIA's hacks.
        assert_eq!(
            extra(&drm, "segment_operand_variance"),
            extra(&hdia, "operand_variance"),
            "{name}"
        );
        // Merging never leaves the sub-blocks relatively more spread than the segments.
        assert!(extra(&drm, "operand_cv") <= extra(&drm, "segment_operand_cv") + 1e-12, "{name}");
    }
}

#[test]
fn refusals_name_the_padding_and_the_limit() {
    // Main diagonal plus scattered points: DIA would need one diagonal per point.
    let a = spmv::io::gen::generate("banded:n=300000,offsets=0,scatter=0.01").unwrap();
    let reason = match find::<f64>("dia").unwrap().build(&a) {
        Err(Error::Format { format: "dia", reason }) => reason,
        other => panic!("DIA should refuse: {:?}", other.map(|f| f.stats())),
    };
    assert!(
        reason.contains("padded zeros")
            && reason.contains("padding ratio")
            && reason.contains("limit 20"),
        "{reason}"
    );
    // A uniformly random matrix is no diagonal matrix: every DIA-based format refuses it,
    // HDC (whose DIA part is bounded by construction) keeps it all in CSR.
    let a = spmv::io::gen::generate("random:n=100000,mean=8").unwrap();
    for format in ["dia", "hdia", "dia-adaptive", "drm"] {
        assert!(
            matches!(find::<f64>(format).unwrap().build(&a), Err(Error::Format { .. })),
            "{format}"
        );
    }
    let hdc = find::<f64>("hdc").unwrap().build(&a).unwrap().stats();
    assert_eq!(hdc.stored, hdc.nnz);
}
