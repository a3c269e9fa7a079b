//! Matrices of meshes and networks on grids, numbered as their sources number them:
//! finite-element matrices (`fem`: Lagrange elements of order 1–4 on a square or cubic mesh,
//! several unknowns per node, elements dropped at random for irregular row lengths) and road
//! networks (`road`: a planar grid graph with a fraction of its streets kept).
//!
//! Real matrices of these kinds are rarely in natural order: a mesh generator or a crawl
//! numbers the nodes with locality but no regular diagonals, a shuffled file with none.
//! [`Numbering`] gives the three cases. A row stays a function of its index (the node's
//! neighbours are computed from its grid position, then relabelled), so a row window builds
//! only its rows.

use std::fmt;

use rayon::prelude::*;

use super::build::{build_from_columns, check_dim, check_size, err};
use super::rng::{entry_value, hash3, unit_from, Rng};
use crate::{Csr, Result};

const TAG_DROP: u64 = 0x0066_656D_6472_6F70; // "femdrop"
const TAG_STREET: u64 = 0x7374_7265_6574; // "street"
const TAG_NUMBERING: u64 = 0x6E75_6D62_6572; // "number"

/// How the nodes of a grid are numbered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// Lexicographic (x fastest): regular diagonals.
    Natural,
    /// Along the Z-order (Morton) curve of the grid: locality as a mesh generator or a
    /// partitioner gives it, without constant diagonals.
    Morton,
    /// A seeded random permutation: no locality at all.
    Random,
}

impl Numbering {
    /// The spec's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Numbering::Natural => "natural",
            Numbering::Morton => "morton",
            Numbering::Random => "random",
        }
    }

    /// The numbering a spec's word names.
    pub fn parse(word: &str) -> Option<Self> {
        [Numbering::Natural, Numbering::Morton, Numbering::Random]
            .into_iter()
            .find(|n| n.name().eq_ignore_ascii_case(word.trim()))
    }
}

