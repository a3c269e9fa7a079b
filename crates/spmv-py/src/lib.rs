//! The raw layer of the Python package `spmv` (module `spmv._spmv`). The package
//! (`python/spmv/__init__.py`) checks and converts every array — dtype, contiguity, length —
//! and passes its address; this layer reads or writes exactly the lengths it is given while
//! the package holds the arrays. Every error becomes a Python exception with the Rust error's
//! message (`ValueError` for bad input, `OSError` for files, `MemoryError`, `RuntimeError` for
//! the GPU); the GIL is released during conversions, products, solves and benchmarks.

use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{result as cuda, sys as cuda_sys, CudaEvent, CudaSlice};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use spmv::bench::{run_matrix_distributed, Settings as BenchSettings};
use spmv::distributed::{DistributedMatrix, Exchange};
use spmv::formats::{self, FormatHandle};
use spmv::gpu::Gpu;
use spmv::solve::{self, KrylovSettings, Outcome, Solution};
use spmv::{Backend, Csr, Error, Operator, Precision, Scalar};

fn py_err(e: Error) -> PyErr {
    let text = e.to_string();
    match e {
        Error::Io { .. } => PyOSError::new_err(text),
        Error::OutOfMemory { .. } => PyMemoryError::new_err(text),
        Error::NoGpu(_) | Error::Cuda { .. } => PyRuntimeError::new_err(text),
        _ => PyValueError::new_err(text),
    }
}

fn value_err(text: impl Into<String>) -> PyErr {
    PyValueError::new_err(text.into())
}

/// The process's GPU (one context for the process, shared with CuPy and PyTorch: the
/// device's primary context), or why there is none.
fn gpu() -> Result<Arc<Gpu>, String> {
    static GPU: OnceLock<Result<Arc<Gpu>, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::detect().map_err(|e| e.to_string())).clone()
}

fn backend(device: &str) -> PyResult<Backend> {
    match device {
        "cpu" => Ok(Backend::Cpu),
        "gpu" => {
            gpu().map(Backend::Gpu).map_err(|e| PyRuntimeError::new_err(format!("no GPU: {e}")))
        }
        "auto" => Ok(gpu().map(Backend::Gpu).unwrap_or(Backend::Cpu)),
        other => {
            Err(value_err(format!("device must be \"auto\", \"gpu\" or \"cpu\", not {other:?}")))
        }
    }
}

/// One handle per device ordinal for the whole process (device 0 is [`gpu`]'s), repeated
/// where an ordinal repeats: what a distributed matrix takes.
fn gpus(ordinals: &[usize]) -> PyResult<Vec<Arc<Gpu>>> {
    static OPEN: Mutex<Vec<(usize, Arc<Gpu>)>> = Mutex::new(Vec::new());
    if ordinals.is_empty() {
        return Err(value_err("devices: give a count of at least 1 or a list of device ordinals"));
    }
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    ordinals
        .iter()
        .map(|&d| {
            if let Some((_, g)) = open.iter().find(|(o, _)| *o == d) {
                return Ok(g.clone());
            }
            let g = if d == 0 { gpu() } else { Gpu::new(d).map_err(|e| e.to_string()) }
                .map_err(|e| PyRuntimeError::new_err(format!("devices: device {d}: {e}")))?;
            open.push((d, g.clone()));
            Ok(g)
        })
        .collect()
}

/// `a` split over `devices` in `format`, its halo moved by `exchange` ("peer" or "nccl").
fn distribute<T: Scalar>(
    a: &Csr<f64>,
    devices: &[usize],
    format: &str,
    exchange: &str,
) -> PyResult<DistributedMatrix<T>> {
    let gpus = gpus(devices)?;
    let spec = formats::parse_spec(format).map_err(py_err)?;
    let exchange: Exchange = exchange.parse().map_err(py_err)?;
    let mut d = DistributedMatrix::new(&a.cast::<T>(), &gpus, &spec).map_err(py_err)?;
    d.set_exchange(exchange).map_err(py_err)?;
    Ok(d)
}

