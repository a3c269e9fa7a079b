//! The registry of storage formats, and the two handles every format is used through.
//!
//! A format is one folder (`formats/<name>/`): its layout doc, conversion from CSR,
//! statistics, CPU SpMV, CUDA kernels and launch code. It implements [`SpmvFormat`] (the
//! host part) and returns a [`DeviceFormat`] from `upload` (its launches). Users get a
//! [`HostMatrix`] from [`build`] (or [`FormatInfo::build`]) and a [`DeviceMatrix`] from
//! [`HostMatrix::upload`]: the handles check shapes, handle empty matrices and apply
//! `y = α·A·x + β·y` once for every format. Formats take parameters through specs
//! ([`spec`]: `sell-c-sigma:c=32,sigma=1024`). Each folder holds its format's registry entry
//! (`entry()`: name, parameters and their parsing, flags, builder); this file is the only
//! place that lists every format: adding one is a folder plus one line in [`registry`]
//! (docs/architecture.md). Choosing a format (`auto`, `tune`) is a layer above this one
//! ([`crate::choice`]): the registry holds storage formats only.

/// Bytes of the given arrays, each `len × size_of` its element type: the device bytes of a
/// layout the device holds as the host does (no hand-written 4s and 8s to get wrong).
macro_rules! bytes_of {
    ($($array:expr),+ $(,)?) => { 0 $(+ std::mem::size_of_val(&$array[..]))+ };
}
pub(crate) use bytes_of;

/// `upload` of a format whose upload is `$upload(gpu, self)`, in its `SpmvFormat` impl.
macro_rules! upload_with {
    ($upload:path) => {
        fn upload(
            &self, gpu: &std::sync::Arc<crate::gpu::Gpu>,
        ) -> crate::error::Result<Box<dyn crate::formats::DeviceFormat<T>>> {
            Ok(Box::new($upload(gpu, self)?))
        }
    };
}
pub(crate) use upload_with;

/// `spmv_cpu` and `upload` of a format whose CPU loop is its `cpu::spmv(self, x, y)` and whose
/// upload is `$upload(gpu, self)`: the same wiring in most formats' `SpmvFormat` impls.
macro_rules! cpu_and_device {
    ($upload:path) => {
        fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
            cpu::spmv(self, x, y)
        }
        crate::formats::upload_with!($upload);
    };
}
pub(crate) use cpu_and_device;

/// The body of a format's `launch_block` over its [`BlockKernels`] `$kernels`: the kernel
/// for `$block` (or `None`, see [`BlockKernels::get`]), launched with every block kernel's
/// (m, n, k) first, then the format's arguments as `$push` pushes them into `$a`, then
/// (x, y, α, β) last (block.cu). The caller's SAFETY comment covers the launch. Defined
/// before the format modules, which reach it by textual scope.
macro_rules! launch_block_kernels {
    ($kernels:expr, $gpu:expr, $p:ident, $block:expr, m = $m:expr, |$a:ident| $push:block) => {{
        let aligned = crate::formats::wide_aligned($p.x, $p.y);
        let (kernel, k, n) = match $kernels.get::<T>($gpu, $block, $p.x.len(), aligned)? {
            Ok(got) => got,
            Err(e) => return Some(Err(e)),
        };
        let m: u32 = $m;
        let crate::formats::Scaled { alpha, x, beta, y } = $p;
        Some(unsafe {
            kernel.launch($gpu, |$a| {
                $a.arg(&m).arg(&n).arg(&k);
                $push
                $a.arg(x).arg(y).arg(&alpha).arg(&beta);
            })
        })
    }};
}

pub mod amf_csr;
mod atomic_add;
mod block_grid;
pub mod brc;
pub mod brcp;
pub mod carry;
pub mod coo;
pub mod csr;
pub mod csr5;
pub mod cusparse;
pub mod dasp;
mod device;
pub mod dia;
pub mod dia_adaptive;
pub mod drm;
pub mod ell;
pub mod hdc;
pub mod hdia;
pub(crate) mod host;
pub mod hyb;
pub mod jds;
pub mod lightspmv;
pub mod merge_csr;
pub mod offsets;
pub mod pbc;
mod row_writer;
pub mod sell;
pub mod spec;
pub mod teb;
#[cfg(test)]
pub(crate) mod test_support;
pub mod values;

