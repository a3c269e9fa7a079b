//! cuSPARSE descriptors, preprocessing and the SpMV call.
//!
//! Every descriptor is created once, on upload: the matrix, and the two dense-vector
//! descriptors (made over scratch vectors for the workspace query and the preprocessing).
//! A launch only points the vector descriptors at its `x` and `y`
//! (`cusparseDnVecSetValues`) and calls `cusparseSpMV`. The transposed product
//! (`CUSPARSE_OPERATION_TRANSPOSE`) and the block product (`cusparseSpMM`) get their own
//! descriptors and workspace on first use, the block's for the last block shape asked.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::cusparse::sys;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::Algorithm;
use crate::error::Result;
use crate::formats::{BlockKernel, DeviceFormat, Scaled};
use crate::gpu::cusparse::{check, Handle};
use crate::gpu::Gpu;
use crate::matrix::{Csr, Precision, Scalar};
use crate::operator::{Block, Layout};

pub(super) struct DeviceCusparse<T> {
    /// `None` for a matrix with a zero dimension, which cuSPARSE rejects (y = 0).
    prepared: Option<Prepared<T>>,
    /// The device's handle, shared with its other cuSPARSE matrices.
    handle: Arc<Handle>,
    algorithm: sys::cusparseSpMVAlg_t,
    value_type: sys::cudaDataType,
    /// The precision cuSPARSE computes in, and of α and β: the value type, or f32 for f16
    /// data (`CUDA_R_16F` data, `CUDA_R_32F` compute).
    compute_type: sys::cudaDataType,
    // The matrix descriptor points into these: they must live as long as it does (fields
    // drop in order, so `prepared` goes first).
    indices: Indices,
    values: CudaSlice<T>,
    /// The transposed and block products' operand descriptors, made on first use.
    later: Mutex<Later<T>>,
}

/// Descriptors and workspaces made on the first product that needs them.
struct Later<T> {
    transpose: Option<Plan<DnVec, T>>,
    /// The last block shape, and its plan once made.
    block: Option<(Block, Option<Plan<DnMat, T>>)>,
}

/// The operand descriptors of one kind of product and its workspace.
struct Plan<D, T> {
    x: D,
    y: D,
    workspace: CudaSlice<u8>,
    /// The scratch operands the descriptors were made over (see `Prepared`).
    _vectors: (CudaSlice<T>, CudaSlice<T>),
}

/// Row offsets and column indices, both 32-bit or both 64-bit (`CUSPARSE_INDEX_32I` /
/// `_64I`: the documented pairs of cuSPARSE's CSR).
enum Indices {
    I32 { row_ptr: CudaSlice<i32>, col_idx: CudaSlice<i32> },
    I64 { row_ptr: CudaSlice<i64>, col_idx: CudaSlice<i64> },
}

impl Indices {
    fn upload<T: Scalar>(gpu: &Gpu, a: &Csr<T>, wide: bool) -> Result<Self> {
        Ok(if wide {
            Indices::I64 {
                row_ptr: gpu.upload_converted(a.row_ptr(), |p| p as i64)?,
                col_idx: gpu.upload_converted(a.col_idx(), |c| c as i64)?,
            }
        } else {
            Indices::I32 {
                row_ptr: gpu.upload_converted(a.row_ptr(), |p| p as i32)?,
                col_idx: gpu.upload_converted(a.col_idx(), |c| c as i32)?,
            }
        })
    }
    /// The two arrays and their cuSPARSE index type.
    fn raw(&self, gpu: &Gpu) -> (*mut c_void, *mut c_void, sys::cusparseIndexType_t) {
        match self {
            Indices::I32 { row_ptr, col_idx } => {
                (ptr(row_ptr, gpu), ptr(col_idx, gpu), sys::cusparseIndexType_t::CUSPARSE_INDEX_32I)
            }
            Indices::I64 { row_ptr, col_idx } => {
                (ptr(row_ptr, gpu), ptr(col_idx, gpu), sys::cusparseIndexType_t::CUSPARSE_INDEX_64I)
            }
        }
    }
}

