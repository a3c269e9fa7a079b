//! Generator specifications: `family:key=value,key=value`, parsed and printed canonically.

use std::fmt;
use std::path::{Path, PathBuf};

use super::banded::{banded_with, BandedParams};
use super::block::block_diag;
use super::build::err;
use super::circuit::{circuit, lp, CircuitParams, LpParams};
use super::kron::{kronecker_with, KroneckerParams};
use super::mesh::{fem, road, FemParams, Numbering, RoadParams};
use super::random::{
    check_long_rows, check_power_law, check_random, long_rows, power_law, random_uniform,
};
use super::stencil::{check_grid, check_points, poisson2d, poisson3d};
use crate::spec_syntax;
use crate::{Csr, Result};

/// The families, by canonical name.
pub const FAMILIES: &[&str] = &[
    "poisson2d",
    "poisson3d",
    "kron",
    "random",
    "banded",
    "powerlaw",
    "longrows",
    "blockdiag",
    "fem",
    "road",
    "circuit",
    "lp",
];

/// Each family of [`FAMILIES`], in that order: an example spec and what it makes.
pub const EXAMPLES: [(&str, &str, &str); FAMILIES.len()] = [
    ("poisson2d", "poisson2d:nx=1000", "5-point Laplacian"),
    ("poisson3d", "poisson3d:n=128,points=27", "7- or 27-point Laplacian"),
    ("kron", "kron:scale=20", "Graph500 R-MAT graph"),
    ("random", "random:rows=100000,mean=16", "uniform random pattern"),
    ("banded", "banded:n=1000000,offsets=-2;0;3,broken=0.1", "diagonals with gaps and strays"),
    ("powerlaw", "powerlaw:n=1000000,mean=8,exp=2.1", "Pareto row lengths"),
    ("longrows", "longrows:n=100000,short=4,count=5,long=50000", "a few very long rows"),
    ("blockdiag", "blockdiag:k=4,of=poisson2d:nx=100", "k copies on the diagonal"),
    ("fem", "fem:n=40,order=2,dofs=3,numbering=morton", "finite elements, blocks of unknowns"),
    ("road", "road:n=1000", "road network: a planar grid's streets"),
    ("circuit", "circuit:n=1000000", "circuit: local links and a few dense nets"),
    ("lp", "lp:rows=100000", "linear program: staircase, linking rows"),
];

/// A parsed generator specification. `Display` prints the canonical spec, every key
/// spelled out in a fixed order (defaults included), so it can serve as the matrix's name
/// and `parse_spec(&spec.to_string())` gives `spec` back.
#[derive(Clone, Debug, PartialEq)]
pub enum GenSpec {
    /// `poisson2d:nx=..,ny=..`: see [`super::poisson2d`].
    Poisson2d {
        /// Grid points along x (the fastest index).
        nx: usize,
        /// Grid points along y.
        ny: usize,
    },
    /// `poisson3d:nx=..,ny=..,nz=..,points=7|27`: see [`super::poisson3d`].
    Poisson3d {
        /// Grid points along x (the fastest index).
        nx: usize,
        /// Grid points along y.
        ny: usize,
        /// Grid points along z.
        nz: usize,
        /// Stencil size: 7 (face neighbours) or 27 (all neighbours).
        points: u32,
    },
    /// `kron:scale=..,ef=..,seed=..,sym=0|1,perm=0|1`: see [`super::kronecker_with`].
    Kronecker(KroneckerParams),
    /// `random:rows=..,cols=..,mean=..,seed=..`: see [`super::random_uniform`].
    Random {
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
        /// Mean entries per row (lengths uniform on 0..=⌊2·mean⌋).
        mean: f64,
        /// Seed of the random stream: the same seed gives the same matrix.
        seed: u64,
    },
    /// `banded:n=..,offsets=a;b;..,broken=..,seg=..,scatter=..,seed=..`: see [`super::banded_with`].
    Banded(BandedParams),
    /// `powerlaw:n=..,mean=..,exp=..,seed=..`: see [`super::power_law`].
    PowerLaw {
        /// Rows and columns.
        n: usize,
        /// Expected mean entries per row.
        mean: f64,
        /// Pareto exponent of the row weights (> 1; smaller is more skewed).
        exponent: f64,
        /// Seed of the random stream: the same seed gives the same matrix.
        seed: u64,
    },
    /// `longrows:n=..,short=..,count=..,long=..,seed=..`: see [`super::long_rows`].
    LongRows {
        /// Rows and columns.
        n: usize,
        /// Entries in every ordinary row.
        short: usize,
        /// How many randomly chosen rows are long.
        count: usize,
        /// Entries in each long row.
        long: usize,
        /// Seed of the random stream: the same seed gives the same matrix.
        seed: u64,
    },
    /// `blockdiag:k=..,of=<spec>` or `blockdiag:k=..,of=file=<path>`: see [`super::block_diag`].
    BlockDiag {
        /// Number of copies on the diagonal (0 gives a 0 × 0 matrix).
        k: usize,
        /// The matrix copied.
        of: Box<BlockSource>,
    },
    /// `fem:n=..,dim=..,order=..,dofs=..,numbering=..,drop=..,seed=..`: see [`super::fem`].
    Fem(FemParams),
    /// `road:n=..,keep=..,numbering=..,seed=..`: see [`super::road`].
    Road(RoadParams),
    /// `circuit:n=..,local=..,window=..,nets=..,netlen=..,netp=..,seed=..`: see [`super::circuit`].
    Circuit(CircuitParams),
    /// `lp:rows=..,cols=..,stages=..,mean=..,dense=..,denselen=..,seed=..`: see [`super::lp`].
    Lp(LpParams),
}

