//! The diagonal family's formats and its generated test matrices, shared by
//! the `diagonal_cpu` and `gpu_diagonal` tests.
#![allow(dead_code)]

use spmv::Csr;

/// The registered names of the diagonal family.
pub const FORMATS: [&str; 5] = ["dia", "hdia", "hdc", "dia-adaptive", "drm"];

/// Generated diagonal matrices: banded with scattered points, long broken diagonals, large
/// offsets, many diagonals, a perfect band of odd size, and a band followed by empty rows.
/// Each with whether DIA accepts it: scattered points give DIA one diagonal each, and it
/// refuses, by design, the matrices where they push its padding past 20 x nnz.
pub fn matrices() -> Vec<(String, Csr<f64>, bool)> {
    let many: Vec<String> = (-13..=13).map(|d: i32| d.to_string()).collect();
    let specs = [
        ("banded:n=200000,offsets=-2;-1;0;1;2,broken=0.05,scatter=0.002".to_string(), false),
        ("banded:n=200000,offsets=-3;0;1;5,broken=0.3,seg=5000".to_string(), true),
        ("banded:n=200000,offsets=-100000;-1000;-1;0;1;1000;100000,broken=0.05".to_string(), true),
        (
            "banded:n=200000,offsets=-100000;-1000;-1;0;1;1000;100000,broken=0.05,scatter=0.002"
                .to_string(),
            false,
        ),
        (format!("banded:n=100000,offsets={},broken=0.1,scatter=0.001", many.join(";")), true),
        ("banded:n=100003,offsets=-1;0;1".to_string(), true),
        (
            "banded:n=50000,offsets=-20000;-1;0;1;7,broken=0.5,seg=64,scatter=0.05,seed=7"
                .to_string(),
            false,
        ),
    ];
    let mut v: Vec<(String, Csr<f64>, bool)> = specs
        .into_iter()
        .map(|(spec, dia)| {
            let a = spmv::io::gen::generate(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            (spec, a, dia)
        })
        .collect();
    // A band over the first 1000 rows, then 100 000 empty rows and 500 more columns: DRM
    // merges the empty segments into sub-blocks of 32 (several launches); rectangular.
    let band = spmv::io::gen::generate("banded:n=1000,offsets=-1;0;1;300").unwrap();
    let (_, _, mut row_ptr, cols, vals) = band.into_parts();
    row_ptr.resize(101_001, *row_ptr.last().unwrap());
    v.push((
        "band then 100000 empty rows (101000 x 1500)".into(),
        Csr::new_checked(101_000, 1500, row_ptr, cols, vals).unwrap(),
        true,
    ));
    v
}
