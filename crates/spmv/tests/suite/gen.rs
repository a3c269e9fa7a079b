//! Tests of the matrix generators (`spmv::io::gen`) and their spec syntax.

use proptest::prelude::*;
use spmv::io::gen::{
    self, BandedParams, BlockSource, CircuitParams, FemParams, GenSpec, KroneckerParams, LpParams,
    Numbering, RoadParams,
};
use spmv::{Csr, Error};

// ---------------------------------------------------------------- helpers

/// Re-checks every CSR invariant through `Csr::new_checked` on the matrix's parts.
fn valid<T: spmv::Scalar>(a: &Csr<T>) -> Csr<T> {
    let (m, n, p, c, v) = a.clone().into_parts();
    Csr::new_checked(m, n, p, c, v).expect("generator produced an invalid CSR matrix")
}

fn get(a: &Csr<f64>, r: usize, c: u32) -> Option<f64> {
    let (cols, vals) = a.row(r);
    cols.binary_search(&c).ok().map(|i| vals[i])
}

fn is_symmetric(a: &Csr<f64>) -> bool {
    a.nrows() == a.ncols()
        && (0..a.nrows()).all(|r| {
            let (cols, vals) = a.row(r);
            cols.iter().zip(vals).all(|(&c, &v)| get(a, c as usize, r as u32) == Some(v))
        })
}

fn row_lens(a: &Csr<f64>) -> Vec<usize> {
    (0..a.nrows()).map(|r| a.row_len(r)).collect()
}

/// FNV-1a over the shape, the structure and the value bits: a fingerprint for golden tests.
fn fingerprint(a: &Csr<f64>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    eat(a.nrows() as u64);
    eat(a.ncols() as u64);
    a.row_ptr().iter().for_each(|&p| eat(p as u64));
    a.col_idx().iter().for_each(|&c| eat(c as u64));
    a.values().iter().for_each(|v| eat(v.to_bits()));
    h
}

fn gen_err(r: spmv::Result<impl std::fmt::Debug>) -> String {
    match r {
        Err(Error::Generator(msg)) => msg,
        other => panic!("expected Error::Generator, got {other:?}"),
    }
}

fn parse_err(spec: &str) -> String {
    gen_err(gen::parse_spec(spec))
}

// ---------------------------------------------------------------- stencils

#[test]
fn poisson2d_3x3() {
    let a = valid(&gen::poisson2d(3, 3).unwrap());
    assert_eq!((a.nrows(), a.ncols(), a.nnz()), (9, 9, 33));
    assert!(is_symmetric(&a));
    // The centre point (1, 1) = row 4 couples to rows 1, 3, 5, 7.
    assert_eq!(a.row(4).0, &[1, 3, 4, 5, 7]);
    assert_eq!(a.row(4).1, &[-1.0, -1.0, 4.0, -1.0, -1.0]);
    assert_eq!(a.row(0).0, &[0, 1, 3]);
    for r in 0..9 {
        assert_eq!(get(&a, r, r as u32), Some(4.0));
    }
}

#[test]
fn poisson2d_counts_and_shapes() {
    for (nx, ny) in [(1, 1), (1, 5), (4, 3), (7, 2), (10, 10)] {
        let a = valid(&gen::poisson2d(nx, ny).unwrap());
        assert_eq!(a.nrows(), nx * ny);
        assert_eq!(a.nnz(), 5 * nx * ny - 2 * nx - 2 * ny, "{nx}x{ny}");
        assert!(is_symmetric(&a));
        // Natural ordering: row (i, j) = i + nx j couples to i ± 1 and j ± 1 only.
        for r in 0..a.nrows() {
            for &c in a.row(r).0 {
                let d = (c as i64 - r as i64).unsigned_abs() as usize;
                assert!(d == 0 || d == 1 || d == nx, "entry ({r}, {c}) in {nx}x{ny}");
            }
        }
    }
}

#[test]
fn poisson3d_7_point_counts() {
    for n in 1..=6usize {
        let a = valid(&gen::poisson3d(n, n, n, 7).unwrap());
        assert_eq!(a.nrows(), n * n * n);
        assert_eq!(a.nnz(), 7 * n * n * n - 6 * n * n, "n = {n}");
        assert!(is_symmetric(&a));
        assert_eq!(a.max_row_len(), if n >= 3 { 7 } else { 1 + 3 * (n - 1) });
    }
    let a = valid(&gen::poisson3d(4, 3, 2, 7).unwrap());
    assert_eq!(a.nrows(), 24);
    assert_eq!(a.nnz(), 7 * 24 - 2 * (4 * 3 + 3 * 2 + 4 * 2));
    // Interior rows sum to 0, the diagonal is 6.
    let b = gen::poisson3d(5, 5, 5, 7).unwrap();
    let centre = 2 + 5 * (2 + 5 * 2);
    assert_eq!(b.row(centre).1.iter().sum::<f64>(), 0.0);
    assert_eq!(get(&b, centre, centre as u32), Some(6.0));
    assert_eq!(
        b.row(centre).0,
        &[
            centre as u32 - 25,
            centre as u32 - 5,
            centre as u32 - 1,
            centre as u32,
            centre as u32 + 1,
            centre as u32 + 5,
            centre as u32 + 25
        ]
    );
}

#[test]
fn poisson3d_27_point_counts() {
    for (nx, ny, nz) in [(1, 1, 1), (2, 2, 2), (3, 3, 3), (5, 4, 3), (6, 1, 2)] {
        let a = valid(&gen::poisson3d(nx, ny, nz, 27).unwrap());
        assert_eq!(a.nrows(), nx * ny * nz);
        // Each dimension contributes (3 n - 2) (point, offset) pairs.
        assert_eq!(a.nnz(), (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2), "{nx}x{ny}x{nz}");
        assert!(is_symmetric(&a));
    }
    let a = gen::poisson3d(3, 3, 3, 27).unwrap();
    assert_eq!(a.row_len(13), 27);
    assert_eq!(get(&a, 13, 13), Some(26.0));
    assert_eq!(a.row(13).1.iter().sum::<f64>(), 0.0);
    assert_eq!(a.row(13).0, (0..27).collect::<Vec<u32>>().as_slice());
}

#[test]
fn stencil_errors_and_empty() {
    assert_eq!(gen::poisson2d(0, 5).unwrap().nrows(), 0);
    assert_eq!(gen::poisson3d(3, 0, 3, 27).unwrap().nnz(), 0);
    let msg = gen_err(gen::poisson3d(3, 3, 3, 9));
    assert!(msg.contains("points") && msg.contains('9'), "{msg}");
    let msg = gen_err(gen::poisson2d(70_000, 70_000));
    assert!(msg.contains("32-bit"), "{msg}");
    assert!(gen_err(gen::poisson3d(usize::MAX, 2, 2, 7)).contains("too large"));
}