/// What [`GenSpec::BlockDiag`] replicates.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockSource {
    /// Another generated matrix.
    Spec(GenSpec),
    /// A Matrix Market file.
    File(PathBuf),
}

impl GenSpec {
    /// The canonical family name (the part before `:`).
    pub fn family(&self) -> &'static str {
        match self {
            GenSpec::Poisson2d { .. } => "poisson2d",
            GenSpec::Poisson3d { .. } => "poisson3d",
            GenSpec::Kronecker(_) => "kron",
            GenSpec::Random { .. } => "random",
            GenSpec::Banded(_) => "banded",
            GenSpec::PowerLaw { .. } => "powerlaw",
            GenSpec::LongRows { .. } => "longrows",
            GenSpec::BlockDiag { .. } => "blockdiag",
            GenSpec::Fem(_) => "fem",
            GenSpec::Road(_) => "road",
            GenSpec::Circuit(_) => "circuit",
            GenSpec::Lp(_) => "lp",
        }
    }

    /// Checks every argument that can be checked without generating (ranges, index and
    /// size limits). [`parse_spec`] calls it; the generators check the same again.
    pub fn validate(&self) -> Result<()> {
        match self {
            GenSpec::Poisson2d { nx, ny } => check_grid("poisson2d", &[*nx, *ny], 5),
            GenSpec::Poisson3d { nx, ny, nz, points } => {
                check_points(*points)?;
                check_grid("poisson3d", &[*nx, *ny, *nz], *points as u64)
            }
            GenSpec::Kronecker(p) => p.check(),
            GenSpec::Random { rows, cols, mean, .. } => check_random(*rows, *cols, *mean),
            GenSpec::Banded(p) => p.check(),
            GenSpec::PowerLaw { n, mean, exponent, .. } => check_power_law(*n, *mean, *exponent),
            GenSpec::LongRows { n, short, count, long, .. } => {
                check_long_rows(*n, *short, *count, *long)
            }
            GenSpec::BlockDiag { of, .. } => match &**of {
                BlockSource::Spec(inner) => inner.validate(),
                BlockSource::File(_) => Ok(()),
            },
            GenSpec::Fem(p) => p.check(),
            GenSpec::Road(p) => p.check(),
            GenSpec::Circuit(p) => p.check(),
            GenSpec::Lp(p) => p.check(),
        }
    }

    /// Builds the matrix.
    pub fn generate(&self) -> Result<Csr<f64>> {
        match self {
            GenSpec::Poisson2d { nx, ny } => poisson2d(*nx, *ny),
            GenSpec::Poisson3d { nx, ny, nz, points } => poisson3d(*nx, *ny, *nz, *points),
            GenSpec::Kronecker(p) => kronecker_with(p),
            GenSpec::Random { rows, cols, mean, seed } => {
                random_uniform(*rows, *cols, *mean, *seed)
            }
            GenSpec::Banded(p) => banded_with(p),
            GenSpec::PowerLaw { n, mean, exponent, seed } => power_law(*n, *mean, *exponent, *seed),
            GenSpec::LongRows { n, short, count, long, seed } => {
                long_rows(*n, *short, *count, *long, *seed)
            }
            GenSpec::BlockDiag { k, of } => {
                // The block whole (under a row window too): every row of the result needs it.
                let inner = super::build::whole(|| match &**of {
                    BlockSource::Spec(spec) => spec.generate(),
                    BlockSource::File(path) => crate::io::read_matrix_market::<f64>(path),
                })?;
                block_diag(&inner, *k)
            }
            GenSpec::Fem(p) => fem(p),
            GenSpec::Road(p) => road(p),
            GenSpec::Circuit(p) => circuit(p),
            GenSpec::Lp(p) => lp(p),
        }
    }

    /// Rows `rows` of the matrix (all its columns), built without the rest: the row block of
    /// one process of a multi-process run (`rows` past the end are clipped).
    pub fn generate_rows(&self, rows: std::ops::Range<usize>) -> Result<Csr<f64>> {
        super::build::in_window(rows, || {
            self.validate()?;
            self.generate()
        })
    }

    /// Rows (and columns) of the matrix, without building it (a `blockdiag` of a file reads
    /// the file's header).
    pub fn dims(&self) -> Result<(usize, usize)> {
        Ok(match self {
            GenSpec::Poisson2d { nx, ny } => (nx * ny, nx * ny),
            GenSpec::Poisson3d { nx, ny, nz, .. } => (nx * ny * nz, nx * ny * nz),
            GenSpec::Kronecker(p) => (1 << p.scale, 1 << p.scale),
            GenSpec::Random { rows, cols, .. } => (*rows, *cols),
            GenSpec::Banded(p) => (p.n, p.n),
            GenSpec::PowerLaw { n, .. } | GenSpec::LongRows { n, .. } => (*n, *n),
            GenSpec::BlockDiag { k, of } => {
                let (r, c) = match &**of {
                    BlockSource::Spec(inner) => inner.dims()?,
                    BlockSource::File(path) => {
                        let h = crate::io::read_header(path)?;
                        (h.nrows, h.ncols)
                    }
                };
                (r * k, c * k)
            }
            GenSpec::Fem(p) => (p.rows(), p.rows()),
            GenSpec::Road(p) => (p.rows(), p.rows()),
            GenSpec::Circuit(p) => (p.n, p.n),
            GenSpec::Lp(p) => (p.rows, p.cols),
        })
    }
}

