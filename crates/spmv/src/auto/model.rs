//! The model behind `auto`: k nearest neighbours over measured matrices. A training table
//! (written by `lab/tools/src/bin/auto_fit.rs` from `spmv bench --formats all` runs on the
//! H200) holds, per matrix, its [`Features`] and every format's time: `h200-f64.json` the
//! CUDA-graph replay times, `h200-f64-host.json` the host-issued back-to-back times of the same
//! runs ([`Timing`]).
//! A query's predicted time of format F, relative to the best format, is the
//! distance-weighted geometric mean of F's relative time on those of the k training matrices
//! nearest in the standardised feature space that F ran on, when they carry enough of the
//! weight ([`SUPPORT`]; otherwise a neighbour F declined counts as 10× the best there). `k` is
//! chosen by leave-one-out cross-validation ([`Model::cross_validate`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::features::FEATURES;
use super::{Features, Timing};

/// A declined format counts as this many times the best on that matrix.
const DECLINED: f64 = 10.0;
/// A candidate's prediction averages only the neighbours it ran on when they carry at least
/// this share of the neighbours' weight (a format that declines a matrix is never used on it:
/// `auto` takes the first candidate that accepts); below it, the declines count as
/// [`DECLINED`] (too little evidence that it would run well).
const SUPPORT: f64 = 0.3;
/// Where the neighbours disagree, a candidate near the best on all of them ranks above one
/// that is the best on some and far from it on another: the ranking adds this share of a
/// candidate's worst log time over the best among the neighbours it ran on to its predicted
/// log time. Leave-one-out over the graph table: 0.9718 → 0.9745 of the per-matrix best
/// (matrices of ≥ 5·10^4 entries 0.9768 → 0.9822; below 0.8: 7 → 5, `wiki-Vote` 0.65 → 1.00,
/// its neighbours' BRC 1.6× slower than HYB on it), leave-one-family-out 0.9454 → 0.9465; the
/// host table's within 0.1% either way (0.9205 → 0.9196, 0.8979 → 0.8967). Shares of 0.05 to
/// 0.2 scored alike; 0.1 is kept (docs/auto.md).
const WORST_SHARE: f64 = 0.1;

/// The stored training table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Training {
    /// Where the times come from (device, command, file).
    pub source: String,
    /// L2 cache of the training GPU, in bytes: the size feature is measured against it.
    pub l2_bytes: f64,
    /// Neighbours per prediction, chosen by cross-validation.
    pub k: usize,
    /// Every measured matrix.
    pub matrices: Vec<TrainingMatrix>,
}

/// One measured matrix of the training table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainingMatrix {
    /// The matrix's name (file stem or generator spec).
    pub name: String,
    /// Its features, measured against the table's `l2_bytes`.
    pub features: Features,
    /// Milliseconds of every format that ran correctly (label → time), timed as the table's
    /// `source` says.
    pub times_ms: HashMap<String, f64>,
}

/// The size features' places in [`Features::vector`]: rows, entries, size over the L2.
const SIZE_FEATURES: [usize; 3] = [0, 1, 8];

/// Features compared on their own scale instead of standardised: the fraction of distinct
/// values (0–1). Standardised, it weighed as much as the shape features and cross-validated
/// worse (leave-one-out 0.951 against 0.977 over the training matrices of ≥ 5·10^4 entries,
/// leave-one-family-out 0.938 against 0.945; docs/auto.md).
const RAW_FEATURES: [usize; 1] = [9];

/// The fitted model: standardised feature vectors and each matrix's times relative to its best.
pub struct Model {
    /// The table the model was fitted to.
    pub training: Training,
    mean: [f64; FEATURES],
    scale: [f64; FEATURES],
    points: Vec<[f64; FEATURES]>,
    /// The largest standardised value of each size feature (rows, entries, size over L2)
    /// among the training matrices: a larger matrix is measured as one of that size.
    size_ceiling: [f64; 3],
    /// log(time / best) per format, per training matrix.
    relative: Vec<HashMap<String, f64>>,
}

