//! The device side of every format: the [`DeviceFormat`] trait a format's `gpu.rs`
//! implements (its launches and nothing else), and [`DeviceMatrix`], the one concrete
//! handle every upload returns. The handle checks shapes once, handles empty matrices once,
//! applies α and β, and serialises each product's launches (see [`DeviceMatrix`] on threads).

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaSlice, LaunchArgs, LaunchConfig, PushKernelArg};

use super::host::{shape_error, FormatHandle, HostMatrix, MatrixInfo, TransposeFormat};
use super::FormatStats;
use crate::error::{Error, Result};
use crate::gpu::{
    grid_for, grid_stride, jit, with_sub_slice, with_sub_slice_ref, Gpu, Kernel, KernelModule,
};
use crate::matrix::{Csr, Scalar};
use crate::operator::overlap;
use crate::operator::{check_block, check_transpose, Block, Layout, TransposePath};

/// What a format implements on the device: the launches of `y = A·x`.
///
/// [`DeviceMatrix`] calls these only with `x.len() == ncols`, `y.len() == nrows` and
/// `nrows > 0`, and never from two threads at once; the launches go to `gpu`'s stream (the
/// GPU the format was uploaded to). Use the format through [`DeviceMatrix`]; the launches
/// are `unsafe` because the kernels index `x` and `y` by the matrix's own sizes.
pub trait DeviceFormat<T: Scalar>: Send {
    /// Launches `y = A·x` (asynchronous); every entry of `y` is written.
    ///
    /// # Safety
    /// `x` has the matrix's `ncols` entries and `y` its `nrows`, `nrows > 0`, `gpu` is the
    /// GPU the format was uploaded to, and no other launch of this value runs concurrently.
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()>;

    /// Launches `y = α·A·x + β·y` in the format's own kernels, where it has them (reading
    /// `y` only when β ≠ 0). `None`: the handle computes `A·x` into a scratch vector with
    /// [`DeviceFormat::launch`] and combines it with `y` in one more pass.
    ///
    /// # Safety
    /// As for [`DeviceFormat::launch`].
    unsafe fn launch_scaled(&self, _gpu: &Gpu, _product: Scaled<'_, T>) -> Option<Result<()>> {
        None
    }

    /// The kind of block kernel [`DeviceFormat::launch_block`] runs (`None` where it has none).
    fn block_kernel(&self) -> BlockKernel {
        BlockKernel::None
    }

    /// Launches `Y = α·A·X + β·Y` for a block of vectors (`block.k` columns of `x` and `y`
    /// in `block.layout`) in the format's own block kernel, where it has one (the matrix read
    /// once per tile of columns, not once per vector; each column with the bits of the single
    /// product). `None`: the handle runs one product per column.
    ///
    /// # Safety
    /// As for [`DeviceFormat::launch`], with `x` of `ncols·k` and `y` of `nrows·k` entries.
    unsafe fn launch_block(
        &self, _gpu: &Gpu, _product: Scaled<'_, T>, _block: Block,
    ) -> Option<Result<()>> {
        None
    }

    /// Launches `y = α·Aᵀ·x + β·y` (`x` of `nrows`, `y` of `ncols` entries) where the format
    /// has its own transposed product (a library's). `None`: the handle runs Aᵀ's own format,
    /// built on first use.
    ///
    /// # Safety
    /// As for [`DeviceFormat::launch`], with the lengths of `x` and `y` swapped.
    unsafe fn launch_transpose(&self, _gpu: &Gpu, _product: Scaled<'_, T>) -> Option<Result<()>> {
        None
    }

    /// Device bytes the format allocated beyond its arrays (a library's workspace).
    fn workspace_bytes(&self) -> usize {
        0
    }

    /// Wall time in milliseconds of a conversion the format ran on the GPU while it was
    /// uploaded (from the CSR arrays on the device to its own), when it ran one.
    fn conversion_ms(&self) -> Option<f64> {
        None
    }
}

/// A format's own block kernel, which decides whether a copy's serves a block better
/// ([`DeviceMatrix::block_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKernel {
    /// None: a copy's block product or one product per column.
    None,
    /// Tiles of columns, each entry of the matrix read once and multiplied by a row of the
    /// tile (SELL-C-σ, DIA, HDC; cuSPARSE's SpMM).
    Tiles,
    /// Tiles as above, and for row-major blocks of 8 or more vectors lanes kernels whose
    /// every lane walks a whole row, one entry after another (CSR): the longest row can set
    /// the time, so unbalanced rows go to cuSPARSE's SpMM there ([`block_rule`]).
    RowLanes,
    /// Each column of a tile through the single product's own steps, the matrix read once per
    /// tile (DASP, merge-path CSR): measured (H100, `spmv bench --rhs 4,8,16,32`, the default
    /// set) 1.1–3.4× slower than a CSR copy's tiles on balanced rows at every k, and no faster
    /// than k single products there, so those go to the copy; on power-law rows they stay up
    /// to 31 vectors ([`SPMM_OVER_OWN_FROM_K`]).
    PerColumn,
}

/// Which product serves a block of vectors ([`DeviceMatrix::block_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockPath {
    /// The format's own block kernel: column j has the bits of the format's single product.
    Own,
    /// The block kernel of a copy in this format, built on first use.
    Copy(&'static str),
    /// One product of the format per column.
    Columns,
}

/// The formats of the copies block products may keep (`block_copy_choice` picks one by index).
const BLOCK_COPIES: [&str; 2] = ["csr-vector", "cusparse-alg1"];
/// [`BLOCK_COPIES`]' CSR copy (its tile and lanes kernels).
const CSR_COPY: usize = 0;
/// [`BLOCK_COPIES`]' cuSPARSE copy (its SpMM).
const SPMM_COPY: usize = 1;

/// Columns of X a tile kernel takes per pass (common.cuh's BLOCK_TILE); row-major blocks run
/// lanes kernels where a format's [`LanesRule`] says so.
pub(crate) const BLOCK_TILE: usize = 8;

/// What [`block_rule`] looks at: the rows of the matrix as given, and the bytes of a product.
#[derive(Clone, Copy, Debug)]
struct RowShape {
    nrows: usize,
    nnz: usize,
    /// Entries of the longest row.
    longest: usize,
    /// Device bytes of a CSR copy (full values, 32-bit columns).
    csr_bytes: usize,
    /// Bytes one product of the format reads.
    format_bytes: usize,
}

impl RowShape {
    /// Rows no longer than this are short enough for the tile kernels whatever the mean.
    const SHORT_ROWS: usize = 2048;

    /// Whether a kernel that gives each row to one thread group does well enough: the
    /// longest row at most 32 times the mean + 256, or below 8 vectors (the tile kernels,
    /// which split a row over lanes) at most [`RowShape::SHORT_ROWS`] entries.
    fn balanced(&self, k: usize) -> bool {
        self.longest <= 32 * self.nnz.div_ceil(self.nrows.max(1)) + 256
            || (k < BLOCK_TILE && self.longest <= Self::SHORT_ROWS)
    }

