use super::*;
use crate::formats::test_support::prelude::*;
use crate::formats::test_support::rows::*;
use crate::Coo;

#[test]
fn worked_example_gives_the_documented_arrays() {
    let a = example();
    let j = Jds::new(&a).unwrap();
    assert_eq!(j.perm(), &[2, 0, 4, 3, 1]);
    assert_eq!(j.iter_ptr(), &[0, 4, 7, 8]);
    assert_eq!(j.values(), &[3.0, 1.0, 7.0, 6.0, 4.0, 2.0, 8.0, 5.0]);
    assert_eq!(j.col_idx(), &[0, 0, 2, 1, 1, 2, 3, 2]);
    let s = j.stats();
    assert_eq!((s.nnz, s.stored, s.max_row_len), (8, 8, 3));
    assert_eq!(s.extra, vec![("jagged_diagonals".to_string(), 3.0)]);
    assert_eq!(s.bytes, 4 * (5 + 4 + 8) + 8 * 8);
    assert_example_product(&j, &a);
}

#[test]
fn empty_matrices_and_rows() {
    for (m, n) in [(0, 0), (0, 5), (5, 0), (70, 3)] {
        let a = Csr::<f32>::zeros(m, n);
        let j = Jds::new(&a).unwrap();
        assert_eq!(j.iter_ptr(), &[0]);
        assert_eq!(j.jagged_diagonals(), 0);
        let mut y = vec![f32::NAN; m];
        j.spmv_cpu(&vec![1.0; n], &mut y);
        assert!(y.iter().all(|&v| v == 0.0));
    }
}

#[test]
fn large_matrix_uses_the_parallel_paths() {
    // > 2^16 rows (parallel sort) and a diagonal longer than FILL_CHUNK.
    let m = 200_000;
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..m as u32 {
        for k in 0..(r % 7) {
            rows.push(r);
            cols.push((r * 31 + k * 1009) % m as u32);
            vals.push(1.0 + (k as f64) / 8.0);
        }
    }
    let a = Coo::new_checked(m, m, rows, cols, vals).unwrap().to_csr();
    let j = Jds::new(&a).unwrap();
    // Stable: within a length class, original rows ascend.
    let lens: Vec<usize> = j.perm().iter().map(|&r| a.row_len(r as usize)).collect();
    assert!(lens.windows(2).all(|w| w[0] >= w[1]));
    assert!(j
        .perm()
        .windows(2)
        .all(|w| a.row_len(w[0] as usize) != a.row_len(w[1] as usize) || w[0] < w[1]));
    assert!(cpu_matches_oracle(&j, &a));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_match_the_oracle(a in random_csr()) {
        let j = Jds::new(&a).unwrap();
        prop_assert_eq!(j.iter_ptr().len(), a.max_row_len() + 1);
        prop_assert_eq!(*j.iter_ptr().last().unwrap() as usize, a.nnz());
        prop_assert!(is_permutation(j.perm(), a.nrows()));
        prop_assert!(cpu_matches_oracle(&j, &a));
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&Jds::new(&a32).unwrap(), &a32));
    }
}
