//! A PageRank run (docs/pagerank.md): for one graph, the transition matrix Gᵀ built once,
//! then every format × precision converted, uploaded and run on the run's [`Target`], its
//! top ranks compared with the exact ranking when asked; the figures as a [`GraphReport`]
//! (the JSON of `spmv pagerank`) and the tables a person reads.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::bench::{label, Status};
use crate::choice::Choice;
use crate::error::{printable_name, Error, Result};
use crate::matrix::{Csr, Precision, Scalar};
use crate::measure::ms_since;
use crate::reorder::{self, Reordering};
use crate::solve::pagerank::{self, Agreement, EdgeWeights, PageRank, Settings, Transition};
use crate::Backend;

use super::Target;

/// How to run: the iteration's settings, the reordering, the runs per format, the top nodes
/// reported, and the exact ranking to compare with.
#[derive(Clone, Debug)]
pub struct Request {
    /// Damping, tolerance, iterations.
    pub settings: Settings,
    /// Edges counted or weighed by |value|.
    pub weights: EdgeWeights,
    /// Permute Gᵀ symmetrically before building the format (not over several GPUs).
    pub reorder: Reordering,
    /// Timed runs per format (times: mean and min; ranks from the first run).
    pub runs: usize,
    /// How many of the highest-ranked nodes to report.
    pub top: usize,
    /// Compare with the exact ranking (oracle SpMV, f64, CPU).
    pub exact: Option<Exact>,
}

/// The exact ranking's tolerance and the comparison's settings.
#[derive(Clone, Copy, Debug)]
pub struct Exact {
    /// Its tolerance.
    pub tol: f64,
    /// Top ranks compared.
    pub agreement: usize,
    /// Exact ranks closer than this count as tied.
    pub tie_tol: f64,
}

/// One graph's figures.
#[derive(Serialize)]
#[allow(missing_docs)] // the JSON schema, field by field: docs/pagerank.md
pub struct GraphReport {
    pub matrix: String,
    pub nodes: usize,
    /// Entries of the adjacency matrix, and the weighted edges kept in Gᵀ.
    pub adjacency_nnz: usize,
    pub edges: usize,
    pub dangling: usize,
    pub transition_ms: f64,
    pub exact: Option<ExactReport>,
    /// The exact ranks (for the top table; not in the JSON).
    #[serde(skip)]
    pub exact_ranks: Option<Vec<f64>>,
    pub results: Vec<RunReport>,
}

/// The exact ranking.
#[derive(Serialize)]
#[allow(missing_docs)] // the JSON schema, field by field: docs/pagerank.md
pub struct ExactReport {
    /// Its tolerance (in the JSON once, as the run's exact_tol).
    #[serde(skip)]
    pub tol: f64,
    #[serde(flatten)]
    pub convergence: Convergence,
    pub total_ms: f64,
    pub top: Vec<(usize, f64)>,
}

/// How an iteration ended (its JSON fields are the report's own).
#[derive(Clone, Copy, Serialize)]
#[allow(missing_docs)] // the JSON schema, field by field: docs/pagerank.md
pub struct Convergence {
    pub iterations: usize,
    pub converged: bool,
    pub residual: f64,
}

impl<T> From<&PageRank<T>> for Convergence {
    fn from(p: &PageRank<T>) -> Self {
        Convergence { iterations: p.iterations, converged: p.converged, residual: p.residual }
    }
}

/// What a run's iterations took, in milliseconds.
#[derive(Clone, Copy, Serialize)]
pub struct RunTimes {
    /// The mean over the runs of the iterations' time.
    pub total_ms: f64,
    /// The least over the runs.
    pub min_total_ms: f64,
    /// `total_ms` per iteration.
    pub ms_per_iteration: f64,
}

