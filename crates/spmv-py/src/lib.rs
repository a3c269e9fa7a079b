//! The raw layer of the Python package `spmv` (module `spmv._spmv`). Arrays come as Python
//! objects, never as addresses: host arrays through the buffer protocol ([`HostBuf`]), CUDA
//! arrays through `__cuda_array_interface__` checked against the driver ([`CudaArray`]); their
//! dtype, dimension, contiguity, alignment, length and overlap are checked here, so no Python
//! input can make this layer touch memory an array does not describe. Every error becomes a Python exception with the Rust error's
//! message (`ValueError` for bad input, `OSError` for files, `MemoryError`, `RuntimeError` for
//! the GPU); the GIL is released during conversions, products, solves and benchmarks.

use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result as cuda, sys as cuda_sys, CudaEvent, CudaSlice};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use spmv::app::solve::{solve_choosing, MethodChoice, Preconditioner, Solved};
use spmv::app::{self, AnyOperator, Named, Target};
use spmv::bench::Settings as BenchSettings;
use spmv::choice::Choice;
use spmv::distributed::Exchange;
use spmv::formats::{self, FormatHandle};
use spmv::gpu::Gpu;
use spmv::solve::{self, KrylovSettings};
use spmv::{Backend, Block, Csr, DeviceMatrix, Error, Operator, Precision, Scalar, TransposePath};

fn py_err(e: Error) -> PyErr {
    let text = e.to_string();
    match e {
        Error::Io { .. } => PyOSError::new_err(text),
        Error::OutOfMemory { .. } => PyMemoryError::new_err(text),
        Error::NoGpu(_) | Error::Cuda { .. } | Error::Launch(_) | Error::Picture(_) => {
            PyRuntimeError::new_err(text)
        }
        _ => PyValueError::new_err(text),
    }
}

fn value_err(text: impl Into<String>) -> PyErr {
    PyValueError::new_err(text.into())
}

/// The backend `device` ("auto", "gpu", "cpu") names (spmv::app: one handle per device for
/// the process, the primary context CuPy and PyTorch share).
fn backend(device: &str) -> PyResult<Backend> {
    let place: spmv::app::Place = device.parse().map_err(py_err)?;
    let (backend, _why_not_gpu) =
        spmv::app::backend(place).map_err(|e| PyRuntimeError::new_err(format!("no GPU: {e}")))?;
    Ok(backend)
}

/// Where products run: `device` ("auto", "gpu", "cpu"), or with `devices` one part per listed
/// GPU, the halo moved by `exchange` ("peer" or "nccl").
fn target(device: &str, devices: Option<&[usize]>, exchange: &str) -> PyResult<Target> {
    let exchange: Exchange = exchange.parse().map_err(py_err)?;
    let Some(devices) = devices else { return Ok(Target::One(backend(device)?)) };
    if device == "cpu" {
        return Err(value_err("devices needs a GPU, and device is \"cpu\""));
    }
    Target::parts(devices, exchange).map_err(|e| match e {
        Error::Argument(text) => value_err(text),
        other => PyRuntimeError::new_err(other.to_string()),
    })
}

