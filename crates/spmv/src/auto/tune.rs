//! `tune`: the few candidates `auto` ranks first, measured on the backend (back to back on the
//! GPU; on the CPU each raced against the fastest so far), the fastest kept; the result is
//! cached on disk per matrix fingerprint, precision, device, library version and candidate
//! set, so that a second run costs a fingerprint and one conversion. Two processes tuning at
//! once each write a complete file under a temporary name and rename it into place (atomic on
//! one file system): the last one wins and no reader sees half a file.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Features, Options, Timing, TRAINING_L2_BYTES};
use crate::error::{Error, Result};
use crate::formats::{self, FormatHandle, FormatSpec, HostMatrix, Param};
use crate::matrix::{Csr, Scalar};
use crate::measure::{cpu_race, product_ms};
use crate::reference::test_vector;
use crate::Backend;

/// At most this many candidates are measured, budget allowing.
pub const TUNE_CANDIDATES: usize = 8;

/// Formats `tune` on the CPU measures after `auto`'s CPU choice, before the model's GPU
/// ranking: the fastest CPU products on the shared matrices (docs/auto.md: TEB and csr-vector
/// each lead on some, DIA on diagonal ones).
const CPU_LEADERS: [&str; 3] = ["csr-vector", "teb", "dia"];

/// How many times faster than every other measured candidate the fastest must be, with at
/// least three measured, for `tune` to stop early ([`keep_measuring`]).
pub const CLEAR_LEAD: f64 = 1.5;

/// Whether `tune` measures another candidate after `times` (milliseconds per product of those
/// measured so far, in the ranking's order), at most `most` in all: not when the leader is
/// clear — three or more measured and the fastest [`CLEAR_LEAD`] times faster than each of the
/// others: the ranking has found the kind of format that wins here, and the candidates left
/// are predicted slower still. `auto_fit` scores the same rule (`Model::cross_validate`).
pub fn keep_measuring(times: &[f64], most: usize) -> bool {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let clear = sorted.len() >= 3 && sorted[1] >= CLEAR_LEAD * sorted[0];
    times.len() < most && !clear
}

/// How `tune` chooses: auto's options for the ranking, and the time for measuring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TuneOptions {
    /// The candidates and the model, as `auto`'s (`only`, `heldout`); tune ranks and measures
    /// by CUDA-graph replay, the steady timing, whoever calls.
    pub options: Options,
    /// Time for measuring; the first candidate is always measured (`budget_ms`).
    pub budget: Duration,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions { options: Options::default(), budget: Duration::from_millis(2000) }
        // budget_ms's default
    }
}

impl TuneOptions {
    /// tune's parameters: auto's, and `budget_ms`.
    pub const PARAMS: &'static [Param] = &[
        Options::PARAMS[0],
        Options::PARAMS[1],
        Param {
            key: "budget_ms",
            default: "2000",
            doc: "time for measuring (≥ 1; the first candidate is always measured)",
        },
    ];

    /// The options of a spec that has [`TuneOptions::PARAMS`] (`tune:budget_ms=500`).
    pub fn from_spec(s: &FormatSpec) -> Result<Self> {
        let options = Options::from_spec(s)?;
        Ok(TuneOptions { options, budget: Duration::from_millis(s.usize("budget_ms", 1)? as u64) })
    }

    /// The values of [`TuneOptions::PARAMS`] that give these options back.
    pub fn values(&self) -> Vec<(&'static str, String)> {
        let mut values: Vec<(&'static str, String)> =
            self.options.candidate_values().iter().map(|&(k, v)| (k, v.to_string())).collect();
        values.push(("budget_ms", self.budget.as_millis().to_string()));
        values
    }
}

/// What tuning measured (and what the cache holds).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tuned {
    /// The fastest candidate's spec.
    pub chosen: String,
    /// Each measured candidate and its time per product in milliseconds, in ranking order.
    pub measured: Vec<(String, f64)>,
    /// Read from the cache (nothing measured in this call).
    #[serde(skip)]
    pub cached: bool,
}

/// The cache folder: `$SPMV_CACHE_DIR`, else `$XDG_CACHE_HOME/spmv`, else `~/.cache/spmv`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SPMV_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("spmv"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("spmv"))
}

