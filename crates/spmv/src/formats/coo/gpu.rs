//! Upload and launch of the COO kernels (the atomic one through [`AtomicAdd`]).

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{CooFormat, CooKernel, KERNELS, SEGMENT_BLOCK, SEGMENT_CHUNK};
use crate::error::Result;
use crate::formats::atomic_add::{AtomicAdd, Atomics, DeviceTriplets};
use crate::formats::{arg_u32, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

/// The segmented kernel's state: entries, one carry slot per chunk, both kernels.
pub(super) struct Segmented<T> {
    entries: DeviceTriplets<T>,
    carry_row: CudaSlice<u32>,
    carry_val: CudaSlice<T>,
    nrows: u32,
    chunks: u32,
    /// 1: the kernel writes 0 to empty rows itself; 0: `y` is filled with 0 first.
    zero_gaps: u32,
    /// One block of SEGMENT_BLOCK threads per chunk.
    main: Kernel,
    /// One thread per chunk.
    fixup: Kernel,
}

/// `coo-atomic`'s kernel or `coo-segmented`'s two.
pub(super) enum DeviceCoo<T> {
    Atomic(AtomicAdd<T>),
    Segmented(Segmented<T>),
}

impl<T: Scalar> DeviceCoo<T> {
    pub(super) fn new(gpu: &Gpu, coo: &CooFormat<T>) -> Result<Self> {
        let t = coo.entries();
        if coo.kernel == CooKernel::Atomic {
            return Ok(DeviceCoo::Atomic(AtomicAdd::new(gpu, t, Atomics::PerEntry)?));
        }
        let format = coo.kernel.format_name();
        // Checked on conversion (rows < 2^32 - 1, segmented nnz < 2^32).
        let nrows = arg_u32(format, "rows", coo.nrows)?;
        let chunks = arg_u32(format, "chunks", coo.chunks())?;
        let main_config = LaunchConfig {
            grid_dim: (chunks, 1, 1),
            block_dim: (SEGMENT_BLOCK as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let kernel = |name: &str, config| Kernel::for_type::<T>(gpu, &KERNELS, name, config);
        Ok(DeviceCoo::Segmented(Segmented {
            entries: DeviceTriplets::upload(gpu, t)?,
            carry_row: gpu.alloc(coo.chunks().max(1))?,
            carry_val: gpu.alloc(coo.chunks().max(1))?,
            nrows,
            chunks,
            zero_gaps: u32::from(!coo.zero_fill_first()),
            main: kernel("coo_segmented", main_config)?,
            fixup: kernel("coo_segmented_fixup", grid_for(chunks as u64, BLOCK)?)?,
        }))
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceCoo<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        match self {
            DeviceCoo::Atomic(add) => {
                // The atomics add into y: zero it first, on the same stream (timed with it).
                gpu.fill(y, T::ZERO)?;
                add.launch(gpu, x, y)
            }
            DeviceCoo::Segmented(s) => s.launch(gpu, x, y),
        }
    }
}

impl<T: Scalar> Segmented<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        if self.chunks == 0 || self.zero_gaps == 0 {
            // No entries, or a run of empty rows too long for one thread: zero y first.
            gpu.fill(y, T::ZERO)?;
        }
        if self.chunks == 0 {
            return Ok(());
        }
        let e = &self.entries;
        let nnz = e.len as u32; // < 2^32: checked on conversion
        debug_assert_eq!(self.chunks as usize, (nnz as usize).div_ceil(SEGMENT_CHUNK));
        // SAFETY: the arguments match coo_segmented_<T>(u32 m, u32 nnz, rows, cols, vals, x,
        // y, carry_row, carry_val, u32 zero_gaps); exactly ceil(nnz / SEGMENT_CHUNK) blocks
        // of SEGMENT_BLOCK threads, so every chunk is non-empty and block b writes carry
        // slot b < chunks; rows < m = y.len(); columns < x.len() (CSR invariants).
        unsafe {
            self.main.launch(gpu, |a| {
                a.arg(&self.nrows)
                    .arg(&nnz)
                    .arg(&e.rows)
                    .arg(&e.cols)
                    .arg(&e.vals)
                    .arg(x)
                    .arg(&mut *y);
                a.arg(&self.carry_row).arg(&self.carry_val).arg(&self.zero_gaps);
            })
        }?;
        if self.chunks > 1 {
            // SAFETY: matches coo_segmented_fixup_<T>(u32, const u32*, const T*, T*); threads
            // past `chunks` return; carry rows are below m = y.len() or the sentinel.
            unsafe {
                self.fixup.launch(gpu, |a| {
                    a.arg(&self.chunks).arg(&self.carry_row).arg(&self.carry_val).arg(y);
                })
            }?;
        }
        Ok(())
    }
}
