//! The page of benchmark runs (`spmv report`, `spmv bench --report`, Python `spmv.report`):
//! one self-contained HTML file — inline SVG, a few lines of script to sort the heat map, no
//! network — from the JSON of `spmv bench` (and of `spmv solve`, whose residual histories it
//! overlays). Times are the back-to-back mean per launch throughout (docs/bench.md), the
//! figure other codes' drivers report; tooltips add the rest.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use plotters::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use super::canvas::{self, colour, escape, log_range};
use super::convergence::{convergence_svg, Curve};
use crate::choice::Choice;
use crate::error::{Error, Result};

/// One result of a bench run, as its JSON has it (fields of older layouts may be missing).
#[derive(Clone, Debug, Deserialize)]
struct Row {
    matrix: String,
    format: String,
    #[serde(default)]
    spec: String,
    chosen: Option<String>,
    precision: String,
    nrows: usize,
    nnz: usize,
    status: String,
    error: Option<String>,
    #[serde(default = "forward")]
    product: String,
    #[serde(default = "one")]
    vectors: usize,
    // NaN is written as null.
    back_to_back_ms: Option<f64>,
    graph_ms: Option<f64>,
    median_ms: Option<f64>,
    gflops: Option<f64>,
    effective_gbs: Option<f64>,
    bound_ms: Option<f64>,
    bound_fraction: Option<f64>,
    devices: Option<Vec<usize>>,
    stats: Option<Stats>,
}

fn forward() -> String {
    "A·x".into()
}
fn one() -> usize {
    1
}

#[derive(Clone, Debug, Deserialize)]
struct Stats {
    max_row_len: usize,
    mean_row_len: f64,
}

/// What a row measured a format as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Format,
    Baseline,
    Auto,
    Tune,
}

