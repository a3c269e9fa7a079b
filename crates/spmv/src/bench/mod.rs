//! The measurements behind `spmv bench`: per matrix × format, conversion time, device
//! bytes, median and minimum kernel time, GFLOPS, effective bandwidth against the copy
//! roofline measured in the same run, and the error against the oracle.

pub(crate) mod bound;
mod distributed;
mod product;
pub mod report;

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaSlice, PushKernelArg};
use rayon::prelude::*;
use serde::Serialize;

pub use crate::backend::{Parts, Target};
use crate::choice::Choice;
use crate::error::{Error, Result};
use crate::formats::{FormatStats, HostMatrix};
use crate::gpu::{grid_for, jit, Kernel};
use crate::matrix::{Csr, Precision, Scalar};
pub use crate::measure::median_min;
use crate::measure::ms_since;
use crate::operator::TransposePath;
use crate::reference::Check;
use crate::reorder::{self, Reordering};
pub use crate::Backend;
use product::Operands;
pub use product::Product;

/// The outcome of one run (a benchmark result, a PageRank run ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran, and the result is within the oracle's rounding bound.
    Ok,
    /// Ran, and the result is outside the rounding bound.
    Wrong,
    /// The format declined the matrix (see the error).
    Unsupported,
    /// A CUDA or other failure (see the error).
    Error,
}

impl Status {
    /// The status of a run that failed with `e`: a format that declines a matrix (or a
    /// spec it cannot take) is `Unsupported`, anything else an `Error`.
    pub fn of_error(e: &Error) -> Status {
        if matches!(e, Error::Format { .. } | Error::Unsupported(_)) {
            Status::Unsupported
        } else {
            Status::Error
        }
    }
    /// The lowercase name the reports use: "ok", "wrong", "unsupported", "error".
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Wrong => "wrong",
            Status::Unsupported => "unsupported",
            Status::Error => "error",
        }
    }
    /// The status as a table shows it: "ok", else in capitals with the first line of what
    /// went wrong (escaped: it cannot forge a line).
    pub fn cell(self, error: Option<&str>) -> String {
        match (self, error) {
            (Status::Ok, _) => "ok".to_string(),
            (st, Some(e)) => format!(
                "{} ({})",
                st.as_str().to_uppercase(),
                crate::error::printable_name(e.lines().next().unwrap_or(""))
            ),
            (st, None) => st.as_str().to_uppercase(),
        }
    }
    /// A wrong result or a failure to run (declining a matrix is neither).
    pub fn failed(self) -> bool {
        matches!(self, Status::Wrong | Status::Error)
    }
}

/// Rounds of back-to-back timing per result (their median is reported).
pub const BACK_TO_BACK_ROUNDS: usize = 3;

/// Most timed runs per result ([`Settings::reps`]): each run's time is kept for the median
/// (on the GPU with two events), and as many products are captured in one CUDA graph.
pub const MAX_REPS: usize = 1_000_000;
/// Most vectors in one block product of `spmv bench --rhs`.
pub const MAX_RHS: usize = 1024;
/// Most untimed runs before the timed ones ([`Settings::warmup`]).
pub const MAX_WARMUP: usize = 1_000_000;
/// Warm-up runs on the CPU at most: the first run (the checked one) already warms the caches,
/// and a CPU product is slow.
pub const CPU_WARMUP: usize = 3;

/// How to measure.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Untimed runs before the timed ones (at most [`CPU_WARMUP`] on the CPU:
    /// [`Settings::warmup_on`]).
    pub warmup: usize,
    /// Timed runs per result.
    pub reps: usize,
    /// The inputs may hold non-finite values (read with `allow_non_finite`): results are
    /// checked class for class on rows whose exact result is not finite, and no matrix is
    /// refused for lying outside the precision's range.
    pub allow_non_finite: bool,
    /// A symmetric permutation applied to every (square) matrix before its formats are built;
    /// the products still take and give x and y in the original order (crate::reorder).
    pub reorder: Reordering,
    /// With several devices (bench/distributed.rs): how the halo travels between parts.
    pub exchange: crate::distributed::Exchange,
    /// With several devices: the interior rows' product runs while the halo travels.
    pub overlap: bool,
    /// The product measured: `A·x` (the default), `Aᵀ·x`, or `A·X` for a block of vectors.
    pub product: Product,
}

