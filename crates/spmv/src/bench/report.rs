//! The report of a `spmv bench` run: a table for people, JSON for programs
//! (schema in `docs/bench.md`).

use std::fmt::Write as _;

use serde::Serialize;

use super::{Machine, Measurement, Settings};

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
            schema_version: 1,
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
            "{:<34} {:<14} {:>4} {:>9} {:>10} {:>9} {:>9} {:>10} {:>10} {:>8} {:>7} {:>6} {:>3} {:>9}  status",
            "matrix", "format", "prec", "rows", "nnz", "conv ms", "MB", "median us", "min us", "GFLOPS", "GB/s", "%roof", "L2", "rel err"
        );
        for m in &self.results {
            let name = if m.matrix.len() > 34 { format!("{}…", &m.matrix[..33]) } else { m.matrix.clone() };
            let status = match (&m.status[..], &m.error) {
                ("ok", _) => "ok".to_string(),
                (st, Some(e)) => format!("{} ({})", st.to_uppercase(), e.lines().next().unwrap_or("")),
                (st, None) => st.to_uppercase(),
            };
            let _ = writeln!(
                s,
                "{:<34} {:<14} {:>4} {:>9} {:>10} {:>9.2} {:>9.2} {:>10.2} {:>10.2} {:>8.1} {:>7.0} {:>5.0}% {:>3} {:>9.1e}  {}",
                name,
                m.format,
                m.precision.name(),
                m.nrows,
                m.nnz,
                m.convert_ms,
                m.format_bytes as f64 / 1e6,
                m.median_ms * 1e3,
                m.min_ms * 1e3,
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
            let _ = writeln!(s, "# all {} results match the oracle", self.results.iter().filter(|m| m.status == "ok").count());
        } else {
            let _ = writeln!(s, "# FAILED: {} result(s) wrong or not run:", failures.len());
            for m in failures {
                let _ = writeln!(
                    s,
                    "#   {} / {} / {}: {}",
                    m.matrix,
                    m.format,
                    m.precision,
                    m.error.as_deref().unwrap_or(&m.status)
                );
            }
        }
        s
    }

    /// Per format: the geometric mean of its speed-up over `baseline` on the matrices both
    /// ran correctly, with the count; a summary line for the end of a run.
    pub fn speedups(&self, baseline: &str) -> Vec<(String, f64, usize)> {
        let mut out: Vec<(String, f64, usize)> = Vec::new();
        for m in self.results.iter().filter(|m| m.status == "ok" && m.format != baseline) {
            let Some(base) = self.results.iter().find(|b| {
                b.format == baseline && b.matrix == m.matrix && b.precision == m.precision && b.status == "ok"
            }) else {
                continue;
            };
            let ratio = base.median_ms / m.median_ms;
            match out.iter_mut().find(|(f, _, _)| *f == m.format) {
                Some(entry) => {
                    entry.1 += ratio.ln();
                    entry.2 += 1;
                }
                None => out.push((m.format.clone(), ratio.ln(), 1)),
            }
        }
        out.into_iter().map(|(f, log_sum, n)| (f, (log_sum / n as f64).exp(), n)).collect()
    }
}