/// (True, "NVIDIA H200 (sm_90)") or (False, why there is no usable GPU).
#[pyfunction]
fn gpu_available() -> (bool, String) {
    match gpu() {
        Ok(g) => (true, format!("{} ({})", g.name(), g.arch())),
        Err(e) => (false, e),
    }
}

/// The generated matrices of `spmv bench`'s default set (GPU sizes).
#[pyfunction]
fn default_specs() -> Vec<&'static str> {
    spmv::io::inputs::DEFAULT_SPECS.to_vec()
}

/// A format's (name, description, deterministic, [(key, default, doc)]).
type FormatRow = (String, String, bool, Vec<(String, String, String)>);

/// Every format.
#[pyfunction(name = "formats")]
fn format_list() -> Vec<FormatRow> {
    formats::registry::<f64>()
        .iter()
        .map(|f| {
            let params = f
                .params
                .iter()
                .map(|p| (p.key.to_string(), p.default.to_string(), p.doc.to_string()))
                .collect();
            (f.name.to_string(), f.description.to_string(), f.deterministic, params)
        })
        .collect()
}

/// A host slice of `len` elements at `address` (0 for an empty one).
///
/// # Safety
/// `address` is the start of a live, aligned array of at least `len` elements of T that
/// nothing else writes during the call (the package passes its arrays' addresses).
unsafe fn host_slice<'a, T>(address: usize, len: usize) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(address as *const T, len)
    }
}

/// As [`host_slice`], writable.
///
/// # Safety
/// As for [`host_slice`], and nothing else reads or writes the array during the call.
unsafe fn host_slice_mut<'a, T>(address: usize, len: usize) -> &'a mut [T] {
    if len == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(address as *mut T, len)
    }
}

/// A matrix in CSR on the host (f64).
#[pyclass(frozen, name = "Csr", module = "spmv._spmv")]
struct PyCsr {
    csr: Arc<Csr<f64>>,
}

#[pymethods]
impl PyCsr {
    /// From canonical CSR arrays given by address: indptr (int64, nrows + 1 entries),
    /// indices (uint32, nnz) and data (float64, nnz); every invariant is checked.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        nrows: usize,
        ncols: usize,
        indptr: usize,
        indices: usize,
        data: usize,
        nnz: usize,
    ) -> PyResult<Self> {
        // SAFETY: the package passes live contiguous arrays of these dtypes and lengths.
        let (rp, ci, v) = unsafe {
            (
                host_slice::<i64>(indptr, nrows + 1),
                host_slice::<u32>(indices, nnz),
                host_slice::<f64>(data, nnz),
            )
        };
        let csr = py.allow_threads(|| {
            let row_ptr: Vec<usize> = rp
                .iter()
                .map(|&p| {
                    usize::try_from(p)
                        .map_err(|_| Error::InvalidMatrix(format!("negative row pointer {p}")))
                })
                .collect::<spmv::Result<_>>()?;
            Csr::new_checked(nrows, ncols, row_ptr, ci.to_vec(), v.to_vec())
        });
        Ok(PyCsr { csr: Arc::new(csr.map_err(py_err)?) })
    }

    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.csr.nrows(), self.csr.ncols())
    }

    #[getter]
    fn nnz(&self) -> usize {
        self.csr.nnz()
    }

    /// The three arrays as bytes: indptr (int64), indices (int32), data (float64).
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
        let rp: Vec<u8> =
            self.csr.row_ptr().iter().flat_map(|&p| (p as i64).to_ne_bytes()).collect();
        let ci: Vec<u8> =
            self.csr.col_idx().iter().flat_map(|&c| (c as i32).to_ne_bytes()).collect();
        let v: Vec<u8> = self.csr.values().iter().flat_map(|&x| x.to_ne_bytes()).collect();
        (PyBytes::new(py, &rp), PyBytes::new(py, &ci), PyBytes::new(py, &v))
    }
}