impl std::str::FromStr for GenSpec {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self> {
        parse_spec(s)
    }
}

/// Offsets sorted, repeats dropped: the canonical form.
fn canonical_offsets(offsets: &[i64]) -> Vec<i64> {
    let mut o = offsets.to_vec();
    o.sort_unstable();
    o.dedup();
    o
}

fn flag(b: bool) -> u8 {
    b as u8
}

impl fmt::Display for GenSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.family())?;
        match self {
            GenSpec::Poisson2d { nx, ny } => write!(f, "nx={nx},ny={ny}"),
            GenSpec::Poisson3d { nx, ny, nz, points } => {
                write!(f, "nx={nx},ny={ny},nz={nz},points={points}")
            }
            GenSpec::Kronecker(p) => write!(
                f,
                "scale={},ef={},seed={},sym={},perm={}",
                p.scale,
                p.edge_factor,
                p.seed,
                flag(p.symmetric),
                flag(p.permute)
            ),
            GenSpec::Random { rows, cols, mean, seed } => {
                write!(f, "rows={rows},cols={cols},mean={mean},seed={seed}")
            }
            GenSpec::Banded(p) => {
                let offsets: Vec<String> =
                    canonical_offsets(&p.offsets).iter().map(|d| d.to_string()).collect();
                write!(
                    f,
                    "n={},offsets={},broken={},seg={},scatter={},seed={}",
                    p.n,
                    offsets.join(";"),
                    p.broken,
                    p.segment,
                    p.scatter,
                    p.seed
                )
            }
            GenSpec::PowerLaw { n, mean, exponent, seed } => {
                write!(f, "n={n},mean={mean},exp={exponent},seed={seed}")
            }
            GenSpec::LongRows { n, short, count, long, seed } => {
                write!(f, "n={n},short={short},count={count},long={long},seed={seed}")
            }
            GenSpec::BlockDiag { k, of } => match &**of {
                BlockSource::Spec(inner) => write!(f, "k={k},of={inner}"),
                BlockSource::File(path) => write!(f, "k={k},of=file={}", path.display()),
            },
            GenSpec::Fem(p) => write!(
                f,
                "n={},dim={},order={},dofs={},numbering={},drop={},seed={}",
                p.n, p.dim, p.order, p.dofs, p.numbering, p.drop, p.seed
            ),
            GenSpec::Road(p) => {
                write!(f, "n={},keep={},numbering={},seed={}", p.n, p.keep, p.numbering, p.seed)
            }
            GenSpec::Circuit(p) => write!(
                f,
                "n={},local={},window={},nets={},netlen={},netp={},seed={}",
                p.n, p.local, p.window, p.nets, p.net_len, p.net_share, p.seed
            ),
            GenSpec::Lp(p) => write!(
                f,
                "rows={},cols={},stages={},mean={},dense={},denselen={},seed={}",
                p.rows, p.cols, p.stages, p.mean, p.dense, p.dense_len, p.seed
            ),
        }
    }
}

