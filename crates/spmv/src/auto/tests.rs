use super::*;

#[test]
fn features_describe_shape_rows_and_diagonals() {
    let a = crate::io::gen::generate("poisson2d:n=100").unwrap();
    let f = Features::of(&a, TRAINING_L2_BYTES);
    assert_eq!((f.rows, f.nnz), (10_000.0, a.nnz() as f64));
    assert!((f.mean_row - 4.96).abs() < 1e-9);
    assert!(f.row_cv < 0.1 && f.max_over_mean < 1.1 && f.empty_rows == 0.0);
    // Five diagonals of 10^4 rows for 49,600 entries.
    assert!((f.diagonal_fill - 5.0 * 10_000.0 / 49_600.0).abs() < 1e-9, "{}", f.diagonal_fill);
    assert!(f.col_spread < 0.03);
    let g = Features::of(&crate::io::gen::generate("powerlaw:n=20000,mean=8,exp=1.9").unwrap(), TRAINING_L2_BYTES);
    assert!(g.row_cv > 1.0 && g.max_over_mean > 10.0 && g.diagonal_fill > 100.0, "{g:?}");
    let e = Features::of(&Csr::<f64>::zeros(0, 0), TRAINING_L2_BYTES);
    assert!(e.vector().iter().all(|v| v.is_finite()));
}

#[test]
fn auto_builds_a_candidate_and_says_which() {
    for spec in ["poisson2d:n=60", "kron:scale=12", "longrows:n=20000,short=4,count=2,long=5000"] {
        let a = crate::io::gen::generate(spec).unwrap();
        let (host, choice) = choose(&a, false).unwrap();
        assert_eq!(host.spec().name(), choice.chosen);
        assert!(candidates::<f64>(false).contains(&choice.chosen.as_str()));
        assert_eq!(choice.ranking.len(), candidates::<f64>(false).len());
        assert!(crate::formats::test_support::cpu_matches_oracle(host.format(), &a));
        let (det, choice) = choose(&a, true).unwrap();
        assert!(det.info().deterministic, "{}", choice.chosen);
        let half: Csr<crate::f16> = a.cast();
        let (_, choice) = choose(&half, false).unwrap();
        assert!(crate::formats::find::<crate::f16>(&choice.chosen).unwrap().half);
    }
    let f = crate::formats::build(&crate::formats::parse_spec("auto").unwrap(), &crate::io::gen::generate("poisson2d:n=30").unwrap()).unwrap();
    assert!(f.chosen().is_some());
}

/// The shipped model, scored by leave-one-out cross-validation (each matrix predicted from the
/// others): the issue asks ≥ 0.90 of the per-matrix best format's speed.
#[test]
fn the_shipped_model_cross_validates_well() {
    let model = Model::h200();
    assert!(model.training.matrices.len() >= 300, "{} matrices", model.training.matrices.len());
    let names: Vec<String> = {
        let mut c: Vec<String> = model.training.matrices.iter().flat_map(|m| m.times_ms.keys().cloned()).collect();
        c.sort();
        c.dedup();
        c
    };
    let candidates: Vec<&str> = names.iter().map(String::as_str).collect();
    let cv = model.cross_validate(&candidates, model.training.k);
    assert!(cv.geomean >= 0.90, "{cv:?}");
}