// SAFETY: the descriptors are raw cuSPARSE pointers that nothing else holds. They are used
// only through the `DeviceMatrix` that owns this value, under its lock, so by one thread at a
// time, which first binds the GPU's context; the shared handle is used under its own lock.
unsafe impl<T: Send> Send for DeviceCusparse<T> {}

/// The descriptors and workspace of a matrix without a zero dimension.
struct Prepared<T> {
    matrix: SpMat,
    /// Over `ncols` elements; each launch points it at its `x`.
    x: DnVec,
    /// Over `nrows` elements; each launch points it at its `y`.
    y: DnVec,
    workspace: CudaSlice<u8>,
    /// The size cuSPARSE asked for (the allocation holds at least one byte).
    workspace_bytes: usize,
    /// The vectors the preprocessing ran with, kept while the descriptors live: the
    /// analysis may refer to them, and freeing them let another allocation reuse the memory
    /// (seen on the H200: a wrong row in the first product when tests ran in parallel).
    preprocess_vectors: (CudaSlice<T>, CudaSlice<T>),
}

fn data_type(p: Precision) -> sys::cudaDataType {
    match p {
        Precision::F64 => sys::cudaDataType::CUDA_R_64F,
        Precision::F32 => sys::cudaDataType::CUDA_R_32F,
        Precision::F16 => sys::cudaDataType::CUDA_R_16F,
    }
}

fn ptr<T>(s: &CudaSlice<T>, gpu: &Gpu) -> *mut c_void {
    let (p, _sync) = s.device_ptr(gpu.stream());
    p as *mut c_void
}

fn ptr_mut<T>(s: &mut CudaSlice<T>, gpu: &Gpu) -> *mut c_void {
    let (p, _sync) = s.device_ptr_mut(gpu.stream());
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

/// A cuSPARSE descriptor type, destroyed on drop by its `cusparseDestroy…`.
macro_rules! descriptor {
    ($(#[$doc:meta])* $name:ident($raw:ty) = $destroy:ident) => {
        $(#[$doc])*
        struct $name($raw);

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: created once by its cusparseCreate… call; the arrays it points to
                // drop after it.
                unsafe {
                    sys::$destroy(self.0);
                }
            }
        }
    };
}

descriptor!(
    /// A sparse-matrix descriptor (CSR).
    SpMat(sys::cusparseSpMatDescr_t) = cusparseDestroySpMat
);
descriptor!(
    /// A dense-vector descriptor.
    DnVec(sys::cusparseDnVecDescr_t) = cusparseDestroyDnVec
);
descriptor!(
    /// A dense-matrix descriptor (a block of vectors).
    DnMat(sys::cusparseDnMatDescr_t) = cusparseDestroyDnMat
);

impl DnVec {
    fn new<T: Scalar>(v: &CudaSlice<T>, gpu: &Gpu, value_type: sys::cudaDataType) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: the pointer is a live device allocation of v.len() elements of T.
        check(
            unsafe { sys::cusparseCreateDnVec(&mut raw, v.len() as i64, ptr(v, gpu), value_type) },
            "cusparseCreateDnVec",
        )?;
        Ok(DnVec(raw))
    }
}

/// A dense operand's descriptor (a vector or a block), pointed at each product's own.
trait Operand {
    /// Points the descriptor at `values`, of the size it was created with.
    fn set(&self, values: *mut c_void) -> Result<()>;
}

// SAFETY (both): a live descriptor; the caller passes a device allocation of its size.
impl Operand for DnVec {
    fn set(&self, values: *mut c_void) -> Result<()> {
        check(unsafe { sys::cusparseDnVecSetValues(self.0, values) }, "cusparseDnVecSetValues")
    }
}

