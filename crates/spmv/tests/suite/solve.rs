//! The Krylov solvers (solve::krylov, solve::krylov_gpu): CG and BiCGSTAB against known
//! solutions, on generated problems and the shared SPD and nonsymmetric matrices, and the
//! cases that must not converge (indefinite, singular, non-finite); on the GPU against the
//! host, bit for bit repeatable, in every format, with and without the CUDA graph.

use crate::common;

use spmv::reference::{test_vector, Oracle};
use spmv::solve::{self, bicgstab, jacobi, KrylovSettings, Outcome, Solution};
use spmv::Csr;

/// b = A·x_true (exact products), x_true the test vector.
fn problem(a: &Csr<f64>) -> (Vec<f64>, Vec<f64>) {
    let x_true = test_vector::<f64>(a.ncols());
    let b = Oracle::new(a, &x_true).y;
    (x_true, b)
}

/// The 2-D Poisson matrix on an n × n grid (SPD).
fn poisson(n: usize) -> Csr<f64> {
    spmv::io::gen::generate(&format!("poisson2d:n={n}")).unwrap()
}

/// [`poisson`] and the b of its [`problem`].
fn poisson_system(n: usize) -> (Csr<f64>, Vec<f64>) {
    let a = poisson(n);
    let (_, b) = problem(&a);
    (a, b)
}

fn relative_error(x: &[f64], x_true: &[f64]) -> f64 {
    let diff: f64 = x.iter().zip(x_true).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
    diff / x_true.iter().map(|v| v * v).sum::<f64>().sqrt()
}

fn settings(tol: f64, max_iter: usize) -> KrylovSettings {
    KrylovSettings { tol, max_iter, ..KrylovSettings::default() }
}

#[test]
fn cg_solves_poisson_to_the_tolerance() {
    let a = poisson(40);
    let (x_true, b) = problem(&a);
    let s = solve::cg(&a, &b, None, &settings(1e-10, 1000)).unwrap();
    assert!(s.converged(), "{:?}", s.outcome);
    assert!(s.residual <= 1e-10 && s.true_residual <= 1e-9, "{} {}", s.residual, s.true_residual);
    // κ(A) ≈ 700 for n = 40: the error is bounded by κ times the residual.
    assert!(relative_error(&s.x, &x_true) < 1e-6, "{}", relative_error(&s.x, &x_true));
    // A constant diagonal: Jacobi scales without changing the iteration count.
    let d = jacobi(&a).unwrap();
    let p = solve::cg(&a, &b, Some(&d), &settings(1e-10, 1000)).unwrap();
    assert!(
        p.converged() && p.iterations.abs_diff(s.iterations) <= 1,
        "{} vs {}",
        p.iterations,
        s.iterations
    );
}

#[test]
fn jacobi_helps_a_badly_scaled_spd_matrix() {
    // D·A·D with D = diag(e^(6i/n)): still SPD, scales spread over 400× (plain CG needs
    // thousands of iterations, Jacobi about a hundred).
    let p = poisson(30);
    let n = p.nrows() as f64;
    let scale = |i: usize| (6.0 * i as f64 / n).exp();
    let a = common::with_values(&p, |r, c, v| scale(r) * v * scale(c));
    let (_, b) = problem(&a);
    let plain = solve::cg(&a, &b, None, &settings(1e-8, 20_000)).unwrap();
    let d = jacobi(&a).unwrap();
    let pre = solve::cg(&a, &b, Some(&d), &settings(1e-8, 20_000)).unwrap();
    assert!(pre.converged(), "{:?}", pre.outcome);
    assert!(
        pre.iterations * 10 < plain.iterations,
        "jacobi {} vs none {} ({:?})",
        pre.iterations,
        plain.iterations,
        plain.outcome
    );
}

/// Poisson with an upwind convection term: nonsymmetric, diagonally dominant.
fn convection_diffusion(n: usize, c: f64) -> Csr<f64> {
    let p = spmv::io::gen::generate(&format!("poisson2d:n={n}")).unwrap();
    common::with_values(&p, |r, col, v| match col.cmp(&r) {
        std::cmp::Ordering::Less => v - c,
        std::cmp::Ordering::Greater => v + c,
        std::cmp::Ordering::Equal => v,
    })
}