    /// Whether CSR's lanes kernels (row-major, 8 or more vectors), whose group walks a row
    /// alone, one batch of entries after another, would wait longer on the longest row's
    /// memory latencies than cuSPARSE's SpMM takes for the whole block. Measured on an H100
    /// (`spmv bench --rhs 8,16,32`, back to back, the same time in two runs): the lanes
    /// kernels took 0.12–0.22 µs per entry of the longest row at every k on matrices of
    /// 1.7–6·10^5 entries whose rows' bytes are few (`cond-mat-2005`, longest 278: 37 / 54 /
    /// 50 µs at k = 8 / 16 / 32; `nasa2910`, 175: 22 / 31 / 28; `bcsstk33`, 141: 21 / 25 /
    /// 30; `Kuu`, 98: 15 / 21 / 20), SpMM about 20 µs plus 30 µs per 10^6 entries at each k
    /// (36, 19, 37, 26 µs; `lab/results/lanes-prefetch-h100.txt`).
    fn lanes_wait_on_longest_row(&self) -> bool {
        const LANES_NS_PER_LONGEST_ENTRY: f64 = 150.0;
        const SPMM_NS: f64 = 20_000.0;
        const SPMM_NS_PER_ENTRY: f64 = 0.03;
        self.longest as f64 * LANES_NS_PER_LONGEST_ENTRY
            > SPMM_NS + self.nnz as f64 * SPMM_NS_PER_ENTRY
    }
}

/// From this many vectors cuSPARSE's SpMM serves unbalanced rows better than DASP's and
/// merge-path CSR's own block kernels, which read the matrix once per 8 columns: H100, `spmv
/// bench --rhs 16,32` (`lab/results/products-default-h100-29f1c45.json.gz`), per-launch µs
/// DASP / SpMM at k = 16 and 32: `kron:scale=20` 2551 / 1948 and 5109 / 2306, `powerlaw`
/// 1625 / 1853 and 3264 / 2524, `longrows` 977 / 1423 and 1964 / 2220.
const SPMM_OVER_OWN_FROM_K: usize = 32;

/// [`DeviceMatrix::apply_block`]'s rule for `k ≥ 2` vectors (a matrix in its given row order):
/// whether the format's own block kernel (`kernel`) serves `block`, and the copy of
/// [`BLOCK_COPIES`] that serves it otherwise, if one does (`spmm`: cuSPARSE's SpMM runs in
/// this precision). Measured (H200, `spmv bench --rhs`): CSR's kernels of 8 or more vectors
/// give a row to one thread group, so on power-law rows (`kron:scale=20`, `powerlaw`,
/// `longrows`, `wiki-Vote`) a CSR copy was 10–20× slower than k products, and cuSPARSE's SpMM
/// 2–4× faster than them from k = 16 (near them at k = 8, slower at k = 4). Up to 8 vectors
/// the CSR tile kernel splits a row over lanes as csr-vector does, and rows of up to
/// [`RowShape::SHORT_ROWS`] entries cost it little (`wiki-Vote`, k = 4, from Python: the copy
/// 2.7× faster than k products of HYB). Each product also costs about `LAUNCH_BYTES` beyond
/// its bytes, which is what decides on small matrices (`bcsstk33`, `nasa2910`, k = 4: the copy
/// 2.5–2.8× faster than k products of CSR with coded values and columns, which read 4–5×
/// fewer bytes). So CSR's own row-major kernels of 8 or more vectors leave unbalanced rows to
/// cuSPARSE's SpMM too (H100, `csr-vector`, µs at k = 8 / 16 / 32: `kron:scale=20` 13,188 /
/// 18,763 / 19,371 against SpMM's 1,868 / 1,948 / 2,306; `powerlaw` 49,993 / 73,138 / 73,266
/// against 1,659 / 1,853 / 2,524), and DASP and merge-path CSR from [`SPMM_OVER_OWN_FROM_K`].
/// Row-major blocks of 8 or more whose longest row CSR's lanes kernels would walk for longer
/// than SpMM takes ([`RowShape::lanes_wait_on_longest_row`]: small matrices with rows of a few
/// hundred entries) go to SpMM too, whichever format's.
fn block_rule(kernel: BlockKernel, s: RowShape, block: Block, spmm: bool) -> (bool, Option<usize>) {
    /// A launch and its ramp in bytes streamed meanwhile (about 5 µs at 4 TB/s).
    const LAUNCH_BYTES: u128 = 20 << 20;
    let spmm_copy = (spmm && block.k >= BLOCK_TILE).then_some(SPMM_COPY);
    let unbalanced = !s.balanced(block.k);
    // The CSR kernels a row-major block of 8 or more would run (CSR's own, a CSR copy's) are
    // lanes kernels.
    let lanes_wait = block.layout == Layout::RowMajor && s.lanes_wait_on_longest_row();
    let copy = if unbalanced || (lanes_wait && spmm_copy.is_some()) {
        spmm_copy
    } else {
        let per_pass = match block.layout {
            Layout::RowMajor if block.k > 2 * BLOCK_TILE => 32,
            Layout::RowMajor if block.k > BLOCK_TILE => 16,
            _ => BLOCK_TILE,
        };
        let passes = block.k.div_ceil(per_pass) as u128;
        let products = block.k as u128;
        let (csr, format) = (s.csr_bytes as u128, s.format_bytes as u128);
        (passes * (csr + LAUNCH_BYTES) < products * (format + LAUNCH_BYTES)).then_some(CSR_COPY)
    };
    let own = match kernel {
        BlockKernel::None => false,
        BlockKernel::Tiles => true,
        BlockKernel::RowLanes => copy != Some(SPMM_COPY) || block.layout == Layout::ColMajor,
        BlockKernel::PerColumn => match copy {
            Some(CSR_COPY) => false,
            // Unbalanced rows; balanced ones that only the CSR copy's lanes would wait on
            // are SpMM's (the CSR copy served them before).
            Some(_) => unbalanced && block.k < SPMM_OVER_OWN_FROM_K,
            None => true,
        },
    };
    (own, copy)
}

/// Bytes of a row of X a wide lanes kernel's lane reads (common.cuh's WIDE_COLUMNS).
const WIDE_BYTES: usize = 32;

/// Which row-major blocks a format's lanes kernels take; the rest run its tile kernel.
/// Measured on the H200 (f64, row-major, a 7-point stencil of 2.1·10^6 rows in DIA and a
/// random CSR matrix of 2·10^6 rows of 16 entries, kernels of the same shapes written apart):
/// the tile kernel's thread per row loads its 8 columns of X one by one, 32 rows' loads 64
/// bytes apart, so each load instruction touches 16 cache lines: DIA at k = 8 took 0.291 ms,
/// the wide kernel with 2 lanes of 4 columns 0.120 ms (the byte bound 0.103); k = 16: 0.388
/// (16 lanes of one column) → 0.217; k = 32: 0.762 → 0.405; k = 4: 0.087 → 0.071. CSR's rows
/// are read by the group, G entries at once, so it wants groups of 4 or more: k = 8, tiles of
/// 16 lanes 1.19 ms, 8 lanes of one column 0.82, 2 wide lanes 0.95; k = 16: 16 lanes 1.22,
/// 4 wide lanes 1.08; k = 32: 2.19 → 2.04; k = 4: tiles 0.62, 4 lanes 0.72.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LanesRule {
    /// The fewest vectors the one-column lanes kernels take.
    from_k: usize,
    /// The fewest lanes per row a wide kernel may have.
    min_wide_lanes: usize,
}