/// (True, "NVIDIA H200 (sm_90)") or (False, why there is no usable GPU).
#[pyfunction]
fn gpu_available() -> (bool, String) {
    match spmv::app::gpu(0) {
        Ok(g) => (true, format!("{} ({})", g.name(), g.arch())),
        Err(e) => (false, e.to_string()),
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

/// The buffer protocol's C API. PyO3 leaves it out of abi3 builds below Python 3.11, where
/// it joined the stable ABI with the layout and functions it has had since Python 3.3 (PEP
/// 3118), which every interpreter this wheel loads in (≥ 3.9) exports: declared here.
mod buffer {
    use std::os::raw::{c_char, c_int, c_void};

    use pyo3::ffi::{PyObject, Py_ssize_t};

    #[repr(C)]
    pub struct Py_buffer {
        pub buf: *mut c_void,
        pub obj: *mut PyObject,
        pub len: Py_ssize_t,
        pub itemsize: Py_ssize_t,
        pub readonly: c_int,
        pub ndim: c_int,
        pub format: *mut c_char,
        pub shape: *mut Py_ssize_t,
        pub strides: *mut Py_ssize_t,
        pub suboffsets: *mut Py_ssize_t,
        pub internal: *mut c_void,
    }

    impl Py_buffer {
        pub fn new() -> Self {
            // SAFETY: all fields are integers or raw pointers, for which zero is valid.
            unsafe { std::mem::zeroed() }
        }
    }

    pub const PYBUF_WRITABLE: c_int = 0x0001;
    pub const PYBUF_FORMAT: c_int = 0x0004;
    pub const PYBUF_C_CONTIGUOUS: c_int = 0x0020 | 0x0010 | 0x0008;

    extern "C" {
        pub fn PyObject_GetBuffer(obj: *mut PyObject, view: *mut Py_buffer, flags: c_int) -> c_int;
        pub fn PyBuffer_Release(view: *mut Py_buffer);
    }
}

/// An element type a host buffer may hold: the struct-module codes it is exported with
/// (native order) and its NumPy name.
trait Element: Copy + Send + Sync + 'static {
    const CODES: &'static [u8];
    const NAME: &'static str;
}

macro_rules! element {
    ($($t:ty: $codes:literal $name:literal),*) => {$(
        impl Element for $t {
            const CODES: &'static [u8] = $codes;
            const NAME: &'static str = $name;
        }
    )*};
}
element!(f64: b"d" "float64", f32: b"f" "float32", spmv::f16: b"e" "float16",
    i64: b"lq" "int64", i32: b"i" "int32", u8: b"Bbc" "bytes");

/// The NumPy name of a struct-module format code ("d" → "float64").
fn format_name(format: &str) -> String {
    let name = match format.trim_start_matches(['@', '=', '<']) {
        "d" => "float64",
        "f" => "float32",
        "e" => "float16",
        "l" | "q" => "int64",
        "i" => "int32",
        "h" => "int16",
        "b" => "int8",
        "L" | "Q" => "uint64",
        "I" => "uint32",
        "H" => "uint16",
        "B" => "uint8",
        "?" => "bool",
        _ => return format!("items of format {format:?}"),
    };
    name.to_string()
}

/// A 1-D C-contiguous array of T borrowed from a Python object through the buffer protocol
/// (NumPy arrays, memoryviews, ...): the exporter keeps the memory alive and in place until
/// the buffer is released on drop. Dtype, dimension, contiguity, alignment and (for `y`)
/// writability are checked here, so no Python input reaches memory it does not describe.
struct HostBuf<T: Element> {
    view: Box<buffer::Py_buffer>,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Element> HostBuf<T> {
    fn get(obj: &Bound<'_, PyAny>, name: &str, writable: bool) -> PyResult<Self> {
        use buffer as ffi;
        let mut view = Box::new(ffi::Py_buffer::new());
        let flags = ffi::PYBUF_C_CONTIGUOUS
            | ffi::PYBUF_FORMAT
            | if writable { ffi::PYBUF_WRITABLE } else { 0 };
        // SAFETY: `obj` is alive (the GIL is held) and `view` outlives the call; on success
        // the view is released exactly once, by Drop.
        if unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *view, flags) } != 0 {
            // The exporter's reason (not contiguous, read-only: ValueError; no buffer at all:
            // TypeError) keeps its type, with the argument named.
            let cause = PyErr::fetch(obj.py());
            let what = if writable { "a writable contiguous" } else { "a contiguous" };
            let text = format!("{name} must be {what} array of {}: {cause}", T::NAME);
            return Err(if cause.is_instance_of::<PyTypeError>(obj.py()) {
                PyTypeError::new_err(text)
            } else {
                value_err(text)
            });
        }
        let mut buf = HostBuf { view, len: 0, _t: std::marker::PhantomData };
        let v = &*buf.view;
        if v.ndim != 1 {
            return Err(value_err(format!("{name} must be 1-D, not {}-D", v.ndim)));
        }
        let format = if v.format.is_null() {
            "B".to_string()
        } else {
            // SAFETY: a non-null format is a NUL-terminated string owned by the view.
            unsafe { std::ffi::CStr::from_ptr(v.format) }.to_string_lossy().into_owned()
        };
        let code = format.trim_start_matches(['@', '=', '<']).as_bytes();
        let native = cfg!(target_endian = "little") || !format.starts_with('<');
        if !(native && code.len() == 1 && T::CODES.contains(&code[0]))
            || v.itemsize as usize != std::mem::size_of::<T>()
        {
            return Err(PyTypeError::new_err(format!(
                "{name} holds {} but {} is needed",
                format_name(&format),
                T::NAME
            )));
        }
        if v.len > 0 && !(v.buf as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(value_err(format!("{name} is not aligned to its {}", T::NAME)));
        }
        buf.len = v.len as usize / std::mem::size_of::<T>();
        Ok(buf)
    }

    /// [`HostBuf::get`] with a length the caller needs.
    fn get_len(obj: &Bound<'_, PyAny>, name: &str, writable: bool, len: usize) -> PyResult<Self> {
        let buf = Self::get(obj, name, writable)?;
        if buf.len != len {
            return Err(value_err(format!("{name} has {} entries, {len} are needed", buf.len)));
        }
        Ok(buf)
    }

    fn as_slice(&self) -> &[T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: a C-contiguous buffer of `len` aligned items of T (checked in `get`),
        // kept alive and in place by the exporter until it is released.
        unsafe { std::slice::from_raw_parts(self.view.buf as *const T, self.len) }
    }

    /// The items, writable. The caller makes sure no other slice of these bytes is alive
    /// ([`HostBuf::bytes`] and [`spmv::overlap`]).
    fn as_mut_slice(&mut self) -> &mut [T] {
        assert!(self.view.readonly == 0, "a buffer taken read-only");
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in `as_slice`, and the buffer was taken writable.
        unsafe { std::slice::from_raw_parts_mut(self.view.buf as *mut T, self.len) }
    }

    /// The bytes the buffer spans (for overlap checks).
    fn bytes(&self) -> std::ops::Range<u64> {
        let start = self.view.buf as u64;
        start..start + (self.len * std::mem::size_of::<T>()) as u64
    }
}

impl<T: Element> Drop for HostBuf<T> {
    fn drop(&mut self) {
        // SAFETY: the view was filled by PyObject_GetBuffer and is released once; the GIL is
        // taken (a no-op where it is held, which is everywhere a HostBuf lives: it is !Send).
        Python::with_gil(|_| unsafe { buffer::PyBuffer_Release(&mut *self.view) });
    }
}

