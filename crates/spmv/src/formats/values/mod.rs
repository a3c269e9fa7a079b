//! Lossless value compression shared by the formats that offer `values=…`: the stored values
//! of a format kept as narrower codes that decode **exactly** to the original values, so that
//! a product reads fewer bytes and gives the same bits as the uncompressed format (the sums
//! are the same sums of the same products).
//!
//! | codec    | bytes per entry | stores                        | qualifies when                      |
//! |----------|-----------------|-------------------------------|-------------------------------------|
//! | `full`   | size of T       | the values                    | always                              |
//! | `pattern`| 0               | one value                     | every value has the same bits       |
//! | `i8`     | 1               | signed 8-bit integers         | every value is an integer in ±127   |
//! | `dict8`  | 1               | an index into ≤ 256 values    | at most 256 distinct values         |
//! | `i16`    | 2               | signed 16-bit integers        | every value an integer in ±32,767   |
//! | `f16`    | 2               | IEEE half                     | every value exact in half (T ≠ f16) |
//! | `dict16` | 2               | an index into ≤ 65,536 values | at most 65,536 distinct values      |
//! | `f32`    | 4               | IEEE single                   | every value exact in f32 (T = f64)  |
//!
//! "Exact" is by bits: −0.0 is not the integer 0, a value qualifies only when decoding its
//! code gives the same bits. [`analyse`] decides every codec in one parallel pass;
//! [`EncodedValues::encode`] declines a codec that does not qualify with the first entry that
//! breaks it. `auto` takes the qualifying codec with the fewest bytes, codes and table (the
//! order of [`ValueCodec::ALL`] on a tie). On the GPU a kernel is instantiated per codec with a loader
//! (`values.cuh`) that turns entry `i` into the summation type; kernels take the codes and the
//! table (the pattern's value, the dictionary) as two pointers.

pub mod columns;
mod gpu;

use std::collections::HashSet;

use rayon::prelude::*;

pub(crate) use gpu::DeviceValues;

use super::spec::{FormatSpec, Param};
use crate::error::{Error, Result};
use crate::matrix::{Precision, Scalar};

/// The loaders of every codec (`values.cuh`); a module whose kernels take coded values lists
/// this header.
pub const CUDA_HEADER: &str = include_str!("values.cuh");

/// How a format stores its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueCodec {
    /// The values themselves, `size_of::<T>()` bytes each.
    Full,
    /// One value shared by every entry; no codes.
    Pattern,
    /// Signed 8-bit integers (every value an integer in ±127).
    I8,
    /// 8-bit indices into a table of at most 256 distinct values.
    Dict8,
    /// Signed 16-bit integers (every value an integer in ±32,767).
    I16,
    /// IEEE half (every value exact in f16; not for f16 matrices).
    F16,
    /// 16-bit indices into a table of at most 65,536 distinct values.
    Dict16,
    /// IEEE single (every value exact in f32; f64 matrices only).
    F32,
}

impl ValueCodec {
    /// Every codec, in the order `auto` prefers them at equal size.
    pub const ALL: [ValueCodec; 8] = [
        ValueCodec::Pattern,
        ValueCodec::I8,
        ValueCodec::Dict8,
        ValueCodec::I16,
        ValueCodec::F16,
        ValueCodec::Dict16,
        ValueCodec::F32,
        ValueCodec::Full,
    ];

    /// The name the `values` parameter uses: `full`, `pattern`, `i8`, …
    pub fn name(self) -> &'static str {
        match self {
            ValueCodec::Full => "full",
            ValueCodec::Pattern => "pattern",
            ValueCodec::I8 => "i8",
            ValueCodec::Dict8 => "dict8",
            ValueCodec::I16 => "i16",
            ValueCodec::F16 => "f16",
            ValueCodec::Dict16 => "dict16",
            ValueCodec::F32 => "f32",
        }
    }

    /// Bytes of one code (the pattern stores none).
    pub fn code_bytes<T: Scalar>(self) -> usize {
        match self {
            ValueCodec::Full => std::mem::size_of::<T>(),
            ValueCodec::Pattern => 0,
            ValueCodec::I8 | ValueCodec::Dict8 => 1,
            ValueCodec::I16 | ValueCodec::F16 | ValueCodec::Dict16 => 2,
            ValueCodec::F32 => 4,
        }
    }

    /// Whether the codec stores anything narrower than `T` at all (f32 codes for f32 values,
    /// f16 for f16, do not).
    pub fn applies_to(self, precision: Precision) -> bool {
        !matches!(
            (self, precision),
            (ValueCodec::F32, Precision::F32 | Precision::F16) | (ValueCodec::F16, Precision::F16)
        )
    }

    /// The suffix of the kernels that read this codec: empty for `full`, `_pattern`, `_i8`…
    pub fn kernel_suffix(self) -> &'static str {
        match self {
            ValueCodec::Full => "",
            ValueCodec::Pattern => "_pattern",
            ValueCodec::I8 => "_i8",
            ValueCodec::Dict8 => "_dict8",
            ValueCodec::I16 => "_i16",
            ValueCodec::F16 => "_vf16",
            ValueCodec::Dict16 => "_dict16",
            ValueCodec::F32 => "_vf32",
        }
    }
}

