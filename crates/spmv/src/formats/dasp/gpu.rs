//! Upload and launch of the DASP kernels: one launch per product (kernel.cu), or per 8
//! columns of a block (block.cu), the grid's warps cut into ranges, one per kind of work.

use cudarc::driver::{CudaSlice, LaunchArgs, LaunchConfig, PushKernelArg};

use super::{Dasp, Slots, BLOCK_ROWS, LONG_WARP_GROUPS, NAME};
use super::{BLOCK_KERNELS, CODED_BLOCK_KERNELS, CODED_KERNELS, KERNELS};
use crate::error::{Error, Result};
use crate::formats::device::BLOCK_TILE;
use crate::formats::offsets::DeviceOffsets;
use crate::formats::values::{DeviceValues, EncodedValues, ValueCodec};
use crate::formats::{BlockKernel, DeviceFormat, PerLayout, Scaled};
use crate::gpu::{Gpu, Kernel, KernelModule};
use crate::matrix::Scalar;
use crate::operator::{Block, Layout};

const THREADS: u32 = 256;
const WARPS_PER_BLOCK: u64 = THREADS as u64 / 32;
/// Short pieces per tile, tiles per warp, and rows per warp of group 1 and of the empty rows.
const PIECES_PER_TILE: usize = 8;
const SHORT_TILES: usize = 1; // 1 and 2 measured alike on large matrices; 1 is a shorter chain on small ones
const ROWS_PER_WARP: usize = 32;
/// The kernels' u32 arguments of those constants.
const LONG_WARP_GROUPS_U32: u32 = LONG_WARP_GROUPS as u32;
const SHORT_TILES_U32: u32 = SHORT_TILES as u32;

/// Warps of each range of the grid, in the kernel's order (its first seven arguments): long
/// rows, medium rows, short rows of groups 1+3, 4, 2+2 and 1, empty rows.
#[derive(Clone, Copy, Debug, Default)]
struct Warps([u32; 7]);

impl Warps {
    fn of<T: Scalar>(a: &Dasp<T>) -> Result<Self> {
        let s = &a.short;
        let blocks = a.medium.rows.len().div_ceil(BLOCK_ROWS);
        let counts = [
            a.long.warp_row.len(),
            blocks.div_ceil(a.loop_num()),
            s.rows_13.len().div_ceil(PIECES_PER_TILE * SHORT_TILES),
            s.rows_4.len().div_ceil(PIECES_PER_TILE * SHORT_TILES),
            s.rows_22.len().div_ceil(PIECES_PER_TILE * SHORT_TILES),
            s.rows_1.len().div_ceil(ROWS_PER_WARP),
            a.empty_rows.len().div_ceil(ROWS_PER_WARP),
        ];
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        // Global thread ids are computed in 32 bits (the last block may be partly idle).
        if (total + WARPS_PER_BLOCK) * 32 > u32::MAX as u64 {
            return Err(Error::format(
                NAME,
                format!("{total} warps of work exceed 32-bit thread ids"),
            ));
        }
        Ok(Warps(counts.map(|c| c as u32)))
    }
    fn total(&self) -> u64 {
        self.0.iter().map(|&c| c as u64).sum()
    }
}

/// One part's slots on the device: columns, and values full or coded.
struct Part<T> {
    cid: CudaSlice<u32>,
    val: DeviceValues<T>,
}

impl<T: Scalar> Part<T> {
    fn upload(gpu: &Gpu, slots: &Slots<T>, coded: Option<&EncodedValues<T>>) -> Result<Self> {
        Ok(Part {
            cid: gpu.upload_nonempty(&slots.cid)?,
            val: match coded {
                None => DeviceValues::upload_full(gpu, &slots.val)?,
                Some(c) => DeviceValues::upload(gpu, c)?,
            },
        })
    }
}