// ---------------------------------------------------------------- Kronecker

#[test]
fn kronecker_graph500() {
    let a = valid(&gen::kronecker(10, 16, 1).unwrap());
    assert_eq!((a.nrows(), a.ncols()), (1024, 1024));
    assert!(is_symmetric(&a));
    assert!(a.values().iter().all(|&v| v == 1.0));
    assert!((0..1024).all(|r| get(&a, r, r as u32).is_none()), "self-loops must be dropped");
    // At most 2 entries per drawn edge; a fair share survives deduplication.
    assert!(a.nnz() <= 2 * 16 * 1024 && a.nnz() > 16 * 1024, "nnz = {}", a.nnz());
    // Heavy tail: the largest degree is far above the mean, many vertices are isolated.
    let mean = a.mean_row_len();
    assert!(a.max_row_len() as f64 > 8.0 * mean, "max {} mean {mean}", a.max_row_len());
    assert!(row_lens(&a).iter().filter(|&&l| l == 0).count() > 50);
}

#[test]
fn kronecker_variants() {
    let base =
        KroneckerParams { scale: 9, edge_factor: 8, seed: 3, symmetric: false, permute: false };
    let plain = valid(&gen::kronecker_with(&base).unwrap());
    assert!(!is_symmetric(&plain));
    // Without the permutation vertex 0 is (one of) the heaviest.
    assert!(plain.row_len(0) * 2 >= plain.max_row_len());
    // The permutation only relabels: same multiset of row lengths, same nnz.
    let perm =
        valid(&gen::kronecker_with(&KroneckerParams { permute: true, ..base.clone() }).unwrap());
    assert_eq!(perm.nnz(), plain.nnz());
    let (mut l1, mut l2) = (row_lens(&plain), row_lens(&perm));
    l1.sort_unstable();
    l2.sort_unstable();
    assert_eq!(l1, l2);
    assert_ne!(row_lens(&plain), row_lens(&perm));
    // Symmetrising gives exactly the union of the pattern and its transpose.
    let sym =
        valid(&gen::kronecker_with(&KroneckerParams { symmetric: true, ..base.clone() }).unwrap());
    assert!(is_symmetric(&sym));
    for r in 0..plain.nrows() {
        for &c in plain.row(r).0 {
            assert_eq!(get(&sym, r, c), Some(1.0));
            assert_eq!(get(&sym, c as usize, r as u32), Some(1.0));
        }
    }
    let mut union = 0;
    for r in 0..plain.nrows() {
        for &c in sym.row(r).0 {
            assert!(get(&plain, r, c).is_some() || get(&plain, c as usize, r as u32).is_some());
            union += 1;
        }
    }
    assert_eq!(union, sym.nnz());
}

#[test]
fn kronecker_determinism_and_edges() {
    let a = gen::kronecker(8, 4, 11).unwrap();
    assert_eq!(a, gen::kronecker(8, 4, 11).unwrap());
    assert_ne!(a, gen::kronecker(8, 4, 12).unwrap());
    assert_eq!(gen::kronecker(0, 16, 1).unwrap().nnz(), 0); // one vertex: only self-loops
    assert_eq!(gen::kronecker(5, 0, 1).unwrap().nnz(), 0);
    let msg = gen_err(gen::kronecker(33, 16, 1));
    assert!(msg.contains("scale") && msg.contains("32"), "{msg}");
    assert!(gen_err(gen::kronecker(32, 1 << 10, 1)).contains("entries"));
}

// ---------------------------------------------------------------- random

#[test]
fn random_uniform_shape_and_stats() {
    let a = valid(&gen::random_uniform(4000, 3000, 16.0, 5).unwrap());
    assert_eq!((a.nrows(), a.ncols()), (4000, 3000));
    assert!((a.mean_row_len() - 16.0).abs() < 0.5, "mean {}", a.mean_row_len());
    assert!(a.max_row_len() <= 32);
    assert!(row_lens(&a).contains(&0) && row_lens(&a).contains(&32));
    assert!(a
        .values()
        .iter()
        .all(|&v| (-1.0..1.0).contains(&v) && v != 0.0 && v as f32 as f64 == v));
    // Columns spread over the whole range.
    let (lo, hi) = a.col_idx().iter().fold((u32::MAX, 0), |(l, h), &c| (l.min(c), h.max(c)));
    assert!(lo < 10 && hi > 2990);
    assert_eq!(a, gen::random_uniform(4000, 3000, 16.0, 5).unwrap());
    assert_ne!(a, gen::random_uniform(4000, 3000, 16.0, 6).unwrap());
}

#[test]
fn random_uniform_edges() {
    assert_eq!(gen::random_uniform(0, 10, 3.0, 1).unwrap().nrows(), 0);
    let z = valid(&gen::random_uniform(10, 0, 3.0, 1).unwrap());
    assert_eq!((z.nrows(), z.ncols(), z.nnz()), (10, 0, 0));
    assert_eq!(gen::random_uniform(50, 50, 0.0, 1).unwrap().nnz(), 0);
    // A mean beyond the column count is capped: rows of 0..=ncols entries.
    let d = valid(&gen::random_uniform(200, 5, 100.0, 1).unwrap());
    assert!(d.max_row_len() == 5 && d.nnz() > 400);
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(gen_err(gen::random_uniform(10, 10, bad, 1)).contains("mean"));
    }
    assert!(gen_err(gen::random_uniform(1 << 33, 10, 1.0, 1)).contains("rows"));
    assert!(gen_err(gen::random_uniform(1 << 32, 1 << 32, 1e6, 1)).contains("entries"));
}

// ---------------------------------------------------------------- banded

#[test]
fn banded_full_diagonals() {
    let n = 100;
    let offsets = [-7i64, -1, 0, 3, 99, -99];
    let a = valid(&gen::banded(n, &offsets, 4).unwrap());
    // A diagonal outside the matrix is refused, not dropped.
    for outside in [150i64, -100, 100] {
        let msg = gen_err(gen::banded(n, &[0, outside], 4));
        assert!(
            msg.contains(&format!("offset {outside} lies outside the n = 100 matrix")),
            "{msg}"
        );
    }
    let expect: usize = offsets
        .iter()
        .filter(|d| d.unsigned_abs() < n as u64)
        .map(|d| n - d.unsigned_abs() as usize)
        .sum();
    assert_eq!(a.nnz(), expect);
    for r in 0..n {
        for &c in a.row(r).0 {
            assert!(offsets.contains(&(c as i64 - r as i64)));
        }
    }
    assert!(get(&a, 0, 99).is_some());
    assert!(a.values().iter().all(|&v| (-1.0..1.0).contains(&v) && v != 0.0));
    // Repeated offsets count once; no offsets: an empty matrix.
    assert_eq!(gen::banded(n, &[0, 0, 0], 1).unwrap().nnz(), n);
    assert_eq!(valid(&gen::banded(n, &[], 1).unwrap()).nnz(), 0);
    assert_eq!(gen::banded(0, &[0, 1], 1).unwrap().nrows(), 0);
}

