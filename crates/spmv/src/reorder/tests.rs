use super::*;
use crate::choice::Choice;
use crate::formats::test_support::{cpu_matches_oracle, random_csr};
use crate::reference::{test_vector, Oracle};
use proptest::prelude::*;

/// The largest |row − column| over the entries.
fn bandwidth(a: &Csr<f64>) -> usize {
    (0..a.nrows())
        .flat_map(|r| a.row(r).0.iter().map(move |&c| r.abs_diff(c as usize)))
        .max()
        .unwrap_or(0)
}

/// `a` with rows and columns shuffled by a fixed pseudo-random permutation.
fn shuffled(a: &Csr<f64>, seed: u64) -> Csr<f64> {
    let n = a.nrows();
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut state = seed;
    for i in (1..n).rev() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        order.swap(i, (state >> 33) as usize % (i + 1));
    }
    Permutation::from_old_of_new(order).unwrap().apply(a).unwrap()
}

fn is_permutation(p: &Permutation, n: usize) -> bool {
    let mut seen = vec![false; n];
    p.old_of_new().iter().all(|&o| !std::mem::replace(&mut seen[o as usize], true))
        && p.len() == n
        && p.old_of_new().iter().enumerate().all(|(i, &o)| p.new_of_old()[o as usize] as usize == i)
}

#[test]
fn rcm_recovers_a_narrow_band_from_a_shuffled_grid() {
    let a = crate::io::gen::generate("poisson2d:n=60").unwrap();
    let s = shuffled(&a, 7);
    assert!(bandwidth(&s) > 1000, "{}", bandwidth(&s));
    let p = permutation(&s, Reordering::Rcm).unwrap();
    assert!(is_permutation(&p, s.nrows()));
    let r = p.apply(&s).unwrap();
    // A 60 x 60 grid in natural order has bandwidth 60; RCM's level sets give at most ~2·60.
    assert!(bandwidth(&r) <= 130, "bandwidth after RCM: {}", bandwidth(&r));
    assert_eq!(r.nnz(), s.nnz());
    // Deterministic.
    assert_eq!(permutation(&s, Reordering::Rcm).unwrap(), p);
}

#[test]
fn rcm_orders_a_path_with_bandwidth_one_and_handles_components() {
    // A path 0-1-…-99 shuffled, plus isolated vertices (empty rows) and a second path.
    let n = 130;
    let mut rows = vec![Vec::new(); n];
    for i in 0..99 {
        rows[i].push(i as u32 + 1);
        rows[i + 1].push(i as u32);
    }
    for (i, row) in rows.iter_mut().enumerate().take(129).skip(110) {
        row.push(i as u32 + 1);
    }
    let mut row_ptr = vec![0];
    let mut cols = Vec::new();
    for r in &mut rows {
        r.sort();
        cols.extend_from_slice(r);
        row_ptr.push(cols.len());
    }
    let vals = vec![1.0; cols.len()];
    let a = shuffled(&Csr::new_checked(n, n, row_ptr, cols, vals).unwrap(), 3);
    let p = permutation(&a, Reordering::Rcm).unwrap();
    assert!(is_permutation(&p, n));
    assert_eq!(bandwidth(&p.apply(&a).unwrap()), 1);
}

#[test]
fn degree_puts_hubs_first() {
    let a = crate::io::gen::generate("powerlaw:n=5000,mean=6,exp=2.0").unwrap();
    let p = permutation(&a, Reordering::Degree).unwrap();
    assert!(is_permutation(&p, a.nrows()));
    let g = Graph::of(&a);
    let degrees: Vec<usize> = p.old_of_new().iter().map(|&v| g.degree(v as usize)).collect();
    assert!(degrees.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn bad_input_is_an_error() {
    let tall = Csr::<f64>::zeros(5, 3);
    let e = permutation(&tall, Reordering::Rcm).unwrap_err();
    assert!(e.to_string().contains("square"), "{e}");
    assert!(Permutation::from_old_of_new(vec![0, 2, 2])
        .unwrap_err()
        .to_string()
        .contains("not a permutation"));
    assert!(Permutation::from_old_of_new(vec![0, 5]).is_err());
    assert!(Reordering::parse("metis").unwrap_err().to_string().contains("none, rcm, degree"));
    assert_eq!(Reordering::parse("RCM").unwrap(), Reordering::Rcm);
    let e = Permutation::identity(4).apply(&Csr::<f64>::zeros(5, 5)).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
}

#[test]
fn reordered_formats_multiply_in_the_original_order() {
    let a = shuffled(&crate::io::gen::generate("poisson2d:n=30").unwrap(), 11);
    for method in [Reordering::None, Reordering::Rcm, Reordering::Degree] {
        for spec in ["csr-vector", "csr5", "sell-c-sigma", "dia:max_padding=1000", "merge-csr"] {
            let f = Reordered::build(&Choice::parse(spec).unwrap(), &a, method).unwrap();
            assert!(cpu_matches_oracle(f.format(), &a), "{spec} {method}");
            assert!(f.stats().extra.iter().any(|(k, _)| k == &format!("reorder_{method}")));
        }
    }
    // Its source is P·A·Pᵀ: Aᵀ·x is refused, not computed from the permuted matrix.
    let f = Reordered::build(&Choice::parse("csr-vector").unwrap(), &a, Reordering::Rcm).unwrap();
    let n = a.nrows();
    let e = f.apply_transpose(1.0, &vec![1.0; n], 0.0, &mut vec![0.0; n]).unwrap_err();
    assert!(e.to_string().contains("reordered"), "{e}");
    // The empty matrix.
    let e = Csr::<f64>::zeros(0, 0);
    let f = Reordered::build(&Choice::parse("csr-vector").unwrap(), &e, Reordering::Rcm).unwrap();
    f.spmv(&[], &mut []).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]
    #[test]
    fn random_square_matrices_reorder_to_the_same_product(a in random_csr()) {
        // Square: take the leading block.
        let n = a.nrows().min(a.ncols());
        let mut row_ptr = vec![0];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for r in 0..n {
            for (&c, &v) in a.row(r).0.iter().zip(a.row(r).1) {
                if (c as usize) < n {
                    cols.push(c);
                    vals.push(v);
                }
            }
            row_ptr.push(cols.len());
        }
        let a = Csr::new_checked(n, n, row_ptr, cols, vals).unwrap();
        let x = test_vector::<f64>(n);
        let oracle = Oracle::new(&a, &x);
        for method in [Reordering::Rcm, Reordering::Degree] {
            let p = permutation(&a, method).unwrap();
            prop_assert!(is_permutation(&p, n));
            let f = Reordered::build(&Choice::parse("csr-vector").unwrap(), &a, method).unwrap();
            let mut y = vec![f64::NAN; n];
            f.spmv(&x, &mut y).unwrap();
            prop_assert!(oracle.check(&y).passed());
        }
    }
}