#[test]
fn bicgstab_solves_convection_diffusion() {
    let a = convection_diffusion(40, 0.4);
    let (x_true, b) = problem(&a);
    for m in [None, Some(jacobi(&a).unwrap())] {
        let s = bicgstab(&a, &b, m.as_deref(), &settings(1e-10, 2000)).unwrap();
        assert!(s.converged(), "{:?} after {}", s.outcome, s.iterations);
        assert!(
            s.true_residual <= 1e-9 && relative_error(&s.x, &x_true) < 1e-6,
            "{} {}",
            s.true_residual,
            relative_error(&s.x, &x_true)
        );
    }
    // BiCGSTAB solves the SPD problem too.
    let (p, b) = poisson_system(30);
    assert!(bicgstab(&p, &b, None, &settings(1e-10, 2000)).unwrap().converged());
}

#[test]
fn an_indefinite_matrix_is_reported_by_cg() {
    // Poisson shifted by −4·I: eigenvalues on both sides of 0.
    let p = poisson(20);
    let a = common::with_values(&p, |r, c, v| if r == c { v - 4.0 } else { v });
    let (_, b) = problem(&a);
    let s = solve::cg(&a, &b, None, &settings(1e-10, 2000)).unwrap();
    match &s.outcome {
        Outcome::Indefinite(why) => assert!(why.contains("not positive definite"), "{why}"),
        other => panic!("CG on an indefinite matrix: {other:?} after {} iterations", s.iterations),
    }
}

#[test]
fn a_singular_system_does_not_converge() {
    // Row 0 of Poisson emptied (and column 0, to keep it symmetric): b[0] = 1 has no solution.
    let p = poisson(12);
    let a = common::with_values(&p, |r, c, v| if r == 0 || c == 0 { 0.0 } else { v });
    let b: Vec<f64> = (0..a.nrows()).map(|i| if i == 0 { 1.0 } else { 0.5 }).collect();
    for s in [
        solve::cg(&a, &b, None, &settings(1e-10, 500)).unwrap(),
        bicgstab(&a, &b, None, &settings(1e-10, 500)).unwrap(),
    ] {
        assert!(
            !s.converged() && s.true_residual > 1e-3,
            "{:?}, true residual {}",
            s.outcome,
            s.true_residual
        );
    }
    // Jacobi refuses the zero diagonal, naming the row.
    let e = jacobi(&a).unwrap_err().to_string();
    assert!(e.contains("row 1"), "{e}");
}

#[test]
fn non_finite_values_are_reported() {
    let p = poisson(10);
    let a = common::with_values(&p, |r, c, v| if r == 5 && c == 5 { f64::NAN } else { v });
    let b = vec![1.0; a.nrows()];
    assert_eq!(solve::cg(&a, &b, None, &settings(1e-10, 100)).unwrap().outcome, Outcome::NonFinite);
    assert_eq!(bicgstab(&a, &b, None, &settings(1e-10, 100)).unwrap().outcome, Outcome::NonFinite);
    let mut inf_b = vec![1.0; p.nrows()];
    inf_b[3] = f64::INFINITY;
    assert_eq!(
        solve::cg(&p, &inf_b, None, &settings(1e-10, 100)).unwrap().outcome,
        Outcome::NonFinite
    );
}

#[test]
fn trivial_and_invalid_inputs() {
    let a = poisson(10);
    let s = solve::cg(&a, &vec![0.0; a.nrows()], None, &settings(1e-10, 100)).unwrap();
    assert!(s.converged() && s.iterations == 0 && s.x.iter().all(|&v| v == 0.0));
    let b = vec![1.0; a.nrows()];
    assert!(solve::cg(&a, &b, None, &settings(0.0, 100)).is_err());
    assert!(solve::cg(
        &a,
        &b,
        None,
        &KrylovSettings { check_every: 0, ..KrylovSettings::default() }
    )
    .is_err());
    assert!(solve::cg(&a, &b[1..], None, &settings(1e-8, 100)).is_err(), "wrong length of b");
    assert!(
        solve::cg(&a, &b, Some(&[1.0; 3]), &settings(1e-8, 100)).is_err(),
        "wrong length of the preconditioner"
    );
    // Not converged within the cap: said so, with the last residual.
    let s = solve::cg(&a, &b, None, &settings(1e-14, 3)).unwrap();
    assert!(s.outcome == Outcome::NotConverged && s.iterations == 3 && s.residual > 1e-14);
    // The residual is tested every iteration: check_every (the GPU's read-back) changes nothing.
    let every =
        solve::cg(&a, &b, None, &KrylovSettings { check_every: 1, ..settings(1e-10, 1000) })
            .unwrap();
    let fifth =
        solve::cg(&a, &b, None, &KrylovSettings { check_every: 5, ..settings(1e-10, 1000) })
            .unwrap();
    assert!(every.converged() && fifth.iterations == every.iterations && fifth.x == every.x);
}