pub struct DeviceDasp<T: Scalar> {
    warps: Warps,
    long_rows: CudaSlice<u32>,
    long_group_ptr: CudaSlice<u32>,
    long_warp_ptr: CudaSlice<u32>,
    long_warp_row: CudaSlice<u32>,
    long: Part<T>,
    /// Per long-row warp its sums (one per column of a block's pass, `BLOCK_TILE`), and per
    /// long row its count of finished warps (all zero between launches).
    long_partial: CudaSlice<T::Acc>,
    long_count: CudaSlice<u32>,
    loop_num: u32,
    medium: u32,
    medium_rows: CudaSlice<u32>,
    block_tile_ptr: CudaSlice<u32>,
    regular: Part<T>,
    irreg_ptr: DeviceOffsets,
    irregular: Part<T>,
    short_counts: [u32; 4],
    short_rows: CudaSlice<u32>,
    short: Part<T>,
    empty: u32,
    empty_rows: CudaSlice<u32>,
    kernel: Kernel,
    /// The block kernels' module, the kernels' codec and offsets suffix, and the kernels for
    /// row-major and column-major blocks, loaded on the first block product.
    block_module: &'static KernelModule,
    suffix: String,
    block: PerLayout<Kernel>,
}

impl<T: Scalar> DeviceDasp<T> {
    pub fn new(gpu: &Gpu, a: &Dasp<T>) -> Result<Self> {
        let warps = Warps::of(a)?;
        let blocks = warps.total().div_ceil(WARPS_PER_BLOCK).max(1) as u32;
        let config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let s = &a.short;
        let short_rows = s.rows_in_order();
        let u32_of = |n: usize| n as u32; // every count is below nrows or stored, both checked < 2^32
        let coded = |i: usize| a.coded.get(i);
        let codec = a.coded.first().map_or(ValueCodec::Full, EncodedValues::codec);
        let (module, block_module) = match codec {
            ValueCodec::Full => (&KERNELS, &BLOCK_KERNELS),
            _ => (&CODED_KERNELS, &CODED_BLOCK_KERNELS),
        };
        let suffix = format!("{}{}", codec.kernel_suffix(), a.offsets.kernel_suffix());
        Ok(DeviceDasp {
            warps,
            long_rows: gpu.upload_nonempty(&a.long.rows)?,
            long_group_ptr: gpu.upload_nonempty(&a.long.group_ptr)?,
            long_warp_ptr: gpu.upload_nonempty(&a.long.warp_ptr)?,
            long_warp_row: gpu.upload_nonempty(&a.long.warp_row)?,
            long: Part::upload(gpu, &a.long.groups, coded(0))?,
            long_partial: gpu.alloc((a.long.warp_row.len() * BLOCK_TILE).max(1))?,
            long_count: gpu.alloc(a.long.rows.len().max(1))?,
            loop_num: u32_of(a.loop_num()),
            medium: u32_of(a.medium.rows.len()),
            medium_rows: gpu.upload_nonempty(&a.medium.rows)?,
            block_tile_ptr: gpu.upload_nonempty(&a.medium.block_tile_ptr)?,
            regular: Part::upload(gpu, &a.medium.regular, coded(1))?,
            irreg_ptr: DeviceOffsets::upload(gpu, NAME, &a.medium.irreg_ptr, a.offsets)?,
            irregular: Part::upload(gpu, &a.medium.irregular, coded(2))?,
            short_counts: [s.rows_13.len(), s.rows_4.len(), s.rows_22.len(), s.rows_1.len()]
                .map(u32_of),
            short_rows: gpu.upload_nonempty(&short_rows)?,
            short: Part::upload(gpu, &s.slots, coded(3))?,
            empty: u32_of(a.empty_rows.len()),
            empty_rows: gpu.upload_nonempty(&a.empty_rows)?,
            kernel: Kernel::for_type::<T>(gpu, module, &format!("dasp{suffix}"), config)?,
            block_module,
            suffix,
            block: Default::default(),
        })
    }

