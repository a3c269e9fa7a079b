//! The report of a `spmv bench` run: a table for people, JSON for programs
//! (schema in `docs/bench.md`).

use std::fmt::Write as _;

use serde::Serialize;

use super::{Machine, Measurement, Product, Settings, Status};
use crate::error::printable_name;
use crate::io::output::Provenance;

/// Everything one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The code that measured.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// The command that ran (`spmv bench …`), where the caller says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The machine and its copy roofline.
    pub machine: Machine,
    /// Untimed runs before the timed ones that actually ran ([`Settings::warmup_on`]: at most
    /// [`super::CPU_WARMUP`] on the CPU, whatever was asked; the note says so then).
    pub warmup: usize,
    /// Timed runs per result ([`Settings::reps`]).
    pub reps: usize,
    /// What the caller wants said above the table (e.g. that the CPU default set is scaled
    /// down); printed as a `#` line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// One entry per matrix × format × precision, in the order they ran.
    pub results: Vec<Measurement>,
}

impl Report {
    /// An empty report for runs on `machine` with `settings` (a note says when matrices are
    /// reordered).
    pub fn new(machine: Machine, settings: &Settings) -> Self {
        let warmup = settings.warmup_on(&machine.backend);
        let capped = (warmup != settings.warmup).then(|| {
            format!(
                "{warmup} warm-up runs, not the {} asked: at most {} on the CPU",
                settings.warmup,
                super::CPU_WARMUP
            )
        });
        let reordered = match settings.reorder {
            crate::reorder::Reordering::None => None,
            method => Some(format!(
                "matrices reordered by {method} (P·A·Pᵀ, x and y in the original order; the gather and scatter of each product are in its time; reorder_ms in the JSON)"
            )),
        };
        let mut report = Report {
            provenance: Provenance::of_layout(2),
            command: None,
            machine,
            warmup,
            reps: settings.reps,
            note: None,
            results: Vec::new(),
        };
        for note in [capped, reordered].into_iter().flatten() {
            report.add_note(note);
        }
        report
    }

    /// Adds `note` after the notes already there.
    pub fn add_note(&mut self, note: String) {
        self.note = Some(match self.note.take() {
            Some(before) => format!("{before}; {note}"),
            None => note,
        });
    }

    /// The results that were wrong or failed to run (declined matrices are not failures).
    pub fn failures(&self) -> impl Iterator<Item = &Measurement> {
        self.results.iter().filter(|m| m.failed())
    }

    /// A fixed-width table, one line per matrix × format, with the machine and roofline
    /// first and each failure spelled out after the table.
    pub fn table(&self) -> String {
        let layout = TableLayout::new(
            true,
            self.results.iter().map(|m| m.matrix.as_str()),
            self.results.iter().map(|m| m.format.as_str()),
        );
        let mut s = self.table_header(&layout);
        for m in &self.results {
            s.push_str(&layout.row(m));
        }
        s.push_str(&self.table_footer());
        s
    }

    /// The lines above the rows: machine, roofline, settings, the column legend and titles.
    /// With [`TableLayout::row`] and [`Report::table_footer`], a caller can print rows as they
    /// are measured.
    pub fn table_header(&self, layout: &TableLayout) -> String {
        let mut s = String::new();
        let mc = &self.machine;
        let arch = if mc.arch.is_empty() { String::new() } else { format!(" {}", mc.arch) };
        // The CPU's name already says it ("CPU (2 threads)"), and a GPU's is the card's: the
        // wide table names the backend and the copy's buffers too.
        let place = if mc.backend == "cpu" || !layout.wide {
            mc.name.clone()
        } else {
            format!("{} on {}", mc.backend.to_uppercase(), mc.name)
        };
        let buffers = if layout.wide {
            format!(" (read+write, {} MiB buffers)", mc.copy_bytes >> 20)
        } else {
            String::new()
        };
        // The compact table keeps to 100 columns, its comments too.
        let width = if layout.wide { usize::MAX } else { COMPACT_WIDTH };
        let mut comment = |text: String| s.push_str(&hanging("", "#   ", &text, width));
        comment(format!(
            "# {place}{arch}; copy roofline {:.0} GB/s{buffers}; median of {} runs after {} warm-up",
            mc.copy_gbs, self.reps, self.warmup
        ));
        if let Some(note) = &self.note {
            comment(format!("# {note}"));
        }
        let legend = if layout.wide {
            "# columns: conv ms = conversion from CSR (host, plus the GPU's where a format converts on upload); MB = device bytes; median/min us = per launch; b2b us = mean of back-to-back launches; graph us = the same launches replayed as a CUDA graph (no host launch cost; - where not capturable); \
             GFLOPS and GB/s from the median; %roof = of the copy roofline; %bound = the matrix's own stream-and-gather bound / b2b (GPU); L2 = fits in L2; rel err = against the oracle (docs/bench.md)"
        } else {
            "# columns: med us = median per launch; b2b us = mean of back-to-back launches; GFLOPS from the median; %bound = the matrix's own stream-and-gather bound / b2b (GPU); names longer than their column are cut in the middle (…); --wide: every column and whole names, --json: everything (docs/bench.md)"
        };
        comment(legend.to_string());
        let (width, fwidth) = (layout.matrix_width, layout.format_width);
        let _ = if layout.wide {
            writeln!(
                s,
                "{:<width$} {:<fwidth$} {:>4} {:>9} {:>10} {:>9} {:>9} {:>10} {:>10} {:>10} {:>9} {:>8} {:>7} {:>6} {:>6} {:>3} {:>9}  status",
                "matrix", "format", "prec", "rows", "nnz", "conv ms", "MB", "median us", "min us", "b2b us", "graph us", "GFLOPS", "GB/s", "%roof", "%bound", "L2", "rel err"
            )
        } else {
            writeln!(
                s,
                "{:<width$} {:<fwidth$} {:>4} {:>9} {:>8} {:>8} {:>6} {:>6}  status",
                "matrix", "format", "prec", "nnz", "med us", "b2b us", "GFLOPS", "%bound"
            )
        };
        s
    }

