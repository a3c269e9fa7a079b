//! A solve run: A·x = b by a Krylov method over any format on the run's [`Target`], repeated
//! for a stable time, into a [`Report`] (the JSON of `spmv solve`, docs/solve.md) and x. On one
//! GPU the report sets an iteration's time against the sum of its parts (the product measured
//! alone plus the vector traffic at the copy bandwidth); over several, the product and the halo
//! exchange alone.

use std::time::Instant;

use serde::Serialize;

use crate::auto;
use crate::bench::{median_min, Settings as BenchSettings};
use crate::choice::Choice;
use crate::error::{Error, Result};
use crate::io::output::Provenance;
use crate::matrix::{Csr, Precision, Scalar};
use crate::measure::ms_since;
use crate::operator::Block;
use crate::reference::{test_vector, test_vector_rows};
use rayon::prelude::*;

use crate::solve::{self, jacobi_rows, KrylovSettings, Method, Outcome, Solution, Solvable};
use crate::{Backend, DeviceMatrix, FormatHandle};

use super::{fitted, Named, RankPlace, Target};
use crate::distributed::{DistributedMatrix, Phases, RankWaits};

/// A preconditioner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preconditioner {
    /// None.
    #[default]
    None,
    /// Jacobi: the inverse of A's diagonal.
    Jacobi,
}

named!(Preconditioner, "preconditioner", [
    "none" => Preconditioner::None,
    "jacobi" => Preconditioner::Jacobi,
]);
named!(Method, "method", [
    "cg" => Method::Cg,
    "bicgstab" => Method::Bicgstab,
    "minres" => Method::Minres,
    "gmres" => Method::Gmres,
]);

/// How a solve's method is chosen: named, or `auto` from A's structure and the solve's course
/// ([`solve_choosing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodChoice {
    /// CG for a symmetric A with a positive diagonal (MINRES when CG finds A indefinite),
    /// MINRES for another symmetric A, GMRES for a nonsymmetric one (BiCGSTAB when GMRES
    /// does not converge).
    Auto,
    /// This method.
    Given(Method),
}

named!(MethodChoice, "method", [
    "auto" => MethodChoice::Auto,
    "cg" => MethodChoice::Given(Method::Cg),
    "bicgstab" => MethodChoice::Given(Method::Bicgstab),
    "minres" => MethodChoice::Given(Method::Minres),
    "gmres" => MethodChoice::Given(Method::Gmres),
]);

impl Preconditioner {
    /// M⁻¹ as a vector for `a` (f64, rounded to T once), or `None`. MINRES's preconditioner
    /// must be positive definite: its Jacobi is |diag(A)|⁻¹.
    pub fn inverse<T: Scalar>(self, a: &Csr<f64>, method: Method) -> Result<Option<Vec<T>>> {
        self.inverse_rows(a, 0, method)
    }

    /// [`Preconditioner::inverse`] for rows of A from row `first` on (the rows one process of
    /// several holds).
    pub fn inverse_rows<T: Scalar>(
        self, a: &Csr<f64>, first: usize, method: Method,
    ) -> Result<Option<Vec<T>>> {
        Ok(match self {
            Preconditioner::None => None,
            Preconditioner::Jacobi => {
                let d = jacobi_rows(a, first)?.into_iter();
                Some(match method {
                    Method::Minres => d.map(|d| T::from_f64(d.abs())).collect(),
                    _ => d.map(T::from_f64).collect(),
                })
            }
        })
    }
}

/// A solve and the method that gave it, with `auto`'s path in words.
pub struct Solved<T> {
    /// The solution.
    pub solution: Solution<T>,
    /// The method that gave it.
    pub method: Method,
    /// `auto`: what it saw and did ("symmetric, positive diagonal: cg").
    pub auto: Option<String>,
    /// The residual history of each method run, in order (`auto` may run two).
    pub history: Vec<Attempt>,
}

/// One method's run within a solve: the recurrence's ‖r‖/‖b‖ where the solver read it (the
/// start, every `check_every` iterations, the stop).
#[derive(Clone, Debug, Serialize)]
pub struct Attempt {
    /// The method's name.
    pub method: String,
    /// (iteration, ‖r‖/‖b‖), iterations rising; (0, 1) is the start from x = 0.
    pub residuals: Vec<(usize, f64)>,
}

/// Runs `solve` with `settings` whose progress is also recorded as `method`'s [`Attempt`].
fn recorded<T>(
    method: Method, settings: &KrylovSettings,
    solve: impl FnOnce(&KrylovSettings) -> Result<Solution<T>>,
) -> Result<(Solution<T>, Attempt)> {
    let points = std::sync::Arc::new(std::sync::Mutex::new(vec![(0usize, 1.0f64)]));
    let (inner, sink) = (settings.progress.clone(), points.clone());
    let record = move |iteration: usize, residual: f64| {
        sink.lock().unwrap_or_else(|e| e.into_inner()).push((iteration, residual));
        if let Some(inner) = &inner {
            inner(iteration, residual);
        }
    };
    let settings =
        KrylovSettings { progress: Some(std::sync::Arc::new(record)), ..settings.clone() };
    let solution = solve(&settings)?;
    let mut residuals = std::mem::take(&mut *points.lock().unwrap_or_else(|e| e.into_inner()));
    // Reads past the stop (queued launches) repeat it; the stop itself is the last point.
    residuals.retain(|&(i, _)| i < solution.iterations);
    residuals.push((solution.iterations, solution.residual));
    residuals.dedup_by_key(|p| p.0);
    Ok((solution, Attempt { method: method.name().to_string(), residuals }))
}