impl fmt::Display for Numbering {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A numbering of the `side^dim` nodes of a grid: the new label of each node (indexed by
/// its lexicographic index) and the node of each new label. Natural numbering holds nothing.
struct Labels {
    new_of_old: Vec<u32>,
    old_of_new: Vec<u32>,
}

impl Labels {
    fn new(numbering: Numbering, side: usize, dim: u32, seed: u64) -> Option<Self> {
        if numbering == Numbering::Natural {
            return None;
        }
        let nodes = side.pow(dim);
        let mut old_of_new: Vec<u32> = (0..nodes).map(|v| v as u32).collect(); // nodes ≤ 2^32
        if numbering == Numbering::Morton {
            old_of_new.par_sort_unstable_by_key(|&v| morton(coords(v as usize, side, dim)));
        } else {
            let mut rng = Rng::stream(seed, TAG_NUMBERING, 0);
            for i in (1..nodes).rev() {
                old_of_new.swap(i, rng.below(i as u64 + 1) as usize);
            }
        }
        let mut new_of_old = vec![0u32; nodes];
        for (new, &old) in old_of_new.iter().enumerate() {
            new_of_old[old as usize] = new as u32;
        }
        Some(Labels { new_of_old, old_of_new })
    }
}

/// The label of lexicographic node `old`, and the reverse.
fn new_label(labels: &Option<Labels>, old: usize) -> usize {
    labels.as_ref().map_or(old, |l| l.new_of_old[old] as usize)
}
fn old_label(labels: &Option<Labels>, new: usize) -> usize {
    labels.as_ref().map_or(new, |l| l.old_of_new[new] as usize)
}

/// Grid coordinates of lexicographic node `v` (x fastest; unused axes 0).
fn coords(v: usize, side: usize, dim: u32) -> [usize; 3] {
    let mut c = [0; 3];
    let mut rest = v;
    for axis in c.iter_mut().take(dim as usize) {
        *axis = rest % side;
        rest /= side;
    }
    c
}

fn index(c: [usize; 3], side: usize) -> usize {
    c[0] + side * (c[1] + side * c[2])
}

/// The Z-order key: the coordinates' bits interleaved (21 bits each).
fn morton(c: [usize; 3]) -> u64 {
    let mut key = 0u64;
    for bit in 0..21 {
        for (axis, &x) in c.iter().enumerate() {
            key |= (((x >> bit) & 1) as u64) << (3 * bit + axis);
        }
    }
    key
}

/// Parameters of [`fem`]. Start from [`FemParams::new`] and set what differs.
#[derive(Clone, Debug, PartialEq)]
pub struct FemParams {
    /// Elements along each side of the square (`dim = 2`) or cube (`dim = 3`).
    pub n: usize,
    /// 2 (quadrilaterals) or 3 (hexahedra).
    pub dim: u32,
    /// Polynomial order of the Lagrange elements, 1–4: `order + 1` nodes along an element's
    /// side, so higher orders couple more nodes and mix row lengths (vertex, edge, face and
    /// interior nodes).
    pub order: u32,
    /// Unknowns per node, 1–8 (3 for elasticity in 3-D): each coupling of two nodes is a
    /// dense `dofs × dofs` block.
    pub dofs: usize,
    /// How the nodes are numbered.
    pub numbering: Numbering,
    /// Fraction of the elements left out, in [0, 1): holes that shorten the rows around
    /// them (every node keeps its diagonal).
    pub drop: f64,
    /// Seed of the dropped elements, the numbering and the values.
    pub seed: u64,
}

impl FemParams {
    /// `n^3` trilinear hexahedra, one unknown per node, natural numbering, none dropped.
    pub fn new(n: usize) -> Self {
        FemParams {
            n,
            dim: 3,
            order: 1,
            dofs: 1,
            numbering: Numbering::Natural,
            drop: 0.0,
            seed: 1,
        }
    }

    /// Nodes along a side: `n·order + 1` (none without elements).
    fn side(&self) -> usize {
        if self.n == 0 {
            0
        } else {
            self.n * self.order as usize + 1
        }
    }

    /// Rows (and columns): nodes × unknowns per node.
    pub(crate) fn rows(&self) -> usize {
        self.side().pow(self.dim) * self.dofs
    }

    pub(crate) fn check(&self) -> Result<()> {
        const F: &str = "fem";
        if !matches!(self.dim, 2 | 3) {
            return err(format!("{F}: dim must be 2 or 3, got {}", self.dim));
        }
        if !(1..=4).contains(&self.order) {
            return err(format!("{F}: order must be 1, 2, 3 or 4, got {}", self.order));
        }
        if !(1..=8).contains(&self.dofs) {
            return err(format!("{F}: dofs (unknowns per node) must be 1 to 8, got {}", self.dofs));
        }
        if !(0.0..1.0).contains(&self.drop) {
            return err(format!("{F}: drop must be a fraction in [0, 1), got {}", self.drop));
        }
        let side = (self.n as u64).checked_mul(self.order as u64).and_then(|s| {
            let s = if self.n == 0 { 0 } else { s + 1 };
            s.checked_pow(self.dim)?.checked_mul(self.dofs as u64)
        });
        let Some(rows) = side else {
            return err(format!("{F}: n = {} is too large for 32-bit indices", self.n));
        };
        check_dim(F, "rows (nodes × dofs)", rows)?;
        // A node couples with (order + 2)^dim nodes on average (vertex nodes with more),
        // each coupling a dofs × dofs block; the labels take 8 bytes a node.
        let per_row = ((self.order + 2) as f64).powi(self.dim as i32) * self.dofs as f64;
        let nodes = rows as f64 / self.dofs as f64;
        let labels = if self.numbering == Numbering::Natural { 0.0 } else { 8.0 * nodes };
        check_size(F, rows, rows as f64 * per_row, labels)
    }

    /// Whether element `e` (lexicographic over the `n^dim` elements) is in the mesh.
    fn kept(&self, e: usize) -> bool {
        self.drop == 0.0 || unit_from(hash3(self.seed, TAG_DROP, e as u64)) >= self.drop
    }

    /// The lexicographic nodes that share a kept element with node `v` (and `v` itself),
    /// into `out` (unsorted).
    fn neighbours(&self, v: usize, out: &mut Vec<u32>) {
        out.clear();
        let (side, dim, p) = (self.side(), self.dim as usize, self.order as usize);
        let c = coords(v, side, self.dim);
        // Per axis, the elements holding the node: one, or two where it sits on their border.
        let mut lo = [0; 3];
        let mut hi = [0; 3];
        for a in 0..dim {
            hi[a] = (c[a] / p).min(self.n - 1);
            lo[a] = if c[a].is_multiple_of(p) && c[a] > 0 { c[a] / p - 1 } else { hi[a] };
        }
        // The kept elements' node boxes (at most 2^dim): on the stack, as this runs twice a row.
        let mut boxes = [([0usize; 3], [0usize; 3]); 8];
        let mut kept = 0;
        for ez in lo[2]..=hi[2] {
            for ey in lo[1]..=hi[1] {
                for ex in lo[0]..=hi[0] {
                    let e = [ex, ey, ez];
                    if self.kept(index(e, self.n)) {
                        let first = e.map(|x| x * p);
                        boxes[kept] = (first, first.map(|x| x + p));
                        kept += 1;
                    }
                }
            }
        }
        let (from, to) = (lo.map(|x| x * p), hi.map(|x| x * p + p));
        let axis = |a: usize| if a < dim { from[a]..=to[a] } else { 0..=0 };
        for z in axis(2) {
            for y in axis(1) {
                for x in axis(0) {
                    let q = [x, y, z];
                    let inside = |(f, t): &([usize; 3], [usize; 3])| {
                        (0..dim).all(|a| (f[a]..=t[a]).contains(&q[a]))
                    };
                    if q == c || boxes[..kept].iter().any(inside) {
                        out.push(index(q, side) as u32);
                    }
                }
            }
        }
    }
}

/// A finite-element stiffness-like matrix: Lagrange elements of order `p.order` on an
/// `n^dim` mesh of squares or cubes, `p.dofs` unknowns per node. Two unknowns couple when
/// their nodes share an element that was not dropped. Symmetric and strictly diagonally
/// dominant (so positive definite): off-diagonal values in (-1, 0), the diagonal 1 + the sum
/// of the row's off-diagonal magnitudes. Row `node·dofs + d` is unknown `d` of the node
/// labelled `node` by `p.numbering`.
pub fn fem(p: &FemParams) -> Result<Csr<f64>> {
    p.check()?;
    let (side, dofs, seed) = (p.side(), p.dofs, p.seed);
    let labels = Labels::new(p.numbering, side, p.dim, seed);
    let labels = &labels;
    let columns = move |r: usize, out: &mut Vec<u32>| {
        p.neighbours(old_label(labels, r / dofs), out);
        for v in out.iter_mut() {
            *v = new_label(labels, *v as usize) as u32;
        }
        out.sort_unstable();
        // Each node's unknowns, in place from the back (entry i moves to i·dofs ≥ i).
        let nodes = out.len();
        out.resize(nodes * dofs, 0);
        for i in (0..nodes).rev() {
            let node = out[i] as usize;
            for d in (0..dofs).rev() {
                out[i * dofs + d] = (node * dofs + d) as u32;
            }
        }
    };
    let values = move |r: usize, cols: &[u32], vals: &mut [f64]| {
        let mut off_diagonal = 0.0;
        let mut diagonal = 0;
        for (i, &c) in cols.iter().enumerate() {
            if c as usize == r {
                diagonal = i;
            } else {
                // Hashed on the unordered pair: the same value at (r, c) and (c, r).
                let (low, high) = (r.min(c as usize), r.max(c as usize));
                vals[i] = -entry_value(seed, low, high as u32).abs();
                off_diagonal -= vals[i];
            }
        }
        vals[diagonal] = 1.0 + off_diagonal;
    };
    let n = p.rows();
    Ok(build_from_columns(n, n, columns, values))
}

/// Parameters of [`road`]. Start from [`RoadParams::new`] and set what differs.
#[derive(Clone, Debug, PartialEq)]
pub struct RoadParams {
    /// Intersections along each side of the square grid (`n²` nodes).
    pub n: usize,
    /// Probability that a street (a grid edge) exists: 0.7 gives the mean degree of about
    /// 2.8 of real road networks.
    pub keep: f64,
    /// How the intersections are numbered.
    pub numbering: Numbering,
    /// Seed of the streets and the numbering.
    pub seed: u64,
}

impl RoadParams {
    /// `n²` intersections, 70% of the streets, Morton numbering, seed 1.
    pub fn new(n: usize) -> Self {
        RoadParams { n, keep: 0.7, numbering: Numbering::Morton, seed: 1 }
    }

    pub(crate) fn rows(&self) -> usize {
        self.n * self.n
    }

    pub(crate) fn check(&self) -> Result<()> {
        const F: &str = "road";
        if !(0.0..=1.0).contains(&self.keep) {
            return err(format!("{F}: keep must be a probability in [0, 1], got {}", self.keep));
        }
        let Some(nodes) = (self.n as u64).checked_mul(self.n as u64) else {
            return err(format!("{F}: n = {} is too large for 32-bit indices", self.n));
        };
        check_dim(F, "nodes (n²)", nodes)?;
        let labels = if self.numbering == Numbering::Natural { 0.0 } else { 8.0 * nodes as f64 };
        check_size(F, nodes, 4.0 * self.keep * nodes as f64, labels)
    }

    /// Whether the street from node `v` in direction `dir` (0: +x, 1: +y) exists.
    fn street(&self, v: usize, dir: usize) -> bool {
        unit_from(hash3(self.seed, TAG_STREET, (2 * v + dir) as u64)) < self.keep
    }
}

/// The adjacency matrix of a road network: the `n × n` grid's streets, each kept with
/// probability `p.keep`, values 1 (SuiteSparse's road networks are patterns), no diagonal.
/// Symmetric; rows of 0–4 entries.
pub fn road(p: &RoadParams) -> Result<Csr<f64>> {
    p.check()?;
    let (n, seed) = (p.n, p.seed);
    let labels = Labels::new(p.numbering, n, 2, seed);
    let labels = &labels;
    let columns = move |r: usize, out: &mut Vec<u32>| {
        out.clear();
        let v = old_label(labels, r);
        let (x, y) = (v % n, v / n);
        let streets = [
            (x > 0 && p.street(v - 1, 0), v.wrapping_sub(1)),
            (x + 1 < n && p.street(v, 0), v + 1),
            (y > 0 && p.street(v.wrapping_sub(n), 1), v.wrapping_sub(n)),
            (y + 1 < n && p.street(v, 1), v + n),
        ];
        out.extend(streets.iter().filter(|s| s.0).map(|&(_, u)| new_label(labels, u) as u32));
        out.sort_unstable();
    };
    Ok(build_from_columns(p.rows(), p.rows(), columns, |_, _, vals| vals.fill(1.0)))
}