#[test]
fn results_are_the_same_bits_on_any_number_of_threads() {
    let a = convection_diffusion(60, 0.3);
    let (_, b) = problem(&a);
    let run = |threads: usize| -> (Solution<f64>, Solution<f64>) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let (spd, b_spd) = poisson_system(60);
            (
                solve::cg(&spd, &b_spd, None, &settings(1e-10, 2000)).unwrap(),
                bicgstab(&a, &b, None, &settings(1e-10, 2000)).unwrap(),
            )
        })
    };
    let (one, four) = (run(1), run(4));
    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&one.0.x), bits(&four.0.x));
    assert_eq!(bits(&one.1.x), bits(&four.1.x));
    assert_eq!((one.0.iterations, one.1.iterations), (four.0.iterations, four.1.iterations));
}

#[test]
fn f32_solves_to_a_single_precision_tolerance() {
    let (a, b) = poisson_system(30);
    let a32: Csr<f32> = a.cast();
    let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
    let s = solve::cg(&a32, &b32, None, &settings(1e-5, 1000)).unwrap();
    assert!(s.converged(), "{:?} {}", s.outcome, s.true_residual);
    // Asking f32 for 1e-12 cannot end as a plain "converged".
    let tight = solve::cg(&a32, &b32, None, &settings(1e-12, 1000)).unwrap();
    assert!(!tight.converged(), "{:?} {}", tight.outcome, tight.true_residual);
    // Half precision is declined.
    let a16: Csr<spmv::f16> = a.cast();
    let b16 = vec![spmv::f16::from_f64(1.0); a.nrows()];
    assert!(solve::cg(&a16, &b16, None, &settings(1e-3, 10)).is_err());
}

/// The real matrices `shared_matrices_are_solved` solves when the run's set has them.
const ALL_SOLVED: [&str; 17] = [
    "nos4", "nos5", "nos6", "bcsstk02", "bcsstk04", "bcsstk07", "bcsstk08", "bcsstk09", "gr_30_30",
    "lund_a", "sherman1", "sherman3", "sherman5", "cage7", "cage9", "Kuu", "mesh2e1",
];
/// Those of them the repository ships (data/matrices/small), so that every run solves them.
const SHIPPED: [&str; 10] = [
    "nos4", "nos6", "bcsstk02", "bcsstk04", "bcsstk08", "gr_30_30", "lund_a", "sherman1", "cage7",
    "mesh2e1",
];

