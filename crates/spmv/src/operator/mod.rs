//! One operator abstraction for every backend: [`LinearOperator`], implemented by the host
//! handles ([`HostMatrix`](crate::HostMatrix), a plain [`Csr`](crate::Csr), the front door's
//! [`Operator`](crate::Operator)), one GPU ([`DeviceMatrix`](crate::DeviceMatrix)) and several
//! ([`DistributedMatrix`](crate::distributed::DistributedMatrix)). Each backend brings its own
//! vector type: `[T]` on the host, a `CudaSlice<T>` on one GPU, a
//! [`DistVector`](crate::distributed::DistVector) over several.
//!
//! Three products, each `out = α·op(A)·in + β·out` (β = 0 never reads `out`):
//! - [`LinearOperator::apply`]: `y = α·A·x + β·y`, the format's own kernels;
//! - [`LinearOperator::apply_transpose`]: `y = α·Aᵀ·x + β·y`, through Aᵀ stored as a matrix of
//!   its own, built from the matrix on the first transposed product (host: CSR; one GPU: the
//!   format's own transposed kernel where it has one, else [`TransposePath`]'s copy or one-off
//!   Aᵀ; over several GPUs: a second distributed matrix on the same partition): deterministic
//!   where Aᵀ's format is, no atomics;
//! - [`LinearOperator::apply_block`]: `Y = α·A·X + β·Y` for a block of `k` vectors stored in
//!   one array of `n·k` entries, [`Layout::ColMajor`] (vector j at `j·n`) or
//!   [`Layout::RowMajor`] (row i's k entries together). One GPU runs the format's block
//!   kernels where it has them (`DeviceMatrix::apply_block` says which path runs); the host
//!   and several GPUs loop over the columns with the format's product (the distributed vectors
//!   hold their blocks column-major always, see `DistributedMatrix::upload_block`).

use crate::error::{Error, Result};
use crate::matrix::Scalar;

/// How a block of `k` vectors of length `n` sits in one array of `n·k` entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Vector j is entries `j·n .. (j + 1)·n` (Fortran order, what cuSPARSE and SciPy's
    /// `order="F"` arrays use).
    #[default]
    ColMajor,
    /// Row i of the block is entries `i·k .. (i + 1)·k` (C order, NumPy's default).
    RowMajor,
}

/// How a GPU handle runs `Aᵀ·x` where its format has no transposed kernel of its own
/// (`DeviceMatrix::apply_transpose`). Both paths multiply by Aᵀ stored as a matrix of its own,
/// so each is deterministic where Aᵀ's format is, and neither scatters with atomics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransposePath {
    /// `Copy` where the GPU has room for it (A's CSR bytes at most half the free memory, the
    /// copy's size in most formats), else `OneOff`.
    #[default]
    Auto,
    /// Aᵀ in the format `auto` picks for Aᵀ's own structure, built on the first transposed
    /// product and kept: every later product is a forward product of Aᵀ.
    Copy,
    /// Aᵀ transposed on the host and uploaded as `csr-vector` for each product, then freed:
    /// no device memory kept, the cost of a transpose and an upload every time (for GPUs
    /// without room for a second copy of the entries).
    OneOff,
}

impl std::fmt::Display for TransposePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TransposePath::Auto => "auto",
            TransposePath::Copy => "copy",
            TransposePath::OneOff => "one-off",
        })
    }
}

impl std::str::FromStr for TransposePath {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(TransposePath::Auto),
            "copy" => Ok(TransposePath::Copy),
            "one-off" | "oneoff" => Ok(TransposePath::OneOff),
            _ => Err(Error::Unsupported(format!(
                "transposed-product path '{s}': expected auto, copy or one-off"
            ))),
        }
    }
}

/// A block of `k` vectors and how it is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// How many vectors (≥ 1).
    pub k: usize,
    /// How they are stored.
    pub layout: Layout,
}

impl Block {
    /// `k` column-major vectors.
    pub fn columns(k: usize) -> Self {
        Block { k, layout: Layout::ColMajor }
    }
    /// `k` vectors stored row by row.
    pub fn rows(k: usize) -> Self {
        Block { k, layout: Layout::RowMajor }
    }
}

