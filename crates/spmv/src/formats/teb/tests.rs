use super::*;
use crate::formats::test_support::blocks::*;
use crate::formats::test_support::prelude::*;

/// The structural invariants of any TEB conversion.
fn assert_invariants<T: Scalar>(f: &Teb<T>, a: &Csr<T>) {
    let m = a.nrows();
    let mut sorted = f.perm().to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..m as u32).collect::<Vec<_>>(), "perm is a permutation");
    assert_eq!(f.blo_idx().first(), Some(&0));
    assert_eq!(*f.blo_idx().last().unwrap() as usize, m);
    assert!(f.blo_idx().windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(f.row_ptr().len(), m + 1);
    for (i, &r) in f.perm().iter().enumerate() {
        let (s, e) = (f.row_ptr()[i] as usize, f.row_ptr()[i + 1] as usize);
        let (cols, vals) = a.row(r as usize);
        assert_eq!(&f.col_idx()[s..e], cols);
        assert_eq!(&f.values()[s..e], vals);
    }
    // Every block but the last stays within the threshold unless its first row alone
    // exceeds it; each block starts with its longest row.
    let t = f.choice().threshold;
    let len = |r: usize| f.row_ptr()[r + 1] - f.row_ptr()[r];
    for (b, (w, &nnz)) in f.blo_idx().windows(2).zip(&f.block_nnz()).enumerate() {
        let (r0, r1) = (w[0] as usize, w[1] as usize);
        if r0 == r1 {
            continue;
        }
        assert_eq!((r0..r1).map(len).max(), Some(len(r0)), "block {b} starts with its longest row");
        if b + 1 < f.blocks() {
            assert!(nnz as f64 <= t.max(len(r0) as f64), "block {b}: {nnz} > {t}");
        }
    }
}

#[test]
fn the_papers_example_gives_the_blocks_and_arrays_of_fig_15() {
    let a = paper_matrix();
    let f = Teb::with_blocks(&a, 4, 1.0, TebKernel::RowPerThread).unwrap();
    assert_eq!(f.choice().threshold, 4.0);
    assert_eq!(f.blocks(), 4);
    assert_eq!(f.block_nnz(), [4, 4, 4, 4]);
    // Blocks {4}, {3,1}, {2,1,1}, {2,2} as row lengths:
    let lens: Vec<Vec<u32>> = f
        .blo_idx()
        .windows(2)
        .map(|w| {
            (w[0]..w[1]).map(|r| f.row_ptr()[r as usize + 1] - f.row_ptr()[r as usize]).collect()
        })
        .collect();
    assert_eq!(lens, [vec![4], vec![3, 1], vec![2, 1, 1], vec![2, 2]]);
    assert_eq!(f.choice().variance, 0.0);
    assert_eq!(f.perm(), &[7, 0, 6, 2, 4, 1, 3, 5]);
    assert_eq!(f.blo_idx(), &[0, 1, 3, 6, 8]);
    assert_eq!(f.row_ptr(), &[0, 4, 7, 8, 10, 11, 12, 14, 16]);
    assert_eq!(
        f.values(),
        &[5.0, 4.0, 2.0, 1.0, 2.0, 1.0, 8.0, 6.0, 6.0, 9.0, 2.0, 3.0, 6.0, 7.0, 5.0, 8.0]
    );
    assert_eq!(f.col_idx(), &[0, 5, 6, 7, 2, 6, 7, 4, 3, 7, 6, 0, 0, 1, 4, 5]);
    let s = f.stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros()), (16, 16, 0));
    assert_eq!(s.bytes, 4 * (5 + 9 + 8 + 16) + 8 * 16);
    let extra = |name: &str| s.extra.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(extra("block_nnz_variance"), 0.0);
    assert_eq!(extra("blocks"), 4.0);
    assert_eq!(extra("paper_flops"), 24.0);
    assert_paper_product(&f);
}

#[test]
fn the_heuristic_on_the_papers_example() {
    let a = paper_matrix();
    let f = Teb::new(&a, TebKernel::RowPerThread).unwrap();
    let c = f.choice();
    // k = 1.01 never lowers S² below k = 1 here: no critical count, so k = 1.005 throughout.
    assert_eq!((c.blocks, c.critical, c.k, c.tried), (4, None, partition::K_LARGE_BLOCKS, 7));
    assert_eq!(c.threshold, 16.0 / 4.0 * 1.005);
    assert_eq!(f.block_nnz(), [4, 4, 4, 4]);
    assert_eq!(f.perm(), &[7, 0, 6, 2, 4, 1, 3, 5]);
    assert!(cpu_matches_oracle(&f, &a));
}

#[test]
fn bad_parameters_are_format_errors() {
    let a = paper_matrix();
    for (blocks, k) in [(0, 1.0), (9, 1.0), (4, 0.0), (4, -1.0), (4, f64::NAN), (4, f64::INFINITY)]
    {
        let r = Teb::with_blocks(&a, blocks, k, TebKernel::RowPerThread);
        assert!(matches!(r, Err(Error::Format { .. })), "bLN = {blocks}, k = {k}");
    }
    // An empty matrix takes any block count.
    assert_eq!(
        Teb::with_blocks(&Csr::<f64>::zeros(0, 4), 3, 1.0, TebKernel::RowPerThread)
            .unwrap()
            .blocks(),
        0
    );
}