impl Model {
    /// Fits the model to `training`: standardises the feature vectors (mean 0, deviation 1 per
    /// feature) and takes each matrix's times relative to its best.
    pub fn new(training: Training) -> Self {
        let raw: Vec<[f64; FEATURES]> =
            training.matrices.iter().map(|m| m.features.vector()).collect();
        let n = raw.len().max(1) as f64;
        let mut mean = [0.0; FEATURES];
        let mut scale = [0.0; FEATURES];
        for v in &raw {
            for i in 0..FEATURES {
                mean[i] += v[i] / n;
            }
        }
        for v in &raw {
            for i in 0..FEATURES {
                scale[i] += (v[i] - mean[i]).powi(2) / n;
            }
        }
        scale.iter_mut().for_each(|s| *s = if *s > 0.0 { s.sqrt() } else { 1.0 });
        for d in RAW_FEATURES {
            (mean[d], scale[d]) = (0.0, 1.0);
        }
        let points: Vec<[f64; FEATURES]> =
            raw.iter().map(|v| std::array::from_fn(|i| (v[i] - mean[i]) / scale[i])).collect();
        let size_ceiling =
            SIZE_FEATURES.map(|d| points.iter().map(|p| p[d]).fold(f64::NEG_INFINITY, f64::max));
        let relative = training
            .matrices
            .iter()
            .map(|m| {
                let best = m.times_ms.values().copied().fold(f64::INFINITY, f64::min);
                m.times_ms.iter().map(|(f, t)| (f.clone(), (t / best).ln())).collect()
            })
            .collect();
        Model { training, mean, scale, points, size_ceiling, relative }
    }