pub(crate) use block_grid::BlockGrid;
pub(crate) use device::{
    arg_u32, wide_aligned, Arg, BlockKernels, LanesRule, OneKernel, PerLayout,
};
pub use device::{BlockKernel, BlockPath, DeviceEntries, DeviceFormat, DeviceMatrix, Scaled};
pub use host::{FormatHandle, HostMatrix, MatrixInfo, SpmvFormat, TransposeFormat};
pub use spec::{FormatSpec, Param};

use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Precision, Scalar};

/// What a format reports about its storage, beside its kernel time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FormatStats {
    /// Bytes of the format's arrays as stored on the device (x and y not included).
    pub bytes: usize,
    /// Matrix entries (nnz of the CSR it was built from).
    pub nnz: usize,
    /// Stored value slots, padding included.
    pub stored: usize,
    /// Entries in the longest row of the matrix.
    pub max_row_len: usize,
    /// Mean entries per row of the matrix (nnz / nrows).
    pub mean_row_len: f64,
    /// Format-specific figures (block balance, slice count ...), name and value.
    pub extra: Vec<(String, f64)>,
}

impl FormatStats {
    /// Explicit zeros added by the format.
    pub fn padded_zeros(&self) -> usize {
        self.stored.saturating_sub(self.nnz)
    }
    /// stored / nnz (1.0 for formats without padding).
    pub fn padding_ratio(&self) -> f64 {
        if self.nnz == 0 {
            1.0
        } else {
            self.stored as f64 / self.nnz as f64
        }
    }
    /// The common figures, with no format-specific ones yet (see [`FormatStats::with`]).
    pub fn new(
        bytes: usize, nnz: usize, stored: usize, max_row_len: usize, mean_row_len: f64,
    ) -> Self {
        FormatStats { bytes, nnz, stored, max_row_len, mean_row_len, extra: Vec::new() }
    }
    /// These statistics with the format-specific figures `extra` added.
    pub fn with(mut self, extra: impl IntoIterator<Item = (&'static str, f64)>) -> Self {
        self.extra.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
        self
    }
    /// The common figures of a matrix stored without padding in `bytes` bytes.
    pub fn unpadded<T: Scalar>(a: &Csr<T>, bytes: usize) -> Self {
        FormatStats {
            bytes,
            nnz: a.nnz(),
            stored: a.nnz(),
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
            extra: Vec::new(),
        }
    }
}

/// The matrix figures a padded format keeps from its conversion for [`FormatStats`]: its
/// entries and row lengths (the format's own arrays no longer tell them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowFigures {
    nnz: usize,
    max_row_len: usize,
    mean_row_len: f64,
}

impl RowFigures {
    /// The figures of `a`.
    pub(crate) fn of<T: Scalar>(a: &Csr<T>) -> Self {
        RowFigures { nnz: a.nnz(), max_row_len: a.max_row_len(), mean_row_len: a.mean_row_len() }
    }
    /// The common statistics of these rows stored in `stored` slots and `bytes` device bytes.
    pub(crate) fn stats(&self, bytes: usize, stored: usize) -> FormatStats {
        FormatStats::new(bytes, self.nnz, stored, self.max_row_len, self.mean_row_len)
    }
}

/// JSON carries the derived padding figures too, so no format has to repeat them in `extra`.
impl serde::Serialize for FormatStats {
    fn serialize<S: serde::Serializer>(
        &self, serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("FormatStats", 8)?;
        s.serialize_field("bytes", &self.bytes)?;
        s.serialize_field("nnz", &self.nnz)?;
        s.serialize_field("stored", &self.stored)?;
        s.serialize_field("padded_zeros", &self.padded_zeros())?;
        s.serialize_field("padding_ratio", &self.padding_ratio())?;
        s.serialize_field("max_row_len", &self.max_row_len)?;
        s.serialize_field("mean_row_len", &self.mean_row_len)?;
        s.serialize_field("extra", &self.extra)?;
        s.end()
    }
}

