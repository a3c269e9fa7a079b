//! The application layer: what the command line (`spmv-cli`) and the Python package
//! (`spmv-py`) both do, written once — choose where to run ([`Target`]), read device lists and
//! precisions, open GPUs once per process, split a matrix over them, hold an operator whose
//! precision is chosen at run time, and run a benchmark ([`bench`]), a solve ([`solve`]) or
//! PageRank ([`pagerank`]) into a report. The front ends parse their arguments and show the
//! report. Errors name the argument (`devices`, `precision`); the front ends add their own
//! spelling of it (`--devices`).

/// `Named` and `FromStr` for an enum from its values' names: what the value is (in errors),
/// then each name and its value.
macro_rules! named {
    ($ty:ty, $what:literal, [$($name:literal => $value:expr),+ $(,)?]) => {
        impl $crate::app::Named for $ty {
            const WHAT: &'static str = $what;
            const NAMES: &'static [(&'static str, Self)] = &[$(($name, $value)),+];
        }
        impl std::str::FromStr for $ty {
            type Err = $crate::error::Error;
            fn from_str(s: &str) -> $crate::error::Result<Self> {
                <Self as $crate::app::Named>::from_name(s)
            }
        }
    };
}

pub mod bench;
pub mod pagerank;
pub mod solve;

pub use crate::backend::{Parts, RankPlace, Target};

/// An enum a user names by a word (`cg`, `jacobi`, `gpu`): its values and their names, once.
pub trait Named: Copy + PartialEq + 'static {
    /// What a value is, in errors ("method").
    const WHAT: &'static str;
    /// Every value with its name.
    const NAMES: &'static [(&'static str, Self)];

    /// The value named `s`, or an error listing the names.
    fn from_name(s: &str) -> Result<Self> {
        if let Some(&(_, value)) = Self::NAMES.iter().find(|(name, _)| *name == s) {
            return Ok(value);
        }
        let names: Vec<String> = Self::NAMES.iter().map(|(name, _)| format!("{name:?}")).collect();
        let (last, rest) = names.split_last().expect("a named enum has values");
        let list =
            if rest.is_empty() { last.clone() } else { format!("{} or {last}", rest.join(", ")) };
        Err(Error::Argument(format!("{} must be {list}, not {s:?}", Self::WHAT)))
    }

    /// Its name.
    fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, v)| *v == self).map_or("?", |(name, _)| name)
    }
}

use std::sync::{Arc, Mutex};

use crate::choice::Choice;
use crate::distributed::Exchange;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::matrix::{Csr, Precision, Scalar};
use crate::{Backend, Operator};

/// Where the user asked products to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Place {
    /// The first GPU when one can be used, else the CPU.
    #[default]
    Auto,
    /// The first GPU, or an error saying why there is none.
    Gpu,
    /// The CPU.
    Cpu,
}

named!(Place, "device", ["auto" => Place::Auto, "gpu" => Place::Gpu, "cpu" => Place::Cpu]);

/// The backend for `place`; with [`Place::Auto`] and no usable GPU, the CPU and the reason
/// the GPU could not be used (for the caller to say).
pub fn backend(place: Place) -> Result<(Backend, Option<Error>)> {
    match place {
        Place::Cpu => Ok((Backend::Cpu, None)),
        Place::Gpu => Ok((Backend::Gpu(gpu(0)?), None)),
        Place::Auto => Ok(match gpu(0) {
            Ok(g) => (Backend::Gpu(g), None),
            Err(e) => (Backend::Cpu, Some(e)),
        }),
    }
}

/// The process's handle of device `ordinal`, opened on first use and shared after (one
/// context per device: the primary context, which CuPy and PyTorch share).
pub fn gpu(ordinal: usize) -> Result<Arc<Gpu>> {
    static OPEN: Mutex<Vec<(usize, Arc<Gpu>)>> = Mutex::new(Vec::new());
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, g)) = open.iter().find(|(o, _)| *o == ordinal) {
        return Ok(g.clone());
    }
    let g = Gpu::new(ordinal)?;
    open.push((ordinal, g.clone()));
    Ok(g)
}

/// Most parts of a device list.
pub const MAX_PARTS: usize = 1024;

/// The parts of a device list: a count (`2`: devices 0 and 1) or ordinals (`0,1`; one may
/// repeat, putting several parts on one device).
pub fn parse_devices(list: &str) -> Result<Vec<usize>> {
    let bad = |text: String| Err(Error::Argument(format!("devices {list}: {text}")));
    let items: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let mut numbers = Vec::with_capacity(items.len().min(MAX_PARTS + 1));
    for s in &items {
        match s.parse::<usize>() {
            Ok(n) => numbers.push(n),
            Err(_) => return bad(format!("'{s}' is not a device count or ordinal")),
        }
    }
    match numbers.as_slice() {
        [] => bad("no device given".into()),
        [0] => bad("give a count of at least 1, or a list of ordinals such as 0,1".into()),
        // A count sizes the list of parts: more than any host has GPUs is refused, not allocated.
        [count] if items.len() == 1 && *count > MAX_PARTS => {
            bad(format!("at most {MAX_PARTS} parts (a count of devices, or a list of ordinals)"))
        }
        [count] if items.len() == 1 => Ok((0..*count).collect()),
        _ if numbers.len() > MAX_PARTS => {
            bad(format!("{} parts given, at most {MAX_PARTS}", numbers.len()))
        }
        _ => Ok(numbers),
    }
}