/// Refuses an input array that shares memory with an output one (the raw layer's callers
/// never pass such; a product copies its `x` instead, in `apply`).
fn disjoint(a: std::ops::Range<u64>, b: std::ops::Range<u64>, what: &str) -> PyResult<()> {
    if spmv::overlap(a, b) {
        return Err(value_err(format!("{what} share memory: pass separate arrays")));
    }
    Ok(())
}

/// Integer indices as int32 or int64 (what scipy holds), borrowed without a copy.
enum Ints {
    I32(HostBuf<i32>),
    I64(HostBuf<i64>),
}

impl Ints {
    fn get(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        match HostBuf::<i32>::get(obj, name, false) {
            Ok(b) => Ok(Ints::I32(b)),
            Err(_) => HostBuf::<i64>::get(obj, name, false).map(Ints::I64).map_err(|_| {
                PyTypeError::new_err(format!("{name} must be a contiguous int32 or int64 array"))
            }),
        }
    }
    fn view(&self) -> IntView<'_> {
        match self {
            Ints::I32(b) => IntView::I32(b.as_slice()),
            Ints::I64(b) => IntView::I64(b.as_slice()),
        }
    }
}

/// The items of [`Ints`] (which stays on the thread holding the GIL).
enum IntView<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl IntView<'_> {
    fn len(&self) -> usize {
        match self {
            IntView::I32(s) => s.len(),
            IntView::I64(s) => s.len(),
        }
    }
    /// The entries as `U`, each in `0..bound`; the first that is not is an error naming
    /// `name[k]` and its value (a negative index is never taken modulo anything).
    fn checked<U: TryFrom<i64> + Send>(&self, name: &str, bound: u64) -> spmv::Result<Vec<U>> {
        fn go<I: Copy + Into<i64> + Sync, U: TryFrom<i64> + Send>(
            s: &[I], name: &str, bound: u64,
        ) -> spmv::Result<Vec<U>> {
            use rayon::prelude::*;
            s.par_iter()
                .enumerate()
                .map(|(k, &v)| {
                    let v: i64 = v.into();
                    match U::try_from(v) {
                        Ok(u) if v >= 0 && (v as u64) < bound => Ok(u),
                        _ => Err(Error::InvalidMatrix(format!(
                            "{name}[{k}] = {v} is outside 0..{bound}"
                        ))),
                    }
                })
                .collect()
        }
        match self {
            IntView::I32(s) => go(s, name, bound),
            IntView::I64(s) => go(s, name, bound),
        }
    }
}

/// A matrix in CSR on the host (f64).
#[pyclass(frozen, name = "Csr", module = "spmv._spmv")]
struct PyCsr {
    csr: Arc<Csr<f64>>,
}

