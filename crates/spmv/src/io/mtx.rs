//! Matrix Market reader and writer (placeholder, being written).
use std::path::Path;
use crate::{Csr, Result, Scalar};

pub fn read_matrix_market<T: Scalar>(_path: &Path) -> Result<Csr<T>> {
    todo!()
}
pub fn write_matrix_market<T: Scalar>(_path: &Path, _a: &Csr<T>) -> Result<()> {
    todo!()
}