    /// Pushes the matrix's arguments (DASP_ARGS), which every kernel takes first.
    fn push_matrix<'a>(&'a self, a: &mut LaunchArgs<'a>) {
        for count in &self.warps.0 {
            a.arg(count);
        }
        a.arg(&LONG_WARP_GROUPS_U32).arg(&self.long_rows).arg(&self.long_group_ptr);
        a.arg(&self.long_warp_ptr).arg(&self.long_warp_row);
        a.arg(&self.long.cid);
        self.long.val.push(a);
        a.arg(&self.long_partial).arg(&self.long_count);
        a.arg(&self.loop_num).arg(&self.medium).arg(&self.medium_rows).arg(&self.block_tile_ptr);
        a.arg(&self.regular.cid);
        self.regular.val.push(a);
        self.irreg_ptr.push(a);
        a.arg(&self.irregular.cid);
        self.irregular.val.push(a);
        let [n13, n4, n22, n1] = &self.short_counts;
        a.arg(&SHORT_TILES_U32).arg(n13).arg(n4).arg(n22).arg(n1);
        a.arg(&self.short_rows).arg(&self.short.cid);
        self.short.val.push(a);
        a.arg(&self.empty).arg(&self.empty_rows);
    }

    /// The block kernel for `layout`, loaded (its module compiled) on first use.
    fn block_kernel(&self, gpu: &Gpu, layout: Layout) -> Result<&Kernel> {
        self.block.get_or_load(layout, |layout| {
            let name = format!("dasp_block_{layout}{}", self.suffix);
            Kernel::for_type::<T>(gpu, self.block_module, &name, self.kernel.config())
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceDasp<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: the arguments match DASP_ARGS(T, O) (each part's values as the loader's
        // (codes, table) pair, of the kernel's codec; irreg_ptr in the kernel's offset width O,
        // which indexes every part's slots). The grid has at least warps.total() warps
        // and each warp works only inside its range: long-row warp w < long warps (its row
        // long_warp_row[w], whose groups lie in group_ptr's range, 64 slots each; one
        // long_partial per warp, one long_count per row); medium row-blocks below ceil(medium / 8) with tiles from
        // block_tile_ptr (blocks + 1 entries) and irregular entries from irreg_ptr (medium + 1
        // entries); short tiles whose lanes past a group's count load nothing; group-1 and
        // empty rows below their counts (short warps stop at their group's last tile). Every stored column is < ncols = x.len(), every row
        // id < nrows = y.len(). long_count is zero between launches (allocated zeroed, reset
        // by the last warp of each row) and this handle's only launch runs at a time.
        unsafe {
            self.kernel.launch(gpu, |a| {
                self.push_matrix(a);
                a.arg(x).arg(y);
            })
        }
    }

    fn block_kernel(&self) -> BlockKernel {
        BlockKernel::PerColumn
    }
    unsafe fn launch_block(&self, gpu: &Gpu, p: Scaled<'_, T>, block: Block) -> Option<Result<()>> {
        // Row ids and columns are 32-bit (the conversion checks them), so m and n are; k may
        // not be: past 2^32 vectors the handle runs one product per column.
        let k = u32::try_from(block.k).ok()?;
        let (m, n) = ((p.y.len() / block.k) as u32, (p.x.len() / block.k) as u32);
        let kernel = match self.block_kernel(gpu, block.layout) {
            Ok(kernel) => kernel,
            Err(e) => return Some(Err(e)),
        };
        let Scaled { alpha, x, beta, y } = p;
        let passes = (0..k).step_by(BLOCK_TILE);
        // SAFETY: as in `launch`, with the block's arguments after the matrix's: X of n·k and
        // Y of m·k entries (this method's contract), the kernel touching columns j0 ..
        // min(j0 + BLOCK_TILE, k) - 1 of rows below n and m; long_partial holds BLOCK_TILE
        // sums per long-row warp; the passes run one after another on the stream.
        Some(passes.into_iter().try_for_each(|j0| unsafe {
            kernel.launch(gpu, |a| {
                self.push_matrix(a);
                a.arg(&m).arg(&n).arg(&k).arg(&j0).arg(&*x).arg(&mut *y).arg(&alpha).arg(&beta);
            })
        }))
    }

    fn workspace_bytes(&self) -> usize {
        self.long_partial.len() * std::mem::size_of::<T::Acc>() + self.long_count.len() * 4
    }
}