#[test]
fn heuristic_partitions_are_valid_and_correct() {
    for (m, n, seed) in [(5003, 4000, 1), (20000, 300, 2), (700, 9000, 3), (4500, 4500, 4)] {
        let a = varied(m, n, seed);
        let f = Teb::new(&a, TebKernel::RowPerThread).unwrap();
        assert_invariants(&f, &a);
        assert!(cpu_matches_oracle(&f, &a), "m = {m}");
        let a32: Csr<f32> = a.cast();
        assert!(cpu_matches_oracle(&Teb::new(&a32, TebKernel::LanesPerRow).unwrap(), &a32));
        let c = f.choice();
        assert!(
            a.max_row_len() as f64 <= 2.0 * c.threshold,
            "eq. (10) holds for the chosen count: {c:?}"
        );
        assert!(
            f.threads_per_block().is_multiple_of(32)
                && (32..=1024).contains(&f.threads_per_block())
        );
        let s = f.stats();
        assert!(s.extra.iter().any(|(n, v)| n == "threshold_selection_ms" && *v >= 0.0));
        assert!(s.extra.iter().any(|(n, v)| n == "merge_ms" && *v >= 0.0));
    }
}

#[test]
fn empty_rows_gather_in_one_block_after_its_first_row() {
    for (m, n, seed) in [(5003, 4000, 1), (20000, 300, 2), (4500, 4500, 4)] {
        let a = varied(m, n, seed);
        let f = Teb::new(&a, TebKernel::LanesPerRow).unwrap();
        let empty = (0..m).filter(|&r| a.row_len(r) == 0).count();
        let (block, begin, end) = f.empty_rows().expect("varied matrices have empty rows");
        assert_eq!(begin, f.blo_idx()[block as usize] + 1);
        assert!(end <= f.blo_idx()[block as usize + 1]);
        assert_eq!((end - begin) as usize, empty, "every empty row is in the run");
        assert!((begin..end).all(|r| f.row_ptr()[r as usize + 1] == f.row_ptr()[r as usize]));
    }
    // No empty rows, or a single block: none.
    assert_eq!(Teb::new(&paper_matrix(), TebKernel::LanesPerRow).unwrap().empty_rows(), None);
    let a = varied(300, 300, 7);
    assert_eq!(Teb::with_blocks(&a, 1, 1.0, TebKernel::LanesPerRow).unwrap().empty_rows(), None);
}

#[test]
fn every_block_count_is_correct() {
    let a = varied(3000, 2000, 9);
    for blocks in [1, 2, 3, 7, 64, 100, 131, 132, 1000, 2999, 3000] {
        for k in [1.0, 1.005, 1.03, 2.0] {
            let f = Teb::with_blocks(&a, blocks, k, TebKernel::RowPerThread).unwrap();
            assert_eq!(f.blocks(), blocks);
            assert_invariants(&f, &a);
            assert!(cpu_matches_oracle(&f, &a), "bLN = {blocks}, k = {k}");
        }
    }
}

#[test]
fn edge_shapes() {
    for kernel in [TebKernel::RowPerThread, TebKernel::LanesPerRow] {
        assert_empty_products(|a| {
            let f = Teb::new(a, kernel).unwrap();
            if a.nrows() <= 1 {
                assert_eq!(f.blocks(), a.nrows());
            }
            assert_invariants(&f, a);
            f
        });
    }
    // One row.
    let a = Csr::new_checked(1, 3, vec![0, 2], vec![0, 2], vec![1.5, -2.0]).unwrap();
    let f = Teb::new(&a, TebKernel::RowPerThread).unwrap();
    assert_eq!(f.blocks(), 1);
    assert!(cpu_matches_oracle(&f, &a));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_match_the_oracle(a in random_csr(), b in 1usize..60, k in 0.5f64..2.0) {
        let f = Teb::new(&a, TebKernel::RowPerThread).unwrap();
        assert_invariants(&f, &a);
        prop_assert!(cpu_matches_oracle(&f, &a));
        let blocks = b.min(a.nrows().max(1));
        let fixed = Teb::with_blocks(&a, blocks, k, TebKernel::LanesPerRow).unwrap();
        assert_invariants(&fixed, &a);
        prop_assert!(cpu_matches_oracle(&fixed, &a));
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&Teb::new(&a32, TebKernel::LanesPerRow).unwrap(), &a32));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_for_many_block_counts_bitwise_reproducibly() {
    assert_gpu_matches_oracle(|a| {
        let mut specs = vec!["teb".to_string(), "teb-lanes".to_string()];
        for b in [1, 2, 4, 7, 132, 1000].into_iter().filter(|&b| b <= a.nrows()) {
            specs.extend([format!("teb:blocks={b},k=1"), format!("teb-lanes:blocks={b},k=1")]);
        }
        specs
    });
}