#[pymethods]
impl PyCsr {
    /// From canonical CSR arrays (anything with the buffer protocol): indptr (int32 or
    /// int64, nrows + 1 entries), indices (int32 or int64, nnz) and data (float64, nnz, finite,
    /// as the reader requires); every index and invariant is checked.
    #[staticmethod]
    fn from_arrays(
        py: Python<'_>, nrows: usize, ncols: usize, indptr: &Bound<'_, PyAny>,
        indices: &Bound<'_, PyAny>, data: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        if ncols > u32::MAX as usize + 1 {
            return Err(value_err(format!(
                "{ncols} columns do not fit spmv's 32-bit column indices (at most 2^32)"
            )));
        }
        let (rp_buf, ci_buf, v) = (
            Ints::get(indptr, "indptr")?,
            Ints::get(indices, "indices")?,
            HostBuf::<f64>::get(data, "data", false)?,
        );
        let (rp, ci) = (rp_buf.view(), ci_buf.view());
        if Some(rp.len()) != nrows.checked_add(1) {
            return Err(value_err(format!(
                "indptr has {} entries, nrows + 1 = {} are needed",
                rp.len(),
                nrows as u128 + 1
            )));
        }
        if ci.len() != v.len {
            return Err(value_err(format!("{} indices but {} values", ci.len(), v.len)));
        }
        let values = v.as_slice();
        let csr = py.allow_threads(|| {
            let row_ptr: Vec<usize> = rp.checked("indptr", values.len() as u64 + 1)?;
            let col_idx: Vec<u32> = ci.checked("indices", ncols as u64)?;
            if let Some(k) = values.iter().position(|x| !x.is_finite()) {
                return Err(Error::InvalidMatrix(format!(
                    "data[{k}] = {} (column {}) is not finite",
                    values[k], col_idx[k]
                )));
            }
            Csr::new_checked(nrows, ncols, row_ptr, col_idx, values.to_vec())
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

    /// The three arrays as bytes: indptr (int64), indices (int32, or int64 when a column
    /// index does not fit int32: scipy's indices are signed), data (float64).
    fn to_bytes<'py>(
        &self, py: Python<'py>,
    ) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
        let rp: Vec<u8> =
            self.csr.row_ptr().iter().flat_map(|&p| (p as i64).to_ne_bytes()).collect();
        let cols = self.csr.col_idx().iter();
        let ci: Vec<u8> = if self.csr.ncols() > i32::MAX as usize + 1 {
            cols.flat_map(|&c| i64::from(c).to_ne_bytes()).collect()
        } else {
            cols.flat_map(|&c| (c as i32).to_ne_bytes()).collect()
        };
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

/// Reads a Matrix Market text (plain or gzipped) held in a bytes-like object.
#[pyfunction]
fn read_bytes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyCsr> {
    let buf = HostBuf::<u8>::get(data, "the file's contents", false)?;
    let bytes = buf.as_slice();
    let csr =
        py.allow_threads(|| spmv::io::read_matrix_market_bytes::<f64>(bytes)).map_err(py_err)?;
    Ok(PyCsr { csr: Arc::new(csr) })
}

/// Generates a matrix from a spec (docs/generators.md), e.g. "poisson3d:n=64".
#[pyfunction]
fn generate(py: Python<'_>, spec: &str) -> PyResult<PyCsr> {
    let csr = py.allow_threads(|| spmv::io::gen::generate(spec)).map_err(py_err)?;
    Ok(PyCsr { csr: Arc::new(csr) })
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

impl<T> Drop for Borrowed<T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; leak() gives the pointer back without freeing it.
        unsafe { ManuallyDrop::take(&mut self.0) }.leak();
    }
}

/// A caller's CUDA array read from its `__cuda_array_interface__` and checked: 1-D, the
/// operator's dtype, contiguous, the length the matrix needs, writable where written, no
/// mask, and its bytes inside one allocation on the operator's device (asked of the driver,
/// so a made-up address is a `ValueError`, not a crash).
struct CudaArray {
    ptr: u64,
    len: usize,
    item: usize,
    stream: Option<usize>,
}

fn dtype_name(typestr: &str) -> &str {
    match typestr {
        "<f8" => "float64",
        "<f4" => "float32",
        "<f2" => "float16",
        other => other,
    }
}

impl CudaArray {
    fn get(
        obj: &Bound<'_, PyAny>, name: &str, typestr: &str, writable: bool, len: usize, gpu: &Gpu,
    ) -> PyResult<Self> {
        let bad = |what: String| value_err(format!("{name}: {what}"));
        let cai = obj.getattr("__cuda_array_interface__")?;
        let cai = cai.downcast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!("{name}.__cuda_array_interface__ is not a dict"))
        })?;
        let field = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            Ok(cai.get_item(key)?.filter(|v| !v.is_none()))
        };
        let malformed = |key: &str| bad(format!("malformed __cuda_array_interface__[{key:?}]"));
        let shape: Vec<i64> = field("shape")?
            .ok_or_else(|| malformed("shape"))?
            .extract()
            .map_err(|_| malformed("shape"))?;
        if shape.len() != 1 {
            return Err(value_err(format!("{name} must be 1-D, not of shape {shape:?}")));
        }
        let ts: String = field("typestr")?
            .ok_or_else(|| malformed("typestr"))?
            .extract()
            .map_err(|_| malformed("typestr"))?;
        if ts != typestr {
            return Err(PyTypeError::new_err(format!(
                "{name} holds {} but this operator computes in {}",
                dtype_name(&ts),
                dtype_name(typestr)
            )));
        }
        if shape[0] < 0 || shape[0] as u64 != len as u64 {
            return Err(value_err(format!(
                "{name} has {} entries, the matrix needs {len}",
                shape[0]
            )));
        }
        let item = typestr[2..].parse::<usize>().expect("a float typestr");
        let (ptr, readonly): (u64, bool) = field("data")?
            .ok_or_else(|| malformed("data"))?
            .extract()
            .map_err(|_| malformed("data"))?;
        if writable && readonly {
            return Err(value_err(format!("{name} is read-only")));
        }
        if let Some(strides) = field("strides")? {
            let strides: Vec<i64> = strides.extract().map_err(|_| malformed("strides"))?;
            if len > 1 && strides != [item as i64] {
                return Err(value_err(format!("{name} must be contiguous (strides {strides:?})")));
            }
        }
        if field("mask")?.is_some() {
            return Err(bad("masked arrays are not supported".into()));
        }
        let stream = match field("stream")? {
            None => None,
            Some(s) => match s.extract::<usize>() {
                Ok(0) | Err(_) => return Err(malformed("stream")),
                Ok(s) => Some(s),
            },
        };
        let bytes = (len as u64) * item as u64;
        if len > 0 {
            check_device_memory(gpu, ptr, bytes).map_err(bad)?;
        }
        Ok(CudaArray { ptr, len, item, stream })
    }

    fn bytes(&self) -> std::ops::Range<u64> {
        self.ptr..self.ptr + (self.len * self.item) as u64
    }

    /// # Safety
    /// The array was checked by [`CudaArray::get`] against `gpu` and T is its element type;
    /// its owner keeps it alive for the borrow.
    unsafe fn borrow<T>(&self, gpu: &Gpu) -> Borrowed<T> {
        Borrowed(ManuallyDrop::new(
            gpu.stream().upgrade_device_ptr(self.ptr as cuda_sys::CUdeviceptr, self.len),
        ))
    }
}

