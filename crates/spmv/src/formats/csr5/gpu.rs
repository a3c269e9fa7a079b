//! Upload and launch of CSR5: the tile kernel (four one-warp tiles per block; it also zeroes
//! the empty rows), then, when rows cross tiles, the fixup kernel on the same stream.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Csr5, CODED_KERNELS, KERNELS};
use crate::error::Result;
use crate::formats::carry::{DeviceCarry, Segment};
use crate::formats::values::{DeviceValues, ValueCodec};
use crate::formats::DeviceFormat;
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

/// One-warp tiles per block (CSR5_WARPS in kernel.cu).
const TILES_PER_BLOCK: u64 = 4;

pub(super) struct DeviceCsr5<T: Scalar> {
    nnz: u32,
    real_rows: u32,
    tiles: u32,
    has_map: u32,
    empty: u32,
    arrays: DeviceTiles<T>,
    carry: DeviceCarry<T>,
    tile_kernel: Kernel,
    conversion_ms: Option<f64>,
    /// Segment bytes not in the host's stats (converted on the GPU).
    segment_bytes: usize,
}

/// CSR5's arrays, as `U` (index arrays) and `V` (values).
pub(super) struct Tiles<U, V> {
    pub tile_base: U,
    pub bits: U,
    pub col5: U,
    pub val5: V,
    /// On the device, one unread element when no row is empty (the identity map); read
    /// back, empty then.
    pub row_map: U,
    /// Likewise when no row is empty.
    pub empty_rows: U,
}

/// CSR5's arrays on the device, from the host conversion or the GPU's (`convert.rs`).
pub(super) type DeviceTiles<T> = Tiles<CudaSlice<u32>, DeviceValues<T>>;

impl<T: Scalar> DeviceCsr5<T> {
    pub(super) fn new(gpu: &Gpu, a: &Csr5<T>) -> Result<Self> {
        let tiles = DeviceTiles {
            tile_base: gpu.upload(&a.tile_base)?,
            bits: gpu.upload(&a.bits)?,
            col5: gpu.upload(&a.col5)?,
            val5: match &a.coded {
                None => DeviceValues::upload_full(gpu, &a.val5)?,
                Some(c) => DeviceValues::upload(gpu, c)?,
            },
            row_map: gpu.upload_nonempty(&a.row_map)?,
            empty_rows: gpu.upload_nonempty(&a.empty_rows)?,
        };
        Self::assemble(
            gpu,
            a.nnz,
            a.sigma(),
            a.real_rows(),
            a.empty_rows.len(),
            tiles,
            a.segments(),
        )
    }

    /// The device format from its arrays: `empty` rows without entries (a row map when
    /// there are any), `segments` with original rows.
    pub(super) fn assemble(
        gpu: &Gpu, nnz: usize, sigma: usize, real_rows: usize, empty: usize,
        arrays: DeviceTiles<T>, segments: &[Segment],
    ) -> Result<Self> {
        let tiles = arrays.tile_base.len() - 1;
        let codec = arrays.val5.codec();
        let module = if codec == ValueCodec::Full { &KERNELS } else { &CODED_KERNELS };
        Ok(DeviceCsr5 {
            // All below 2^32: checked on conversion (padded entries < 2^32).
            nnz: nnz as u32,
            real_rows: real_rows as u32,
            tiles: tiles as u32,
            has_map: u32::from(empty > 0),
            empty: empty as u32,
            arrays,
            carry: DeviceCarry::new(gpu, module, "csr5_fixup", tiles, segments)?,
            tile_kernel: Kernel::for_type::<T>(
                gpu,
                module,
                &format!("csr5_{sigma}{}", codec.kernel_suffix()),
                grid_for(tiles as u64 * 32, (32 * TILES_PER_BLOCK) as u32)?,
            )?,
            conversion_ms: None,
            segment_bytes: 0,
        })
    }

    /// Marks the format as converted on the GPU in `ms` milliseconds; its `segments` are then
    /// counted as workspace (the host's stats could not know them).
    pub(super) fn converted_on_gpu(mut self, ms: f64, segments: usize) -> Self {
        self.conversion_ms = Some(ms);
        self.segment_bytes = 12 * segments;
        self
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceCsr5<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let arrays = &self.arrays;
        // SAFETY: the arguments match CSR5_ARGS(T) and the fixup's. Tile t reads slots
        // t·TILE .. (t+1)·TILE of col5/val5 (tiles·TILE = their length), loads only entries
        // below nnz (columns < ncols = x.len()), bits[t·32 + lane] and tile_base[t]; it writes
        // rows < real_rows through row_map (original rows < m = y.len()), the empty rows
        // (< m), and tile_carry/tile_head[t]. Blocks are whole warps, as the shuffles need.
        // The fixup follows on the same stream; segment rows are original rows (< m).
        unsafe {
            self.tile_kernel.launch(gpu, |a| {
                a.arg(&self.nnz)
                    .arg(&self.real_rows)
                    .arg(&self.tiles)
                    .arg(&arrays.tile_base)
                    .arg(&arrays.bits)
                    .arg(&arrays.col5);
                arrays.val5.push(a);
                a.arg(&arrays.row_map)
                    .arg(&self.has_map)
                    .arg(&arrays.empty_rows)
                    .arg(&self.empty)
                    .arg(x)
                    .arg(&mut *y)
                    .arg(&self.carry.tile_carry)
                    .arg(&self.carry.tile_head);
            })?;
            self.carry.launch_fixup(gpu, y)
        }
    }

    fn workspace_bytes(&self) -> usize {
        self.segment_bytes
    }
    fn conversion_ms(&self) -> Option<f64> {
        self.conversion_ms
    }
}

#[cfg(test)]
impl<T: Scalar> DeviceCsr5<T> {
    /// The device arrays read back, to compare the GPU's conversion with the host's.
    pub(super) fn download(&self, gpu: &Gpu) -> Result<Tiles<Vec<u32>, Vec<T>>> {
        let (t, mapped) = (&self.arrays, self.has_map != 0 && self.real_rows > 0);
        Ok(Tiles {
            tile_base: gpu.download(&t.tile_base)?,
            bits: gpu.download(&t.bits)?,
            col5: gpu.download(&t.col5)?,
            val5: gpu.download(t.val5.full().expect("the GPU conversion stores full values"))?,
            row_map: if mapped { gpu.download(&t.row_map)? } else { Vec::new() },
            empty_rows: if self.empty > 0 { gpu.download(&t.empty_rows)? } else { Vec::new() },
        })
    }
}