/// `out = α·op(A)·in + β·out` on one backend (module doc).
///
/// Wrong lengths are an [`Error::Shape`]; a matrix without rows (or, for Aᵀ, without
/// columns) returns at once; α = 0 scales `out` by β without a product.
pub trait LinearOperator<T: Scalar>: Send + Sync {
    /// The backend's vector.
    type Vector: ?Sized;
    /// (rows, columns) of A.
    fn shape(&self) -> (usize, usize);
    /// `y = α·A·x + β·y`: `x` has `ncols` entries, `y` `nrows`.
    fn apply(&self, alpha: T, x: &Self::Vector, beta: T, y: &mut Self::Vector) -> Result<()>;
    /// `y = α·Aᵀ·x + β·y`: `x` has `nrows` entries, `y` `ncols`.
    fn apply_transpose(
        &self, alpha: T, x: &Self::Vector, beta: T, y: &mut Self::Vector,
    ) -> Result<()>;
    /// `Y = α·A·X + β·Y` for `block.k` vectors: `X` has `ncols·k` entries, `Y` `nrows·k`.
    fn apply_block(
        &self, alpha: T, x: &Self::Vector, beta: T, y: &mut Self::Vector, block: Block,
    ) -> Result<()>;
    /// The block layout the backend multiplies without a reordering copy.
    fn native_layout(&self) -> Layout {
        Layout::ColMajor
    }
}

/// Implements [`LinearOperator`] for a handle `$ty<T>` by its inherent `apply`,
/// `apply_transpose` and `apply_block` on `$vector` (each handle's products are written once,
/// as its own methods; the trait only names them).
macro_rules! by_inherent_methods {
    ($ty:ident, $vector:ty, $shape:expr) => {
        impl<T: Scalar> $crate::operator::LinearOperator<T> for $ty<T> {
            type Vector = $vector;
            fn shape(&self) -> (usize, usize) {
                ($shape)(self)
            }
            fn apply(&self, alpha: T, x: &$vector, beta: T, y: &mut $vector) -> Result<()> {
                $ty::apply(self, alpha, x, beta, y)
            }
            fn apply_transpose(
                &self, alpha: T, x: &$vector, beta: T, y: &mut $vector,
            ) -> Result<()> {
                $ty::apply_transpose(self, alpha, x, beta, y)
            }
            fn apply_block(
                &self, alpha: T, x: &$vector, beta: T, y: &mut $vector,
                block: $crate::operator::Block,
            ) -> Result<()> {
                $ty::apply_block(self, alpha, x, beta, y, block)
            }
        }
    };
}
pub(crate) use by_inherent_methods;

/// The error for a block whose arrays do not hold `k` vectors of an operator of `shape`.
pub fn check_block((nrows, ncols): (usize, usize), x: usize, y: usize, block: Block) -> Result<()> {
    let k = block.k;
    if k == 0 {
        return Err(Error::Shape("a block of 0 vectors: k must be at least 1".into()));
    }
    let (want_x, want_y) = (ncols.checked_mul(k), nrows.checked_mul(k));
    if want_x != Some(x) || want_y != Some(y) {
        return Err(Error::Shape(format!(
            "a block of {k} vectors for a {nrows} x {ncols} matrix needs X of {ncols}·{k} and Y of {nrows}·{k} entries; given X of {x}, Y of {y}"
        )));
    }
    Ok(())
}

/// The error for vectors of the transposed product that do not fit the matrix.
pub(crate) fn check_transpose((nrows, ncols): (usize, usize), x: usize, y: usize) -> Result<()> {
    if x != nrows || y != ncols {
        return Err(Error::Shape(format!(
            "Aᵀ·x for a {nrows} x {ncols} matrix needs x of {nrows} and y of {ncols} entries; given x of {x}, y of {y}"
        )));
    }
    Ok(())
}

/// Rows per tile of the transposes between layouts: a tile's `TILE_ROWS · k` values of a
/// row-major block are read once and stay in cache while its piece of each of the k columns
/// is written, and the tiles run on rayon's threads. Column by column over the whole block
/// read (or wrote) each row-major value in a cache line of its own, k passes over the block:
/// 10^6 rows, k = 16, 191 ms one way and 170 ms back on this project's 2-core VM; tiled,
/// [`host_block`]'s row-major product through them (an identity product) 470–515 → 245–265
/// ms, most of the rest the first touch of the fresh copies' pages.
const TILE_ROWS: usize = 1024;