/// Reads a Matrix Market file (.mtx or .mtx.gz).
#[pyfunction]
fn read(py: Python<'_>, path: std::path::PathBuf) -> PyResult<PyCsr> {
    let csr = py.allow_threads(|| spmv::io::read_matrix_market::<f64>(&path)).map_err(py_err)?;
    Ok(PyCsr { csr: Arc::new(csr) })
}

/// Generates a matrix from a spec (docs/generators.md), e.g. "poisson3d:n=64".
#[pyfunction]
fn generate(py: Python<'_>, spec: &str) -> PyResult<PyCsr> {
    let csr = py.allow_threads(|| spmv::io::gen::generate(spec)).map_err(py_err)?;
    Ok(PyCsr { csr: Arc::new(csr) })
}

/// A matrix in one format and precision, on the GPU or the CPU.
enum AnyOperator {
    F64(Operator<f64>),
    F32(Operator<f32>),
    F16(Operator<spmv::f16>),
}

/// Runs `$body` with `$op` bound to the operator of whatever precision.
macro_rules! with_op {
    ($any:expr, $op:ident => $body:expr) => {
        match $any {
            AnyOperator::F64($op) => $body,
            AnyOperator::F32($op) => $body,
            AnyOperator::F16($op) => $body,
        }
    };
}

/// A CUDA device array the caller owns, seen as a `CudaSlice` for one call and never freed
/// here (leaked back on drop).
struct Borrowed<T>(ManuallyDrop<CudaSlice<T>>);

impl<T> Borrowed<T> {
    /// # Safety
    /// `address` is a device array of at least `len` elements of T in this process's
    /// primary context, alive for the borrow.
    unsafe fn new(gpu: &Gpu, address: usize, len: usize) -> Self {
        Borrowed(ManuallyDrop::new(
            gpu.stream().upgrade_device_ptr(address as cuda_sys::CUdeviceptr, len),
        ))
    }
}

impl<T> Drop for Borrowed<T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; leak() gives the pointer back without freeing it.
        unsafe { ManuallyDrop::take(&mut self.0) }.leak();
    }
}