impl LanesRule {
    /// Formats whose single product gives each row a thread (DIA, SELL-C-σ).
    pub(crate) const THREAD_PER_ROW: LanesRule =
        LanesRule { from_k: BLOCK_TILE + 1, min_wide_lanes: 1 };
    /// CSR, whose groups read a row's entries together.
    pub(crate) const GROUP_READS_ROW: LanesRule =
        LanesRule { from_k: BLOCK_TILE, min_wide_lanes: 4 };

    /// The lanes kernel for a row-major block of `k` vectors of `T`, X and Y 16-byte aligned
    /// or not: (wide, lanes per row), or `None` for the tile kernel.
    fn choose<T>(self, k: usize, aligned: bool) -> Option<(bool, usize)> {
        let per_lane = WIDE_BYTES / std::mem::size_of::<T>();
        if aligned && k.is_multiple_of(per_lane) {
            let lanes = (k / per_lane).next_power_of_two().min(8);
            if lanes >= self.min_wide_lanes {
                return Some((true, lanes));
            }
        }
        (k >= self.from_k).then_some((false, k.next_power_of_two().clamp(8, 32)))
    }
}

/// What a format loads on its first block product in each layout (row-major, column-major):
/// its block kernels, which take the layout in their names (`_row`, `_col`).
pub(crate) struct PerLayout<K>([OnceLock<K>; 2]);

impl<K> Default for PerLayout<K> {
    fn default() -> Self {
        PerLayout(Default::default())
    }
}

impl<K> PerLayout<K> {
    /// The item for `layout`, made by `load` (given `"row"` or `"col"`) on first use.
    pub(crate) fn get_or_load(
        &self, layout: Layout, load: impl FnOnce(&str) -> Result<K>,
    ) -> Result<&K> {
        let (slot, name) = match layout {
            Layout::RowMajor => (0, "row"),
            Layout::ColMajor => (1, "col"),
        };
        if let Some(item) = self.0[slot].get() {
            return Ok(item);
        }
        let item = load(name)?;
        Ok(self.0[slot].get_or_init(|| item))
    }
}

/// A format's block kernels (common.cuh: tiles and lanes) of `module`: `{tiles}_row_{T}` and
/// `{tiles}_col_{T}` over a tile of 8 columns at a time, launched like the format's single
/// product; for row-major blocks, as its [`LanesRule`] says, `{lanes}_g8_{T}` .. `_g32_{T}`
/// (a group of 8, 16 or 32 lanes per row, one column each, as many as k up to 32) and the wide
/// `{lanes}_w1_{T}` .. `_w8_{T}` (1 to 8 lanes of 32 bytes of columns each). Each is loaded —
/// its module compiled — on its first block product. All take (m, n, k) before the format's
/// arguments and (α, β) after.
pub(crate) struct BlockKernels {
    module: &'static KernelModule,
    tiles: String,
    lanes: String,
    tiles_config: LaunchConfig,
    rows: usize,
    rule: LanesRule,
    /// Row-major tiles, column-major tiles, lanes of 8, 16 and 32, wide lanes of 1, 2, 4, 8.
    loaded: [OnceLock<Kernel>; 9],
}

impl BlockKernels {
    /// The kernels of a format of `rows` rows whose single product launches with `config`.
    pub(crate) fn new(
        module: &'static KernelModule, tiles: String, lanes: String, config: LaunchConfig,
        rows: usize, rule: LanesRule,
    ) -> Result<Self> {
        Ok(BlockKernels {
            module,
            tiles,
            lanes,
            tiles_config: config,
            rows,
            rule,
            loaded: Default::default(),
        })
    }

    /// The kernel for `block` with X of `x_len` entries (`aligned`: X and Y start on 16
    /// bytes), and the kernels' k and n (the columns, `x_len / k`) as u32 (`None` past it: the
    /// handle then runs one product per column).
    pub(crate) fn get<T: Scalar>(
        &self, gpu: &Gpu, block: Block, x_len: usize, aligned: bool,
    ) -> Option<Result<(&Kernel, u32, u32)>> {
        let k = u32::try_from(block.k).ok()?;
        let n = u32::try_from(x_len / block.k).ok()?;
        let lanes = match block.layout {
            Layout::RowMajor => self.rule.choose::<T>(block.k, aligned),
            Layout::ColMajor => None,
        };
        let log2 = |g: usize| g.trailing_zeros() as usize;
        let (slot, name, config) = match lanes {
            Some((wide, group)) => (
                if wide { 5 + log2(group) } else { 2 + log2(group) - 3 },
                format!("{}_{}{group}", self.lanes, if wide { "w" } else { "g" }),
                grid_for(self.rows as u64 * group as u64, 256),
            ),
            None if block.layout == Layout::RowMajor => {
                (0, format!("{}_row", self.tiles), Ok(self.tiles_config))
            }
            None => (1, format!("{}_col", self.tiles), Ok(self.tiles_config)),
        };
        let slot = &self.loaded[slot];
        if let Some(kernel) = slot.get() {
            return Some(Ok((kernel, k, n)));
        }
        Some(
            config
                .and_then(|config| Kernel::for_type::<T>(gpu, self.module, &name, config))
                .map(|kernel| (slot.get_or_init(|| kernel), k, n)),
        )
    }
}

/// Whether X and Y of a block product both start on 16 bytes (the wide lanes kernels' loads).
pub(crate) fn wide_aligned<T>(x: &CudaSlice<T>, y: &CudaSlice<T>) -> bool {
    device_range(x).start.is_multiple_of(16) && device_range(y).start.is_multiple_of(16)
}

/// The operands of one product `y = α·A·x + β·y`, as [`DeviceFormat::launch_scaled`] takes
/// them.
pub struct Scaled<'a, T> {
    /// α.
    pub alpha: T,
    /// `x`, of the matrix's `ncols` entries.
    pub x: &'a CudaSlice<T>,
    /// β (`y` is read only when β ≠ 0).
    pub beta: T,
    /// `y`, of the matrix's `nrows` entries.
    pub y: &'a mut CudaSlice<T>,
}

/// A format's stored entries on the device: the column and the value of each slot, in the
/// format's own order (padding included). Almost every format has them; a kernel takes them
/// as two pointers (`entries.col_idx`, `entries.values`).
pub struct DeviceEntries<T> {
    /// Column of each slot, in the format's order.
    pub col_idx: CudaSlice<u32>,
    /// Value of each slot, in the same order.
    pub values: CudaSlice<T>,
}

