use super::*;
use crate::formats::test_support::blocks::*;
use crate::formats::test_support::prelude::*;

/// Matrix A of the paper's §1.3 (BRCP's worked example too).
pub(crate) fn paper_matrix() -> Csr<f64> {
    small_csr((4, 4), &[0, 2, 2, 5, 6], &[0, 2, 0, 1, 3, 2], &[1., 2., 3., 4., 5., 6.])
}

/// Checks `f`'s CPU product of [`paper_matrix`]: x = [1, 10, 100, 1000] gives each row's
/// entries as digits at their columns.
#[track_caller]
pub(crate) fn assert_paper_product(f: &dyn SpmvFormat<f64>) {
    assert_cpu_product(f, &[1.0, 10.0, 100.0, 1000.0], &[201.0, 0.0, 5043.0, 600.0]);
}

/// Checks the arrays of a worked example's blocks, as the module docs list them.
#[track_caller]
pub(crate) fn assert_blocks(
    f: &BlockArrays<f64>, block_ptr: &[u32], values: &[f64], col_idx: &[u32], row_perm: &[u32],
) {
    assert_eq!(f.block_ptr(), block_ptr);
    assert_eq!(f.values(), values);
    assert_eq!(f.col_idx(), col_idx);
    assert_eq!(f.row_perm(), row_perm);
}

/// Checks the blocks of [`paper_matrix`] with the rule's own T = 3, the same in BRC and BRCP:
/// {row 2, row 0} of width 3 and {row 3, dummy} of width 1.
#[track_caller]
pub(crate) fn assert_rules_own_t_blocks(f: &BlockArrays<f64>) {
    assert_blocks(
        f,
        &[0, 6, 8],
        &[3., 1., 4., 2., 5., 0., 6., 0.],
        &[0, 0, 1, 2, 3, 2, 2, 0],
        &[2, 0, 3, NO_ROW],
    );
}

/// The structural invariants of BRC's and BRCP's blocks built from `a`.
#[track_caller]
pub(crate) fn assert_block_invariants<T: Scalar>(f: &BlockArrays<T>, a: &Csr<T>) {
    assert_eq!(*f.block_ptr().last().unwrap() as usize, f.stored());
    assert!(f.stored() >= a.nnz());
    assert_eq!(f.row_perm().len(), f.blocks() * f.block_rows());
    assert_eq!(f.block_nnz().iter().sum::<usize>(), a.nnz(), "every entry is stored once");
}

#[test]
fn threshold_is_mean_plus_deviation_rounded() {
    // Row lengths 2, 0, 3, 1: μ = 1.5, σ = sqrt(1.25) = 1.118, T = round(2.618) = 3.
    assert_eq!(threshold(&paper_matrix()), 3);
    assert_eq!(threshold(&Csr::<f64>::zeros(0, 0)), 1);
    assert_eq!(threshold(&Csr::<f64>::zeros(5, 5)), 1);
    // Equal rows: σ = 0, T = the row length.
    let a = small_csr((2, 3), &[0, 3, 6], &[0, 1, 2, 0, 1, 2], &[1.0; 6]);
    assert_eq!(threshold::<f64>(&a), 3);
}

#[test]
fn worked_example_gives_the_documented_arrays() {
    let a = paper_matrix();
    let f = Brc::with_params(&a, 2, 2).unwrap();
    assert_blocks(&f, &[0, 4, 6], &[3., 1., 4., 2., 5., 6.], &[0, 0, 1, 2, 3, 2], &[2, 0, 2, 3]);
    assert_eq!((f.block_width(0), f.block_width(1)), (2, 1));
    assert_eq!(f.split_rows(), 1);
    let s = f.stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros(), s.max_row_len), (6, 6, 0, 3));
    assert_eq!(s.bytes, 4 * (3 + 4 + 6) + 8 * 6);
    assert_paper_product(&f);

    // The rule's own T = 3 splits nothing: blocks {row 2, row 0} of width 3 and
    // {row 3, dummy} of width 1.
    let f = Brc::with_params(&a, 2, threshold(&a)).unwrap();
    assert_rules_own_t_blocks(&f);
    assert_eq!(f.split_rows(), 0);
    assert_paper_product(&f);
}

#[test]
fn bad_parameters_are_format_errors() {
    let a = paper_matrix();
    assert!(matches!(Brc::with_params(&a, 0, 3), Err(Error::Format { .. })));
    assert!(matches!(Brc::with_params(&a, 32, 0), Err(Error::Format { .. })));
}

#[test]
fn long_rows_are_split_into_pieces_of_t() {
    // Row r has r entries: 0..=99; T = 7 splits every row above 7.
    let mut row_ptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for r in 0..100usize {
        for c in 0..r {
            cols.push(c as u32);
            vals.push((r + c) as f64 / 8.0 - 3.0);
        }
        row_ptr.push(cols.len());
    }
    let a = Csr::new_checked(100, 100, row_ptr, cols, vals).unwrap();
    for (h, t) in [(32, 7), (1, 1), (3, 100), (32, 1), (5, 13)] {
        let f = Brc::with_params(&a, h, t).unwrap();
        assert!(cpu_matches_oracle(&f, &a), "H = {h}, T = {t}");
        let pieces: usize = (0..100).map(|k: usize| k.div_ceil(t)).sum();
        assert_eq!(f.row_perm().iter().filter(|&&r| r != NO_ROW).count(), pieces);
        assert_eq!(f.split_rows(), (0..100).filter(|&k| k > t).count());
        assert!((0..f.blocks()).all(|b| f.block_width(b) <= t));
        // Sorted pieces: block widths never grow.
        assert!((1..f.blocks()).all(|b| f.block_width(b) <= f.block_width(b - 1)));
    }
    assert_eq!(Brc::new(&a).unwrap().threshold(), threshold(&a));
    assert!(cpu_matches_oracle(&Brc::new(&a.cast::<f32>()).unwrap(), &a.cast::<f32>()));
}

#[test]
fn empty_matrices() {
    assert_empty_products(|a| {
        let f = Brc::new(a).unwrap();
        assert_eq!((f.stored(), f.blocks()), (0, 0));
        f
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_match_the_oracle(a in random_csr(), h in 1usize..40, t in 1usize..20) {
        let f = Brc::with_params(&a, h, t).unwrap();
        assert_block_invariants(&f, &a);
        prop_assert!(cpu_matches_oracle(&f, &a));
        let real: usize = (0..a.nrows()).map(|r| a.row_len(r).div_ceil(t)).sum();
        prop_assert_eq!(f.row_perm().iter().filter(|&&r| r != NO_ROW).count(), real);
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&Brc::with_params(&a32, h, t).unwrap(), &a32));
        prop_assert!(cpu_matches_oracle(&Brc::new(&a).unwrap(), &a));
    }
}