impl Settings {
    /// Refuses counts that no run can honour: `reps` outside 1..=[`MAX_REPS`] (no median of no
    /// runs; a count that would size the kept times beyond memory), `warmup` above
    /// [`MAX_WARMUP`]. Every entry point of the benchmark checks this before it allocates.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_REPS).contains(&self.reps) {
            return Err(Error::Argument(format!(
                "reps = {}: the timed repetitions must be 1 to {MAX_REPS} (each one's time is kept for the median)",
                self.reps
            )));
        }
        if self.warmup > MAX_WARMUP {
            return Err(Error::Argument(format!(
                "warmup = {}: at most {MAX_WARMUP} warm-up runs",
                self.warmup
            )));
        }
        Ok(())
    }

    /// The warm-up runs that actually run on `backend` ("cpu" or "gpu", as
    /// [`Machine::backend`]): [`Settings::warmup`], at most [`CPU_WARMUP`] on the CPU.
    pub fn warmup_on(&self, backend: &str) -> usize {
        if backend == "cpu" {
            self.warmup.min(CPU_WARMUP)
        } else {
            self.warmup
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            warmup: 10,
            reps: 100,
            allow_non_finite: false,
            reorder: Reordering::None,
            exchange: Default::default(),
            overlap: true,
            product: Product::Forward,
        }
    }
}

/// The machine a report was measured on, and its copy roofline.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// "gpu" or "cpu".
    pub backend: String,
    /// The device's name (e.g. "NVIDIA H200"), or "CPU (n threads)".
    pub name: String,
    /// NVRTC architecture (e.g. "sm_90"); empty on the CPU.
    pub arch: String,
    /// Streaming multiprocessors; on the CPU, the thread count.
    pub multiprocessors: usize,
    /// L2 cache size in bytes; 0 on the CPU.
    pub l2_bytes: usize,
    /// Copy bandwidth (bytes read + written per second, in GB/s) measured in this run.
    pub copy_gbs: f64,
    /// Buffer size of that measurement, per side.
    pub copy_bytes: usize,
}

/// One matrix × format × precision. Its JSON is flat: the groups of figures below are
/// written as fields of the measurement itself (docs/bench.md).
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// The matrix's name: the file stem or the generator spec.
    pub matrix: String,
    /// The format's name with the parameters that differ from their defaults (its label).
    pub format: String,
    /// The canonical spec, every parameter spelled out.
    pub spec: String,
    /// The format `auto` chose (its label; the table shows `auto(chosen)`).
    pub chosen: Option<String>,
    /// Element type of the run.
    pub precision: Precision,
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Stored entries of the matrix.
    pub nnz: usize,
    /// "ok", "wrong" (outside the rounding bound), "unsupported" (the format declined the
    /// matrix, see `error`) or "error" (a CUDA or other failure, see `error`).
    pub status: Status,
    /// What failed, why the format declined, or how many rows were wrong; `None` when ok.
    pub error: Option<String>,
    /// The product measured: `A·x`, `Aᵀ·x`, `A·X k=8` (`,col`: column-major X and Y).
    pub product: String,
    /// Vectors per product (k of `A·X`; 1 otherwise): GFLOP/s and bytes count all of them.
    pub vectors: usize,
    /// What building the format cost.
    #[serde(flatten)]
    pub setup: Setup,
    /// With `Aᵀ·x`: how the product ran.
    #[serde(flatten)]
    pub transposed: Transposed,
    /// The format's device bytes (including any workspace).
    pub format_bytes: usize,
    /// Bytes of the format one product reads (padding skipped by the kernel not counted).
    pub bytes_read: usize,
    /// The product's times.
    #[serde(flatten)]
    pub time: Times,
    /// With `--devices`: the distributed matrix.
    #[serde(flatten)]
    pub parts: PartsFigures,
    /// What the times mean against the machine and the matrix's bound.
    #[serde(flatten)]
    pub rates: Rates,
    /// Largest relative error against the oracle over rows, scaled by `Σ|a_ij·x_j|`.
    pub max_rel_error: f64,
    /// Rows outside the rounding bound (k + 2)·u·Σ|a_ij·x_j|.
    pub failed_rows: usize,
    /// The format's statistics.
    pub stats: FormatStats,
}

