//! Matrix generators (placeholder, being written).
use crate::{Csr, Result};

pub fn generate(_spec: &str) -> Result<Csr<f64>> {
    todo!()
}
