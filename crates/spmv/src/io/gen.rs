//! Seeded matrix generators: stencils, Kronecker graphs, random, banded, power-law ...
//!
//! Every generator returns a valid [`Csr<f64>`](crate::Csr) (sorted, distinct columns), is
//! deterministic (random ones for a given seed, whatever the thread count: the generators
//! carry their own splitmix64 / xoshiro256** so a seed means the same matrix forever), runs
//! in parallel with rayon, and reports bad arguments as [`Error::Generator`](crate::Error).
//! Empty shapes (`n = 0`, mean 0) give empty matrices; sizes beyond 32-bit indices or
//! beyond 2^36 entries are refused.
//!
//! | function | spec | matrix |
//! |---|---|---|
//! | [`poisson2d`] | `poisson2d:nx=1000` | 5-point Laplacian |
//! | [`poisson3d`] | `poisson3d:n=128,points=27` | 7- or 27-point Laplacian |
//! | [`kronecker`], [`kronecker_with`] | `kron:scale=20` | Graph500 R-MAT graph |
//! | [`random_uniform`] | `random:rows=100000,mean=16` | uniform random pattern |
//! | [`banded`], [`banded_with`] | `banded:n=1000000,offsets=-2;0;3,broken=0.1,scatter=0.001` | diagonals with gaps and strays |
//! | [`power_law`] | `powerlaw:n=1000000,mean=8,exp=2.1` | Pareto row lengths |
//! | [`long_rows`] | `longrows:n=100000,short=4,count=5,long=50000` | a few very long rows |
//! | [`block_diag`] | `blockdiag:k=4,of=poisson2d:nx=100` | k copies on the diagonal |
//! | [`fem`] | `fem:n=40,order=2,dofs=3,numbering=morton` | finite elements, blocks of unknowns |
//! | [`road`] | `road:n=1000` | road network: a planar grid's streets |
//! | [`circuit`] | `circuit:n=1000000` | circuit: local links and a few dense nets |
//! | [`lp`] | `lp:rows=100000` | linear program: staircase, linking rows |
//!
//! # Spec syntax
//!
//! `family:key=value,key=value,...` — keys in any order, each at most once, whitespace
//! around keys and values ignored. Integers may use `_` separators or exact scientific
//! notation (`n=1e6`); booleans are `0/1` (also `true/false`, `yes/no`); a list of offsets is
//! separated by `;`. The value of `of` (in `blockdiag`) is the *rest of the string*, so an
//! inner spec may contain commas: `blockdiag:k=4,of=random:rows=100,mean=3`; `of=file=a.mtx`
//! reads a Matrix Market file instead. [`GenSpec`]'s `Display` prints the canonical form
//! (every key, defaults included, fixed order) and [`parse_spec`] reads it back unchanged.
//! The keys and defaults of each family are in `docs/generators.md`.

mod banded;
mod block;
mod build;
mod circuit;
mod kron;
mod mesh;
mod random;
mod rng;
mod spec;
mod stencil;

pub use banded::{banded, banded_with, BandedParams};
pub use block::block_diag;
pub(crate) use build::in_window;
pub use build::{MAX_DIM, MAX_NNZ};
pub use circuit::{circuit, lp, CircuitParams, LpParams};
pub use kron::{kronecker, kronecker_with, KroneckerParams, MAX_SCALE, RMAT_A, RMAT_B, RMAT_C};
pub use mesh::{fem, road, FemParams, Numbering, RoadParams};
pub use random::{long_rows, power_law, random_uniform};
pub use spec::{
    generate, is_spec_like, parse_spec, BlockSource, GenSpec, EXAMPLES, FAMILIES, MAX_NESTING,
};
pub use stencil::{poisson2d, poisson3d};
