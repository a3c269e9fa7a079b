//! MINRES and GMRES (solve::methods over every engine), and `auto`'s choice of method: known
//! solutions on generated symmetric indefinite and nonsymmetric problems, the stops they must
//! make (max_iter, singular, non-finite, a preconditioner that is not positive definite), the
//! shared matrices, and on the GPU the host's bits on the GPU's product, repeatable, in
//! several formats and over several GPUs.

use crate::common;

use spmv::app::solve::{method_for, solve_choosing, MethodChoice, Preconditioner};
use spmv::reference::{test_vector, Oracle};
use spmv::solve::{self, KrylovSettings, Method, Outcome, Solution};
use spmv::Csr;

/// b = A·x_true (exact products), x_true the test vector.
fn problem(a: &Csr<f64>) -> (Vec<f64>, Vec<f64>) {
    let x_true = test_vector::<f64>(a.ncols());
    let b = Oracle::new(a, &x_true).y;
    (x_true, b)
}

fn generate(spec: &str) -> Csr<f64> {
    spmv::io::gen::generate(spec).unwrap()
}

/// The 2-D Poisson matrix (eigenvalues in (0, 8)) shifted by −`shift`·I: indefinite for a
/// shift in (0, 8).
fn shifted_poisson(n: usize, shift: f64) -> Csr<f64> {
    let p = generate(&format!("poisson2d:n={n}"));
    common::with_values(&p, |r, c, v| if r == c { v - shift } else { v })
}

/// A 2-D convection–diffusion operator (nonsymmetric): Poisson with the east/west couplings
/// −1 ± c.
fn convection_diffusion(n: usize, c: f64) -> Csr<f64> {
    let p = generate(&format!("poisson2d:n={n}"));
    common::with_values(&p, |r, col, v| match col as isize - r as isize {
        1 => v - c,
        -1 => v + c,
        _ => v,
    })
}

fn settings(tol: f64, max_iter: usize, restart: usize) -> KrylovSettings {
    KrylovSettings { tol, max_iter, restart, ..KrylovSettings::default() }
}

fn relative_error(x: &[f64], x_true: &[f64]) -> f64 {
    let diff: f64 = x.iter().zip(x_true).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
    diff / x_true.iter().map(|v| v * v).sum::<f64>().sqrt()
}

fn inverse(a: &Csr<f64>, method: Method) -> Option<Vec<f64>> {
    Preconditioner::Jacobi.inverse::<f64>(a, method).unwrap()
}

fn bits<T: spmv::Scalar>(x: &[T]) -> Vec<u64> {
    x.iter().map(|v| v.to_f64().to_bits()).collect()
}

#[test]
fn minres_solves_symmetric_indefinite_systems() {
    let a = shifted_poisson(24, 1.3);
    let (x_true, b) = problem(&a);
    let cg = solve::cg(&a, &b, None, &settings(1e-10, 4000, 30)).unwrap();
    assert!(matches!(cg.outcome, Outcome::Indefinite(_)), "{:?}", cg.outcome);
    for m in [None, inverse(&a, Method::Minres)] {
        let s = solve::minres(&a, &b, m.as_deref(), &settings(1e-10, 4000, 30)).unwrap();
        assert!(
            s.converged(),
            "{:?} after {} (true {:e})",
            s.outcome,
            s.iterations,
            s.true_residual
        );
        assert!(s.true_residual <= 1e-9, "{}", s.true_residual);
        assert!(relative_error(&s.x, &x_true) < 1e-5, "{}", relative_error(&s.x, &x_true));
    }
    // On an SPD matrix MINRES takes about CG's iterations.
    let spd = generate("poisson2d:n=30");
    let (_, b) = problem(&spd);
    let cg = solve::cg(&spd, &b, None, &settings(1e-10, 4000, 30)).unwrap();
    let mr = solve::minres(&spd, &b, None, &settings(1e-10, 4000, 30)).unwrap();
    assert!(mr.converged() && mr.iterations.abs_diff(cg.iterations) <= 2 + cg.iterations / 20);
    // Jacobi for MINRES must be positive definite: the library refuses a negative diagonal.
    let negative = shifted_poisson(8, 5.0);
    let (_, bn) = problem(&negative);
    let e = solve::minres(
        &negative,
        &bn,
        Some(&solve::jacobi(&negative).unwrap()),
        &settings(1e-8, 100, 30),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("positive definite") && e.contains("row 1"), "{e}");
}

