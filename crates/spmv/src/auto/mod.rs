//! `auto`: the format chosen for a matrix from its [`Features`] by a model fitted to measured
//! data ([`Model`]: nearest neighbours over the H200's times of every format on the 317 shared
//! matrices and generated ones), by the timing its caller sees ([`Timing`]: host-issued
//! products, or a solver's CUDA-graph replay).
//!
//! The candidates are every registered format that runs in the precision (f16: the formats
//! with half kernels), only the deterministic ones with `auto:only=deterministic`. The model's
//! times are f64 times on the H200; f32 and f16 use the same ranking (the formats' relative
//! speeds change little with the value width; measured choices are `tune`'s job). Another GPU
//! is handled through the size feature, which is measured against the L2 of the GPU the model
//! was trained on: a matrix is "large" when it would be on the H200. The chosen format is the
//! first of the ranking that accepts the matrix (DIA-like formats decline what they cannot
//! hold). Feature extraction reads the row offsets and a sample of at most 4,096 rows.

mod features;
mod model;
mod tune;

pub use features::{Features, SAMPLED_ROWS, TRAINING_L2_BYTES};
pub use model::{Confidence, CrossValidation, Model, Training, TrainingMatrix};
pub use tune::{
    cache_dir, fingerprint, keep_measuring, tune, tune_with_cache, TuneOptions, Tuned, CLEAR_LEAD,
    TUNE_CANDIDATES,
};

use crate::error::{Error, Result};
use crate::formats::{self, FormatHandle, FormatSpec, HostMatrix, Param};
use crate::matrix::{Csr, Precision, Scalar};

/// Why auto passes over a format that ranks first (the registry's `auto_candidate: false`;
/// written for coo-atomic, the one such format: its reason is with its entry).
const NOT_AUTO_REASON: &str = "auto passes over coo-atomic (run-to-run bits, and its riskiest choice: docs/auto.md); tune measures it";

/// Is `spec` (a ranking's entry) a format `auto` passes over (`auto_candidate: false`)?
pub fn passed_over(spec: &str) -> bool {
    let name = spec.split(':').next().unwrap_or(spec);
    formats::find::<f64>(name).is_ok_and(|f| !f.auto_candidate)
}

/// The formats `auto` ranks for precision `T` (`deterministic`: only those): every
/// registered format, and the variants of them with parameters that the model was measured
/// with (`csr-vector:values=auto` …).
pub fn candidates<T: Scalar>(deterministic: bool) -> Vec<&'static str> {
    let eligible: Vec<&'static str> = formats::registry::<T>()
        .into_iter()
        .filter(|f| T::PRECISION != Precision::F16 || f.half)
        .filter(|f| !deterministic || f.deterministic)
        .map(|f| f.name)
        .collect();
    let variants = Model::h200(Timing::Graph)
        .variants()
        .into_iter()
        .filter(|v| v.split_once(':').is_some_and(|(name, _)| eligible.contains(&name)));
    eligible.iter().copied().chain(variants).collect()
}

/// How the products a choice is made for are timed: the caller's way of running them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Issued one by one from the host (`Operator::apply` in a loop, `spmv bench`'s
    /// back-to-back time): each launch's host cost counts, which on products of a few
    /// microseconds decides more than the kernel (formats of one launch gain).
    Host,
    /// Replayed as a CUDA graph (a solver's iterations on one GPU): the GPU's time alone.
    Graph,
}

impl Timing {
    /// How products on `backend` are timed when the caller replays them as CUDA graphs
    /// where it can (`graph`: a solve's iterations): graph on a GPU, else host-issued.
    pub fn of(backend: &crate::Backend, graph: bool) -> Timing {
        match (backend, graph) {
            (crate::Backend::Gpu(_), true) => Timing::Graph,
            _ => Timing::Host,
        }
    }
}

/// How `auto` and `tune` choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Only deterministic candidates (bitwise identical runs): `only=deterministic`.
    pub deterministic: bool,
    /// Leave the matrix itself out of the model when it is one of the training matrices
    /// (`heldout=true`): how the choice is scored on the matrices the model was fitted on.
    pub held_out: bool,
    /// The timing the model ranks by (`timing=host|graph`); `None` (`timing=caller`): the
    /// caller's ([`Options::for_caller`]: the solvers replay graphs), else host-issued.
    pub timing: Option<Timing>,
}

/// The candidates of `auto` and `tune`.
const ONLY: Param = Param {
    key: "only",
    default: "all",
    doc: "the candidates: all registered formats, or deterministic ones only (bitwise identical runs)",
};

/// Leaving the matrix out of the model when it is a training matrix (auto and tune).
const HELD_OUT: Param = Param {
    key: "heldout",
    default: "false",
    doc: "true: choose as if the model had not been fitted on this matrix (how the choice is scored on the training matrices)",
};

/// The timing auto's model ranks by.
const TIMING: Param = Param {
    key: "timing",
    default: "caller",
    doc: "the times the model ranks by: host (products issued one by one), graph (CUDA-graph replay), caller (graph for a solve on one GPU, else host)",
};