/// `k` vectors of length `n` in `layout`, as column-major (a copy for row-major).
pub(crate) fn to_columns<T: Copy + Send + Sync>(
    data: &[T], n: usize, k: usize, layout: Layout,
) -> Vec<T> {
    use rayon::prelude::*;
    assert_eq!(data.len(), n * k, "to_columns: the caller checks the block's shape");
    if layout == Layout::ColMajor || data.is_empty() {
        return data.to_vec();
    }
    let mut cols = Vec::with_capacity(n * k);
    // Each tile of rows owns its piece of every column.
    let tiles = n.div_ceil(TILE_ROWS);
    let mut pieces: Vec<Vec<_>> = (0..tiles).map(|_| Vec::with_capacity(k)).collect();
    for column in cols.spare_capacity_mut()[..n * k].chunks_mut(n) {
        for (tile, piece) in pieces.iter_mut().zip(column.chunks_mut(TILE_ROWS)) {
            tile.push(piece);
        }
    }
    pieces.into_par_iter().zip(data.par_chunks(TILE_ROWS * k)).for_each(|(tile, rows)| {
        for (j, piece) in tile.into_iter().enumerate() {
            for (i, value) in piece.iter_mut().enumerate() {
                value.write(rows[i * k + j]);
            }
        }
    });
    // SAFETY: data holds n·k values (asserted; n, k ≥ 1 as it is not empty), so the k
    // columns of n cut into tiles of TILE_ROWS pair with data's tiles of TILE_ROWS rows one
    // to one, a piece as long as its tile's rows: every slot of 0..n·k was written above.
    unsafe { cols.set_len(n * k) };
    cols
}

/// Column-major `cols` (k vectors of length n) written into `out` in `layout`.
pub(crate) fn from_columns<T: Copy + Send + Sync>(
    cols: &[T], n: usize, k: usize, layout: Layout, out: &mut [T],
) {
    use rayon::prelude::*;
    if layout == Layout::ColMajor || out.is_empty() {
        return out.copy_from_slice(cols);
    }
    out.par_chunks_mut(TILE_ROWS * k).enumerate().for_each(|(tile, rows)| {
        let first = tile * TILE_ROWS;
        for j in 0..k {
            let piece = &cols[j * n + first..j * n + first + rows.len() / k];
            for (i, &value) in piece.iter().enumerate() {
                rows[i * k + j] = value;
            }
        }
    });
}

/// `Y = α·op(A)·X + β·Y` on the host, one column at a time with `apply`, the single-vector
/// product of an operator of `shape` (the host backends' block product; with `apply_transpose`
/// and the shape swapped, the transposed one).
pub fn host_block<T: Scalar>(
    shape: (usize, usize), apply: impl Fn(T, &[T], T, &mut [T]) -> Result<()>,
    (alpha, x, beta, y): (T, &[T], T, &mut [T]), block: Block,
) -> Result<()> {
    check_block(shape, x.len(), y.len(), block)?;
    let ((nrows, ncols), k) = (shape, block.k);
    if nrows == 0 {
        return Ok(()); // nothing to write, however many (empty) vectors the block says
    }
    // The product of each column of X into its column of Y, both column-major.
    let by_columns = |x: &[T], y: &mut [T]| -> Result<()> {
        for j in 0..k {
            apply(alpha, &x[j * ncols..(j + 1) * ncols], beta, &mut y[j * nrows..(j + 1) * nrows])?;
        }
        Ok(())
    };
    match block.layout {
        Layout::ColMajor => by_columns(x, y)?,
        Layout::RowMajor => {
            let xc = to_columns(x, ncols, k, Layout::RowMajor);
            // β = 0 must not read Y (it may hold NaN): its copy starts as zeros then.
            let mut yc = if beta == T::ZERO {
                vec![T::ZERO; y.len()]
            } else {
                to_columns(y, nrows, k, Layout::RowMajor)
            };
            by_columns(&xc, &mut yc)?;
            from_columns(&yc, nrows, k, Layout::RowMajor, y);
        }
    }
    Ok(())
}

/// Whether two address ranges (bytes, host or device) share a byte. `x` and `y` of a product
/// must not: the kernels read `x` while they write `y`, so an overlapping `y` would change
/// `x` under them. Callers that take raw memory (the Python package) check this; an empty
/// range overlaps nothing.
pub fn overlap(a: std::ops::Range<u64>, b: std::ops::Range<u64>) -> bool {
    a.start < a.end && b.start < b.end && a.start < b.end && b.start < a.end
}

#[cfg(test)]
mod tests;