impl Operand for DnMat {
    fn set(&self, values: *mut c_void) -> Result<()> {
        check(unsafe { sys::cusparseDnMatSetValues(self.0, values) }, "cusparseDnMatSetValues")
    }
}

impl DnMat {
    /// `rows × block.k` over `v` (rows·k elements) in the block's layout.
    fn new<T: Scalar>(
        v: &CudaSlice<T>, gpu: &Gpu, value_type: sys::cudaDataType, rows: usize, block: Block,
    ) -> Result<Self> {
        let (ld, order) = match block.layout {
            Layout::ColMajor => (rows, sys::cusparseOrder_t::CUSPARSE_ORDER_COL),
            Layout::RowMajor => (block.k, sys::cusparseOrder_t::CUSPARSE_ORDER_ROW),
        };
        let mut raw = std::ptr::null_mut();
        // SAFETY: the pointer is a live device allocation of rows·k elements of T.
        check(
            unsafe {
                sys::cusparseCreateDnMat(
                    &mut raw,
                    rows as i64,
                    block.k as i64,
                    ld as i64,
                    ptr(v, gpu),
                    value_type,
                    order,
                )
            },
            "cusparseCreateDnMat",
        )?;
        Ok(DnMat(raw))
    }
}

const TRANSPOSE: sys::cusparseOperation_t = sys::cusparseOperation_t::CUSPARSE_OPERATION_TRANSPOSE;
const NON_TRANSPOSE: sys::cusparseOperation_t =
    sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;

impl<T: Scalar> DeviceCusparse<T> {
    /// `wide`: 64-bit indices (`Cusparse::index_bytes` decides: always past 2^31 − 1).
    pub(super) fn new(gpu: &Gpu, a: &Csr<T>, algorithm: Algorithm, wide: bool) -> Result<Self> {
        let mut this = DeviceCusparse {
            prepared: None,
            handle: gpu.cusparse()?,
            algorithm: match algorithm {
                Algorithm::Alg1 => sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG1,
                Algorithm::Alg2 => sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2,
            },
            value_type: data_type(T::PRECISION),
            compute_type: data_type(<T::Acc as Scalar>::PRECISION),
            indices: Indices::upload(gpu, a, wide)?,
            values: gpu.upload_nonempty(a.values())?,
            later: Mutex::new(Later { transpose: None, block: None }),
        };
        // cuSPARSE rejects a zero dimension: such a matrix keeps no descriptors (y = 0).
        if a.nrows() > 0 && a.ncols() > 0 {
            this.prepared = Some(this.prepare(gpu, a)?);
        }
        Ok(this)
    }