impl Options {
    /// auto's parameters (tune's begin with the first two: it ranks and measures by graph).
    pub const PARAMS: &'static [Param] = &[ONLY, HELD_OUT, TIMING];

    /// The options of a spec that has [`Options::PARAMS`] (`auto:only=deterministic`).
    pub fn from_spec(s: &FormatSpec) -> Result<Self> {
        // tune's specs have no timing (it measures by graph replay).
        let timing = match s.get("timing") {
            Some(_) => match s.choice("timing", &["caller", "host", "graph"])? {
                "host" => Some(Timing::Host),
                "graph" => Some(Timing::Graph),
                _ => None,
            },
            None => None,
        };
        Ok(Options {
            deterministic: s.choice("only", &["all", "deterministic"])? == "deterministic",
            held_out: s.choice("heldout", &["false", "true"])? == "true",
            timing,
        })
    }

    /// The values of [`Options::PARAMS`] that give these options back.
    pub fn values(&self) -> [(&'static str, &'static str); 3] {
        let [only, held_out] = self.candidate_values();
        let timing = match self.timing {
            None => "caller",
            Some(Timing::Host) => "host",
            Some(Timing::Graph) => "graph",
        };
        [only, held_out, ("timing", timing)]
    }

    /// The values of `only` and `heldout` (tune's first parameters).
    pub fn candidate_values(&self) -> [(&'static str, &'static str); 2] {
        [
            ("only", if self.deterministic { "deterministic" } else { "all" }),
            ("heldout", if self.held_out { "true" } else { "false" }),
        ]
    }

    /// These options for a caller that sees `timing`, where the spec leaves the timing to its
    /// caller (`timing=caller`): graph for one that replays graphs; a host-issued caller
    /// changes nothing (unset is host-issued), so the spec and the handle's label stay as given.
    pub fn for_caller(self, timing: Timing) -> Self {
        match (self.timing, timing) {
            (None, Timing::Graph) => Options { timing: Some(Timing::Graph), ..self },
            _ => self,
        }
    }

    /// The timing the ranking uses: the one set, else host-issued.
    pub fn timing(&self) -> Timing {
        self.timing.unwrap_or(Timing::Host)
    }

    /// The ranking of the candidates for a matrix with these features, fastest first. From
    /// 2^31 entries on, only the formats with 64-bit offsets are candidates
    /// ([`formats::offsets`]), cuSPARSE left out.
    pub fn rank<T: Scalar>(&self, features: &Features) -> Vec<(String, f64)> {
        let model = Model::h200(self.timing());
        let skip = if self.held_out { model.same_matrices(features) } else { Vec::new() };
        let mut candidates = candidates::<T>(self.deterministic);
        if features.nnz >= formats::offsets::WIDE_ENTRIES as f64 {
            // cuSPARSE takes such a matrix (64-bit indices) but failed on one in the H200 run
            // of docs/scale.md: not a candidate there.
            candidates.retain(|c| {
                let name = c.split(':').next().unwrap_or(c);
                formats::find::<f64>(name).is_ok_and(|f| f.wide && !f.library_baseline)
            });
        }
        model.predict(features, &candidates, model.training.k, &skip)
    }
}

/// Why `auto` chose what it chose.
#[derive(Clone, Debug)]
pub struct Decision {
    /// The features the ranking was made from.
    pub features: Features,
    /// Every candidate with its predicted time relative to the best, fastest first.
    pub ranking: Vec<(String, f64)>,
    /// The format built (the first of the ranking that accepted the matrix).
    pub chosen: String,
    /// The candidates ranked before it that declined the matrix, with their reasons.
    pub declined: Vec<(String, String)>,
}

/// Ranks the candidates for `a` and builds the first that accepts it.
pub fn choose<T: Scalar>(a: &Csr<T>, options: Options) -> Result<(HostMatrix<T>, Decision)> {
    choose_with(a, Features::of(a, TRAINING_L2_BYTES), options)
}

/// [`choose`] with the features of `a` already computed.
pub fn choose_with<T: Scalar>(
    a: &Csr<T>, features: Features, options: Options,
) -> Result<(HostMatrix<T>, Decision)> {
    let ranking = options.rank::<T>(&features);
    let mut declined = Vec::new();
    for (name, _) in &ranking {
        if passed_over(name) {
            declined.push((name.clone(), NOT_AUTO_REASON.to_string()));
            continue;
        }
        match formats::parse_spec(name).and_then(|spec| formats::build(&spec, a)) {
            Ok(host) => {
                let chosen = name.clone();
                return Ok((host, Decision { features, ranking, chosen, declined }));
            }
            Err(e @ (Error::Format { .. } | Error::Unsupported(_))) => {
                declined.push((name.clone(), e.to_string()))
            }
            Err(e) => return Err(e),
        }
    }
    Err(Error::format("auto", "no candidate format accepts the matrix"))
}