/// Solves A·x = b on `a`'s backend (`a64`: A in f64, for the preconditioner and `auto`'s look
/// at its structure) with the method `choice` names or chooses.
pub fn solve_choosing<T: Scalar, A: Solvable<T> + ?Sized>(
    a: &A, a64: &Csr<f64>, choice: MethodChoice, precond: Preconditioner, b: &[T],
    settings: &KrylovSettings,
) -> Result<Solved<T>> {
    let inverse = |method| precond.inverse::<T>(a64, method);
    solve_choosing_with(a, &|| Ok(method_for(a64)), &inverse, choice, b, settings)
}

/// [`solve_choosing`] with A's facts given: `auto`'s first method, and M⁻¹ for a method.
fn solve_choosing_with<T: Scalar, A: Solvable<T> + ?Sized>(
    a: &A, first_method: &dyn Fn() -> Result<Method>,
    inverse: &dyn Fn(Method) -> Result<Option<Vec<T>>>, choice: MethodChoice, b: &[T],
    settings: &KrylovSettings,
) -> Result<Solved<T>> {
    let once = |method| -> Result<(Solution<T>, Attempt)> {
        let m_inv = inverse(method)?;
        recorded(method, settings, |s| solve::solve(a, method, b, m_inv.as_deref(), s))
    };
    let method = match choice {
        MethodChoice::Given(method) => {
            let (solution, attempt) = once(method)?;
            return Ok(Solved { solution, method, auto: None, history: vec![attempt] });
        }
        MethodChoice::Auto => first_method()?,
    };
    let first = auto_first(method);
    let (solution, attempt) = once(first)?;
    auto_next(first, (solution, attempt), &once)
}

/// `auto`'s first method after [`method_for`]'s look at A (GMRES for a nonsymmetric A).
fn auto_first(seen: Method) -> Method {
    match seen {
        Method::Cg | Method::Minres => seen,
        _ => Method::Gmres,
    }
}

/// `auto` after its first method's solve: done, or the second method (`once` solves with one)
/// where CG found A indefinite (MINRES) or GMRES did not converge (BiCGSTAB, whose answer
/// stays only if it does better); says what it saw and did.
fn auto_next<T: Scalar>(
    first: Method, (solution, attempt): (Solution<T>, Attempt),
    once: &dyn Fn(Method) -> Result<(Solution<T>, Attempt)>,
) -> Result<Solved<T>> {
    let seen = match first {
        Method::Cg => "symmetric, positive diagonal",
        Method::Minres => "symmetric, a diagonal entry ≤ 0",
        _ => "nonsymmetric",
    };
    let mut history = vec![attempt];
    let (next, why) = match (&solution.outcome, first) {
        (Outcome::Indefinite(_), Method::Cg) => (Method::Minres, "cg found A indefinite"),
        (Outcome::Converged, _) => (first, ""),
        (_, Method::Gmres) => (Method::Bicgstab, "gmres did not converge"),
        _ => (first, ""),
    };
    if next == first {
        return Ok(Solved {
            solution,
            method: first,
            auto: Some(format!("{seen}: {}", first.name())),
            history,
        });
    }
    let (retried, attempt) = once(next)?;
    history.push(attempt);
    // GMRES's answer stays when BiCGSTAB does no better.
    if next == Method::Bicgstab
        && !retried.converged()
        && retried.true_residual.partial_cmp(&solution.true_residual)
            != Some(std::cmp::Ordering::Less)
    {
        let auto = format!("{seen}: gmres, then bicgstab (no better)");
        return Ok(Solved { solution, method: first, auto: Some(auto), history });
    }
    let auto = format!(
        "{seen}: {}, {why} after {} iterations: {}",
        first.name(),
        solution.iterations,
        next.name()
    );
    Ok(Solved { solution: retried, method: next, auto: Some(auto), history })
}

/// [`solve_choosing`] for the k right-hand sides of `b` (column-major, n·k entries), column j
/// to its own tolerance `tols[j]`: the method (`auto`'s first) solves the columns together
/// ([`solve::solve_block_tols`]: in lock step, one block product per step); with `auto`, a
/// column whose solve calls for a second method gets it alone, as [`solve_choosing`] does.
/// Each column's history is its start and its stop (the lock step's progress is the worst
/// column's).
#[allow(clippy::too_many_arguments)]
pub fn solve_block_choosing<T: Scalar, A: Solvable<T> + ?Sized>(
    a: &A, a64: &Csr<f64>, choice: MethodChoice, precond: Preconditioner, b: &[T], k: usize,
    tols: &[f64], settings: &KrylovSettings,
) -> Result<Vec<Solved<T>>> {
    let (auto, method) = match choice {
        MethodChoice::Given(method) => (false, method),
        MethodChoice::Auto => (true, auto_first(method_for(a64))),
    };
    let m_inv = precond.inverse::<T>(a64, method)?;
    let block = Block::columns(k);
    let solutions = solve::solve_block_tols(a, method, b, block, tols, m_inv.as_deref(), settings)?;
    let n = a64.nrows();
    let each = solutions.into_iter().zip(tols).enumerate();
    each.map(|(j, (solution, &tol))| {
        let residuals = vec![(0, 1.0), (solution.iterations, solution.residual)];
        let attempt = Attempt { method: method.name().to_string(), residuals };
        if !auto {
            return Ok(Solved { solution, method, auto: None, history: vec![attempt] });
        }
        let column = KrylovSettings { tol, ..settings.clone() };
        let bj = &b[j * n..(j + 1) * n];
        let once = |method| -> Result<(Solution<T>, Attempt)> {
            let m_inv = precond.inverse::<T>(a64, method)?;
            recorded(method, &column, |s| solve::solve(a, method, bj, m_inv.as_deref(), s))
        };
        auto_next(method, (solution, attempt), &once)
    })
    .collect()
}

