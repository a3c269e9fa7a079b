use super::*;
use crate::formats::test_support::blocks::*;
use crate::formats::test_support::prelude::*;

fn assert_invariants<T: Scalar>(f: &AmfCsr<T>, a: &Csr<T>) {
    let (ts, tl) = f.thresholds();
    assert_eq!(*f.row_block_ptr().last().unwrap() as usize, a.nrows());
    assert_eq!(*f.sub_block_ptr().last().unwrap() as usize, f.row_blocks());
    assert!(f.row_block_ptr().windows(2).all(|w| w[0] < w[1]), "row-blocks are non-empty");
    assert!(f.sub_block_ptr().windows(2).all(|w| w[0] < w[1]), "sub-blocks are non-empty");
    // Below the threshold unless a single item; maximal (the next item would not fit).
    let rb_nnz: Vec<usize> = f
        .row_block_ptr()
        .windows(2)
        .map(|w| a.row_ptr()[w[1] as usize] - a.row_ptr()[w[0] as usize])
        .collect();
    for (k, w) in f.row_block_ptr().windows(2).enumerate() {
        assert!(w[1] - w[0] == 1 || rb_nnz[k] < ts);
        if (w[1] as usize) < a.nrows() {
            assert!(rb_nnz[k] + a.row_len(w[1] as usize) >= ts);
        }
    }
    for (s, w) in f.sub_block_ptr().windows(2).enumerate() {
        let nnz = f.sub_block_nnz()[s];
        assert!(w[1] - w[0] == 1 || nnz < tl);
        if (w[1] as usize) < f.row_blocks() {
            assert!(nnz + rb_nnz[w[1] as usize] >= tl);
        }
    }
}

#[test]
fn the_papers_fig_5_example() {
    let a = paper_matrix();
    let f = AmfCsr::with_thresholds(&a, 4, 7).unwrap();
    assert_eq!(f.row_block_ptr(), &[0, 1, 3, 5, 7, 8]);
    assert_eq!(f.sub_block_ptr(), &[0, 2, 4, 5]);
    assert_eq!(f.sub_block_nnz(), [6, 6, 4]);
    let s = f.stats();
    let var = s.extra.iter().find(|(n, _)| n == "sub_block_nnz_variance").unwrap().1;
    assert!((var - 8.0 / 9.0).abs() < 1e-12);
    assert_eq!(s.bytes, 4 * (6 + 4 + 9 + 16) + 8 * 16);
    assert_invariants(&f, &a);
    assert_paper_product(&f);
    // The registered thresholds on this small matrix: one row-block, one sub-block.
    assert_eq!(thresholds(8, 16), (32, 256));
    assert_eq!(AmfCsr::new(&a).unwrap().row_block_ptr(), &[0, 8]);
}

#[test]
fn threshold_rule() {
    assert_eq!(thresholds(0, 0), (32, 256));
    assert_eq!(thresholds(1000, 7000), (32, 256));
    assert_eq!(thresholds(1000, 40_000), (64, 512));
    assert_eq!(
        thresholds(2_000_000, 32_000_000),
        (32, 32_000_000usize.div_ceil(TARGET_SUB_BLOCKS))
    );
    assert!(matches!(AmfCsr::with_thresholds(&paper_matrix(), 0, 7), Err(Error::Format { .. })));
    assert!(matches!(AmfCsr::with_thresholds(&paper_matrix(), 4, 0), Err(Error::Format { .. })));
}

#[test]
fn folds_are_maximal_and_correct() {
    for (m, n, seed) in [(5003, 4000, 1), (20000, 300, 2), (700, 9000, 3)] {
        let a = varied(m, n, seed);
        let f = AmfCsr::new(&a).unwrap();
        assert_invariants(&f, &a);
        assert!(cpu_matches_oracle(&f, &a), "m = {m}");
        for (ts, tl) in [(1, 1), (4, 7), (32, 40), (100, 5000), (10_000, 1)] {
            let f = AmfCsr::with_thresholds(&a, ts, tl).unwrap();
            assert_invariants(&f, &a);
            assert!(cpu_matches_oracle(&f, &a), "Ts = {ts}, Tl = {tl}");
        }
        let a32: Csr<f32> = a.cast();
        assert!(cpu_matches_oracle(&AmfCsr::new(&a32).unwrap(), &a32));
    }
}

#[test]
fn edge_shapes() {
    assert_empty_products(|a| {
        let f = AmfCsr::new(a).unwrap();
        assert_eq!(f.row_blocks(), usize::from(a.nrows() > 0));
        f
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_match_the_oracle(a in random_csr(), ts in 1usize..70, tl in 1usize..300) {
        let f = AmfCsr::new(&a).unwrap();
        assert_invariants(&f, &a);
        prop_assert!(cpu_matches_oracle(&f, &a));
        let g = AmfCsr::with_thresholds(&a, ts, tl).unwrap();
        assert_invariants(&g, &a);
        prop_assert!(cpu_matches_oracle(&g, &a));
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&AmfCsr::with_thresholds(&a32, ts, tl).unwrap(), &a32));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_for_several_thresholds_bitwise_reproducibly() {
    // Rows spanning many rounds of 32, runs of empty rows, tiny and huge thresholds.
    let mut specs = vec!["amf-csr".to_string()];
    for (ts, tl) in [(1, 1), (4, 7), (33, 100), (100, 5000), (4000, 1 << 20)] {
        specs.push(format!("amf-csr:ts={ts},tl={tl}"));
    }
    assert_gpu_matches_oracle(|_| specs.clone());
}