impl<T: Scalar> DeviceEntries<T> {
    /// Uploads the two arrays (of equal length; empty ones as one unread element, see
    /// [`Gpu::upload_nonempty`]).
    pub fn upload(gpu: &Gpu, col_idx: &[u32], values: &[T]) -> Result<Self> {
        debug_assert_eq!(col_idx.len(), values.len());
        Ok(DeviceEntries {
            col_idx: gpu.upload_nonempty(col_idx)?,
            values: gpu.upload_nonempty(values)?,
        })
    }

    /// Pushes the two arrays as the kernel's `const u32* col_idx, const T* values` arguments.
    pub fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        args.arg(&self.col_idx).arg(&self.values);
    }
}

/// A count as a 32-bit kernel argument; `what` names it in the error (the conversions'
/// checks keep the counts they pass below 2^32, so this fails only on a broken invariant).
pub(crate) fn arg_u32(format: &'static str, what: &str, v: usize) -> Result<u32> {
    u32::try_from(v)
        .map_err(|_| Error::format(format, format!("{v} {what} exceed a 32-bit kernel argument")))
}

/// One argument of a format's kernel before `x` and `y`, uploaded once ([`OneKernel`]).
pub(crate) enum Arg<T> {
    /// `u32 m, u32 n`: `y.len()` and `x.len()` at each launch (the matrix's, checked by the
    /// device layer; below 2^32 wherever a format uses it).
    Dims,
    /// `u32 n`: `x.len()` at each launch.
    Cols,
    /// A `u32` fixed at upload.
    Count(u32),
    /// `const u32*`.
    U32s(CudaSlice<u32>),
    /// `const int*`.
    I32s(CudaSlice<i32>),
    /// `const u64*`.
    U64s(CudaSlice<u64>),
    /// `const T*`.
    Values(CudaSlice<T>),
}

impl<T: Scalar> Arg<T> {
    /// The array as `const u32*` (empty as one unread element, see [`Gpu::upload_nonempty`]).
    pub(crate) fn u32s(gpu: &Gpu, a: &[u32]) -> Result<Self> {
        Ok(Arg::U32s(gpu.upload_nonempty(a)?))
    }
    /// The array as `const int*` (likewise).
    pub(crate) fn i32s(gpu: &Gpu, a: &[i32]) -> Result<Self> {
        Ok(Arg::I32s(gpu.upload_nonempty(a)?))
    }
    /// The array as `const u64*` (likewise).
    pub(crate) fn u64s(gpu: &Gpu, a: &[u64]) -> Result<Self> {
        Ok(Arg::U64s(gpu.upload_nonempty(a)?))
    }
    /// The array as `const T*` (likewise).
    pub(crate) fn values(gpu: &Gpu, a: &[T]) -> Result<Self> {
        Ok(Arg::Values(gpu.upload_nonempty(a)?))
    }
}

/// The device side of a format with one kernel, launched once per product with its uploaded
/// arguments, then `const T* x, T* y`, and writing every `y[r]`: such formats keep nothing
/// else, so they share this launch.
pub(crate) struct OneKernel<T> {
    args: Vec<Arg<T>>,
    kernel: Kernel,
    /// Block kernels taking the same arguments, (m, n) widened to (m, n, k), if it has them.
    block: Option<BlockKernels>,
}

impl<T: Scalar> OneKernel<T> {
    /// Launches of `kernel` with `args`.
    ///
    /// # Safety
    /// `kernel`'s parameters are `args` in order ([`Arg::Dims`] as two), then `const T* x,
    /// T* y`; with any `x` of the matrix's `ncols` entries and `y` of its `nrows` (`nrows > 0`),
    /// on `kernel`'s grid, it accesses memory only inside these buffers and writes every `y[r]`.
    pub(crate) unsafe fn new(kernel: Kernel, args: Vec<Arg<T>>) -> Self {
        OneKernel { args, kernel, block: None }
    }

    /// The same with block kernels (common.cuh's shapes) whose parameters are (m, n, k), then
    /// `args` after their leading [`Arg::Dims`], then `x, y, α, β`.
    ///
    /// # Safety
    /// As for [`OneKernel::new`], for x of `ncols·k` and y of `nrows·k` entries in either
    /// layout; `args` starts with [`Arg::Dims`].
    pub(crate) unsafe fn with_block(mut self, block: BlockKernels) -> Self {
        debug_assert!(matches!(self.args.first(), Some(Arg::Dims)));
        self.block = Some(block);
        self
    }

    /// Pushes the arguments after [`Arg::Dims`] (as (m, n) where `dims` is given).
    fn push_args<'a>(&'a self, a: &mut LaunchArgs<'a>, dims: Option<(&'a u32, &'a u32)>) {
        for arg in &self.args {
            match arg {
                Arg::Dims => {
                    if let Some((m, n)) = dims {
                        a.arg(m).arg(n);
                    }
                }
                Arg::Cols => {
                    if let Some((_, n)) = dims {
                        a.arg(n);
                    }
                }
                Arg::Count(c) => {
                    a.arg(c);
                }
                Arg::U32s(s) => {
                    a.arg(s);
                }
                Arg::I32s(s) => {
                    a.arg(s);
                }
                Arg::U64s(s) => {
                    a.arg(s);
                }
                Arg::Values(s) => {
                    a.arg(s);
                }
            }
        }
    }

    /// The kernels of the row formats: `(u32 counts…, const u32* index arrays…, const u32*
    /// col_idx, const T* values)`, then `x, y`.
    ///
    /// # Safety
    /// As for [`OneKernel::new`] with these arguments.
    pub(crate) unsafe fn entries(
        gpu: &Gpu, kernel: Kernel, counts: &[u32], index: &[&[u32]],
        (col_idx, values): (&[u32], &[T]),
    ) -> Result<Self> {
        let mut args: Vec<Arg<T>> = counts.iter().map(|&c| Arg::Count(c)).collect();
        for a in index.iter().chain([&col_idx]) {
            args.push(Arg::u32s(gpu, a)?);
        }
        args.push(Arg::values(gpu, values)?);
        // SAFETY: the caller's.
        Ok(unsafe { OneKernel::new(kernel, args) })
    }
}

impl<T: Scalar> DeviceFormat<T> for OneKernel<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (m, n) = (y.len() as u32, x.len() as u32);
        // SAFETY: the arguments are pushed in the order `new`'s contract names, x and y have
        // the matrix's lengths and nrows > 0 (this method's contract), so that contract (the
        // caller's of `new`, which says why per format) bounds every access.
        unsafe {
            self.kernel.launch(gpu, |a| {
                self.push_args(a, Some((&m, &n)));
                a.arg(x).arg(y);
            })
        }
    }
    fn block_kernel(&self) -> BlockKernel {
        if self.block.is_some() {
            BlockKernel::Tiles
        } else {
            BlockKernel::None
        }
    }
    unsafe fn launch_block(&self, gpu: &Gpu, p: Scaled<'_, T>, block: Block) -> Option<Result<()>> {
        let kernels = self.block.as_ref()?;
        // SAFETY: `with_block`'s contract: the block kernels take (m, n, k), the arguments
        // after Dims, then x, y, α, β; x and y hold ncols·k and nrows·k entries (this
        // method's contract), m = nrows > 0.
        launch_block_kernels!(kernels, gpu, p, block, m = (p.y.len() / block.k) as u32, |a| {
            self.push_args(a, None);
        })
    }
}