/// Orders `launch` after the work already queued on the caller's stream and the caller's
/// later work after it, with two events (reused from call to call; nothing waits on the
/// host); without a stream, waits for the result on the host.
fn ordered(
    gpu: &Gpu,
    events: &Mutex<Option<[CudaEvent; 2]>>,
    caller: Option<usize>,
    launch: impl FnOnce() -> spmv::Result<()>,
) -> spmv::Result<()> {
    let mut events = events.lock().unwrap_or_else(|p| p.into_inner());
    let [before, after] = match &mut *events {
        Some(e) => e,
        None => events.insert([gpu.context().new_event(None)?, gpu.context().new_event(None)?]),
    };
    if let Some(stream) = caller {
        // SAFETY: `stream` is the caller's stream handle (from __cuda_array_interface__: a
        // CUstream, or 1/2 for the legacy/per-thread default stream) in the same context.
        unsafe { cuda::event::record(before.cu_event(), stream as cuda_sys::CUstream) }?;
        gpu.stream().wait(before)?;
    }
    launch()?;
    match caller {
        Some(stream) => {
            after.record(gpu.stream())?;
            // SAFETY: as above.
            unsafe {
                cuda::stream::wait_event(
                    stream as cuda_sys::CUstream,
                    after.cu_event(),
                    cuda_sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            }?;
            Ok(())
        }
        None => gpu.synchronize(),
    }
}

#[pyclass(frozen, name = "Operator", module = "spmv._spmv")]
struct PyOperator {
    op: AnyOperator,
    precision: Precision,
    csr: Arc<Csr<f64>>,
    backend: String,
    /// The events that order products with the caller's stream (`ordered`).
    events: Mutex<Option<[CudaEvent; 2]>>,
}

#[pymethods]
impl PyOperator {
    #[getter]
    fn shape(&self) -> (usize, usize) {
        with_op!(&self.op, op => (op.nrows(), op.ncols()))
    }
    #[getter]
    fn nnz(&self) -> usize {
        self.csr.nnz()
    }
    /// The format's label (the spec with the parameters that differ from their defaults),
    /// with `auto`'s choice as `auto(chosen)`.
    #[getter]
    fn format(&self) -> String {
        with_op!(&self.op, op => match op.chosen() {
            Some(chosen) => format!("{}({chosen})", op.info().spec.label()),
            None => op.info().spec.label(),
        })
    }
    #[getter]
    fn precision(&self) -> String {
        self.precision.to_string()
    }
    #[getter]
    fn on_gpu(&self) -> bool {
        with_op!(&self.op, op => op.on_gpu())
    }
    #[getter]
    fn backend(&self) -> String {
        self.backend.clone()
    }
    /// The format's storage figures as a dict (bytes, padding, ...).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = with_op!(&self.op, op => serde_json::to_string(&op.stats()))
            .map_err(|e| value_err(e.to_string()))?;
        py.import("json")?.call_method1("loads", (json,))
    }

    /// y = α·A·x + β·y with host arrays of this precision given by address and length.
    #[allow(clippy::too_many_arguments)]
    fn apply_host(
        &self,
        py: Python<'_>,
        x: usize,
        nx: usize,
        y: usize,
        ny: usize,
        alpha: f64,
        beta: f64,
    ) -> PyResult<()> {
        py.allow_threads(|| {
            with_op!(&self.op, op => {
                // SAFETY: the package passes live contiguous arrays of the operator's dtype.
                let (xs, ys) = unsafe { (host_slice(x, nx), host_slice_mut(y, ny)) };
                op.apply(Scalar::from_f64(alpha), xs, Scalar::from_f64(beta), ys)
            })
        })
        .map_err(py_err)
    }

    /// y = α·A·x + β·y with CUDA arrays (CuPy, PyTorch) given by address and length, ordered
    /// after the caller's `stream` and before its later work (None: done on return).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (x, nx, y, ny, alpha, beta, stream=None))]
    fn apply_device(
        &self,
        py: Python<'_>,
        x: usize,
        nx: usize,
        y: usize,
        ny: usize,
        alpha: f64,
        beta: f64,
        stream: Option<usize>,
    ) -> PyResult<()> {
        py.allow_threads(|| {
            with_op!(&self.op, op => {
                let Some(device) = op.device_matrix() else {
                    return Err(Error::Unsupported("this matrix lives on the CPU: pass NumPy arrays, or build it with device=\"gpu\"".into()));
                };
                let gpu = device.gpu();
                // SAFETY: the package passes the addresses of the caller's CUDA arrays of
                // the operator's dtype, contiguous, with these lengths, alive during the call.
                let (xs, mut ys) = unsafe { (Borrowed::new(gpu, x, nx), Borrowed::new(gpu, y, ny)) };
                ordered(gpu, &self.events, stream, || device.apply(Scalar::from_f64(alpha), &xs.0, Scalar::from_f64(beta), &mut ys.0))
            })
        })
        .map_err(py_err)
    }
}

/// Converts `a` to `format` in `precision` (f64, f32, f16) and puts it on `device`
/// ("auto": the GPU when there is one).
#[pyfunction]
fn to_device(
    py: Python<'_>,
    a: &PyCsr,
    format: &str,
    precision: &str,
    device: &str,
) -> PyResult<PyOperator> {
    let precision: Precision = precision.parse().map_err(|e: String| value_err(e))?;
    let backend = backend(device)?;
    let csr = a.csr.clone();
    let op = py
        .allow_threads(|| -> spmv::Result<AnyOperator> {
            let spec = formats::parse_spec(format)?;
            Ok(match precision {
                Precision::F64 => AnyOperator::F64(Operator::new(&csr, &backend, &spec)?),
                Precision::F32 => AnyOperator::F32(Operator::new(&csr.cast(), &backend, &spec)?),
                Precision::F16 => AnyOperator::F16(Operator::new(&csr.cast(), &backend, &spec)?),
            })
        })
        .map_err(py_err)?;
    Ok(PyOperator { op, precision, csr, backend: backend.describe(), events: Mutex::new(None) })
}

