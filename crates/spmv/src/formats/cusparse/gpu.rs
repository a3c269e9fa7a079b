//! cuSPARSE descriptors, preprocessing and the SpMV call.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cusparse::sys;
use cudarc::driver::{CudaSlice, DevicePtr};

use super::Algorithm;
use crate::error::{Error, Result};
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::cusparse::{check, Handle};
use crate::gpu::Gpu;
use crate::matrix::{Csr, Precision, Scalar};

pub struct DeviceCusparse<T> {
    gpu: Arc<Gpu>,
    handle: Handle,
    /// Null for a matrix with a zero dimension.
    matrix: sys::cusparseSpMatDescr_t,
    algorithm: sys::cusparseSpMVAlg_t,
    value_type: sys::cudaDataType,
    /// The registered format name, for errors.
    name: &'static str,
    nrows: usize,
    ncols: usize,
    // The descriptor points into these: they must live as long as it does.
    _row_ptr: CudaSlice<i32>,
    _col_idx: CudaSlice<i32>,
    _values: CudaSlice<T>,
    workspace: CudaSlice<u8>,
    bytes: usize,
}

fn ptr<T>(s: &CudaSlice<T>, gpu: &Gpu) -> *mut c_void {
    let (p, _sync) = s.device_ptr(gpu.stream());
    p as *mut c_void
}

/// The signature shared by `cusparseSpMV` and `cusparseSpMV_preprocess`.
type SpmvCall = unsafe fn(
    sys::cusparseHandle_t,
    sys::cusparseOperation_t,
    *const c_void,
    sys::cusparseConstSpMatDescr_t,
    sys::cusparseConstDnVecDescr_t,
    *const c_void,
    sys::cusparseDnVecDescr_t,
    sys::cudaDataType,
    sys::cusparseSpMVAlg_t,
    *mut c_void,
) -> sys::cusparseStatus_t;

/// A dense-vector descriptor destroyed on drop.
struct DnVec(sys::cusparseDnVecDescr_t);

impl DnVec {
    fn new<T: Scalar>(v: &CudaSlice<T>, gpu: &Gpu, value_type: sys::cudaDataType) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: the pointer is a live device allocation of v.len() elements of T.
        check(unsafe { sys::cusparseCreateDnVec(&mut raw, v.len() as i64, ptr(v, gpu), value_type) }, "cusparseCreateDnVec")?;
        Ok(DnVec(raw))
    }
}

impl Drop for DnVec {
    fn drop(&mut self) {
        // SAFETY: created once by cusparseCreateDnVec.
        unsafe {
            sys::cusparseDestroyDnVec(self.0);
        }
    }
}