/// Whether `bytes` bytes from `ptr` lie in one device allocation on `gpu`'s device, as the
/// driver records it: one cuPointerGetAttributes call per array and product (it looks the
/// address up, never dereferences it; an address it does not know reads as memory type 0).
fn check_device_memory(gpu: &Gpu, ptr: u64, bytes: u64) -> Result<(), String> {
    use cuda_sys::CUpointer_attribute as A;
    gpu.context().bind_to_thread().map_err(|e| e.to_string())?;
    let not_device = || format!("address {ptr:#x} is not device memory of this CUDA context");
    let (mut kind, mut ordinal, mut start, mut size) = (0u32, -1i32, 0u64, 0usize);
    let mut attributes = [
        A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        A::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut values: [*mut std::ffi::c_void; 4] = [
        &mut kind as *mut u32 as *mut _,
        &mut ordinal as *mut i32 as *mut _,
        &mut start as *mut u64 as *mut _,
        &mut size as *mut usize as *mut _,
    ];
    // SAFETY: each value points to a variable of the size its attribute writes (an int, an
    // int, a CUdeviceptr, a size_t); the address is only looked up.
    let r = unsafe {
        cuda_sys::cuPointerGetAttributes(4, attributes.as_mut_ptr(), values.as_mut_ptr(), ptr)
    };
    let device_kinds = [
        cuda_sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32,
        cuda_sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED as u32,
    ];
    if r != cuda_sys::CUresult::CUDA_SUCCESS || !device_kinds.contains(&kind) {
        return Err(not_device());
    }
    if ordinal as i64 != gpu.context().ordinal() as i64 {
        return Err(format!(
            "the array is on device {ordinal}, the operator on device {}",
            gpu.context().ordinal()
        ));
    }
    let end = ptr.checked_add(bytes);
    if ptr < start || end.is_none_or(|e| e > start + size as u64) {
        return Err(format!(
            "{bytes} bytes at {ptr:#x} run past the end of their allocation ({size} bytes at {start:#x})"
        ));
    }
    Ok(())
}

/// Orders `launch` after the work already queued on the caller's stream and the caller's
/// later work after it, with two events (reused from call to call; nothing waits on the
/// host); without a stream, waits for the result on the host.
fn ordered(
    gpu: &Gpu, events: &Mutex<Option<[CudaEvent; 2]>>, caller: Option<usize>,
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

    /// How Aᵀ products run on the GPU where the format has no transposed kernel of its own:
    /// "auto", "copy" or "one-off" (spmv::TransposePath).
    #[getter]
    fn transpose_path(&self) -> String {
        with_op!(&self.op, op => op.device_matrix().map_or(TransposePath::Auto, |d| d.transpose_path()))
            .to_string()
    }
    /// Sets it (GPU operators only: a CPU operator keeps Aᵀ in CSR).
    fn set_transpose_path(&self, path: &str) -> PyResult<()> {
        let path: TransposePath = path.parse().map_err(py_err)?;
        with_op!(&self.op, op => match op.device_matrix() {
            Some(d) => {
                d.set_transpose_path(path);
                Ok(())
            }
            None => Err(value_err("the transposed-product path is a GPU operator's: a CPU operator keeps Aᵀ in CSR")),
        })
    }

    /// y = α·op(A)·x + β·y. `transpose`: op(A) = Aᵀ. `k`: x and y hold blocks of k vectors,
    /// column-major when `col_major` (F order), else row-major (C order); None: one vector
    /// each (a block comes flattened: x and y are 1-D). An `x` that shares memory with `y` is
    /// copied first, so the product is that of the `x` given (as NumPy does for an `out=` that
    /// overlaps an input).
    ///
    /// `cuda` false: host arrays of this precision (the buffer protocol: NumPy, C-contiguous).
    /// `cuda` true: CUDA arrays (CuPy, PyTorch: `__cuda_array_interface__`, checked against
    /// the driver), ordered after the caller's stream (y's, else x's) and before its later
    /// work (no stream: done on return).
    #[pyo3(signature = (x, y, alpha, beta, transpose=false, k=None, col_major=false, cuda=false))]
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, alpha: f64, beta: f64,
        transpose: bool, k: Option<usize>, col_major: bool, cuda: bool,
    ) -> PyResult<()> {
        let product = Product::new(transpose, k, col_major)?;
        if !cuda {
            return with_op!(&self.op, op => apply_host_typed(py, op, x, y, alpha, beta, product));
        }
        with_op!(&self.op, op => {
            let Some(device) = op.device_matrix() else {
                return Err(value_err("this operator lives on the CPU: pass NumPy arrays, or build it with device=\"gpu\""));
            };
            let gpu = device.gpu();
            let (x_len, y_len) = product.lengths(op.nrows(), op.ncols())?;
            let xa = CudaArray::get(x, "x", &scalar_typestr(op), false, x_len, gpu)?;
            let ya = CudaArray::get(y, "y", &scalar_typestr(op), true, y_len, gpu)?;
            let stream = ya.stream.or(xa.stream);
            let aliased = spmv::overlap(xa.bytes(), ya.bytes());
            py.allow_threads(|| {
                // SAFETY: both arrays were checked against the driver (device memory of this
                // context covering their lengths) and are kept alive by the caller's objects,
                // which the GIL-holding caller of this method holds.
                let (xs, mut ys) = unsafe { (xa.borrow(gpu), ya.borrow(gpu)) };
                ordered(gpu, &self.events, stream, || {
                    let (a, b) = (Scalar::from_f64(alpha), Scalar::from_f64(beta));
                    if aliased {
                        let mut copy = gpu.alloc(xa.len)?;
                        gpu.stream().memcpy_dtod(&*xs.0, &mut copy)?;
                        device_product(device, a, &copy, b, &mut ys.0, product)
                    } else {
                        device_product(device, a, &xs.0, b, &mut ys.0, product)
                    }
                })
            })
            .map_err(py_err)
        })
    }
}