fn solution_dict<'py, T>(py: Python<'py>, s: &Solution<T>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (outcome, why) = match &s.outcome {
        Outcome::Converged => ("converged", None),
        Outcome::NotConverged => ("not_converged", None),
        Outcome::Breakdown(why) => ("breakdown", Some(why.clone())),
        Outcome::NonFinite => ("non_finite", None),
        Outcome::InaccurateResidual => ("inaccurate_residual", None),
    };
    d.set_item("outcome", outcome)?;
    d.set_item("breakdown", why)?;
    d.set_item("converged", s.converged())?;
    d.set_item("iterations", s.iterations)?;
    d.set_item("residual", s.residual)?;
    d.set_item("true_residual", s.true_residual)?;
    d.set_item("ms", s.ms)?;
    d.set_item("iteration_ms", s.iteration_ms)?;
    d.set_item("graph", s.graph)?;
    Ok(d)
}

fn solve_typed<T: Scalar>(
    op: &Operator<T>,
    a: &Csr<f64>,
    method: &str,
    jacobi: bool,
    b: &[T],
    s: &KrylovSettings,
) -> spmv::Result<Solution<T>> {
    // The inverse diagonal from the f64 matrix, rounded to T once (no copy of the matrix).
    let m_inv: Option<Vec<T>> =
        if jacobi { Some(solve::jacobi(a)?.into_iter().map(T::from_f64).collect()) } else { None };
    let m_inv = m_inv.as_deref();
    match (op.device_matrix(), op.host_matrix(), method) {
        (Some(d), _, "cg") => solve::cg_gpu(d, b, m_inv, s),
        (Some(d), _, _) => solve::bicgstab_gpu(d, b, m_inv, s),
        (None, Some(h), "cg") => solve::cg_host(h, b, m_inv, s),
        (None, Some(h), _) => solve::bicgstab_host(h, b, m_inv, s),
        (None, None, _) => unreachable!("an operator is on the GPU or the CPU"),
    }
}

/// CG or BiCGSTAB for A·x = b with host arrays b (in) and x (out) of the operator's
/// precision given by address; returns the result's figures.
#[pyfunction(name = "solve")]
#[allow(clippy::too_many_arguments)]
fn solve_system<'py>(
    py: Python<'py>,
    op: &PyOperator,
    method: &str,
    b: usize,
    x: usize,
    n: usize,
    jacobi: bool,
    tol: f64,
    max_iter: usize,
    check_every: usize,
    graph: bool,
) -> PyResult<Bound<'py, PyDict>> {
    if method != "cg" && method != "bicgstab" {
        return Err(value_err(format!("method must be \"cg\" or \"bicgstab\", not {method:?}")));
    }
    let settings = KrylovSettings { tol, max_iter, check_every, graph };
    macro_rules! run {
        ($op:expr) => {{
            let solution = py
                .allow_threads(|| {
                    // SAFETY: the package passes live contiguous arrays of the operator's dtype.
                    let (bs, xs) = unsafe { (host_slice(b, n), host_slice_mut(x, n)) };
                    let s = solve_typed($op, &op.csr, method, jacobi, bs, &settings)?;
                    xs.copy_from_slice(&s.x);
                    Ok(s)
                })
                .map_err(py_err)?;
            solution_dict(py, &solution)
        }};
    }
    match &op.op {
        AnyOperator::F64(o) => run!(o),
        AnyOperator::F32(o) => run!(o),
        AnyOperator::F16(_) => {
            Err(py_err(Error::Unsupported("the solvers run in f64 and f32".into())))
        }
    }
}