/// What building a measurement's format cost, in milliseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Setup {
    /// Host time of the conversion from CSR.
    pub convert_ms: f64,
    /// Host-to-device upload (and preprocessing) time (GPU only).
    pub upload_ms: Option<f64>,
    /// Wall time of a conversion the format runs on the GPU during its upload (part of
    /// `upload_ms`): `csr5:convert=gpu`. The table's conv ms adds it.
    pub device_convert_ms: Option<f64>,
    /// The reordering the product ran under ("rcm", "degree"), or `None`.
    pub reorder: Option<String>,
    /// Host time of computing the permutation and P·A·Pᵀ (once per matrix, shared by its
    /// formats); not in `convert_ms`.
    pub reorder_ms: Option<f64>,
}

/// How a measurement's `Aᵀ·x` ran.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Transposed {
    /// The format of the copy of Aᵀ the product ran on (none where the format has its own
    /// transposed product); its bytes are in `format_bytes`.
    pub transposed_format: Option<String>,
    /// Through a copy: wall time of one product through the one-off path instead (Aᵀ
    /// transposed on the host, uploaded, multiplied and freed; the median of 3), in
    /// milliseconds: what a single transposed product costs without the copy.
    pub one_off_ms: Option<f64>,
}

/// A measurement's times of one product, in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Times {
    /// Median time of one product over `reps` timed runs.
    pub median_ms: f64,
    /// Fastest of those runs.
    pub min_ms: f64,
    /// Mean time per launch of `reps` launches queued back to back between one event pair
    /// (the median of [`BACK_TO_BACK_ROUNDS`] such rounds); on the CPU, the mean of the timed
    /// loop. Comparable with other codes' drivers, which time this way.
    pub back_to_back_ms: f64,
    /// The same `reps` products captured once as a CUDA graph and replayed (the median of
    /// [`BACK_TO_BACK_ROUNDS`] replays): back to back without the host's cost of issuing each
    /// launch, which sets `back_to_back_ms` on products of a few microseconds. `None` on the
    /// CPU and where the product cannot be captured (it synchronises or allocates).
    pub graph_ms: Option<f64>,
}

impl Default for Times {
    fn default() -> Self {
        Times { median_ms: f64::NAN, min_ms: f64::NAN, back_to_back_ms: f64::NAN, graph_ms: None }
    }
}

/// A measurement over several devices (`--devices`; bench/distributed.rs).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PartsFigures {
    /// The device of each part of the distributed matrix.
    pub devices: Option<Vec<usize>>,
    /// How the halo travels ("peer" or "nccl").
    pub exchange: Option<String>,
    /// Parts whose interior rows ran during the exchange (0 with `--no-overlap`;
    /// docs/scale.md).
    pub overlapping_parts: Option<usize>,
    /// Back-to-back mean of the halo exchange alone, in milliseconds.
    pub exchange_ms: Option<f64>,
    /// Bytes of x crossing between parts per product.
    pub halo_bytes: Option<usize>,
    /// The distributed setup (in `convert_ms`) phase by phase: time and host memory.
    pub setup_phases: Option<crate::distributed::Phases>,
}

/// A measurement's rates, from the median time.
#[derive(Clone, Debug, Serialize)]
pub struct Rates {
    /// The matrix's own bound (bench/bound.rs): back-to-back mean of streaming its columns and
    /// values of this format's width and gathering x (of Aᵀ for `Aᵀ·x`), in milliseconds (GPU
    /// only). For `A·X`, the byte bound instead: the matrix read once and every vector's x and
    /// y once, at the copy bandwidth.
    pub bound_ms: Option<f64>,
    /// `bound_ms / back_to_back_ms`: how close the format comes to that bound.
    pub bound_fraction: Option<f64>,
    /// 2·nnz / median time, in GFLOP/s.
    pub gflops: f64,
    /// (bytes read + x + y) / median time, in GB/s.
    pub effective_gbs: f64,
    /// effective_gbs / the machine's copy bandwidth.
    pub roofline_fraction: f64,
    /// Format bytes + x + y fit in the L2 cache: repeated runs measure the cache.
    pub l2_resident: bool,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            bound_ms: None,
            bound_fraction: None,
            gflops: f64::NAN,
            effective_gbs: f64::NAN,
            roofline_fraction: f64::NAN,
            l2_resident: false,
        }
    }
}

