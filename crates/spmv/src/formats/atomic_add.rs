//! `y[row] += val · x[col]` over row-sorted triplets with an atomic kernel of the COO module
//! (`coo/kernel.cu`): shared by `coo-atomic` (after zeroing `y`) and HYB's COO part (after
//! its ELL kernel). Also the triplet arrays on the device, which `coo-segmented` uses too.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::coo::{Triplets, ATOMIC_ENTRIES_PER_THREAD, KERNELS};
use crate::error::Result;
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

/// Threads per block: whole warps, as the warp-aggregated kernel needs.
const BLOCK: u32 = 256;

/// The triplet arrays on the device (one zero element each when there are no entries).
pub(crate) struct DeviceTriplets<T> {
    pub(crate) rows: CudaSlice<u32>,
    pub(crate) cols: CudaSlice<u32>,
    pub(crate) vals: CudaSlice<T>,
    /// Entries (0 when the arrays hold only the placeholder element).
    pub(crate) len: u64,
}

impl<T: Scalar> DeviceTriplets<T> {
    pub(crate) fn upload(gpu: &Gpu, t: &Triplets<T>) -> Result<Self> {
        Ok(DeviceTriplets {
            rows: gpu.upload_nonempty(&t.rows)?,
            cols: gpu.upload_nonempty(&t.cols)?,
            vals: gpu.upload_nonempty(&t.vals)?,
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
    entries: DeviceTriplets<T>,
    kernel: Kernel,
}

impl<T: Scalar> AtomicAdd<T> {
    /// Uploads `t`; its rows must be below the `y` the launches get, its columns below `x`'s length.
    pub(crate) fn new(gpu: &Gpu, t: &Triplets<T>, atomics: Atomics) -> Result<Self> {
        let name = match atomics {
            Atomics::PerEntry => format!("coo_atomic_{}", T::SUFFIX),
            Atomics::PerWarpRow => format!("coo_atomic_warp_{}", T::SUFFIX),
        };
        let config = grid_for((t.len() as u64).div_ceil(ATOMIC_ENTRIES_PER_THREAD as u64), BLOCK)?;
        Ok(AtomicAdd {
            entries: DeviceTriplets::upload(gpu, t)?,
            kernel: Kernel::new(gpu, &KERNELS, &name, config)?,
        })
    }

    /// Launches the kernel on the GPU's stream (nothing when there are no entries).
    pub(crate) fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let e = &self.entries;
        if e.len == 0 {
            return Ok(());
        }
        // SAFETY: the arguments match coo_atomic_<T> and coo_atomic_warp_<T>(u64, const u32*,
        // const u32*, const T*, const T*, T*); the grid-stride loops read entries below len
        // only; rows < y.len() and columns < x.len() (the format's shape, checked by
        // DeviceMatrix, and the CSR invariants); blocks are whole warps (BLOCK = 256) as the
        // warp kernel needs.
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&e.len).arg(&e.rows).arg(&e.cols).arg(&e.vals).arg(x).arg(y);
            })
        }
    }
}