/// CG for A·x = b with A split over `devices` (parts in `format`, the halo moved by
/// `exchange`), in `precision` ("f64" or "f32"); host arrays b (in) and x (out) of that
/// precision given by address; returns the result's figures.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn cg_distributed<'py>(
    py: Python<'py>,
    a: &PyCsr,
    b: usize,
    x: usize,
    format: &str,
    precision: &str,
    devices: Vec<usize>,
    exchange: &str,
    tol: f64,
    max_iter: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let n = a.csr.nrows();
    let settings = KrylovSettings { tol, max_iter, ..KrylovSettings::default() };
    macro_rules! run {
        ($t:ty) => {{
            let d = distribute::<$t>(&a.csr, &devices, format, exchange)?;
            let solution = py
                .allow_threads(|| {
                    // SAFETY: the package passes live contiguous arrays of n entries of $t.
                    let (bs, xs) = unsafe { (host_slice::<$t>(b, n), host_slice_mut::<$t>(x, n)) };
                    let s = spmv::distributed::cg(&d, bs, &settings)?;
                    xs.copy_from_slice(&s.x);
                    Ok(s)
                })
                .map_err(py_err)?;
            let dict = solution_dict(py, &solution)?;
            dict.set_item("part_formats", d.part_formats())?;
            dict.set_item("halo_bytes", d.halo_bytes())?;
            Ok(dict)
        }};
    }
    match precision {
        "f64" => run!(f64),
        "f32" => run!(f32),
        other => Err(value_err(format!("the distributed CG runs in f64 or f32, not {other:?}"))),
    }
}

/// PageRank of the graph whose adjacency matrix is `a` (row = source), in `format` on
/// `device`; ranks (float64, n, mean 1) written at `ranks`; returns the run's figures.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn pagerank<'py>(
    py: Python<'py>,
    a: &PyCsr,
    ranks: usize,
    format: &str,
    device: &str,
    alpha: f64,
    tol: f64,
    max_iter: usize,
    weighted: bool,
    devices: Option<Vec<usize>>,
    exchange: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let backend = backend(device)?;
    let gpus = devices.as_deref().map(gpus).transpose()?;
    let exchange: Exchange = exchange.parse().map_err(py_err)?;
    let settings = solve::Settings { alpha, tol, max_iter, check_every: 1 };
    let csr = a.csr.clone();
    let n = csr.nrows();
    let result = py
        .allow_threads(|| -> spmv::Result<solve::PageRank<f64>> {
            let weights =
                if weighted { solve::EdgeWeights::Values } else { solve::EdgeWeights::Pattern };
            let t = solve::Transition::new(&csr, weights)?;
            let spec = formats::parse_spec(format)?;
            if let Some(gpus) = &gpus {
                let mut d = DistributedMatrix::new(t.matrix(), gpus, &spec)?;
                d.set_exchange(exchange)?;
                let pr = spmv::distributed::pagerank(&d, &t, &settings)?;
                // SAFETY: the package passes a live float64 array of n elements.
                unsafe { host_slice_mut::<f64>(ranks, n) }.copy_from_slice(&pr.ranks);
                return Ok(pr);
            }
            let host = formats::build(&spec, t.matrix())?;
            let pr = match &backend {
                Backend::Gpu(gpu) => solve::pagerank_gpu(&host.upload(gpu)?, &t, &settings)?,
                Backend::Cpu => solve::pagerank_host(&host, &t, &settings)?,
            };
            // SAFETY: the package passes a live float64 array of n elements.
            unsafe { host_slice_mut::<f64>(ranks, n) }.copy_from_slice(&pr.ranks);
            Ok(pr)
        })
        .map_err(py_err)?;
    let d = PyDict::new(py);
    d.set_item("iterations", result.iterations)?;
    d.set_item("converged", result.converged)?;
    d.set_item("residual", result.residual)?;
    d.set_item("ms", result.total_ms)?;
    let described = match &devices {
        Some(list) => format!("{} GPU parts on devices {list:?}, halo by {exchange}", list.len()),
        None => backend.describe(),
    };
    d.set_item("backend", described)?;
    Ok(d)
}