/// One format × precision.
#[derive(Serialize)]
#[allow(missing_docs)] // the JSON schema, field by field: docs/pagerank.md
pub struct RunReport {
    pub format: String,
    pub precision: Precision,
    /// "ok", "unsupported" (the format declined Gᵀ) or "error".
    pub status: Status,
    pub error: Option<String>,
    pub convert_ms: f64,
    /// The permutation and P·Gᵀ·Pᵀ (with a reordering), in milliseconds.
    pub reorder_ms: Option<f64>,
    pub upload_ms: Option<f64>,
    #[serde(flatten)]
    pub convergence: Convergence,
    #[serde(flatten)]
    pub time: RunTimes,
    /// Every run gave bitwise the same ranks (null with one run).
    pub identical_runs: Option<bool>,
    pub agreement: Option<Agreement>,
    /// Max |r − r_exact| over the nodes.
    pub max_abs_error: Option<f64>,
    /// The largest rank (the scale of the rounding in the residual).
    pub largest_rank: f64,
    /// The top nodes (0-based) and their ranks.
    pub top: Vec<(usize, f64)>,
}

impl RunReport {
    /// A report of `spec` in `precision` that has not run yet.
    pub fn new(spec: &Choice, precision: Precision) -> Self {
        RunReport {
            format: spec.label(),
            precision,
            status: Status::Error,
            error: None,
            convert_ms: f64::NAN,
            reorder_ms: None,
            upload_ms: None,
            convergence: Convergence { iterations: 0, converged: false, residual: f64::NAN },
            time: RunTimes {
                total_ms: f64::NAN,
                min_total_ms: f64::NAN,
                ms_per_iteration: f64::NAN,
            },
            identical_runs: None,
            agreement: None,
            max_abs_error: None,
            largest_rank: f64::NAN,
            top: Vec::new(),
        }
    }

    /// It ran, and stopped at the iteration limit without reaching the tolerance.
    pub fn unconverged(&self) -> bool {
        self.status == Status::Ok && !self.convergence.converged
    }
}

/// The precisions PageRank runs in: f64 and f32. Ranks of 1/n for millions of nodes sit
/// below f16's normal range, and its 11 bits cannot order them.
pub fn check_precisions(precisions: &[Precision]) -> Result<()> {
    if precisions.contains(&Precision::F16) {
        return Err(Error::Unsupported(
            "pagerank runs in f64 or f32, not f16 (scores near 1/n need more than f16's range and 11 bits)"
                .into(),
        ));
    }
    Ok(())
}

/// PageRank of the graph `adjacency` (row = source node) in every format and precision on
/// `target`. A format that fails is a failed row, not an error; the error is for the graph
/// (the transition matrix, the exact ranking).
pub fn graph(
    name: &str, adjacency: &Csr<f64>, specs: &[Choice], precisions: &[Precision], target: &Target,
    request: &Request,
) -> Result<GraphReport> {
    request.settings.validate()?;
    check_precisions(precisions)?;
    let t = Transition::new(adjacency, request.weights)?;
    let exact = match request.exact {
        Some(e) => Some((
            e,
            pagerank::pagerank_exact(
                &t,
                request.settings.alpha,
                e.tol,
                request.settings.max_iter.max(10_000),
            )?,
        )),
        None => None,
    };
    let exact_scores = exact.as_ref().map(|(_, e)| e.scores());
    let mut graph = GraphReport {
        matrix: name.to_string(),
        nodes: t.nodes(),
        adjacency_nnz: adjacency.nnz(),
        edges: t.edges(),
        dangling: t.dangling_count(),
        transition_ms: t.build_ms(),
        exact: exact.as_ref().map(|(settings, e)| ExactReport {
            tol: settings.tol,
            convergence: Convergence::from(e),
            total_ms: e.total_ms,
            top: e.top(request.top),
        }),
        exact_ranks: None,
        results: Vec::new(),
    };
    for &precision in precisions {
        // Gᵀ in this precision once for all formats (f64: Gᵀ itself).
        let mut each = |mut r: RunReport, scores: Option<Vec<f64>>| {
            if let (Some((e, _)), Some(exact), Some(scores)) = (&exact, &exact_scores, scores) {
                r.agreement =
                    Some(pagerank::top_k_agreement(exact, &scores, e.agreement, e.tie_tol));
                r.max_abs_error =
                    Some(exact.iter().zip(&scores).map(|(e, s)| (e - s).abs()).fold(0.0, f64::max));
            }
            graph.results.push(r);
        };
        match precision {
            Precision::F32 => {
                formats(target, &t, &t.matrix().cast::<f32>(), specs, request, &mut each)
            }
            _ => formats(target, &t, t.matrix(), specs, request, &mut each),
        }
    }
    graph.exact_ranks = exact_scores;
    Ok(graph)
}