/// Builds the matrix a spec describes: `parse_spec(spec)?.generate()`.
pub fn generate(spec: &str) -> Result<Csr<f64>> {
    parse_spec(spec)?.generate()
}

/// How deep `blockdiag` specs may nest (`blockdiag:k=2,of=blockdiag:k=2,of=...`): the
/// parser recurses once per level, so a deeper spec is refused rather than let overflow the
/// stack.
pub const MAX_NESTING: usize = 32;

/// Parses `family:key=value,key=value,...` (syntax in the module documentation and in
/// `docs/generators.md`). Checks the values too ([`GenSpec::validate`]).
pub fn parse_spec(s: &str) -> Result<GenSpec> {
    parse_nested(s, 0)
}

/// Whether `s` is meant as a generator spec: it starts with a family name (or an alias)
/// and a colon, whatever follows (`blockdiag:k=2,of=file=data/m.mtx` holds a path).
pub fn is_spec_like(s: &str) -> bool {
    s.split_once(':')
        .is_some_and(|(family, _)| canonical_family(&family.trim().to_ascii_lowercase()).is_some())
}

/// The canonical family of a name or alias.
fn canonical_family(name: &str) -> Option<&'static str> {
    Some(match name {
        "poisson2d" => "poisson2d",
        "poisson3d" => "poisson3d",
        "kron" | "kronecker" | "rmat" | "graph500" => "kron",
        "random" | "uniform" => "random",
        "banded" | "band" | "diag" => "banded",
        "powerlaw" | "power_law" | "zipf" => "powerlaw",
        "longrows" | "long_rows" => "longrows",
        "blockdiag" | "block_diag" => "blockdiag",
        "fem" | "mesh" => "fem",
        "road" | "roads" => "road",
        "circuit" => "circuit",
        "lp" => "lp",
        _ => return None,
    })
}