/// `auto`'s first method for A: CG (symmetric, every diagonal entry positive), MINRES (another
/// symmetric A) or GMRES (nonsymmetric). Symmetric: equal entries at (i, j) and (j, i), up to
/// 1e-12 of their size.
pub fn method_for(a: &Csr<f64>) -> Method {
    if a.nrows() != a.ncols() || !symmetric(a) {
        return Method::Gmres;
    }
    let positive = (0..a.nrows()).all(|r| {
        let (cols, vals) = a.row(r);
        cols.iter().zip(vals).filter(|(&c, _)| c as usize == r).map(|(_, &v)| v).sum::<f64>() > 0.0
    });
    if positive {
        Method::Cg
    } else {
        Method::Minres
    }
}

/// Whether A (square) equals its transpose, entry by entry up to 1e-12 relatively.
fn symmetric(a: &Csr<f64>) -> bool {
    let Ok(t) = a.transpose() else { return false };
    (0..a.nrows()).into_par_iter().all(|r| {
        let (ca, va) = a.row(r);
        let (ct, vt) = t.row(r);
        // Rows hold sorted distinct columns; explicit zeros do not count.
        let nonzero = |cols: &'_ [u32], vals: &'_ [f64]| -> Vec<(u32, f64)> {
            cols.iter().zip(vals).filter(|(_, &v)| v != 0.0).map(|(&c, &v)| (c, v)).collect()
        };
        let (x, y) = (nonzero(ca, va), nonzero(ct, vt));
        x.len() == y.len()
            && x.iter().zip(&y).all(|(&(c1, v1), &(c2, v2))| {
                c1 == c2 && (v1 - v2).abs() <= 1e-12 * v1.abs().max(v2.abs())
            })
    })
}

/// What to solve with: the method, preconditioner, format choice, precision, settings.
#[derive(Clone)]
pub struct Request {
    /// CG, BiCGSTAB, MINRES, GMRES or `auto`.
    pub method: MethodChoice,
    /// The preconditioner.
    pub precond: Preconditioner,
    /// The format of A's products.
    pub choice: Choice,
    /// f64 or f32.
    pub precision: Precision,
    /// Tolerance, iterations, graph, progress.
    pub settings: KrylovSettings,
    /// Solves run (the time reported: the median of all but the first).
    pub repeat: u32,
    /// After the solve, time its parts (one product alone; the exchange alone over several
    /// GPUs) for the report.
    pub measure_parts: bool,
}

/// The result of `spmv solve` (its JSON, docs/solve.md).
#[derive(Serialize)]
#[allow(missing_docs)] // the JSON schema, field by field: docs/solve.md
pub struct Report {
    #[serde(flatten)]
    pub provenance: Provenance,
    pub matrix: String,
    pub rows: usize,
    pub nnz: usize,
    /// The method that gave x (`auto`'s choice).
    pub method: String,
    /// `auto`: what it saw and did.
    pub method_auto: Option<String>,
    /// GMRES: the basis' size before a restart.
    pub restart: Option<usize>,
    pub precond: String,
    pub format: String,
    /// The format `auto` chose, when the format is `auto`.
    pub chosen: Option<String>,
    pub precision: String,
    pub backend: String,
    pub tol: f64,
    pub max_iter: usize,
    pub check_every: usize,
    /// converged, not_converged, breakdown, non_finite or inaccurate_residual.
    pub outcome: String,
    /// What vanished, for a breakdown.
    pub breakdown: Option<String>,
    pub iterations: usize,
    pub residual: f64,
    pub true_residual: f64,
    #[serde(flatten)]
    pub time: SolveTimes,
    /// GPU: the iteration was replayed as a CUDA graph.
    pub graph: bool,
    /// One GPU: the parts of an iteration, measured after the solve.
    pub parts: Option<IterationParts>,
    /// Several GPUs: the distributed matrix.
    pub distributed: Option<Distributed>,
    /// The last solve's residual history, per method run (`auto` may run two; with several
    /// right-hand sides each column's start and stop, labelled with the column).
    pub history: Vec<Attempt>,
    /// Several right-hand sides: each column's figures (the fields above are the worst
    /// column's: its outcome, the most iterations, the largest residuals).
    pub columns: Option<Vec<ColumnFigures>>,
}