impl Measurement {
    fn new<T: Scalar>(matrix: &str, spec: &Choice, a: &Csr<T>, product: Product) -> Self {
        Measurement {
            matrix: matrix.to_string(),
            format: spec.label() + &product.label_suffix(),
            spec: spec.to_string(),
            chosen: None,
            precision: T::PRECISION,
            nrows: a.nrows(),
            ncols: a.ncols(),
            nnz: a.nnz(),
            status: Status::Error,
            error: None,
            product: product.name(),
            vectors: product.vectors(),
            setup: Setup::default(),
            transposed: Transposed::default(),
            format_bytes: 0,
            bytes_read: 0,
            time: Times::default(),
            parts: PartsFigures::default(),
            rates: Rates::default(),
            max_rel_error: f64::NAN,
            failed_rows: 0,
            stats: FormatStats::default(),
        }
    }
    /// Did this row find a wrong result or fail to run?
    pub fn failed(&self) -> bool {
        self.status.failed()
    }

    /// GFLOPS, effective GB/s, the fraction of the copy roofline of `devices` such machines
    /// and L2 residence, from the median time and the bytes read.
    fn rates<T: Scalar>(
        &mut self, a: &Csr<T>, product: Product, machine: &Machine, devices: usize,
    ) {
        self.rates_of::<T>((a.nrows(), a.ncols(), a.nnz()), product, machine, devices);
    }

    /// [`Measurement::rates`] of a matrix of `(rows, columns, entries)`.
    fn rates_of<T: Scalar>(
        &mut self, shape: (usize, usize, usize), product: Product, machine: &Machine,
        devices: usize,
    ) {
        let moved = self.bytes_moved::<T>(shape, product) as f64;
        self.rates.gflops =
            2.0 * (shape.2 * self.vectors) as f64 / (self.time.median_ms * 1e-3) / 1e9;
        self.rates.effective_gbs = moved / (self.time.median_ms * 1e-3) / 1e9;
        self.rates.roofline_fraction =
            self.rates.effective_gbs / (machine.copy_gbs * devices as f64);
        self.rates.l2_resident =
            machine.l2_bytes > 0 && moved <= (machine.l2_bytes * devices) as f64;
    }

    /// Bytes one product moves at least: the format's once, and each vector's x and y.
    fn bytes_moved<T: Scalar>(
        &self, (nrows, ncols, nnz): (usize, usize, usize), product: Product,
    ) -> usize {
        let (x_len, y_len) = product.lengths((nrows, ncols));
        // x bytes a product can touch: at most one per entry (a 1 x 10^9 matrix with one
        // entry reads one x value, not 8 GB).
        let x_touched = x_len.min(nnz);
        self.bytes_read + self.vectors * (y_len + x_touched) * std::mem::size_of::<T>()
    }
}

/// Benchmarks one matrix in every given format on `target`. `x` is [`test_vector`]; each
/// result is checked against the oracle after poisoning the output with NaN; `progress` sees
/// each result as it is measured.
pub fn run_matrix<T: Scalar>(
    target: &Target, name: &str, a: &Csr<T>, specs: &[Choice], settings: &Settings,
    machine: &Machine, mut progress: impl FnMut(&Measurement),
) -> Vec<Measurement> {
    let (operands, range_error) =
        match settings.validate().and_then(|()| prepare(name, a, settings)) {
            Ok(prepared) => prepared,
            Err(e) => return failed_all(name, a, specs, settings.product, &e, progress),
        };
    let run = MatrixRun { name, a, specs, settings, machine, operands, range_error };
    match target {
        Target::One(backend) => backend.run_matrix(run, &mut progress),
        Target::Parts(parts) => distributed::run_matrix(parts, run, &mut progress),
        Target::Ranks(place) => distributed::run_matrix_ranks(place, run, &mut progress),
    }
}

/// What every format's measurement of one matrix shares.
struct MatrixRun<'a, T> {
    name: &'a str,
    a: &'a Csr<T>,
    specs: &'a [Choice],
    settings: &'a Settings,
    machine: &'a Machine,
    /// The product's input and exact results, and why `a` lies outside T's range.
    operands: Operands<T>,
    range_error: Option<String>,
}