impl<T: Scalar> DeviceCusparse<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Csr<T>, algorithm: Algorithm) -> Result<Self> {
        let name = algorithm.format_name();
        if a.nnz() > i32::MAX as usize || a.ncols() > i32::MAX as usize || a.nrows() > i32::MAX as usize {
            return Err(Error::format(name, "cuSPARSE with 32-bit indices needs nnz, rows and columns below 2^31"));
        }
        let handle = Handle::new(gpu.stream())?;
        let row_ptr: Vec<i32> = a.row_ptr().iter().map(|&p| p as i32).collect();
        let col_idx: Vec<i32> = a.col_idx().iter().map(|&c| c as i32).collect();
        let row_ptr = gpu.upload(&row_ptr)?;
        let col_idx = gpu.upload(&col_idx)?;
        let values = gpu.upload(a.values())?;
        let value_type = match T::PRECISION {
            Precision::F64 => sys::cudaDataType::CUDA_R_64F,
            Precision::F32 => sys::cudaDataType::CUDA_R_32F,
        };
        let algorithm = match algorithm {
            Algorithm::Alg1 => sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG1,
            Algorithm::Alg2 => sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2,
        };
        let mut matrix = std::ptr::null_mut();
        // cuSPARSE rejects a zero dimension: such a matrix keeps a null descriptor (y = 0).
        let degenerate = a.nrows() == 0 || a.ncols() == 0;
        if !degenerate {
            // SAFETY: the arrays are live device allocations of the sizes given.
            check(
                unsafe {
                    sys::cusparseCreateCsr(
                        &mut matrix,
                        a.nrows() as i64,
                        a.ncols() as i64,
                        a.nnz() as i64,
                        ptr(&row_ptr, gpu),
                        ptr(&col_idx, gpu),
                        ptr(&values, gpu),
                        sys::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                        sys::cusparseIndexType_t::CUSPARSE_INDEX_32I,
                        sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                        value_type,
                    )
                },
                "cusparseCreateCsr",
            )?;
        }
        let mut this = DeviceCusparse {
            gpu: gpu.clone(),
            handle,
            matrix,
            algorithm,
            value_type,
            name,
            nrows: a.nrows(),
            ncols: a.ncols(),
            bytes: crate::formats::csr::device_bytes(a),
            _row_ptr: row_ptr,
            _col_idx: col_idx,
            _values: values,
            workspace: gpu.alloc::<u8>(0)?,
        };
        if degenerate {
            return Ok(this);
        }
        // Workspace size and preprocessing need vectors of the right sizes: use scratch ones.
        let x = gpu.alloc::<T>(a.ncols().max(1))?;
        let y = gpu.alloc::<T>(a.nrows().max(1))?;
        let (vx, vy) = (DnVec::new(&x, gpu, value_type)?, DnVec::new(&y, gpu, value_type)?);
        let (alpha, beta) = (T::ONE, T::ZERO);
        let mut size = 0usize;
        // SAFETY: descriptors are valid; alpha/beta are host scalars of the value type.
        check(
            unsafe {
                sys::cusparseSpMV_bufferSize(
                    this.handle.raw(),
                    sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    &alpha as *const T as *const c_void,
                    this.matrix,
                    vx.0,
                    &beta as *const T as *const c_void,
                    vy.0,
                    value_type,
                    algorithm,
                    &mut size,
                )
            },
            "cusparseSpMV_bufferSize",
        )?;
        this.workspace = gpu.alloc::<u8>(size.max(1))?;
        this.bytes += size;
        if a.nnz() > 0 {
            this.call(sys::cusparseSpMV_preprocess, "cusparseSpMV_preprocess", &vx, &vy)?;
        }
        gpu.synchronize()?;
        Ok(this)
    }

    /// Calls `cusparseSpMV` or `cusparseSpMV_preprocess` (the same signature) for
    /// y = 1·A·x + 0·y with this matrix, algorithm and workspace.
    fn call(&self, f: SpmvCall, name: &str, vx: &DnVec, vy: &DnVec) -> Result<()> {
        let (alpha, beta) = (T::ONE, T::ZERO);
        // SAFETY: the descriptors are valid, alpha/beta are host scalars of the value type,
        // the workspace has the size cuSPARSE asked for; beta = 0 so y is written, not read.
        check(
            unsafe {
                f(
                    self.handle.raw(),
                    sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    &alpha as *const T as *const c_void,
                    self.matrix,
                    vx.0,
                    &beta as *const T as *const c_void,
                    vy.0,
                    self.value_type,
                    self.algorithm,
                    ptr(&self.workspace, &self.gpu),
                )
            },
            name,
        )
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceCusparse<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(self.name, self.nrows, self.ncols, x, y)?;
        if self.matrix.is_null() {
            return self.gpu.fill(y, T::ZERO);
        }
        let (vx, vy) = (DnVec::new(x, &self.gpu, self.value_type)?, DnVec::new(y, &self.gpu, self.value_type)?);
        self.call(sys::cusparseSpMV, "cusparseSpMV", &vx, &vy)
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}

impl<T> Drop for DeviceCusparse<T> {
    fn drop(&mut self) {
        // SAFETY: created once by cusparseCreateCsr; the arrays it points to drop after this.
        if !self.matrix.is_null() {
            unsafe {
                sys::cusparseDestroySpMat(self.matrix);
            }
        }
    }
}
