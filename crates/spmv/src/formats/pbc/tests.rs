use super::*;
use crate::formats::test_support::blocks::*;
use crate::formats::test_support::prelude::*;

fn assert_invariants<T: Scalar>(f: &Pbc<T>, a: &Csr<T>) {
    let mut sorted = f.perm().to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..a.nrows() as u32).collect::<Vec<_>>());
    assert_eq!(*f.block_row_ptr().last().unwrap() as usize, a.nrows());
    assert_eq!(*f.block_slot_ptr().last().unwrap() as usize, f.stored());
    assert_eq!(f.block_nnz().iter().sum::<usize>(), a.nnz());
    assert!(f.stored() >= a.nnz());
    for b in 0..f.blocks() {
        let rows = &f.perm()[f.block_row_ptr()[b] as usize..f.block_row_ptr()[b + 1] as usize];
        let width = rows.iter().map(|&r| a.row_len(r as usize)).max().unwrap_or(0);
        assert_eq!(f.block_width()[b] as usize, width, "block {b}");
    }
}

#[test]
fn the_example_matrix_gives_the_documented_arrays() {
    let a = paper_matrix();
    let f = Pbc::new(&a).unwrap();
    assert_eq!(f.blocks(), 4);
    assert_eq!(f.perm(), &[7, 0, 2, 3, 5, 1, 4, 6]);
    assert_eq!(f.block_row_ptr(), &[0, 1, 2, 4, 8]);
    assert_eq!(f.block_width(), &[4, 3, 2, 2]);
    assert_eq!(f.block_slot_ptr(), &[0, 4, 7, 11, 19]);
    assert_eq!(f.block_nnz(), &[4, 3, 4, 5]);
    #[rustfmt::skip]
    assert_eq!(f.values(), &[5.0, 4.0, 2.0, 1.0, 2.0, 1.0, 8.0, 6.0, 6.0, 9.0, 7.0, 5.0, 3.0, 2.0, 6.0, 8.0, 0.0, 0.0, 0.0]);
    assert_eq!(f.col_idx(), &[0, 5, 6, 7, 2, 6, 7, 3, 0, 7, 1, 4, 0, 6, 4, 5, 0, 6, 4]);
    let s = f.stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros()), (16, 19, 3));
    assert_eq!(s.extra[2], ("block_nnz_variance".to_string(), 0.5));
    assert_eq!(s.extra[4], ("candidates_tried".to_string(), 7.0));
    // The other counts score worse (S² of P = 2, 3, 5, 6, 7, 8 by hand: 1, 1.56, 0.56, 1.89, 1.35, 2.13).
    let prefix = [0, 4, 7, 9, 11, 13, 14, 15, 16];
    assert_eq!(cuts(&prefix, 2), [0, 2, 8]);
    assert_eq!(cuts(&prefix, 3), [0, 1, 4, 8]);
    assert_eq!(cuts(&prefix, 8), [0, 0, 1, 2, 2, 3, 4, 6, 8]);
    for p in [2, 3, 5, 6, 7, 8] {
        assert!(variance(&block_nnz(&prefix, &cuts(&prefix, p))) > 0.5, "P = {p}");
    }
    assert_paper_product(&f);
}

#[test]
fn bad_block_counts_are_format_errors() {
    let a = paper_matrix();
    assert!(matches!(Pbc::with_blocks(&a, 0), Err(Error::Format { .. })));
    assert!(matches!(Pbc::with_blocks(&a, 9), Err(Error::Format { .. })));
}

#[test]
fn too_much_padding_is_refused() {
    // Row 0 has 2000 entries, the 199 999 others one each: with 2 blocks the first holds
    // row 0 and about half the short rows, padded to 2000.
    let m = 200_000;
    let mut row_ptr = vec![0usize, 2000];
    for r in 1..m {
        row_ptr.push(2000 + r);
    }
    let cols: Vec<u32> = (0..2000).chain((1..m).map(|r| (r % 5000) as u32)).collect();
    let a = Csr::new_checked(m, 5000, row_ptr, cols, vec![1.0f32; 2000 + m - 1]).unwrap();
    assert!(matches!(Pbc::with_blocks(&a, 2), Err(Error::Format { .. })));
    // The searched partition isolates row 0 well enough to be accepted and correct.
    let f = Pbc::new(&a).unwrap();
    assert!(cpu_matches_oracle(&f, &a));
}

#[test]
fn searched_partitions_are_valid_and_correct() {
    for (m, n, seed) in [(5003, 4000, 1), (20000, 300, 2), (700, 9000, 3), (4500, 4500, 4)] {
        let a = varied(m, n, seed);
        let f = Pbc::new(&a).unwrap();
        assert_invariants(&f, &a);
        assert!(cpu_matches_oracle(&f, &a), "m = {m}");
        let a32: Csr<f32> = a.cast();
        assert!(cpu_matches_oracle(&Pbc::new(&a32).unwrap(), &a32));
    }
    let a = varied(3000, 2000, 9);
    // One block pads 3000 rows to the longest (> 1000 entries): refused.
    assert!(matches!(Pbc::with_blocks(&a, 1), Err(Error::Format { .. })));
    for blocks in [132, 1000, 3000] {
        let f = Pbc::with_blocks(&a, blocks).unwrap();
        assert_invariants(&f, &a);
        assert!(cpu_matches_oracle(&f, &a), "P = {blocks}");
    }
}

#[test]
fn edge_shapes() {
    assert_empty_products(|a| {
        let f = Pbc::new(a).unwrap();
        assert_invariants(&f, a);
        assert_eq!(f.stored(), 0);
        f
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_match_the_oracle(a in random_csr(), b in 1usize..60) {
        let f = Pbc::new(&a).unwrap();
        assert_invariants(&f, &a);
        prop_assert!(cpu_matches_oracle(&f, &a));
        let fixed = Pbc::with_blocks(&a, b.min(a.nrows().max(1))).unwrap();
        assert_invariants(&fixed, &a);
        prop_assert!(cpu_matches_oracle(&fixed, &a));
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&Pbc::new(&a32).unwrap(), &a32));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_for_several_block_counts() {
    assert_gpu_matches_oracle(|a| {
        let mut specs = vec!["pbc".to_string()];
        for b in [1, 3, 132, 1000].into_iter().filter(|&b| b <= a.nrows()) {
            // A count whose padding exceeds the limit is refused (tested on the CPU).
            if !matches!(Pbc::with_blocks(a, b), Err(Error::Format { .. })) {
                specs.push(format!("pbc:blocks={b}"));
            }
        }
        specs
    });
}
