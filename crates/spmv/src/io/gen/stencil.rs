//! Finite-difference Poisson matrices on regular grids, natural (x fastest) ordering.

use super::build::{build_rows, check_dim, check_size, err};
use crate::{Csr, Result};

/// The 5-point Laplacian on an `nx × ny` grid: 4 on the diagonal, -1 for each of the (up
/// to) 4 neighbours. Grid point `(i, j)` is row `i + nx·j`. Symmetric, `nx·ny` rows, each
/// with at most 5 entries on 5 diagonals (offsets 0, ±1, ±nx).
pub fn poisson2d(nx: usize, ny: usize) -> Result<Csr<f64>> {
    check_grid("poisson2d", &[nx, ny], 5)?;
    Ok(stencil([nx, ny, 1], false, 4.0))
}

/// The 7-point (`points = 7`: 6 on the diagonal, -1 for each of the 6 face neighbours) or
/// 27-point (`points = 27`: 26 on the diagonal, -1 for each of the 26 neighbours) Laplacian
/// on an `nx × ny × nz` grid. Point `(i, j, k)` is row `i + nx·(j + ny·k)`. Symmetric.
pub fn poisson3d(nx: usize, ny: usize, nz: usize, points: u32) -> Result<Csr<f64>> {
    check_points(points)?;
    check_grid("poisson3d", &[nx, ny, nz], points as u64)?;
    let (full, diag) = if points == 27 { (true, 26.0) } else { (false, 6.0) };
    Ok(stencil([nx, ny, nz], full, diag))
}

pub(crate) fn check_points(points: u32) -> Result<()> {
    match points {
        7 | 27 => Ok(()),
        _ => err(format!("poisson3d: points must be 7 or 27, got {points}")),
    }
}

pub(crate) fn check_grid(family: &str, dims: &[usize], points: u64) -> Result<()> {
    let n = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    let text = dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" x ");
    match n {
        None => err(format!("{family}: grid {text} is too large for 32-bit indices")),
        Some(n) => {
            check_dim(family, &format!("grid {text} (rows)"), n)?;
            check_size(family, n, n as f64 * points as f64, 0.0)
        }
    }
}

/// Neighbour count of a grid point along one dimension of size `n` (itself included).
#[inline]
fn span(i: usize, n: usize) -> usize {
    1 + (i > 0) as usize + (i + 1 < n) as usize
}

/// The generic stencil: `full` = all 3^d neighbours (27-point), else face neighbours only.
fn stencil(dims: [usize; 3], full: bool, diag: f64) -> Csr<f64> {
    let [nx, ny, nz] = dims;
    let n = nx * ny * nz;
    let coords = move |r: usize| (r % nx, (r / nx) % ny, r / (nx * ny));
    let len = move |r: usize| {
        let (i, j, k) = coords(r);
        let (a, b, c) = (span(i, nx), span(j, ny), span(k, nz));
        if full {
            a * b * c
        } else {
            a + b + c - 2
        }
    };
    let fill = move |r: usize, _: &mut Vec<u32>, cols: &mut [u32], vals: &mut [f64]| {
        let (i, j, k) = coords(r);
        let mut p = 0;
        for dk in -1i64..=1 {
            let kk = k as i64 + dk;
            if kk < 0 || kk >= nz as i64 {
                continue;
            }
            for dj in -1i64..=1 {
                let jj = j as i64 + dj;
                if jj < 0 || jj >= ny as i64 {
                    continue;
                }
                for di in -1i64..=1 {
                    let ii = i as i64 + di;
                    if ii < 0 || ii >= nx as i64 {
                        continue;
                    }
                    let dist = di.abs() + dj.abs() + dk.abs();
                    if !full && dist > 1 {
                        continue;
                    }
                    cols[p] = (ii as usize + nx * (jj as usize + ny * kk as usize)) as u32;
                    vals[p] = if dist == 0 { diag } else { -1.0 };
                    p += 1;
                }
            }
        }
        debug_assert_eq!(p, cols.len());
    };
    build_rows(n, n, len, fill)
}