    /// The line under the rows: all correct, or each failure spelled out.
    pub fn table_footer(&self) -> String {
        let mut s = String::new();
        let failures: Vec<_> = self.failures().collect();
        if failures.is_empty() {
            let _ = writeln!(
                s,
                "# all {} results match the oracle",
                self.results.iter().filter(|m| m.status == Status::Ok).count()
            );
        } else {
            let _ = writeln!(s, "# FAILED: {} result(s) wrong or not run:", failures.len());
            for m in failures {
                let _ = writeln!(
                    s,
                    "#   {} / {} / {}: {}",
                    printable_name(&m.matrix),
                    printable_name(&m.format),
                    m.precision,
                    printable_name(m.error.as_deref().unwrap_or(m.status.as_str()))
                );
            }
        }
        s
    }

    /// Per format, over all matrices and precisions of the run: how often it ran correctly,
    /// how often it declined the matrix, how often it was the fastest correct format, the
    /// geometric mean of its speed-up over `baseline` (on pairs where both ran correctly),
    /// and its median roofline fraction on matrices that do not fit in L2.
    pub fn summary(&self, baseline: &str) -> Vec<FormatSummary> {
        let mut out: Vec<FormatSummary> = Vec::new();
        let entry = |out: &mut Vec<FormatSummary>, format: &str| -> usize {
            match out.iter().position(|f| f.format == format) {
                Some(i) => i,
                None => {
                    out.push(FormatSummary { format: format.to_string(), ..Default::default() });
                    out.len() - 1
                }
            }
        };
        let same_problem = |a: &Measurement, b: &Measurement| {
            a.matrix == b.matrix && a.precision == b.precision && a.product == b.product
        };
        // The vendor library's formats (the registry's `library_baseline`).
        let library: Vec<&str> = crate::formats::registry::<f64>()
            .into_iter()
            .filter(|f| f.library_baseline)
            .map(|f| f.name)
            .collect();
        let mut log_speedups: Vec<Vec<f64>> = Vec::new();
        let mut roofline: Vec<Vec<f64>> = Vec::new();
        for m in &self.results {
            let i = entry(&mut out, &m.format);
            log_speedups.resize(out.len(), Vec::new());
            roofline.resize(out.len(), Vec::new());
            match m.status {
                Status::Ok => out[i].ok += 1,
                Status::Unsupported => out[i].unsupported += 1,
                Status::Wrong | Status::Error => out[i].failed += 1,
            }
            if m.status != Status::Ok {
                continue;
            }
            let peers =
                || self.results.iter().filter(|b| same_problem(m, b) && b.status == Status::Ok);
            // On the CPU the cuSPARSE entries run the CSR loop, not cuSPARSE: no wins for them.
            let contender = |b: &Measurement| {
                let name = b.spec.split(':').next().unwrap_or(&b.spec);
                !(self.machine.backend == "cpu" && library.contains(&name))
            };
            if contender(m)
                && peers().filter(|b| contender(b)).all(|b| b.time.median_ms >= m.time.median_ms)
            {
                out[i].wins += 1;
            }
            let baseline = format!("{baseline}{}", Product::label_suffix_of(&m.product));
            if let Some(base) = peers().find(|b| b.format == baseline) {
                log_speedups[i].push((base.time.median_ms / m.time.median_ms).ln());
            }
            if !m.rates.l2_resident {
                roofline[i].push(m.rates.roofline_fraction);
            }
        }
        for (i, f) in out.iter_mut().enumerate() {
            let logs = &log_speedups[i];
            f.speedup_pairs = logs.len();
            f.geomean_speedup = if logs.is_empty() {
                f64::NAN
            } else {
                (logs.iter().sum::<f64>() / logs.len() as f64).exp()
            };
            f.median_roofline_beyond_l2 = super::median_min(&mut roofline[i]).0;
        }
        out
    }