    /// The H200 model shipped with the library for products timed as `timing` (f64 times of
    /// the same runs: `h200-f64.json` by CUDA-graph replay, `h200-f64-host.json` host-issued
    /// back to back).
    pub fn h200(timing: Timing) -> &'static Model {
        static GRAPH: OnceLock<Model> = OnceLock::new();
        static HOST: OnceLock<Model> = OnceLock::new();
        let (model, table) = match timing {
            Timing::Graph => (&GRAPH, include_str!("h200-f64.json")),
            Timing::Host => (&HOST, include_str!("h200-f64-host.json")),
        };
        model.get_or_init(|| {
            let training: Training =
                serde_json::from_str(table).expect("the shipped training table parses");
            Model::new(training)
        })
    }

    fn standardise(&self, f: &Features) -> [f64; FEATURES] {
        let v = f.vector();
        std::array::from_fn(|i| (v[i] - self.mean[i]) / self.scale[i])
    }

    /// The `k` training matrices nearest to `f` (distance, index), nearest first; those in
    /// `skip` are left out.
    fn nearest(&self, f: &Features, k: usize, skip: &[usize]) -> Vec<(f64, usize)> {
        let mut q = self.standardise(f);
        // Past the largest training matrix, size stops telling matrices apart (all of them
        // stream from memory far beyond the L2): the shape features choose.
        for (d, ceiling) in SIZE_FEATURES.iter().zip(self.size_ceiling) {
            q[*d] = q[*d].min(ceiling);
        }
        let mut near: Vec<(f64, usize)> = self
            .points
            .iter()
            .enumerate()
            .filter(|(i, _)| !skip.contains(i))
            .map(|(i, p)| (p.iter().zip(&q).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt(), i))
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        near.truncate(k.max(1));
        near
    }

    /// The format specs with parameters among the measured formats (`csr-vector:values=auto`
    /// …), sorted: candidates besides the registered names.
    pub fn variants(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .training
            .matrices
            .iter()
            .flat_map(|m| m.times_ms.keys())
            .map(String::as_str)
            .filter(|f| f.contains(':'))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The training matrices whose features equal `f`'s (the same matrix, or one that the
    /// features cannot tell from it): what `auto:heldout=true` leaves out, so that a matrix of
    /// the training set is chosen for as if the model had never seen it.
    pub fn same_matrices(&self, f: &Features) -> Vec<usize> {
        let q = self.standardise(f);
        let same = |p: &[f64; FEATURES]| {
            p.iter().zip(&q).all(|(a, b)| (a - b).abs() <= 1e-9 * (1.0 + a.abs()))
        };
        self.points.iter().enumerate().filter(|(_, p)| same(p)).map(|(i, _)| i).collect()
    }

    /// The names and distances of the `k` training matrices nearest to `f`.
    pub fn neighbours(&self, f: &Features, k: usize) -> Vec<(String, f64)> {
        self.nearest(f, k, &[])
            .into_iter()
            .map(|(d, i)| (self.training.matrices[i].name.clone(), d))
            .collect()
    }

    /// How `format` fared on the `k` training matrices nearest to `f`, the evidence behind its
    /// prediction: its time over each one's best (`spmv explain`'s confidence).
    pub fn confidence(&self, f: &Features, format: &str, k: usize) -> Confidence {
        let neighbours = self
            .nearest(f, k, &[])
            .into_iter()
            .map(|(_, i)| {
                let ratio = self.relative[i].get(format).map(|r| r.exp());
                (self.training.matrices[i].name.clone(), ratio)
            })
            .collect();
        Confidence { format: format.to_string(), neighbours }
    }

    /// An estimate of the best format's time on the training GPU, in milliseconds: the
    /// neighbours' best time per entry (distance-weighted geometric mean) times the entries.
    pub fn estimate_best_ms(&self, f: &Features, k: usize) -> f64 {
        let (mut sum, mut weights) = (0.0, 0.0);
        for (d, i) in self.nearest(f, k, &[]) {
            let m = &self.training.matrices[i];
            let best = m.times_ms.values().copied().fold(f64::INFINITY, f64::min);
            let w = 1.0 / (d + 1e-3);
            sum += w * (best / m.features.nnz.max(1.0)).ln();
            weights += w;
        }
        (sum / weights).exp() * f.nnz.max(1.0)
    }

    /// Predicted time of each candidate relative to the best (1 = as fast as the best format
    /// of the neighbours), ranked by that prediction and the candidate's worst neighbour
    /// ([`WORST_SHARE`]); the training matrices in `skip` are left out.
    pub fn predict(
        &self, f: &Features, candidates: &[&str], k: usize, skip: &[usize],
    ) -> Vec<(String, f64)> {
        let near = self.nearest(f, k, skip);
        let mut ranked: Vec<(f64, String, f64)> = candidates
            .iter()
            .map(|&c| {
                let (mut sum, mut ran, mut total, mut worst) = (0.0, 0.0, 0.0, 0.0_f64);
                for &(d, i) in &near {
                    let w = 1.0 / (d + 1e-3);
                    total += w;
                    if let Some(r) = self.relative[i].get(c) {
                        sum += w * r;
                        ran += w;
                        worst = worst.max(*r);
                    }
                }
                let log = if ran >= SUPPORT * total {
                    sum / ran
                } else {
                    (sum + (total - ran) * DECLINED.ln()) / total
                };
                (log + WORST_SHARE * worst, c.to_string(), log.exp())
            })
            .collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        ranked.into_iter().map(|(_, c, predicted)| (c, predicted)).collect()
    }

    /// Leave-one-out cross-validation with `k` neighbours over `candidates`: for every
    /// training matrix, the first format of the ranking predicted without it that ran on it
    /// (as `auto` takes the first that accepts the matrix, passing over [`super::NOT_AUTO`]),
    /// scored by the best time of every measured format / its time;
    /// with `measured` > 1, the fastest of at most the first `measured` that ran, measured in
    /// ranking order while [`super::keep_measuring`] says so (what `tune` keeps, judged by the
    /// table's own times).
    /// With `families` (one name per training matrix: a generator family, a SuiteSparse
    /// group), each matrix is ranked without every matrix of its family: leave-one-family-out,
    /// the score of a matrix unlike any the model has seen.
    /// Returns the geometric mean, the worst score and its matrix, and how many fall below 0.7.
    pub fn cross_validate(
        &self, candidates: &[&str], k: usize, measured: usize, families: Option<&[String]>,
    ) -> CrossValidation {
        let mut counts = Vec::new();
        let scores: Vec<(f64, &str, String)> = self
            .training
            .matrices
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let hidden: Vec<usize> = match families {
                    Some(f) => (0..f.len()).filter(|&j| f[j] == f[i]).collect(),
                    None => vec![i],
                };
                let ranking = self.predict(&m.features, candidates, k, &hidden);
                // The best of every measured format, candidate or not.
                let best = m.times_ms.values().copied().fold(f64::INFINITY, f64::min);
                // auto passes over some formats; tune measures whatever ranks first.
                let ranked = ranking.iter().filter(|(c, _)| measured > 1 || !super::passed_over(c));
                let mut ran = ranked.filter_map(|(c, _)| m.times_ms.get(c).map(|&t| (t, c)));
                // tune's rule: measure while it would ([`super::keep_measuring`]).
                let mut times = Vec::new();
                let mut kept: Option<(f64, &String)> = None;
                while times.is_empty() || super::keep_measuring(&times, measured.max(1)) {
                    let Some((t, c)) = ran.next() else { break };
                    times.push(t);
                    if kept.is_none_or(|k| t < k.0) {
                        kept = Some((t, c));
                    }
                }
                counts.push(times.len());
                let score = kept.map_or(1.0 / DECLINED, |(t, _)| best / t);
                (score, m.name.as_str(), kept.map_or(String::new(), |(_, c)| c.clone()))
            })
            .collect();
        let n = scores.len().max(1) as f64;
        let geomean = (scores.iter().map(|s| s.0.ln()).sum::<f64>() / n).exp();
        let worst = scores
            .iter()
            .map(|s| (s.0, s.1))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((f64::NAN, ""));
        CrossValidation {
            k,
            geomean,
            worst: worst.0,
            worst_matrix: worst.1.to_string(),
            below_70: scores.iter().filter(|s| s.0 < 0.7).count(),
            low: scores
                .iter()
                .filter(|s| s.0 < 0.7)
                .map(|(score, name, kept)| (name.to_string(), *score, kept.clone()))
                .collect(),
            scores: scores
                .iter()
                .map(|(s, name, kept)| (name.to_string(), *s, kept.clone()))
                .collect(),
            matrices: scores.len(),
            mean_measured: counts.iter().sum::<usize>() as f64 / counts.len().max(1) as f64,
        }
    }
}