#[test]
fn banded_broken_and_scattered() {
    let n = 20_000;
    let full = gen::banded(n, &[-3, 0, 5], 2).unwrap();
    let p =
        BandedParams { broken: 0.25, segment: 16, seed: 2, ..BandedParams::new(n, &[-3, 0, 5]) };
    let b = valid(&gen::banded_with(&p).unwrap());
    let ratio = b.nnz() as f64 / full.nnz() as f64;
    assert!((ratio - 0.75).abs() < 0.05, "kept {ratio}");
    // Every kept entry is an entry of the full band, with the same value.
    for r in 0..n {
        let (cols, vals) = b.row(r);
        for (&c, &v) in cols.iter().zip(vals) {
            assert_eq!(get(&full, r, c), Some(v));
        }
    }
    // Gaps come in segments: along each diagonal, few runs (at most one per segment).
    for d in [-3i64, 0, 5] {
        let present: Vec<bool> = (0..n)
            .map(|r| {
                let c = r as i64 + d;
                (0..n as i64).contains(&c) && get(&b, r, c as u32).is_some()
            })
            .collect();
        let runs = present.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(runs <= n / 16 + 2, "offset {d}: {runs} run boundaries");
        assert!(runs > 10);
    }
    assert_eq!(gen::banded_with(&BandedParams { broken: 1.0, ..p.clone() }).unwrap().nnz(), 0);

    // Scattered entries: about scatter · n of them, off the band.
    let s = BandedParams { scatter: 0.05, seed: 9, ..BandedParams::new(n, &[0, 1]) };
    let a = valid(&gen::banded_with(&s).unwrap());
    let band = 2 * n - 1;
    let off = (0..n)
        .map(|r| a.row(r).0.iter().filter(|&&c| c as usize != r && c as usize != r + 1).count())
        .sum::<usize>();
    assert_eq!(a.nnz(), band + off);
    assert!((off as f64 - 0.05 * n as f64).abs() < 0.25 * 0.05 * n as f64, "{off} stray entries");
    // Many strays per row, on a tiny matrix: capped at the free columns.
    let dense = valid(
        &gen::banded_with(&BandedParams { scatter: 50.0, ..BandedParams::new(8, &[0]) }).unwrap(),
    );
    assert_eq!(dense.nnz(), 64);
    let some = valid(
        &gen::banded_with(&BandedParams { scatter: 2.5, ..BandedParams::new(1000, &[-1, 1]) })
            .unwrap(),
    );
    assert!((some.nnz() as f64 - (1998.0 + 2500.0)).abs() < 150.0, "{}", some.nnz());
}

#[test]
fn banded_errors_and_determinism() {
    let p =
        BandedParams { broken: 0.3, scatter: 0.1, seed: 5, ..BandedParams::new(3000, &[-2, 0, 1]) };
    assert_eq!(gen::banded_with(&p).unwrap(), gen::banded_with(&p).unwrap());
    assert_ne!(
        gen::banded_with(&p).unwrap(),
        gen::banded_with(&BandedParams { seed: 6, ..p.clone() }).unwrap()
    );
    assert!(
        gen_err(gen::banded_with(&BandedParams { broken: 1.5, ..p.clone() })).contains("broken")
    );
    assert!(gen_err(gen::banded_with(&BandedParams { broken: f64::NAN, ..p.clone() }))
        .contains("broken"));
    assert!(gen_err(gen::banded_with(&BandedParams { segment: 0, ..p.clone() })).contains("seg"));
    assert!(
        gen_err(gen::banded_with(&BandedParams { scatter: -0.1, ..p.clone() })).contains("scatter")
    );
    assert!(gen_err(gen::banded(1 << 33, &[0], 1)).contains("32-bit"));
}

// ---------------------------------------------------------------- power law, long rows

#[test]
fn power_law_rows() {
    let n = 50_000;
    let a = valid(&gen::power_law(n, 8.0, 2.1, 1).unwrap());
    assert_eq!((a.nrows(), a.ncols()), (n, n));
    let rel = a.mean_row_len() / 8.0 - 1.0;
    assert!(rel.abs() < 0.05, "mean {}", a.mean_row_len());
    assert!(a.max_row_len() > 200, "max {}", a.max_row_len());
    // Heavy tail: the median row is below the mean.
    let mut l = row_lens(&a);
    l.sort_unstable();
    assert!((l[n / 2] as f64) < 8.0);
    assert_eq!(a, gen::power_law(n, 8.0, 2.1, 1).unwrap());
    assert_ne!(a, gen::power_law(n, 8.0, 2.1, 2).unwrap());

    // Exponent below 2: no finite mean, capped rows; the total is still n · mean.
    let b = valid(&gen::power_law(2000, 20.0, 1.3, 4).unwrap());
    assert_eq!(b.max_row_len(), 2000);
    assert!((b.mean_row_len() / 20.0 - 1.0).abs() < 0.05, "mean {}", b.mean_row_len());
    // Large exponent: nearly uniform.
    let c = valid(&gen::power_law(2000, 6.0, 50.0, 4).unwrap());
    assert!(c.max_row_len() <= 8);
    // Mean beyond n: dense.
    assert_eq!(gen::power_law(30, 100.0, 2.0, 1).unwrap().nnz(), 900);
}

#[test]
fn power_law_errors_and_empty() {
    assert_eq!(gen::power_law(0, 8.0, 2.0, 1).unwrap().nrows(), 0);
    assert_eq!(gen::power_law(100, 0.0, 2.0, 1).unwrap().nnz(), 0);
    for bad in [1.0, 0.5, -2.0, f64::NAN, f64::INFINITY] {
        let msg = gen_err(gen::power_law(100, 8.0, bad, 1));
        assert!(msg.contains("exp") && msg.contains("> 1"), "{msg}");
    }
    assert!(gen_err(gen::power_law(100, -1.0, 2.0, 1)).contains("mean"));
}