impl Backend {
    /// Measures this machine's copy bandwidth (read + write bytes per second) with a
    /// 16-byte vectorised copy kernel on the GPU, or a parallel memcpy on the CPU.
    pub fn machine(&self, settings: &Settings) -> Result<Machine> {
        settings.validate()?;
        match self {
            Backend::Gpu(gpu) => {
                let bytes = (1usize << 30).min(gpu.total_memory() / 8);
                let n16 = (bytes / 16) as u64;
                let src = gpu.alloc::<u8>(bytes)?;
                let mut dst = gpu.alloc::<u8>(bytes)?;
                let copy = Kernel::new(
                    gpu,
                    &jit::UTIL_MODULE,
                    "copy_16b",
                    grid_for(gpu.multiprocessors() as u64 * 2048, 256)?,
                )?;
                let mut times =
                    gpu.time(settings.warmup.max(3), settings.reps.clamp(10, 50), || {
                        // SAFETY: copy_16b(const uint4*, uint4*, u64 n16); both buffers hold n16·16 bytes.
                        unsafe {
                            copy.launch(gpu, |a| {
                                a.arg(&src).arg(&mut dst).arg(&n16);
                            })
                        }
                    })?;
                let (median, _) = median_min(&mut times);
                Ok(Machine {
                    backend: "gpu".into(),
                    name: gpu.name().to_string(),
                    arch: gpu.arch().to_string(),
                    multiprocessors: gpu.multiprocessors(),
                    l2_bytes: gpu.l2_bytes(),
                    copy_gbs: 2.0 * bytes as f64 / (median * 1e-3) / 1e9,
                    copy_bytes: bytes,
                })
            }
            Backend::Cpu => {
                let bytes = 256usize << 20;
                let src = vec![1u8; bytes];
                let mut dst = vec![0u8; bytes];
                let mut times: Vec<f64> = (0..settings.reps.clamp(5, 20))
                    .map(|_| {
                        let t = Instant::now();
                        dst.par_chunks_mut(1 << 20)
                            .zip(src.par_chunks(1 << 20))
                            .for_each(|(d, s)| d.copy_from_slice(s));
                        ms_since(t)
                    })
                    .collect();
                std::hint::black_box(&dst);
                let (median, _) = median_min(&mut times);
                Ok(Machine {
                    backend: "cpu".into(),
                    name: format!("CPU ({} threads)", rayon::current_num_threads()),
                    arch: String::new(),
                    multiprocessors: rayon::current_num_threads(),
                    l2_bytes: 0,
                    copy_gbs: 2.0 * bytes as f64 / (median * 1e-3) / 1e9,
                    copy_bytes: bytes,
                })
            }
        }
    }