    /// Creates the descriptors, queries and allocates the workspace, and preprocesses.
    fn prepare(&self, gpu: &Gpu, a: &Csr<T>) -> Result<Prepared<T>> {
        let mut raw = std::ptr::null_mut();
        let (row_ptr, col_idx, index_type) = self.indices.raw(gpu);
        // SAFETY: the arrays are live device allocations of the sizes given, in index_type.
        check(
            unsafe {
                sys::cusparseCreateCsr(
                    &mut raw,
                    a.nrows() as i64,
                    a.ncols() as i64,
                    a.nnz() as i64,
                    row_ptr,
                    col_idx,
                    ptr(&self.values, gpu),
                    index_type,
                    index_type,
                    sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                    self.value_type,
                )
            },
            "cusparseCreateCsr",
        )?;
        let matrix = SpMat(raw);
        // Workspace size and preprocessing need vectors of the right sizes: scratch ones, kept
        // with the descriptors (every launch points the descriptors at its own vectors first).
        let x = gpu.alloc::<T>(a.ncols())?;
        let y = gpu.alloc::<T>(a.nrows())?;
        let (vx, vy) =
            (DnVec::new(&x, gpu, self.value_type)?, DnVec::new(&y, gpu, self.value_type)?);
        let (alpha, beta) = (T::Acc::ONE, T::Acc::ZERO);
        let mut size = 0usize;
        let (_guard, handle) = self.handle.lock(gpu.stream())?;
        // SAFETY: descriptors are valid; alpha/beta are host scalars of the compute type.
        check(
            unsafe {
                sys::cusparseSpMV_bufferSize(
                    handle,
                    sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    &alpha as *const T::Acc as *const c_void,
                    matrix.0,
                    vx.0,
                    &beta as *const T::Acc as *const c_void,
                    vy.0,
                    self.compute_type,
                    self.algorithm,
                    &mut size,
                )
            },
            "cusparseSpMV_bufferSize",
        )?;
        drop(_guard);
        let prepared = Prepared {
            matrix,
            x: vx,
            y: vy,
            workspace: gpu.alloc::<u8>(size.max(1))?,
            workspace_bytes: size,
            preprocess_vectors: (x, y),
        };
        if a.nnz() > 0 {
            let pre = self.call(
                gpu,
                &prepared,
                sys::cusparseSpMV_preprocess,
                "cusparseSpMV_preprocess",
                alpha,
                beta,
            );
            // With 64-bit indices the H200's cuSPARSE (CUDA 13.0) returned
            // CUSPARSE_STATUS_INTERNAL_ERROR from the preprocessing of a 3.6e9-entry matrix
            // (docs/scale.md); SpMV is valid without it, so that case goes on without.
            match pre {
                Err(_) if matches!(self.indices, Indices::I64 { .. }) => {}
                other => other?,
            }
        }
        // Finish the preprocessing here, not inside the first timed product.
        gpu.synchronize()?;
        Ok(prepared)
    }

    /// Calls `cusparseSpMV` or `cusparseSpMV_preprocess` (the same signature) for
    /// y = α·A·x + β·y with this matrix, algorithm and workspace, on the vectors the
    /// descriptors point at.
    fn call(
        &self, gpu: &Gpu, p: &Prepared<T>, f: SpmvCall, name: &str, alpha: T::Acc, beta: T::Acc,
    ) -> Result<()> {
        // SAFETY: the descriptors are valid and point at vectors of their lengths, alpha and
        // beta are host scalars of the compute type, the workspace has the size cuSPARSE asked
        // for; with beta = 0 cuSPARSE writes y without reading it.
        let (_guard, handle) = self.handle.lock(gpu.stream())?;
        check(
            unsafe {
                f(
                    handle,
                    sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    &alpha as *const T::Acc as *const c_void,
                    p.matrix.0,
                    p.x.0,
                    &beta as *const T::Acc as *const c_void,
                    p.y.0,
                    self.compute_type,
                    self.algorithm,
                    ptr(&p.workspace, gpu),
                )
            },
            name,
        )
    }

    /// `y = α·A·x + β·y` with cuSPARSE, for a matrix without a zero dimension.
    fn spmv(&self, gpu: &Gpu, p: &Prepared<T>, product: Scaled<'_, T>) -> Result<()> {
        let Scaled { alpha, x, beta, y } = product;
        // x has ncols and y nrows elements (DeviceMatrix checked them): the descriptors' lengths.
        p.x.set(ptr(x, gpu))?;
        p.y.set(ptr_mut(y, gpu))?;
        self.call(gpu, p, sys::cusparseSpMV, "cusparseSpMV", alpha.to_acc(), beta.to_acc())
    }

