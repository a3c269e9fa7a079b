//! Upload and launch of the CSR kernels.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{CsrKernel, BLOCK_KERNELS, CODED_KERNELS, KERNELS};
use crate::error::{Error, Result};
use crate::formats::offsets::{DeviceOffsets, OffsetWidth};
use crate::formats::values::columns::Delta16Columns;
use crate::formats::values::{DeviceValues, EncodedValues};
use crate::formats::{arg_u32, BlockKernel, BlockKernels, DeviceFormat, LanesRule, Scaled};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::{Csr, Scalar};
use crate::operator::Block;

const BLOCK: u32 = 256;

pub struct DeviceCsr<T> {
    nrows: u32,
    row_ptr: DeviceOffsets,
    /// The columns: 32-bit, or 16-bit deltas with `row_base` (`coded` kernels).
    cols: Columns,
    values: DeviceValues<T>,
    /// The kernel is one of coded.cu's (its arguments include the row bases).
    coded: bool,
    plain: Kernel,
    /// The same kernel with α and β (`_ab`); coded kernels have none (the handle scales).
    scaled: Option<Kernel>,
    /// block.cu's kernels (`csr_block_{lanes}{offsets}`), for full values and columns;
    /// `None` for coded ones (one product per column).
    block: Option<BlockKernels>,
}

enum Columns {
    Full(CudaSlice<u32>),
    Delta16 { deltas: CudaSlice<u16>, row_base: CudaSlice<u32> },
}

impl<T: Scalar> DeviceCsr<T> {
    /// `coded`: CSR-vector's values as codes, or `None` for the values themselves; `cols16`:
    /// its columns as 16-bit deltas, or `None` (both with 32-bit `offsets` only).
    pub fn new(
        gpu: &Gpu, a: &Csr<T>, kernel: CsrKernel, offsets: OffsetWidth,
        coded: Option<&EncodedValues<T>>, cols16: Option<&Delta16Columns>, format: &'static str,
    ) -> Result<Self> {
        let nrows = arg_u32(format, "rows", a.nrows())?;
        let (name, lanes) = match kernel {
            CsrKernel::Scalar => ("csr_scalar".to_string(), 1),
            CsrKernel::Vector(lanes) => (format!("csr_vector_{lanes}"), lanes),
        };
        let threads = a.nrows() as u64 * lanes as u64;
        let config = grid_for(threads, BLOCK)?;
        let cols = match cols16 {
            None => Columns::Full(gpu.upload_nonempty(a.col_idx())?),
            Some(c) => Columns::Delta16 {
                deltas: gpu.upload_nonempty(&c.deltas)?,
                row_base: gpu.upload_nonempty(&c.bases)?,
            },
        };
        let values = match coded {
            None => DeviceValues::upload_full(gpu, a.values())?,
            Some(v) => DeviceValues::upload(gpu, v)?,
        };
        let is_coded = coded.is_some() || cols16.is_some();
        let (plain, scaled) = if is_coded {
            if offsets != OffsetWidth::W32 {
                return Err(Error::format(
                    format,
                    "coded values and 16-bit columns have 32-bit row offsets only",
                ));
            }
            let codec = coded.map_or("", |v| v.codec().kernel_suffix());
            let d16 = if cols16.is_some() { "_d16" } else { "" };
            (
                Kernel::for_type::<T>(gpu, &CODED_KERNELS, &format!("{name}{codec}{d16}"), config)?,
                None,
            )
        } else {
            let name = format!("{name}{}", offsets.kernel_suffix());
            (
                Kernel::for_type::<T>(gpu, &KERNELS, &name, config)?,
                Some(Kernel::for_type::<T>(gpu, &KERNELS, &format!("{name}_ab"), config)?),
            )
        };
        let row_ptr = DeviceOffsets::upload(gpu, format, a.row_ptr(), offsets)?;
        let block = match is_coded {
            true => None,
            false => {
                let o = offsets.kernel_suffix();
                let (tiles, rows) = (format!("csr_block_{lanes}{o}"), a.nrows());
                Some(BlockKernels::new(
                    &BLOCK_KERNELS,
                    tiles,
                    format!("csr_lanes{o}"),
                    config,
                    rows,
                    LanesRule::GROUP_READS_ROW,
                )?)
            }
        };
        Ok(DeviceCsr { nrows, row_ptr, cols, values, coded: is_coded, plain, scaled, block })
    }

    /// Pushes the columns: `col` for the plain kernels, `cols, row_base` for the coded ones.
    fn push_cols<'a>(&'a self, args: &mut cudarc::driver::LaunchArgs<'a>) {
        match &self.cols {
            Columns::Full(c) if self.coded => {
                // The coded kernels' row_base is read by ColsDelta16 only: any pointer does.
                args.arg(c).arg(c);
            }
            Columns::Full(c) => {
                args.arg(c);
            }
            Columns::Delta16 { deltas, row_base } => {
                args.arg(deltas).arg(row_base);
            }
        }
    }
}

// SAFETY (both launches): the arguments match CSR_ARGS(T, O) of the kernel's offset width (then T alpha, T beta for `_ab`) or
// CSR_CODED_ARGS(T) for coded.cu's kernels (push_cols), the values as (codes, table) of the
// kernel's codec (DeviceValues::push); columns (row_base[r] + delta for 16-bit ones) < ncols =
// x.len() by the CSR invariants, rows < nrows = y.len() by the bound check in the kernel;
// entries row_ptr[r]..row_ptr[r + 1] lie inside col_idx and the codes (one per entry; the
// pattern reads only table[0], a dictionary's codes index its table).
impl<T: Scalar> DeviceFormat<T> for DeviceCsr<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            self.plain.launch(gpu, |a| {
                a.arg(&self.nrows);
                self.row_ptr.push(a);
                self.push_cols(a);
                self.values.push(a);
                a.arg(x).arg(y);
            })
        }
    }
    unsafe fn launch_scaled(&self, gpu: &Gpu, p: Scaled<'_, T>) -> Option<Result<()>> {
        let scaled = self.scaled.as_ref()?;
        let Scaled { alpha, x, beta, y } = p;
        // SAFETY: see above.
        Some(unsafe {
            scaled.launch(gpu, |a| {
                a.arg(&self.nrows);
                self.row_ptr.push(a);
                self.push_cols(a);
                self.values.push(a);
                a.arg(x).arg(y).arg(&alpha).arg(&beta);
            })
        })
    }
    fn block_kernel(&self) -> BlockKernel {
        if self.block.is_some() {
            BlockKernel::RowLanes
        } else {
            BlockKernel::None
        }
    }
    unsafe fn launch_block(&self, gpu: &Gpu, p: Scaled<'_, T>, block: Block) -> Option<Result<()>> {
        // SAFETY: see above; block.cu's kernels take (m, n, k) first, then CSR_ARGS and
        // (alpha, beta); x holds ncols·k and y nrows·k entries (the handle's check), and
        // every index is formed in 64 bits.
        launch_block_kernels!(self.block.as_ref()?, gpu, p, block, m = self.nrows, |a| {
            self.row_ptr.push(a);
            self.push_cols(a);
            self.values.push(a);
        })
    }
}
