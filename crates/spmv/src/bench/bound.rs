//! The per-matrix bound (`bound us`, `%bound` in `spmv bench`): the time of a kernel that
//! streams the matrix's own column indices and values of the width a format stores, and
//! gathers `x` at every column, with no row structure and no `y` (`bound.cu`). On a large
//! irregular matrix the gathers of `x`, not the matrix bytes, set the time, so the copy
//! roofline flatters no format and blames the matrix; this bound measures what the matrix
//! itself costs on this GPU. Measured in the same run, back to back (as the formats' `b2b`),
//! once per matrix and value width; only on the GPU.

use std::collections::HashMap;

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{median_min, Settings, BACK_TO_BACK_ROUNDS};
use crate::error::Result;
use crate::gpu::{grid_for, Gpu, Kernel, KernelModule};
use crate::matrix::{Csr, Scalar};

pub const KERNELS: KernelModule =
    KernelModule { name: "bound", source: include_str!("bound.cu"), headers: &[] };

/// Value widths (bytes per entry) with a kernel.
const WIDTHS: [usize; 5] = [0, 1, 2, 4, 8];

/// The bounds of one matrix, measured on first request per value width.
pub(crate) struct Bounds<'g, T: Scalar> {
    gpu: &'g Gpu,
    nnz: usize,
    cols: Option<CudaSlice<u32>>,
    x: Option<CudaSlice<T>>,
    measured: HashMap<usize, Option<f64>>,
    reps: usize,
}

impl<'g, T: Scalar> Bounds<'g, T> {
    pub(crate) fn new(gpu: &'g Gpu, settings: &Settings) -> Self {
        Bounds { gpu, nnz: 0, cols: None, x: None, measured: HashMap::new(), reps: settings.reps }
    }

    /// The bound in milliseconds (back-to-back mean) of `a` with `value_bytes` per entry;
    /// `None` without entries, for a width without a kernel, or when the GPU lacks the memory.
    pub(crate) fn ms(&mut self, a: &Csr<T>, x: &[T], value_bytes: usize) -> Option<f64> {
        if a.nnz() == 0 || !WIDTHS.contains(&value_bytes) {
            return None;
        }
        if let Some(known) = self.measured.get(&value_bytes) {
            return *known;
        }
        let ms = self.measure(a, x, value_bytes).ok();
        self.measured.insert(value_bytes, ms);
        ms
    }

    fn measure(&mut self, a: &Csr<T>, x: &[T], value_bytes: usize) -> Result<f64> {
        let gpu = self.gpu;
        if self.cols.is_none() {
            // Padded to whole 16-byte groups (the kernel reads only nnz of them).
            let mut cols = a.col_idx().to_vec();
            cols.resize(a.nnz().next_multiple_of(4), 0);
            self.cols = Some(gpu.upload(&cols)?);
            self.x = Some(gpu.upload_nonempty(x)?);
            self.nnz = a.nnz();
        }
        let (cols, x) = (self.cols.as_ref().unwrap(), self.x.as_ref().unwrap());
        let vals = gpu.alloc::<u8>((self.nnz * value_bytes).next_multiple_of(32).max(32))?;
        let mut sink = gpu.alloc::<T::Acc>(1)?;
        let kernel = Kernel::new(
            gpu,
            &KERNELS,
            &format!("bound_v{value_bytes}_{}", T::SUFFIX),
            grid_for(gpu.multiprocessors() as u64 * 16 * 256, 256)?,
        )?;
        let (nnz, key) = (self.nnz as u64, 0u32);
        let mut launch = || {
            // SAFETY: bound_vW_T(u64 nnz, const u32* cols, const void* vals, const T* x, Acc* sink, u32 key):
            // cols holds nnz rounded up to 4 (16-byte groups), vals W·nnz bytes rounded up to 32,
            // every column is below ncols = x.len(); sink has one element.
            unsafe {
                kernel.launch(gpu, |g| {
                    g.arg(&nnz).arg(cols).arg(&vals).arg(x).arg(&mut sink).arg(&key);
                })
            }
        };
        for _ in 0..3 {
            launch()?;
        }
        let mut means = gpu.time_back_to_back(BACK_TO_BACK_ROUNDS, self.reps.max(10), launch)?;
        Ok(median_min(&mut means).0)
    }
}
