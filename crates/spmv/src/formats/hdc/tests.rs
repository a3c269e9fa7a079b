use super::*;
use crate::formats::test_support::diagonal::*;
use crate::formats::test_support::prelude::*;

#[test]
fn worked_example_gives_the_documented_arrays() {
    let a = example();
    let f = Hdc::new(&a).unwrap();
    assert_eq!(f.offsets(), &[0]);
    assert_eq!(f.data(), &[1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 15.0, 18.0]);
    let (row_ptr, cols, vals) = f.csr_part();
    assert_eq!(row_ptr, &[0, 0, 0, 1, 2, 5, 7, 9, 10]);
    assert_eq!(cols, &[3, 4, 2, 5, 7, 3, 6, 4, 7, 5]);
    assert_eq!(vals, &[4.0, 6.0, 7.0, 9.0, 10.0, 11.0, 13.0, 14.0, 16.0, 17.0]);
    let s = f.stats();
    assert_eq!((s.stored, s.padded_zeros()), (18, 0));
    assert_eq!(s.bytes, 4 + 8 * 8 + 4 * 9 + 12 * 10);

    let f = Hdc::new(&a.cast::<f32>()).unwrap();
    assert_eq!(f.offsets(), &[-2, 0, 1]);
    let (row_ptr, cols, vals) = f.csr_part();
    assert_eq!((row_ptr, cols, vals), (&[0, 0, 0, 0, 0, 1, 1, 1, 1][..], &[7][..], &[10.0f32][..]));
    assert_eq!((f.stored(), f.stats().padded_zeros()), (25, 7));
    // Both layouts, the f64 one and the f32 one, give the example's product.
    assert_example_product("hdc");
}

#[test]
fn thresholds_follow_the_bytes() {
    assert_eq!(fill_threshold::<f64>(), 2.0 / 3.0);
    assert_eq!(fill_threshold::<f32>(), 0.5);
    // A full band and a sparse far diagonal: the band in DIA, the rest in CSR.
    let a = crate::io::gen::generate("banded:n=10000,offsets=-1;0;1;5000,broken=0.1,scatter=0.05")
        .unwrap();
    let f = Hdc::new(&a).unwrap();
    assert_eq!(f.offsets(), &[-1, 0, 1]);
    assert!(f.stats().padded_zeros() < a.nnz() / 2);
    // Both precisions: f32 splits at its own threshold.
    assert!(cpu_matches_in_both_precisions("hdc", &a));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_diagonal_matrices_match_the_oracle(a in random_diagonal_csr()) {
        let f = Hdc::new(&a).unwrap();
        prop_assert_eq!(f.dia_entries() + f.csr_part().2.len(), a.nnz());
        prop_assert!(f.data().len() <= 2 * f.dia_entries());
        prop_assert!(cpu_matches_in_both_precisions("hdc", &a));
    }
}
