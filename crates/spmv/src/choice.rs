//! How a matrix gets its format: named with its parameters (`sell-c-sigma:c=32`), or chosen
//! per matrix by `auto` (a model of measured times ranks the formats from the matrix's
//! features, [`crate::auto`]) or `tune` (auto's first candidates measured on the backend).
//!
//! This is a layer above the storage formats: the registry ([`formats::registry`]) lists
//! formats only, and the choosers are not formats (they have no layout of their own; they
//! build one). Everything that takes a format from a user — the front door, the CLI, the
//! Python package, the benchmark, the parts of a distributed matrix — takes a [`Choice`],
//! parsed from the same strings (`auto`, `tune:budget_ms=500`, `csr-vector:lanes=8`). A handle
//! built by a chooser carries the chooser's spec and names the format built
//! ([`HostMatrix::chosen`]): the benchmark's row `auto(csr-vector)`.

use std::fmt;
use std::sync::Arc;

use crate::auto::{self, TuneOptions};
use crate::error::{Error, Result};
use crate::formats::{
    self, DeviceFormat, FormatHandle, FormatSpec, FormatStats, HostMatrix, Param, SpmvFormat,
    TransposeFormat,
};
use crate::gpu::Gpu;
use crate::matrix::{Csr, Scalar};
use crate::Backend;

/// How a matrix's format is chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// A registered format with its parameters.
    Spec(FormatSpec),
    /// `auto`: the format the model ranks first for the matrix (and that accepts it).
    Auto(auto::Options),
    /// `tune`: auto's first candidates measured on the backend, the fastest kept (cached).
    Tune(TuneOptions),
}

/// A way of choosing a format, for `spmv formats` and the parser.
pub struct Chooser {
    /// The name a spec uses: `auto`, `tune`.
    pub name: &'static str,
    /// One line for `spmv formats`.
    pub description: &'static str,
    /// Its parameters, with their defaults.
    pub params: &'static [Param],
    from_spec: fn(&FormatSpec) -> Result<Choice>,
}

/// The choosers, in the order `spmv formats` and `--formats all` list them (after the formats).
pub const CHOOSERS: &[Chooser] = &[
    Chooser {
        name: "tune",
        description: "auto's first candidates measured on the backend, the fastest kept and cached (measures where a backend is given: bench, solve, pagerank, Matrix::to_device; docs/auto.md)",
        params: TuneOptions::PARAMS,
        from_spec: |s| Ok(Choice::Tune(TuneOptions::from_spec(s)?)),
    },
    Chooser {
        name: "auto",
        description: "the format chosen from the matrix's features by a model fitted to H200 measurements (docs/auto.md)",
        params: auto::Options::PARAMS,
        from_spec: |s| Ok(Choice::Auto(auto::Options::from_spec(s)?)),
    },
];

/// Why `tune` declines where no backend is given (measuring needs one).
const TUNE_DECLINES: &str =
    "tune measures candidates on a device: use it in spmv bench or through spmv::auto::tune";

impl Choice {
    /// Parses a format spec (`sell-c-sigma:c=32,sigma=1024`, `brcp`) or a chooser's
    /// (`auto`, `tune:budget_ms=500`) and checks its values, so that a bad value fails here
    /// and not on every matrix.
    pub fn parse(spec: &str) -> Result<Choice> {
        let (name, pairs) = formats::spec::split(spec)?;
        if let Some(c) = CHOOSERS.iter().find(|c| c.name.eq_ignore_ascii_case(name)) {
            return (c.from_spec)(&FormatSpec::resolve(c.name, c.params, &pairs)?);
        }
        if formats::find::<f64>(name).is_err() {
            let names: Vec<&str> = formats::registry::<f64>()
                .iter()
                .map(|f| f.name)
                .chain(CHOOSERS.iter().map(|c| c.name))
                .collect();
            return Err(Error::Unsupported(format!(
                "unknown format '{name}'; known formats: {}",
                names.join(", ")
            )));
        }
        formats::parse_spec(spec).map(Choice::Spec)
    }

    /// The canonical spec, every parameter spelled out (`auto:only=all,heldout=false`).
    pub fn spec(&self) -> FormatSpec {
        let (name, values): (&str, Vec<(&str, String)>) = match self {
            Choice::Spec(spec) => return spec.clone(),
            Choice::Auto(o) => ("auto", o.values().iter().map(|&(k, v)| (k, v.into())).collect()),
            Choice::Tune(o) => ("tune", o.values()),
        };
        let c = CHOOSERS.iter().find(|c| c.name == name).expect("a chooser");
        let pairs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
        FormatSpec::resolve(c.name, c.params, &pairs).expect("the options' own values")
    }

    /// This choice with `timing` where `auto` leaves the timing to its caller
    /// ([`auto::Options::for_caller`]); other choices as they are.
    pub fn for_caller(&self, timing: auto::Timing) -> Choice {
        match self {
            Choice::Auto(o) => Choice::Auto(o.for_caller(timing)),
            other => other.clone(),
        }
    }