    /// `y = α·Aᵀ·x + β·y` with `CUSPARSE_OPERATION_TRANSPOSE` and the default algorithm
    /// (CSR_ALG2 takes no transpose), its descriptors made on the first call.
    fn spmv_transpose(&self, gpu: &Gpu, p: &Prepared<T>, product: Scaled<'_, T>) -> Result<()> {
        let algorithm = sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT;
        let mut later = self.later.lock().unwrap_or_else(|e| e.into_inner());
        let make = |xs: &CudaSlice<T>, ys: &CudaSlice<T>| {
            Ok((DnVec::new(xs, gpu, self.value_type)?, DnVec::new(ys, gpu, self.value_type)?))
        };
        // SAFETY (both calls): valid descriptors of Aᵀ's operands (x of nrows, y of ncols),
        // host scalars of the compute type, the workspace of the size cuSPARSE asked for.
        let names = ["cusparseSpMV_bufferSize (transpose)", "cusparseSpMV (transpose)"];
        self.run_plan(gpu, &mut later.transpose, product, names, make, |h, plan, (a, b), size| {
            let (vx, vy, ct) = (plan.0 .0, plan.1 .0, self.compute_type);
            match size {
                Some(size) => unsafe {
                    sys::cusparseSpMV_bufferSize(
                        h, TRANSPOSE, a, p.matrix.0, vx, b, vy, ct, algorithm, size,
                    )
                },
                None => unsafe {
                    sys::cusparseSpMV(h, TRANSPOSE, a, p.matrix.0, vx, b, vy, ct, algorithm, plan.2)
                },
            }
        })
    }

    /// `Y = α·A·X + β·Y` with `cusparseSpMM` (default algorithm), its descriptors made for
    /// the block's shape on the first call with that shape.
    fn spmm(&self, gpu: &Gpu, p: &Prepared<T>, product: Scaled<'_, T>, block: Block) -> Result<()> {
        let algorithm = sys::cusparseSpMMAlg_t::CUSPARSE_SPMM_ALG_DEFAULT;
        let mut later = self.later.lock().unwrap_or_else(|e| e.into_inner());
        if later.block.as_ref().map(|(b, _)| *b) != Some(block) {
            later.block = Some((block, None)); // the old shape's descriptors go first
        }
        let slot = &mut later.block.as_mut().expect("set above").1;
        let make = |xs: &CudaSlice<T>, ys: &CudaSlice<T>| {
            let rows = |v: &CudaSlice<T>| v.len() / block.k;
            Ok((
                DnMat::new(xs, gpu, self.value_type, rows(xs), block)?,
                DnMat::new(ys, gpu, self.value_type, rows(ys), block)?,
            ))
        };
        // SAFETY (both calls): valid descriptors of the block's shape (X of ncols·k, Y of
        // nrows·k), host scalars of the compute type, the workspace cuSPARSE asked for.
        let names = ["cusparseSpMM_bufferSize", "cusparseSpMM"];
        self.run_plan(gpu, slot, product, names, make, |h, plan, (a, b), size| {
            let (vx, vy, ct) = (plan.0 .0, plan.1 .0, self.compute_type);
            let n = NON_TRANSPOSE;
            match size {
                Some(size) => unsafe {
                    sys::cusparseSpMM_bufferSize(
                        h, n, n, a, p.matrix.0, vx, b, vy, ct, algorithm, size,
                    )
                },
                None => unsafe {
                    sys::cusparseSpMM(h, n, n, a, p.matrix.0, vx, b, vy, ct, algorithm, plan.2)
                },
            }
        })
    }