/// The parts of a [`DeviceMatrix`] one product uses, behind its lock.
struct Product<T: Scalar> {
    format: Box<dyn DeviceFormat<T>>,
    /// `A·x` for the α/β epilogue of formats without scaled kernels; allocated on first use.
    scratch: Option<CudaSlice<T>>,
}

/// A matrix in one format on one GPU, ready for `y = α·A·x + β·y`.
///
/// Every format's upload returns this type. `apply` checks the vector lengths (an
/// [`Error::Shape`](crate::Error::Shape), never a panic), returns at once for a matrix
/// without rows, and runs the format's launches on the GPU's stream (asynchronously:
/// downloading `y` or [`Gpu::synchronize`] waits for it).
///
/// **Threads.** A `DeviceMatrix` is `Send` and `Sync`. Each product enqueues its launches
/// while holding the handle's lock, so products from several threads run one after another
/// in the order they took the lock, on the GPU's one stream, and a format's scratch buffers
/// (carries, counters, partial sums, the α/β scratch vector) belong to one handle and are
/// never shared with another. Two threads that share a `y` still race on it, as on the CPU.
pub struct DeviceMatrix<T: Scalar> {
    gpu: Arc<Gpu>,
    info: MatrixInfo,
    stats: FormatStats,
    device_bytes: usize,
    bytes_read: usize,
    conversion_ms: Option<f64>,
    axpby: Kernel,
    product: Mutex<Product<T>>,
    /// The CSR the format was built from (shared, no copy): the transposed product's source.
    source: Csr<T>,
    /// Aᵀ on the same GPU in the format `transpose_format` builds (`csr-vector` without one),
    /// built on the first transposed product of a format without its own, with that format's
    /// label (the chosen one's for a chooser).
    transposed: OnceLock<(Box<DeviceMatrix<T>>, String)>,
    transpose_format: Option<TransposeFormat<T>>,
    /// How a transposed product without the format's own kernel runs (set_transpose_path).
    transpose_path: Mutex<TransposePath>,
    /// The format was named, not chosen: its own transposed kernel runs Aᵀ (a chooser's
    /// handle takes Aᵀ's own format instead: cuSPARSE's transposed SpMV, which `auto` may
    /// pick for A, ran 4.7× slower than a copy of Aᵀ on vsp_model1_crew1, H200).
    own_transpose: bool,
    /// Copies on the same GPU for the block products of a format without its own block
    /// kernel, one per format of [`BLOCK_COPIES`] (`csr-vector` where the rows are balanced,
    /// else cuSPARSE's: which one depends on k), each built on the first block product it
    /// serves ([`DeviceMatrix::apply_block`]).
    block_copies: [OnceLock<Box<DeviceMatrix<T>>>; BLOCK_COPIES.len()],
    /// `source` is P·A·Pᵀ (a reordered handle): no copy is built from it.
    source_permuted: bool,
    /// The longest row's entries (see `block_copy_choice`; found on the first block product
    /// that asks).
    longest_row: OnceLock<usize>,
}

impl<T: Scalar> FormatHandle for DeviceMatrix<T> {
    fn info(&self) -> &MatrixInfo {
        &self.info
    }
}

impl<T: Scalar> DeviceMatrix<T> {
    pub(crate) fn new(
        gpu: &Arc<Gpu>, host: &HostMatrix<T>, format: Box<dyn DeviceFormat<T>>,
    ) -> Result<Self> {
        let stats = host.stats();
        let axpby = Kernel::for_type::<T>(
            gpu,
            &jit::UTIL_MODULE,
            "axpby",
            grid_stride(host.nrows() as u64),
        )?;
        Ok(DeviceMatrix {
            gpu: gpu.clone(),
            info: host.info().clone(),
            device_bytes: stats.bytes + format.workspace_bytes(),
            bytes_read: host.bytes_read(),
            conversion_ms: format.conversion_ms(),
            stats,
            axpby,
            product: Mutex::new(Product { format, scratch: None }),
            source: host.source().clone(),
            transposed: OnceLock::new(),
            transpose_format: host.transpose_format().cloned(),
            transpose_path: Mutex::new(TransposePath::Auto),
            own_transpose: host.chosen().is_none(),
            block_copies: Default::default(),
            source_permuted: host.source_permuted(),
            longest_row: OnceLock::new(),
        })
    }

    /// The format's statistics, as computed on the host.
    pub fn stats(&self) -> &FormatStats {
        &self.stats
    }
    /// Device bytes of the format's arrays and any workspace it keeps (not the α/β scratch).
    pub fn device_bytes(&self) -> usize {
        self.device_bytes
    }
    /// Bytes of the format one product reads (padding the kernel skips not counted).
    pub fn bytes_read(&self) -> usize {
        self.bytes_read
    }
    /// Wall time in milliseconds of the conversion the format ran on the GPU during the
    /// upload (`csr5:convert=gpu`), if it ran one.
    pub fn conversion_ms(&self) -> Option<f64> {
        self.conversion_ms
    }
    /// The GPU the matrix lives on; products run on its stream.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// `y = α·A·x + β·y` on the GPU's stream. β = 0 never reads `y` (a NaN-poisoned `y`
    /// is fine); α = 0 does not run the product. An `x` that overlaps `y` (possible only
    /// through `upgrade_device_ptr`) is an [`Error::Shape`](crate::Error::Shape).
    pub fn apply(&self, alpha: T, x: &CudaSlice<T>, beta: T, y: &mut CudaSlice<T>) -> Result<()> {
        if let Some(e) = shape_error(&self.info, x.len(), y.len()) {
            return Err(e);
        }
        disjoint(x, y)?;
        if self.info.nrows == 0 {
            return Ok(());
        }
        let gpu = &*self.gpu;
        gpu.context().bind_to_thread()?;
        let mut product = self.product.lock().unwrap_or_else(|p| p.into_inner());
        if alpha == T::ZERO {
            return self.epilogue(T::ZERO, None, beta, y);
        }
        // SAFETY (the three launches below): x and y have the matrix's lengths (checked
        // above, and the scratch vector is allocated with nrows entries), nrows > 0, `gpu` is
        // the GPU of the upload, and the lock makes this the only product of this handle.
        if alpha == T::ONE && beta == T::ZERO {
            return unsafe { product.format.launch(gpu, x, y) };
        }
        if let Some(done) =
            unsafe { product.format.launch_scaled(gpu, Scaled { alpha, x, beta, y }) }
        {
            return done;
        }
        let Product { format, scratch } = &mut *product;
        let scratch = match scratch {
            Some(s) => s,
            None => scratch.insert(gpu.alloc::<T>(self.info.nrows)?),
        };
        unsafe { format.launch(gpu, x, scratch) }?;
        self.epilogue(alpha, Some(scratch), beta, y)
    }