/// Every format on `gt` (Gᵀ in T): conversion, upload, the runs; `each` gets each format's
/// report and the first run's ranks (for the comparison with the exact ranking).
fn formats<T: Scalar>(
    target: &Target, t: &Transition, gt: &Csr<T>, specs: &[Choice], request: &Request,
    each: &mut impl FnMut(RunReport, Option<Vec<f64>>),
) {
    for spec in specs {
        let mut report = RunReport::new(spec, T::PRECISION);
        match runs(target, t, gt, spec, request, &mut report) {
            Ok(runs) => {
                let scores = runs.first.scores();
                runs.record(&mut report, request.top);
                each(report, Some(scores));
            }
            Err(e) => {
                report.status = Status::of_error(&e);
                report.error = Some(e.to_string());
                each(report, None);
            }
        }
    }
}

/// The runs of one format on `target` (`gt`, Gᵀ of `t` in T, converted to `spec`, uploaded,
/// run `request.runs` times); `report` gets the format's label and the conversion, reordering
/// and upload times.
pub fn runs<T: Scalar>(
    target: &Target, t: &Transition, gt: &Csr<T>, spec: &Choice, request: &Request,
    report: &mut RunReport,
) -> Result<Runs<T>> {
    let (count, settings) = (request.runs.max(1), &request.settings);
    report.format = label(spec, request.reorder);
    let backend = match target {
        Target::Parts(parts) => {
            if request.reorder != Reordering::None {
                return Err(Error::Unsupported(
                    "a reordering is not combined with several devices".into(),
                ));
            }
            let start = Instant::now();
            let d = parts.distribute(gt, spec)?;
            report.upload_ms = Some(ms_since(start));
            report.format = format!(
                "{} [{} parts: {}]",
                report.format,
                parts.gpus.len(),
                d.part_formats().join(" | ")
            );
            return Runs::of(count, || pagerank::pagerank(&d, t, settings));
        }
        Target::Ranks(_) => {
            // Gᵀ's rows for a rank's nodes hold every rank's edges into them: a transpose
            // across processes, not written yet.
            return Err(Error::Unsupported(
                "PageRank with one process per GPU is not written yet: run it in one process over several GPUs (--devices)".into(),
            ));
        }
        Target::One(backend) => backend,
    };
    let start = Instant::now();
    let host = match request.reorder {
        Reordering::None => spec.build_on(backend, gt)?,
        method => {
            let perm = reorder::permutation(gt, method)?;
            let permuted = perm.apply(gt)?;
            report.reorder_ms = Some(ms_since(start));
            reorder::build_reordered(spec, &permuted, &Arc::new(perm), method)?
        }
    };
    report.convert_ms = ms_since(start) - report.reorder_ms.unwrap_or(0.0);
    match backend {
        Backend::Gpu(gpu) => {
            let start = Instant::now();
            let device = host.upload(gpu)?;
            gpu.synchronize()?;
            report.upload_ms = Some(ms_since(start));
            Runs::of(count, || pagerank::pagerank(&device, t, settings))
        }
        Backend::Cpu => Runs::of(count, || pagerank::pagerank(&host, t, settings)),
    }
}