#[test]
fn long_rows_exact() {
    let a = valid(&gen::long_rows(10_000, 4, 5, 3000, 7).unwrap());
    assert_eq!(a.nnz(), (10_000 - 5) * 4 + 5 * 3000);
    let l = row_lens(&a);
    assert_eq!(l.iter().filter(|&&x| x == 3000).count(), 5);
    assert_eq!(l.iter().filter(|&&x| x == 4).count(), 10_000 - 5);
    assert_ne!(l, row_lens(&gen::long_rows(10_000, 4, 5, 3000, 8).unwrap()));
    assert_eq!(a, gen::long_rows(10_000, 4, 5, 3000, 7).unwrap());
    // Lengths up to n; every row may be long; longer rows than columns are refused.
    let b = valid(&gen::long_rows(50, 50, 50, 50, 1).unwrap());
    assert_eq!(b.nnz(), 2500);
    let msg = gen_err(gen::long_rows(50, 100, 50, 100, 1));
    assert!(msg.contains("short = 100") && msg.contains("n = 50"), "{msg}");
    let msg = gen_err(gen::long_rows(10, 4, 1, 100, 1));
    assert!(msg.contains("long = 100") && msg.contains("n = 10"), "{msg}");
    assert_eq!(gen::long_rows(0, 4, 0, 10, 1).unwrap().nrows(), 0);
    let msg = gen_err(gen::long_rows(10, 4, 11, 5, 1));
    assert!(msg.contains("count") && msg.contains("11"), "{msg}");
}

// ---------------------------------------------------------------- block diagonal