    /// The format's or the chooser's name.
    pub fn name(&self) -> &'static str {
        match self {
            Choice::Spec(spec) => spec.name(),
            Choice::Auto(_) => "auto",
            Choice::Tune(_) => "tune",
        }
    }

    /// The short form for tables: only the parameters that differ from their defaults.
    pub fn label(&self) -> String {
        self.spec().label()
    }

    /// Whether the GPU result is bitwise identical from run to run: the format's flag; `false`
    /// for the choosers (their formats may not be).
    pub fn deterministic(&self) -> bool {
        match self {
            Choice::Spec(spec) => formats::is_deterministic(spec),
            Choice::Auto(_) | Choice::Tune(_) => false,
        }
    }

    /// Builds the format for `a`: the one named, or auto's choice. `tune` declines here
    /// (measuring needs a backend: [`Choice::build_on`]).
    ///
    /// Whatever chose A's format, a GPU copy's transposed product builds Aᵀ with `auto` (Aᵀ's
    /// structure is its own: a matrix with a few long rows has a few long columns).
    pub fn build<T: Scalar>(&self, a: &Csr<T>) -> Result<HostMatrix<T>> {
        let built = match self {
            Choice::Spec(spec) => formats::build(spec, a)?,
            Choice::Auto(options) => self.chosen(auto::choose(a, *options)?.0, a),
            Choice::Tune(_) => return Err(Error::format("tune", TUNE_DECLINES)),
        };
        Ok(built.with_transpose_format(auto_transpose()))
    }

    /// [`Choice::build`], with `tune` measuring its candidates on `backend`, and `auto` on the
    /// CPU racing the CPU's candidates on this machine ([`auto::choose_cpu`]: the model ranks
    /// by H200 times).
    pub fn build_on<T: Scalar>(&self, backend: &Backend, a: &Csr<T>) -> Result<HostMatrix<T>> {
        match (self, backend) {
            (Choice::Tune(t), _) => Ok(self
                .chosen(auto::tune(backend, a, t.budget, t.options)?.0, a)
                .with_transpose_format(auto_transpose())),
            (Choice::Auto(_), Backend::Cpu) => {
                Ok(self.chosen(auto::choose_cpu(a)?, a).with_transpose_format(auto_transpose()))
            }
            _ => self.build(a),
        }
    }

    /// The format a chooser built, under the chooser's spec.
    fn chosen<T: Scalar>(&self, inner: HostMatrix<T>, a: &Csr<T>) -> HostMatrix<T> {
        HostMatrix::new(self.spec(), false, Box::new(Chosen(inner)), a)
    }
}

/// Aᵀ's format, chosen by `auto` from Aᵀ's own features.
fn auto_transpose<T: Scalar>() -> TransposeFormat<T> {
    let auto = Choice::Auto(auto::Options::default());
    Arc::new(move |at: &Csr<T>| auto.build(at))
}

/// `name` or `name:key=value,...`, every parameter spelled out.
impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.spec().fmt(f)
    }
}

impl std::str::FromStr for Choice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Choice::parse(s)
    }
}

impl From<FormatSpec> for Choice {
    fn from(spec: FormatSpec) -> Self {
        Choice::Spec(spec)
    }
}

/// Parses a list of specs separated by commas, or `all` (every format, then the choosers). A
/// comma also separates a spec's parameters: a piece with `=` and no `:` continues the spec
/// before it, so `csr-vector,sell-c-sigma:c=32,sigma=1024` is two specs.
pub fn parse_list(list: &str) -> Result<Vec<Choice>> {
    let mut specs: Vec<String> = Vec::new();
    for piece in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if piece.eq_ignore_ascii_case("all") {
            specs.extend(formats::registry::<f64>().iter().map(|f| f.name.to_string()));
            specs.extend(CHOOSERS.iter().map(|c| c.name.to_string()));
        } else if piece.contains('=') && !piece.contains(':') {
            match specs.last_mut() {
                Some(last) => {
                    last.push(if last.contains(':') { ',' } else { ':' });
                    last.push_str(piece);
                }
                None => {
                    return Err(Error::Unsupported(format!(
                        "'{piece}' names no format (expected name:key=value)"
                    )))
                }
            }
        } else {
            specs.push(piece.to_string());
        }
    }
    specs.iter().map(|s| Choice::parse(s)).collect()
}

/// The format a chooser built: everything is the inner format's, and `chosen` names it.
struct Chosen<T: Scalar>(HostMatrix<T>);