/// `spmv bench` on the matrices given (with their names) in the formats and precisions
/// listed; returns the report as JSON (machine, settings, one result per matrix × format ×
/// precision).
#[pyfunction(name = "bench")]
#[allow(clippy::too_many_arguments)]
fn bench_matrices(
    py: Python<'_>,
    matrices: Vec<PyRef<'_, PyCsr>>,
    names: Vec<String>,
    formats_list: &str,
    precisions: &str,
    device: &str,
    reps: usize,
    warmup: usize,
    devices: Option<Vec<usize>>,
    exchange: &str,
) -> PyResult<String> {
    if reps == 0 {
        return Err(value_err("reps must be at least 1"));
    }
    if names.len() != matrices.len() {
        return Err(value_err(format!("{} names for {} matrices", names.len(), matrices.len())));
    }
    let backend = backend(device)?;
    let precisions: Vec<Precision> = precisions
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().map_err(|e: String| value_err(e)))
        .collect::<PyResult<_>>()?;
    let specs = formats::parse_spec_list(formats_list).map_err(py_err)?;
    if specs.is_empty() || precisions.is_empty() {
        return Err(value_err("no format or no precision given"));
    }
    let csrs: Vec<Arc<Csr<f64>>> = matrices.iter().map(|m| m.csr.clone()).collect();
    let exchange: Exchange = exchange.parse().map_err(py_err)?;
    let gpus = devices.as_deref().map(gpus).transpose()?;
    py.allow_threads(|| -> spmv::Result<String> {
        let settings = BenchSettings { warmup, reps, exchange, ..BenchSettings::default() };
        let machine = backend.machine(&settings)?;
        let mut report = spmv::bench::report::Report::new(machine, &settings);
        let mut quiet = |_: &spmv::bench::Measurement| {};
        for (a, name) in csrs.iter().zip(&names) {
            for &p in &precisions {
                let results = match (p, &gpus, &devices) {
                    (Precision::F64, Some(g), Some(o)) => run_matrix_distributed(
                        g,
                        o,
                        name,
                        &**a,
                        &specs,
                        &settings,
                        &report.machine,
                        &mut quiet,
                    ),
                    (Precision::F32, Some(g), Some(o)) => run_matrix_distributed(
                        g,
                        o,
                        name,
                        &a.cast::<f32>(),
                        &specs,
                        &settings,
                        &report.machine,
                        &mut quiet,
                    ),
                    (Precision::F16, Some(g), Some(o)) => run_matrix_distributed(
                        g,
                        o,
                        name,
                        &a.cast::<spmv::f16>(),
                        &specs,
                        &settings,
                        &report.machine,
                        &mut quiet,
                    ),
                    (Precision::F64, ..) => {
                        backend.run_matrix(name, a, &specs, &settings, &report.machine, &mut quiet)
                    }
                    (Precision::F32, ..) => backend.run_matrix(
                        name,
                        &a.cast::<f32>(),
                        &specs,
                        &settings,
                        &report.machine,
                        &mut quiet,
                    ),
                    (Precision::F16, ..) => backend.run_matrix(
                        name,
                        &a.cast::<spmv::f16>(),
                        &specs,
                        &settings,
                        &report.machine,
                        &mut quiet,
                    ),
                };
                report.results.extend(results);
            }
        }
        serde_json::to_string(&report).map_err(|e| Error::Unsupported(e.to_string()))
    })
    .map_err(py_err)
}

#[pymodule]
fn _spmv(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCsr>()?;
    m.add_class::<PyOperator>()?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(format_list, m)?)?;
    m.add_function(wrap_pyfunction!(default_specs, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(to_device, m)?)?;
    m.add_function(wrap_pyfunction!(solve_system, m)?)?;
    m.add_function(wrap_pyfunction!(pagerank, m)?)?;
    m.add_function(wrap_pyfunction!(cg_distributed, m)?)?;
    m.add_function(wrap_pyfunction!(bench_matrices, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