/// [`parse_spec`] of a spec nested `depth` levels inside `blockdiag` specs.
fn parse_nested(s: &str, depth: usize) -> Result<GenSpec> {
    if depth > MAX_NESTING {
        return err(format!(
            "blockdiag: specs nested more than {MAX_NESTING} levels deep (of=blockdiag:...) are refused"
        ));
    }
    let s = s.trim();
    if s.is_empty() {
        return err(format!(
            "empty spec; expected family:key=value,... (families: {})",
            FAMILIES.join(", ")
        ));
    }
    let (family, rest) = spec_syntax::split_name(s);
    let family = family.to_ascii_lowercase();
    let spec = match canonical_family(&family).unwrap_or("") {
        "poisson2d" => {
            let mut k = Keys::parse("poisson2d", &["nx", "ny", "n"], rest)?;
            let n = k.usize("n")?;
            let nx = k.usize("nx")?.or(n).ok_or_else(|| k.missing("nx (or n)"))?;
            let ny = k.usize("ny")?.or(n).unwrap_or(nx);
            GenSpec::Poisson2d { nx, ny }
        }
        "poisson3d" => {
            let mut k = Keys::parse("poisson3d", &["nx", "ny", "nz", "n", "points"], rest)?;
            let n = k.usize("n")?;
            let nx = k.usize("nx")?.or(n).ok_or_else(|| k.missing("nx (or n)"))?;
            let ny = k.usize("ny")?.or(n).unwrap_or(nx);
            let nz = k.usize("nz")?.or(n).unwrap_or(nx);
            let points = k.u32("points")?.unwrap_or(7);
            GenSpec::Poisson3d { nx, ny, nz, points }
        }
        "kron" => {
            let mut k = Keys::parse("kron", &["scale", "ef", "seed", "sym", "perm"], rest)?;
            let scale = k.u32("scale")?.ok_or_else(|| k.missing("scale"))?;
            let mut p = KroneckerParams::new(scale);
            set_keys!(k, p, "ef" => edge_factor, "sym" => symmetric, "perm" => permute);
            p.seed = k.seed()?;
            GenSpec::Kronecker(p)
        }
        "random" => {
            let mut k = Keys::parse("random", &["rows", "cols", "n", "mean", "seed"], rest)?;
            let n = k.usize("n")?;
            let rows = k.usize("rows")?.or(n).ok_or_else(|| k.missing("rows (or n)"))?;
            let cols = k.usize("cols")?.or(n).unwrap_or(rows);
            let mean = k.f64("mean")?.unwrap_or(16.0);
            let seed = k.seed()?;
            GenSpec::Random { rows, cols, mean, seed }
        }
        "banded" => {
            let mut k =
                Keys::parse("banded", &["n", "offsets", "broken", "seg", "scatter", "seed"], rest)?;
            let n = k.usize("n")?.ok_or_else(|| k.missing("n"))?;
            let offsets = k.offsets("offsets")?.unwrap_or_else(|| vec![-1, 0, 1]);
            let mut p = BandedParams::new(n, &canonical_offsets(&offsets));
            set_keys!(k, p, "broken" => broken, "seg" => segment, "scatter" => scatter);
            p.seed = k.seed()?;
            GenSpec::Banded(p)
        }
        "powerlaw" => {
            let mut k = Keys::parse("powerlaw", &["n", "mean", "exp", "seed"], rest)?;
            let n = k.usize("n")?.ok_or_else(|| k.missing("n"))?;
            let mean = k.f64("mean")?.unwrap_or(8.0);
            let exponent = k.f64("exp")?.unwrap_or(2.1);
            let seed = k.seed()?;
            GenSpec::PowerLaw { n, mean, exponent, seed }
        }
        "longrows" => {
            let mut k = Keys::parse("longrows", &["n", "short", "count", "long", "seed"], rest)?;
            let n = k.usize("n")?.ok_or_else(|| k.missing("n"))?;
            let short = k.usize("short")?.unwrap_or(4.min(n));
            let count = k.usize("count")?.unwrap_or(4.min(n));
            let long = k.usize("long")?.unwrap_or(n / 10);
            let seed = k.seed()?;
            GenSpec::LongRows { n, short, count, long, seed }
        }
        "blockdiag" => {
            let mut k = Keys::parse("blockdiag", &["k", "of"], rest)?;
            let copies = k.usize("k")?.ok_or_else(|| k.missing("k"))?;
            let of = k.take("of").ok_or_else(|| k.missing("of"))?;
            let source = match of.trim().strip_prefix("file=") {
                Some(path) if !path.trim().is_empty() => {
                    BlockSource::File(Path::new(path.trim()).to_path_buf())
                }
                Some(_) => return err("blockdiag: of=file= needs a path (of=file=matrix.mtx)"),
                None => BlockSource::Spec(parse_nested(of, depth + 1)?),
            };
            GenSpec::BlockDiag { k: copies, of: Box::new(source) }
        }
        "fem" => {
            let valid = &["n", "dim", "order", "dofs", "numbering", "drop", "seed"];
            let mut k = Keys::parse("fem", valid, rest)?;
            let mut p = FemParams::new(k.usize("n")?.ok_or_else(|| k.missing("n"))?);
            set_keys!(k, p, "dim" => dim, "order" => order, "dofs" => dofs, "numbering" => numbering,
                "drop" => drop);
            p.seed = k.seed()?;
            GenSpec::Fem(p)
        }
        "road" => {
            let mut k = Keys::parse("road", &["n", "keep", "numbering", "seed"], rest)?;
            let mut p = RoadParams::new(k.usize("n")?.ok_or_else(|| k.missing("n"))?);
            set_keys!(k, p, "keep" => keep, "numbering" => numbering);
            p.seed = k.seed()?;
            GenSpec::Road(p)
        }
        "circuit" => {
            let valid = &["n", "local", "window", "nets", "netlen", "netp", "seed"];
            let mut k = Keys::parse("circuit", valid, rest)?;
            let mut p = CircuitParams::new(k.usize("n")?.ok_or_else(|| k.missing("n"))?);
            set_keys!(k, p, "local" => local, "window" => window, "nets" => nets, "netlen" => net_len,
                "netp" => net_share);
            p.seed = k.seed()?;
            GenSpec::Circuit(p)
        }
        "lp" => {
            let valid = &["rows", "cols", "n", "stages", "mean", "dense", "denselen", "seed"];
            let mut k = Keys::parse("lp", valid, rest)?;
            let n = k.usize("n")?;
            let rows = k.usize("rows")?.or(n).ok_or_else(|| k.missing("rows (or n)"))?;
            let mut p = LpParams::new(rows);
            if let Some(cols) = k.usize("cols")? {
                // The linking rows' default length follows the columns given.
                p.dense_len = cols / 20;
                p.cols = cols;
            }
            set_keys!(k, p, "stages" => stages, "mean" => mean, "dense" => dense,
                "denselen" => dense_len);
            p.seed = k.seed()?;
            GenSpec::Lp(p)
        }
        _ => {
            return err(format!(
                "unknown generator family '{family}' in spec '{s}' (families: {})",
                FAMILIES.join(", ")
            ))
        }
    };
    spec.validate()?;
    Ok(spec)
}

