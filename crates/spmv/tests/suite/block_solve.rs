//! Several right-hand sides solved together (`solve::solve_block`: the solves in lock step,
//! one block product per step): each column has the bits, iterations and outcome of its own
//! single solve wherever the block product gives each column the single product's bits (CSR
//! on the host; the formats' block kernels on the GPU), columns stop on their own, and bad
//! blocks are refused.

use crate::common;

use spmv::app::solve::Preconditioner;
use spmv::operator::{Block, Layout};
use spmv::reference::{test_vector, Oracle};
use spmv::solve::{self, KrylovSettings, Method, Outcome, Solution, Solvable};
use spmv::{Csr, Scalar};

fn generate(spec: &str) -> Csr<f64> {
    spmv::io::gen::generate(spec).unwrap()
}

/// Each method on a matrix it solves, with rows long enough (27-point stencil, about 21
/// entries a row) for the host to run the columns in lock step: CG on the stencil (SPD),
/// MINRES on it shifted to be indefinite, BiCGSTAB and GMRES(20) on a nonsymmetric variant;
/// then CG on 2-D Poisson (5 a row), whose columns the host solves one after the other.
fn systems() -> Vec<(Method, Csr<f64>)> {
    let stencil = generate("poisson3d:n=8,points=27");
    let shifted = common::with_values(&stencil, |r, c, v| if r == c { v - 10.0 } else { v });
    let skewed = common::with_values(&stencil, |r, c, v| match c as isize - r as isize {
        1 => v - 0.6,
        -1 => v + 0.6,
        _ => v,
    });
    vec![
        (Method::Cg, stencil),
        (Method::Minres, shifted),
        (Method::Bicgstab, skewed.clone()),
        (Method::Gmres, skewed),
        (Method::Cg, generate("poisson2d:n=24")),
    ]
}

/// k right-hand sides that converge after different numbers of iterations: A·x_true, a unit
/// vector, a zero column (answered at once), a smooth one, then scaled copies.
fn right_hand_sides<T: Scalar>(a: &Csr<f64>, k: usize) -> Vec<Vec<T>> {
    let n = a.nrows();
    let exact = Oracle::new(a, &test_vector::<f64>(n)).y;
    let mut unit = vec![0.0; n];
    unit[n / 3] = 1.0;
    let smooth: Vec<f64> = (0..n).map(|i| (i as f64 * 0.05).sin() + 1.5).collect();
    let bases = [exact, unit, vec![0.0; n], smooth];
    (0..k)
        .map(|j| {
            let scale = 1.0 + (j / bases.len()) as f64 * 3.0;
            bases[j % bases.len()].iter().map(|&v| T::from_f64(v * scale)).collect()
        })
        .collect()
}

/// `columns` as one block in `layout`.
fn block_of<T: Copy>(columns: &[Vec<T>], layout: Layout) -> Vec<T> {
    let (n, k) = (columns[0].len(), columns.len());
    match layout {
        Layout::ColMajor => columns.concat(),
        Layout::RowMajor => (0..n * k).map(|i| columns[i % k][i / k]).collect(),
    }
}

fn bits<T: Scalar>(x: &[T]) -> Vec<u64> {
    x.iter().map(|v| v.to_f64().to_bits()).collect()
}

fn settings(tol: f64) -> KrylovSettings {
    KrylovSettings { tol, max_iter: 3000, restart: 20, ..KrylovSettings::default() }
}

/// What must agree between a column of the block solve and its single solve.
fn summary<T: Scalar>(s: &Solution<T>) -> (Vec<u64>, usize, String, u64, u64) {
    let outcome = format!("{:?}", s.outcome);
    (bits(&s.x), s.iterations, outcome, s.residual.to_bits(), s.true_residual.to_bits())
}

/// Solves the block on `a` and each column alone, and lists the columns that differ.
fn compare<T: Scalar, A: Solvable<T> + ?Sized>(
    what: &str, a: &A, method: Method, columns: &[Vec<T>], m_inv: Option<&[T]>, s: &KrylovSettings,
    failures: &mut Vec<String>,
) {
    for layout in [Layout::ColMajor, Layout::RowMajor] {
        let block = Block { k: columns.len(), layout };
        let together =
            solve::solve_block(a, method, &block_of(columns, layout), block, m_inv, s).unwrap();
        assert_eq!(together.len(), columns.len());
        for (j, (b, got)) in columns.iter().zip(&together).enumerate() {
            let alone = solve::solve(a, method, b, m_inv, s).unwrap();
            if summary(got) != summary(&alone) {
                failures.push(format!(
                    "{what} {method:?} {layout:?} k = {}: column {j} {:?} after {} iterations, \
                     alone {:?} after {}",
                    columns.len(),
                    got.outcome,
                    got.iterations,
                    alone.outcome,
                    alone.iterations
                ));
            }
        }
    }
}

#[test]
fn each_column_has_its_single_solves_bits_on_the_host() {
    let mut failures = Vec::new();
    for (method, a) in systems() {
        let m_inv = Preconditioner::Jacobi.inverse::<f64>(&a, method).unwrap();
        for k in [2, 3, 5, 9] {
            let columns = right_hand_sides::<f64>(&a, k);
            for m in [None, m_inv.as_deref()] {
                let s = settings(1e-9);
                compare("Csr f64", &a, method, &columns, m, &s, &mut failures);
            }
        }
        // f32, and a host handle whose CPU product is CSR's (csr-vector).
        let a32: Csr<f32> = a.cast();
        let columns = right_hand_sides::<f32>(&a, 4);
        compare("Csr f32", &a32, method, &columns, None, &settings(1e-5), &mut failures);
        let handle =
            spmv::formats::build(&spmv::formats::parse_spec("csr-vector").unwrap(), &a).unwrap();
        let columns = right_hand_sides::<f64>(&a, 3);
        let s = settings(1e-9);
        compare("csr-vector on the CPU", &handle, method, &columns, None, &s, &mut failures);
    }
    common::assert_clean(failures);
}