/// [`FormatInfo`]'s flag setters: `name = value;` sets the field of that name, `name: field =
/// value;` another field.
macro_rules! flag_setters {
    ($($(#[$doc:meta])* $name:ident $(: $field:ident)? = $value:literal;)+) => {$(
        $(#[$doc])*
        pub(crate) fn $name(mut self) -> Self {
            flag_setters!(@set self, $name $(, $field)?) = $value;
            self
        }
    )+};
    (@set $s:ident, $name:ident) => { $s.$name };
    (@set $s:ident, $name:ident, $field:ident) => { $s.$field };
}

/// Builds a format from a CSR matrix and its resolved spec.
pub type Builder<T> = fn(&Csr<T>, &FormatSpec) -> Result<Box<dyn SpmvFormat<T>>>;

/// A registered format: its name, a one-line description, its parameters, its kernels and
/// its builder.
pub struct FormatInfo<T: Scalar> {
    /// The name specs use, e.g. `csr-vector`.
    pub name: &'static str,
    /// One line for `spmv formats`: the layout, the kernel's strategy, caveats.
    pub description: &'static str,
    /// Every tunable, with its default (see [`spec`]).
    pub params: &'static [Param],
    /// CUDA C modules of the format (empty for library-backed formats such as cuSPARSE).
    pub kernels: &'static [KernelModule],
    /// The GPU result is bitwise identical from run to run (no float atomics or
    /// order-dependent reductions); the format's doc states the mechanism.
    pub deterministic: bool,
    /// Runs in f16 (f16 values and x, f32 sums, f16 y); the others decline f16.
    pub half: bool,
    /// Takes matrices of 2^31 entries or more (64-bit offsets, see [`offsets`]); the others
    /// refuse them with the reason.
    pub wide: bool,
    /// A vendor library's SpMV (cuSPARSE), the baseline the others are compared with; on the
    /// CPU it runs a plain CSR loop, so the benchmark gives it no wins there.
    pub library_baseline: bool,
    /// `auto` may build it. With `false` it stays in auto's ranking (and `tune` measures it),
    /// but auto passes over it when it ranks first (the reason is with the entry).
    pub auto_candidate: bool,
    /// Builds the format from a CSR matrix and its resolved spec.
    pub(crate) build: Builder<T>,
}

impl<T: Scalar> FormatInfo<T> {
    /// A registry entry with no parameters and no kernels, not deterministic, f32/f64 only,
    /// narrow, no library baseline and an `auto` candidate; the setters below change that.
    pub(crate) fn new(name: &'static str, description: &'static str, build: Builder<T>) -> Self {
        FormatInfo {
            name,
            description,
            params: &[],
            kernels: &[],
            deterministic: false,
            half: false,
            wide: false,
            library_baseline: false,
            auto_candidate: true,
            build,
        }
    }

    /// Sets the format's tunables.
    pub(crate) fn params(mut self, params: &'static [Param]) -> Self {
        self.params = params;
        self
    }

    /// Sets the format's CUDA C modules.
    pub(crate) fn kernels(mut self, kernels: &'static [KernelModule]) -> Self {
        self.kernels = kernels;
        self
    }

    flag_setters! {
        /// Marks the GPU result bitwise identical from run to run.
        deterministic = true;
        /// Marks the format as running in f16.
        half = true;
        /// Marks the format as taking matrices of 2^31 entries or more.
        wide = true;
        /// Marks the format as a vendor library's SpMV.
        library_baseline = true;
        /// Keeps `auto` from building the format (the caller gives the reason).
        not_auto_candidate: auto_candidate = false;
    }

    /// This format's spec with every parameter at its default.
    pub fn default_spec(&self) -> FormatSpec {
        FormatSpec::resolve(self.name, self.params, &[]).expect("defaults are valid keys")
    }

    /// Builds the format from `a` with its default parameters.
    pub fn build(&self, a: &Csr<T>) -> Result<HostMatrix<T>> {
        self.build_spec(a, &self.default_spec())
    }

    /// Builds the format from `a` with the parameters of `spec` (a spec of this format).
    pub fn build_spec(&self, a: &Csr<T>, spec: &FormatSpec) -> Result<HostMatrix<T>> {
        if spec.name() != self.name {
            return Err(Error::Unsupported(format!("spec {spec} given to format {}", self.name)));
        }
        if T::PRECISION == Precision::F16 && !self.half {
            let half: Vec<&str> =
                registry::<T>().iter().filter(|f| f.half).map(|f| f.name).collect();
            return Err(Error::format(
                self.name,
                format!("does not run in f16 (formats that do: {})", half.join(", ")),
            ));
        }
        offsets::check_wide(self.name, a.nnz(), self.wide)?;
        let format = (self.build)(a, spec)?;
        Ok(HostMatrix::new(spec.clone(), self.deterministic, format, a))
    }
}

/// The builder of a format with one integer tunable that may be `auto`: the format `auto`
/// builds when the spec's `key` is `auto`, else the one `given` builds with its value (≥ `min`).
pub(crate) fn auto_or<T: Scalar, F: SpmvFormat<T> + 'static>(
    s: &FormatSpec, key: &str, min: usize, auto: impl FnOnce() -> Result<F>,
    given: impl FnOnce(usize) -> Result<F>,
) -> Result<Box<dyn SpmvFormat<T>>> {
    let format = match s.auto_usize(key, min)? {
        None => auto()?,
        Some(value) => given(value)?,
    };
    Ok(Box::new(format))
}

/// Every format, in the order `spmv formats` and `spmv bench --formats all` list them.
pub fn registry<T: Scalar>() -> Vec<FormatInfo<T>> {
    T::registry()
}

/// The registry's table, instantiated only by [`Scalar::registry`]'s three impls.
pub(crate) fn registered<T: Scalar>() -> Vec<FormatInfo<T>> {
    vec![
        csr::scalar_entry(),
        csr::vector_entry(),
        coo::entry(coo::CooKernel::Atomic),
        coo::entry(coo::CooKernel::Segmented),
        ell::entry(),
        hyb::entry(),
        jds::entry(),
        sell::entry(),
        lightspmv::entry(),
        merge_csr::entry(),
        csr5::entry(),
        brc::entry(),
        brcp::entry(),
        teb::entry(),
        teb::lanes_entry(),
        pbc::entry(),
        amf_csr::entry(),
        dasp::entry(),
        dia::entry(),
        hdia::entry(),
        hdc::entry(),
        dia_adaptive::entry(),
        drm::entry(),
        cusparse::alg1_entry(),
        cusparse::alg2_entry(),
    ]
}

/// The registered format called `name`, or an error listing the valid names.
pub fn find<T: Scalar>(name: &str) -> Result<FormatInfo<T>> {
    let all = registry::<T>();
    let names: Vec<&str> = all.iter().map(|f| f.name).collect();
    all.into_iter().find(|f| f.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
        Error::Unsupported(format!("unknown format '{name}'; known formats: {}", names.join(", ")))
    })
}