#[test]
fn gmres_solves_nonsymmetric_systems() {
    let a = convection_diffusion(30, 0.4);
    let (x_true, b) = problem(&a);
    for restart in [30, 7, 1] {
        for m in [None, inverse(&a, Method::Gmres)] {
            let s = solve::gmres(&a, &b, m.as_deref(), &settings(1e-10, 20_000, restart)).unwrap();
            let what = format!("GMRES({restart}) jacobi {}", m.is_some());
            assert!(
                s.converged(),
                "{what}: {:?} after {} (true {:e})",
                s.outcome,
                s.iterations,
                s.true_residual
            );
            assert!(s.true_residual <= 1e-10, "{what}: {}", s.true_residual);
            assert!(
                relative_error(&s.x, &x_true) < 1e-6,
                "{what}: {}",
                relative_error(&s.x, &x_true)
            );
        }
    }
    // Full GMRES (restart ≥ n) ends within n steps in exact arithmetic.
    let small = convection_diffusion(6, 0.3);
    let (_, b) = problem(&small);
    let s = solve::gmres(&small, &b, None, &settings(1e-12, 1000, 36)).unwrap();
    assert!(s.converged() && s.iterations <= 36, "{:?} {}", s.outcome, s.iterations);
}

#[test]
fn minres_and_gmres_stop_as_told() {
    let (a, sym) = (convection_diffusion(20, 0.3), shifted_poisson(20, 1.0));
    // Each stops after max_iter steps (GMRES's Arnoldi steps across restarts) unconverged.
    for (s, max_iter) in [
        (solve::gmres(&a, &problem(&a).1, None, &settings(1e-14, 7, 3)).unwrap(), 7),
        (solve::minres(&sym, &problem(&sym).1, None, &settings(1e-14, 5, 30)).unwrap(), 5),
    ] {
        assert!(
            s.outcome == Outcome::NotConverged && s.iterations == max_iter,
            "{:?} {}",
            s.outcome,
            s.iterations
        );
    }
    // A singular system (row and column 0 emptied, b[0] ≠ 0) is never reported solved.
    let p = generate("poisson2d:n=12");
    let singular = common::with_values(&p, |r, c, v| if r == 0 || c == 0 { 0.0 } else { v });
    let b: Vec<f64> = (0..p.nrows()).map(|i| if i == 0 { 1.0 } else { 0.5 }).collect();
    for s in [
        solve::minres(&singular, &b, None, &settings(1e-10, 500, 30)).unwrap(),
        solve::gmres(&singular, &b, None, &settings(1e-10, 500, 30)).unwrap(),
    ] {
        assert!(
            !s.converged() && s.true_residual > 1e-3,
            "{:?}, true {}",
            s.outcome,
            s.true_residual
        );
    }
    // Non-finite values are reported as such.
    let nan = common::with_values(&p, |r, c, v| if r == 5 && c == 5 { f64::NAN } else { v });
    let ones = vec![1.0; p.nrows()];
    for method in [Method::Minres, Method::Gmres] {
        let s = solve::solve(&nan, method, &ones, None, &settings(1e-10, 100, 30)).unwrap();
        assert_eq!(s.outcome, Outcome::NonFinite, "{method:?}");
    }
    // b = 0 is answered at once; a restart outside 1..=256 is refused.
    let s = solve::gmres(&p, &vec![0.0; p.nrows()], None, &settings(1e-10, 100, 30)).unwrap();
    assert!(s.converged() && s.iterations == 0);
    for restart in [0, 257] {
        let e = solve::gmres(&p, &ones, None, &settings(1e-10, 100, restart)).unwrap_err();
        assert!(e.to_string().contains("restart"), "{e}");
    }
}

#[test]
fn minres_and_gmres_give_the_same_bits_on_any_number_of_threads() {
    let sym = shifted_poisson(40, 0.7);
    let (_, bs) = problem(&sym);
    let gen = convection_diffusion(40, 0.3);
    let (_, bg) = problem(&gen);
    let run = |threads: usize| -> (Solution<f64>, Solution<f64>) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            (
                solve::minres(&sym, &bs, None, &settings(1e-10, 3000, 30)).unwrap(),
                solve::gmres(&gen, &bg, None, &settings(1e-10, 3000, 20)).unwrap(),
            )
        })
    };
    let (one, four) = (run(1), run(4));
    assert!(one.0.converged() && one.1.converged());
    assert_eq!(bits(&one.0.x), bits(&four.0.x));
    assert_eq!(bits(&one.1.x), bits(&four.1.x));
}

