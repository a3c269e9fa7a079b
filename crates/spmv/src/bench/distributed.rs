//! `spmv bench --devices`: each format as a [`DistributedMatrix`] over several GPUs (rows cut
//! into parts of about equal entries, one part per listed device, the halo of `x` exchanged
//! before every product). Each result is checked against the oracle on every row, then timed
//! per product (the host waits for every GPU after each: median and minimum) and back to back
//! (`reps` products queued, then one wait: the mean), and the halo exchange alone back to
//! back. The roofline is the copy bandwidth measured on the first device times the number of
//! distinct devices.

use std::sync::Arc;
use std::time::Instant;

use super::{median_min, record_check, MatrixRun, Measurement, Parts, Product, Status};
use crate::choice::Choice;
use crate::distributed::DistributedMatrix;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::matrix::Scalar;
use crate::measure::ms_since;

/// One (square) matrix in every given format spread over `parts` (part `i` on `gpus[i]`,
/// device ordinal `devices[i]`); the results name the devices, the halo's bytes and the
/// exchange's time. `tune` and `--reorder` are declined (per part, `auto` chooses).
pub(super) fn run_matrix<T: Scalar>(
    parts: &Parts,
    run: MatrixRun<'_, T>,
    progress: &mut impl FnMut(&Measurement),
) -> Vec<Measurement> {
    let MatrixRun { name, a, specs, settings, machine, ref range_error, .. } = run;
    let (gpus, devices) = (&parts.gpus, &parts.devices);
    let mut distinct = devices.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    specs
        .iter()
        .map(|spec| {
            let mut m = Measurement::new(name, spec, a, settings.product);
            m.devices = Some(devices.to_vec());
            m.exchange = Some(settings.exchange.to_string());
            let declined = if let Some(why) = &range_error {
                Some(format!("the matrix does not fit {}: {why}", T::SUFFIX))
            } else if matches!(spec, Choice::Tune(_)) {
                Some(
                    "format tune: not run over several devices (auto chooses per part)".to_string(),
                )
            } else if settings.reorder != crate::reorder::Reordering::None {
                Some("--devices is not combined with --reorder".to_string())
            } else if settings.product != Product::Forward {
                Some(format!("--devices measures A·x only, not {}", settings.product.name()))
            } else {
                None
            };
            if let Some(why) = declined {
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

fn measure<T: Scalar>(
    gpus: &[Arc<Gpu>],
    spec: &Choice,
    run: &MatrixRun<'_, T>,
    m: &mut Measurement,
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
    m.overlapping_parts = Some(if settings.overlap { d.parts_with_interior() } else { 0 });
    d.synchronize()?;
    m.convert_ms = ms_since(t); // conversion and upload of every part
    let formats = d.part_formats();
    if formats.iter().any(|f| *f != m.format) {
        m.chosen = Some(formats.join("|"));
    }
    m.format_bytes = d.device_bytes();
    m.bytes_read = d.bytes_read();
    m.halo_bytes = Some(d.halo_bytes());
    let xd = d.upload(x, true)?;
    let mut y = d.upload(&vec![T::nan(); a.nrows()], false)?;
    d.spmv(&xd, &mut y)?;
    record_check(m, oracle.check(&d.download(&y)?));
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
    (m.median_ms, m.min_ms) = median_min(&mut times);
    let (product, exchange) = d.time_products(settings.reps)?;
    m.back_to_back_ms = product;
    m.exchange_ms = Some(exchange);
    Ok(())
}
