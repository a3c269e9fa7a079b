use super::*;
use crate::formats::test_support::diagonal::*;
use crate::formats::test_support::prelude::*;
use crate::Coo;

#[test]
fn worked_example_gives_the_documented_arrays() {
    let f = Dia::new(&example()).unwrap();
    assert_eq!(f.offsets(), &[-2, 0, 1, 3]);
    #[rustfmt::skip]
    let data = [
        0.0, 0.0, 0.0, 0.0, 7.0, 11.0, 14.0, 17.0,
        1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 15.0, 18.0,
        0.0, 0.0, 4.0, 6.0, 9.0, 13.0, 16.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0,
    ];
    assert_eq!(f.data(), &data);
    let s = f.stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros()), (18, 32, 14));
    assert_eq!(s.bytes, 4 * 4 + 8 * 32);
    // Out of the matrix: d = -2 rows 0-1, d = 1 row 7, d = 3 rows 5-7.
    assert_eq!(f.bytes_read(), 4 * 4 + 8 * (32 - 6));
    assert_example_product("dia");
    assert_eq!(f.operand_spread().variance, 0.0);
}

#[test]
fn padding_beyond_the_limit_is_refused_with_its_size() {
    // Main diagonal plus one stray entry per 1000 rows, each on its own diagonal.
    let m = 200_000;
    let mut coo = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..m as u32 {
        coo.0.push(r);
        coo.1.push(r);
        coo.2.push(1.0);
        if r % 1000 == 7 && r + 5 + r / 1000 < m as u32 {
            coo.0.push(r);
            coo.1.push(r + 5 + r / 1000);
            coo.2.push(2.0);
        }
    }
    let a = Coo::new_checked(m, m, coo.0, coo.1, coo.2).unwrap().to_csr();
    match Dia::new(&a) {
        Err(Error::Format { format: "dia", reason }) => {
            assert!(reason.contains("padded zeros") && reason.contains("201 diagonals"), "{reason}")
        }
        other => panic!("expected a padding refusal, got {:?}", other.map(|f| f.stored())),
    }
    // Small matrices are accepted whatever their padding.
    assert!(Dia::new(&example()).is_ok());
}

#[test]
fn a_lower_padding_limit_refuses_what_the_default_accepts() {
    // The main diagonal of 400 000 rows and two diagonals of one entry each: 1.2 million
    // slots (above the floor) for 400 002 entries, padding ratio 3.0.
    let m = 400_000u32;
    let (mut rows, mut cols): (Vec<u32>, Vec<u32>) = ((0..m).collect(), (0..m).collect());
    rows.extend([0, 1]);
    cols.extend([1, 0]);
    let a = Coo::new_checked(m as usize, m as usize, rows, cols, vec![1.0; m as usize + 2])
        .unwrap()
        .to_csr();
    assert_eq!(Dia::new(&a).unwrap().stored(), 3 * m as usize);
    assert!(Dia::with_limit(&a, 3.0).is_ok());
    match Dia::with_limit(&a, 2.5) {
        Err(Error::Format { format: "dia", reason }) => {
            assert!(
                reason.contains("padding ratio 3.0") && reason.contains("above the limit 2.5 "),
                "{reason}"
            )
        }
        other => panic!("expected a padding refusal, got {:?}", other.map(|f| f.stored())),
    }
    assert!(matches!(Dia::with_limit(&a, 0.5), Err(Error::Format { .. })));
    assert!(matches!(Dia::with_limit(&a, f64::NAN), Err(Error::Format { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_diagonal_matrices_match_the_oracle(a in random_diagonal_csr()) {
        let f = Dia::new(&a).unwrap();
        prop_assert_eq!(f.stored(), f.offsets().len() * a.nrows());
        prop_assert!(f.stored() >= a.nnz() || a.nrows() == 0);
        prop_assert!(cpu_matches_in_both_precisions("dia", &a));
    }
}
