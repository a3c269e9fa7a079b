//! Matrices named on a command line: files, folders of files, generator specs, or the
//! default set of `spmv bench`.

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::io::{gen, mtx, read_matrix_market_with, ReadOptions};
use crate::matrix::Csr;

/// One matrix named by the user, not yet loaded.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// A Matrix Market file (`.mtx` or `.mtx.gz`).
    File(PathBuf),
    /// A generator spec such as `poisson3d:n=64` (docs/generators.md).
    Spec(String),
}

impl Input {
    /// Short name for tables: the file stem, or the generator spec.
    pub fn name(&self) -> String {
        match self {
            Input::File(p) => {
                let file =
                    p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
                file.trim_end_matches(".gz").trim_end_matches(".mtx").to_string()
            }
            Input::Spec(s) => s.clone(),
        }
    }

    /// Reads the file (in f64) or runs the generator.
    pub fn load(&self) -> Result<Csr<f64>> {
        self.load_with(&ReadOptions::default())
    }

    /// [`Input::load`] with the reader's options (files only).
    pub fn load_with(&self, options: &ReadOptions) -> Result<Csr<f64>> {
        match self {
            Input::File(p) => read_matrix_market_with(p, options),
            Input::Spec(s) => gen::generate(s),
        }
    }

    /// Rows and columns, without loading the matrix (a file's header, a spec's sizes).
    pub fn dims(&self) -> Result<(usize, usize)> {
        match self {
            Input::File(p) => mtx::read_header(p).map(|h| (h.nrows, h.ncols)),
            Input::Spec(s) => gen::parse_spec(s)?.dims(),
        }
    }

    /// Rows `rows` of the matrix, all its columns (rows past the end clipped): a generator
    /// builds only those; a file is read a window at a time and only those rows' entries
    /// kept. The row block that one process of a multi-process run holds.
    pub fn load_rows(&self, rows: Range<usize>, options: &ReadOptions) -> Result<Csr<f64>> {
        match self {
            Input::File(p) => mtx::read_matrix_market_rows(p, options, rows),
            Input::Spec(s) => {
                gen::in_window(rows.clone(), || gen::parse_spec(s))?.generate_rows(rows)
            }
        }
    }
}

/// [`resolve`] for a process that will load only some rows of each matrix
/// ([`Input::load_rows`]): a generator spec's host memory is checked for the rows when they
/// are built, not here for the whole matrix.
pub fn resolve_for_rows(args: &[String]) -> Result<Vec<Input>> {
    gen::in_window(0..0, || resolve(args))
}

/// An argument meant as a path: it has a path separator or a Matrix Market extension, and
/// does not start like a generator spec (`family:`; a spec may name a file:
/// `blockdiag:k=8,of=file=data/m.mtx.gz`).
fn looks_like_a_path(arg: &str) -> bool {
    !gen::is_spec_like(arg)
        && (arg.contains(std::path::MAIN_SEPARATOR) || is_matrix_file(Path::new(arg)))
}

fn is_matrix_file(p: &Path) -> bool {
    let name = p.file_name().map(|f| f.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    name.ends_with(".mtx") || name.ends_with(".mtx.gz")
}

/// Turns command-line arguments into inputs: an existing file, every `.mtx`/`.mtx.gz` of a
/// folder (sorted by name), or else a generator spec (checked by parsing it).
pub fn resolve(args: &[String]) -> Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for arg in args {
        let path = Path::new(arg);
        if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| Error::io(path, e))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_matrix_file(p))
                .collect();
            if files.is_empty() {
                return Err(Error::Unsupported(format!(
                    "{arg}: folder holds no .mtx or .mtx.gz files"
                )));
            }
            files.sort();
            inputs.extend(files.into_iter().map(Input::File));
        } else if path.is_file() {
            inputs.push(Input::File(path.to_path_buf()));
        } else if looks_like_a_path(arg) {
            // Not there, or not a file (a device, a pipe): say which, rather than that it is no
            // generator spec. (A file that appeared since the test above is taken.)
            let kind = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.file_type();
            mtx::check_regular(path, kind)?;
            inputs.push(Input::File(path.to_path_buf()));
        } else if gen::is_spec_like(arg) {
            // A spec whose family is known: its own error (a bad key, too large) is the cause.
            gen::parse_spec(arg)?;
            inputs.push(Input::Spec(arg.clone()));
        } else {
            gen::parse_spec(arg).map_err(|e| {
                Error::Unsupported(format!(
                    "'{arg}' is neither a file, a folder nor a generator spec: {e}"
                ))
            })?;
            inputs.push(Input::Spec(arg.clone()));
        }
    }
    Ok(inputs)
}

/// The generated part of the default set: one matrix of each structure the formats of the
/// literature are designed for, large enough to be well past the L2 cache on the H200.
pub const DEFAULT_SPECS: &[&str] = &[
    "poisson3d:n=128",
    "poisson3d:n=64,points=27",
    "kron:scale=20",
    "random:rows=2000000,cols=2000000,mean=16",
    "powerlaw:n=2000000,mean=8,exp=2.1",
    "banded:n=4000000,offsets=-1000;-1;0;1;1000,broken=0.1,scatter=0.001",
    "longrows:n=1000000,short=8,count=16,long=200000",
];

/// The default set's generated matrices for a run on the CPU: the same structures at about a
/// tenth of the entries, so that the CPU default set finishes in minutes on two cores.
pub const DEFAULT_SPECS_CPU: &[&str] = &[
    "poisson3d:n=60",
    "poisson3d:n=30,points=27",
    "kron:scale=17",
    "random:rows=200000,cols=200000,mean=16",
    "powerlaw:n=200000,mean=8,exp=2.1",
    "banded:n=400000,offsets=-1000;-1;0;1;1000,broken=0.1,scatter=0.001",
    "longrows:n=100000,short=8,count=16,long=20000",
];

/// The real matrices shipped with the repository (`data/matrices`), next to the workspace.
pub fn shipped_matrices_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/matrices")
}

/// The default set: the shipped real matrices (when the folder is found) plus
/// [`DEFAULT_SPECS`], or [`DEFAULT_SPECS_CPU`] when `on_cpu`.
pub fn default_set(on_cpu: bool) -> Result<Vec<Input>> {
    let mut args = Vec::new();
    for dir in [PathBuf::from("data/matrices"), shipped_matrices_dir()] {
        if dir.is_dir() {
            args.push(dir.to_string_lossy().into_owned());
            break;
        }
    }
    let specs = if on_cpu { DEFAULT_SPECS_CPU } else { DEFAULT_SPECS };
    args.extend(specs.iter().map(|s| s.to_string()));
    resolve(&args)
}