impl Row {
    fn kind(&self) -> Kind {
        match Choice::parse(&self.spec) {
            Ok(Choice::Auto(_)) => Kind::Auto,
            Ok(Choice::Tune(_)) => Kind::Tune,
            Ok(Choice::Spec(s)) => {
                match crate::formats::find::<f64>(s.name()).map(|f| f.library_baseline) {
                    Ok(true) => Kind::Baseline,
                    _ => Kind::Format,
                }
            }
            Err(_) => Kind::Format,
        }
    }
    /// The time compared: the back-to-back mean, for a result that ran correctly.
    fn ms(&self) -> Option<f64> {
        self.back_to_back_ms.filter(|t| self.status == "ok" && t.is_finite() && *t > 0.0)
    }
    fn parts(&self) -> usize {
        self.devices.as_ref().map_or(1, Vec::len)
    }
    /// What a result is compared within: the same matrix, precision, product and GPUs.
    fn group(&self) -> Group {
        Group {
            matrix: self.matrix.clone(),
            precision: self.precision.clone(),
            product: self.product.clone(),
            parts: self.parts(),
        }
    }
    fn gflops_b2b(&self) -> Option<f64> {
        self.ms().map(|t| 2.0 * self.nnz as f64 * self.vectors as f64 / (t * 1e6))
    }
    fn tip(&self) -> String {
        let chosen = self.chosen.as_ref().map_or(String::new(), |c| format!(" → {c}"));
        let num = |v: Option<f64>, scale: f64, unit: &str| {
            v.filter(|v| v.is_finite()).map_or("-".into(), |v| format!("{:.2} {unit}", v * scale))
        };
        let gflops = self.gflops_b2b().map_or("-".into(), |g| format!("{g:.1}"));
        let bound = self.bound_fraction.filter(|f| f.is_finite());
        let bound = bound.map_or("-".into(), |f| format!("{:.0}", f * 100.0));
        format!(
            "{} · {}{chosen} · {} {}\nb2b {} · graph {} · median {}\n{gflops} GFLOPS (b2b) · {} (median) · {bound}% of the bound",
            self.matrix,
            self.format,
            self.precision,
            self.product,
            num(self.back_to_back_ms, 1e3, "µs"),
            num(self.graph_ms, 1e3, "µs"),
            num(self.median_ms, 1e3, "µs"),
            num(self.effective_gbs, 1.0, "GB/s"),
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Group {
    matrix: String,
    precision: String,
    product: String,
    parts: usize,
}

/// A bench run's heading facts.
#[derive(Debug, Default, Deserialize)]
struct RunFacts {
    machine: Option<Machine>,
    reps: Option<usize>,
    warmup: Option<usize>,
    note: Option<String>,
    spmv_version: Option<String>,
    command: Option<String>,
    commit: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Machine {
    backend: String,
    name: String,
    #[serde(default)]
    arch: String,
    copy_gbs: f64,
}

/// A solve's JSON (`spmv solve --json`): its residual histories.
#[derive(Debug, Deserialize)]
struct SolveFacts {
    matrix: String,
    format: String,
    chosen: Option<String>,
    tol: f64,
    #[serde(default)]
    history: Vec<Attempt>,
}

/// One method's run within a solve, as `app::solve::Attempt` writes it (NaN as null).
#[derive(Debug, Deserialize)]
struct Attempt {
    method: String,
    residuals: Vec<(usize, Option<f64>)>,
}

const NOT_A_RUN: &str =
    "neither a bench run (spmv bench --json), a bench result nor a solve (spmv solve --json)";

/// Everything the page shows, read from the inputs.
#[derive(Default)]
struct Inputs {
    runs: Vec<(String, RunFacts)>,
    rows: Vec<Row>,
    curves: Vec<Curve>,
    tol: f64,
}

impl Inputs {
    fn read(sources: &[(String, Value)]) -> Result<Inputs> {
        let mut inputs = Inputs::default();
        for (source, value) in sources {
            inputs.add(source, value)?;
        }
        if inputs.rows.is_empty() && inputs.curves.is_empty() {
            return Err(Error::Argument(
                "nothing to show: no bench result or solve in the inputs".into(),
            ));
        }
        Ok(inputs)
    }

    /// `value` from `source`: a bench run, a bench result, a solve, or a list of them (Python's
    /// `spmv.bench` returns a list of results; `spmv solve --json` of several solves a list).
    fn add(&mut self, source: &str, value: &Value) -> Result<()> {
        let bad =
            |what: &str, e: serde_json::Error| Error::Argument(format!("{source}: {what}: {e}"));
        match value {
            Value::Object(o) if o.contains_key("results") => {
                let facts = RunFacts::deserialize(value).map_err(|e| bad("a bench run", e))?;
                let rows =
                    Vec::<Row>::deserialize(&o["results"]).map_err(|e| bad("a bench result", e))?;
                self.rows.extend(rows);
                self.runs.push((source.to_string(), facts));
            }
            Value::Object(o) if o.contains_key("outcome") => {
                let s = SolveFacts::deserialize(value).map_err(|e| bad("a solve", e))?;
                let format =
                    s.chosen.as_ref().map_or(s.format.clone(), |c| format!("{}({c})", s.format));
                for a in s.history {
                    let label = format!("{} {} on {format}", s.matrix, a.method);
                    let points =
                        a.residuals.iter().map(|&(i, r)| (i, r.unwrap_or(f64::NAN))).collect();
                    self.curves.push(Curve { label, points });
                }
                self.tol = if self.tol > 0.0 { self.tol.min(s.tol) } else { s.tol };
            }
            Value::Object(o) if o.contains_key("matrix") && o.contains_key("format") => {
                self.rows.push(Row::deserialize(value).map_err(|e| bad("a bench result", e))?);
            }
            // serde_json nests at most 128 deep: the recursion is bounded.
            Value::Array(items) => {
                for item in items {
                    self.add(source, item)?;
                }
            }
            _ => return Err(Error::Argument(format!("{source}: {NOT_A_RUN}"))),
        }
        Ok(())
    }

    /// Per group, the fastest time among the formats and baselines (not `auto`, `tune`).
    fn best(&self) -> BTreeMap<Group, f64> {
        let mut best = BTreeMap::new();
        for r in self.rows.iter().filter(|r| matches!(r.kind(), Kind::Format | Kind::Baseline)) {
            if let Some(t) = r.ms() {
                let e = best.entry(r.group()).or_insert(f64::INFINITY);
                *e = f64::min(*e, t);
            }
        }
        best
    }
}

/// The HTML page of `sources` (each a name for the heading and its JSON: a bench run, a list
/// of bench results, or a solve).
pub fn report_html(sources: &[(String, Value)]) -> Result<String> {
    let inputs = Inputs::read(sources)?;
    let best = inputs.best();
    let mut page = String::new();
    page.push_str(HEAD);
    heading(&mut page, &inputs);
    if !inputs.rows.is_empty() {
        section(&mut page, "Roofline", ROOFLINE_NOTE, Some(roofline(&inputs)?));
        heat_maps(&mut page, &inputs, &best);
        let chooser = choosers(&inputs, &best)?;
        section(&mut page, "auto and tune against the best", CHOOSER_NOTE, chooser);
        let scaling = scaling(&inputs)?;
        section(&mut page, "Scaling over GPUs", SCALING_NOTE, scaling);
    }
    if !inputs.curves.is_empty() {
        let svg = convergence_svg("Residual history", &inputs.curves, inputs.tol)?;
        section(&mut page, "Convergence", CONVERGENCE_NOTE, Some(svg));
    }
    page.push_str(SCRIPT);
    page.push_str("</body>\n</html>\n");
    Ok(page)
}

const HEAD: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>spmv benchmark report</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1200px; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; }
p.note { color: #555; max-width: 60em; }
svg { max-width: 100%; height: auto; }
table.facts td { padding: 0.1em 1em 0.1em 0; vertical-align: top; }
table.heat { border-collapse: collapse; font-size: 0.8em; margin-bottom: 1.5em; }
table.heat th, table.heat td { border: 1px solid #ccc; padding: 0.2em 0.4em; text-align: right; white-space: nowrap; }
table.heat th { background: #f4f4f4; cursor: pointer; position: sticky; top: 0; }
table.heat th.text, table.heat td.text { text-align: left; }
table.heat td.none { color: #999; background: #eee; text-align: center; }
.wide { overflow-x: auto; }
code { font-size: 0.95em; }
* { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
@media print { body { margin: 0; max-width: none; } .wide { overflow: visible; } table.heat { font-size: 0.55em; } table.heat th, table.heat td { padding: 0.1em 0.2em; } table.heat th { position: static; cursor: auto; } h2, h3 { break-after: avoid; } svg, tr { break-inside: avoid; } }
</style>
</head>
<body>
<h1>spmv benchmark report</h1>
"#;

/// Sorts a heat map by the column whose heading is clicked (numbers by their data-v).
const SCRIPT: &str = r#"<script>
document.querySelectorAll("table.heat").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var down = th.dataset.down !== "1"; th.dataset.down = down ? "1" : "0";
      var key = function (row) { var c = row.cells[col]; var v = c.dataset.v; return v === undefined ? c.textContent : parseFloat(v); };
      rows.sort(function (a, b) { var x = key(a), y = key(b); var o = (typeof x === "number") ? x - y : String(x).localeCompare(String(y)); return down ? -o : o; });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
</script>
"#;

const ROOFLINE_NOTE: &str = "Each mark is one format on one matrix: its arithmetic intensity (flops per byte it moves: its own arrays, x and y) against the GFLOP/s it reached (back-to-back mean). The diagonal is the copy roofline measured in the run; the grey dashes are each matrix's own bound (streaming its columns and values and gathering x), drawn across its marks. Hover for the numbers.";
const HEAT_NOTE: &str = "Speed of each format relative to the fastest format or library baseline on that matrix (1.00 = the best; back-to-back means). Click a heading to sort by it: rows, entries, row-length spread (longest row / mean), or a format. Grey: declined or failed (hover for why).";
const CHOOSER_NOTE: &str = "What auto and tune chose, as a fraction of the per-matrix best of the formats and baselines run (back-to-back means), against the matrix's entries. Lines at 0.9 and 0.7.";
const SCALING_NOTE: &str = "Speed-up of a product over several GPUs against the same matrix, format and precision on one (back-to-back means), with the ideal line.";
const CONVERGENCE_NOTE: &str = "The recurrence's relative residual where the solver read it (every check_every iterations on the GPU), log scale; the dashed line is the tolerance.";

fn section(page: &mut String, title: &str, note: &str, svg: Option<String>) {
    let _ = writeln!(page, "<h2>{}</h2>\n<p class=\"note\">{}</p>", escape(title), escape(note));
    match svg {
        Some(svg) => page.push_str(&svg),
        None => page.push_str("<p><em>Nothing of this kind in these results.</em></p>\n"),
    }
}

fn heading(page: &mut String, inputs: &Inputs) {
    page.push_str(
        "<p class=\"note\">Timing: every figure compares the back-to-back mean per launch (reps launches queued between two events, the median of 3 rounds); tooltips add the per-launch median and the CUDA-graph replay where measured.</p>\n",
    );
    for (source, run) in &inputs.runs {
        let _ = writeln!(
            page,
            "<table class=\"facts\"><tr><td><b>run</b></td><td>{}</td></tr>",
            escape(source)
        );
        let mut fact = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                let _ = writeln!(page, "<tr><td>{name}</td><td>{}</td></tr>", escape(&v));
            }
        };
        fact(
            "machine",
            run.machine.as_ref().map(|m| {
                let arch = if m.arch.is_empty() { String::new() } else { format!(" ({})", m.arch) };
                format!("{}{arch} [{}], copy roofline {:.0} GB/s", m.name, m.backend, m.copy_gbs)
            }),
        );
        fact("command", run.command.clone());
        fact("commit", run.commit.clone());
        fact("spmv", run.spmv_version.clone());
        fact(
            "timing",
            run.reps.map(|r| format!("{r} timed runs after {} warm-up", run.warmup.unwrap_or(0))),
        );
        fact("note", run.note.clone());
        page.push_str("</table>\n");
    }
}

/// The formats in the order a table or legend lists them: formats, baselines, auto, tune.
fn columns(rows: &[&Row]) -> Vec<String> {
    let mut seen: Vec<(Kind, String)> = Vec::new();
    for r in rows {
        let key = (r.kind(), r.format.clone());
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    seen.sort_by_key(|(kind, _)| *kind);
    seen.into_iter().map(|(_, c)| c).collect()
}

fn roofline(inputs: &Inputs) -> Result<String> {
    let rows: Vec<&Row> = inputs.rows.iter().filter(|r| r.ms().is_some()).collect();
    let formats = columns(&rows);
    // Intensity: flops per byte moved, from the bench's own GFLOPS and GB/s (same time).
    let intensity = |r: &Row| match (r.gflops, r.effective_gbs) {
        (Some(g), Some(b)) if g > 0.0 && b > 0.0 => Some(g / b),
        _ => None,
    };
    let marks: Vec<(&Row, f64, f64)> =
        rows.iter().filter_map(|r| Some((*r, intensity(r)?, r.gflops_b2b()?))).collect();
    let bound = |r: &Row| {
        r.bound_ms
            .filter(|b| b.is_finite() && *b > 0.0)
            .map(|b| 2.0 * r.nnz as f64 * r.vectors as f64 / (b * 1e6))
    };
    let copy = inputs
        .runs
        .iter()
        .filter_map(|(_, f)| f.machine.as_ref().map(|m| m.copy_gbs))
        .fold(0.0, f64::max);
    let xs = log_range(marks.iter().map(|m| m.1));
    let ys = log_range(marks.iter().map(|m| m.2).chain(rows.iter().filter_map(|r| bound(r))));
    canvas::svg((1000, 600), |root, overlay| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(xs.clone().log_scale(), ys.clone().log_scale())?;
        canvas::axes(
            &mut chart,
            ("flops per byte moved", |v| format!("{v:.2}")),
            ("GFLOP/s (back-to-back)", |v| format!("{v:.0}")),
        )?;
        if copy > 0.0 {
            let line = [(xs.start, copy * xs.start), (xs.end, copy * xs.end)];
            chart
                .draw_series(LineSeries::new(line, BLACK.stroke_width(2)))?
                .label(format!("copy roofline {copy:.0} GB/s"))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(2)));
        }
        // Each matrix's bound across the intensities of its marks.
        let mut spans: BTreeMap<Group, (f64, f64, f64)> = BTreeMap::new();
        for &(r, i, _) in &marks {
            if let Some(b) = bound(r) {
                let e = spans.entry(r.group()).or_insert((i, i, b));
                e.0 = e.0.min(i);
                e.1 = e.1.max(i);
            }
        }
        let grey = RGBColor(150, 150, 150);
        for (g, (lo, hi, b)) in &spans {
            let points = [(lo / 1.15, *b), (hi * 1.15, *b)];
            chart.draw_series(LineSeries::new(points, grey.stroke_width(2)))?;
            let mid = (lo * hi).sqrt();
            overlay.tip(
                chart.backend_coord(&(mid, *b)),
                5,
                format!("{} {}: bound {b:.1} GFLOP/s", g.matrix, g.precision),
            );
        }
        for (i, f) in formats.iter().enumerate() {
            let c = colour(i);
            let mine: Vec<_> = marks.iter().filter(|m| &m.0.format == f).collect();
            chart
                .draw_series(mine.iter().map(|m| Circle::new((m.1, m.2), 4, c.filled())))?
                .label(f.clone())
                .legend(move |(x, y)| Circle::new((x + 9, y), 4, c.filled()));
            for m in mine {
                overlay.tip(chart.backend_coord(&(m.1, m.2)), 5, m.0.tip());
            }
        }
        canvas::legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
}

/// One table per precision × product × GPUs: matrices down, formats across.
fn heat_maps(page: &mut String, inputs: &Inputs, best: &BTreeMap<Group, f64>) {
    let _ = writeln!(
        page,
        "<h2>Speed relative to the best</h2>\n<p class=\"note\">{}</p>",
        escape(HEAT_NOTE)
    );
    let mut tables: BTreeMap<(String, String, usize), Vec<&Row>> = BTreeMap::new();
    for r in &inputs.rows {
        tables.entry((r.precision.clone(), r.product.clone(), r.parts())).or_default().push(r);
    }
    for ((precision, product, parts), rows) in tables {
        let formats = columns(&rows);
        let gpus = if parts > 1 { format!(", {parts} GPUs") } else { String::new() };
        let _ = writeln!(page, "<h3>{} · {}{gpus}</h3>\n<div class=\"wide\"><table class=\"heat\"><thead><tr><th class=\"text\">matrix</th><th>rows</th><th>entries</th><th>row spread</th>", escape(&precision), escape(&product));
        for f in &formats {
            let _ = write!(page, "<th>{}</th>", escape(f));
        }
        page.push_str("</tr></thead>\n<tbody>\n");
        let mut matrices: Vec<&str> = Vec::new();
        for r in &rows {
            if !matrices.contains(&r.matrix.as_str()) {
                matrices.push(&r.matrix);
            }
        }
        for m in matrices {
            let mine: Vec<&&Row> = rows.iter().filter(|r| r.matrix == m).collect();
            let first = mine[0];
            // The longest row over the mean, from any result that has the statistics.
            let spread = mine
                .iter()
                .filter_map(|r| r.stats.as_ref())
                .find(|s| s.mean_row_len > 0.0)
                .map(|s| s.max_row_len as f64 / s.mean_row_len);
            let spread = spread.map_or("<td data-v=\"-1\">-</td>".to_string(), |v| {
                format!("<td data-v=\"{v}\">{v:.1}</td>")
            });
            let _ = write!(
                page,
                "<tr><td class=\"text\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>{spread}",
                escape(m), first.nrows, first.nrows, first.nnz, first.nnz
            );
            let fastest = best.get(&first.group()).copied();
            for f in &formats {
                let cell = mine.iter().find(|r| &r.format == f);
                match (cell, cell.and_then(|r| r.ms()), fastest) {
                    (Some(r), Some(t), Some(b)) => {
                        let rel = b / t;
                        let _ = write!(
                            page,
                            "<td data-v=\"{rel}\" style=\"background:{}\" title=\"{}\">{rel:.2}</td>",
                            heat(rel),
                            escape(&r.tip())
                        );
                    }
                    (Some(r), _, _) => {
                        let why = format!("{}: {}", r.status, r.error.as_deref().unwrap_or(""));
                        let _ = write!(
                            page,
                            "<td class=\"none\" data-v=\"-1\" title=\"{}\">—</td>",
                            escape(&why)
                        );
                    }
                    (None, _, _) => page.push_str("<td class=\"none\" data-v=\"-1\"></td>"),
                }
            }
            page.push_str("</tr>\n");
        }
        page.push_str("</tbody></table></div>\n");
    }
}

/// A cell's colour: green at the best, through yellow at half of it, to red at a quarter.
fn heat(rel: f64) -> String {
    let t = ((rel.max(1e-9).log2() + 2.0) / 2.0).clamp(0.0, 1.0);
    format!("hsl({:.0},70%,78%)", 120.0 * t)
}

fn choosers(inputs: &Inputs, best: &BTreeMap<Group, f64>) -> Result<Option<String>> {
    let marks: Vec<(&Row, f64)> = inputs
        .rows
        .iter()
        .filter(|r| matches!(r.kind(), Kind::Auto | Kind::Tune))
        .filter_map(|r| Some((r, best.get(&r.group())? / r.ms()?)))
        .collect();
    if marks.is_empty() {
        return Ok(None);
    }
    let xs = log_range(marks.iter().map(|m| m.0.nnz as f64));
    let top = marks.iter().map(|m| m.1).fold(1.05, f64::max) * 1.02;
    canvas::svg((1000, 480), |root, overlay| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(xs.clone().log_scale(), 0f64..top)?;
        chart
            .configure_mesh()
            .x_desc("entries of the matrix")
            .y_desc("fraction of the per-matrix best")
            .x_label_formatter(&|v| format!("{v:.0e}"))
            .draw()?;
        for (level, colour) in [(0.9, RGBColor(44, 160, 44)), (0.7, RGBColor(214, 39, 40))] {
            let line =
                DashedLineSeries::new([(xs.start, level), (xs.end, level)], 6, 4, colour.into());
            chart
                .draw_series(line)?
                .label(format!("{level}"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour));
        }
        for (i, kind) in [Kind::Auto, Kind::Tune].into_iter().enumerate() {
            let c = colour(i);
            let mine: Vec<_> = marks.iter().filter(|m| m.0.kind() == kind).collect();
            if mine.is_empty() {
                continue;
            }
            let name = if kind == Kind::Auto { "auto" } else { "tune" };
            chart
                .draw_series(
                    mine.iter().map(|m| Circle::new((m.0.nnz as f64, m.1), 5, c.filled())),
                )?
                .label(name)
                .legend(move |(x, y)| Circle::new((x + 9, y), 5, c.filled()));
            for m in mine {
                let text = format!("{:.2} of the best\n{}", m.1, m.0.tip());
                overlay.tip(chart.backend_coord(&(m.0.nnz as f64, m.1)), 6, text);
            }
        }
        canvas::legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
    .map(Some)
}

fn scaling(inputs: &Inputs) -> Result<Option<String>> {
    // Per matrix × format × precision × product: the time on each number of GPUs.
    let mut curves: BTreeMap<(String, String, String, String), BTreeMap<usize, f64>> =
        BTreeMap::new();
    for r in &inputs.rows {
        if let Some(t) = r.ms() {
            let key = (r.matrix.clone(), r.format.clone(), r.precision.clone(), r.product.clone());
            let e = curves.entry(key).or_default().entry(r.parts()).or_insert(t);
            *e = e.min(t);
        }
    }
    curves.retain(|_, by| by.len() > 1 && by.contains_key(&1));
    if curves.is_empty() {
        return Ok(None);
    }
    let most = curves.values().flat_map(|by| by.keys()).copied().max().unwrap_or(2) as f64;
    canvas::svg((800, 520), |root, overlay| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(0.8f64..most + 0.2, 0f64..most + 0.2)?;
        chart.configure_mesh().x_desc("GPUs").y_desc("speed-up over one GPU").draw()?;
        chart
            .draw_series(DashedLineSeries::new([(1.0, 1.0), (most, most)], 6, 4, BLACK.into()))?
            .label("ideal")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK));
        for (i, ((matrix, format, precision, product), by)) in curves.iter().enumerate() {
            let c = colour(i);
            let one = by[&1];
            let points: Vec<(f64, f64)> = by.iter().map(|(&n, &t)| (n as f64, one / t)).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)).point_size(4))?
                .label(format!("{matrix} {format} {precision}"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], c.stroke_width(2)));
            for (n, s) in points {
                let text = format!(
                    "{matrix} · {format} · {precision} {product}: {n} GPUs, {s:.2}× one ({:.1} µs)",
                    one / s * 1e3
                );
                overlay.tip(chart.backend_coord(&(n, s)), 5, text);
            }
        }
        canvas::legend(&mut chart, SeriesLabelPosition::UpperLeft)
    })
    .map(Some)
}