#[test]
fn auto_chooses_the_method_by_structure_and_course() {
    let spd = generate("poisson2d:n=16");
    assert_eq!(method_for(&spd), Method::Cg);
    assert_eq!(method_for(&shifted_poisson(16, 4.0)), Method::Minres);
    assert_eq!(method_for(&convection_diffusion(16, 0.2)), Method::Gmres);
    let settings = settings(1e-10, 5000, 30);
    let solved = |a: &Csr<f64>| {
        let (_, b) = problem(a);
        solve_choosing(a, a, MethodChoice::Auto, Preconditioner::None, &b, &settings).unwrap()
    };
    let s = solved(&spd);
    assert!(s.solution.converged() && s.method == Method::Cg, "{:?}", s.auto);
    // A positive diagonal but indefinite: CG meets p·Ap ≤ 0, MINRES solves it.
    let s = solved(&shifted_poisson(16, 1.5));
    assert!(s.solution.converged() && s.method == Method::Minres, "{:?}", s.auto);
    assert!(s.auto.as_deref().unwrap().contains("cg found A indefinite"), "{:?}", s.auto);
    let s = solved(&convection_diffusion(16, 0.2));
    assert!(s.solution.converged() && s.method == Method::Gmres, "{:?}", s.auto);
    // A named method runs as named.
    let (_, b) = problem(&spd);
    let given = MethodChoice::Given(Method::Bicgstab);
    let s = solve_choosing(&spd, &spd, given, Preconditioner::Jacobi, &b, &settings).unwrap();
    assert!(s.method == Method::Bicgstab && s.auto.is_none() && s.solution.converged());
}

/// Symmetric indefinite and nonsymmetric shared matrices that SciPy's minres / gmres(30)
/// solve to 1e-8 relative residual with b = A·(test vector) (checked with SciPy 1.17).
const SYMMETRIC: [&str; 6] = ["bcsstk02", "nos4", "Kuu", "mesh2e1", "can_161", "dwt_198"];
const NONSYMMETRIC: [&str; 5] = ["cage7", "cage9", "gre_115", "fs_183_1", "sherman1"];

#[test]
fn shared_matrices_are_solved_by_minres_and_gmres() {
    let names: Vec<&str> = SYMMETRIC.iter().chain(&NONSYMMETRIC).copied().collect();
    let mut failures = Vec::new();
    for (name, a) in common::named_matrices("minres_gmres::shared", &names, &[]) {
        let method =
            if SYMMETRIC.contains(&name.as_str()) { Method::Minres } else { Method::Gmres };
        let (_, b) = problem(&a);
        let s = solve::solve(&a, method, &b, None, &settings(1e-8, 20 * a.nrows(), 30)).unwrap();
        if !s.converged() {
            failures.push(format!(
                "{name} {method:?}: {:?} after {} (true {:e})",
                s.outcome, s.iterations, s.true_residual
            ));
        }
    }
    common::assert_clean(failures);
}

