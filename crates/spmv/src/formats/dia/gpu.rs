//! Upload and launch of the DIA kernels, one product and a block of vectors (also
//! DIA-Adaptive's DIA layout).

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{diagonals, Dia, BLOCK_KERNELS, KERNELS};
use crate::error::Result;
use crate::formats::values::DeviceValues;
use crate::formats::{arg_u32, BlockKernel, BlockKernels, DeviceFormat, LanesRule, Scaled};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;
use crate::operator::Block;

pub struct DeviceDia<T> {
    diagonals: u32,
    offsets: CudaSlice<i32>,
    data: DeviceValues<T>,
    kernel: Kernel,
    block: BlockKernels,
}

impl<T: Scalar> DeviceDia<T> {
    /// Uploads `a`; errors are reported under the name of `format`.
    pub fn new(gpu: &Gpu, a: &Dia<T>, format: &'static str) -> Result<Self> {
        let codec = a.coded.as_ref().map_or("", |c| c.codec().kernel_suffix());
        let kernel = diagonals::row_kernel::<T>(gpu, &KERNELS, &format!("dia{codec}"), a.nrows)?;
        let (tiles, lanes) = (format!("dia_block{codec}"), format!("dia_block{codec}_lanes"));
        let block = BlockKernels::new(
            &BLOCK_KERNELS,
            tiles,
            lanes,
            kernel.config(),
            a.nrows,
            LanesRule::THREAD_PER_ROW,
        )?;
        Ok(DeviceDia {
            // Below m + n < 2^32.
            diagonals: arg_u32(format, "diagonals", a.offsets.len())?,
            offsets: gpu.upload_nonempty(&a.offsets)?,
            data: match &a.coded {
                None => DeviceValues::upload_full(gpu, &a.data)?,
                Some(c) => DeviceValues::upload(gpu, c)?,
            },
            kernel,
            block,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceDia<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (m, n) = diagonals::launch_dims(x, y);
        // SAFETY: the arguments match dia{codec}_<T>(u32, u32, u32, const int*, const void*,
        // const T*, T*) (the full kernel's values pointer is the codes argument). Threads stop at
        // m = y.len(); the values hold diagonals·m slots (at least one element, never read, when
        // empty); the column guard keeps every x index below n = x.len().
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&m).arg(&n).arg(&self.diagonals).arg(&self.offsets);
                self.data.push(a);
                a.arg(x).arg(y);
            })
        }
    }
    fn block_kernel(&self) -> BlockKernel {
        BlockKernel::Tiles
    }
    unsafe fn launch_block(&self, gpu: &Gpu, p: Scaled<'_, T>, block: Block) -> Option<Result<()>> {
        // SAFETY: as for `launch`, with block.cu's (m, n, k) and (alpha, beta); x holds n·k and
        // y m·k entries (the handle's check), every index is formed in 64 bits (block_at). The
        // rows m, below 2^31 (check_shape), come from the block's length.
        launch_block_kernels!(self.block, gpu, p, block, m = (p.y.len() / block.k) as u32, |a| {
            a.arg(&self.diagonals).arg(&self.offsets);
            self.data.push(a);
        })
    }
}