/// The `key=value` pairs of one spec, checked against the family's keys.
struct Keys<'a> {
    family: &'static str,
    valid: &'static [&'static str],
    items: Vec<(&'static str, &'a str)>,
}

impl<'a> Keys<'a> {
    /// The `key=value` items of `rest` ([`crate::spec_syntax::items`]); the value of `of` is
    /// the whole rest of the string (so a nested spec may contain commas).
    fn parse(family: &'static str, valid: &'static [&'static str], rest: &'a str) -> Result<Self> {
        let mut items: Vec<(&'static str, &'a str)> = Vec::new();
        for item in spec_syntax::items(rest, &["of"]) {
            let (key, value) = item.map_err(|item| {
                crate::Error::Generator(format!(
                    "{family}: expected key=value, got '{item}' (valid keys: {})",
                    valid.join(", ")
                ))
            })?;
            let Some(&key) = valid.iter().find(|v| v.eq_ignore_ascii_case(key)) else {
                return err(format!(
                    "{family}: unknown key '{key}' (valid keys: {})",
                    valid.join(", ")
                ));
            };
            if items.iter().any(|(k, _)| *k == key) {
                return err(format!("{family}: key '{key}' given twice"));
            }
            items.push((key, value));
        }
        Ok(Keys { family, valid, items })
    }

    fn take(&mut self, key: &str) -> Option<&'a str> {
        let i = self.items.iter().position(|(k, _)| *k == key)?;
        Some(self.items.remove(i).1)
    }

    fn missing(&self, key: &str) -> crate::Error {
        crate::Error::Generator(format!(
            "{}: missing required key {key} (valid keys: {})",
            self.family,
            self.valid.join(", ")
        ))
    }

    fn bad(&self, key: &str, expected: &str, value: &str) -> crate::Error {
        crate::Error::Generator(format!(
            "{}: key '{key}' expects {expected}, got '{value}' (valid keys: {})",
            self.family,
            self.valid.join(", ")
        ))
    }