/// Which product a raw call asks for: A or Aᵀ, on one vector or on a block of vectors.
#[derive(Clone, Copy, Debug)]
struct Product {
    transpose: bool,
    block: Option<Block>,
}

impl Product {
    fn new(transpose: bool, k: Option<usize>, col_major: bool) -> PyResult<Self> {
        let block = match k {
            None => None,
            Some(0) => return Err(value_err("k: a block of 0 vectors (k must be at least 1)")),
            Some(k) => Some(if col_major { Block::columns(k) } else { Block::rows(k) }),
        };
        Ok(Product { transpose, block })
    }

    /// The entries of x and y for an `nrows` x `ncols` matrix.
    fn lengths(&self, nrows: usize, ncols: usize) -> PyResult<(usize, usize)> {
        let (x, y) = if self.transpose { (nrows, ncols) } else { (ncols, nrows) };
        let k = self.block.map_or(1, |b| b.k);
        match (x.checked_mul(k), y.checked_mul(k)) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => Err(value_err(format!("k: {k} vectors of {x} and {y} entries overflow"))),
        }
    }
}

/// `product` through `op`'s four products, which the host `Operator` (on slices) and the
/// device handle (on device vectors) both have with the same arguments.
macro_rules! run_product {
    ($op:expr, $alpha:expr, $x:expr, $beta:expr, $y:expr, $product:expr) => {
        match ($product.transpose, $product.block) {
            (false, None) => $op.apply($alpha, $x, $beta, $y),
            (true, None) => $op.apply_transpose($alpha, $x, $beta, $y),
            (false, Some(block)) => $op.apply_block($alpha, $x, $beta, $y, block),
            (true, Some(block)) => $op.apply_transpose_block($alpha, $x, $beta, $y, block),
        }
    };
}

/// The product on host vectors (the library's products).
fn host_product<T: Scalar>(
    op: &Operator<T>, alpha: T, x: &[T], beta: T, y: &mut [T], product: Product,
) -> spmv::Result<()> {
    run_product!(op, alpha, x, beta, y, product)
}

/// The product on device vectors (the device handle's products).
fn device_product<T: Scalar>(
    d: &DeviceMatrix<T>, alpha: T, x: &CudaSlice<T>, beta: T, y: &mut CudaSlice<T>,
    product: Product,
) -> spmv::Result<()> {
    run_product!(d, alpha, x, beta, y, product)
}

/// The NumPy typestr of an operator's element type ("<f8", "<f4", "<f2").
fn scalar_typestr<T: Scalar>(_: &Operator<T>) -> String {
    format!("<f{}", std::mem::size_of::<T>())
}

fn apply_host_typed<T: Scalar + Element>(
    py: Python<'_>, op: &Operator<T>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, alpha: f64,
    beta: f64, product: Product,
) -> PyResult<()> {
    let (x_len, y_len) = product.lengths(op.nrows(), op.ncols())?;
    let xb = HostBuf::<T>::get_len(x, "x", false, x_len)?;
    let mut yb = HostBuf::<T>::get_len(y, "y", true, y_len)?;
    // The same bytes may not be seen as `&[T]` and `&mut [T]` at once: an overlapping x is
    // copied (and its buffer's slice dropped) before y is borrowed writable.
    let copy: Option<Vec<T>> =
        spmv::overlap(xb.bytes(), yb.bytes()).then(|| xb.as_slice().to_vec());
    let ys = yb.as_mut_slice();
    let xs = copy.as_deref().unwrap_or_else(|| xb.as_slice());
    py.allow_threads(|| host_product(op, T::from_f64(alpha), xs, T::from_f64(beta), ys, product))
        .map_err(py_err)
}

/// Converts `a` to `format` in `precision` (f64, f32, f16) and puts it on `device`
/// ("auto": the GPU when there is one). `graph`: the products will be replayed as CUDA graphs
/// (a solve's iterations on a GPU), the timing `auto` then ranks by unless its spec says.
#[pyfunction]
#[pyo3(signature = (a, format, precision, device, graph = false))]
fn to_device(
    py: Python<'_>, a: &PyCsr, format: &str, precision: &str, device: &str, graph: bool,
) -> PyResult<PyOperator> {
    let precision: Precision = precision.parse().map_err(|e: String| value_err(e))?;
    let backend = backend(device)?;
    let csr = a.csr.clone();
    let timing = spmv::auto::Timing::of(&backend, graph);
    let op = py
        .allow_threads(|| -> spmv::Result<AnyOperator> {
            let spec = Choice::parse(format)?.for_caller(timing);
            AnyOperator::new(&csr, &spec, precision, &backend)
        })
        .map_err(py_err)?;
    Ok(PyOperator { op, precision, csr, backend: backend.describe(), events: Mutex::new(None) })
}

fn solution_dict<'py, T>(
    py: Python<'py>, solved: &Solved<T>, tol: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let s = &solved.solution;
    let d = PyDict::new(py);
    let history = PyList::empty(py);
    for a in &solved.history {
        let attempt = PyDict::new(py);
        attempt.set_item("method", &a.method)?;
        attempt.set_item("residuals", a.residuals.clone())?;
        history.append(attempt)?;
    }
    d.set_item("history", history)?;
    d.set_item("tol", tol)?;
    let (outcome, why) = app::solve::outcome_name(&s.outcome);
    d.set_item("method", solved.method.name())?;
    d.set_item("method_auto", solved.auto.as_deref())?;
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

