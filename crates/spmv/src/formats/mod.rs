//! The registry of storage formats, and the two handles every format is used through.
//!
//! A format is one folder (`formats/<name>/`): its layout doc, conversion from CSR,
//! statistics, CPU SpMV, CUDA kernels and launch code. It implements [`SpmvFormat`] (the
//! host part) and returns a [`DeviceFormat`] from `upload` (its launches). Users get a
//! [`HostMatrix`] from [`build`] (or [`FormatInfo::build`]) and a [`DeviceMatrix`] from
//! [`HostMatrix::upload`]: the handles check shapes, handle empty matrices and apply
//! `y = α·A·x + β·y` once for every format. Formats take parameters through specs
//! ([`spec`]: `sell-c-sigma:c=32,sigma=1024`). This file is the only place that lists every
//! format: adding one is a folder plus one entry in [`registry`] (docs/architecture.md).

pub mod amf_csr;
mod atomic_add;
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

pub use device::{DeviceEntries, DeviceFormat, DeviceMatrix};
pub use host::{FormatHandle, HostMatrix, MatrixInfo, SpmvFormat};
pub use spec::{FormatSpec, Param};

use offsets::OffsetWidth;

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
        bytes: usize,
        nnz: usize,
        stored: usize,
        max_row_len: usize,
        mean_row_len: f64,
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

/// JSON carries the derived padding figures too, so no format has to repeat them in `extra`.
impl serde::Serialize for FormatStats {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
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
    build: Builder<T>,
}