    /// `key` as a non-negative integer that fits `I` (u64, usize, u32).
    fn int<I: TryFrom<u64>>(&mut self, key: &str) -> Result<Option<I>> {
        let Some(v) = self.take(key) else { return Ok(None) };
        let expected = if std::mem::size_of::<I>() < 8 {
            "a non-negative integer below 2^32"
        } else {
            "a non-negative integer"
        };
        parse_u64(v)
            .and_then(|x| I::try_from(x).ok())
            .map(Some)
            .ok_or_else(|| self.bad(key, expected, v))
    }
    fn u64(&mut self, key: &str) -> Result<Option<u64>> {
        self.int(key)
    }
    fn usize(&mut self, key: &str) -> Result<Option<usize>> {
        self.int(key)
    }
    fn u32(&mut self, key: &str) -> Result<Option<u32>> {
        self.int(key)
    }

    fn f64(&mut self, key: &str) -> Result<Option<f64>> {
        let Some(v) = self.take(key) else { return Ok(None) };
        match v.replace('_', "").parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(self.bad(key, "a finite number", v)),
        }
    }

    fn bool(&mut self, key: &str) -> Result<Option<bool>> {
        let Some(v) = self.take(key) else { return Ok(None) };
        match v.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Some(true)),
            "0" | "false" | "no" | "off" => Ok(Some(false)),
            _ => Err(self.bad(key, "0 or 1", v)),
        }
    }

    /// The `seed` key of the seeded families: 1 when not given.
    fn seed(&mut self) -> Result<u64> {
        Ok(self.u64("seed")?.unwrap_or(1))
    }

    /// Sets `field` to the value of `key` when the spec gives one: the parameters a family's
    /// `…Params::new` defaults and the spec may change.
    fn set<V: KeyValue>(&mut self, key: &str, field: &mut V) -> Result<()> {
        if let Some(value) = V::take(self, key)? {
            *field = value;
        }
        Ok(())
    }

    /// `;`-separated integers; an empty value is an empty list.
    fn offsets(&mut self, key: &str) -> Result<Option<Vec<i64>>> {
        let Some(v) = self.take(key) else { return Ok(None) };
        if v.trim().is_empty() {
            return Ok(Some(Vec::new()));
        }
        v.split(';')
            .map(|d| d.trim().replace('_', "").parse::<i64>().ok())
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| self.bad(key, "integers separated by ';' (e.g. -1;0;1)", v))
    }
}

/// [`Keys::set`] for each `"key" => field` of a family's parameters `p`.
macro_rules! set_keys {
    ($keys:ident, $p:ident, $($key:literal => $field:ident),+) => {
        $($keys.set($key, &mut $p.$field)?;)+
    };
}
use set_keys;

/// A type [`Keys::set`] reads a value of.
trait KeyValue: Sized {
    fn take(keys: &mut Keys, key: &str) -> Result<Option<Self>>;
}

/// [`KeyValue`] for each type of a `Type => Keys method` list.
macro_rules! key_values {
    ($($t:ty => $read:ident),+) => {$(
        impl KeyValue for $t {
            fn take(keys: &mut Keys, key: &str) -> Result<Option<Self>> {
                keys.$read(key)
            }
        }
    )+};
}
key_values!(usize => usize, u64 => u64, u32 => u32, f64 => f64, bool => bool);

impl KeyValue for Numbering {
    fn take(keys: &mut Keys, key: &str) -> Result<Option<Self>> {
        let Some(v) = keys.take(key) else { return Ok(None) };
        Numbering::parse(v).map(Some).ok_or_else(|| keys.bad(key, "natural, morton or random", v))
    }
}

/// A non-negative integer: decimal digits (underscores allowed), or a number in
/// scientific notation that is a whole number below 2^53 (`1e6`).
fn parse_u64(v: &str) -> Option<u64> {
    let t = v.trim().replace('_', "");
    if let Ok(x) = t.parse::<u64>() {
        return Some(x);
    }
    if t.contains(['e', 'E']) {
        let x: f64 = t.parse().ok()?;
        if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 9007199254740992.0 {
            return Some(x as u64);
        }
    }
    None
}
