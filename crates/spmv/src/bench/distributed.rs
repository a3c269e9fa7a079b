//! `spmv bench --devices`: each format as a [`DistributedMatrix`] over several GPUs (rows cut
//! into parts of about equal entries, one part per listed device, the halo of `x` exchanged
//! before every product). Each result is checked against the oracle on every row, then timed
//! per product (the host waits for every GPU after each: median and minimum) and back to back
//! (`reps` products queued, then one wait: the mean), and the halo exchange alone back to
//! back. The roofline is the copy bandwidth measured on the first device times the number of
//! distinct devices.

use std::sync::Arc;
use std::time::Instant;

use super::{median_min, record_check, MatrixRun, Measurement, Parts, Product, Settings, Status};
use crate::backend::RankPlace;
use crate::choice::Choice;
use crate::distributed::DistributedMatrix;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::matrix::Scalar;
use crate::measure::ms_since;
use crate::reference::{Check, Oracle};

/// One (square) matrix in every given format spread over `parts` (part `i` on `gpus[i]`,
/// device ordinal `devices[i]`); the results name the devices, the halo's bytes and the
/// exchange's time. `tune` and `--reorder` are declined (per part, `auto` chooses).
pub(super) fn run_matrix<T: Scalar>(
    parts: &Parts, run: MatrixRun<'_, T>, progress: &mut impl FnMut(&Measurement),
) -> Vec<Measurement> {
    let MatrixRun { name, a, specs, settings, machine, .. } = run;
    let (gpus, devices) = (&parts.gpus, &parts.devices);
    let mut distinct = devices.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    specs
        .iter()
        .map(|spec| {
            let mut m = Measurement::new(name, spec, a, settings.product);
            m.parts.devices = Some(devices.to_vec());
            m.parts.exchange = Some(settings.exchange.to_string());
            if let Some(why) = declined(spec, &run) {
                m.status = Status::Unsupported;
                m.error = Some(why);
            } else if let Err(e) = measure(gpus, spec, &run, &mut m) {
                m.status = Status::of_error(&e);
                m.error = Some(e.to_string());
            } else {
                m.rates(a, settings.product, machine, distinct.len());
            }
            progress(&m);
            m
        })
        .collect()
}

/// Why `spec` is not measured over several GPUs (or processes), if it is not.
fn declined<T: Scalar>(spec: &Choice, run: &MatrixRun<'_, T>) -> Option<String> {
    let settings = run.settings;
    if let Some(why) = &run.range_error {
        Some(format!("the matrix does not fit {}: {why}", T::SUFFIX))
    } else if matches!(spec, Choice::Tune(_)) {
        Some("format tune: not run over several devices (auto chooses per part)".to_string())
    } else if settings.reorder != crate::reorder::Reordering::None {
        Some("--devices is not combined with --reorder".to_string())
    } else if settings.product != Product::Forward {
        Some(format!("--devices measures A·x only, not {}", settings.product.name()))
    } else {
        None
    }
}

/// `spmv bench` as one rank of a multi-process run: `run.a` is this rank's rows; each format
/// is built as this rank's part ([`DistributedMatrix::for_rank`]), the result checked on
/// every rank's rows, the times of the slowest rank kept. Every rank returns the same
/// results (the whole matrix's rows and entries, the parts' formats and bytes summed).
pub(super) fn run_matrix_ranks<T: Scalar>(
    place: &RankPlace, run: MatrixRun<'_, T>, progress: &mut impl FnMut(&Measurement),
) -> Vec<Measurement> {
    let MatrixRun { name, a, specs, settings, machine, .. } = run;
    let size = place.ranks.world().size;
    specs
        .iter()
        .map(|spec| {
            let mut m = Measurement::new(name, spec, a, settings.product);
            m.parts.exchange = Some("nccl".to_string());
            // Every rank declines alike (the same spec and settings; the range check is the
            // rank's own rows').
            let declined = place.ranks.agree(match declined(spec, &run) {
                Some(why) => Err(Error::Unsupported(why)),
                None => Ok(()),
            });
            let measured = declined.and_then(|()| measure_ranks(place, spec, &run, &mut m));
            match measured {
                Err(e) => {
                    m.status = Status::of_error(&e);
                    m.error = Some(e.to_string());
                }
                Ok(shape) => m.rates_of::<T>(shape, settings.product, machine, size),
            }
            progress(&m);
            m
        })
        .collect()
}