/// Parses and validates a format spec (`sell-c-sigma:c=32,sigma=1024`, `brcp`): the name,
/// the keys and the values, so that a bad value fails here and not on every matrix.
pub fn parse_spec(spec: &str) -> Result<FormatSpec> {
    let (name, pairs) = spec::split(spec)?;
    let info = find::<f64>(name)?;
    let spec = FormatSpec::resolve(info.name, info.params, &pairs)?;
    // Every format takes an empty matrix, so an error building one is the spec's values'.
    info.build_spec(&Csr::zeros(0, 0), &spec)?;
    Ok(spec)
}

/// Builds the format that `spec` names from `a`.
pub fn build<T: Scalar>(spec: &FormatSpec, a: &Csr<T>) -> Result<HostMatrix<T>> {
    find::<T>(spec.name())?.build_spec(a, spec)
}

/// Whether the format `spec` names gives bitwise identical GPU results run to run.
pub fn is_deterministic(spec: &FormatSpec) -> bool {
    registry::<f64>().iter().any(|f| f.name == spec.name() && f.deterministic)
}

/// Whether the registered format `name` takes matrices of 2^31 entries or more.
pub fn is_wide(name: &str) -> bool {
    registry::<f64>().iter().any(|f| f.name == name && f.wide)
}

/// The registered formats whose GPU result is bitwise identical from run to run
/// (`deterministic`), in registry order: what `spmv bench --deterministic` runs.
pub fn deterministic_registry<T: Scalar>() -> Vec<FormatInfo<T>> {
    registry::<T>().into_iter().filter(|f| f.deterministic).collect()
}