/// The shared SPD matrices with CG (Jacobi) and the nonsymmetric ones with BiCGSTAB (Jacobi):
/// b = A·x_true, every solve converges to 1e-8 with a true residual to match. The pattern
/// files among the "SPD" names (Kuu, mesh2e1: all values 1) are indefinite, and CG says so.
#[test]
fn shared_matrices_are_solved() {
    let loaded = common::named_matrices("solve::shared_matrices_are_solved", &ALL_SOLVED, &SHIPPED);
    let load = |name: &str| loaded.iter().find(|(n, _)| n == name).map(|(_, a)| a);
    let mut failures = Vec::new();
    let spd = [
        "nos4", "nos5", "nos6", "bcsstk02", "bcsstk04", "bcsstk07", "bcsstk08", "bcsstk09",
        "gr_30_30", "lund_a",
    ];
    let general = ["sherman1", "sherman3", "sherman5", "cage7", "cage9"];
    for (name, cg) in spd.iter().map(|n| (n, true)).chain(general.iter().map(|n| (n, false))) {
        let Some(a) = load(name) else { continue };
        let (_, b) = problem(a);
        let d = jacobi(a).unwrap();
        let cap = 20 * a.nrows();
        let s = if cg {
            solve::cg(a, &b, Some(&d), &settings(1e-8, cap))
        } else {
            bicgstab(a, &b, Some(&d), &settings(1e-8, cap))
        }
        .unwrap();
        if !s.converged() {
            failures.push(format!(
                "{name}: {:?} after {} iterations, residual {:e}, true {:e}",
                s.outcome, s.iterations, s.residual, s.true_residual
            ));
        }
    }
    // Jacobi pays on the stiffness matrices: bcsstk08 in a tenth of the iterations.
    let a = load("bcsstk08").unwrap();
    let (_, b) = problem(a);
    let plain = solve::cg(a, &b, None, &settings(1e-8, 20_000)).unwrap();
    let pre = solve::cg(a, &b, Some(&jacobi(a).unwrap()), &settings(1e-8, 20_000)).unwrap();
    if pre.iterations * 10 > plain.iterations {
        failures.push(format!(
            "bcsstk08: Jacobi {} iterations, none {}",
            pre.iterations, plain.iterations
        ));
    }
    for name in ["Kuu", "mesh2e1"] {
        let Some(a) = load(name) else { continue };
        let s = solve::cg(a, &vec![1.0; a.nrows()], None, &settings(1e-8, 1000)).unwrap();
        if !matches!(&s.outcome, Outcome::Indefinite(why) if why.contains("not positive definite"))
        {
            failures.push(format!("{name} (a pattern: indefinite): {:?}", s.outcome));
        }
    }
    common::assert_clean(failures);
}

/// `a` in format `spec` on the GPU.
fn on_gpu<T: spmv::Scalar>(
    gpu: &std::sync::Arc<spmv::gpu::Gpu>, a: &Csr<T>, spec: &str,
) -> spmv::Result<spmv::DeviceMatrix<T>> {
    spmv::formats::build(&spmv::formats::parse_spec(spec)?, a)?.upload(gpu)
}

fn bits<T: spmv::Scalar>(x: &[T]) -> Vec<u64> {
    x.iter().map(|v| v.to_f64().to_bits()).collect()
}

/// Loads the real matrices named (those found: see `common::named_matrices`).
fn shared(names: &[&str]) -> Vec<(String, Csr<f64>)> {
    common::named_matrices("solve (GPU)", names, &[])
}

/// One problem on both sides: the GPU solver equals the host solver run on the GPU's product
/// bit for bit (x, iterations, outcome), converges as a CUDA graph, and (when `near`) is
/// within 2% (+1) iterations of the host solver on the host's own product, whose rounding
/// differs in the last bits.
#[allow(clippy::too_many_arguments)]
fn check_solver<T: spmv::Scalar>(
    what: &str, cg: bool, near: bool, device: &spmv::DeviceMatrix<T>, a: &Csr<T>, b: &[T],
    m: Option<&[T]>, s: &KrylovSettings, failures: &mut Vec<String>,
) {
    let product = common::device_product(device);
    let (dev, same, host) = if cg {
        (
            solve::cg(device, b, m, s).unwrap(),
            solve::cg(&product, b, m, s).unwrap(),
            solve::cg(a, b, m, s).unwrap(),
        )
    } else {
        (
            bicgstab(device, b, m, s).unwrap(),
            bicgstab(&product, b, m, s).unwrap(),
            bicgstab(a, b, m, s).unwrap(),
        )
    };
    if (bits(&dev.x), dev.iterations, &dev.outcome)
        != (bits(&same.x), same.iterations, &same.outcome)
    {
        failures.push(format!(
            "{what}: GPU {:?} {} it, host on the GPU's product {:?} {} it, x differs",
            dev.outcome, dev.iterations, same.outcome, same.iterations
        ));
    }
    let close = !near || dev.iterations.abs_diff(host.iterations) <= 1 + host.iterations / 50;
    if !dev.converged() || !host.converged() || !dev.graph || !close {
        failures.push(format!(
            "{what}: GPU {:?} {} it (true {:e}, graph {}), host {:?} {} it",
            dev.outcome,
            dev.iterations,
            dev.true_residual,
            dev.graph,
            host.outcome,
            host.iterations
        ));
    }
}

