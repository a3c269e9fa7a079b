//! The product a benchmark row measures — `y = A·x`, `y = Aᵀ·x` (`spmv bench --transpose`) or
//! `Y = A·X` for a block of k vectors (`--rhs`) — with its operands: the input, and the exact
//! result of each vector for the check.

use cudarc::driver::CudaSlice;

use crate::error::Result;
use crate::formats::{DeviceMatrix, HostMatrix};
use crate::matrix::{Csr, Scalar};
use crate::operator::{Block, Layout, LinearOperator};
use crate::reference::{test_vector, Check, Oracle};

/// Which product a row measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Product {
    /// `y = A·x`.
    #[default]
    Forward,
    /// `y = Aᵀ·x`.
    Transpose,
    /// `Y = A·X` for a block of vectors.
    Block(Block),
}

impl Product {
    /// How the report names it: `A·x`, `Aᵀ·x`, `A·X k=8` (`,col` for column-major blocks).
    pub fn name(&self) -> String {
        match self {
            Product::Forward => "A·x".into(),
            Product::Transpose => "Aᵀ·x".into(),
            Product::Block(b) => format!("A·X k={}{}", b.k, layout_suffix(b.layout)),
        }
    }
    /// What a row's format label gains, so that each product is its own line in the summary:
    /// nothing for `A·x`, ` Aᵀ`, ` k=8`.
    pub fn label_suffix(&self) -> String {
        Self::label_suffix_of(&self.name())
    }
    /// [`Product::label_suffix`] from a product's name (a report's rows keep the name).
    pub fn label_suffix_of(name: &str) -> String {
        match name {
            "A·x" => String::new(),
            "Aᵀ·x" => " Aᵀ".into(),
            block => format!(" {}", block.trim_start_matches("A·X ")),
        }
    }
    /// Vectors per product (k of a block, else 1).
    pub fn vectors(&self) -> usize {
        match self {
            Product::Block(b) => b.k,
            _ => 1,
        }
    }
    /// Lengths of one input and one output vector for a `nrows × ncols` matrix.
    pub fn lengths(&self, (nrows, ncols): (usize, usize)) -> (usize, usize) {
        match self {
            Product::Transpose => (nrows, ncols),
            _ => (ncols, nrows),
        }
    }

    /// Runs the product on the GPU (`y` fully written).
    pub(super) fn run_device<T: Scalar>(
        &self, d: &DeviceMatrix<T>, x: &CudaSlice<T>, y: &mut CudaSlice<T>,
    ) -> Result<()> {
        match *self {
            Product::Forward => d.spmv(x, y),
            Product::Transpose => d.apply_transpose(T::ONE, x, T::ZERO, y),
            Product::Block(b) => d.apply_block(T::ONE, x, T::ZERO, y, b),
        }
    }

    /// Runs the product on the CPU.
    pub(super) fn run_host<T: Scalar>(
        &self, h: &HostMatrix<T>, x: &[T], y: &mut [T],
    ) -> Result<()> {
        match *self {
            Product::Forward => h.spmv(x, y),
            Product::Transpose => h.apply_transpose(T::ONE, x, T::ZERO, y),
            Product::Block(b) => LinearOperator::apply_block(h, T::ONE, x, T::ZERO, y, b),
        }
    }
}

fn layout_suffix(layout: Layout) -> &'static str {
    match layout {
        Layout::RowMajor => "",
        Layout::ColMajor => ",col",
    }
}

/// A product's input and the exact result of each of its vectors.
pub(super) struct Operands<T> {
    /// The input: one vector, or the block's k in its layout.
    pub x: Vec<T>,
    /// One oracle per vector.
    pub oracles: Vec<Oracle>,
    /// Aᵀ, for the transposed product's bound.
    pub transposed: Option<Csr<T>>,
    /// Entries of the output (`nrows·k`, or `ncols` for Aᵀ).
    pub y_len: usize,
    product: Product,
}

impl<T: Scalar> Operands<T> {
    /// The test vector (vector j of a block: the test vector rotated by j·7919 places, so no
    /// two columns are alike) and the oracles.
    pub fn new(a: &Csr<T>, product: Product) -> Result<Self> {
        let transposed = match product {
            Product::Transpose => Some(a.transpose()?),
            _ => None,
        };
        let matrix = transposed.as_ref().unwrap_or(a);
        let (n, m) = product.lengths((a.nrows(), a.ncols()));
        let k = product.vectors();
        let base = test_vector::<T>(n);
        let column = |j: usize| -> Vec<T> {
            let shift = if n == 0 { 0 } else { (j * 7919) % n };
            (0..n).map(|i| base[(i + shift) % n]).collect()
        };
        let columns: Vec<Vec<T>> = (0..k).map(column).collect();
        let oracles = columns.iter().map(|c| Oracle::new(matrix, c)).collect();
        let x = match product {
            Product::Block(Block { layout: Layout::RowMajor, .. }) => {
                (0..n * k).map(|i| columns[i % k][i / k]).collect()
            }
            _ => columns.concat(),
        };
        Ok(Operands { x, oracles, transposed, y_len: m * k, product })
    }

    /// Why the exact results lie outside `T`'s range (the first vector's reason).
    pub fn range_error(&self) -> Option<String> {
        self.oracles.iter().find_map(|o| o.range_error::<T>())
    }

    /// Every vector of `y` against its oracle: the rows outside the bound summed, the worst
    /// relative error kept (its row counted in the output's own numbering).
    pub fn check(&self, y: &[T]) -> Check {
        let k = self.oracles.len();
        let m = self.y_len / k.max(1);
        let row_major = matches!(self.product, Product::Block(b) if b.layout == Layout::RowMajor);
        let mut all = Check { max_rel_error: 0.0, failed_rows: 0, worst_row: None };
        for (j, oracle) in self.oracles.iter().enumerate() {
            let column: Vec<T> = if row_major {
                (0..m).map(|i| y[i * k + j]).collect()
            } else {
                y[j * m..(j + 1) * m].to_vec()
            };
            let c = oracle.check(&column);
            all.failed_rows += c.failed_rows;
            if c.max_rel_error > all.max_rel_error {
                all.max_rel_error = c.max_rel_error;
                all.worst_row = c.worst_row;
            }
        }
        all
    }
}