#[test]
fn columns_stop_on_their_own() {
    let (method, a) = systems().remove(0);
    let columns = right_hand_sides::<f64>(&a, 4);
    let s = settings(1e-9);
    let b = block_of(&columns, Layout::ColMajor);
    let got = solve::solve_block(&a, method, &b, Block::columns(4), None, &s).unwrap();
    // The zero column is answered at once; the others converge after different counts.
    assert_eq!((got[2].iterations, got[2].x.iter().all(|&v| v == 0.0)), (0, true));
    assert!(got.iter().all(|s| s.converged()), "{:?}", got.iter().map(|s| &s.outcome));
    assert_ne!(got[0].iterations, got[1].iterations);
    // A column that cannot be solved (a non-finite entry) is reported; the rest are solved.
    let mut bad = b.clone();
    bad[a.nrows() + 5] = f64::NAN;
    let got = solve::solve_block(&a, method, &bad, Block::columns(4), None, &s).unwrap();
    assert_eq!(got[1].outcome, Outcome::NonFinite);
    assert!(got[0].converged() && got[3].converged());
    // One column: the single solve.
    let one = solve::solve_block(&a, method, &columns[0], Block::columns(1), None, &s).unwrap();
    assert_eq!(summary(&one[0]), summary(&solve::cg(&a, &columns[0], None, &s).unwrap()));
    // A step limit stops every column at it.
    let short = KrylovSettings { max_iter: 7, ..s.clone() };
    let got = solve::solve_block(&a, method, &b, Block::columns(4), None, &short).unwrap();
    for j in [0, 1, 3] {
        assert_eq!((got[j].iterations, &got[j].outcome), (7, &Outcome::NotConverged), "{j}");
    }
}

#[test]
fn bad_blocks_are_refused_and_empty_ones_answered() {
    let (method, a) = systems().remove(0);
    let n = a.nrows();
    let s = settings(1e-9);
    let solve =
        |b: &[f64], k: usize| solve::solve_block(&a, method, b, Block::columns(k), None, &s);
    let short = solve(&vec![1.0; 2 * n - 1], 2).unwrap_err().to_string();
    assert!(short.contains("right-hand sides") && short.contains(&format!("{n}·2")), "{short}");
    assert!(solve(&[], 0).is_err());
    assert!(solve(&vec![1.0; n], usize::MAX).is_err());
    let wide =
        Csr::<f64>::new_checked(3, 4, vec![0, 1, 2, 3], vec![0, 1, 2], vec![1.0; 3]).unwrap();
    let err = solve::solve_block(&wide, method, &[1.0; 6], Block::columns(2), None, &s);
    assert!(err.unwrap_err().to_string().contains("square"));
    // An empty system: every column answered at once.
    let empty = Csr::<f64>::new_checked(0, 0, vec![0], vec![], vec![]).unwrap();
    let got = solve::solve_block(&empty, method, &[], Block::columns(3), None, &s).unwrap();
    assert!(got.len() == 3 && got.iter().all(|s| s.converged() && s.x.is_empty()));
}

/// On the GPU, in the formats whose block kernels give each column the single product's bits:
/// each column of the lock-step solve (a CUDA graph of every column's steps and the block
/// product) has the single GPU solve's bits; in a format without (ELL: one product per column
/// or a CSR copy) the columns converge.
#[test]
#[ignore = "needs a CUDA device"]
fn each_column_has_its_single_solves_bits_on_the_gpu() {
    let gpu = common::gpu();
    let mut failures = Vec::new();
    for (method, a) in systems() {
        let m_inv = Preconditioner::Jacobi.inverse::<f64>(&a, method).unwrap();
        for spec in ["csr-vector", "sell-c-sigma", "dia", "dasp", "merge-csr"] {
            let device = spmv::formats::build(&spmv::formats::parse_spec(spec).unwrap(), &a)
                .unwrap()
                .upload(&gpu)
                .unwrap();
            for k in [2, 8, 9] {
                let columns = right_hand_sides::<f64>(&a, k);
                let s = settings(1e-9);
                let what = format!("{spec} f64");
                compare(&what, &device, method, &columns, m_inv.as_deref(), &s, &mut failures);
            }
            let a32: Csr<f32> = a.cast();
            let device = spmv::formats::build(&spmv::formats::parse_spec(spec).unwrap(), &a32)
                .unwrap()
                .upload(&gpu)
                .unwrap();
            let columns = right_hand_sides::<f32>(&a, 4);
            let s = settings(1e-5);
            compare(&format!("{spec} f32"), &device, method, &columns, None, &s, &mut failures);
        }
        let device = spmv::formats::build(&spmv::formats::parse_spec("ell").unwrap(), &a)
            .unwrap()
            .upload(&gpu)
            .unwrap();
        let columns = right_hand_sides::<f64>(&a, 8);
        let s = settings(1e-9);
        let b = block_of(&columns, Layout::ColMajor);
        let got = solve::solve_block(&device, method, &b, Block::columns(8), None, &s).unwrap();
        for (j, got) in got.iter().enumerate() {
            if !got.converged() || (j % 4 != 2 && !got.graph) {
                failures.push(format!(
                    "ell {method:?}: column {j} {:?}, graph {}",
                    got.outcome, got.graph
                ));
            }
        }
    }
    common::assert_clean(failures);
}