/// GPU CG on Poisson and shared SPD matrices, GPU BiCGSTAB on convection–diffusion and shared
/// nonsymmetric matrices, against the host solvers: f64 with Jacobi (and without, on the
/// better conditioned ones), f32 with Jacobi on those too. BiCGSTAB on sherman1 and sherman3
/// is compared bit for bit only: its iteration count there moves by up to a quarter when the
/// product's last bits change (measured on the H200: sherman3 with Jacobi, 340 iterations on
/// csr-vector's product, 453 on the host CSR's), a trait of the method on these matrices.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_solvers_match_the_host_solvers() {
    let gpu = common::gpu();
    let mut spd = vec![("poisson2d:n=40".to_string(), poisson(40))];
    spd.extend(shared(&["nos4", "nos6", "bcsstk08", "lund_a", "gr_30_30"]));
    let mut general = vec![("convection-diffusion".to_string(), convection_diffusion(40, 0.4))];
    general.extend(shared(&["sherman1", "sherman3", "cage9"]));
    let mut failures = Vec::new();
    for (cg, (name, a)) in spd.iter().map(|p| (true, p)).chain(general.iter().map(|p| (false, p))) {
        let method = if cg { "CG" } else { "BiCGSTAB" };
        let (_, b) = problem(a);
        let d = jacobi(a).unwrap();
        let device = on_gpu(&gpu, a, "csr-vector").unwrap();
        let s = settings(1e-8, 20 * a.nrows());
        let near = !name.starts_with("sherman");
        check_solver(
            &format!("{method} {name} f64 jacobi"),
            cg,
            near,
            &device,
            a,
            &b,
            Some(&d),
            &s,
            &mut failures,
        );
        let well_conditioned =
            ["poisson2d:n=40", "convection-diffusion", "gr_30_30", "cage9", "nos4"]
                .contains(&name.as_str());
        if !well_conditioned {
            continue;
        }
        check_solver(
            &format!("{method} {name} f64"),
            cg,
            near,
            &device,
            a,
            &b,
            None,
            &s,
            &mut failures,
        );
        let a32: Csr<f32> = a.cast();
        let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        let d32 = jacobi(&a32).unwrap();
        let device = on_gpu(&gpu, &a32, "csr-vector").unwrap();
        let s32 = settings(1e-5, 20 * a.nrows());
        check_solver(
            &format!("{method} {name} f32 jacobi"),
            cg,
            near,
            &device,
            &a32,
            &b32,
            Some(&d32),
            &s32,
            &mut failures,
        );
    }
    common::assert_clean(failures);
}

