//! Measuring pieces the benchmark ([`crate::bench`]), `tune` ([`crate::auto::tune`]) and
//! `auto` on the CPU ([`crate::auto::choose_cpu`]) share: the median of a sample, the time of
//! one product on a backend, and a race of two formats' CPU products. They live below all
//! three so that none imports another.

use std::time::Instant;

use crate::error::Result;
use crate::formats::{FormatHandle, HostMatrix};
use crate::matrix::Scalar;
use crate::Backend;

/// Milliseconds since `start`: every wall time the crate reports (phases, conversions, runs).
pub(crate) fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Median and minimum of a sample.
pub fn median_min(times: &mut [f64]) -> (f64, f64) {
    if times.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let n = times.len();
    let median = if n % 2 == 1 { times[n / 2] } else { 0.5 * (times[n / 2 - 1] + times[n / 2]) };
    (median, times[0])
}

/// Time per product in milliseconds: back to back on the GPU, a timed loop on the CPU.
///
/// On the GPU the products are replayed as a CUDA graph where they can be captured
/// ([`crate::gpu::Gpu::time_graph`]), else issued from the host: products of a few microseconds are
/// otherwise bound by the host's launch rate and its jitter (two host-issued measurements of
/// one kernel differed by up to 2× on the H200, more than the candidates differ). A round is
/// at least [`ROUND_MS`] of launches (from 20 to 5,000; at most 1,000 in a graph, whose
/// replays barely vary); the median of [`ROUNDS`] rounds is kept.
pub(crate) fn product_ms<T: Scalar>(
    backend: &Backend, host: &HostMatrix<T>, x: &[T],
) -> Result<f64> {
    const ROUND_MS: f64 = 1.0;
    const ROUNDS: usize = 5;
    match backend {
        Backend::Gpu(gpu) => {
            if host.nrows() == 0 {
                return Ok(0.0);
            }
            let device = host.upload(gpu)?;
            let x_dev = gpu.upload(x)?;
            let mut y = gpu.alloc::<T>(host.nrows())?;
            // Warm-up, and a first estimate that sizes the rounds.
            let first = gpu.time_back_to_back(1, 20, || device.spmv(&x_dev, &mut y))?;
            let per_launch = first.first().copied().unwrap_or(ROUND_MS).max(1e-4);
            let launches = ((ROUND_MS / per_launch).ceil() as usize).clamp(20, 5_000);
            let mut means = match gpu
                .time_graph(ROUNDS, launches.min(1_000), || device.spmv(&x_dev, &mut y))?
            {
                Some(means) => means,
                None => gpu.time_back_to_back(ROUNDS, launches, || device.spmv(&x_dev, &mut y))?,
            };
            Ok(median_min(&mut means).0)
        }
        Backend::Cpu => {
            let mut y = vec![T::ZERO; host.nrows()];
            host.spmv(x, &mut y)?;
            let mut times: Vec<f64> = (0..5)
                .map(|_| {
                    let t = Instant::now();
                    let _ = host.spmv(x, &mut y);
                    ms_since(t)
                })
                .collect();
            Ok(median_min(&mut times).0)
        }
    }
}

/// How much slower the second of two formats of one matrix runs its CPU product than the
/// first (the median over rounds of the second's time over the first's; below 1: faster),
/// measured side by side: rounds of at least [`RACE_ROUND_MS`] of one format's products,
/// then the other's (the first of each round alternating). On a shared VM one product's time
/// moved by up to 2.4× between runs, more than the formats differ (docs/auto.md); a round's
/// two times are taken within a millisecond of each other, so their ratio holds where the
/// times themselves drift. [`RACE_ROUNDS`] rounds, fewer (at least [`RACE_MIN_ROUNDS`]) once
/// the race has taken [`RACE_BUDGET_MS`].
pub(crate) fn cpu_race<T: Scalar>(pair: [&HostMatrix<T>; 2], x: &[T]) -> Result<f64> {
    let start = Instant::now();
    let mut y = vec![T::ZERO; pair[0].nrows()];
    let mut reps = [1usize; 2];
    for (r, h) in reps.iter_mut().zip(pair) {
        h.spmv(x, &mut y)?; // warm-up
        let t = Instant::now();
        h.spmv(x, &mut y)?;
        *r = ((RACE_ROUND_MS / ms_since(t).max(1e-4)).ceil() as usize).clamp(1, 10_000);
    }
    let mut ratios = Vec::new();
    for round in 0..RACE_ROUNDS {
        if round >= RACE_MIN_ROUNDS && ms_since(start) > RACE_BUDGET_MS {
            break;
        }
        let mut ms = [0.0; 2];
        for k in 0..2 {
            let i = (k + round) % 2;
            let t = Instant::now();
            for _ in 0..reps[i] {
                pair[i].spmv(x, &mut y)?;
            }
            ms[i] = ms_since(t) / reps[i] as f64;
        }
        ratios.push(ms[1] / ms[0].max(1e-9));
    }
    Ok(median_min(&mut ratios).0)
}

/// Most rounds of [`cpu_race`].
const RACE_ROUNDS: usize = 31;
/// Fewest rounds of [`cpu_race`].
const RACE_MIN_ROUNDS: usize = 5;
/// After this many milliseconds [`cpu_race`] runs no round past its [`RACE_MIN_ROUNDS`].
const RACE_BUDGET_MS: f64 = 40.0;
/// Shortest round of [`cpu_race`] (a round holds at least one product of each).
const RACE_ROUND_MS: f64 = 0.3;