    /// `y = α·Aᵀ·x + β·y` on the GPU's stream: in the format's own transposed product where
    /// it has one (cuSPARSE's) and was named rather than chosen by `auto` or `tune`, else
    /// through Aᵀ stored as a matrix of its own, by the handle's
    /// [`TransposePath`] ([`DeviceMatrix::set_transpose_path`]; `Auto` by default): a copy
    /// uploaded on the first call in the format the chooser of A's format picks for Aᵀ's own
    /// structure (`auto`; `csr-vector` for a handle built without a chooser), costing its device
    /// bytes ([`DeviceMatrix::transposed_bytes`]) and one host transpose and build, after which
    /// every product is a forward product of Aᵀ; or, one-off, Aᵀ transposed and uploaded for
    /// this product only. Deterministic where Aᵀ's format is.
    pub fn apply_transpose(
        &self, alpha: T, x: &CudaSlice<T>, beta: T, y: &mut CudaSlice<T>,
    ) -> Result<()> {
        check_transpose((self.info.nrows, self.info.ncols), x.len(), y.len())?;
        disjoint(x, y)?;
        if self.info.ncols == 0 {
            return Ok(());
        }
        if self.own_transpose && self.info.nrows > 0 && alpha != T::ZERO {
            let gpu = &*self.gpu;
            gpu.context().bind_to_thread()?;
            let product = self.product.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: x has nrows > 0 and y ncols > 0 entries (checked above), `gpu` is the
            // upload's, and the lock makes this the only product of this handle.
            if let Some(done) =
                unsafe { product.format.launch_transpose(gpu, Scaled { alpha, x, beta, y }) }
            {
                return done;
            }
        }
        self.with_transposed(|at| at.apply(alpha, x, beta, y))
    }

    /// `Y = α·Aᵀ·X + β·Y` for `block.k` vectors (X of `nrows·k`, Y of `ncols·k` entries) on the
    /// GPU's stream: Aᵀ's block product ([`DeviceMatrix::apply_block`]) through the handle's
    /// [`TransposePath`], as [`DeviceMatrix::apply_transpose`] takes it (a format's own
    /// transposed kernel runs single vectors only).
    pub fn apply_transpose_block(
        &self, alpha: T, x: &CudaSlice<T>, beta: T, y: &mut CudaSlice<T>, block: Block,
    ) -> Result<()> {
        check_block((self.info.ncols, self.info.nrows), x.len(), y.len(), block)?;
        disjoint(x, y)?;
        if self.info.ncols == 0 {
            return Ok(());
        }
        self.with_transposed(|at| at.apply_block(alpha, x, beta, y, block))
    }

    /// How a transposed product runs where the format has no transposed kernel of its own
    /// (`Auto` until set). A copy once built serves `Copy` and `Auto`; `OneOff` always
    /// transposes afresh.
    pub fn set_transpose_path(&self, path: TransposePath) {
        *self.transpose_path.lock().unwrap_or_else(|p| p.into_inner()) = path;
    }