/// The report page (spmv::picture::report_html) of `sources`: a JSON list of [name, value]
/// pairs, each value a bench run, a list of bench results or a solve.
#[pyfunction]
fn report_html(py: Python<'_>, sources: &str) -> PyResult<String> {
    let sources: Vec<(String, serde_json::Value)> =
        serde_json::from_str(sources).map_err(|e| value_err(format!("report: {e}")))?;
    py.allow_threads(|| spmv::picture::report_html(&sources)).map_err(py_err)
}

/// A solve's method, preconditioner and settings from Python's arguments.
#[derive(FromPyObject)]
struct SolveArgs {
    method: String,
    jacobi: bool,
    tol: f64,
    max_iter: usize,
    check_every: usize,
    graph: bool,
    restart: usize,
}

impl SolveArgs {
    fn parse(&self) -> PyResult<(MethodChoice, Preconditioner, KrylovSettings)> {
        let method: MethodChoice = self.method.parse().map_err(py_err)?;
        let precond = if self.jacobi { Preconditioner::Jacobi } else { Preconditioner::None };
        let (tol, max_iter, check_every, graph) =
            (self.tol, self.max_iter, self.check_every, self.graph);
        let restart = self.restart;
        Ok((
            method,
            precond,
            KrylovSettings { tol, max_iter, check_every, graph, progress: None, restart },
        ))
    }
}

/// b (read) and x (written), host arrays of T and n entries that do not overlap.
fn system<'py, T: Scalar + Element>(
    b: &Bound<'py, PyAny>, x: &Bound<'py, PyAny>, n: usize,
) -> PyResult<(HostBuf<T>, HostBuf<T>)> {
    let bb = HostBuf::get_len(b, "b", false, n)?;
    let xb = HostBuf::get_len(x, "x", true, n)?;
    disjoint(bb.bytes(), xb.bytes(), "b and x")?;
    Ok((bb, xb))
}