/// MINRES and GMRES on one GPU against the host on the GPU's product, bit for bit (x,
/// iterations, outcome), as a CUDA graph and launch by launch, with and without Jacobi, f64
/// and f32, in deterministic formats; and repeatable.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_minres_and_gmres_give_the_host_bits() {
    let gpu = common::gpu();
    let mut problems = vec![
        ("shifted poisson".to_string(), Method::Minres, shifted_poisson(40, 1.3)),
        ("convection-diffusion".to_string(), Method::Gmres, convection_diffusion(40, 0.4)),
        // At most ONE_BLOCK_ROWS unknowns: a grid of one block, an Arnoldi step in one kernel.
        ("small convection-diffusion".to_string(), Method::Gmres, convection_diffusion(20, 0.4)),
    ];
    for (name, a) in common::named_matrices("minres_gmres (GPU)", &["nos4", "Kuu"], &[]) {
        problems.push((name, Method::Minres, a));
    }
    for (name, a) in common::named_matrices("minres_gmres (GPU)", &["sherman1", "cage9"], &[]) {
        problems.push((name, Method::Gmres, a));
    }
    let mut failures = Vec::new();
    let check = |failures: &mut Vec<String>,
                 what: String,
                 dev: Solution<f64>,
                 same: Solution<f64>,
                 graph: bool| {
        if (bits(&dev.x), dev.iterations, &dev.outcome)
            != (bits(&same.x), same.iterations, &same.outcome)
        {
            failures.push(format!(
                "{what}: GPU {:?} {} it, host on the GPU's product {:?} {} it, x differs",
                dev.outcome, dev.iterations, same.outcome, same.iterations
            ));
        } else if !dev.converged() || dev.graph != graph {
            failures.push(format!(
                "{what}: {:?} after {} (graph {})",
                dev.outcome, dev.iterations, dev.graph
            ));
        }
    };
    for (name, method, a) in &problems {
        let (_, b) = problem(a);
        for spec in ["csr-vector", "sell-c-sigma"] {
            let device = spmv::formats::build(&spmv::formats::parse_spec(spec).unwrap(), a)
                .and_then(|h| h.upload(&gpu))
                .unwrap();
            let product = common::device_product(&device);
            for (jacobi, restart, graph) in [(false, 30, true), (true, 30, true), (false, 7, false)]
            {
                if *method == Method::Minres && restart != 30 {
                    continue;
                }
                let m = if jacobi { inverse(a, *method) } else { None };
                let s = KrylovSettings { graph, ..settings(1e-8, 20 * a.nrows(), restart) };
                let dev = solve::solve(&device, *method, &b, m.as_deref(), &s).unwrap();
                let same = solve::solve(&product, *method, &b, m.as_deref(), &s).unwrap();
                let what = format!("{method:?} {name} {spec} jacobi {jacobi} restart {restart}");
                let again = solve::solve(&device, *method, &b, m.as_deref(), &s).unwrap();
                if bits(&again.x) != bits(&dev.x) {
                    failures.push(format!("{what}: a second solve gives other bits"));
                }
                check(&mut failures, what, dev, same, graph);
            }
        }
    }
    // f32 on the generated problems.
    for (name, method, a) in &problems[..3] {
        let a32: Csr<f32> = a.cast();
        let (_, b) = problem(a);
        let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        let device = spmv::formats::build(&spmv::formats::parse_spec("csr-vector").unwrap(), &a32)
            .and_then(|h| h.upload(&gpu))
            .unwrap();
        let s = settings(1e-5, 20 * a.nrows(), 30);
        let dev = solve::solve(&device, *method, &b32, None, &s).unwrap();
        let same = solve::solve(&common::device_product(&device), *method, &b32, None, &s).unwrap();
        if (bits(&dev.x), dev.iterations) != (bits(&same.x), same.iterations) || !dev.converged() {
            failures.push(format!(
                "{method:?} {name} f32: GPU {:?} {} it, host {:?} {} it",
                dev.outcome, dev.iterations, same.outcome, same.iterations
            ));
        }
    }
    common::assert_clean(failures);
}

/// MINRES and GMRES over several GPUs converge to the one-GPU answer and repeat their bits.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_distributed_minres_and_gmres_converge_and_repeat() {
    use spmv::choice::Choice;
    use spmv::distributed::DistributedMatrix;
    let gpus = crate::distributed::gpus(2);
    let spec = Choice::parse("csr-vector").unwrap();
    let mut failures = Vec::new();
    for (method, a) in
        [(Method::Minres, shifted_poisson(60, 1.1)), (Method::Gmres, convection_diffusion(60, 0.3))]
    {
        let (x_true, b) = problem(&a);
        let d = DistributedMatrix::new(&a, &gpus, &spec).unwrap();
        for jacobi in [false, true] {
            let m = if jacobi { inverse(&a, method) } else { None };
            let s = settings(1e-10, 20_000, 30);
            let first = solve::solve(&d, method, &b, m.as_deref(), &s).unwrap();
            let again = solve::solve(&d, method, &b, m.as_deref(), &s).unwrap();
            let what = format!("{method:?} over {} GPUs, jacobi {jacobi}", gpus.len());
            if !first.converged() || relative_error(&first.x, &x_true) > 1e-6 {
                failures.push(format!(
                    "{what}: {:?} after {}, error {:e}",
                    first.outcome,
                    first.iterations,
                    relative_error(&first.x, &x_true)
                ));
            }
            if bits(&first.x) != bits(&again.x) {
                failures.push(format!("{what}: a second solve gives other bits"));
            }
        }
    }
    common::assert_clean(failures);
}