    /// The handle's [`TransposePath`].
    pub fn transpose_path(&self) -> TransposePath {
        *self.transpose_path.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on Aᵀ: the kept copy (built now if the path says so), or a one-off upload.
    fn with_transposed(&self, f: impl FnOnce(&DeviceMatrix<T>) -> Result<()>) -> Result<()> {
        let path = self.transpose_path();
        if let (Some((t, _)), false) = (self.transposed.get(), path == TransposePath::OneOff) {
            return f(t);
        }
        if self.source_permuted {
            return Err(Error::Unsupported(super::host::PERMUTED_SOURCE.into()));
        }
        let copy = match path {
            TransposePath::Copy => true,
            TransposePath::OneOff => false,
            // A's CSR bytes stand for the copy's: Aᵀ has the same entries.
            TransposePath::Auto => {
                2 * super::csr::device_bytes(&self.source) <= self.gpu.free_memory()?
            }
        };
        if copy {
            return f(self.transposed()?);
        }
        let at = super::build(&super::parse_spec("csr-vector")?, &self.source.transpose()?)?;
        let at = at.upload(&self.gpu)?;
        let result = f(&at);
        // Its buffers are freed on drop: the products queued on them finish first.
        let finished = self.gpu.synchronize();
        result.and(finished)
    }

    /// Aᵀ on this GPU, built and uploaded on the first call.
    fn transposed(&self) -> Result<&DeviceMatrix<T>> {
        if let Some((t, _)) = self.transposed.get() {
            return Ok(t);
        }
        let at = self.source.transpose()?;
        let host = match &self.transpose_format {
            Some(build) => build(&at)?,
            None => super::build(&super::parse_spec("csr-vector")?, &at)?,
        };
        let label = host.chosen().unwrap_or_else(|| host.spec().label());
        let t = host.upload(&self.gpu)?;
        Ok(&self.transposed.get_or_init(|| (Box::new(t), label)).0)
    }

    /// Device bytes of the copy of Aᵀ the transposed product keeps, once built (`None`
    /// before the first transposed product, and for formats with their own).
    pub fn transposed_bytes(&self) -> Option<usize> {
        self.transposed.get().map(|(t, _)| t.device_bytes)
    }

    /// The format of that copy of Aᵀ (the chosen one's label for a chooser), once built.
    pub fn transposed_format(&self) -> Option<&str> {
        self.transposed.get().map(|(_, label)| label.as_str())
    }

    /// `Y = α·A·X + β·Y` for `block.k` vectors on the GPU's stream, the first of:
    /// 1. the format's own block kernels (CSR over full values, SELL-C-σ, DIA, HDC: tiles of
    ///    8 columns in either layout, a group of 16 or 32 lanes per row over consecutive
    ///    columns for row-major blocks of more than 8 — [`BlockKernels`]; DASP and merge-path
    ///    CSR: their kernels written once for both products (common.cuh's `BlockColumns`),
    ///    one launch per 8 columns, each column through the single product's steps; cuSPARSE's
    ///    SpMM): column j has the bits of the format's single product A·x_j (CSR-scalar's for
    ///    CSR's lanes kernels); except where rule 2's copy serves better ([`block_rule`]):
    ///    DASP's and merge-path CSR's balanced rows, and on unbalanced rows CSR's row-major
    ///    blocks of 8 or more vectors and DASP's and merge-path CSR's blocks of 32 or more;
    /// 2. a copy's block product, built on first use ([`DeviceMatrix::block_copy_bytes`]):
    ///    for k ≥ 2 where the matrix's rows are balanced (the longest at most 32 times the
    ///    mean + 256, or below 8 vectors at most 2048 entries) and a CSR copy costs less than
    ///    k products of the format (matrix bytes read once per 8 columns, or per 16 or 32 with
    ///    the lanes kernels, against k·bytes read, each pass or product with a launch's worth
    ///    of bytes added: a compressed or diagonal format can be small enough to keep), a
    ///    `csr-vector` copy's block kernels; for k ≥ 8 where they are not, in f64 and f32, a
    ///    cuSPARSE copy's SpMM, which spreads long rows over the GPU where a CSR kernel gives
    ///    each row to one thread group;
    /// 3. one product of the format per column, in place for column-major blocks, through
    ///    column-major copies for row-major ones: column j has the single product's bits.
    pub fn apply_block(
        &self, alpha: T, x: &CudaSlice<T>, beta: T, y: &mut CudaSlice<T>, block: Block,
    ) -> Result<()> {
        let (m, n, k) = (self.info.nrows, self.info.ncols, block.k);
        check_block((m, n), x.len(), y.len(), block)?;
        disjoint(x, y)?;
        if m == 0 {
            return Ok(()); // nothing to write, however many (empty) vectors the block says
        }
        let (own, copy) = self.block_route(block);
        if own {
            if let Some(done) = self.native_block(Scaled { alpha, x, beta, y: &mut *y }, block) {
                return done;
            }
        }
        if let Some(copy) = copy {
            let p = Scaled { alpha, x, beta, y: &mut *y };
            if let Some(done) = self.block_copy(copy)?.native_block(p, block) {
                return done;
            }
        }
        // The column-major block product, one column at a time.
        let columns = |x: &CudaSlice<T>, y: &mut CudaSlice<T>| {
            (0..k).try_for_each(|j| {
                with_sub_slice_ref(x, j * n..(j + 1) * n, |xj| {
                    with_sub_slice(y, j * m..(j + 1) * m, |yj| self.apply(alpha, xj, beta, yj))
                })
            })
        };
        if block.layout == Layout::ColMajor {
            return columns(x, y);
        }
        let gpu = &self.gpu;
        gpu.context().bind_to_thread()?;
        let mut xc = gpu.alloc::<T>((n * k).max(1))?;
        let mut yc = gpu.alloc::<T>((m * k).max(1))?;
        self.transpose_copy((n, k), x, &mut xc)?;
        if beta != T::ZERO {
            self.transpose_copy((m, k), y, &mut yc)?;
        }
        with_sub_slice_ref(&xc, 0..n * k, |xc| {
            with_sub_slice(&mut yc, 0..m * k, |yc| columns(xc, yc))
        })?;
        self.transpose_copy((k, m), &yc, y)
    }

    /// Which product serves `block` in [`DeviceMatrix::apply_block`]: the format's own
    /// block kernel, a copy's, or one product per column (see there).
    pub fn block_path(&self, block: Block) -> BlockPath {
        match self.block_route(block) {
            (true, _) => BlockPath::Own,
            (false, Some(copy)) => BlockPath::Copy(BLOCK_COPIES[copy]),
            (false, None) => BlockPath::Columns,
        }
    }

    /// Whether the format's own block kernel comes first for `block`, and the copy whose
    /// block product serves it otherwise, if one does ([`block_rule`]).
    fn block_route(&self, block: Block) -> (bool, Option<usize>) {
        let kernel = self.product.lock().unwrap_or_else(|p| p.into_inner()).format.block_kernel();
        if block.k < 2 || self.source_permuted {
            return (kernel != BlockKernel::None, None);
        }
        let a = &self.source;
        let shape = RowShape {
            nrows: a.nrows(),
            nnz: a.nnz(),
            longest: *self.longest_row.get_or_init(|| a.max_row_len()),
            csr_bytes: super::csr::device_bytes(a),
            format_bytes: self.bytes_read,
        };
        block_rule(kernel, shape, block, T::PRECISION != crate::matrix::Precision::F16)
    }

    /// Block products' copy `i` of [`BLOCK_COPIES`], built and uploaded on its first call.
    fn block_copy(&self, i: usize) -> Result<&DeviceMatrix<T>> {
        if let Some(c) = self.block_copies[i].get() {
            return Ok(c);
        }
        let spec = super::parse_spec(BLOCK_COPIES[i])?;
        let c = super::build(&spec, &self.source)?.upload(&self.gpu)?;
        Ok(self.block_copies[i].get_or_init(|| Box::new(c)))
    }

    /// Device bytes of the copies block products keep, once built (`None` before, and for
    /// formats with their own block kernel or served better by one product per vector).
    pub fn block_copy_bytes(&self) -> Option<usize> {
        let built = self.block_copies.iter().filter_map(|c| c.get());
        built.map(|c| c.device_bytes).reduce(|a, b| a + b)
    }

    /// The format's own block kernel ([`DeviceFormat::launch_block`]), if it has one; the
    /// shapes are checked, m > 0.
    fn native_block(&self, p: Scaled<'_, T>, block: Block) -> Option<Result<()>> {
        let gpu = &*self.gpu;
        if let Err(e) = gpu.context().bind_to_thread() {
            return Some(Err(e.into()));
        }
        let product = self.product.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: x and y hold ncols·k and nrows·k entries (check_block), nrows > 0, `gpu`
        // is the GPU of the upload, and the lock makes this the only product of this handle.
        unsafe { product.format.launch_block(gpu, p, block) }
    }

    /// `out = inᵀ` for a `rows × cols` row-major `input` (util.cu's transpose).
    fn transpose_copy(
        &self, (rows, cols): (usize, usize), input: &CudaSlice<T>, out: &mut CudaSlice<T>,
    ) -> Result<()> {
        if rows * cols == 0 {
            return Ok(());
        }
        let name = format!("transpose_{}", T::SUFFIX);
        let threads = rows.max(cols) as u64; // one per index of the longer side
        let kernel = Kernel::new(&self.gpu, &jit::UTIL_MODULE, &name, grid_stride(threads))?;
        let (rows, cols) = (rows as u64, cols as u64);
        // SAFETY: transpose_<T>(u64 rows, u64 cols, const T* in, T* out): both buffers hold
        // at least rows·cols entries (allocated or checked so by the caller); the kernel's
        // indices stay below rows·cols.
        unsafe {
            kernel.launch(&self.gpu, |a| {
                a.arg(&rows).arg(&cols).arg(input).arg(out);
            })
        }
    }

    /// `y = A·x` (`apply` with α = 1, β = 0).
    pub fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        self.apply(T::ONE, x, T::ZERO, y)
    }

    /// `y = α·t + β·y`, or `y = β·y` without `t`.
    fn epilogue(
        &self, alpha: T, t: Option<&CudaSlice<T>>, beta: T, y: &mut CudaSlice<T>,
    ) -> Result<()> {
        let n = self.info.nrows as u64;
        match t {
            // SAFETY: axpby_<T>(u64 n, T alpha, const T* t, T beta, T* y); t and y hold
            // nrows = n entries (scratch is allocated with nrows, y was checked); the
            // grid-stride loop stays below n.
            Some(t) => unsafe {
                self.axpby.launch(&self.gpu, |a| {
                    a.arg(&n).arg(&alpha).arg(t).arg(&beta).arg(y);
                })
            },
            None if beta == T::ZERO => self.gpu.fill(y, T::ZERO),
            // SAFETY: as above with t = y (in place, each entry read then written by one thread).
            None => unsafe {
                let (y_in, zero) = (&*y, T::ZERO);
                self.axpby.launch(&self.gpu, |a| {
                    a.arg(&n).arg(&beta).arg(y_in).arg(&zero).arg(y_in);
                })
            },
        }
    }
}