/// One right-hand side's figures in a [`Report`] of several.
#[derive(Serialize)]
#[allow(missing_docs)] // the JSON schema: docs/solve.md
pub struct ColumnFigures {
    pub method: String,
    pub outcome: String,
    pub breakdown: Option<String>,
    pub iterations: usize,
    pub residual: f64,
    pub true_residual: f64,
}

/// What a solve took, in milliseconds.
#[derive(Serialize)]
pub struct SolveTimes {
    /// The solve's wall time (with repeats: the median over the repeats after the first).
    pub solve_ms: f64,
    /// The first solve's wall time (kernel compilation included).
    pub first_solve_ms: f64,
    /// Mean time of one iteration (on the GPU: the iterations queued, read-backs included).
    pub ms_per_iteration: f64,
    /// The matrix's conversion to the format (and upload).
    pub convert_ms: f64,
}

/// A solve over several GPUs.
#[derive(Serialize)]
#[allow(missing_docs)] // the JSON schema, field by field: docs/solve.md
pub struct Distributed {
    pub devices: Vec<usize>,
    /// Each part's format (auto's choice named) and entries.
    pub part_formats: Vec<String>,
    pub part_nnz: Vec<usize>,
    /// x entries and bytes exchanged per product.
    pub halo_entries: usize,
    pub halo_bytes: usize,
    /// One distributed product, and one halo exchange alone: back-to-back means of 100
    /// (NaN when not measured).
    pub spmv_ms: f64,
    pub exchange_ms: f64,
    /// One process per GPU: where rank 0 waited in the gathers across processes during the
    /// solves (the solvers' sums, the checks that every rank agrees).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_waits: Option<RankWaits>,
    /// The setup phase by phase: time and host memory (one process per GPU: the slowest
    /// rank's time, the largest rank's memory); the CLI puts its reading of A first.
    pub setup: Phases,
}

/// An iteration's parts on the GPU: its products, each timed alone (back to back), plus the
/// vector kernels' traffic at the copy bandwidth measured in the same run.
#[derive(Serialize)]
#[allow(missing_docs)] // the JSON schema, field by field: docs/solve.md
pub struct IterationParts {
    pub products: usize,
    /// One product, back-to-back mean (median of 3 rounds of 100).
    pub spmv_ms: f64,
    /// Bytes one product moves at least: the format's arrays, x once, y once.
    pub spmv_bytes: usize,
    pub vector_bytes: usize,
    pub copy_gbs: f64,
    /// products × spmv_ms + vector_bytes at copy_gbs.
    pub parts_ms: f64,
    /// ms_per_iteration / parts_ms.
    pub ratio: f64,
    /// (products × spmv_bytes + vector_bytes) per iteration over ms_per_iteration.
    pub achieved_gbs: f64,
}

impl Report {
    /// Whether the solve converged.
    pub fn converged(&self) -> bool {
        self.outcome == "converged"
    }

    /// The summary a person reads: the outcome, and the parts or the distributed figures.
    pub fn summary(&self) -> String {
        let chosen =
            self.chosen.as_ref().map_or(self.format.clone(), |c| format!("{}({c})", self.format));
        let outcome = outcome_words(&self.outcome, self.breakdown.as_deref());
        let method = match (&self.method_auto, self.restart) {
            (Some(why), _) => format!("{} (auto: {why})", self.method),
            (None, Some(m)) => format!("{}({m})", self.method),
            (None, None) => self.method.clone(),
        };
        let mut s = format!(
            "{} {method} ({chosen}, {}, precond {}) on the {}: {outcome} after {} iterations, ‖r‖/‖b‖ = {:.3e} (true {:.3e}), {:.2} ms ({:.4} ms per iteration{}; conversion {:.2} ms)\n",
            crate::error::printable_name(&self.matrix),
            self.precision,
            self.precond,
            self.backend,
            self.iterations,
            self.residual,
            self.true_residual,
            self.time.solve_ms,
            self.time.ms_per_iteration,
            if self.graph { ", CUDA graph" } else { "" },
            self.time.convert_ms,
        );
        for (j, c) in self.columns.iter().flatten().enumerate() {
            let outcome = outcome_words(&c.outcome, c.breakdown.as_deref());
            s += &format!(
                "  column {j}: {} {outcome} after {} iterations, ‖r‖/‖b‖ = {:.3e} (true {:.3e})\n",
                c.method, c.iterations, c.residual, c.true_residual
            );
        }
        if let Some(p) = &self.parts {
            s += &format!(
                "per iteration: {:.2}x its parts ({} x SpMV {:.4} ms + {:.1} MB of vector traffic at {:.0} GB/s = {:.4} ms); {:.0} GB/s achieved\n",
                p.ratio,
                p.products,
                p.spmv_ms,
                p.vector_bytes as f64 / 1e6,
                p.copy_gbs,
                p.parts_ms,
                p.achieved_gbs
            );
        }
        if let Some(d) = &self.distributed {
            s += &format!(
                "{} parts on devices {:?}: entries {:?}; halo {} entries ({:.2} MB) per product; SpMV {:.4} ms, exchange alone {:.4} ms (back-to-back means of 100)\n",
                d.devices.len(),
                d.devices,
                d.part_nnz,
                d.halo_entries,
                d.halo_bytes as f64 / 1e6,
                d.spmv_ms,
                d.exchange_ms
            );
            s += &format!("setup: {}\n", d.setup.summary());
            if let Some(w) = &d.rank_waits {
                s += &format!(
                    "rank 0 waited in {} gathers across processes: for its GPU {:.1} µs, then for the gather {:.1} µs (medians)\n",
                    w.gathers,
                    1e3 * w.own_gpu_ms,
                    1e3 * w.gather_ms
                );
            }
        }
        s
    }
}

