//! Format specs: a registered format's name with its parameters, in the generator spec
//! syntax — `sell-c-sigma:c=32,sigma=1024`, `ell:max_padding=20`, `csr-vector:lanes=8`.
//!
//! Every tunable a format has is a [`Param`] in its registry entry, with a documented
//! default; `auto` is the default of the parameters the format derives from the matrix. A
//! spec is validated before anything is built: an unknown key or a value of the wrong kind
//! gives an error that names the format and its valid keys. [`FormatSpec`] prints the
//! canonical spec, every key in registry order with its value (defaults included), so that
//! a result records exactly what was run and `formats::parse_spec(&spec.to_string())` gives
//! it back.

use std::fmt;

use crate::error::{Error, Result};
use crate::spec_syntax;

/// One tunable of a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// The name a spec gives it (`c` in `sell-c-sigma:c=32`).
    pub key: &'static str,
    /// The value used when the spec does not give one (`auto`: derived from the matrix).
    pub default: &'static str,
    /// What the parameter does and which values it takes.
    pub doc: &'static str,
}

/// A format name and a value for each of its parameters, in registry order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FormatSpec {
    name: &'static str,
    values: Vec<(&'static str, String)>,
    /// Keys whose value differs from the default (what [`FormatSpec::label`] shows).
    changed: Vec<&'static str>,
}

impl FormatSpec {
    /// Resolves `given` (`key=value` pairs) against `params`: every key must be one of them,
    /// at most once; absent keys take their default.
    pub(crate) fn resolve(
        name: &'static str, params: &[Param], given: &[(&str, &str)],
    ) -> Result<Self> {
        for (i, (key, value)) in given.iter().enumerate() {
            if !params.iter().any(|p| p.key == *key) {
                let valid: Vec<&str> = params.iter().map(|p| p.key).collect();
                let valid = if valid.is_empty() {
                    "it takes no parameters".to_string()
                } else {
                    format!("valid keys: {}", valid.join(", "))
                };
                return Err(Error::Unsupported(format!(
                    "format {name}: unknown parameter '{key}'; {valid}"
                )));
            }
            if given[..i].iter().any(|(k, _)| k == key) {
                return Err(Error::Unsupported(format!(
                    "format {name}: parameter '{key}' given twice"
                )));
            }
            if value.is_empty() {
                return Err(Error::Unsupported(format!(
                    "format {name}: parameter '{key}' has no value"
                )));
            }
        }
        let values: Vec<(&'static str, String)> = params
            .iter()
            .map(|p| {
                let v = given.iter().find(|(k, _)| *k == p.key).map_or(p.default, |(_, v)| v);
                (p.key, v.to_ascii_lowercase())
            })
            .collect();
        let changed = params
            .iter()
            .zip(&values)
            .filter(|(p, (_, v))| p.default != v)
            .map(|(p, _)| p.key)
            .collect();
        Ok(FormatSpec { name, values, changed })
    }

    /// The registered format name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The short form for tables: the name and only the parameters that differ from their
    /// defaults (`sell-c-sigma:c=64`, or `sell-c-sigma` for the defaults).
    pub fn label(&self) -> String {
        let mut s = self.name.to_string();
        for (i, (k, v)) in self.values.iter().filter(|(k, _)| self.changed.contains(k)).enumerate()
        {
            s.push_str(&format!("{}{k}={v}", if i == 0 { ':' } else { ',' }));
        }
        s
    }

    /// The value of `key` as given or defaulted.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str())
    }

    /// `key` as an integer of at least `min` (`min..` is the valid range).
    pub fn usize(&self, key: &str, min: usize) -> Result<usize> {
        self.auto_usize(key, min)?.ok_or_else(|| self.bad(key, &format!("an integer ≥ {min}")))
    }

    /// `key` as an integer of at least `min`, or `None` for `auto`.
    pub fn auto_usize(&self, key: &str, min: usize) -> Result<Option<usize>> {
        let v = self.value(key)?;
        if v == "auto" {
            return Ok(None);
        }
        match v.parse::<usize>() {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => Err(self.bad(key, &format!("an integer ≥ {min} or auto"))),
        }
    }