/// The runs of one format: the first in whole, of the others only their times and whether
/// they gave the first's ranks bit for bit (one ranking in memory, whatever the count).
pub struct Runs<T> {
    /// The first run.
    pub first: PageRank<T>,
    /// Every run's time.
    pub total_ms: Vec<f64>,
    /// Every run gave the first's ranks, bit for bit.
    pub identical: bool,
}

impl<T: Scalar> Runs<T> {
    fn of(runs: usize, mut run: impl FnMut() -> Result<PageRank<T>>) -> Result<Self> {
        let first = run()?;
        let mut all = Runs { total_ms: vec![first.total_ms], first, identical: true };
        for _ in 1..runs {
            let r = run()?;
            all.total_ms.push(r.total_ms);
            all.identical &= r.iterations == all.first.iterations
                && r.ranks
                    .iter()
                    .zip(&all.first.ranks)
                    .all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits());
        }
        Ok(all)
    }

    /// The report's figures from the runs, with the `top` nodes of the first.
    fn record(&self, report: &mut RunReport, top: usize) {
        let first = &self.first;
        report.status = Status::Ok;
        report.convergence = Convergence::from(first);
        report.time.total_ms = self.total_ms.iter().sum::<f64>() / self.total_ms.len() as f64;
        report.time.min_total_ms = self.total_ms.iter().copied().fold(f64::INFINITY, f64::min);
        report.time.ms_per_iteration = if first.iterations == 0 {
            f64::NAN
        } else {
            report.time.total_ms / first.iterations as f64
        };
        if self.total_ms.len() > 1 {
            report.identical_runs = Some(self.identical);
        }
        report.top = first.top(top);
        report.largest_rank = first.ranks.iter().map(|r| r.to_f64()).fold(f64::NAN, f64::max);
    }
}

impl GraphReport {
    /// What a person reads: the graph, the exact ranking, one row per format × precision,
    /// why a run did not converge, and the top nodes of the first run that worked.
    pub fn text(&self, weights: EdgeWeights) -> String {
        let mut s = format!(
            "# {}: {} nodes, {} edges, {} dangling ({} weights); Gᵀ built in {:.1} ms\n",
            printable_name(&self.matrix),
            self.nodes,
            self.edges,
            self.dangling,
            if weights == EdgeWeights::Values { "|value|" } else { "pattern" },
            self.transition_ms
        );
        if let Some(e) = &self.exact {
            let _ = writeln!(
                s,
                "# exact ranking: oracle SpMV in f64 on the CPU to tol {:e}: {} iterations in {:.0} ms{}",
                e.tol,
                e.convergence.iterations,
                e.total_ms,
                if e.convergence.converged { "" } else { " (NOT converged)" }
            );
        }
        s += &self.table();
        if let Some(first) = self.results.iter().find(|r| r.status == Status::Ok) {
            s += &top_table(first, self.exact_ranks.as_deref());
        }
        s
    }