/// [`measure`] for one rank's part; returns the whole matrix's (rows, columns, entries).
fn measure_ranks<T: Scalar>(
    place: &RankPlace, spec: &Choice, run: &MatrixRun<'_, T>, m: &mut Measurement,
) -> Result<(usize, usize, usize)> {
    let (a, settings) = (run.a, run.settings);
    let (x, oracle) = (&run.operands.x, &run.operands.oracles[0]);
    let t = Instant::now();
    let mut d = DistributedMatrix::for_rank(a, &place.gpu, spec, &place.ranks)?;
    d.set_overlap(settings.overlap);
    d.synchronize()?;
    let convert_ms = ms_since(t);
    let parts = d.describe_parts()?;
    m.parts.setup_phases = Some(d.setup_phases()?);
    m.parts.devices = Some(parts.iter().map(|p| p.2).collect());
    if parts.iter().any(|p| p.0 != m.format) {
        m.chosen = Some(parts.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join("|"));
    }
    m.parts.halo_bytes = Some(d.halo_bytes());
    let rows = d.host_rows();
    let Timed { check, median, min, product, exchange } = check_and_time(&d, x, oracle, settings)?;
    // Summed over the ranks: bytes and failed rows; the slowest rank's times and the worst
    // error (its row counted from the rank's first row).
    let interior = (d.parts_with_interior() > 0 && settings.overlap) as u8 as f64;
    let worst_row = check.worst_row.map_or(-1.0, |r| (rows.start + r) as f64);
    let mine = vec![
        d.device_bytes() as f64,
        d.bytes_read() as f64,
        interior,
        check.failed_rows as f64,
        check.max_rel_error,
        worst_row,
        convert_ms,
        median,
        min,
        product,
        exchange,
    ];
    let all = d.across_ranks(vec![mine])?;
    let sum = |k: usize| all.iter().map(|v| v[k]).sum::<f64>();
    let max = |k: usize| all.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max);
    (m.format_bytes, m.bytes_read) = (sum(0) as usize, sum(1) as usize);
    m.parts.overlapping_parts = Some(sum(2) as usize);
    let worst = all.iter().max_by(|u, v| u[4].total_cmp(&v[4])).filter(|v| v[5] >= 0.0);
    record_check(
        m,
        Check {
            failed_rows: sum(3) as usize,
            max_rel_error: max(4),
            worst_row: worst.map(|v| v[5] as usize),
        },
    );
    (m.setup.convert_ms, m.time.median_ms, m.time.min_ms) = (max(6), max(7), max(8));
    m.time.back_to_back_ms = max(9);
    m.parts.exchange_ms = Some(max(10));
    m.nrows = d.nrows();
    m.ncols = d.nrows();
    m.nnz = d.nnz();
    Ok((d.nrows(), d.nrows(), d.nnz()))
}

fn measure<T: Scalar>(
    gpus: &[Arc<Gpu>], spec: &Choice, run: &MatrixRun<'_, T>, m: &mut Measurement,
) -> Result<()> {
    let (a, settings) = (run.a, run.settings);
    let (x, oracle) = (&run.operands.x, &run.operands.oracles[0]);
    if a.nrows() != a.ncols() {
        return Err(Error::Unsupported(format!(
            "a distributed matrix is square (x is split like the rows): {} x {}",
            a.nrows(),
            a.ncols()
        )));
    }
    let t = Instant::now();
    let mut d = DistributedMatrix::new(a, gpus, spec)?;
    d.set_exchange(settings.exchange)?;
    d.set_overlap(settings.overlap);
    m.parts.overlapping_parts = Some(if settings.overlap { d.parts_with_interior() } else { 0 });
    d.synchronize()?;
    m.setup.convert_ms = ms_since(t); // conversion and upload of every part
    m.parts.setup_phases = Some(d.setup_phases()?);
    let formats = d.part_formats();
    if formats.iter().any(|f| *f != m.format) {
        m.chosen = Some(formats.join("|"));
    }
    m.format_bytes = d.device_bytes();
    m.bytes_read = d.bytes_read();
    m.parts.halo_bytes = Some(d.halo_bytes());
    let Timed { check, median, min, product, exchange } = check_and_time(&d, x, oracle, settings)?;
    record_check(m, check);
    (m.time.median_ms, m.time.min_ms) = (median, min);
    m.time.back_to_back_ms = product;
    m.parts.exchange_ms = Some(exchange);
    Ok(())
}

/// A distributed product checked and timed ([`check_and_time`]).
struct Timed {
    check: Check,
    /// Per product (the host waits for every GPU after each): median and minimum, ms.
    median: f64,
    min: f64,
    /// Back-to-back means of a product and of the halo exchange alone, ms.
    product: f64,
    exchange: f64,
}

/// `d`'s product of this process's rows of `x` into a NaN-poisoned y, checked against
/// `oracle` (the same rows), then timed as [`Timed`] says.
fn check_and_time<T: Scalar>(
    d: &DistributedMatrix<T>, x: &[T], oracle: &Oracle, settings: &Settings,
) -> Result<Timed> {
    let rows = d.host_rows();
    let xd = d.upload(&x[rows.clone()], true)?;
    let mut y = d.upload(&vec![T::nan(); rows.len()], false)?;
    d.spmv(&xd, &mut y)?;
    let check = oracle.check(&d.download(&y)?);
    for _ in 0..settings.warmup {
        d.spmv(&xd, &mut y)?;
    }
    d.synchronize()?;
    let mut times = Vec::with_capacity(settings.reps);
    for _ in 0..settings.reps.max(1) {
        let t = Instant::now();
        d.spmv(&xd, &mut y)?;
        d.synchronize()?;
        times.push(ms_since(t));
    }
    let (median, min) = median_min(&mut times);
    let (product, exchange) = d.time_products(settings.reps)?;
    Ok(Timed { check, median, min, product, exchange })
}
