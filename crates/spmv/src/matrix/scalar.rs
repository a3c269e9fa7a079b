//! The element types a matrix can hold on the host and on the GPU.

use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// A floating-point element type: `f64`, `f32` or `f16` (`half::f16`).
///
/// Sums run in [`Scalar::Acc`]: the type itself for `f64` and `f32`, `f32` for `f16` (f16
/// values and x, products and sums in f32, y rounded once to f16 — the tensor cores' and
/// cuSPARSE's mixed precision; docs/dasp.md).
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
    /// The [`Precision`] this type stands for.
    const PRECISION: Precision;
    /// Kernel name suffix, also the user-facing name: "f64", "f32".
    const SUFFIX: &'static str;
    /// The type's name in CUDA C.
    const CUDA_TYPE: &'static str;
    /// Unit roundoff (half the machine epsilon).
    const UNIT_ROUNDOFF: f64;
    /// The largest error of rounding a value near zero to this type (half the spacing of its
    /// subnormals).
    const TINY: f64;
    /// The largest finite value.
    const MAX: f64;
    /// Additive identity, 0.
    const ZERO: Self;
    /// Multiplicative identity, 1.
    const ONE: Self;
    /// The type sums are accumulated in.
    type Acc: Scalar;
    /// Widens to the accumulation type (exact).
    fn to_acc(self) -> Self::Acc;
    /// Rounds an accumulated sum to this type (to nearest).
    fn from_acc(a: Self::Acc) -> Self;
    /// Rounds an f64 to this type (to nearest; out of range becomes ±infinity).
    fn from_f64(v: f64) -> Self;
    /// Widens to f64 (exact).
    fn to_f64(self) -> f64;
    /// A quiet NaN, used to poison outputs before checked runs.
    fn nan() -> Self;
    /// Absolute value (clears the sign bit, NaN included).
    fn abs(self) -> Self;
    /// Every registered format in this type: what [`crate::formats::registry`] returns. A
    /// method of each type rather than a generic function, so that the formats' code is
    /// compiled once, in this crate, and not again in every crate that builds a format.
    #[doc(hidden)]
    fn registry() -> Vec<crate::formats::FormatInfo<Self>>;
}

macro_rules! impl_scalar {
    ($t:ty, $prec:ident, $suffix:literal, $cuda:literal, $tiny:expr) => {
        impl Scalar for $t {
            const PRECISION: Precision = Precision::$prec;
            const SUFFIX: &'static str = $suffix;
            const CUDA_TYPE: &'static str = $cuda;
            const UNIT_ROUNDOFF: f64 = <$t>::EPSILON as f64 / 2.0;
            const TINY: f64 = $tiny;
            const MAX: f64 = <$t>::MAX as f64;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            type Acc = $t;
            #[inline]
            fn to_acc(self) -> Self {
                self
            }
            #[inline]
            fn from_acc(a: Self) -> Self {
                a
            }
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
            fn registry() -> Vec<crate::formats::FormatInfo<Self>> {
                crate::formats::registered()
            }
        }
    };
}
impl_scalar!(f64, F64, "f64", "double", f64::from_bits(1) / 2.0);
impl_scalar!(f32, F32, "f32", "float", f32::from_bits(1) as f64 / 2.0);

/// Half precision: storage only in the kernels (`half_t` in gpu/common.cuh, 16 bits
/// converted with `cvt`), arithmetic in f32.
impl Scalar for half::f16 {
    const PRECISION: Precision = Precision::F16;
    const SUFFIX: &'static str = "f16";
    const CUDA_TYPE: &'static str = "half_t";
    const UNIT_ROUNDOFF: f64 = 4.8828125e-4; // 2^-11
    const TINY: f64 = 2.9802322387695312e-8; // 2^-25
    const MAX: f64 = 65504.0;
    const ZERO: Self = half::f16::ZERO;
    const ONE: Self = half::f16::ONE;
    type Acc = f32;
    #[inline]
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
    #[inline]
    fn from_acc(a: f32) -> Self {
        half::f16::from_f32(a)
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        half::f16::from_f64(v)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn nan() -> Self {
        half::f16::NAN
    }
    fn abs(self) -> Self {
        half::f16::from_bits(self.to_bits() & 0x7fff)
    }
    fn registry() -> Vec<crate::formats::FormatInfo<Self>> {
        crate::formats::registered()
    }
}

/// `sum + v·x` in the accumulation type (exact products for f16: two f16 significands fit
/// in f32's).
#[inline]
pub fn mul_acc<T: Scalar>(sum: T::Acc, v: T, x: T) -> T::Acc {
    sum + v.to_acc() * x.to_acc()
}

/// The precision of a run, as chosen on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 64-bit IEEE double (`f64`).
    F64,
    /// 32-bit IEEE single (`f32`).
    F32,
    /// 16-bit IEEE half (`half::f16`), summed in f32.
    F16,
}

impl Precision {
    /// The lowercase name: "f64", "f32", "f16" (also [`Scalar::SUFFIX`]).
    pub fn name(self) -> &'static str {
        match self {
            Precision::F64 => "f64",
            Precision::F32 => "f32",
            Precision::F16 => "f16",
        }
    }
    /// Bytes per element: 8, 4 or 2.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F64 => 8,
            Precision::F32 => 4,
            Precision::F16 => 2,
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "f64" | "double" => Ok(Precision::F64),
            "f32" | "float" | "single" => Ok(Precision::F32),
            "f16" | "half" => Ok(Precision::F16),
            _ => Err(format!("unknown precision '{s}' (expected f64, f32 or f16)")),
        }
    }
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