    fn table(&self) -> String {
        let exact = self.exact.is_some();
        let mut s = String::new();
        let width =
            self.results.iter().map(|r| r.format.chars().count()).max().unwrap_or(0).max(14);
        let _ = write!(
            s,
            "{:<width$} {:>4} {:>9} {:>9} {:>6} {:>4} {:>10} {:>9} {:>9} {:>9}",
            "format",
            "prec",
            "conv ms",
            "upload ms",
            "iters",
            "conv",
            "total ms",
            "ms/iter",
            "residual",
            "same runs"
        );
        if exact {
            let _ = write!(
                s,
                " {:>10} {:>9} {:>9} {:>9}",
                "top-k same", "up to tie", "overlap", "max err"
            );
        }
        let _ = writeln!(s, "  status");
        for r in &self.results {
            let same = match r.identical_runs {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            };
            let _ = write!(
                s,
                "{:<width$} {:>4} {:>9.2} {:>9} {:>6} {:>4} {:>10.3} {:>9.4} {:>9.1e} {:>9}",
                printable_name(&r.format),
                r.precision.name(),
                r.convert_ms,
                r.upload_ms.map_or("-".to_string(), |u| format!("{u:.2}")),
                r.convergence.iterations,
                if r.convergence.converged { "yes" } else { "NO" },
                r.time.total_ms,
                r.time.ms_per_iteration,
                r.convergence.residual,
                same
            );
            if exact {
                match (&r.agreement, r.max_abs_error) {
                    (Some(a), Some(e)) => {
                        let _ = write!(
                            s,
                            " {:>10} {:>9} {:>9} {:>9.1e}",
                            format!("{}/{}", a.same_position, a.k),
                            a.same_position_up_to_ties,
                            a.overlap,
                            e
                        );
                    }
                    _ => {
                        let _ = write!(s, " {:>10} {:>9} {:>9} {:>9}", "-", "-", "-", "-");
                    }
                }
            }
            let status = r.status.cell(r.error.as_deref());
            let _ = writeln!(s, "  {status}");
        }
        // A residual that stalls above tol is usually rounding: say so, with the spacing of
        // the precision's numbers at the largest rank.
        for r in self.results.iter().filter(|r| r.unconverged() && r.largest_rank > 0.0) {
            let bits = if r.precision == Precision::F32 { 23 } else { 52 };
            let spacing = 2f64.powi(r.largest_rank.log2().floor() as i32 - bits);
            let stalled = r.convergence.residual <= 16.0 * spacing;
            let _ = writeln!(
                s,
                "# {} {}: not converged after {} iterations (residual {:.1e}): {}",
                r.format,
                r.precision,
                r.convergence.iterations,
                r.convergence.residual,
                if stalled {
                    format!(
                        "{} numbers near the largest rank, {:.1}, are {:.1e} apart, so the residual stalls at rounding level",
                        r.precision, r.largest_rank, spacing
                    )
                } else {
                    "raise the iteration limit".to_string()
                }
            );
        }
        s
    }
}

/// The top nodes of one run (1-based node numbers, as in the Matrix Market file).
fn top_table(r: &RunReport, exact: Option<&[f64]>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# top {} by {} {} (nodes numbered from 1, as in the file)",
        r.top.len(),
        r.format,
        r.precision
    );
    let _ = write!(s, "{:>5} {:>10} {:>14}", "rank", "node", "score");
    if exact.is_some() {
        let _ = write!(s, " {:>14}", "exact score");
    }
    let _ = writeln!(s);
    for (p, &(node, score)) in r.top.iter().enumerate() {
        let _ = write!(s, "{:>5} {:>10} {:>14.6}", p + 1, node + 1, score);
        if let Some(e) = exact {
            let _ = write!(s, " {:>14.6}", e[node]);
        }
        let _ = writeln!(s);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_runs_in_every_format_asked_and_compares_with_the_exact_ranking() {
        let a = crate::io::gen::generate("powerlaw:n=300,mean=4,exp=2.1").unwrap();
        let specs = crate::choice::parse_list("csr-scalar,coo-segmented").unwrap();
        let request = Request {
            settings: Settings::default(),
            weights: EdgeWeights::Pattern,
            reorder: Reordering::None,
            runs: 2,
            top: 5,
            exact: Some(Exact { tol: 1e-12, agreement: 10, tie_tol: 1e-9 }),
        };
        let target = Target::One(Backend::Cpu);
        let g =
            graph("g", &a, &specs, &[Precision::F64, Precision::F32], &target, &request).unwrap();
        assert_eq!(g.results.len(), 4);
        for r in &g.results {
            assert_eq!(r.status, Status::Ok, "{:?}", r.error);
            assert_eq!(r.top.len(), 5);
            assert!(r.agreement.is_some() && r.identical_runs == Some(true));
        }
        let text = g.text(request.weights);
        assert!(text.contains("# exact ranking") && text.contains("# top 5"), "{text}");
        let e = graph("g", &a, &specs, &[Precision::F16], &target, &request).err().unwrap();
        assert!(e.to_string().contains("f16"), "{e}");
    }
}