/// The `values` parameter of a format: a codec, or `auto` (the narrowest that qualifies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueChoice {
    /// The qualifying codec with the fewest bytes ([`ValueAnalysis::narrowest`]).
    Auto,
    /// This codec; a format declines the matrix when its values do not qualify.
    Codec(ValueCodec),
}

/// The names the `values` parameter takes.
pub const VALUE_CHOICES: &[&str] =
    &["full", "auto", "pattern", "i8", "dict8", "i16", "f16", "dict16", "f32"];

/// The doc line of the `values` parameter.
pub const VALUES_DOC: &str =
    "value storage, decoded exactly (same bits as full): full, auto (the narrowest that fits), pattern, i8, dict8, i16, f16, dict16, f32";

/// The `values` parameter of the formats with coded values.
pub(crate) const VALUES: Param = Param { key: "values", default: "full", doc: VALUES_DOC };

impl ValueChoice {
    /// The `values` parameter of `spec` ([`VALUES`]).
    pub(crate) fn of_spec(spec: &FormatSpec) -> Result<Self> {
        let name = spec.choice("values", VALUE_CHOICES)?;
        Ok(ValueChoice::parse(name).expect("every VALUE_CHOICES name parses"))
    }

    /// `auto` or a codec's name; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        if name == "auto" {
            return Some(ValueChoice::Auto);
        }
        ValueCodec::ALL.into_iter().find(|c| c.name() == name).map(ValueChoice::Codec)
    }
}

/// Dictionaries are counted up to this many distinct values (one past the largest).
const DISTINCT_CAP: usize = 65_537;

/// What one pass over the values found: for each codec, `None` when it qualifies, or the
/// first entry that breaks it.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueAnalysis {
    /// Number of values analysed.
    pub entries: usize,
    /// Distinct values (by bits), counted up to 65,537.
    pub distinct: usize,
    breaks: Vec<(ValueCodec, usize)>,
}

/// Decides every codec for `values` in one parallel pass.
pub fn analyse<T: Scalar>(values: &[T]) -> ValueAnalysis {
    #[derive(Default)]
    struct Part {
        distinct: HashSet<u64>,
        breaks: [Option<usize>; 4],
        pattern: Option<usize>,
    }
    let narrow = [ValueCodec::I8, ValueCodec::I16, ValueCodec::F16, ValueCodec::F32];
    let first = values.first().map(|v| v.to_f64().to_bits());
    let merge = |mut a: Part, b: Part| {
        for (x, y) in a.breaks.iter_mut().zip(b.breaks) {
            *x = match (*x, y) {
                (Some(p), Some(q)) => Some(p.min(q)),
                (p, q) => p.or(q),
            };
        }
        a.pattern = match (a.pattern, b.pattern) {
            (Some(p), Some(q)) => Some(p.min(q)),
            (p, q) => p.or(q),
        };
        if a.distinct.len() < DISTINCT_CAP {
            a.distinct.extend(b.distinct.into_iter().take(DISTINCT_CAP));
        }
        a
    };
    let part = values
        .par_iter()
        .enumerate()
        .with_min_len(1 << 16)
        .fold(Part::default, |mut part, (i, v)| {
            let bits = v.to_f64().to_bits();
            if part.distinct.len() < DISTINCT_CAP {
                part.distinct.insert(bits);
            }
            if part.pattern.is_none() && Some(bits) != first {
                part.pattern = Some(i);
            }
            for (k, codec) in narrow.iter().enumerate() {
                if part.breaks[k].is_none() && !fits_narrow(*codec, *v) {
                    part.breaks[k] = Some(i);
                }
            }
            part
        })
        .reduce(Part::default, merge);
    let distinct = part.distinct.len().min(DISTINCT_CAP);
    let mut breaks = Vec::new();
    for (k, codec) in narrow.iter().enumerate() {
        if let Some(i) = part.breaks[k] {
            breaks.push((*codec, i));
        }
    }
    if let Some(i) = part.pattern {
        breaks.push((ValueCodec::Pattern, i));
    }
    ValueAnalysis { entries: values.len(), distinct, breaks }
}