/// One handle per part of `ordinals` (the same handle where an ordinal repeats).
pub fn open_gpus(ordinals: &[usize]) -> Result<Vec<Arc<Gpu>>> {
    if ordinals.is_empty() {
        return Err(Error::Argument(
            "devices: give a count of at least 1 or a list of device ordinals".into(),
        ));
    }
    ordinals
        .iter()
        .map(|&d| {
            gpu(d).map_err(|e| match e {
                Error::NoGpu(why) => Error::NoGpu(format!("devices: device {d}: {why}")),
                other => other,
            })
        })
        .collect()
}

impl Target {
    /// `backend`, or with `devices` one part per listed device (which needs a GPU).
    pub fn new(backend: Backend, devices: Option<&[usize]>, exchange: Exchange) -> Result<Self> {
        match devices {
            None => Ok(Target::One(backend)),
            Some(_) if matches!(backend, Backend::Cpu) => {
                Err(Error::NoGpu("devices: several GPUs were asked for, and none is used".into()))
            }
            Some(devices) => Target::parts(devices, exchange),
        }
    }

    /// One part per listed device (an error naming the device that cannot be opened).
    pub fn parts(devices: &[usize], exchange: Exchange) -> Result<Self> {
        Ok(Target::Parts(Parts { gpus: open_gpus(devices)?, devices: devices.to_vec(), exchange }))
    }
}

/// The precisions of a list (`f64,f32`).
pub fn parse_precisions(list: &str) -> Result<Vec<Precision>> {
    let p: Vec<Precision> = list
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().map_err(Error::Argument))
        .collect::<Result<_>>()?;
    if p.is_empty() {
        return Err(Error::Argument("no precision given (f64, f32, f16)".into()));
    }
    Ok(p)
}

/// `a` rounded to T, refused (as the reader refuses such a value) when a value overflows T:
/// rounding would make it ±infinity and every product through its row infinite or NaN.
pub fn fitted<T: Scalar>(a: &Csr<f64>) -> Result<Csr<T>> {
    use rayon::prelude::*;
    if let Some(k) = a.values().par_iter().position_first(|v| v.abs() > T::MAX) {
        let row = a.row_ptr().partition_point(|&p| p <= k) - 1;
        return Err(Error::Unsupported(format!(
            "the value {:e} at row {row}, column {} is outside the range of {} (±{:e}): \
             use a wider precision",
            a.values()[k],
            a.col_idx()[k],
            T::SUFFIX,
            T::MAX
        )));
    }
    Ok(a.cast())
}

/// An operator whose precision was chosen at run time.
pub enum AnyOperator {
    /// In f64.
    F64(Operator<f64>),
    /// In f32.
    F32(Operator<f32>),
    /// In f16.
    F16(Operator<half::f16>),
}

impl AnyOperator {
    /// `a` (f64) in `precision` (values checked to fit it) and `spec`, on `backend`.
    pub fn new(
        a: &Csr<f64>, spec: &Choice, precision: Precision, backend: &Backend,
    ) -> Result<Self> {
        Ok(match precision {
            Precision::F64 => AnyOperator::F64(Operator::new(a, backend, spec)?),
            Precision::F32 => AnyOperator::F32(Operator::new(&fitted(a)?, backend, spec)?),
            Precision::F16 => AnyOperator::F16(Operator::new(&fitted(a)?, backend, spec)?),
        })
    }
    /// The operator's precision.
    pub fn precision(&self) -> Precision {
        match self {
            AnyOperator::F64(_) => Precision::F64,
            AnyOperator::F32(_) => Precision::F32,
            AnyOperator::F16(_) => Precision::F16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_take_a_count_or_a_list() {
        assert_eq!(parse_devices("2").unwrap(), [0, 1]);
        assert_eq!(parse_devices("1").unwrap(), [0]);
        assert_eq!(parse_devices("0,1").unwrap(), [0, 1]);
        assert_eq!(parse_devices("0,0,1").unwrap(), [0, 0, 1]);
        assert_eq!(parse_devices("3,").unwrap(), [0, 1, 2]);
        for bad in ["", "0", "x", "1,y", "1025", "18446744073709551615"] {
            let e = parse_devices(bad).unwrap_err();
            assert!(matches!(e, Error::Argument(_)) && e.to_string().contains("devices"), "{bad}");
        }
    }

    #[test]
    fn places_and_precisions_parse() {
        assert_eq!("gpu".parse::<Place>().unwrap(), Place::Gpu);
        assert!("GPU0".parse::<Place>().unwrap_err().to_string().contains("\"auto\""));
        assert_eq!(parse_precisions("f64, f32").unwrap(), [Precision::F64, Precision::F32]);
        assert!(parse_precisions(" , ").is_err());
        assert!(parse_precisions("f128").is_err());
        assert!(matches!(backend(Place::Cpu).unwrap(), (Backend::Cpu, None)));
    }

    #[test]
    fn values_beyond_a_precision_are_refused() {
        let a = Csr::new_checked(1, 1, vec![0, 1], vec![0], vec![1e6]).unwrap();
        assert!(fitted::<f32>(&a).is_ok());
        let e = fitted::<half::f16>(&a).unwrap_err();
        assert!(e.to_string().contains("outside the range of f16"), "{e}");
    }
}