#[test]
fn block_diag_layout() {
    // | 1 . 2 |
    // | . 3 . |
    let a = Csr::new_checked(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
    let b = valid(&gen::block_diag(&a, 3).unwrap());
    let expect = Csr::new_checked(
        6,
        9,
        vec![0, 2, 3, 5, 6, 8, 9],
        vec![0, 2, 1, 3, 5, 4, 6, 8, 7],
        vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
    )
    .unwrap();
    assert_eq!(b, expect);
    assert_eq!(gen::block_diag(&a, 1).unwrap(), a);
    let z = gen::block_diag(&a, 0).unwrap();
    assert_eq!((z.nrows(), z.ncols(), z.nnz()), (0, 0, 0));
    let f = gen::block_diag(&a.cast::<f32>(), 2).unwrap();
    assert_eq!(f.values(), &[1.0f32, 2.0, 3.0, 1.0, 2.0, 3.0]);
    // Big: k copies of a Poisson matrix keep its symmetry.
    let p = gen::poisson2d(5, 4).unwrap();
    let q = valid(&gen::block_diag(&p, 100).unwrap());
    assert_eq!((q.nrows(), q.nnz()), (2000, 100 * p.nnz()));
    assert!(is_symmetric(&q));
    let msg = gen_err(gen::block_diag(&p, 1 << 31));
    assert!(msg.contains("32-bit"), "{msg}");
}

#[test]
fn block_diag_of_file() {
    let a = gen::poisson2d(4, 3).unwrap();
    let path = std::env::temp_dir().join(format!("spmv-gen-test-{}.mtx", std::process::id()));
    spmv::io::write_matrix_market(&path, &a).unwrap();
    let spec = format!("blockdiag:k=3,of=file={}", path.display());
    let b = gen::generate(&spec);
    std::fs::remove_file(&path).ok();
    assert_eq!(b.unwrap(), gen::block_diag(&a, 3).unwrap());
    // A missing file is the reader's error, not a spec error.
    let missing = gen::generate("blockdiag:k=2,of=file=/nonexistent/spmv-gen-test.mtx");
    assert!(matches!(missing, Err(Error::Io { .. })), "{missing:?}");
}

// ---------------------------------------------------------------- specs

#[test]
fn spec_examples_and_defaults() {
    let cases = [
        ("poisson2d:nx=1000", "poisson2d:nx=1000,ny=1000"),
        ("poisson2d:nx=10,ny=3", "poisson2d:nx=10,ny=3"),
        ("poisson2d:n=7", "poisson2d:nx=7,ny=7"),
        ("poisson3d:n=128", "poisson3d:nx=128,ny=128,nz=128,points=7"),
        ("poisson3d:nx=4,ny=5,nz=6,points=27", "poisson3d:nx=4,ny=5,nz=6,points=27"),
        ("poisson3d:n=8,nz=2", "poisson3d:nx=8,ny=8,nz=2,points=7"),
        ("kron:scale=20", "kron:scale=20,ef=16,seed=1,sym=1,perm=1"),
        ("kronecker:scale=5,ef=4,sym=0,perm=false,seed=9", "kron:scale=5,ef=4,seed=9,sym=0,perm=0"),
        ("random:rows=100000,cols=100000,mean=16,seed=1", "random:rows=100000,cols=100000,mean=16,seed=1"),
        ("random:n=50,mean=2.5", "random:rows=50,cols=50,mean=2.5,seed=1"),
        ("random:rows=5", "random:rows=5,cols=5,mean=16,seed=1"),
        (
            "banded:n=1000000,offsets=-2;0;3,broken=0.1,scatter=0.001,seed=1",
            "banded:n=1000000,offsets=-2;0;3,broken=0.1,seg=64,scatter=0.001,seed=1",
        ),
        ("banded:n=10", "banded:n=10,offsets=-1;0;1,broken=0,seg=64,scatter=0,seed=1"),
        ("banded:n=10,offsets=3;-1;3;0", "banded:n=10,offsets=-1;0;3,broken=0,seg=64,scatter=0,seed=1"),
        ("banded:n=10,offsets=", "banded:n=10,offsets=,broken=0,seg=64,scatter=0,seed=1"),
        ("powerlaw:n=1000000,mean=8,exp=2.1,seed=1", "powerlaw:n=1000000,mean=8,exp=2.1,seed=1"),
        ("powerlaw:n=100", "powerlaw:n=100,mean=8,exp=2.1,seed=1"),
        ("longrows:n=100000,short=4,count=5,long=50000,seed=1", "longrows:n=100000,short=4,count=5,long=50000,seed=1"),
        ("longrows:n=1000", "longrows:n=1000,short=4,count=4,long=100,seed=1"),
        ("blockdiag:k=4,of=poisson2d:nx=3", "blockdiag:k=4,of=poisson2d:nx=3,ny=3"),
        ("blockdiag:k=2,of=random:rows=10,mean=3", "blockdiag:k=2,of=random:rows=10,cols=10,mean=3,seed=1"),
        (
            "blockdiag:k=2,of=blockdiag:k=3,of=banded:n=4,offsets=0",
            "blockdiag:k=2,of=blockdiag:k=3,of=banded:n=4,offsets=0,broken=0,seg=64,scatter=0,seed=1",
        ),
        ("blockdiag:k=3,of=file=data/a,b.mtx", "blockdiag:k=3,of=file=data/a,b.mtx"),
        // Whitespace, case, separators, scientific notation.
        (" Poisson2D : NX = 1_000 , ny=2e3 ", "poisson2d:nx=1000,ny=2000"),
        ("random:rows=10,,mean=1,", "random:rows=10,cols=10,mean=1,seed=1"),
    ];
    for (input, canonical) in cases {
        let spec = gen::parse_spec(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(spec.to_string(), canonical, "display of {input}");
        assert_eq!(gen::parse_spec(canonical).unwrap(), spec, "round trip of {input}");
        let parsed: GenSpec = canonical.parse().unwrap();
        assert_eq!(parsed, spec);
    }
    match gen::parse_spec("blockdiag:k=3,of=file=data/a,b.mtx").unwrap() {
        GenSpec::BlockDiag { k: 3, of } => {
            assert_eq!(*of, BlockSource::File("data/a,b.mtx".into()))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        gen::parse_spec("kron:scale=7").unwrap(),
        GenSpec::Kronecker(KroneckerParams::new(7))
    );
    assert_eq!(gen::parse_spec("poisson3d:n=3,points=27").unwrap().family(), "poisson3d");
}

#[test]
fn spec_generate_matches_functions() {
    assert_eq!(gen::generate("poisson2d:nx=3").unwrap(), gen::poisson2d(3, 3).unwrap());
    assert_eq!(
        gen::generate("poisson3d:n=4,points=27").unwrap(),
        gen::poisson3d(4, 4, 4, 27).unwrap()
    );
    assert_eq!(
        gen::generate("kron:scale=8,ef=4,seed=3").unwrap(),
        gen::kronecker(8, 4, 3).unwrap()
    );
    assert_eq!(
        gen::generate("random:rows=300,cols=200,mean=5,seed=2").unwrap(),
        gen::random_uniform(300, 200, 5.0, 2).unwrap()
    );
    assert_eq!(
        gen::generate("banded:n=300,offsets=-1;2,seed=4").unwrap(),
        gen::banded(300, &[-1, 2], 4).unwrap()
    );
    assert_eq!(
        gen::generate("powerlaw:n=300,mean=4,exp=2.5,seed=3").unwrap(),
        gen::power_law(300, 4.0, 2.5, 3).unwrap()
    );
    assert_eq!(
        gen::generate("longrows:n=300,short=3,count=2,long=100,seed=3").unwrap(),
        gen::long_rows(300, 3, 2, 100, 3).unwrap()
    );
    assert_eq!(
        gen::generate("blockdiag:k=3,of=poisson2d:nx=4,ny=2").unwrap(),
        gen::block_diag(&gen::poisson2d(4, 2).unwrap(), 3).unwrap()
    );
}

#[test]
fn spec_errors() {
    let families =
        "families: poisson2d, poisson3d, kron, random, banded, powerlaw, longrows, blockdiag";
    assert!(parse_err("").contains(families));
    assert!(parse_err("   ").contains("empty"));
    let msg = parse_err("poisson4d:n=3");
    assert!(
        msg.contains("unknown generator family 'poisson4d'") && msg.contains(families),
        "{msg}"
    );

    let msg = parse_err("poisson2d:nx=3,nz=4");
    assert!(
        msg.contains("poisson2d")
            && msg.contains("unknown key 'nz'")
            && msg.contains("valid keys: nx, ny, n"),
        "{msg}"
    );
    let msg = parse_err("poisson2d");
    assert!(
        msg.contains("poisson2d: missing required key nx (or n)") && msg.contains("valid keys"),
        "{msg}"
    );
    let msg = parse_err("poisson2d:ny=3");
    assert!(msg.contains("missing required key nx"), "{msg}");
    let msg = parse_err("poisson3d:n=abc");
    assert!(
        msg.contains("poisson3d: key 'n' expects a non-negative integer, got 'abc'")
            && msg.contains("valid keys: nx, ny, nz, n, points"),
        "{msg}"
    );
    let msg = parse_err("poisson2d:nx");
    assert!(msg.contains("expected key=value, got 'nx'") && msg.contains("valid keys"), "{msg}");
    for (spec, want) in [
        ("poisson3d:n=-3", "key 'n'"),
        ("poisson3d:n=2.5", "key 'n'"),
        ("poisson3d:n=1e3.5", "key 'n'"),
        ("poisson3d:n=", "key 'n'"),
        ("poisson3d:n=3,points=9", "points must be 7 or 27"),
        ("poisson3d:n=3,points=99999999999", "key 'points'"),
        ("poisson2d:nx=3,nx=4", "key 'nx' given twice"),
        ("poisson2d:nx=100000,ny=100000", "32-bit"),
        ("kron:ef=16", "kron: missing required key scale"),
        ("kron:scale=20,sym=maybe", "key 'sym' expects 0 or 1"),
        ("kron:scale=40", "scale"),
        ("kron:scale=20,seed=-1", "key 'seed'"),
        ("kron:scale=20,a=0.5", "unknown key 'a' (valid keys: scale, ef, seed, sym, perm)"),
        ("random:mean=3", "random: missing required key rows (or n)"),
        ("random:rows=10,mean=x", "key 'mean' expects a finite number, got 'x'"),
        ("random:rows=10,mean=inf", "key 'mean'"),
        ("random:rows=10,mean=-2", "mean row length"),
        ("banded:offsets=0", "banded: missing required key n"),
        ("banded:n=10,offsets=1;x", "key 'offsets' expects integers separated by ';'"),
        ("banded:n=10,offsets=1,2", "expected key=value, got '2'"),
        ("banded:n=10,broken=2", "broken"),
        ("banded:n=10,seg=0", "seg"),
        ("banded:n=10,scatter=-1", "scatter"),
        ("powerlaw:mean=3", "powerlaw: missing required key n"),
        ("powerlaw:n=10,exp=1", "exp"),
        ("powerlaw:n=10,exp=0.5", "> 1"),
        ("longrows:short=3", "longrows: missing required key n"),
        ("longrows:n=10,count=11", "count"),
        ("blockdiag:of=poisson2d:nx=3", "blockdiag: missing required key k"),
        ("blockdiag:k=3", "blockdiag: missing required key of"),
        ("blockdiag:k=3,of=file=", "needs a path"),
        // The inner spec's errors come through; keys after of= belong to the inner spec.
        ("blockdiag:k=3,of=poisson2d:nx=3,k=4", "poisson2d: unknown key 'k'"),
        ("blockdiag:k=3,of=nope:x=1", "unknown generator family 'nope'"),
        ("blockdiag:k=x,of=poisson2d:nx=3", "key 'k'"),
        // The application-like families.
        ("fem:n=3,dim=4", "dim must be 2 or 3"),
        ("fem:n=3,order=0", "order must be 1, 2, 3 or 4"),
        ("fem:n=3,dofs=9", "dofs (unknowns per node) must be 1 to 8"),
        ("fem:n=3,drop=1", "drop must be a fraction in [0, 1)"),
        ("fem:n=3,numbering=hilbert", "expects natural, morton or random"),
        ("fem:n=100000", "too large for 32-bit indices"),
        ("fem:dim=2", "missing required key n"),
        ("road:n=10,keep=1.5", "keep must be a probability"),
        ("road:n=70000", "too large for 32-bit indices"),
        ("circuit:n=10,window=0", "window must be at least 1"),
        ("circuit:n=10,nets=11", "do not fit in n = 10"),
        ("circuit:n=10,netlen=11", "exceed the n = 10 columns"),
        ("circuit:n=10,netp=2", "netp must be a probability"),
        ("lp:rows=10,stages=0", "stages must be at least 1"),
        ("lp:rows=10,mean=0.5", "mean must be a finite number >= 1"),
        ("lp:rows=10,dense=11", "do not fit in rows = 10"),
        ("lp:rows=10,cols=5,denselen=6", "exceed the cols = 5 columns"),
        ("fem:n=5000,dim=2,order=4,dofs=8", "entries"),
    ] {
        let msg = parse_err(spec);
        assert!(msg.contains(want), "{spec}: expected '{want}' in '{msg}'");
    }
    // Every error is Error::Generator, displayed with its prefix.
    let e = gen::generate("poisson2d").unwrap_err();
    assert!(matches!(e, Error::Generator(_)));
    assert!(e.to_string().starts_with("generator: poisson2d:"));
}

#[test]
fn golden_fingerprints() {
    // These pin the generated matrices forever: a change here changes every benchmark
    // matrix with that spec. Only update them on purpose (and say so).
    let golden = [
        ("poisson3d:n=5,points=27", 0xb5e6_69db_ec39_aa80u64),
        ("kron:scale=8,ef=8,seed=1", 0x07af_8b26_a050_4192),
        ("random:rows=64,cols=48,mean=5,seed=3", 0x0a73_80b8_740f_e3ba),
        (
            "banded:n=500,offsets=-9;0;1;40,broken=0.2,seg=8,scatter=0.05,seed=2",
            0xc835_dc95_f9a4_c811,
        ),
        ("powerlaw:n=400,mean=6,exp=1.8,seed=4", 0x3185_59fc_73c9_b3d8),
        ("longrows:n=300,short=3,count=3,long=120,seed=5", 0xfba6_5cbb_da10_d413),
        ("fem:n=3,order=2,dofs=2,numbering=random,drop=0.2,seed=6", 0xcc4f_2cee_4a97_238c),
        ("road:n=40,keep=0.6,numbering=morton,seed=7", 0xcf6b_6cd5_bf9b_7a3a),
        ("circuit:n=500,local=2,window=30,nets=3,netlen=60,netp=0.1,seed=8", 0xcd5d_4c31_0f98_1327),
        ("lp:rows=300,cols=700,stages=5,mean=4,dense=2,denselen=90,seed=9", 0xae69_0200_c262_caa4),
    ];
    let got: Vec<(String, u64)> = golden
        .iter()
        .map(|(s, _)| (s.to_string(), fingerprint(&gen::generate(s).unwrap())))
        .collect();
    for ((spec, want), (_, have)) in golden.iter().zip(&got) {
        assert_eq!(*want, *have, "fingerprint of {spec} changed: {got:#x?}");
    }
}

// ---------------------------------------------------------------- application-like families

/// Row lengths sorted: what a renumbering of the nodes keeps.
fn sorted_lens(a: &Csr<f64>) -> Vec<usize> {
    let mut l = row_lens(a);
    l.sort_unstable();
    l
}

#[test]
fn fem_couples_the_nodes_of_each_element() {
    // 3 × 3 bilinear squares: a 4 × 4 grid of nodes; corners couple with 4 nodes, edge
    // nodes with 6, inner nodes with 9.
    let a = valid(&gen::generate("fem:n=3,dim=2").unwrap());
    assert_eq!((a.nrows(), a.nnz()), (16, 4 * 4 + 8 * 6 + 4 * 9));
    assert_eq!(row_lens(&a)[..4], [4, 6, 6, 4]);
    assert_eq!(a.row_len(5), 9);
    assert!(is_symmetric(&a));
    // Strictly diagonally dominant, off-diagonals negative: positive definite.
    for r in 0..a.nrows() {
        let (cols, vals) = a.row(r);
        let off: f64 =
            cols.iter().zip(vals).filter(|(&c, _)| c as usize != r).map(|(_, v)| -v).sum();
        assert!(cols.iter().zip(vals).all(|(&c, &v)| c as usize == r || v < 0.0));
        assert_eq!(get(&a, r, r as u32), Some(1.0 + off));
    }
    // Quadratic hexahedra with 3 unknowns: a vertex node inside couples with 5³ nodes, each a
    // 3 × 3 block; an element's interior node with 3³.
    let b = valid(&gen::generate("fem:n=3,order=2,dofs=3").unwrap());
    assert_eq!(b.nrows(), 7 * 7 * 7 * 3);
    let vertex = (2 + 7 * (2 + 7 * 2)) * 3;
    let interior = (1 + 7 * (1 + 7)) * 3; // node (1, 1, 1)
    assert_eq!((b.row_len(vertex), b.row_len(interior + 2)), (125 * 3, 27 * 3));
    assert!(is_symmetric(&b));
}

#[test]
fn fem_and_road_numberings_relabel_the_same_graph() {
    for family in ["fem:n=5,order=2,dofs=2,drop=0.3", "road:n=30,keep=0.6"] {
        let natural = valid(&gen::generate(&format!("{family},numbering=natural")).unwrap());
        for numbering in ["morton", "random"] {
            let other = valid(&gen::generate(&format!("{family},numbering={numbering}")).unwrap());
            assert_eq!((other.nrows(), other.nnz()), (natural.nrows(), natural.nnz()), "{family}");
            assert_eq!(sorted_lens(&other), sorted_lens(&natural), "{family} {numbering}");
            assert!(is_symmetric(&other), "{family} {numbering}");
            assert_ne!(other.col_idx(), natural.col_idx(), "{family} {numbering}");
        }
    }
    // Dropping elements shortens rows but every row keeps its diagonal.
    let full = gen::generate("fem:n=6,dim=2").unwrap();
    let holes = valid(&gen::generate("fem:n=6,dim=2,drop=0.4").unwrap());
    assert!(holes.nnz() < full.nnz());
    assert!((0..holes.nrows()).all(|r| get(&holes, r, r as u32).is_some()));
}

#[test]
fn road_is_a_planar_street_grid() {
    let a = valid(&gen::generate("road:n=200").unwrap());
    assert_eq!(a.nrows(), 40_000);
    assert!(is_symmetric(&a));
    assert!(row_lens(&a).iter().all(|&l| l <= 4));
    assert!((0..a.nrows()).all(|r| get(&a, r, r as u32).is_none()));
    assert!(a.values().iter().all(|&v| v == 1.0));
    let mean = a.nnz() as f64 / a.nrows() as f64;
    assert!((mean - 2.8).abs() < 0.05, "mean degree {mean}");
    let none = gen::generate("road:n=50,keep=0").unwrap();
    let all = gen::generate("road:n=50,keep=1,numbering=natural").unwrap();
    assert_eq!((none.nnz(), all.nnz()), (0, 4 * 50 * 49));
}

#[test]
fn circuit_has_local_links_and_dense_nets() {
    let a = valid(&gen::generate("circuit:n=20000,local=3,window=50,nets=4,netlen=2000").unwrap());
    let lens = row_lens(&a);
    assert_eq!(lens.iter().filter(|&&l| l >= 2000).count(), 4);
    for (r, &len) in lens.iter().enumerate() {
        let (cols, vals) = a.row(r);
        let d = cols.binary_search(&(r as u32)).expect("diagonal");
        let off: f64 = vals.iter().enumerate().filter(|&(i, _)| i != d).map(|(_, v)| v.abs()).sum();
        assert!(vals[d] > off, "row {r} not diagonally dominant");
        if len < 2000 {
            // Local links within the window, at most one net column outside it.
            let far = cols.iter().filter(|&&c| (c as i64 - r as i64).abs() > 50).count();
            assert!(far <= 1, "row {r}: {far} columns outside the window");
        }
    }
    let mean = a.nnz() as f64 / a.nrows() as f64;
    assert!((4.0..4.6).contains(&mean), "mean row length {mean}");
}

#[test]
fn lp_is_a_rectangular_staircase_with_linking_rows() {
    let a =
        valid(&gen::generate("lp:rows=10000,cols=25000,stages=10,dense=5,denselen=5000").unwrap());
    assert_eq!((a.nrows(), a.ncols()), (10_000, 25_000));
    let lens = row_lens(&a);
    assert_eq!(lens.iter().filter(|&&l| l == 5000).count(), 5);
    for r in (0..a.nrows()).filter(|&r| lens[r] != 5000) {
        // Stage s = r / 1000 reaches the columns of stages s and s + 1 (2500 each).
        let s = r / 1000;
        let (cols, _) = a.row(r);
        assert!(!cols.is_empty());
        assert!(cols.iter().all(|&c| (s * 2500..(s + 2).min(10) * 2500).contains(&(c as usize))));
    }
    let ordinary: Vec<usize> = lens.iter().copied().filter(|&l| l != 5000).collect();
    let mean = ordinary.iter().sum::<usize>() as f64 / ordinary.len() as f64;
    assert!((5.0..7.0).contains(&mean), "mean {mean}");
    assert!(*ordinary.iter().max().unwrap() > 30, "heavy tail");
}

// ---------------------------------------------------------------- property tests

fn numbering() -> impl Strategy<Value = Numbering> {
    prop_oneof![Just(Numbering::Natural), Just(Numbering::Morton), Just(Numbering::Random)]
}

fn small_spec() -> impl Strategy<Value = GenSpec> {
    let leaf = prop_oneof![
        (0usize..12, 0usize..12).prop_map(|(nx, ny)| GenSpec::Poisson2d { nx, ny }),
        (0usize..6, 0usize..6, 0usize..6, prop::bool::ANY).prop_map(|(nx, ny, nz, p)| {
            GenSpec::Poisson3d { nx, ny, nz, points: if p { 27 } else { 7 } }
        }),
        (0u32..9, 0usize..9, any::<u64>(), prop::bool::ANY, prop::bool::ANY).prop_map(
            |(scale, edge_factor, seed, symmetric, permute)| {
                GenSpec::Kronecker(KroneckerParams { scale, edge_factor, seed, symmetric, permute })
            }
        ),
        (0usize..60, 0usize..60, 0.0f64..30.0, any::<u64>())
            .prop_map(|(rows, cols, mean, seed)| GenSpec::Random { rows, cols, mean, seed }),
        (
            0usize..80,
            prop::collection::vec(-90i64..90, 0..6),
            0.0f64..=1.0,
            1usize..20,
            0.0f64..4.0,
            any::<u64>()
        )
            .prop_map(|(n, mut offsets, broken, segment, scatter, seed)| {
                offsets.retain(|d| n == 0 || d.unsigned_abs() < n as u64); // inside the matrix
                offsets.sort_unstable();
                offsets.dedup();
                GenSpec::Banded(BandedParams { n, offsets, broken, segment, scatter, seed })
            }),
        (0usize..80, 0.0f64..100.0, 1.01f64..6.0, any::<u64>())
            .prop_map(|(n, mean, exponent, seed)| GenSpec::PowerLaw { n, mean, exponent, seed }),
        (0usize..80, 0usize..100, 0usize..80, 0usize..100, any::<u64>()).prop_map(
            |(n, short, count, long, seed)| GenSpec::LongRows {
                n,
                short: short.min(n),
                count: count.min(n),
                long: long.min(n),
                seed
            }
        ),
        (0usize..3, prop::bool::ANY, 1u32..=2, 1usize..=2, numbering(), 0.0f64..0.9, any::<u64>())
            .prop_map(|(n, flat, order, dofs, numbering, drop, seed)| {
                let dim = if flat { 2 } else { 3 };
                GenSpec::Fem(FemParams { n, dim, order, dofs, numbering, drop, seed })
            }),
        (0usize..20, 0.0f64..=1.0, numbering(), any::<u64>()).prop_map(
            |(n, keep, numbering, seed)| GenSpec::Road(RoadParams { n, keep, numbering, seed })
        ),
        (0usize..80, 0.0f64..5.0, 1usize..20, 0usize..80, 0usize..80, 0.0f64..=1.0, any::<u64>())
            .prop_map(|(n, local, window, nets, net_len, net_share, seed)| {
                let (nets, net_len) = (nets.min(n), net_len.min(n));
                GenSpec::Circuit(CircuitParams { n, local, window, nets, net_len, net_share, seed })
            }),
        (0usize..60, 0usize..80, 1usize..10, 1.0f64..8.0, 0usize..60, 0usize..80, any::<u64>())
            .prop_map(|(rows, cols, stages, mean, dense, dense_len, seed)| {
                let (dense, dense_len) = (dense.min(rows), dense_len.min(cols));
                GenSpec::Lp(LpParams { rows, cols, stages, mean, dense, dense_len, seed })
            }),
    ];
    leaf.prop_recursive(2, 8, 1, |inner| {
        (0usize..4, inner)
            .prop_map(|(k, s)| GenSpec::BlockDiag { k, of: Box::new(BlockSource::Spec(s)) })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_specs_round_trip_and_give_valid_csr(spec in small_spec()) {
        let text = spec.to_string();
        let parsed = gen::parse_spec(&text).unwrap();
        prop_assert_eq!(&parsed, &spec, "{}", text);
        prop_assert_eq!(parsed.to_string(), text.clone());
        let a = spec.generate().unwrap();
        valid(&a);
        prop_assert_eq!(a, gen::generate(&text).unwrap());
    }
}

// ---------------------------------------------------------------- sizes (run by hand)

/// `cargo test -p spmv --release --test suite -- gen:: --ignored --nocapture`: build times of the
/// large matrices the benchmarks use.
#[test]
#[ignore]
fn timing_large() {
    for spec in [
        "poisson3d:nx=128,ny=128,nz=128,points=27",
        "poisson3d:n=126,points=7",
        "kron:scale=20",
        "kron:scale=20,sym=0,perm=0",
        "random:rows=2000000,mean=16",
        "banded:n=2000000,offsets=-1000;-1;0;1;1000,broken=0.1,scatter=0.001",
        "powerlaw:n=1000000,mean=8,exp=2.1",
        "powerlaw:n=1000000,mean=8,exp=1.5",
        "longrows:n=1000000,short=4,count=5,long=500000",
        "blockdiag:k=16,of=poisson3d:n=50,points=27",
    ] {
        let t = std::time::Instant::now();
        let a = gen::generate(spec).unwrap();
        let dt = t.elapsed();
        let mut lens = row_lens(&a);
        lens.sort_unstable();
        println!(
            "{spec:60} {:>9} rows {:>11} nnz, row length median {:>3} max {:>8}  {:.2} s",
            a.nrows(),
            a.nnz(),
            lens.get(lens.len() / 2).copied().unwrap_or(0),
            a.max_row_len(),
            dt.as_secs_f64()
        );
    }
}

// ---------------------------------------------------------------- hostile specs

/// `blockdiag:k=1,of=` nested `depth` times around `poisson2d:n=2`.
fn nested(depth: usize) -> String {
    "blockdiag:k=1,of=".repeat(depth) + "poisson2d:n=2"
}

#[test]
fn nesting_of_blockdiag_specs_is_limited_not_a_stack_overflow() {
    // 20,000 levels overflowed the stack (SIGSEGV, in Python too); run on a small stack.
    let deep = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| gen::parse_spec(&nested(20_000)).map(|_| ()))
        .unwrap()
        .join()
        .expect("parsing a deep spec crashed its thread");
    let msg = gen_err(deep);
    assert!(msg.contains(&format!("nested more than {} levels", gen::MAX_NESTING)), "{msg}");
    // The limit itself is fine, one more is not.
    let a = gen::generate(&nested(gen::MAX_NESTING)).unwrap();
    assert_eq!(a, gen::poisson2d(2, 2).unwrap());
    assert!(gen::parse_spec(&nested(gen::MAX_NESTING + 1)).is_err());
}

#[test]
fn inputs_that_are_specs_are_taken_as_specs_and_keep_their_error() {
    use spmv::io::inputs::{resolve, Input};
    // A spec naming a file with a path: a spec, not a missing path.
    let path = std::env::temp_dir().join(format!("spmv-gen-input-{}.mtx", std::process::id()));
    spmv::io::write_matrix_market(&path, &gen::poisson2d(3, 3).unwrap()).unwrap();
    let spec = format!("blockdiag:k=2,of=file={}", path.display());
    let inputs = resolve(std::slice::from_ref(&spec)).unwrap();
    assert_eq!(inputs, vec![Input::Spec(spec.clone())]);
    assert_eq!(inputs[0].load().unwrap().nrows(), 18);
    std::fs::remove_file(&path).ok();
    // A spec that parses but is refused (too large, a bad key) gives that reason alone.
    for (spec, reason) in [
        ("poisson3d:n=100000", "too large for 32-bit indices"),
        ("random:rows=4294967297,mean=0", "too large for 32-bit indices"),
        ("poisson2d:n=4,bogus=1", "unknown key 'bogus'"),
        ("blockdiag:k=2,of=file=/nonexistent/x.mtx.gz", "No such file"),
    ] {
        let e = resolve(&[spec.to_string()]).and_then(|i| i[0].load().map(|_| ())).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(reason), "{spec}: {text}");
        assert!(!text.contains("neither a file"), "{spec}: {text}");
    }
    // Neither a spec nor a path: said so.
    let e = resolve(&["nonsense".to_string()]).unwrap_err().to_string();
    assert!(e.contains("neither a file, a folder nor a generator spec"), "{e}");
}

#[test]
fn the_memory_estimate_counts_the_rows_not_only_the_entries() {
    // 2^32 rows and no entries take 68.7 GB of row pointers and row lengths: where the host
    // has less, the spec is refused with that estimate (it was taken for 0 bytes, and the
    // allocation aborted).
    let specs = [
        "random:rows=4294967296,mean=0",
        "longrows:n=4294967296,short=0,count=0,long=0",
        "banded:n=4294967296,offsets=",
        "blockdiag:k=4294967296,of=random:rows=1,mean=0",
        "powerlaw:n=4294967296,mean=0",
    ];
    let available = spmv::error::available_memory().unwrap_or(u64::MAX);
    if available > 100_000_000_000 {
        eprintln!("note: {available} bytes available, more than the specs need; not checked");
        return;
    }
    for spec in specs {
        let e = gen::parse_spec(spec).and_then(|s| s.generate().map(|_| ())).unwrap_err();
        match e {
            Error::OutOfMemory { what, needed, .. } => {
                assert!(what.contains("4294967296 rows"), "{spec}: {what}");
                assert!(needed >= 16 << 32, "{spec}: {needed}");
            }
            other => panic!("{spec}: expected out of memory, got {other:?}"),
        }
    }
}

#[test]
fn every_family_has_an_example_that_parses() {
    use spmv::io::gen::{parse_spec, EXAMPLES, FAMILIES};
    let families: Vec<&str> = EXAMPLES.iter().map(|(family, _, _)| *family).collect();
    assert_eq!(families, FAMILIES);
    for (family, example, _) in EXAMPLES {
        let spec = parse_spec(example).unwrap_or_else(|e| panic!("{example}: {e}"));
        assert_eq!(spec.family(), family, "{example}");
    }
}