    /// `key` as a finite number of at least `min`.
    pub fn f64(&self, key: &str, min: f64) -> Result<f64> {
        match self.value(key)?.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= min => Ok(x),
            _ => Err(self.bad(key, &format!("a number ≥ {min}"))),
        }
    }

    /// `key` as one of `choices`.
    pub fn choice(&self, key: &str, choices: &[&'static str]) -> Result<&'static str> {
        let v = self.value(key)?;
        choices
            .iter()
            .copied()
            .find(|c| *c == v)
            .ok_or_else(|| self.bad(key, &format!("one of {}", choices.join(", "))))
    }

    fn value(&self, key: &str) -> Result<&str> {
        self.get(key).ok_or_else(|| {
            Error::Unsupported(format!("format {} has no parameter '{key}'", self.name))
        })
    }

    fn bad(&self, key: &str, expected: &str) -> Error {
        let value = self.get(key).unwrap_or("");
        Error::Unsupported(format!(
            "format {}: parameter {key}={value} must be {expected}",
            self.name
        ))
    }
}

/// `name` or `name:key=value,key=value`.
impl fmt::Display for FormatSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        for (i, (k, v)) in self.values.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

impl serde::Serialize for FormatSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Splits `name:key=value,...` into the name and its pairs (syntax only, with the shared
/// tokenizer of [`crate::spec_syntax`]; the registry checks the name and keys).
pub(crate) fn split(spec: &str) -> Result<(&str, Vec<(&str, &str)>)> {
    let (name, rest) = spec_syntax::split_name(spec);
    if name.is_empty() {
        return Err(Error::Unsupported(format!(
            "format spec '{}' has no format name",
            spec.trim()
        )));
    }
    let pairs = spec_syntax::items(rest, &[])
        .map(|item| {
            item.map_err(|part| {
                Error::Unsupported(format!(
                    "format {name}: '{part}' is not key=value (spec syntax: name:key=value,key=value)"
                ))
            })
        })
        .collect::<Result<_>>()?;
    Ok((name, pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: &[Param] = &[
        Param { key: "c", default: "32", doc: "rows per slice" },
        Param { key: "sigma", default: "auto", doc: "sorting window" },
    ];

    #[test]
    fn defaults_fill_in_and_print_canonically() {
        let s = FormatSpec::resolve("sell-c-sigma", PARAMS, &[("sigma", "1024")]).unwrap();
        assert_eq!(s.to_string(), "sell-c-sigma:c=32,sigma=1024");
        assert_eq!(s.label(), "sell-c-sigma:sigma=1024");
        assert_eq!((s.usize("c", 1).unwrap(), s.auto_usize("sigma", 1).unwrap()), (32, Some(1024)));
        let text = s.to_string();
        let (name, pairs) = split(&text).unwrap();
        assert_eq!(FormatSpec::resolve("sell-c-sigma", PARAMS, &pairs).unwrap(), s);
        assert_eq!(name, "sell-c-sigma");
        let none = FormatSpec::resolve("csr-scalar", &[], &[]).unwrap();
        assert_eq!(
            (none.to_string(), none.label()),
            ("csr-scalar".to_string(), "csr-scalar".to_string())
        );
    }

    #[test]
    fn bad_keys_and_values_name_the_format_and_the_valid_keys() {
        let e =
            FormatSpec::resolve("sell-c-sigma", PARAMS, &[("width", "3")]).unwrap_err().to_string();
        assert!(
            e.contains("sell-c-sigma")
                && e.contains("'width'")
                && e.contains("valid keys: c, sigma"),
            "{e}"
        );
        let e = FormatSpec::resolve("csr-scalar", &[], &[("lanes", "3")]).unwrap_err().to_string();
        assert!(e.contains("takes no parameters"), "{e}");
        let e = FormatSpec::resolve("sell-c-sigma", PARAMS, &[("c", "4"), ("c", "8")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice"), "{e}");
        let s = FormatSpec::resolve("sell-c-sigma", PARAMS, &[("c", "-3")]).unwrap();
        let e = s.usize("c", 1).unwrap_err().to_string();
        assert!(e.contains("c=-3") && e.contains("integer ≥ 1"), "{e}");
        assert!(split("ell:max_padding").unwrap_err().to_string().contains("key=value"));
        assert!(split(":c=3").is_err());
        let s =
            FormatSpec::resolve("x", &[Param { key: "r", default: "nan", doc: "" }], &[]).unwrap();
        assert!(s.f64("r", 1.0).is_err());
        // A key the format does not have is an error, not a panic.
        assert!(s.usize("nope", 1).unwrap_err().to_string().contains("no parameter 'nope'"));
    }
}
