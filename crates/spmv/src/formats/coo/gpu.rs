//! Upload and launch of the COO kernels.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits};

use super::{CooFormat, CooKernel, Triplets, ATOMIC_ENTRIES_PER_THREAD, KERNELS, SEGMENT_BLOCK, SEGMENT_CHUNK};
use crate::error::{Error, Result};
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

/// Uploads `host`, or allocates one zero element when it is empty, so that no format
/// depends on how the driver treats zero-byte allocations (the kernels never read it).
pub(crate) fn upload_or_one<T: DeviceRepr + ValidAsZeroBits>(gpu: &Gpu, host: &[T]) -> Result<CudaSlice<T>> {
    if host.is_empty() {
        gpu.alloc(1)
    } else {
        gpu.upload(host)
    }
}

/// The triplet arrays on the device.
pub(crate) struct DeviceTriplets<T> {
    rows: CudaSlice<u32>,
    cols: CudaSlice<u32>,
    vals: CudaSlice<T>,
    len: u64,
}

impl<T: Scalar> DeviceTriplets<T> {
    pub(crate) fn upload(gpu: &Gpu, t: &Triplets<T>) -> Result<Self> {
        Ok(DeviceTriplets {
            rows: upload_or_one(gpu, &t.rows)?,
            cols: upload_or_one(gpu, &t.cols)?,
            vals: upload_or_one(gpu, &t.vals)?,
            len: t.len() as u64,
        })
    }
}

/// Which atomic kernel [`AtomicAdd`] launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Atomics {
    /// `coo_atomic_<T>`: one atomicAdd per entry (the textbook kernel, coo-atomic).
    PerEntry,
    /// `coo_atomic_warp_<T>`: a warp adds up each row's entries among its 32 with shuffles
    /// first, then one atomicAdd per row and warp (HYB's COO part).
    PerWarpRow,
}

/// `y[row] += val · x[col]` for every entry with an atomic kernel: coo-atomic after zeroing
/// `y`, and HYB's COO part after its ELL kernel.
pub(crate) struct AtomicAdd<T> {
    gpu: Arc<Gpu>,
    entries: DeviceTriplets<T>,
    function: CudaFunction,
    config: LaunchConfig,
}

impl<T: Scalar> AtomicAdd<T> {
    /// Uploads `t`; its rows must be below the `y` the launches get, its columns below `x`'s length.
    pub(crate) fn new(gpu: &Arc<Gpu>, t: &Triplets<T>, atomics: Atomics) -> Result<Self> {
        let name = match atomics {
            Atomics::PerEntry => format!("coo_atomic_{}", T::SUFFIX),
            Atomics::PerWarpRow => format!("coo_atomic_warp_{}", T::SUFFIX),
        };
        Ok(AtomicAdd {
            gpu: gpu.clone(),
            entries: DeviceTriplets::upload(gpu, t)?,
            function: gpu.function(&KERNELS, &name)?,
            config: grid_for((t.len() as u64).div_ceil(ATOMIC_ENTRIES_PER_THREAD as u64), BLOCK)?,
        })
    }

