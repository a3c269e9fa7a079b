//! CSR5 converted on the GPU (`csr5:convert=gpu`, as the paper converts): the host keeps the
//! CSR matrix; the upload copies its three arrays to the device, as a CSR format's upload
//! does, then the kernels of `convert.cu` build the arrays of the host conversion, bit for bit.
//! The host's share is small and cheap: an exclusive scan of one row count per 1,024 rows, and
//! the carry segments read off the tile bases (one u32 per tile of 32σ entries). The wall time
//! from the uploaded CSR to the finished format is the format's
//! [`DeviceMatrix::conversion_ms`](crate::formats::DeviceMatrix::conversion_ms); the kernels
//! are compiled before the clock starts.
//!
//! The CPU path of this variant runs the host conversion (made once, on the first product).

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::gpu::{DeviceCsr5, DeviceTiles};
use super::{
    carry_segments, check_sigma, layout_bytes, padded_entries, Csr5, KERNELS, NAME, OMEGA,
};
use crate::error::Result;
use crate::formats::values::DeviceValues;
use crate::formats::{offsets_u32, DeviceFormat, FormatStats, SpmvFormat};
use crate::gpu::{grid_for, grid_stride, Gpu, Kernel, KernelModule};
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The kernels of the conversion on the GPU (`convert.cu`).
pub const CONVERT_KERNELS: KernelModule =
    KernelModule { name: "csr5_convert", source: include_str!("convert.cu"), headers: &[] };

/// Threads per block and rows per chunk of the row-counting kernels (convert.cu).
const BLOCK: u32 = 256;
const CHUNK: usize = 4 * BLOCK as usize;

/// A CSR matrix to be converted to CSR5 on the GPU when uploaded.
pub struct Csr5OnGpu<T> {
    csr: Csr<T>,
    sigma: usize,
    host: OnceLock<Csr5<T>>,
}

impl<T: Scalar> Csr5OnGpu<T> {
    /// Checks what the conversion will need (σ, 32-bit indices) and keeps `a` (a shared clone).
    pub fn new(a: &Csr<T>, sigma: usize) -> Result<Self> {
        check_sigma(sigma)?;
        padded_entries(a, OMEGA * sigma)?;
        Ok(Csr5OnGpu { csr: a.clone(), sigma, host: OnceLock::new() })
    }

    /// The host conversion, for the CPU path.
    fn host(&self) -> &Csr5<T> {
        self.host.get_or_init(|| {
            Csr5::new(&self.csr, self.sigma).expect("σ and sizes were checked in Csr5OnGpu::new")
        })
    }

    fn padded(&self) -> usize {
        let tile = OMEGA * self.sigma;
        (self.csr.nnz() + 1).div_ceil(tile) * tile
    }
}

impl<T: Scalar> SpmvFormat<T> for Csr5OnGpu<T> {
    fn stats(&self) -> FormatStats {
        let a = &self.csr;
        let (padded, tiles) = (self.padded(), self.padded() / (OMEGA * self.sigma));
        let empty = (0..a.nrows()).filter(|&r| a.row_len(r) == 0).count();
        let mapped = if empty > 0 { a.nrows() } else { 0 };
        let mean = if a.nrows() == 0 { 0.0 } else { a.nnz() as f64 / a.nrows() as f64 };
        // The segments (12 bytes each, at most one per tile) are known after the conversion:
        // the device format counts them as its workspace.
        let bytes = layout_bytes::<T::Acc>(padded, tiles, tiles * OMEGA, mapped)
            + padded * std::mem::size_of::<T>();
        FormatStats::new(bytes, a.nnz(), padded, a.max_row_len(), mean).with([
            ("sigma", self.sigma as f64),
            ("tiles", tiles as f64),
            ("empty_rows", empty as f64),
        ])
    }
    fn bytes_read(&self) -> usize {
        self.stats().bytes - (self.padded() - self.csr.nnz()) * (4 + std::mem::size_of::<T>())
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        self.host().spmv_cpu(x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(convert(gpu, &self.csr, self.sigma)?))
    }
}