impl<T: Scalar> SpmvFormat<T> for Chosen<T> {
    fn stats(&self) -> FormatStats {
        self.0.stats()
    }
    fn bytes_read(&self) -> usize {
        self.0.bytes_read()
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        self.0.format().spmv_cpu(x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        self.0.format().upload(gpu)
    }
    fn chosen(&self) -> Option<String> {
        Some(self.0.spec().label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix() -> Csr<f64> {
        crate::io::gen::generate("poisson2d:n=30").unwrap()
    }

    #[test]
    fn specs_auto_and_tune_parse_from_the_strings_users_type() {
        let spec = Choice::parse("sell-c-sigma:c=16").unwrap();
        assert_eq!(spec, Choice::Spec(formats::parse_spec("sell-c-sigma:c=16").unwrap()));
        assert_eq!((spec.name(), spec.label()), ("sell-c-sigma", "sell-c-sigma:c=16".into()));
        assert_eq!(Choice::parse("auto").unwrap(), Choice::Auto(auto::Options::default()));
        let det = Choice::parse("AUTO:only=deterministic").unwrap();
        let options = auto::Options { deterministic: true, held_out: false, timing: None };
        assert_eq!(det, Choice::Auto(options));
        assert_eq!(det.to_string(), "auto:only=deterministic,heldout=false,timing=caller");
        assert_eq!(det.label(), "auto:only=deterministic");
        assert_eq!(Choice::parse("tune").unwrap(), Choice::Tune(TuneOptions::default()));
        let tune: Choice = "tune:budget_ms=200,heldout=true".parse().unwrap();
        let Choice::Tune(t) = &tune else { panic!("{tune:?}") };
        assert_eq!((t.budget.as_millis(), t.options.held_out), (200, true));
        assert_eq!(tune.to_string(), "tune:only=all,heldout=true,budget_ms=200");
        assert_eq!(tune.label(), "tune:heldout=true,budget_ms=200");
        // The caller's timing fills in only what the spec leaves to it.
        let graph = Some(auto::Timing::Graph);
        let Choice::Auto(o) = det.for_caller(auto::Timing::Graph) else { panic!() };
        assert_eq!(o, auto::Options { timing: graph, ..options });
        let host = Choice::parse("auto:timing=host").unwrap();
        assert_eq!(host.for_caller(auto::Timing::Graph), host);
        assert_eq!(host.label(), "auto:timing=host");
        assert_eq!(tune.for_caller(auto::Timing::Graph), tune);
        assert_eq!(det.for_caller(auto::Timing::Host), det);
        // The canonical form parses back to the same choice.
        for c in [spec, det, tune, host] {
            assert_eq!(Choice::parse(&c.to_string()).unwrap(), c);
        }
    }

    #[test]
    fn bad_choices_say_what_is_wrong() {
        for (bad, expected) in [
            ("nope", "known formats: csr-scalar"),
            ("nope", "tune, auto"),
            ("auto:lanes=8", "valid keys: only, heldout"),
            ("auto:only=some", "parameter only=some must be one of all, deterministic"),
            ("tune:heldout=maybe", "heldout=maybe"),
            ("tune:budget_ms=0", "budget_ms=0 must be an integer ≥ 1"),
            ("auto:only", "'only' is not key=value"),
            ("csr-vector:lanes=3", "lanes=3 must be 2, 4, 8, 16, 32 or auto"),
        ] {
            let e = Choice::parse(bad).unwrap_err().to_string();
            assert!(e.contains(expected), "{bad}: {e}");
        }
    }

    #[test]
    fn lists_split_on_names_and_all_ends_with_the_choosers() {
        let labels: Vec<String> =
            parse_list("csr-vector, sell-c-sigma:c=16,sigma=64,ell:max_padding=5,auto,brcp")
                .unwrap()
                .iter()
                .map(Choice::label)
                .collect();
        assert_eq!(
            labels,
            ["csr-vector", "sell-c-sigma:c=16,sigma=64", "ell:max_padding=5", "auto", "brcp"]
        );
        let all = parse_list("all").unwrap();
        assert_eq!(all.len(), formats::registry::<f64>().len() + CHOOSERS.len());
        assert_eq!(
            all[all.len() - 2..],
            [Choice::parse("tune").unwrap(), Choice::parse("auto").unwrap()]
        );
        assert!(parse_list("c=3").is_err());
    }

    #[test]
    fn auto_builds_its_choice_under_its_own_spec_and_tune_needs_a_backend() {
        let a = matrix();
        let auto = Choice::parse("auto:heldout=true").unwrap().build(&a).unwrap();
        assert_eq!((auto.name(), auto.deterministic()), ("auto", false));
        let chosen = auto.chosen().unwrap();
        assert!(formats::parse_spec(&chosen).is_ok(), "{chosen}");
        assert!(crate::formats::test_support::cpu_matches_oracle(auto.format(), &a));
        let tune = Choice::parse("tune").unwrap();
        assert!(matches!(tune.build(&a), Err(Error::Format { .. })));
        let plain = Choice::parse("csr-scalar").unwrap().build(&a).unwrap();
        assert_eq!((plain.name(), plain.chosen()), ("csr-scalar", None));
    }
}