    /// One matrix in every format on this backend (see [`run_matrix`]).
    fn run_matrix<T: Scalar>(
        &self, run: MatrixRun<'_, T>, progress: &mut impl FnMut(&Measurement),
    ) -> Vec<Measurement> {
        let MatrixRun { name, a, specs, settings, machine, ref operands, ref range_error } = run;
        let product = settings.product;
        // The permutation and P·A·Pᵀ, once for all formats (an error is every format's).
        let t = Instant::now();
        let reordered = match settings.reorder {
            Reordering::None => None,
            method => {
                Some(reorder::permutation(a, method).and_then(|p| Ok((p.apply(a)?, Arc::new(p)))))
            }
        };
        let reorder_ms = ms_since(t);
        let mut bounds = match self {
            Backend::Gpu(gpu) => Some(bound::Bounds::<T>::new(gpu, settings)),
            Backend::Cpu => None,
        };
        // The bound is of the matrix the products run on.
        let product_matrix = match &reordered {
            Some(Ok((permuted, _))) => permuted,
            _ => a,
        };
        let mut out = Vec::with_capacity(specs.len());
        for spec in specs {
            let mut m = Measurement::new(name, spec, a, product);
            m.format = label(spec, settings.reorder) + &product.label_suffix();
            if reordered.is_some() {
                m.setup.reorder = Some(settings.reorder.name().to_string());
                m.setup.reorder_ms = Some(reorder_ms);
            }
            let t = Instant::now();
            if let Some(why) = &range_error {
                m.status = Status::Unsupported;
                m.error = Some(format!("the matrix does not fit {}: {why}", T::SUFFIX));
                progress(&m);
                out.push(m);
                continue;
            }
            let built = match &reordered {
                // tune measures on this backend (its time is the row's conv ms).
                None => spec.build_on(self, a),
                Some(_) if product != Product::Forward => Err(Error::Unsupported(format!(
                    "--reorder measures A·x only, not {}",
                    product.name()
                ))),
                Some(_) if matches!(spec, Choice::Tune(_)) => Err(Error::Unsupported(
                    "format tune: not combined with --reorder yet (auto is)".into(),
                )),
                Some(Ok((permuted, perm))) => {
                    reorder::build_reordered(spec, permuted, perm, settings.reorder)
                }
                // Errors are not Clone: each format gets the message (a non-square matrix).
                Some(Err(Error::Unsupported(why))) => Err(Error::Unsupported(why.clone())),
                Some(Err(e)) => Err(Error::Unsupported(format!("reordering failed: {e}"))),
            };
            match built {
                Err(e) => {
                    m.status = Status::of_error(&e);
                    m.error = Some(e.to_string());
                }
                Ok(format) => {
                    m.setup.convert_ms = ms_since(t);
                    m.chosen = format.chosen();
                    m.stats = format.stats();
                    if let Err(e) = measure(self, &format, &run, &mut m) {
                        m.status = Status::Error;
                        m.error = Some(e.to_string());
                    } else {
                        m.rates(a, product, machine, 1);
                        if let Some(bounds) = &mut bounds {
                            let width = m
                                .stats
                                .extra
                                .iter()
                                .find(|(k, _)| k == "value_bytes")
                                .map_or(std::mem::size_of::<T>(), |(_, v)| *v as usize);
                            m.rates.bound_ms = match product {
                                Product::Forward => bounds.ms(product_matrix, &operands.x, width),
                                Product::Transpose => operands
                                    .transposed
                                    .as_ref()
                                    .and_then(|at| bounds.ms(at, &operands.x, width)),
                                Product::Block(_) => Some(
                                    m.bytes_moved::<T>((a.nrows(), a.ncols(), a.nnz()), product)
                                        as f64
                                        / machine.copy_gbs
                                        * 1e-6,
                                ),
                            };
                            m.rates.bound_fraction =
                                m.rates.bound_ms.map(|b| b / m.time.back_to_back_ms);
                        }
                    }
                }
            }
            progress(&m);
            out.push(m);
        }
        out
    }
}

/// The test vector x, the oracle, and why the matrix lies outside `T`'s range (unless
/// non-finite values are allowed). x, the oracle's result and bounds (f64, three per row) and
/// y are refused up front when the host cannot hold them, rather than aborting in the allocator.
fn prepare<T: Scalar>(
    name: &str, a: &Csr<T>, settings: &Settings,
) -> Result<(Operands<T>, Option<String>)> {
    let size = std::mem::size_of::<T>() as u64;
    let product = settings.product;
    let (x_len, y_len) = product.lengths((a.nrows(), a.ncols()));
    let k = product.vectors() as u64;
    // x, and per output row the oracle's three f64 and y twice; Aᵀ's copy for the transpose.
    let mut needed = k.saturating_mul(x_len as u64 * size + y_len as u64 * (24 + 2 * size));
    if product == Product::Transpose {
        needed = needed.saturating_add(a.nnz() as u64 * (4 + size) + a.ncols() as u64 * 8);
    }
    crate::error::check_host_memory(
        || format!("the vectors of {name} ({} x {}) for {}", a.nrows(), a.ncols(), product.name()),
        needed,
    )?;
    let operands = Operands::new(a, product)?;
    let range_error = if settings.allow_non_finite { None } else { operands.range_error() };
    Ok((operands, range_error))
}

/// Every format's row failed (or declined) with `e`.
fn failed_all<T: Scalar>(
    name: &str, a: &Csr<T>, specs: &[Choice], product: Product, e: &Error,
    mut progress: impl FnMut(&Measurement),
) -> Vec<Measurement> {
    specs
        .iter()
        .map(|spec| {
            let mut m = Measurement::new(name, spec, a, product);
            m.status = Status::of_error(e);
            m.error = Some(e.to_string());
            progress(&m);
            m
        })
        .collect()
}