/// `auto` on the CPU backend: measured on this machine, not the H200 model (whose GPU-shaped
/// choices ran 0.53× the per-matrix best CPU format there, csr-vector 0.68×: docs/auto.md).
/// A product small enough to run on the calling thread (`Csr::runs_serially`) takes
/// csr-vector, the fastest there. A larger one races the CPU's candidates ([`cpu_candidates`]:
/// DIA where it fits, TEB, csr-vector) two at a time on this machine
/// ([`crate::measure::cpu_race`]) and keeps the faster, csr-vector on a tie: no rule
/// separated TEB's wins from its losses (0.66–1.52× csr-vector's speed, with no size
/// threshold), and the same product's time moved by up to 2.4× between runs of the 2-core VM,
/// so the formats are timed side by side. The answer is remembered for the process's lifetime
/// per matrix (its [`fingerprint`]), precision and thread count: converting the same matrix
/// again builds the same format without measuring. On f64 and f32 the candidates' CPU
/// products add each row's entries in the same order, so the choice does not change y
/// (DIA's padded slots add zeros).
pub fn choose_cpu<T: Scalar>(a: &Csr<T>) -> Result<HostMatrix<T>> {
    let key = cpu_choice_key(a);
    if let Some(spec) = remembered(&key) {
        if let Ok(host) = formats::parse_spec(&spec).and_then(|s| formats::build(&s, a)) {
            return Ok(host);
        }
    }
    let x = crate::reference::test_vector::<T>(a.ncols());
    let mut held: Option<HostMatrix<T>> = None;
    for name in cpu_candidates(a) {
        let challenger = match formats::build(&formats::parse_spec(name)?, a) {
            // A format that declines the matrix passes it on; csr-vector, last, takes any.
            Err(Error::Format { .. } | Error::Unsupported(_)) if name != "csr-vector" => continue,
            built => built?,
        };
        held = Some(match held {
            None => challenger,
            Some(held) => {
                if crate::measure::cpu_race([&held, &challenger], &x)? <= 1.0 {
                    challenger
                } else {
                    held
                }
            }
        });
    }
    let chosen = held.ok_or_else(|| Error::format("auto", "no CPU format accepts the matrix"))?;
    remember(key, chosen.spec().label());
    Ok(chosen)
}

/// The formats [`choose_cpu`] races for `a`, in order, ending with `csr-vector` (which wins
/// ties). A matrix of few full diagonals (stencils, banded FEM meshes) can run fastest in
/// DIA: no column to read, x in order (1.5–5.6× csr-vector on such matrices); TEB's blocks of
/// near-equal entries lead on longer rows and many irregular graphs. Below the size where a
/// product is threaded, csr-vector alone: it runs on the calling thread, and the others'
/// threads cost more than they save there (DIA 0.33–0.55× on `t2dal_e`, `cryg2500`).
pub fn cpu_candidates<T: Scalar>(a: &Csr<T>) -> Vec<&'static str> {
    if a.runs_serially() {
        return vec!["csr-vector"];
    }
    let mut order = Vec::new();
    if dia_fill(a).is_some_and(|fill| fill <= CPU_DIA_MAX_PADDING) {
        order.push("dia");
    }
    order.extend(["teb", "csr-vector"]);
    order
}

/// The key of [`choose_cpu`]'s answers: the matrix, the precision, rayon's thread count.
fn cpu_choice_key<T: Scalar>(a: &Csr<T>) -> String {
    format!("{:016x}-{}-{}", fingerprint(a), T::SUFFIX, rayon::current_num_threads())
}

/// [`choose_cpu`]'s answers in this process (at most [`REMEMBERED`]; the oldest go first).
static CPU_CHOICES: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
/// How many of [`choose_cpu`]'s answers the process keeps.
const REMEMBERED: usize = 256;

fn remembered(key: &str) -> Option<String> {
    let choices = CPU_CHOICES.lock().unwrap_or_else(|e| e.into_inner());
    choices.iter().find(|(k, _)| k == key).map(|(_, spec)| spec.clone())
}

fn remember(key: String, spec: String) {
    let mut choices = CPU_CHOICES.lock().unwrap_or_else(|e| e.into_inner());
    choices.retain(|(k, _)| *k != key);
    if choices.len() >= REMEMBERED {
        choices.remove(0);
    }
    choices.push((key, spec));
}

/// `auto` on the CPU races `dia` when its stored slots are at most this many times the
/// entries ([`cpu_candidates`]).
pub const CPU_DIA_MAX_PADDING: f64 = 1.3;

/// DIA's stored slots over the entries (each occupied diagonal stored whole), or `None` for
/// a matrix DIA cannot index or without entries.
fn dia_fill<T: Scalar>(a: &Csr<T>) -> Option<f64> {
    use crate::formats::dia::diagonals::{census, check_shape, rows_in_range};
    check_shape("dia", a).ok().filter(|()| a.nnz() > 0)?;
    let (m, n) = (a.nrows(), a.ncols());
    let slots: usize = census(a).iter().map(|d| rows_in_range(0, m, d.offset, n).len()).sum();
    Some(slots as f64 / a.nnz() as f64)
}

#[cfg(test)]
mod tests;