/// A solve's report and its solution x (in f64; exact for an f32 solve).
pub struct Run {
    /// The figures.
    pub report: Report,
    /// The solution.
    pub x: Vec<f64>,
}

/// Solves `a`·x = `b` (`a` square; `name` names it in the report) as `request` says on
/// `target`.
///
/// On [`Target::Ranks`] (one process per GPU; every rank calls it together, with the same
/// request) `a` and `b` are this rank's rows (all columns; the ranks' rows follow each other
/// in rank order, and the whole is square): A is built as this rank's part, its halo and the
/// solver's sums travel through NCCL, and the iterates are the bits of one process driving
/// the same parts ([`Target::Parts`] over NCCL). The report is the whole system's on every
/// rank (each part's format, entries and device gathered); x is this rank's rows. `auto`
/// sees A's symmetry through two products (x·Ay against y·Ax for two test vectors) instead
/// of comparing entries, which no rank holds all of.
pub fn run(name: &str, a: &Csr<f64>, b: &[f64], request: &Request, target: &Target) -> Result<Run> {
    run_block(name, a, b, 1, request, target)
}

/// [`run`] for the k right-hand sides of `b` (column-major, k columns of A's rows), solved
/// together ([`solve_block_choosing`]) on one device or the parts of [`Target::Parts`]; x is
/// column-major too, and the report has each column's figures (`columns`; its other figures
/// are the worst column's). One process per GPU ([`Target::Ranks`]) takes one right-hand side.
pub fn run_block(
    name: &str, a: &Csr<f64>, b: &[f64], k: usize, request: &Request, target: &Target,
) -> Result<Run> {
    request.settings.validate()?;
    if k == 0 {
        return Err(Error::Argument("no right-hand side: B needs at least one column".into()));
    }
    if k > 1 && matches!(target, Target::Ranks(_)) {
        return Err(Error::Unsupported(format!(
            "{k} right-hand sides: one process per GPU solves one at a time"
        )));
    }
    let spread = matches!(target, Target::Ranks(_)); // `a`: rows of a square matrix
    if !spread && a.nrows() != a.ncols() {
        return Err(Error::Unsupported(format!(
            "{}: solving needs a square matrix, this one is {} x {}",
            crate::error::printable_name(name),
            a.nrows(),
            a.ncols()
        )));
    }
    if a.nrows().checked_mul(k) != Some(b.len()) {
        let what = if k == 1 { "b".to_string() } else { format!("B of {k} columns") };
        return Err(Error::Argument(format!(
            "{what} has {} entries, A has {} rows",
            b.len(),
            a.nrows()
        )));
    }
    let mut report = Report::new(name, (a.nrows(), a.nnz()), request, target.describe());
    let x = match request.precision {
        // f64 runs on `a` itself: no copy of the matrix.
        Precision::F64 => typed(a, a, (b, k), request, target, &mut report)?,
        Precision::F32 => typed(&fitted::<f32>(a)?, a, (b, k), request, target, &mut report)?,
        Precision::F16 => {
            return Err(Error::Unsupported("the solvers run in f64 and f32, not f16".into()))
        }
    };
    if report.method == Method::Gmres.name() {
        report.restart = Some(request.settings.restart);
    }
    Ok(Run { report, x })
}

/// `auto`'s first method for a matrix spread one part per process ([`run`] on [`Target::Ranks`]): symmetric
/// when x·Ay and y·Ax agree to rounding for two test vectors (each rank's rows of them), the
/// diagonal's signs from every rank's rows.
fn method_for_parts<T: Scalar>(
    d: &DistributedMatrix<T>, own: &Csr<f64>, first: usize,
) -> Result<Method> {
    let (rows, n) = (d.host_rows(), d.nrows());
    let x: Vec<T> = test_vector_rows(rows.clone());
    let y: Vec<T> = test_vector_rows(n + rows.start..n + rows.end);
    let product = |v: &[T]| -> Result<Vec<T>> {
        let mut out = d.new_y()?;
        d.spmv(&d.upload(v, true)?, &mut out)?;
        d.download(&out)
    };
    let (ax, ay) = (product(&x)?, product(&y)?);
    let norm = |v: &[T]| d.dot(v, v).map(f64::sqrt);
    let scale = norm(&x)? * norm(&ay)? + norm(&y)? * norm(&ax)?;
    let rounding = if T::PRECISION == Precision::F64 { 1e-8 } else { 1e-3 };
    if (d.dot(&x, &ay)? - d.dot(&y, &ax)?).abs() > rounding * scale {
        return Ok(Method::Gmres);
    }
    let positive = (0..own.nrows()).all(|r| {
        let (cols, vals) = own.row(r);
        let diagonal = cols.iter().zip(vals).filter(|(&c, _)| c as usize == first + r);
        diagonal.map(|(_, &v)| v).sum::<f64>() > 0.0
    });
    Ok(if d.on_every_rank(positive)? { Method::Cg } else { Method::Minres })
}