/// Every distinct kernel module of the registry.
pub fn kernel_modules() -> Vec<KernelModule> {
    let mut modules: Vec<KernelModule> = Vec::new();
    for info in registry::<f64>() {
        for m in info.kernels {
            if !modules.iter().any(|k| k.name == m.name) {
                modules.push(*m);
            }
        }
    }
    modules
}

/// The CPU twin of a warp's shuffle-down reduction over the first `p.len()` lanes (a power of
/// two ≤ 32): `p[l] += p[l + offset]` for offset = len/2, …, 1; returns lane 0's sum. Kernels
/// whose CPU path must give their bits (LightSpMV, the carry-out) sum in this order.
pub(crate) fn shuffle_down_sum<A: Scalar>(p: &mut [A]) -> A {
    debug_assert!(p.len().is_power_of_two() && p.len() <= 32);
    let mut offset = p.len() / 2;
    while offset > 0 {
        for l in 0..offset {
            let other = p[l + offset];
            p[l] += other;
        }
        offset /= 2;
    }
    p[0]
}

/// Device row offsets are 32-bit in this project's kernels: check that `nnz` fits.
pub(crate) fn check_nnz_u32(format: &'static str, nnz: usize) -> Result<()> {
    if nnz > u32::MAX as usize {
        return Err(Error::format(
            format,
            format!("{nnz} entries exceed the 2^32 - 1 that 32-bit device row offsets can address"),
        ));
    }
    Ok(())
}

/// The row offsets as the kernels' 32-bit array ([`check_nnz_u32`]).
pub(crate) fn offsets_u32<T: Scalar>(format: &'static str, a: &Csr<T>) -> Result<Vec<u32>> {
    check_nnz_u32(format, a.nnz())?;
    Ok(a.row_ptr().iter().map(|&p| p as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_spec_round_trips_and_builds() {
        for info in registry::<f64>() {
            let spec = info.default_spec();
            assert_eq!(parse_spec(&spec.to_string()).unwrap(), spec, "{}", info.name);
            assert_eq!(spec.label(), info.name);
            let a = Csr::new_checked(2, 2, vec![0, 1, 2], vec![0, 1], vec![1.0, 2.0]).unwrap();
            let m = build(&spec, &a).unwrap();
            assert_eq!(
                (m.name(), m.nrows(), m.nnz(), m.deterministic()),
                (info.name, 2, 2, info.deterministic)
            );
        }
    }

    #[test]
    fn bad_values_fail_at_parse_time() {
        for bad in [
            "csr-vector:lanes=3",
            "drm:segment_rows=5000",
            "teb:k=2",
            "dia-adaptive:layout=ell",
            "sell-c-sigma:c=0",
        ] {
            let e = parse_spec(bad).unwrap_err().to_string();
            let name = bad.split(':').next().unwrap();
            assert!(e.contains(name), "{bad}: {e}");
        }
        assert!(parse_spec("nope").unwrap_err().to_string().contains("known formats: csr-scalar"));
    }

    #[test]
    fn shared_parameters_parse_where_their_owners_keep_them() {
        let spec = |s: &str| parse_spec(s).unwrap();
        assert_eq!(csr::lanes(&spec("csr-vector:lanes=8")).unwrap(), Some(8));
        assert_eq!(csr::lanes(&spec("lightspmv")).unwrap(), None);
        assert_eq!(ell::max_padding(&spec("dia:max_padding=2.5")).unwrap(), 2.5);
        assert!(parse_spec("ell:max_padding=0.5").unwrap_err().to_string().contains("≥ 1"));
        let values = values::ValueChoice::of_spec(&spec("csr5:values=i8")).unwrap();
        assert_eq!(values, values::ValueChoice::Codec(values::ValueCodec::I8));
        // The flags that replace name checks: cuSPARSE is the library baseline, and auto passes
        // over coo-atomic only.
        let flagged = |flag: fn(&FormatInfo<f64>) -> bool| -> Vec<&str> {
            registry::<f64>().iter().filter(|f| flag(f)).map(|f| f.name).collect()
        };
        assert_eq!(flagged(|f| f.library_baseline), ["cusparse-alg1", "cusparse-alg2"]);
        assert_eq!(flagged(|f| !f.auto_candidate), ["coo-atomic"]);
    }
}
