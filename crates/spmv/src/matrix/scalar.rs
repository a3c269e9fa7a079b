//! The element types a matrix can hold on the host and on the GPU.

use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// A floating-point element type: `f64` or `f32`.
///
/// `CUDA_TYPE` and `SUFFIX` tie the Rust type to its CUDA C spelling and to the suffix of
/// every kernel instantiated for it (`csr_scalar_f64`), so kernel names are predictable.
pub trait Scalar:
    Copy
    + Send
    + Sync
    + Default
    + PartialEq
    + PartialOrd
    + Debug
    + Display
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + cudarc::driver::DeviceRepr
    + cudarc::driver::ValidAsZeroBits
{
    const PRECISION: Precision;
    /// Kernel name suffix, also the user-facing name: "f64", "f32".
    const SUFFIX: &'static str;
    /// The type's name in CUDA C.
    const CUDA_TYPE: &'static str;
    /// Unit roundoff (half the machine epsilon).
    const UNIT_ROUNDOFF: f64;
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn nan() -> Self;
    fn abs(self) -> Self;
}

macro_rules! impl_scalar {
    ($t:ty, $prec:ident, $suffix:literal, $cuda:literal) => {
        impl Scalar for $t {
            const PRECISION: Precision = Precision::$prec;
            const SUFFIX: &'static str = $suffix;
            const CUDA_TYPE: &'static str = $cuda;
            const UNIT_ROUNDOFF: f64 = <$t>::EPSILON as f64 / 2.0;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn nan() -> Self {
                <$t>::NAN
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
        }
    };
}
impl_scalar!(f64, F64, "f64", "double");
impl_scalar!(f32, F32, "f32", "float");

/// The precision of a run, as chosen on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F64,
    F32,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
        }
    }
    pub fn bytes(self) -> usize {
        match self {
            Precision::F64 => 8,
            Precision::F32 => 4,
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "f64" | "double" => Ok(Precision::F64),
            "f32" | "float" | "single" => Ok(Precision::F32),
            _ => Err(format!("unknown precision '{s}' (expected f64 or f32)")),
        }
    }
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