/// A 64-bit fingerprint of the matrix: shape, pattern and value bits (parallel, in a fixed
/// order of chunks, so the same matrix gives the same number on any thread count).
pub fn fingerprint<T: Scalar>(a: &Csr<T>) -> u64 {
    fn mix(h: u64, v: u64) -> u64 {
        (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
    }
    const CHUNK: usize = 1 << 16;
    let words = |n: usize, word: &(dyn Fn(usize) -> u64 + Sync)| -> u64 {
        (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| (c * CHUNK..((c + 1) * CHUNK).min(n)).fold(c as u64, |h, i| mix(h, word(i))))
            .collect::<Vec<u64>>()
            .into_iter()
            .fold(0, mix)
    };
    let (rp, ci, vs) = (a.row_ptr(), a.col_idx(), a.values());
    let mut h = mix(mix(mix(0, a.nrows() as u64), a.ncols() as u64), a.nnz() as u64);
    h = mix(h, words(rp.len(), &|i| rp[i] as u64));
    h = mix(h, words(ci.len(), &|i| ci[i] as u64));
    mix(h, words(vs.len(), &|i| vs[i].to_f64().to_bits()))
}

/// Measures `auto`'s first candidates for `a` on `backend` within about `budget` (the first
/// candidate is always measured; on the CPU `auto`'s CPU choice and [`CPU_LEADERS`] come
/// first and cuSPARSE's entries are passed over), keeps the fastest and caches the answer; a
/// cached answer is used without measuring. Returns the built format and what was measured.
pub fn tune<T: Scalar>(
    backend: &Backend, a: &Csr<T>, budget: Duration, options: Options,
) -> Result<(HostMatrix<T>, Tuned)> {
    tune_with_cache(backend, a, budget, options, cache_dir().as_deref())
}

/// [`tune`] with the cache in `cache` (`None`: no cache).
pub fn tune_with_cache<T: Scalar>(
    backend: &Backend, a: &Csr<T>, budget: Duration, options: Options,
    cache: Option<&std::path::Path>,
) -> Result<(HostMatrix<T>, Tuned)> {
    let device = match backend {
        Backend::Gpu(gpu) => gpu.name().to_string(),
        Backend::Cpu => format!("cpu-{}", rayon::current_num_threads()),
    };
    let key = format!(
        "{:016x}-{}-{}-{}-{}{}",
        fingerprint(a),
        T::SUFFIX,
        device.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        env!("CARGO_PKG_VERSION"),
        if options.deterministic { "det" } else { "all" },
        if options.held_out { "-heldout" } else { "" }
    );
    let path = cache.map(|d| d.join(format!("tune-{key}.json")));
    if let Some(tuned) = path
        .as_ref()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Tuned>(&b).ok())
    {
        if let Ok(host) = formats::parse_spec(&tuned.chosen).and_then(|s| formats::build(&s, a)) {
            return Ok((host, Tuned { cached: true, ..tuned }));
        }
    }
    let graph = Options { timing: Some(Timing::Graph), ..options };
    let ranking = graph.rank::<T>(&Features::of(a, TRAINING_L2_BYTES));
    // On the CPU the model's GPU ranking comes after `auto`'s own CPU choices (its choice
    // first, so that tune never keeps a format it measured slower than auto's) and the CPU's
    // usual leaders, which the model may rank low.
    // `auto`'s CPU choice, as built for auto (measured or remembered): not built again.
    let mut auto_cpu = match backend {
        Backend::Cpu => Some(super::choose_cpu(a)?),
        Backend::Gpu(_) => None,
    };
    let auto_label = auto_cpu.as_ref().map(|h| h.spec().label());
    let cpu_first: Vec<&str> = match &auto_label {
        Some(label) => {
            let eligible = super::candidates::<T>(options.deterministic);
            let cpu = std::iter::once(label.as_str()).chain(CPU_LEADERS);
            cpu.filter(|n| eligible.contains(n)).collect()
        }
        None => Vec::new(),
    };
    let mut names: Vec<&str> = Vec::new();
    for name in cpu_first.into_iter().chain(ranking.iter().map(|(n, _)| n.as_str())) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let start = Instant::now();
    let x = test_vector::<T>(a.ncols());
    let mut best: Option<(HostMatrix<T>, f64)> = None;
    let mut measured = Vec::new();
    for name in names {
        let times: Vec<f64> = measured.iter().map(|(_, ms)| *ms).collect();
        if !keep_measuring(&times, TUNE_CANDIDATES)
            || (!measured.is_empty() && start.elapsed() > budget)
        {
            break;
        }
        // On the CPU a library baseline is a plain CSR loop under cuSPARSE's name: not a
        // candidate there.
        let spec = formats::parse_spec(name)?;
        let baseline = formats::find::<f64>(spec.name()).is_ok_and(|f| f.library_baseline);
        if baseline && matches!(backend, Backend::Cpu) {
            continue;
        }
        let host = match auto_cpu.take().filter(|h| h.spec().label() == name) {
            Some(h) => h,
            None => match formats::build(&spec, a) {
                Ok(h) => h,
                Err(Error::Format { .. } | Error::Unsupported(_)) => continue,
                Err(e) => return Err(e),
            },
        };
        let ms = match (backend, &best) {
            // On the CPU each candidate races the fastest so far, and its time is recorded on
            // that one's scale: times of one format taken apart moved more between runs than
            // the formats differ (docs/auto.md), a race's ratio holds.
            (Backend::Cpu, Some((held, held_ms))) => held_ms * cpu_race([held, &host], &x)?,
            _ => product_ms(backend, &host, &x)?,
        };
        measured.push((host.spec().label(), ms));
        if best.as_ref().is_none_or(|(_, t)| ms < *t) {
            best = Some((host, ms));
        }
    }
    let (host, _) =
        best.ok_or_else(|| Error::format("tune", "no candidate format accepts the matrix"))?;
    let tuned = Tuned { chosen: host.spec().to_string(), measured, cached: false };
    if let Some(path) = path {
        store(&path, &tuned);
    }
    Ok((host, tuned))
}

/// Writes the cache entry whole or not at all ([`crate::io::output::write_file`]: a temporary
/// file renamed into place, so concurrent writers never share one); a cache that cannot be
/// written is skipped (tuning still returns its answer).
fn store(path: &std::path::Path, tuned: &Tuned) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let _ = crate::io::output::write_file(path, |w| {
        serde_json::to_writer(w, tuned).map_err(std::io::Error::from)
    });
}