impl Report {
    /// A report of `request` on a matrix of `(rows, nnz)`, before the solve's figures.
    fn new(name: &str, (rows, nnz): (usize, usize), request: &Request, backend: String) -> Self {
        let settings = &request.settings;
        Report {
            provenance: Provenance::of_layout(1),
            matrix: name.to_string(),
            rows,
            nnz,
            method: request.method.name().into(),
            method_auto: None,
            restart: None,
            precond: request.precond.name().into(),
            format: request.choice.label(),
            chosen: None,
            precision: request.precision.name().into(),
            backend,
            tol: settings.tol,
            max_iter: settings.max_iter,
            check_every: settings.check_every,
            outcome: String::new(),
            breakdown: None,
            iterations: 0,
            residual: f64::NAN,
            true_residual: f64::NAN,
            time: SolveTimes {
                solve_ms: f64::NAN,
                first_solve_ms: f64::NAN,
                ms_per_iteration: f64::NAN,
                convert_ms: f64::NAN,
            },
            graph: false,
            parts: None,
            distributed: None,
            history: Vec::new(),
            columns: None,
        }
    }
}

/// An outcome as a summary says it ("not converged", "breakdown: what vanished").
fn outcome_words(outcome: &str, breakdown: Option<&str>) -> String {
    breakdown.map_or(outcome.replace('_', " "), |why| format!("breakdown: {why}"))
}

/// The solution's outcome in reports: its name and, for a breakdown, what vanished.
pub fn outcome_name(outcome: &solve::Outcome) -> (&'static str, Option<String>) {
    match outcome {
        solve::Outcome::Converged => ("converged", None),
        solve::Outcome::NotConverged => ("not_converged", None),
        solve::Outcome::Breakdown(why) | solve::Outcome::Indefinite(why) => {
            ("breakdown", Some(why.clone()))
        }
        solve::Outcome::NonFinite => ("non_finite", None),
        solve::Outcome::InaccurateResidual => ("inaccurate_residual", None),
    }
}

/// The solve in T on `a` (`a64` rounded to T; M⁻¹ comes from `a64`).
fn typed<T: Scalar>(
    a: &Csr<T>, a64: &Csr<f64>, (b64, k): (&[f64], usize), request: &Request, target: &Target,
    report: &mut Report,
) -> Result<Vec<f64>> {
    let b: Vec<T> = b64.iter().map(|&v| T::from_f64(v)).collect();
    let (choice, precond, settings) = (request.method, request.precond, &request.settings);
    let start = Instant::now();
    let mut solves = Solves::default();
    let tols = vec![settings.tol; k];
    // One right-hand side: its solve's own time; several: the wall time of their solve.
    let solve = |a: &dyn Solvable<T>| -> Result<(f64, Vec<Solved<T>>)> {
        if k == 1 {
            let one = solve_choosing(a, a64, choice, precond, &b, settings)?;
            return Ok((one.solution.ms, vec![one]));
        }
        let start = Instant::now();
        let all = solve_block_choosing(a, a64, choice, precond, &b, k, &tols, settings)?;
        Ok((ms_since(start), all))
    };
    match target {
        Target::Parts(parts) => {
            let d = parts.distribute(a, &request.choice)?;
            report.time.convert_ms = ms_since(start);
            for _ in 0..request.repeat.max(1) {
                solves.push(solve(&d)?);
            }
            report_parts(report, &d, request.measure_parts)?;
        }
        Target::Ranks(RankPlace { gpu, ranks }) => {
            let d = DistributedMatrix::for_rank(a, gpu, &request.choice, ranks)?;
            report.time.convert_ms = ms_since(start);
            (report.rows, report.nnz) = (d.nrows(), d.nnz());
            let first = d.host_rows().start;
            // M⁻¹ may fail on one rank's rows: every rank says so, before the collectives.
            let inverse = |method| d.agree(precond.inverse_rows::<T>(a64, first, method));
            let first_method = || method_for_parts(&d, a64, first);
            for _ in 0..request.repeat.max(1) {
                let one = solve_choosing_with(&d, &first_method, &inverse, choice, &b, settings)?;
                solves.push((one.solution.ms, vec![one]));
            }
            report_parts(report, &d, request.measure_parts)?;
        }
        Target::One(backend) => {
            // One GPU replays the iterations as a CUDA graph (unless told not to): auto ranks
            // by graph times there.
            let timing = auto::Timing::of(backend, settings.graph);
            let host = request.choice.for_caller(timing).build_on(backend, a)?;
            report.chosen = host.chosen();
            match backend {
                Backend::Gpu(gpu) => {
                    let device = host.upload(gpu)?;
                    report.time.convert_ms = ms_since(start);
                    for _ in 0..request.repeat.max(1) {
                        solves.push(solve(&device)?);
                    }
                    // The parts of one column's iteration (not of a lock step's).
                    if let (true, Some([last])) =
                        (request.measure_parts && a.nrows() > 0, solves.last.as_deref())
                    {
                        let preconditioned = precond != Preconditioner::None;
                        let parts =
                            iteration_parts(backend, &device, last, preconditioned, settings)?;
                        report.parts = Some(parts);
                    }
                }
                Backend::Cpu => {
                    report.time.convert_ms = ms_since(start);
                    for _ in 0..request.repeat.max(1) {
                        solves.push(solve(&host)?);
                    }
                }
            }
        }
    }
    Ok(solves.finish(report))
}