/// Deterministic formats give the same bits run to run, with and without the CUDA graph and
/// whatever the read-back period; the cases that must fail fail as on the host.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_solvers_are_repeatable_and_report_failures() {
    let gpu = common::gpu();
    let (a, b) = poisson_system(50);
    let c = convection_diffusion(50, 0.3);
    let (_, bc) = problem(&c);
    for spec in ["csr-scalar", "csr-vector", "dasp", "merge-csr"] {
        let m = on_gpu(&gpu, &a, spec).unwrap();
        let mc = on_gpu(&gpu, &c, spec).unwrap();
        let base = settings(1e-10, 2000);
        let one =
            solve::cg(&m, &b, None, &KrylovSettings { check_every: 1, ..base.clone() }).unwrap();
        assert!(one.converged() && one.graph, "{spec}: {:?} graph {}", one.outcome, one.graph);
        for variant in [
            KrylovSettings { check_every: 1, ..base.clone() },
            KrylovSettings { check_every: 7, ..base.clone() },
            KrylovSettings { graph: false, ..base.clone() },
        ] {
            let again = solve::cg(&m, &b, None, &variant).unwrap();
            assert_eq!(
                (bits(&one.x), one.iterations),
                (bits(&again.x), again.iterations),
                "{spec} CG {variant:?}"
            );
        }
        let one = bicgstab(&mc, &bc, None, &base).unwrap();
        assert!(one.converged(), "{spec} BiCGSTAB: {:?}", one.outcome);
        for variant in [
            KrylovSettings { check_every: 3, ..base.clone() },
            KrylovSettings { graph: false, ..base.clone() },
        ] {
            let again = bicgstab(&mc, &bc, None, &variant).unwrap();
            assert_eq!(
                (bits(&one.x), one.iterations),
                (bits(&again.x), again.iterations),
                "{spec} BiCGSTAB {variant:?}"
            );
        }
    }
    // CG on an indefinite matrix.
    let shifted = common::with_values(&poisson(20), |r, c, v| if r == c { v - 4.0 } else { v });
    let (_, bs) = problem(&shifted);
    let s = solve::cg(
        &on_gpu(&gpu, &shifted, "csr-vector").unwrap(),
        &bs,
        None,
        &settings(1e-10, 2000),
    )
    .unwrap();
    assert!(
        matches!(&s.outcome, Outcome::Indefinite(why) if why.contains("not positive definite")),
        "{:?}",
        s.outcome
    );
    // A singular system: neither method converges, and the true residual says so (CG's
    // iterate overflows here, on the host too: reported as non-finite).
    let p = poisson(12);
    let singular = common::with_values(&p, |r, c, v| if r == 0 || c == 0 { 0.0 } else { v });
    let bsing: Vec<f64> = (0..singular.nrows()).map(|i| if i == 0 { 1.0 } else { 0.5 }).collect();
    let ms = on_gpu(&gpu, &singular, "csr-vector").unwrap();
    for s in [
        solve::cg(&ms, &bsing, None, &settings(1e-10, 500)).unwrap(),
        bicgstab(&ms, &bsing, None, &settings(1e-10, 500)).unwrap(),
    ] {
        assert!(
            !s.converged() && (s.true_residual.is_nan() || s.true_residual > 1e-3),
            "{:?}, true residual {}",
            s.outcome,
            s.true_residual
        );
    }
    // NaN in A.
    let nan =
        common::with_values(&poisson(10), |r, c, v| if r == 5 && c == 5 { f64::NAN } else { v });
    let mn = on_gpu(&gpu, &nan, "csr-vector").unwrap();
    let ones = vec![1.0; nan.nrows()];
    assert_eq!(
        solve::cg(&mn, &ones, None, &settings(1e-10, 100)).unwrap().outcome,
        Outcome::NonFinite
    );
    assert_eq!(
        bicgstab(&mn, &ones, None, &settings(1e-10, 100)).unwrap().outcome,
        Outcome::NonFinite
    );
    // b = 0, and a cap reached.
    let m = on_gpu(&gpu, &a, "csr-vector").unwrap();
    let z = solve::cg(&m, &vec![0.0; a.nrows()], None, &settings(1e-10, 100)).unwrap();
    assert!(z.converged() && z.iterations == 0);
    let capped =
        solve::cg(&m, &b, None, &KrylovSettings { check_every: 4, ..settings(1e-14, 10) }).unwrap();
    assert!(
        capped.outcome == Outcome::NotConverged && capped.iterations == 10,
        "{:?} {}",
        capped.outcome,
        capped.iterations
    );
}

/// Every registered format that holds the matrix runs GPU CG and BiCGSTAB to the tolerance;
/// the formats whose launches cannot be captured as a graph are listed.
#[test]
#[ignore = "needs a CUDA device"]
fn every_format_runs_the_gpu_solvers() {
    let gpu = common::gpu();
    let (a, b) = poisson_system(24);
    let mut failures = Vec::new();
    let mut no_graph = Vec::new();
    for info in spmv::formats::registry::<f64>() {
        let m = match info.build(&a) {
            Ok(h) => h.upload(&gpu).unwrap(),
            Err(_) => continue, // declines the matrix (DIA-like limits)
        };
        for (method, result) in [
            ("CG", solve::cg(&m, &b, None, &settings(1e-9, 1000))),
            ("BiCGSTAB", bicgstab(&m, &b, None, &settings(1e-9, 1000))),
        ] {
            match result {
                Ok(s) if s.converged() => {
                    if !s.graph {
                        no_graph.push(format!("{} {method}", info.name));
                    }
                }
                Ok(s) => failures.push(format!(
                    "{} {method}: {:?} after {}",
                    info.name, s.outcome, s.iterations
                )),
                Err(e) => failures.push(format!("{} {method}: {e}", info.name)),
            }
        }
    }
    println!("formats run without a CUDA graph (their launches cannot be captured): {no_graph:?}");
    common::assert_clean(failures);
}