    /// Launches the kernel on the GPU's stream (nothing when there are no entries).
    pub(crate) fn launch(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        if self.entries.len == 0 {
            return Ok(());
        }
        let e = &self.entries;
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch.arg(&e.len).arg(&e.rows).arg(&e.cols).arg(&e.vals).arg(x).arg(y);
        // SAFETY: the arguments match coo_atomic_<T> and coo_atomic_warp_<T>(u64, const u32*,
        // const u32*, const T*, const T*, T*); the grid-stride loops read entries below len
        // only; rows < y.len() and columns < x.len() by the caller's check_vectors and the
        // CSR invariants; blocks are whole warps (BLOCK = 256) as the warp kernel needs.
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
}

/// The segmented kernel's state: entries, one carry slot per chunk, both kernels.
struct Segmented<T> {
    entries: DeviceTriplets<T>,
    carry_row: CudaSlice<u32>,
    carry_val: CudaSlice<T>,
    chunks: u32,
    /// 1: the kernel writes 0 to empty rows itself; 0: `y` is filled with 0 first.
    zero_gaps: u32,
    main: CudaFunction,
    fixup: CudaFunction,
}

enum Kernel<T> {
    Atomic(AtomicAdd<T>),
    Segmented(Segmented<T>),
}

pub struct DeviceCoo<T> {
    gpu: Arc<Gpu>,
    format: &'static str,
    nrows: u32,
    ncols: usize,
    kernel: Kernel<T>,
    bytes: usize,
}

impl<T: Scalar> DeviceCoo<T> {
    pub fn new(gpu: &Arc<Gpu>, coo: &CooFormat<T>, kernel: CooKernel) -> Result<Self> {
        let format = kernel.format_name();
        // Checked on conversion (rows < 2^32 - 1, segmented nnz < 2^32).
        let nrows = u32::try_from(coo.nrows)
            .map_err(|_| Error::format(format, format!("{} rows exceed 32-bit row indices", coo.nrows)))?;
        let t = coo.entries();
        let kernel = match kernel {
            CooKernel::Atomic => Kernel::Atomic(AtomicAdd::new(gpu, t, Atomics::PerEntry)?),
            CooKernel::Segmented => {
                let chunks = u32::try_from(coo.chunks())
                    .map_err(|_| Error::format(format, format!("{} entries exceed 32-bit offsets", t.len())))?;
                Kernel::Segmented(Segmented {
                    entries: DeviceTriplets::upload(gpu, t)?,
                    carry_row: gpu.alloc(coo.chunks().max(1))?,
                    carry_val: gpu.alloc(coo.chunks().max(1))?,
                    chunks,
                    zero_gaps: u32::from(!coo.zero_fill_first()),
                    main: gpu.function(&KERNELS, &format!("coo_segmented_{}", T::SUFFIX))?,
                    fixup: gpu.function(&KERNELS, &format!("coo_segmented_fixup_{}", T::SUFFIX))?,
                })
            }
        };
        Ok(DeviceCoo { gpu: gpu.clone(), format, nrows, ncols: coo.ncols, kernel, bytes: coo.device_bytes() })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceCoo<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(self.format, self.nrows as usize, self.ncols, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        match &self.kernel {
            Kernel::Atomic(add) => {
                // The atomics add into y: zero it first, on the same stream (timed with it).
                self.gpu.fill(y, T::ZERO)?;
                add.launch(x, y)
            }
            Kernel::Segmented(s) => {
                if s.chunks == 0 || s.zero_gaps == 0 {
                    // No entries, or a run of empty rows too long for one thread: zero y first.
                    self.gpu.fill(y, T::ZERO)?;
                }
                if s.chunks == 0 {
                    return Ok(());
                }
                let e = &s.entries;
                let nnz = e.len as u32; // < 2^32: checked on conversion
                let config = LaunchConfig {
                    grid_dim: (s.chunks, 1, 1),
                    block_dim: (SEGMENT_BLOCK as u32, 1, 1),
                    shared_mem_bytes: 0,
                };
                {
                    let mut launch = self.gpu.stream().launch_builder(&s.main);
                    launch
                        .arg(&self.nrows)
                        .arg(&nnz)
                        .arg(&e.rows)
                        .arg(&e.cols)
                        .arg(&e.vals)
                        .arg(x)
                        .arg(&mut *y)
                        .arg(&s.carry_row)
                        .arg(&s.carry_val)
                        .arg(&s.zero_gaps);
                    // SAFETY: the arguments match coo_segmented_<T>(u32 m, u32 nnz, rows, cols,
                    // vals, x, y, carry_row, carry_val, u32 zero_gaps); exactly
                    // ceil(nnz / SEGMENT_CHUNK) blocks of SEGMENT_BLOCK threads, so every chunk
                    // is non-empty and block b writes carry slot b < chunks; rows < m = y.len().
                    unsafe { launch.launch(config) }?;
                }
                debug_assert_eq!(s.chunks as usize, (nnz as usize).div_ceil(SEGMENT_CHUNK));
                if s.chunks > 1 {
                    let mut launch = self.gpu.stream().launch_builder(&s.fixup);
                    launch.arg(&s.chunks).arg(&s.carry_row).arg(&s.carry_val).arg(y);
                    // SAFETY: matches coo_segmented_fixup_<T>(u32, const u32*, const T*, T*);
                    // threads past `chunks` return; carry rows are below m or the sentinel.
                    unsafe { launch.launch(grid_for(s.chunks as u64, BLOCK)?) }?;
                }
                Ok(())
            }
        }
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