    /// Runs a product of operands `D` with the plan in `slot`, made on the first call: scratch
    /// operands of the product's sizes, their descriptors (`make`), the workspace size
    /// (`call` with `Some(size)`: the query), then every call (`call` with `None`: the product,
    /// its descriptors pointed at x and y first).
    fn run_plan<D: Operand>(
        &self, gpu: &Gpu, slot: &mut Option<Plan<D, T>>, product: Scaled<'_, T>,
        [query_name, call_name]: [&str; 2],
        make: impl FnOnce(&CudaSlice<T>, &CudaSlice<T>) -> Result<(D, D)>,
        call: impl Fn(
            sys::cusparseHandle_t,
            (&D, &D, *mut c_void),
            (*const c_void, *const c_void),
            Option<&mut usize>,
        ) -> sys::cusparseStatus_t,
    ) -> Result<()> {
        let Scaled { alpha, x, beta, y } = product;
        let (alpha, beta) = (alpha.to_acc(), beta.to_acc());
        // Host scalars of the compute type, as cuSPARSE reads α and β.
        let scalars =
            (&alpha as *const T::Acc as *const c_void, &beta as *const T::Acc as *const c_void);
        if slot.is_none() {
            let (xs, ys) = (gpu.alloc::<T>(x.len())?, gpu.alloc::<T>(y.len())?);
            let (vx, vy) = make(&xs, &ys)?;
            let mut size = 0usize;
            let (guard, handle) = self.handle.lock(gpu.stream())?;
            let null = std::ptr::null_mut();
            check(call(handle, (&vx, &vy, null), scalars, Some(&mut size)), query_name)?;
            drop(guard);
            let workspace = gpu.alloc::<u8>(size.max(1))?;
            *slot = Some(Plan { x: vx, y: vy, workspace, _vectors: (xs, ys) });
        }
        let plan = slot.as_ref().expect("made above");
        plan.x.set(ptr(x, gpu))?;
        plan.y.set(ptr_mut(y, gpu))?;
        let (_guard, handle) = self.handle.lock(gpu.stream())?;
        let operands = (&plan.x, &plan.y, ptr(&plan.workspace, gpu));
        check(call(handle, operands, scalars, None), call_name)
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceCusparse<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        match &self.prepared {
            Some(p) => self.spmv(gpu, p, Scaled { alpha: T::ONE, x, beta: T::ZERO, y }),
            None => gpu.fill(y, T::ZERO),
        }
    }
    /// cuSPARSE applies α and β itself; a matrix with a zero dimension leaves them to the layer.
    /// So does f16 with β ≠ 0: CSR_ALG2 with `CUDA_R_16F` data then returns wrong rows (up to
    /// 100% off, and inf, on most shared matrices; H200, CUDA 13.0), while β = 0 is right.
    unsafe fn launch_scaled(&self, gpu: &Gpu, product: Scaled<'_, T>) -> Option<Result<()>> {
        let p = self.prepared.as_ref()?;
        if T::PRECISION == Precision::F16 && product.beta != T::ZERO {
            return None;
        }
        Some(self.spmv(gpu, p, product))
    }
    /// cuSPARSE's own transposed SpMV (the baseline of `spmv bench --transpose`), for β = 0
    /// only: with β ≠ 0 it scatters α·a_ij·x_i into β·y, whose rounding left the oracle's bound
    /// (a row of sherman1 at 3.3e-14, f64, H200): the handle's copy of Aᵀ runs those.
    unsafe fn launch_transpose(&self, gpu: &Gpu, product: Scaled<'_, T>) -> Option<Result<()>> {
        if product.beta != T::ZERO {
            return None;
        }
        let p = self.prepared.as_ref()?;
        Some(self.spmv_transpose(gpu, p, product))
    }
    /// cuSPARSE's SpMM (the baseline of `spmv bench --rhs`), f64 and f32: with `CUDA_R_16F` data
    /// its sums left the oracle's bound by up to 3.6e-4 of Σ|a·x| (H200, CUDA 13.0), so f16
    /// runs one product per column.
    fn block_kernel(&self) -> BlockKernel {
        if self.prepared.is_some() && T::PRECISION != Precision::F16 {
            BlockKernel::Tiles
        } else {
            BlockKernel::None
        }
    }
    unsafe fn launch_block(
        &self, gpu: &Gpu, product: Scaled<'_, T>, block: Block,
    ) -> Option<Result<()>> {
        if T::PRECISION == Precision::F16 {
            return None;
        }
        let p = self.prepared.as_ref()?;
        Some(self.spmm(gpu, p, product, block))
    }
    fn workspace_bytes(&self) -> usize {
        let vectors = |p: &Prepared<T>| {
            std::mem::size_of::<T>() * (p.preprocess_vectors.0.len() + p.preprocess_vectors.1.len())
        };
        self.prepared.as_ref().map_or(0, |p| p.workspace_bytes + vectors(p))
    }
}