/// Converts `a` to CSR5 with σ = `sigma` on the GPU (σ and the sizes checked by the caller).
pub(super) fn convert<T: Scalar>(gpu: &Gpu, a: &Csr<T>, sigma: usize) -> Result<DeviceCsr5<T>> {
    let (m, nnz) = (a.nrows(), a.nnz());
    let tile = OMEGA * sigma;
    let padded = padded_entries(a, tile)?;
    let tiles = padded / tile;
    let chunks = m.div_ceil(CHUNK);
    // The CSR arrays on the device: what any CSR format uploads, not part of the conversion.
    let row_ptr = gpu.upload(&offsets_u32(NAME, a)?)?;
    let col = gpu.upload_nonempty(a.col_idx())?;
    let val = gpu.upload_nonempty(a.values())?;
    // Every kernel loaded (and compiled) before the clock starts.
    let blocks = |n: usize| grid_for(n as u64, BLOCK);
    let count_rows =
        Kernel::new(gpu, &CONVERT_KERNELS, "csr5_count_rows", blocks(chunks * BLOCK as usize)?)?;
    let map_rows =
        Kernel::new(gpu, &CONVERT_KERNELS, "csr5_map_rows", blocks(chunks * BLOCK as usize)?)?;
    let tile_base_kernel =
        Kernel::new(gpu, &CONVERT_KERNELS, "csr5_tile_base", grid_stride(tiles as u64 + 1))?;
    let bits_kernel =
        Kernel::new(gpu, &CONVERT_KERNELS, "csr5_bits", grid_stride((tiles * OMEGA) as u64))?;
    let transpose =
        Kernel::for_type::<T>(gpu, &CONVERT_KERNELS, "csr5_transpose", grid_stride(padded as u64))?;
    let segment_rows =
        Kernel::new(gpu, &CONVERT_KERNELS, "csr5_segment_rows", grid_stride(tiles as u64))?;
    gpu.function(&KERNELS, &format!("csr5_{sigma}_{}", T::SUFFIX))?;
    gpu.synchronize()?;
    let start = Instant::now();

    // All below 2^32: checked by padded_entries (rows and padded entries).
    let (m32, nnz32, sigma32) = (m as u32, nnz as u32, sigma as u32);
    let mut counts = gpu.alloc::<u32>(chunks.max(1))?;
    if chunks > 0 {
        // SAFETY: csr5_count_rows(u32, const u32*, u32*): block b reads row_ptr[r], r ≤ m (rows
        // r < m and their successors; row_ptr has m + 1 entries) and writes counts[b], b < chunks.
        unsafe {
            count_rows.launch(gpu, |g| {
                g.arg(&m32).arg(&row_ptr).arg(&mut counts);
            })?
        };
    }
    let counts = gpu.download(&counts)?;
    let real_rows: usize = counts.iter().take(chunks).map(|&c| c as usize).sum();
    let empty = m - real_rows;
    let mut row_map = gpu.alloc::<u32>(real_rows.max(1))?;
    let mut empty_rows = gpu.alloc::<u32>(empty.max(1))?;
    let mut mapped_starts: Option<CudaSlice<u32>> = None;
    if empty > 0 {
        let offsets: Vec<u32> = counts
            .iter()
            .take(chunks)
            .scan(0u32, |before, &c| {
                let start = *before;
                *before += c;
                Some(start)
            })
            .collect();
        let offsets = gpu.upload(&offsets)?;
        let mut starts = gpu.alloc::<u32>(real_rows.max(1))?;
        // SAFETY: csr5_map_rows(u32, const u32*, const u32*, u32*, u32*, u32*): block b reads
        // offsets[b] (b < chunks) and row_ptr[r..=r+1] for rows r < m; row r with entries goes
        // to index (rows with entries before r) < real_rows of row_map and starts, an empty row
        // to index (empty rows before r) < empty of empty_rows.
        unsafe {
            map_rows.launch(gpu, |g| {
                g.arg(&m32)
                    .arg(&row_ptr)
                    .arg(&offsets)
                    .arg(&mut row_map)
                    .arg(&mut empty_rows)
                    .arg(&mut starts);
            })?
        };
        mapped_starts = Some(starts);
    }
    // Without empty rows, row_ptr[0..m] are the (strictly increasing) row starts.
    let starts = mapped_starts.as_ref().unwrap_or(&row_ptr);
    let nstarts = real_rows as u32;

    let (tiles32, tile32, words) = (tiles as u32, tile as u32, (tiles * OMEGA) as u32);
    let mut tile_base = gpu.alloc::<u32>(tiles + 1)?;
    let mut bits = gpu.alloc::<u32>(tiles * OMEGA)?;
    let mut col5 = gpu.alloc::<u32>(padded)?;
    let mut val5 = gpu.alloc::<T>(padded)?;
    // SAFETY: the signatures match convert.cu; every kernel reads starts[0..nstarts) (nstarts
    // ≤ its length) and writes index-by-thread below the length it is given: tile_base
    // (tiles + 1), bits (tiles·32 words), col5/val5 (padded slots, reading col/val below nnz).
    unsafe {
        tile_base_kernel.launch(gpu, |g| {
            g.arg(&tiles32).arg(&tile32).arg(&nnz32).arg(&nstarts).arg(starts).arg(&mut tile_base);
        })?;
        bits_kernel.launch(gpu, |g| {
            g.arg(&words).arg(&sigma32).arg(&nnz32).arg(&nstarts).arg(starts).arg(&mut bits);
        })?;
        let padded32 = padded as u32;
        transpose.launch(gpu, |g| {
            g.arg(&padded32)
                .arg(&sigma32)
                .arg(&nnz32)
                .arg(&col)
                .arg(&val)
                .arg(&mut col5)
                .arg(&mut val5);
        })?;
    }
    let mut segments = carry_segments(&gpu.download(&tile_base)?, real_rows as u32);
    if empty > 0 && !segments.is_empty() {
        let rows: Vec<u32> = segments.iter().map(|s| s.row).collect();
        let mut rows_dev = gpu.upload(&rows)?;
        let n = rows.len() as u32;
        // SAFETY: csr5_segment_rows(u32, const u32*, u32*): rows_dev holds n tile rows, each
        // < real_rows = row_map's length.
        unsafe {
            segment_rows.launch(gpu, |g| {
                g.arg(&n).arg(&row_map).arg(&mut rows_dev);
            })?
        };
        for (s, row) in segments.iter_mut().zip(gpu.download(&rows_dev)?) {
            s.row = row;
        }
    }
    let arrays = DeviceTiles {
        tile_base,
        bits,
        col5,
        val5: DeviceValues::from_device(gpu, val5)?,
        row_map,
        empty_rows,
    };
    let format = DeviceCsr5::assemble(gpu, nnz, sigma, real_rows, empty, arrays, &segments)?;
    gpu.synchronize()?;
    Ok(format.converted_on_gpu(ms_since(start), segments.len()))
}
