//! The report of a `spmv bench` run: a table for people, JSON for programs
//! (schema in `docs/bench.md`).

use std::fmt::Write as _;

use serde::Serialize;

use super::{Machine, Measurement, Settings, Status};

/// Everything one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Version of the JSON layout; bumped when a field changes meaning.
    pub schema_version: u32,
    pub spmv_version: String,
    pub machine: Machine,
    pub warmup: usize,
    pub reps: usize,
    pub results: Vec<Measurement>,
}

impl Report {
    pub fn new(machine: Machine, settings: &Settings) -> Self {
        Report {
            schema_version: 2,
            spmv_version: env!("CARGO_PKG_VERSION").to_string(),
            machine,
            warmup: settings.warmup,
            reps: settings.reps,
            results: Vec::new(),
        }
    }

    pub fn failures(&self) -> impl Iterator<Item = &Measurement> {
        self.results.iter().filter(|m| m.failed())
    }

    /// A fixed-width table, one line per matrix × format, with the machine and roofline
    /// first and each failure spelled out after the table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let mc = &self.machine;
        let _ = writeln!(
            s,
            "# {} on {} {}; copy roofline {:.0} GB/s (read+write, {} MiB buffers); median of {} runs after {} warm-up",
            mc.backend.to_uppercase(),
            mc.name,
            mc.arch,
            mc.copy_gbs,
            mc.copy_bytes >> 20,
            self.reps,
            self.warmup
        );
        let _ = writeln!(
            s,
            "{:<34} {:<14} {:>4} {:>9} {:>10} {:>9} {:>9} {:>10} {:>10} {:>10} {:>8} {:>7} {:>6} {:>3} {:>9}  status",
            "matrix", "format", "prec", "rows", "nnz", "conv ms", "MB", "median us", "min us", "b2b us", "GFLOPS", "GB/s", "%roof", "L2", "rel err"
        );
        for m in &self.results {
            let name = if m.matrix.len() > 34 { format!("{}…", &m.matrix[..33]) } else { m.matrix.clone() };
            let status = match (m.status, &m.error) {
                (Status::Ok, _) => "ok".to_string(),
                (st, Some(e)) => format!("{} ({})", st.as_str().to_uppercase(), e.lines().next().unwrap_or("")),
                (st, None) => st.as_str().to_uppercase(),
            };
            let _ = writeln!(
                s,
                "{:<34} {:<14} {:>4} {:>9} {:>10} {:>9.2} {:>9.2} {:>10.2} {:>10.2} {:>10.2} {:>8.1} {:>7.0} {:>5.0}% {:>3} {:>9.1e}  {}",
                name,
                m.format,
                m.precision.name(),
                m.nrows,
                m.nnz,
                m.convert_ms,
                m.format_bytes as f64 / 1e6,
                m.median_ms * 1e3,
                m.min_ms * 1e3,
                m.back_to_back_ms * 1e3,
                m.gflops,
                m.effective_gbs,
                m.roofline_fraction * 100.0,
                if m.l2_resident { "L2" } else { "" },
                m.max_rel_error,
                status
            );
        }
        let failures: Vec<_> = self.failures().collect();
        if failures.is_empty() {
            let _ = writeln!(s, "# all {} results match the oracle", self.results.iter().filter(|m| m.status == Status::Ok).count());
        } else {
            let _ = writeln!(s, "# FAILED: {} result(s) wrong or not run:", failures.len());
            for m in failures {
                let _ = writeln!(
                    s,
                    "#   {} / {} / {}: {}",
                    m.matrix,
                    m.format,
                    m.precision,
                    m.error.as_deref().unwrap_or(m.status.as_str())
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
        let same_problem = |a: &Measurement, b: &Measurement| a.matrix == b.matrix && a.precision == b.precision;
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
            let peers = || self.results.iter().filter(|b| same_problem(m, b) && b.status == Status::Ok);
            if peers().all(|b| b.median_ms >= m.median_ms) {
                out[i].wins += 1;
            }
            if let Some(base) = peers().find(|b| b.format == baseline) {
                log_speedups[i].push((base.median_ms / m.median_ms).ln());
            }
            if !m.l2_resident {
                roofline[i].push(m.roofline_fraction);
            }
        }
        for (i, f) in out.iter_mut().enumerate() {
            let logs = &log_speedups[i];
            f.speedup_pairs = logs.len();
            f.geomean_speedup = if logs.is_empty() { f64::NAN } else { (logs.iter().sum::<f64>() / logs.len() as f64).exp() };
            f.median_roofline_beyond_l2 = super::median_min(&mut roofline[i]).0;
        }
        out
    }

    /// [`Report::summary`] as comment lines for the end of the table.
    pub fn summary_table(&self, baseline: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# per format: ok / unsupported / failed runs, wins (fastest correct), geometric-mean speed-up over {baseline}, median %roofline beyond L2"
        );
        for f in self.summary(baseline) {
            let _ = writeln!(
                s,
                "#   {:<16} {:>5} {:>5} {:>3}  wins {:>5}  speed-up {:>6.2}x ({} pairs)  %roof {}",
                f.format,
                f.ok,
                f.unsupported,
                f.failed,
                f.wins,
                f.geomean_speedup,
                f.speedup_pairs,
                if f.median_roofline_beyond_l2.is_nan() {
                    "- (all in L2)".to_string()
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
    pub format: String,
    pub ok: usize,
    pub unsupported: usize,
    pub failed: usize,
    pub wins: usize,
    pub geomean_speedup: f64,
    pub speedup_pairs: usize,
    pub median_roofline_beyond_l2: f64,
}