/// Whether `v` decodes exactly from the narrow code `codec` (i8, i16, f16, f32).
fn fits_narrow<T: Scalar>(codec: ValueCodec, v: T) -> bool {
    let f = v.to_f64();
    let decoded = match codec {
        ValueCodec::I8 => f64::from(f as i8),
        ValueCodec::I16 => f64::from(f as i16),
        ValueCodec::F16 => crate::f16::from_f64(f).to_f64(),
        ValueCodec::F32 => f64::from(f as f32),
        _ => unreachable!("only narrow codecs are checked per value"),
    };
    // ±128 and ±32,768 are excluded so that the code range is symmetric (-127..=127).
    let in_range = match codec {
        ValueCodec::I8 => f.abs() <= 127.0,
        ValueCodec::I16 => f.abs() <= 32_767.0,
        _ => true,
    };
    in_range && T::from_f64(decoded).to_f64().to_bits() == f.to_bits()
}

impl ValueAnalysis {
    /// `Ok` when `codec` holds these values exactly, or why not.
    pub fn check<T: Scalar>(
        &self, codec: ValueCodec, values: &[T],
    ) -> std::result::Result<(), String> {
        if !codec.applies_to(T::PRECISION) {
            return Err(format!(
                "values={} stores nothing narrower than {} values",
                codec.name(),
                T::SUFFIX
            ));
        }
        let limit = match codec {
            ValueCodec::Dict8 => Some(256),
            ValueCodec::Dict16 => Some(65_536),
            _ => None,
        };
        if let Some(limit) = limit {
            if self.distinct > limit {
                let count = if self.distinct >= DISTINCT_CAP {
                    "more than 65,536".to_string()
                } else {
                    self.distinct.to_string()
                };
                return Err(format!(
                    "values={}: the matrix has {count} distinct values, more than {limit}",
                    codec.name()
                ));
            }
            return Ok(());
        }
        match self.breaks.iter().find(|(c, _)| *c == codec) {
            None => Ok(()),
            Some((_, i)) => {
                let what = match codec {
                    ValueCodec::Pattern => "differs from the first entry's value".to_string(),
                    ValueCodec::I8 => "is not an integer in -127..=127".to_string(),
                    ValueCodec::I16 => "is not an integer in -32767..=32767".to_string(),
                    ValueCodec::F16 | ValueCodec::F32 => {
                        format!("is not exact in {}", codec.name())
                    }
                    _ => unreachable!("dictionaries and full are decided above"),
                };
                Err(format!("values={}: entry {i} (value {}) {what}", codec.name(), values[*i]))
            }
        }
    }

    /// The codec that holds the values in the fewest bytes, codes and table (a dictionary
    /// of many values costs more than it saves on few entries); `full` when none is smaller.
    pub fn narrowest<T: Scalar>(&self, values: &[T]) -> ValueCodec {
        let bytes = |c: ValueCodec| {
            let table = match c {
                ValueCodec::Pattern => 1,
                ValueCodec::Dict8 | ValueCodec::Dict16 => self.distinct,
                _ => 0,
            };
            self.entries * c.code_bytes::<T>() + table * std::mem::size_of::<T>()
        };
        ValueCodec::ALL
            .into_iter()
            .filter(|c| self.check(*c, values).is_ok())
            .min_by_key(|c| bytes(*c))
            .unwrap_or(ValueCodec::Full)
    }
}

/// A format's values as codes of one codec, with what decoding them needs.
#[derive(Clone, Debug)]
pub struct EncodedValues<T> {
    codec: ValueCodec,
    /// The values themselves (`full`), or empty.
    full: Vec<T>,
    /// The codes, little-endian, `code_bytes` each (empty for `full` and `pattern`).
    codes: Vec<u8>,
    /// The pattern's value, or the dictionary (empty otherwise).
    table: Vec<T>,
    len: usize,
}

/// The `N`-byte codes of `values`, in parallel (billions of slots take seconds, not minutes).
fn narrow<T: Scalar, const N: usize>(
    values: &[T], encode: impl Fn(f64) -> [u8; N] + Sync,
) -> Vec<u8> {
    const CHUNK: usize = 1 << 14;
    let mut codes = vec![0u8; values.len() * N];
    codes.par_chunks_mut(CHUNK * N).zip(values.par_chunks(CHUNK)).for_each(|(out, v)| {
        for (o, v) in out.chunks_exact_mut(N).zip(v) {
            o.copy_from_slice(&encode(v.to_f64()));
        }
    });
    codes
}