impl<T: Scalar> FormatInfo<T> {
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

/// Every format, in the order `spmv formats` and `spmv bench --formats all` list them.
pub fn registry<T: Scalar>() -> Vec<FormatInfo<T>> {
    T::registry()
}

/// The registry's table, instantiated only by [`Scalar::registry`]'s three impls.
pub(crate) fn registered<T: Scalar>() -> Vec<FormatInfo<T>> {
    vec![
        FormatInfo {
            name: "csr-scalar",
            description: "CSR, one thread per row (the classic baseline)",
            params: &[offsets::OFFSETS],
            kernels: &[csr::KERNELS],
            deterministic: true,
            half: true,
            wide: true,
            build: |a, s| Ok(Box::new(csr::CsrFormat::new(a, csr::CsrKernel::Scalar).with_offsets(OffsetWidth::of_spec(s, a.nnz())?)?)),
        },
        FormatInfo {
            name: "csr-vector",
            description: "CSR, 2-32 lanes per row chosen from the mean row length, shuffle reduction",
            params: &[LANES, VALUES, Param { key: "cols", default: "full", doc: values::columns::COLUMNS_DOC }, offsets::OFFSETS],
            kernels: &[csr::KERNELS, csr::CODED_KERNELS],
            deterministic: true,
            half: true,
            wide: true,
            build: |a, s| {
                let cols = match s.choice("cols", values::columns::COLUMN_CHOICES)? {
                    "delta16" => csr::ColumnChoice::Delta16,
                    "auto" => csr::ColumnChoice::Auto,
                    _ => csr::ColumnChoice::Full,
                };
                let offsets = OffsetWidth::of_spec(s, a.nnz())?;
                Ok(Box::new(csr::CsrFormat::vector_coded(a, lanes(s)?, value_choice(s)?, cols)?.with_offsets(offsets)?))
            },
        },
        FormatInfo {
            name: "coo-atomic",
            description: "COO, one atomicAdd per entry (y zeroed first, timed); not deterministic",
            params: &[],
            kernels: &[coo::KERNELS],
            deterministic: false,
            half: false,
            wide: false,
            build: |a, _| Ok(Box::new(coo::CooFormat::new(a, coo::CooKernel::Atomic)?)),
        },
        FormatInfo {
            name: "coo-segmented",
            description: "COO, segmented reduction over chunks of 1024 entries plus a carry pass; deterministic",
            params: &[],
            kernels: &[coo::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, _| Ok(Box::new(coo::CooFormat::new(a, coo::CooKernel::Segmented)?)),
        },
        FormatInfo {
            name: "ell",
            description: "ELLPACK, rows padded to the longest, column-major, one thread per row (refused above max_padding, default 20x)",
            params: &[MAX_PADDING],
            kernels: &[ell::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| Ok(Box::new(ell::EllFormat::with_limit(a, max_padding(s)?)?)),
        },
        FormatInfo {
            name: "hyb",
            description: "HYB, ELL part of Bell & Garland's width, the rest of each row in COO (atomics aggregated per warp)",
            params: &[Param { key: "width", default: "auto", doc: "ELL width K (auto: Bell & Garland's rule, capped by ELL's padding limit)" }],
            kernels: &[ell::KERNELS, coo::KERNELS],
            deterministic: false,
            half: false,
            wide: false,
            build: |a, s| match s.auto_usize("width", 0)? {
                None => Ok(Box::new(hyb::Hyb::new(a)?)),
                Some(k) => Ok(Box::new(hyb::Hyb::with_width(a, k)?)),
            },
        },
        FormatInfo {
            name: "jds",
            description: "JDS, rows sorted by length, jagged diagonals column-major; one thread per sorted row",
            params: &[],
            kernels: &[jds::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, _| Ok(Box::new(jds::Jds::new(a)?)),
        },
        FormatInfo {
            name: "sell-c-sigma",
            description: "sliced ELL, C rows per slice (default 32), rows sorted by length within windows of σ rows (default: full sort)",
            params: &[
                Param { key: "c", default: "32", doc: "rows per slice (≥ 1; 32 makes a slice one warp)" },
                Param { key: "sigma", default: "auto", doc: "rows per sorting window (≥ 1; auto: all rows, a full sort)" },
                offsets::OFFSETS,
            ],
            kernels: &[sell::KERNELS],
            deterministic: true,
            half: false,
            wide: true,
            build: |a, s| {
                let sigma = s.auto_usize("sigma", 1)?.unwrap_or(a.nrows());
                let sell = sell::SellCSigma::new(a, s.usize("c", 1)?, sigma)?;
                Ok(Box::new(match OffsetWidth::requested(s)? {
                    Some(width) => sell.with_offsets(width)?,
                    None => sell,
                }))
            },
        },
        FormatInfo {
            name: "lightspmv",
            description: "LightSpMV: CSR-vector, rows handed to vectors of 2-32 lanes by a global atomic counter",
            params: &[LANES],
            kernels: &[lightspmv::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| match lanes(s)? {
                None => Ok(Box::new(lightspmv::LightSpmv::new(a)?)),
                Some(l) => Ok(Box::new(lightspmv::LightSpmv::with_lanes(a, l)?)),
            },
        },
        FormatInfo {
            name: "merge-csr",
            description: "merge-path CSR (Merrill & Garland): equal shares of row ends + entries per lane, carries fixed up deterministically",
            params: &[Param { key: "items", default: "auto", doc: "merge items per lane: 3, 5, 7, 9, 11 or 15 (auto: 9)" }, offsets::OFFSETS],
            kernels: &[merge_csr::KERNELS],
            deterministic: true,
            half: true,
            wide: true,
            build: |a, s| {
                let items = s.auto_usize("items", 1)?.unwrap_or(merge_csr::DEFAULT_ITEMS);
                let merge = merge_csr::MergeCsr::new(a, items)?;
                Ok(Box::new(match OffsetWidth::requested(s)? {
                    Some(width) => merge.with_offsets(width)?,
                    None => merge,
                }))
            },
        },
        FormatInfo {
            name: "csr5",
            description: "CSR5 (Liu & Vinter): tiles of 32 x sigma entries stored transposed, row-start bit flags, carries fixed up deterministically",
            params: &[
                Param { key: "sigma", default: "auto", doc: "entries per lane: 4, 8, 12, 16, 24 or 32 (auto: from the mean row length)" },
                Param {
                    key: "convert",
                    default: "host",
                    doc: "where the tiles are built: host (parallel, in conv ms) or gpu (on upload from the CSR arrays, as the paper; its time in the JSON's device_convert_ms)",
                },
                VALUES,
            ],
            kernels: &[csr5::KERNELS, csr5::CODED_KERNELS, csr5::CONVERT_KERNELS],
            deterministic: true,
            half: true,
            wide: false,
            build: |a, s| {
                let sigma = match s.auto_usize("sigma", 1)? {
                    Some(sigma) => sigma,
                    None => csr5::auto_sigma(a.mean_row_len(), T::PRECISION),
                };
                let values = value_choice(s)?;
                match s.choice("convert", &["host", "gpu"])? {
                    "gpu" if values != values::ValueChoice::Codec(values::ValueCodec::Full) => Err(Error::Unsupported(
                        "format csr5: convert=gpu stores full values only; use convert=host with values other than full".into(),
                    )),
                    "gpu" => Ok(Box::new(csr5::Csr5OnGpu::new(a, sigma)?)),
                    _ => Ok(Box::new(csr5::Csr5::with_values(a, sigma, values)?)),
                }
            },
        },
        FormatInfo {
            name: "brc",
            description: "BRC: sorted rows cut into pieces of T = round(mean + sd) entries, blocks of 32 pieces, one atomicAdd per piece (y zeroed first); not deterministic",
            params: &[Param { key: "threshold", default: "auto", doc: "T, the longest piece (≥ 1; auto: round(mean + sd) of the row lengths)" }],
            kernels: &[brc::KERNELS],
            deterministic: false,
            half: false,
            wide: false,
            build: |a, s| match s.auto_usize("threshold", 1)? {
                None => Ok(Box::new(brc::Brc::new(a)?)),
                Some(t) => Ok(Box::new(brc::Brc::with_params(a, brc::WARP_BLOCK_ROWS, t)?)),
            },
        },
        FormatInfo {
            name: "brcp",
            description: "BRCP: sorted rows filled row-major into blocks of 32 slots (the paper's width rule), warp segmented sum, rows across blocks summed in block order; deterministic",
            params: &[Param { key: "threshold", default: "auto", doc: "T, the widest block (≥ 1; auto: round(mean + sd) of the row lengths)" }],
            kernels: &[brcp::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| match s.auto_usize("threshold", 1)? {
                None => Ok(Box::new(brcp::Brcp::new(a)?)),
                Some(t) => Ok(Box::new(brcp::Brcp::with_params(a, brc::WARP_BLOCK_ROWS, t)?)),
            },
        },
        FormatInfo {
            name: "teb",
            description: "TEB (threshold-exchangeorder block): rows merged into blocks of near-equal nnz, one thread block per block, one thread per row (Algorithm 3)",
            params: TEB_PARAMS,
            kernels: &[teb::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| Ok(Box::new(teb_with(a, s, teb::TebKernel::RowPerThread)?)),
        },
        FormatInfo {
            name: "teb-lanes",
            description: "TEB arrays and blocks with an improved kernel: lanes per row chosen per block from its mean row length",
            params: TEB_PARAMS,
            kernels: &[teb::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| Ok(Box::new(teb_with(a, s, teb::TebKernel::LanesPerRow)?)),
        },
        FormatInfo {
            name: "pbc",
            description: "PBC (partition-block-CSR): rows sorted by length, cut into blocks of near-equal nnz (smallest std), each an ELL of its own width",
            params: &[Param { key: "blocks", default: "auto", doc: "P, the number of blocks (1..=rows; auto: the smallest-std search)" }],
            kernels: &[pbc::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| match s.auto_usize("blocks", 1)? {
                None => Ok(Box::new(pbc::Pbc::new(a)?)),
                Some(p) => Ok(Box::new(pbc::Pbc::with_blocks(a, p)?)),
            },
        },
        FormatInfo {
            name: "amf-csr",
            description: "AMF-CSR (adaptive multi-row folding): rows folded below Ts nnz, row-blocks into sub-blocks below Tl; a warp per folded row",
            params: &[
                Param { key: "ts", default: "auto", doc: "Ts, the folding threshold (≥ 1; auto: mean row length rounded up to 32)" },
                Param { key: "tl", default: "auto", doc: "Tl, the sub-block threshold (≥ 1; auto: max(8·Ts, nnz/8448))" },
            ],
            kernels: &[amf_csr::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| {
                let ts = s.auto_usize("ts", 1)?.unwrap_or(amf_csr::thresholds(a.nrows(), a.nnz()).0);
                let tl = s.auto_usize("tl", 1)?.unwrap_or(amf_csr::sub_block_threshold(ts, a.nnz()));
                Ok(Box::new(amf_csr::AmfCsr::with_thresholds(a, ts, tl)?))
            },
        },
        FormatInfo {
            name: "dasp",
            description: "DASP: long rows in 64-entry groups, medium rows in sorted 8-row blocks of 8x4 tiles, short rows packed in 4s; FP64 tiles on the tensor cores (DMMA m8n8k4, diagonal trick), FP32 on CUDA cores",
            params: &[
                Param { key: "max_len", default: "256", doc: "rows longer than this are long (≥ 4)" },
                Param { key: "regular_fill", default: "0.75", doc: "least share of real entries in a regular (MMA) medium tile, in (0, 1]" },
                Param { key: "loop_num", default: "auto", doc: "medium row-blocks per warp (≥ 1; auto: 1, 2 or 4 by the paper's rule)" },
                Param { key: "sigma", default: "auto", doc: "medium rows sorted by length within windows of sigma rows (≥ 1; auto: all, the paper's global sort)" },
                VALUES,
                offsets::OFFSETS,
            ],
            kernels: &[dasp::KERNELS, dasp::CODED_KERNELS],
            deterministic: true,
            half: true,
            wide: true,
            build: |a, s| {
                let params = dasp::Params {
                    max_len: s.usize("max_len", 4)?,
                    regular_fill: s.f64("regular_fill", f64::MIN_POSITIVE)?,
                    loop_num: s.auto_usize("loop_num", 1)?,
                    sigma: s.auto_usize("sigma", 1)?,
                    offsets: OffsetWidth::requested(s)?,
                };
                Ok(Box::new(dasp::Dasp::with_values(a, params, value_choice(s)?)?))
            },
        },
        FormatInfo {
            name: "dia",
            description: "DIA, every occupied diagonal stored in full, one thread per row (refused above max_padding, default 20x)",
            params: &[MAX_PADDING, VALUES],
            kernels: &[dia::KERNELS],
            deterministic: true,
            half: false,
            wide: true,
            build: |a, s| Ok(Box::new(dia::Dia::with_values(a, max_padding(s)?, value_choice(s)?)?)),
        },
        FormatInfo {
            name: "hdia",
            description: "HDIA, hacks of hack_rows rows (default 32) each stored DIA-style with its own diagonals, one thread per row",
            params: &[Param { key: "hack_rows", default: "32", doc: "rows per hack (≥ 1)" }],
            kernels: &[hdia::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| Ok(Box::new(hdia::Hdia::with_hack_rows(a, s.usize("hack_rows", 1)?)?)),
        },
        FormatInfo {
            name: "hdc",
            description: "HDC, DIA for diagonals filled above s/(s+4) (2/3 in f64, 1/2 in f32), CSR for the rest",
            params: &[],
            kernels: &[hdc::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, _| Ok(Box::new(hdc::Hdc::new(a)?)),
        },
        FormatInfo {
            name: "dia-adaptive",
            description: "DIA-Adaptive, picks DIA, BRCSD-I (cross-point row blocks) or BRCSD-II (32-row blocks) by stored slots",
            params: &[
                Param { key: "layout", default: "auto", doc: "auto (the classification), dia, brcsd1 or brcsd2" },
                Param { key: "block_rows", default: "32", doc: "rows per BRCSD-II block (≥ 1)" },
                Param { key: "piece_rows", default: "64", doc: "rows per BRCSD-I piece (1..=1024)" },
            ],
            kernels: &[dia::KERNELS, dia_adaptive::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| {
                use dia_adaptive::Layout;
                let layout = match s.choice("layout", &["auto", "dia", "brcsd1", "brcsd2"])? {
                    "dia" => Some(Layout::Dia),
                    "brcsd1" => Some(Layout::Brcsd1),
                    "brcsd2" => Some(Layout::Brcsd2),
                    _ => None,
                };
                let (block_rows, piece_rows) = (s.usize("block_rows", 1)?, s.usize("piece_rows", 1)?);
                Ok(Box::new(dia_adaptive::DiaAdaptive::with_layout(a, layout, block_rows, piece_rows)?))
            },
        },
        FormatInfo {
            name: "drm",
            description: "DRM, DIA segments of segment_rows rows (default 32) merged into balanced sub-blocks (Algorithm 1), one CUDA block per sub-block",
            params: &[Param { key: "segment_rows", default: "32", doc: "rows per DIA segment (1..=1024)" }],
            kernels: &[drm::KERNELS],
            deterministic: true,
            half: false,
            wide: false,
            build: |a, s| Ok(Box::new(drm::Drm::with_segment_rows(a, s.usize("segment_rows", 1)?)?)),
        },
        FormatInfo {
            name: "cusparse-alg1",
            description: "cuSPARSE generic SpMV on CSR, CUSPARSE_SPMV_CSR_ALG1 (with preprocess)",
            params: &[offsets::OFFSETS],
            kernels: &[],
            deterministic: false,
            half: true,
            wide: true,
            build: |a, s| {
                let wide = OffsetWidth::of_spec(s, a.nnz())? == OffsetWidth::W64;
                Ok(Box::new(cusparse::Cusparse::new(a, cusparse::Algorithm::Alg1).with_wide_indices(wide)?))
            },
        },
        FormatInfo {
            name: "cusparse-alg2",
            description: "cuSPARSE generic SpMV on CSR, CUSPARSE_SPMV_CSR_ALG2 (deterministic, with preprocess)",
            params: &[offsets::OFFSETS],
            kernels: &[],
            deterministic: true,
            half: true,
            wide: true,
            build: |a, s| {
                let wide = OffsetWidth::of_spec(s, a.nnz())? == OffsetWidth::W64;
                Ok(Box::new(cusparse::Cusparse::new(a, cusparse::Algorithm::Alg2).with_wide_indices(wide)?))
            },
        },
        FormatInfo {
            name: "tune",
            description: "auto's first candidates measured on the backend, the fastest kept and cached (runs in spmv bench and auto::tune; docs/auto.md)",
            params: &[ONLY, HELD_OUT, Param { key: "budget_ms", default: "2000", doc: "time for measuring (≥ 1; the first candidate is always measured)" }],
            kernels: &[],
            deterministic: false,
            half: true,
            wide: true,
            // Measuring needs the backend, which a format's build does not have: spmv bench
            // and auto::tune run it; built alone it declines.
            build: |_, s| {
                auto_options(s)?;
                s.usize("budget_ms", 1)?;
                Err(Error::format("tune", TUNE_DECLINES))
            },
        },
        FormatInfo {
            name: "auto",
            description: "the format chosen from the matrix's features by a model fitted to H200 measurements (docs/auto.md)",
            params: &[ONLY, HELD_OUT],
            kernels: &[],
            // The chosen format may not be; auto:only=deterministic is.
            deterministic: false,
            half: true,
            wide: true,
            build: |a, s| {
                Ok(Box::new(crate::auto::Auto::new(a, auto_options(s)?)?))
            },
        },
    ]
}

/// The candidates of `auto` and `tune`.
const ONLY: Param =
    Param { key: "only", default: "all", doc: "the candidates: all registered formats, or deterministic ones only (bitwise identical runs)" };

/// Leaving the matrix out of the model when it is a training matrix (auto and tune).
const HELD_OUT: Param = Param {
    key: "heldout",
    default: "false",
    doc: "true: choose as if the model had not been fitted on this matrix (how the choice is scored on the training matrices)",
};

/// auto's and tune's options from their spec (`only`, `heldout`).
pub(crate) fn auto_options(s: &FormatSpec) -> Result<crate::auto::Options> {
    Ok(crate::auto::Options {
        deterministic: s.choice("only", &["all", "deterministic"])? == "deterministic",
        held_out: s.choice("heldout", &["false", "true"])? == "true",
    })
}

/// Why `tune` declines to be built alone.
const TUNE_DECLINES: &str =
    "tune measures candidates on a device: use it in spmv bench or through spmv::auto::tune";

const LANES: Param = Param {
    key: "lanes",
    default: "auto",
    doc: "lanes per row: 2, 4, 8, 16 or 32 (auto: the smallest power of two ≥ the mean row length)",
};
const MAX_PADDING: Param = Param {
    key: "max_padding",
    default: "20",
    doc: "largest stored/nnz ratio accepted (≥ 1; arrays of ≤ 2^20 slots are always accepted)",
};
const TEB_PARAMS: &[Param] = &[
    Param {
        key: "blocks",
        default: "auto",
        doc: "bLN, the number of blocks (1..=rows; auto: the paper's search)",
    },
    Param {
        key: "k",
        default: "auto",
        doc: "the threshold's offset parameter (> 0; needs blocks; auto: 1 with given blocks)",
    },
];

/// `lanes`: `None` for auto, else a power of two in 2..=32.
/// The `values` parameter of the formats with coded values ([`values`]).
const VALUES: Param = Param { key: "values", default: "full", doc: values::VALUES_DOC };

fn value_choice(s: &FormatSpec) -> Result<values::ValueChoice> {
    let name = s.choice("values", values::VALUE_CHOICES)?;
    Ok(values::ValueChoice::parse(name).expect("every VALUE_CHOICES name parses"))
}

fn lanes(s: &FormatSpec) -> Result<Option<u32>> {
    match s.auto_usize("lanes", 2)? {
        Some(l) if l > 32 || !l.is_power_of_two() => Err(Error::Unsupported(format!(
            "format {}: parameter lanes={l} must be 2, 4, 8, 16, 32 or auto",
            s.name()
        ))),
        l => Ok(l.map(|l| l as u32)),
    }
}

fn max_padding(s: &FormatSpec) -> Result<f64> {
    s.f64("max_padding", 1.0)
}

fn teb_with<T: Scalar>(a: &Csr<T>, s: &FormatSpec, kernel: teb::TebKernel) -> Result<teb::Teb<T>> {
    let k = match s.get("k") {
        Some("auto") => None,
        _ => Some(s.f64("k", 0.0)?),
    };
    match (s.auto_usize("blocks", 1)?, k) {
        (None, None) => teb::Teb::new(a, kernel),
        (Some(blocks), k) => teb::Teb::with_blocks(a, blocks, k.unwrap_or(1.0), kernel),
        (None, Some(_)) => Err(Error::Unsupported(format!(
            "format {}: parameter k needs blocks (the search picks its own k)",
            s.name()
        ))),
    }
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
    // Every format takes an empty matrix, so an error building one is the spec's values'
    // (tune, which builds nothing by itself, checks its values and then declines).
    match info.build_spec(&Csr::zeros(0, 0), &spec) {
        Err(Error::Format { .. }) if info.name == "tune" => Ok(spec),
        Err(e) => Err(e),
        Ok(_) => Ok(spec),
    }
}

/// Parses a list of specs separated by commas, or `all`. A comma also separates a spec's
/// parameters: a piece with `=` and no `:` continues the spec before it, so
/// `csr-vector,sell-c-sigma:c=32,sigma=1024` is two specs.
pub fn parse_spec_list(list: &str) -> Result<Vec<FormatSpec>> {
    let mut specs: Vec<String> = Vec::new();
    for piece in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if piece.eq_ignore_ascii_case("all") {
            specs.extend(registry::<f64>().iter().map(|f| f.name.to_string()));
        } else if piece.contains('=') && !piece.contains(':') {
            match specs.last_mut() {
                Some(last) => {
                    last.push(if last.contains(':') { ',' } else { ':' });
                    last.push_str(piece);
                }
                None => {
                    return Err(Error::Unsupported(format!(
                        "'{piece}' names no format (expected name:key=value)"
                    )))
                }
            }
        } else {
            specs.push(piece.to_string());
        }
    }
    specs.iter().map(|s| parse_spec(s)).collect()
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
pub(crate) fn offsets_u32<T: Scalar>(format: &'static str, a: &Csr<T>) -> Result<Vec<u32>> {
    if a.nnz() > u32::MAX as usize {
        return Err(Error::format(
            format,
            format!(
                "{} entries exceed the 2^32 - 1 that 32-bit device row offsets can address",
                a.nnz()
            ),
        ));
    }
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
            if info.name == "tune" {
                // Measuring needs a backend: built alone, tune declines (bench and auto::tune run it).
                assert!(matches!(build(&spec, &a), Err(Error::Format { .. })));
                continue;
            }
            let m = build(&spec, &a).unwrap();
            assert_eq!(
                (m.name(), m.nrows(), m.nnz(), m.deterministic()),
                (info.name, 2, 2, info.deterministic)
            );
        }
    }

    #[test]
    fn spec_lists_split_on_names_and_bad_values_fail_at_parse_time() {
        let specs =
            parse_spec_list("csr-vector, sell-c-sigma:c=16,sigma=64,ell:max_padding=5,brcp")
                .unwrap();
        let labels: Vec<String> = specs.iter().map(|s| s.label()).collect();
        assert_eq!(
            labels,
            ["csr-vector", "sell-c-sigma:c=16,sigma=64", "ell:max_padding=5", "brcp"]
        );
        assert_eq!(parse_spec_list("all").unwrap().len(), registry::<f64>().len());
        assert!(parse_spec_list("c=3").is_err());
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
}
