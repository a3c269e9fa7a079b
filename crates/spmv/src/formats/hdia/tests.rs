use super::*;
use crate::formats::dia::Dia;
use crate::formats::test_support::diagonal::*;
use crate::formats::test_support::prelude::*;

#[test]
fn worked_example_gives_the_documented_arrays() {
    let a = example();
    let f = Hdia::with_hack_rows(&a, 2).unwrap();
    assert_eq!(f.hack_offsets(), &[0, 1, 3, 7, 10]);
    assert_eq!(f.offsets(), &[0, 0, 1, -2, 0, 1, 3, -2, 0, 1]);
    #[rustfmt::skip]
    let data = [1.0, 2.0, 3.0, 5.0, 4.0, 6.0, 7.0, 11.0, 8.0, 12.0, 9.0, 13.0, 10.0, 0.0, 14.0, 17.0, 15.0, 18.0, 16.0, 0.0];
    assert_eq!(f.data(), &data);
    let s = f.stats();
    assert_eq!((s.stored, s.padded_zeros()), (20, 2));
    assert_eq!(s.bytes, 4 * (5 + 10) + 8 * 20);
    assert_eq!(f.bytes_read(), 4 * (5 + 10) + 8 * 18);
    let spread = f.operand_spread();
    assert_eq!((spread.units, spread.mean, spread.variance), (4, 5.0, 5.0)); // {2, 4, 8, 6}
    assert_example_product("hdia:hack_rows=2");
    // The paper's Fig. 5 figures: hacks of 4 rows pad 6 zeros, DIA 14.
    assert_eq!(Hdia::with_hack_rows(&a, 4).unwrap().stats().padded_zeros(), 6);
    // Registered height: one hack of 32 rows padded beyond the 8 real ones.
    let f = Hdia::new(&a).unwrap();
    assert_eq!((f.hacks(), f.stored()), (1, 4 * 32));
    assert_example_product("hdia");
}

#[test]
fn hacks_never_store_more_than_dia() {
    let a = crate::io::gen::generate(
        "banded:n=5000,offsets=-300;-2;0;1;7;2000,broken=0.3,scatter=0.01",
    )
    .unwrap();
    let dia = Dia::new(&a).unwrap();
    for h in [1, 2, 7, 32, 100, 5000] {
        let f = Hdia::with_hack_rows(&a, h).unwrap();
        // Padding rows of a short last hack aside, a hack stores a subset of DIA's slots.
        assert!(f.stored() <= dia.stored() + h * dia.offsets().len(), "h = {h}");
        assert!(cpu_matches_oracle(&f, &a), "h = {h}");
    }
    assert!(Hdia::new(&a).unwrap().stored() < dia.stored() / 4);
}

#[test]
fn bad_hack_heights_are_format_errors() {
    assert!(matches!(Hdia::with_hack_rows(&example(), 0), Err(Error::Format { .. })));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_for_several_hack_heights() {
    let a = crate::io::gen::generate(
        "banded:n=5003,offsets=-300;-2;0;1;7;2000,broken=0.3,scatter=0.01",
    )
    .unwrap();
    let specs = [1, 2, 7, 32, 33, 100, 5003, 6000].map(|h| format!("hdia:hack_rows={h}"));
    assert_gpu_matches_oracle(&a, specs.iter().map(String::as_str));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_diagonal_matrices_match_the_oracle(a in random_diagonal_csr(), h in 1usize..40) {
        let f = Hdia::with_hack_rows(&a, h).unwrap();
        prop_assert_eq!(f.hacks(), a.nrows().div_ceil(h));
        prop_assert_eq!(*f.hack_offsets().last().unwrap() as usize * h, f.stored());
        let spec = format!("hdia:hack_rows={h}");
        prop_assert!(cpu_matches_in_both_precisions(spec.as_str(), &a));
        prop_assert!(cpu_matches_in_both_precisions("hdia", &a));
    }
}