/// The distributed matrix's figures into the report, and its parts' formats as `chosen` (its
/// times only when asked: they cost 200 products).
fn report_parts<T: Scalar>(
    report: &mut Report, d: &DistributedMatrix<T>, measure: bool,
) -> Result<()> {
    // Before the timed products, whose gathers are not the solves'.
    let rank_waits = d.world().map(|_| d.rank_waits());
    let (spmv_ms, exchange_ms) = if measure { d.time_products(100)? } else { (f64::NAN, f64::NAN) };
    let parts = d.describe_parts()?;
    let setup = d.setup_phases()?;
    report.chosen = Some(parts.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(" | "));
    report.distributed = Some(Distributed {
        devices: parts.iter().map(|p| p.2).collect(),
        part_formats: parts.iter().map(|p| p.0.clone()).collect(),
        part_nnz: parts.iter().map(|p| p.1).collect(),
        halo_entries: d.halo_entries(),
        halo_bytes: d.halo_bytes(),
        spmv_ms,
        exchange_ms,
        rank_waits,
        setup,
    });
    Ok(())
}

/// The solves of a request: every time, and only the last solution (one x in memory,
/// whatever the count).
struct Solves<T> {
    ms: Vec<f64>,
    /// Each column's solve, the last time.
    last: Option<Vec<Solved<T>>>,
}

impl<T> Default for Solves<T> {
    fn default() -> Self {
        Solves { ms: Vec::new(), last: None }
    }
}

impl<T: Scalar> Solves<T> {
    fn push(&mut self, (ms, columns): (f64, Vec<Solved<T>>)) {
        self.ms.push(ms);
        self.last = Some(columns);
    }

    /// The report's figures from the solves (the median time of all but the first; the worst
    /// column's figures, and each column's where there are several); x, column after column.
    fn finish(self, report: &mut Report) -> Vec<f64> {
        let columns = self.last.expect("at least one solve");
        report.time.first_solve_ms = self.ms[0];
        let mut times = self.ms[1..].to_vec();
        report.time.solve_ms = if times.is_empty() { self.ms[0] } else { median_min(&mut times).0 };
        let several = columns.len() > 1;
        let figures: Vec<ColumnFigures> = columns.iter().map(ColumnFigures::of).collect();
        // The first column that did not converge, else the one of the most iterations.
        let worst = (0..columns.len())
            .find(|&j| figures[j].outcome != "converged")
            .or_else(|| (0..columns.len()).max_by_key(|&j| figures[j].iterations))
            .expect("at least one column");
        let mut methods: Vec<&str> = Vec::new();
        for f in &figures {
            if !methods.contains(&f.method.as_str()) {
                methods.push(&f.method);
            }
        }
        report.method = methods.join(", ");
        report.method_auto = columns[worst].auto.clone();
        report.outcome = figures[worst].outcome.clone();
        report.breakdown = figures[worst].breakdown.clone();
        report.iterations = figures[worst].iterations;
        // NaN where a column's is (f64::max would pass over it).
        let largest = |f: fn(&ColumnFigures) -> f64| {
            figures.iter().map(f).fold(0.0, |m: f64, v| {
                if m.is_nan() || v.is_nan() {
                    f64::NAN
                } else {
                    m.max(v)
                }
            })
        };
        report.residual = largest(|f| f.residual);
        report.true_residual = largest(|f| f.true_residual);
        report.time.ms_per_iteration = columns[worst].solution.iteration_ms;
        report.graph = columns.iter().all(|c| c.solution.graph);
        let mut x = Vec::new();
        for (j, solved) in columns.into_iter().enumerate() {
            x.extend(solved.solution.x.iter().map(|v| v.to_f64()));
            for mut attempt in solved.history {
                if several {
                    attempt.method = format!("{} (column {j})", attempt.method);
                }
                report.history.push(attempt);
            }
        }
        report.columns = several.then_some(figures);
        x
    }
}

impl ColumnFigures {
    fn of<T>(solved: &Solved<T>) -> Self {
        let s = &solved.solution;
        let (outcome, breakdown) = outcome_name(&s.outcome);
        ColumnFigures {
            method: solved.method.name().into(),
            outcome: outcome.into(),
            breakdown,
            iterations: s.iterations,
            residual: s.residual,
            true_residual: s.true_residual,
        }
    }
}