/// A·x = b on the operator's backend by the method `args` names (or `auto`), with host
/// arrays b (in) and x (out) of the operator's precision (the buffer protocol); returns the
/// result's figures.
#[pyfunction(name = "solve")]
fn solve_system<'py>(
    py: Python<'py>, op: &PyOperator, b: &Bound<'py, PyAny>, x: &Bound<'py, PyAny>, args: SolveArgs,
) -> PyResult<Bound<'py, PyDict>> {
    let (method, precond, settings) = args.parse()?;
    let a = &op.csr;
    macro_rules! run {
        ($op:expr) => {{
            let (bb, mut xb) = system(b, x, a.nrows())?;
            let (bs, xs) = (bb.as_slice(), xb.as_mut_slice());
            let solved = py
                .allow_threads(|| {
                    let s = solve_choosing($op, a, method, precond, bs, &settings)?;
                    xs.copy_from_slice(&s.solution.x);
                    Ok(s)
                })
                .map_err(py_err)?;
            solution_dict(py, &solved, settings.tol)
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

/// [`solve_system`] for k right-hand sides together: `b` (read) and `x` (written) hold k
/// vectors of n entries one after the other (a C-contiguous (k, n) array: column-major
/// n × k), column j solved to its own tolerance `tols[j]`; returns one result's figures per
/// column.
#[pyfunction]
fn solve_block<'py>(
    py: Python<'py>, op: &PyOperator, b: &Bound<'py, PyAny>, x: &Bound<'py, PyAny>,
    args: SolveArgs, tols: Vec<f64>,
) -> PyResult<Bound<'py, PyList>> {
    let (method, precond, settings) = args.parse()?;
    let a = &op.csr;
    let k = tols.len();
    let entries = a.nrows().checked_mul(k).ok_or_else(|| value_err("too many right-hand sides"))?;
    macro_rules! run {
        ($op:expr) => {{
            let (bb, mut xb) = system(b, x, entries)?;
            let (bs, xs) = (bb.as_slice(), xb.as_mut_slice());
            let solved = py
                .allow_threads(|| {
                    let all = app::solve::solve_block_choosing(
                        $op, a, method, precond, bs, k, &tols, &settings,
                    )?;
                    let n = a.nrows();
                    for (j, s) in all.iter().enumerate() {
                        xs[j * n..(j + 1) * n].copy_from_slice(&s.solution.x);
                    }
                    Ok(all)
                })
                .map_err(py_err)?;
            let list = PyList::empty(py);
            for (s, tol) in solved.iter().zip(&tols) {
                list.append(solution_dict(py, s, *tol)?)?;
            }
            Ok(list)
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

/// [`solve_system`] with A split over `devices` (parts in `format`, the halo moved by
/// `exchange`), in `precision` ("f64" or "f32"); b and x of that precision.
#[pyfunction]
fn solve_distributed<'py>(
    py: Python<'py>, a: &PyCsr, b: &Bound<'py, PyAny>, x: &Bound<'py, PyAny>, args: SolveArgs,
    parts: (String, String, Vec<usize>, String),
) -> PyResult<Bound<'py, PyDict>> {
    let (method, precond, settings) = args.parse()?;
    let (format, precision, devices, exchange) = parts;
    let (format, precision, exchange) = (format.as_str(), precision.as_str(), exchange.as_str());
    let Target::Parts(parts) = target("gpu", Some(&devices), exchange)? else {
        unreachable!("devices given")
    };
    let spec = Choice::parse(format).map_err(py_err)?;
    let a = &a.csr;
    macro_rules! run {
        ($t:ty) => {{
            let (bb, mut xb) = system::<$t>(b, x, a.nrows())?;
            let (bs, xs) = (bb.as_slice(), xb.as_mut_slice());
            let (solved, d) = py
                .allow_threads(|| {
                    let d = parts.distribute(&app::fitted::<$t>(a)?, &spec)?;
                    let s = solve_choosing(&d, a, method, precond, bs, &settings)?;
                    xs.copy_from_slice(&s.solution.x);
                    Ok((s, d))
                })
                .map_err(py_err)?;
            let dict = solution_dict(py, &solved, settings.tol)?;
            dict.set_item("part_formats", d.part_formats())?;
            dict.set_item("halo_bytes", d.halo_bytes())?;
            let setup = PyList::empty(py);
            for p in d.setup_phases().map_err(py_err)?.phases() {
                let phase = PyDict::new(py);
                phase.set_item("name", &p.name)?;
                phase.set_item("ms", p.ms)?;
                phase.set_item("host_bytes", p.host_bytes)?;
                phase.set_item("peak_host_bytes", p.peak_host_bytes)?;
                setup.append(phase)?;
            }
            dict.set_item("setup", setup)?;
            Ok(dict)
        }};
    }
    match precision {
        "f64" => run!(f64),
        "f32" => run!(f32),
        other => {
            Err(value_err(format!("the distributed solvers run in f64 or f32, not {other:?}")))
        }
    }
}

/// PageRank of the graph whose adjacency matrix is `a` (row = source), in `format` on
/// `device` (or over `devices`); ranks (float64, n, mean 1) written into `ranks`; returns the
/// run's figures.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn pagerank<'py>(
    py: Python<'py>, a: &PyCsr, ranks: &Bound<'py, PyAny>, format: &str, device: &str, alpha: f64,
    tol: f64, max_iter: usize, weighted: bool, devices: Option<Vec<usize>>, exchange: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let target = target(device, devices.as_deref(), exchange)?;
    let request = app::pagerank::Request {
        settings: solve::Settings { alpha, tol, max_iter, check_every: 1 },
        weights: if weighted { solve::EdgeWeights::Values } else { solve::EdgeWeights::Pattern },
        reorder: spmv::reorder::Reordering::None,
        runs: 1,
        top: 0,
        exact: None,
    };
    let csr = a.csr.clone();
    let mut rb = HostBuf::<f64>::get_len(ranks, "ranks", true, csr.nrows())?;
    let out = rb.as_mut_slice();
    let result = py
        .allow_threads(|| -> spmv::Result<solve::PageRank<f64>> {
            request.settings.validate()?;
            let t = solve::Transition::new(&csr, request.weights)?;
            let spec = Choice::parse(format)?;
            let mut report = app::pagerank::RunReport::new(&spec, Precision::F64);
            let runs = app::pagerank::runs(&target, &t, t.matrix(), &spec, &request, &mut report)?;
            out.copy_from_slice(&runs.first.ranks);
            Ok(runs.first)
        })
        .map_err(py_err)?;
    let d = PyDict::new(py);
    d.set_item("iterations", result.iterations)?;
    d.set_item("converged", result.converged)?;
    d.set_item("residual", result.residual)?;
    d.set_item("ms", result.total_ms)?;
    d.set_item("backend", target.describe())?;
    Ok(d)
}

/// `spmv bench` on the matrices given (with their names) in the formats and precisions
/// listed; returns the report as JSON (machine, settings, one result per matrix × format ×
/// precision).
#[pyfunction(name = "bench")]
#[allow(clippy::too_many_arguments)]
fn bench_matrices(
    py: Python<'_>, matrices: Vec<PyRef<'_, PyCsr>>, names: Vec<String>, formats_list: &str,
    precisions: &str, device: &str, reps: usize, warmup: usize, devices: Option<Vec<usize>>,
    exchange: &str,
) -> PyResult<String> {
    if reps == 0 {
        return Err(value_err("reps must be at least 1"));
    }
    if names.len() != matrices.len() {
        return Err(value_err(format!("{} names for {} matrices", names.len(), matrices.len())));
    }
    let precisions = app::parse_precisions(precisions).map_err(py_err)?;
    let specs = spmv::choice::parse_list(formats_list).map_err(py_err)?;
    if specs.is_empty() {
        return Err(value_err("no format given"));
    }
    let target = target(device, devices.as_deref(), exchange)?;
    let csrs: Vec<Arc<Csr<f64>>> = matrices.iter().map(|m| m.csr.clone()).collect();
    py.allow_threads(|| -> spmv::Result<String> {
        let settings =
            BenchSettings { warmup, reps, exchange: exchange.parse()?, ..BenchSettings::default() };
        let mut run = app::bench::Bench::new(target, specs, precisions, settings)?;
        for (a, name) in csrs.iter().zip(&names) {
            run.matrix(name, a, |_| {});
        }
        serde_json::to_string(&run.report).map_err(|e| Error::Unsupported(e.to_string()))
    })
    .map_err(py_err)
}

/// The extension module `spmv._spmv` that the Python package wraps.
#[pymodule]
mod _spmv {
    #[pymodule_export]
    use super::{
        bench_matrices, default_specs, format_list, generate, gpu_available, pagerank, read,
        read_bytes, report_html, solve_block, solve_distributed, solve_system, to_device, PyCsr,
        PyOperator,
    };

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