/// A result's format label: the spec's, with `+rcm` or `+degree` when the matrix was reordered.
pub fn label(spec: &Choice, reorder: Reordering) -> String {
    match reorder {
        Reordering::None => spec.label(),
        method => format!("{}+{method}", spec.label()),
    }
}

fn record_check(m: &mut Measurement, check: Check) {
    m.max_rel_error = check.max_rel_error;
    m.failed_rows = check.failed_rows;
    m.status = if check.passed() { Status::Ok } else { Status::Wrong };
    if !check.passed() {
        let worst = check.worst_row.map_or(String::new(), |r| format!("; worst row {r}"));
        m.error = Some(format!("{} row(s) outside the rounding bound{worst}", check.failed_rows));
    }
}

/// Runs `format` once into a NaN-poisoned `y`, checks it against the oracle, then times
/// `settings.reps` runs (CUDA events on the GPU, wall clock on the CPU).
fn measure<T: Scalar>(
    backend: &Backend, format: &HostMatrix<T>, run: &MatrixRun<'_, T>, m: &mut Measurement,
) -> Result<()> {
    let Backend::Gpu(gpu) = backend else {
        return measure_cpu(format, run, m);
    };
    let (operands, settings) = (&run.operands, run.settings);
    let product = settings.product;
    let t = Instant::now();
    let device = format.upload(gpu)?;
    gpu.synchronize()?;
    m.setup.upload_ms = Some(ms_since(t));
    m.setup.device_convert_ms = device.conversion_ms();
    m.bytes_read = device.bytes_read();
    let x_dev = gpu.upload(&operands.x)?;
    let mut y_dev = gpu.alloc::<T>(operands.y_len)?;
    gpu.fill(&mut y_dev, T::nan())?;
    // The first product builds what it keeps (Aᵀ's copy, a library's plan): checked, untimed.
    let run_once = |y: &mut CudaSlice<T>| product.run_device(&device, &x_dev, y);
    let y_dev = &mut y_dev;
    run_once(y_dev)?;
    let y = gpu.download(y_dev)?;
    record_check(m, operands.check(&y));
    let copies = device.transposed_bytes().unwrap_or(0) + device.block_copy_bytes().unwrap_or(0);
    m.format_bytes = device.device_bytes() + copies;
    m.transposed.transposed_format = device.transposed_format().map(str::to_string);
    let mut times = gpu.time(settings.warmup, settings.reps, || run_once(y_dev))?;
    (m.time.median_ms, m.time.min_ms) = median_min(&mut times);
    let mut means =
        gpu.time_back_to_back(BACK_TO_BACK_ROUNDS, settings.reps, || run_once(y_dev))?;
    (m.time.back_to_back_ms, _) = median_min(&mut means);
    let graph = gpu.time_graph(BACK_TO_BACK_ROUNDS, settings.reps, || run_once(y_dev))?;
    m.time.graph_ms = graph.map(|mut means| median_min(&mut means).0);
    if m.transposed.transposed_format.is_some() {
        let kept = device.transpose_path();
        device.set_transpose_path(TransposePath::OneOff);
        let mut times = (0..3)
            .map(|_| {
                let t = Instant::now();
                run_once(y_dev)?;
                gpu.synchronize()?;
                Ok(ms_since(t))
            })
            .collect::<Result<Vec<f64>>>()?;
        device.set_transpose_path(kept);
        m.transposed.one_off_ms = Some(median_min(&mut times).0);
        let check = operands.check(&gpu.download(y_dev)?);
        if !check.passed() {
            record_check(m, check); // the one-off path's result, wrong where the copy's was not
        }
    }
    Ok(())
}