    /// [`Report::summary`] as comment lines for the end of the table.
    pub fn summary_table(&self, baseline: &str) -> String {
        let mut s = String::new();
        let title = format!(
            "# per format: ok / unsupported / failed runs, wins (fastest correct), geometric-mean speed-up over {baseline} (pairs), median %roofline beyond L2 (-: all in L2)"
        );
        s.push_str(&hanging("", "#   ", &title, COMPACT_WIDTH));
        let summary = self.summary(baseline);
        let width =
            summary.iter().map(|f| f.format.chars().count()).max().unwrap_or(0).clamp(16, 20);
        for f in summary {
            let speedup = if f.speedup_pairs == 0 {
                "     - (no baseline)".to_string()
            } else {
                format!("{:>6.2}x ({})", f.geomean_speedup, f.speedup_pairs)
            };
            let _ = writeln!(
                s,
                "#   {:<width$} {:>5} {:>5} {:>3}  wins {:>5}  speed-up {speedup}  %roof {}",
                cut(&printable_name(&f.format), width),
                f.ok,
                f.unsupported,
                f.failed,
                f.wins,
                if f.median_roofline_beyond_l2.is_nan() {
                    "-".to_string()
                } else {
                    format!("{:.0}%", f.median_roofline_beyond_l2 * 100.0)
                }
            );
        }
        s
    }
}

/// One format's line of [`Report::summary`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct FormatSummary {
    /// The format's label.
    pub format: String,
    /// Runs within the rounding bound.
    pub ok: usize,
    /// Runs where the format declined the matrix.
    pub unsupported: usize,
    /// Runs that were wrong or failed.
    pub failed: usize,
    /// Problems (matrix × precision) where it was the fastest correct format, by median time.
    pub wins: usize,
    /// Geometric mean of the baseline's median time over its own; NaN without pairs.
    pub geomean_speedup: f64,
    /// Problems where both it and the baseline ran correctly.
    pub speedup_pairs: usize,
    /// Median roofline fraction over its correct runs that do not fit in L2; NaN without any.
    pub median_roofline_beyond_l2: f64,
}

/// Most characters of a line of the compact table.
pub const COMPACT_WIDTH: usize = 100;

/// Column widths of the table: compact (at most [`COMPACT_WIDTH`] characters a line, names
/// cut in the middle where longer than their column), or wide (every column, names never
/// cut: two long specs could look alike).
#[derive(Clone, Copy, Debug)]
pub struct TableLayout {
    matrix_width: usize,
    format_width: usize,
    wide: bool,
}