/// The error for an input that overlaps the output (possible only through
/// `upgrade_device_ptr`): the product would read it while writing it.
fn disjoint<T>(x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<()> {
    if overlap(device_range(x), device_range(y)) {
        return Err(crate::Error::Shape(
            "x and y overlap: the product would read x while writing it (copy x first)".into(),
        ));
    }
    Ok(())
}

/// The bytes a device slice spans.
fn device_range<T>(s: &CudaSlice<T>) -> std::ops::Range<u64> {
    use cudarc::driver::DevicePtr as _;
    let (start, _) = s.device_ptr(s.stream());
    start..start + (s.len() * std::mem::size_of::<T>()) as u64
}

impl<T: Scalar> std::fmt::Debug for DeviceMatrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = &self.info;
        write!(
            f,
            "DeviceMatrix({}, {} x {}, nnz {}, on {})",
            i.spec,
            i.nrows,
            i.ncols,
            i.nnz,
            self.gpu.name()
        )
    }
}

// One GPU: the format's kernels on the GPU's stream, vectors in device memory.
crate::operator::by_inherent_methods!(DeviceMatrix, CudaSlice<T>, |d: &DeviceMatrix<T>| (
    d.nrows(),
    d.ncols()
));

#[cfg(test)]
mod tests {
    use super::*;

    /// 10^6 rows of about 16 entries; the longest row as given.
    fn rows(longest: usize) -> RowShape {
        let bytes = 12 * 16_000_000;
        RowShape {
            nrows: 1_000_000,
            nnz: 16_000_000,
            longest,
            csr_bytes: bytes,
            format_bytes: bytes,
        }
    }

    fn row_major(k: usize) -> Block {
        Block { k, layout: Layout::RowMajor }
    }

    #[test]
    fn balanced_rows_take_a_csr_copy_where_k_products_cost_more() {
        let (balanced, f64) = (rows(40), true);
        for k in [2, 4, 8, 16, 32] {
            assert_eq!(
                block_rule(BlockKernel::None, balanced, row_major(k), f64),
                (false, Some(CSR_COPY))
            );
            assert_eq!(
                block_rule(BlockKernel::PerColumn, balanced, row_major(k), f64),
                (false, Some(CSR_COPY))
            );
            assert!(block_rule(BlockKernel::RowLanes, balanced, row_major(k), f64).0);
            assert!(block_rule(BlockKernel::Tiles, balanced, Block::columns(k), f64).0);
        }
        // A format that reads 8 times fewer bytes keeps its k products at k = 2.
        let small = RowShape { format_bytes: 12 * 2_000_000, ..balanced };
        assert_eq!(block_rule(BlockKernel::None, small, row_major(2), f64), (false, None));
    }

    #[test]
    fn unbalanced_rows_go_to_cusparse_spmm_where_a_row_would_hold_up_a_thread_group() {
        let unbalanced = rows(100_000);
        let rule = |kernel, block, spmm| block_rule(kernel, unbalanced, block, spmm);
        // Below 8 vectors: no copy; the formats' own kernels, else one product per column.
        assert_eq!(rule(BlockKernel::None, row_major(4), true), (false, None));
        assert_eq!(rule(BlockKernel::PerColumn, row_major(4), true), (true, None));
        assert_eq!(rule(BlockKernel::RowLanes, row_major(4), true), (true, None));
        for k in [8, 16, 32] {
            assert_eq!(rule(BlockKernel::None, row_major(k), true), (false, Some(SPMM_COPY)));
            // CSR's lanes kernels give the longest row to one group; its column-major tiles
            // split rows over lanes as its single product does.
            assert_eq!(rule(BlockKernel::RowLanes, row_major(k), true), (false, Some(SPMM_COPY)));
            assert_eq!(
                rule(BlockKernel::RowLanes, Block::columns(k), true),
                (true, Some(SPMM_COPY))
            );
            let dasp_own = k < SPMM_OVER_OWN_FROM_K;
            assert_eq!(
                rule(BlockKernel::PerColumn, row_major(k), true),
                (dasp_own, Some(SPMM_COPY))
            );
            assert_eq!(rule(BlockKernel::Tiles, row_major(k), true), (true, Some(SPMM_COPY)));
            // No SpMM in f16: the format's own kernels, else one product per column.
            assert_eq!(rule(BlockKernel::RowLanes, row_major(k), false), (true, None));
            assert_eq!(rule(BlockKernel::PerColumn, row_major(k), false), (true, None));
            assert_eq!(rule(BlockKernel::None, row_major(k), false), (false, None));
        }
    }

    #[test]
    fn rows_whose_walk_outlasts_spmm_go_to_spmm_in_row_major_blocks_of_8_or_more() {
        // cond-mat-2005's shape: 40,421 rows, 351,386 entries, the longest row 278 (balanced
        // by the mean's rule); Kuu's: 7,102 rows, 340,200 entries, the longest 98.
        let shape = |nrows, nnz, longest| RowShape {
            nrows,
            nnz,
            longest,
            csr_bytes: 12 * nnz,
            format_bytes: 12 * nnz,
        };
        let (waits, walks) = (shape(40_421, 351_386, 278), shape(7_102, 340_200, 98));
        assert!(waits.balanced(8) && waits.lanes_wait_on_longest_row());
        assert!(!walks.lanes_wait_on_longest_row());
        for k in [8, 16, 32] {
            for kernel in [BlockKernel::RowLanes, BlockKernel::None, BlockKernel::PerColumn] {
                let spmm = (false, Some(SPMM_COPY));
                assert_eq!(block_rule(kernel, waits, row_major(k), true), spmm, "{kernel:?}");
                assert_ne!(block_rule(kernel, walks, row_major(k), true), spmm, "{kernel:?}");
                // No SpMM in f16: what served before.
                assert_ne!(block_rule(kernel, waits, row_major(k), false).1, Some(SPMM_COPY));
            }
            // Column-major blocks run CSR's tile kernels, which split rows over lanes.
            let columns = block_rule(BlockKernel::RowLanes, waits, Block::columns(k), true);
            assert!(columns.0);
        }
        // Below 8 vectors the tile kernels serve row-major blocks too.
        assert_eq!(
            block_rule(BlockKernel::RowLanes, waits, row_major(4), true),
            (true, Some(CSR_COPY))
        );
    }

    #[test]
    fn rows_up_to_2048_entries_count_as_balanced_below_8_vectors() {
        let (shape, f64) = (rows(2048), true);
        assert_eq!(
            block_rule(BlockKernel::None, shape, row_major(4), f64),
            (false, Some(CSR_COPY))
        );
        assert_eq!(
            block_rule(BlockKernel::None, shape, row_major(8), f64),
            (false, Some(SPMM_COPY))
        );
    }
}