fn measure_cpu<T: Scalar>(
    format: &HostMatrix<T>, run: &MatrixRun<'_, T>, m: &mut Measurement,
) -> Result<()> {
    let (operands, settings) = (&run.operands, run.settings);
    let (product, x) = (settings.product, &operands.x);
    m.format_bytes = m.stats.bytes;
    m.bytes_read = format.bytes_read();
    let mut y = vec![T::nan(); operands.y_len];
    product.run_host(format, x, &mut y)?;
    record_check(m, operands.check(&y));
    for _ in 0..settings.warmup_on("cpu") {
        product.run_host(format, x, &mut y)?;
    }
    let mut times = Vec::with_capacity(settings.reps);
    for _ in 0..settings.reps {
        let t = Instant::now();
        product.run_host(format, x, &mut y)?;
        times.push(ms_since(t));
    }
    m.time.back_to_back_ms = times.iter().sum::<f64>() / times.len().max(1) as f64;
    (m.time.median_ms, m.time.min_ms) = median_min(&mut times);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_machine() -> Machine {
        Backend::Cpu.machine(&Settings { reps: 5, ..Settings::default() }).unwrap()
    }

    #[test]
    fn counts_beyond_what_a_run_can_keep_are_errors_not_aborts() {
        let a = crate::io::gen::generate("poisson2d:n=4").unwrap();
        let specs = [Choice::parse("csr-scalar").unwrap()];
        let machine = cpu_machine();
        for (reps, warmup) in [(1usize << 40, 0), (usize::MAX, 0), (0, 0), (3, usize::MAX)] {
            let settings = Settings { reps, warmup, ..Settings::default() };
            let e = Backend::Cpu.machine(&settings).unwrap_err().to_string();
            assert!(e.contains("reps = ") || e.contains("warmup = "), "{e}");
            let cpu = Target::One(Backend::Cpu);
            let rows = run_matrix(&cpu, "m", &a, &specs, &settings, &machine, |_| {});
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].status, Status::Error, "reps {reps}, warmup {warmup}");
            assert_eq!(rows[0].error.as_deref(), Some(e.as_str()));
        }
    }

    #[test]
    fn the_compact_table_keeps_to_100_columns_and_the_wide_one_to_whole_names() {
        let a = crate::io::gen::generate("poisson2d:n=4").unwrap();
        let specs = crate::choice::parse_list("csr-vector:values=auto,cols=auto,ell,auto").unwrap();
        let settings = Settings { reps: 2, warmup: 0, ..Settings::default() };
        let long = "a-matrix-with-a-name-far-longer-than-its-column.mtx";
        let cpu = Target::One(Backend::Cpu);
        let mut report = report::Report::new(cpu_machine(), &settings);
        report.results = run_matrix(&cpu, long, &a, &specs, &settings, &cpu_machine(), |_| {});
        // A declined matrix: its reason is long.
        report.results[1].status = Status::Unsupported;
        report.results[1].error = Some("x".repeat(300));
        let names = || report.results.iter().map(|m| m.matrix.as_str());
        let formats = || report.results.iter().map(|m| m.format.as_str());
        let compact = report::TableLayout::new(false, names(), formats());
        let mut table = report.table_header(&compact);
        for m in &report.results {
            table += &compact.row(m);
        }
        table += &report.summary_table("csr-scalar");
        for line in table.lines() {
            assert!(
                line.chars().count() <= report::COMPACT_WIDTH,
                "{} chars: {line}",
                line.chars().count()
            );
        }
        assert!(
            table.contains("a-matrix-w…olumn.mtx")
                && table.contains("UNSUPPORTED\n")
                && table.contains("(no baseline)"),
            "{table}"
        );
        let wide = report::TableLayout::new(true, names(), formats());
        let row = wide.row(&report.results[0]);
        assert!(row.contains(long) && row.contains("csr-vector:values=auto,cols=auto"), "{row}");
        assert!(report.table_header(&wide).contains("graph us"));
    }

    #[test]
    fn the_report_says_the_warmups_that_ran() {
        let settings = Settings { warmup: 100_000, reps: 5, ..Settings::default() };
        let report = report::Report::new(cpu_machine(), &settings);
        assert_eq!(report.warmup, CPU_WARMUP);
        assert!(report.note.as_deref().unwrap().contains("not the 100000 asked"));
        let header = report.table_header(&report::TableLayout::new(false, [], []));
        assert!(header.contains("after 3 warm-up"), "{header}");
        // Asked for no more than the cap: no note.
        let settings = Settings { warmup: 2, reps: 5, ..Settings::default() };
        let report = report::Report::new(cpu_machine(), &settings);
        assert_eq!((report.warmup, report.note), (2, None));
    }
}