/// Times one product of `a` (square, with rows) alone and measures the copy bandwidth, to set
/// an iteration's time against the sum of its parts.
fn iteration_parts<T: Scalar>(
    backend: &Backend, a: &DeviceMatrix<T>, solved: &Solved<T>, preconditioned: bool,
    settings: &KrylovSettings,
) -> Result<IterationParts> {
    let (method, iteration_ms) = (solved.method, solved.solution.iteration_ms);
    let Backend::Gpu(gpu) = backend else {
        return Err(Error::Unsupported("parts are measured on the GPU".into()));
    };
    let n = a.nrows();
    let x = gpu.upload(&test_vector::<T>(n))?;
    let mut y = gpu.alloc::<T>(n)?;
    gpu.time(10, 10, || a.spmv(&x, &mut y))?;
    let mut rounds = gpu.time_back_to_back(3, 100, || a.spmv(&x, &mut y))?;
    let spmv_ms = median_min(&mut rounds).0;
    let copy_gbs = backend.machine(&BenchSettings::default())?.copy_gbs;
    let value = std::mem::size_of::<T>();
    let spmv_bytes = a.bytes_read() + 2 * n * value;
    let vector_bytes =
        method.vector_bytes_per_iteration(n, value, preconditioned, settings.restart);
    let products = method.products_per_iteration();
    let parts_ms = products as f64 * spmv_ms + vector_bytes as f64 / (copy_gbs * 1e9) * 1e3;
    let achieved_gbs = (products * spmv_bytes + vector_bytes) as f64 / (iteration_ms * 1e-3) / 1e9;
    Ok(IterationParts {
        products,
        spmv_ms,
        spmv_bytes,
        vector_bytes,
        copy_gbs,
        parts_ms,
        ratio: iteration_ms / parts_ms,
        achieved_gbs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laplacian(n: usize) -> Csr<f64> {
        crate::io::gen::generate(&format!("poisson2d:n={n}")).unwrap()
    }

    /// A request of one solve with the default settings.
    fn request(
        method: MethodChoice, precond: Preconditioner, spec: &str, precision: Precision,
    ) -> Request {
        Request {
            method,
            precond,
            choice: Choice::parse(spec).unwrap(),
            precision,
            settings: KrylovSettings::default(),
            repeat: 1,
            measure_parts: false,
        }
    }

    #[test]
    fn a_cpu_solve_reports_and_returns_x() {
        let a = laplacian(8);
        let b = vec![1.0; a.nrows()];
        for (precision, precond) in
            [(Precision::F64, Preconditioner::None), (Precision::F32, Preconditioner::Jacobi)]
        {
            let request = Request {
                settings: KrylovSettings { tol: 1e-5, ..KrylovSettings::default() },
                repeat: 2,
                measure_parts: true,
                ..request(MethodChoice::Given(Method::Cg), precond, "csr-scalar", precision)
            };
            let run = run("p", &a, &b, &request, &Target::One(Backend::Cpu)).unwrap();
            assert!(run.report.converged(), "{}", run.report.summary());
            assert_eq!(run.x.len(), a.nrows());
            assert!(run.report.summary().contains("converged after"));
        }
    }

    /// Several right-hand sides: x column after column, each the single solve's, and the
    /// report's figures the worst column's.
    #[test]
    fn a_block_solve_reports_each_column() {
        let a = laplacian(8);
        let n = a.nrows();
        let b: Vec<f64> = (0..3 * n).map(|i| 1.0 + (i % 5) as f64).collect();
        let request =
            request(MethodChoice::Auto, Preconditioner::Jacobi, "csr-vector", Precision::F64);
        let cpu = Target::One(Backend::Cpu);
        let all = run_block("p", &a, &b, 3, &request, &cpu).unwrap();
        let columns = all.report.columns.as_ref().unwrap();
        assert_eq!((columns.len(), all.x.len()), (3, 3 * n));
        for j in 0..3 {
            let one = run("p", &a, &b[j * n..(j + 1) * n], &request, &cpu).unwrap();
            assert_eq!(&all.x[j * n..(j + 1) * n], &one.x[..], "column {j}");
            assert_eq!(columns[j].iterations, one.report.iterations);
            assert!(one.report.columns.is_none());
        }
        let most = columns.iter().map(|c| c.iterations).max();
        assert_eq!(Some(all.report.iterations), most);
        assert_eq!(all.report.method, "cg");
        assert!(all.report.summary().contains("column 2: cg converged"));
    }

    #[test]
    fn bad_requests_are_refused() {
        let a = laplacian(4);
        let request = request(
            MethodChoice::Given(Method::Cg),
            Preconditioner::None,
            "csr-scalar",
            Precision::F16,
        );
        let cpu = Target::One(Backend::Cpu);
        let e = run("p", &a, &vec![1.0; a.nrows()], &request, &cpu).err().unwrap();
        assert!(e.to_string().contains("f16"), "{e}");
        let e = run("p", &a, &[1.0], &request, &cpu).err().unwrap();
        assert!(e.to_string().contains("b has 1 entries"), "{e}");
        let f64_request = Request { precision: Precision::F64, ..request.clone() };
        let e = run_block("p", &a, &[1.0; 20], 2, &f64_request, &cpu).err().unwrap();
        assert!(e.to_string().contains("B of 2 columns has 20 entries"), "{e}");
        let e = run_block("p", &a, &[], 0, &f64_request, &cpu).err().unwrap();
        assert!(e.to_string().contains("at least one"), "{e}");
        assert!("ilu".parse::<Preconditioner>().is_err());
        assert!("lsqr".parse::<MethodChoice>().is_err());
        assert_eq!("gmres".parse::<MethodChoice>().unwrap(), MethodChoice::Given(Method::Gmres));
        assert_eq!("auto".parse::<MethodChoice>().unwrap(), MethodChoice::Auto);
    }
}