/// A format's times on the nearest training matrices, over each one's best
/// ([`Model::confidence`]).
#[derive(Clone, Debug)]
pub struct Confidence {
    /// The format.
    pub format: String,
    /// Per neighbour, nearest first: its name and the format's time over its best (`None`:
    /// the format declined it or was not measured there).
    pub neighbours: Vec<(String, Option<f64>)>,
}

impl Confidence {
    /// Where a neighbour's best beats the format by this factor, the neighbours disagree enough
    /// that measuring (`tune`) is likely to find a faster format.
    pub const TUNE_WORTH: f64 = 1.15;

    /// The lowest and highest time over the best among the neighbours the format ran on.
    pub fn range(&self) -> Option<(f64, f64)> {
        let ran = self.neighbours.iter().filter_map(|n| n.1);
        ran.fold(None, |r, x| Some(r.map_or((x, x), |(lo, hi): (f64, f64)| (lo.min(x), hi.max(x)))))
    }

    /// The neighbours where the format was the fastest.
    pub fn best_on(&self) -> usize {
        self.neighbours.iter().filter(|n| n.1 == Some(1.0)).count()
    }

    /// The neighbours the format did not run on.
    pub fn declined(&self) -> usize {
        self.neighbours.iter().filter(|n| n.1.is_none()).count()
    }

    /// Whether `tune` is likely to gain over the choice: on some neighbour the format was at
    /// least [`Confidence::TUNE_WORTH`] times the best, or did not run.
    pub fn tune_worth(&self) -> bool {
        self.declined() > 0 || self.range().is_some_and(|(_, hi)| hi >= Self::TUNE_WORTH)
    }
}

/// What leave-one-out cross-validation found.
#[derive(Clone, Debug, Serialize)]
pub struct CrossValidation {
    /// Neighbours used.
    pub k: usize,
    /// Geometric mean over the matrices of best time / chosen format's time.
    pub geomean: f64,
    /// The lowest score (best time / chosen format's time).
    pub worst: f64,
    /// The matrix with the lowest score.
    pub worst_matrix: String,
    /// Matrices whose score is below 0.7.
    pub below_70: usize,
    /// The matrices below 0.7, their scores and the formats kept there.
    pub low: Vec<(String, f64, String)>,
    /// Every matrix's score and the format kept there, in the training table's order.
    pub scores: Vec<(String, f64, String)>,
    /// Training matrices scored.
    pub matrices: usize,
    /// Candidates measured per matrix, on average (1 for `auto`; `tune` stops early where its
    /// leader is clear).
    pub mean_measured: f64,
}