impl<T: Scalar> EncodedValues<T> {
    /// Encodes `values` (a format's stored values, padding included) with the codec `choice`
    /// asks for; `format` names the format in the error when the values do not qualify.
    pub fn encode(values: &[T], choice: ValueChoice, format: &'static str) -> Result<Self> {
        Ok(Self::with_codec(values, Self::codec_for(values, choice, format)?))
    }

    /// The codec `choice` asks for `values` (the narrowest for `auto`), or the reason it
    /// does not fit, without encoding.
    pub fn codec_for(
        values: &[T], choice: ValueChoice, format: &'static str,
    ) -> Result<ValueCodec> {
        Ok(match choice {
            ValueChoice::Codec(ValueCodec::Full) => ValueCodec::Full,
            ValueChoice::Auto => analyse(values).narrowest(values),
            ValueChoice::Codec(c) => {
                analyse(values).check(c, values).map_err(|why| Error::format(format, why))?;
                c
            }
        })
    }

    /// Encodes with `codec`, which the caller checked qualifies (for these values, or for a
    /// set of values that contains them).
    pub(crate) fn with_codec(values: &[T], codec: ValueCodec) -> Self {
        let (mut full, mut codes, mut table) = (Vec::new(), Vec::new(), Vec::new());
        match codec {
            ValueCodec::Full => values.par_iter().copied().collect_into_vec(&mut full),
            ValueCodec::Pattern => table.extend(values.first().copied()),
            ValueCodec::I8 => codes = narrow(values, |f| [f as i8 as u8]),
            ValueCodec::I16 => codes = narrow(values, |f| (f as i16).to_le_bytes()),
            ValueCodec::F16 => codes = narrow(values, |f| crate::f16::from_f64(f).to_le_bytes()),
            ValueCodec::F32 => codes = narrow(values, |f| (f as f32).to_le_bytes()),
            ValueCodec::Dict8 | ValueCodec::Dict16 => {
                // The table in order of first appearance, so the encoding is deterministic.
                let mut index = std::collections::HashMap::new();
                let width = codec.code_bytes::<T>();
                codes.reserve(values.len() * width);
                for v in values {
                    let k = *index.entry(v.to_f64().to_bits()).or_insert_with(|| {
                        table.push(*v);
                        table.len() - 1
                    });
                    codes.extend_from_slice(&(k as u16).to_le_bytes()[..width]);
                }
            }
        }
        EncodedValues { codec, full, codes, table, len: values.len() }
    }

    /// The codec the values are stored with.
    pub fn codec(&self) -> ValueCodec {
        self.codec
    }
    /// Number of entries encoded.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether no entries are encoded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entry `i`, decoded (the CPU paths read the values through this, as the kernels do).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        let c = &self.codes;
        match self.codec {
            ValueCodec::Full => self.full[i],
            ValueCodec::Pattern => self.table[0],
            ValueCodec::I8 => T::from_f64(f64::from(c[i] as i8)),
            ValueCodec::I16 => T::from_f64(f64::from(i16::from_le_bytes([c[2 * i], c[2 * i + 1]]))),
            ValueCodec::F16 => {
                T::from_f64(crate::f16::from_le_bytes([c[2 * i], c[2 * i + 1]]).to_f64())
            }
            ValueCodec::F32 => T::from_f64(f64::from(f32::from_le_bytes([
                c[4 * i],
                c[4 * i + 1],
                c[4 * i + 2],
                c[4 * i + 3],
            ]))),
            ValueCodec::Dict8 => self.table[c[i] as usize],
            ValueCodec::Dict16 => self.table[u16::from_le_bytes([c[2 * i], c[2 * i + 1]]) as usize],
        }
    }

    /// Device bytes: the values or codes, and the table.
    pub fn device_bytes(&self) -> usize {
        (self.full.len() + self.table.len()) * std::mem::size_of::<T>() + self.codes.len()
    }

    /// Bytes one product reads when it reads `entries` of the values (the pattern's value and
    /// a dictionary counted whole).
    pub fn bytes_read(&self, entries: usize) -> usize {
        entries * self.codec.code_bytes::<T>() + self.table.len() * std::mem::size_of::<T>()
    }

    /// Entries of the pattern's value or the dictionary.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The stats entries of the encoding: the codec's bytes per entry and the table's size
    /// (none for full: a format's stats show only what changed).
    pub fn stats(&self) -> Vec<(&'static str, f64)> {
        match self.codec {
            ValueCodec::Full => Vec::new(),
            c => vec![
                ("value_bytes", c.code_bytes::<T>() as f64),
                ("value_table", self.table.len() as f64),
            ],
        }
    }
}

#[cfg(test)]
mod tests;
