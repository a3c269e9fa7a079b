//! Upload of the BRCSD-I and BRCSD-II kernels (the DIA layout uses DIA's).

use cudarc::driver::LaunchConfig;

use super::{Brcsd1, Brcsd2, KERNELS, NAME};
use crate::error::Result;
use crate::formats::dia::diagonals;
use crate::formats::{arg_u32, Arg, OneKernel};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

/// The arrays both kernels end with, in their order: `first`, each BRCSD-I block's first row
/// or each BRCSD-II group's first block, and `diag`, its first offset (each with one entry
/// past the last); the offsets; its first slot (likewise); the slots.
fn blocks<T: Scalar>(
    gpu: &Gpu, [first, diag]: [&[u32]; 2], offsets: &[i32], slots: &[u64], data: &[T],
) -> Result<[Arg<T>; 5]> {
    Ok([
        Arg::u32s(gpu, first)?,
        Arg::u32s(gpu, diag)?,
        Arg::i32s(gpu, offsets)?,
        Arg::u64s(gpu, slots)?,
        Arg::values(gpu, data)?,
    ])
}

pub(super) fn upload_brcsd1<T: Scalar>(gpu: &Gpu, a: &Brcsd1<T>) -> Result<OneKernel<T>> {
    // One CUDA block per piece, `piece_rows` threads each. Pieces below 2^31 (at most one per
    // row), piece_rows ≤ 1024 by the conversion's checks.
    let config = LaunchConfig {
        grid_dim: (arg_u32(NAME, "pieces", a.pieces())?.max(1), 1, 1),
        block_dim: (arg_u32(NAME, "piece rows", a.piece_rows)?, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut args = vec![Arg::Cols, Arg::u32s(gpu, &a.piece_row)?, Arg::u32s(gpu, &a.piece_block)?];
    args.extend(blocks(gpu, [&a.block_row, &a.block_diag], &a.offsets, &a.block_data, &a.data)?);
    let kernel = Kernel::for_type::<T>(gpu, &KERNELS, "brcsd1", config)?;
    // SAFETY: the arguments match BRCSD1_ARGS(T). One CUDA block per piece (m > 0 gives at
    // least one), pieces at most blockDim rows: rows piece_row[p] + tid < piece_row[p+1]
    // ≤ m = y.len(); the piece's block b < blocks indexes block_row/diag/data (blocks + 1
    // entries); slots block_data[b] + i·h + l < block_data[b+1] ≤ data.len(); the column
    // guard keeps x indices below n = x.len(). Pieces partition the rows: one write each.
    Ok(unsafe { OneKernel::new(kernel, args) })
}

pub(super) fn upload_brcsd2<T: Scalar>(
    gpu: &Gpu, a: &Brcsd2<T>, nrows: usize,
) -> Result<OneKernel<T>> {
    let mut args = vec![
        Arg::Dims,
        // Below 2^31 by the conversion's checks.
        Arg::Count(arg_u32(NAME, "block rows", a.block_rows)?),
        Arg::Count(arg_u32(NAME, "groups", a.groups())?),
    ];
    args.extend(blocks(gpu, [&a.group_block, &a.group_diag], &a.offsets, &a.group_data, &a.data)?);
    let kernel = diagonals::row_kernel::<T>(gpu, &KERNELS, "brcsd2", nrows)?;
    // SAFETY: the arguments match BRCSD2_ARGS(T). Threads stop at m = y.len(); m > 0 gives
    // groups ≥ 1 and the search keeps lo < groups with group_block[lo] ≤ r / bh <
    // group_block[groups] = blocks; group_diag/group_data have groups + 1 entries; the
    // block's slots lie below group_data[lo + 1] ≤ data.len(); the column guard keeps x
    // indices below n = x.len().
    Ok(unsafe { OneKernel::new(kernel, args) })
}
