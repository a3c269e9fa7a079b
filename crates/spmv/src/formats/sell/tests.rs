use super::*;
use crate::formats::test_support::prelude::*;
use crate::formats::test_support::rows::*;
use crate::Coo;

#[test]
fn worked_example_gives_the_documented_arrays() {
    let a = example();
    let full = SellCSigma::new(&a, 2, 5).unwrap();
    assert_eq!(full.perm(), &[2, 0, 4, 3, 1]);
    assert_eq!(full.slice_width(), &[3, 2, 0]);
    assert_eq!(full.slice_ptr(), &[0, 6, 10, 10]);
    assert_eq!(full.values(), &[3.0, 1.0, 4.0, 2.0, 5.0, 0.0, 7.0, 6.0, 8.0, 0.0]);
    assert_eq!(full.col_idx(), &[0, 0, 1, 2, 2, 2, 2, 1, 3, 1]);

    let unsorted = SellCSigma::new(&a, 2, 1).unwrap();
    assert_eq!(unsorted.perm(), &[0, 1, 2, 3, 4]);
    assert_eq!(unsorted.slice_width(), &[2, 3, 2]);
    assert_eq!(unsorted.slice_ptr(), &[0, 4, 10, 12]);
    assert_eq!(unsorted.values(), &[1.0, 0.0, 2.0, 0.0, 3.0, 6.0, 4.0, 0.0, 5.0, 0.0, 7.0, 8.0]);
    assert_eq!(unsorted.col_idx(), &[0, 0, 2, 0, 0, 1, 1, 1, 2, 1, 2, 3]);

    let s = full.stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros(), s.max_row_len), (8, 10, 2, 3));
    assert_eq!(s.bytes, 4 * (5 + 4 + 3 + 10) + 8 * 10);
    let extra: Vec<(String, f64)> = vec![
        ("slices".into(), 3.0),
        ("sigma".into(), 5.0),
        ("chunk_rows".into(), 2.0),
        ("offset_bytes".into(), 4.0),
    ];
    assert_eq!(s.extra, extra);
    assert_eq!(unsorted.stats().padded_zeros(), 4);

    assert_example_product(&full, &a);
    assert_example_product(&unsorted, &a);
    // σ above m is a full sort; σ = m is accepted for an empty matrix.
    assert_eq!(SellCSigma::new(&a, 2, 99).unwrap().perm(), full.perm());
    assert_eq!(SellCSigma::new(&a, 2, 99).unwrap().sigma(), 5);
    assert!(SellCSigma::new(&Csr::<f64>::zeros(0, 3), 32, 0).is_ok());
}

#[test]
fn bad_parameters_are_format_errors() {
    let a = example();
    assert!(matches!(SellCSigma::new(&a, 0, 5), Err(Error::Format { .. })));
    assert!(matches!(SellCSigma::new(&a, 32, 0), Err(Error::Format { .. })));
}

/// Rows of very different lengths (mostly short, a few long), deterministic.
fn varied(m: usize, n: usize) -> Csr<f64> {
    random_rows(m, n, 12345, |rng| match rng.below(100) {
        0..=19 => 0,
        20..=69 => rng.below(5),
        70..=94 => rng.below(40),
        _ => rng.below(300),
    })
}

#[test]
fn padding_shrinks_as_sigma_grows_and_every_sigma_is_correct() {
    let a = varied(5003, 4000); // 5003 = 156 full slices + a partial one of 11 rows
    let mut stored = Vec::new();
    for sigma in [1, 32, 64, 256, a.nrows()] {
        let f = SellCSigma::new(&a, 32, sigma).unwrap();
        assert!(cpu_matches_oracle(&f, &a), "σ = {sigma}");
        assert!(
            cpu_matches_oracle(
                &SellCSigma::new(&a.cast::<f32>(), 32, sigma).unwrap(),
                &a.cast::<f32>()
            ),
            "σ = {sigma}"
        );
        assert_eq!(f.slices(), 157);
        assert_eq!(*f.slice_ptr().last().unwrap(), f.stored());
        stored.push(f.stored());
    }
    assert!(stored.windows(2).all(|w| w[0] >= w[1]), "{stored:?}");
    assert_eq!(stored[0], stored[1], "a window of one aligned slice changes nothing");
    assert!(stored[4] < stored[0] / 2, "full sort must cut the padding: {stored:?}");
    assert!(stored[4] >= a.nnz());
    // σ that are not multiples of C, and other C, are correct too.
    for (c, sigma) in [(32, 45), (32, 1000), (7, 50), (1, 5003), (64, 5003), (6000, 5003)] {
        assert!(
            cpu_matches_oracle(&SellCSigma::new(&a, c, sigma).unwrap(), &a),
            "C = {c}, σ = {sigma}"
        );
    }
}

#[test]
fn empty_rows_and_partial_last_slice() {
    for (m, n) in [(0, 0), (0, 5), (5, 0), (70, 3)] {
        let a = Csr::<f32>::zeros(m, n);
        let f = SellCSigma::new(&a, 32, m).unwrap();
        assert_eq!(f.stored(), 0);
        assert_eq!(f.slices(), m.div_ceil(32));
        let mut y = vec![f32::NAN; m];
        f.spmv_cpu(&vec![1.0; n], &mut y);
        assert!(y.iter().all(|&v| v == 0.0));
    }
    // 70 rows: slices of 32, 32 and 6 rows; only every fifth row has entries.
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for r in (0..70u32).filter(|r| r % 5 == 0) {
        for k in 0..=(r % 7) {
            rows.push(r);
            cols.push((r + 7 * k) % 50);
            vals.push(1.0 + k as f64 / 4.0);
        }
    }
    let a = Coo::new_checked(70, 50, rows, cols, vals).unwrap().to_csr();
    for sigma in [1, 32, 70] {
        let f = SellCSigma::new(&a, 32, sigma).unwrap();
        let heights = [32, 32, 6];
        let expect: usize = f.slice_width().iter().zip(heights).map(|(&w, h)| w as usize * h).sum();
        assert_eq!(f.stored(), expect);
        assert!(cpu_matches_oracle(&f, &a));
    }
}

/// SELL-C-σ with the given C and σ on the GPU (through the registry's spec), twice each into
/// NaN-poisoned outputs: against the oracle, and bit for bit against each other.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_for_several_c_and_sigma() {
    let a = varied(5003, 4000);
    let cases = [
        (32, 1),
        (32, 45),
        (32, 64),
        (32, 5003),
        (1, 5003),
        (7, 50),
        (64, 5003),
        (100, 300),
        (6000, 5003),
    ];
    let specs: Vec<String> =
        cases.iter().map(|(c, sigma)| format!("{NAME}:c={c},sigma={sigma}")).collect();
    let failures = gpu_failures(&gpu(), &a, &specs, 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_and_sigmas_match_the_oracle(a in random_csr(), c in 1usize..40, s in 1usize..50) {
        let sigma = s.min(a.nrows() + 3);
        let f = SellCSigma::new(&a, c, sigma).unwrap();
        prop_assert_eq!(f.slices(), a.nrows().div_ceil(c));
        prop_assert_eq!(*f.slice_ptr().last().unwrap(), f.stored());
        prop_assert!(f.stored() >= a.nnz());
        prop_assert!(is_permutation(f.perm(), a.nrows()));
        prop_assert!(cpu_matches_oracle(&f, &a));
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&SellCSigma::new(&a32, c, sigma).unwrap(), &a32));
        // The registered configuration.
        prop_assert!(cpu_matches_oracle(&SellCSigma::new(&a, DEFAULT_C, a.nrows()).unwrap(), &a));
    }
}