impl TableLayout {
    /// Widths for these matrix and format names: `wide`, as wide as the longest names (at
    /// least 34 and 14 columns); compact, as narrow as the names allow, at most 20 and 19.
    pub fn new<'a>(
        wide: bool, matrices: impl IntoIterator<Item = &'a str>,
        formats: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let widest = |names: &mut dyn Iterator<Item = &'a str>| {
            names.map(|n| printable_name(n).chars().count()).max().unwrap_or(0)
        };
        let (m, f) = (widest(&mut matrices.into_iter()), widest(&mut formats.into_iter()));
        let (matrix_width, format_width) =
            if wide { (m.max(34), f.max(14)) } else { (m.clamp(6, 20), f.clamp(6, 19)) };
        TableLayout { matrix_width, format_width, wide }
    }

    /// One line of the table.
    pub fn row(&self, m: &Measurement) -> String {
        // Names are the user's (file names, specs): escaped, so none can forge a line.
        let mut format = match &m.chosen {
            // auto(chosen) k=8: the product's suffix after the chosen format.
            Some(chosen) => {
                let suffix = Product::label_suffix_of(&m.product);
                let spec = m.format.strip_suffix(suffix.as_str()).unwrap_or(&m.format);
                format!("{spec}({chosen}){suffix}")
            }
            None => m.format.clone(),
        };
        if let Some(t) = &m.transposed.transposed_format {
            match m.transposed.one_off_ms {
                Some(ms) => format += &format!(" [Aᵀ in {t}; one-off {ms:.3} ms]"),
                None => format += &format!(" [Aᵀ in {t}]"),
            }
        }
        let format = printable_name(&format);
        let (width, fwidth) = (self.matrix_width, self.format_width);
        // A figure that was not measured (an unsupported or failed run) shows as "-".
        let num = |v: f64, decimals: usize| {
            if v.is_nan() {
                "-".to_string()
            } else {
                format!("{v:.decimals$}")
            }
        };
        let bound = m
            .rates
            .bound_fraction
            .filter(|f| f.is_finite())
            .map_or("-".to_string(), |f| format!("{:.0}%", f * 100.0));
        if !self.wide {
            // Fewer decimals for long times: 8 characters up to 100 s.
            let micro = |ms: f64| {
                let us = ms * 1e3;
                num(
                    us,
                    if us < 1e3 {
                        2
                    } else if us < 1e5 {
                        1
                    } else {
                        0
                    },
                )
            };
            let line = format!(
                "{:<width$} {:<fwidth$} {:>4} {:>9} {:>8} {:>8} {:>6} {:>6}  {}",
                cut(&printable_name(&m.matrix), width),
                cut(&format, fwidth),
                m.precision.name(),
                m.nnz,
                micro(m.time.median_ms),
                micro(m.time.back_to_back_ms),
                num(m.rates.gflops, 1),
                bound,
                // The word alone: the footer spells failures out, --wide and the JSON say
                // why a format declined and how the parts of a distributed run exchanged.
                m.status.cell(None)
            );
            return cut_end(&line, COMPACT_WIDTH) + "\n";
        }
        let status = match (m.status, &m.error) {
            (Status::Ok, _) if m.parts.exchange_ms.is_some() => format!(
                "ok ({} parts, {} overlapping; halo {:.3} MB, exchange {} us b2b)",
                m.parts.devices.as_ref().map_or(0, Vec::len),
                m.parts.overlapping_parts.unwrap_or(0),
                m.parts.halo_bytes.unwrap_or(0) as f64 / 1e6,
                num(m.parts.exchange_ms.unwrap_or(f64::NAN) * 1e3, 2)
            ),
            (st, error) => st.cell(error.as_deref()),
        };
        let measured = matches!(m.status, Status::Ok | Status::Wrong);
        let converted = measured || m.setup.convert_ms > 0.0;
        let rel = if m.max_rel_error.is_nan() {
            "-".to_string()
        } else {
            format!("{:.1e}", m.max_rel_error)
        };
        format!(
            "{:<width$} {:<fwidth$} {:>4} {:>9} {:>10} {:>9} {:>9} {:>10} {:>10} {:>10} {:>9} {:>8} {:>7} {:>6} {:>6} {:>3} {:>9}  {}\n",
            printable_name(&m.matrix),
            format,
            m.precision.name(),
            m.nrows,
            m.nnz,
            if converted { num(m.setup.convert_ms + m.setup.device_convert_ms.unwrap_or(0.0), 2) } else { "-".into() },
            if converted { num(m.format_bytes as f64 / 1e6, 2) } else { "-".into() },
            num(m.time.median_ms * 1e3, 2),
            num(m.time.min_ms * 1e3, 2),
            num(m.time.back_to_back_ms * 1e3, 2),
            m.time.graph_ms.map_or("-".to_string(), |g| num(g * 1e3, 2)),
            num(m.rates.gflops, 1),
            num(m.rates.effective_gbs, 0),
            if m.rates.roofline_fraction.is_nan() { "-".to_string() } else { format!("{:.0}%", m.rates.roofline_fraction * 100.0) },
            bound,
            if m.rates.l2_resident { "L2" } else { "" },
            if measured { rel } else { "-".into() },
            status
        )
    }
}

/// `name` in at most `width` characters: cut in the middle (the start and the end say most
/// of a spec or a file name), with `…` where it was cut.
fn cut(name: &str, width: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= width || width < 3 {
        return name.to_string();
    }
    let head = (width - 1).div_ceil(2);
    let tail = width - 1 - head;
    let mut s: String = chars[..head].iter().collect();
    s.push('…');
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// `line` in at most `width` characters, ending in `…` where it was cut.
fn cut_end(line: &str, width: usize) -> String {
    let count = line.chars().count();
    if count <= width {
        return line.trim_end().to_string();
    }
    let mut s: String = line.chars().take(width - 1).collect();
    s.push('…');
    s
}

/// `lead` then `text` broken at spaces into lines of at most `width` characters, the lines
/// after the first starting with `indent` (a word longer than the room stands alone): the
/// wrapped comments of the table, `spmv formats`' descriptions.
pub fn hanging(lead: &str, indent: &str, text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}
