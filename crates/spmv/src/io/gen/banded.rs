//! Diagonal-heavy matrices: full diagonals, broken diagonals, scattered points.

use super::build::{build_rows, check_dim, check_size, err};
use super::rng::{entry_value, hash3, unit_from, Rng};
use crate::{Csr, Result};

const TAG_SEGMENT: u64 = 0x6272_6F6B_656E; // "broken"
const TAG_SCATTER: u64 = 0x0073_6361_7474_6572; // "scatter"

/// Parameters of [`banded_with`]. Start from [`BandedParams::new`] and set what differs.
#[derive(Clone, Debug, PartialEq)]
pub struct BandedParams {
    /// Rows and columns (the matrix is square).
    pub n: usize,
    /// Diagonal offsets: 0 is the main diagonal, `d > 0` the entries `(r, r + d)` above it,
    /// `d < 0` below. Repeats are ignored; offsets with `|d| ≥ n` give no entries.
    pub offsets: Vec<i64>,
    /// Probability that a segment of a diagonal is missing (0 = full diagonals).
    pub broken: f64,
    /// Length of the segments diagonals are cut into (≥ 1; default 64). Each diagonal's
    /// segments start at a random phase, so gaps of different diagonals do not line up.
    pub segment: usize,
    /// Expected number of extra entries per row at uniformly random columns (distinct
    /// from the diagonals' entries): `0.001` is about one stray entry per 1000 rows.
    pub scatter: f64,
    /// Seed of the gaps, the scattered entries and all values.
    pub seed: u64,
}

impl BandedParams {
    /// Full diagonals at `offsets`, no gaps, no scattered entries, seed 1.
    pub fn new(n: usize, offsets: &[i64]) -> Self {
        BandedParams {
            n,
            offsets: offsets.to_vec(),
            broken: 0.0,
            segment: 64,
            scatter: 0.0,
            seed: 1,
        }
    }

    pub(crate) fn check(&self) -> Result<()> {
        const F: &str = "banded";
        check_dim(F, "n", self.n as u64)?;
        if !(0.0..=1.0).contains(&self.broken) {
            return err(format!(
                "{F}: broken must be a probability in [0, 1], got {}",
                self.broken
            ));
        }
        if self.segment == 0 {
            return err(format!("{F}: seg (segment length) must be at least 1"));
        }
        if !(self.scatter.is_finite() && self.scatter >= 0.0) {
            return err(format!(
                "{F}: scatter must be a finite number >= 0 (entries per row), got {}",
                self.scatter
            ));
        }
        // A diagonal that misses the matrix would be dropped silently: refuse it (an empty
        // matrix has no diagonals to miss).
        if let Some(&d) =
            self.offsets.iter().find(|&&d| self.n > 0 && d.unsigned_abs() >= self.n as u64)
        {
            return err(format!(
                "{F}: offset {d} lies outside the n = {} matrix (offsets must be within ±{})",
                self.n,
                self.n - 1
            ));
        }
        let per_row = self.offsets.len() as f64 + self.scatter;
        check_size(F, self.n as u64, self.n as f64 * per_row.min(self.n as f64), 0.0)
    }
}

/// Full diagonals of an `n × n` matrix at the given offsets, values uniform in (-1, 1)
/// from `seed`. Same as [`banded_with`] with no gaps and no scattered entries.
pub fn banded(n: usize, offsets: &[i64], seed: u64) -> Result<Csr<f64>> {
    banded_with(&BandedParams { seed, ..BandedParams::new(n, offsets) })
}

/// Diagonals with gaps and stray entries: see [`BandedParams`]. Aimed at DIA-like formats
/// (DIA, HDIA, DRM...): mostly diagonal structure, with imperfections that cost padding
/// (gaps) or force a fallback (scattered points).
pub fn banded_with(p: &BandedParams) -> Result<Csr<f64>> {
    p.check()?;
    let n = p.n;
    let (seed, seg, broken) = (p.seed, p.segment as u64, p.broken);
    let mut offsets: Vec<i64> =
        p.offsets.iter().copied().filter(|d| d.unsigned_abs() < n as u64).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let phases: Vec<u64> =
        offsets.iter().map(|&d| hash3(seed, TAG_SEGMENT, d as u64) % seg).collect();
    let (offsets, phases) = (&offsets, &phases);
    let whole = p.scatter.floor() as usize;
    let frac = p.scatter - p.scatter.floor();

    // Column of diagonal `i` in row `r` when present (in bounds and not in a gap).
    let band_col = move |r: usize, i: usize| -> Option<u32> {
        let c = r as i64 + offsets[i];
        if c < 0 || c >= n as i64 {
            return None;
        }
        if broken > 0.0 {
            let pos = (r as u64).min(c as u64); // index along the diagonal
            let segment = (pos + phases[i]) / seg;
            let h = hash3(seed ^ TAG_SEGMENT, offsets[i] as u64, segment);
            if unit_from(h) < broken {
                return None;
            }
        }
        Some(c as u32)
    };
    let band_len = move |r: usize| (0..offsets.len()).filter(|&i| band_col(r, i).is_some()).count();
    // Stray entries of row r: the first draw of the row's stream decides their number.
    let extras = move |rng: &mut Rng, band: usize| {
        let k = whole + (frac > 0.0 && rng.unit() < frac) as usize;
        k.min(n - band)
    };
    let scattered = whole > 0 || frac > 0.0;
    let len = move |r: usize| {
        let band = band_len(r);
        if !scattered {
            return band;
        }
        band + extras(&mut Rng::stream(seed, TAG_SCATTER, r as u64), band)
    };
    let fill = move |r: usize, scratch: &mut Vec<u32>, cols: &mut [u32], vals: &mut [f64]| {
        // The band's columns come out sorted (offsets are sorted); stray ones are drawn
        // with replacement avoiding the band, sorted, deduplicated and topped up.
        scratch.clear();
        scratch.extend((0..offsets.len()).filter_map(|i| band_col(r, i)));
        let band = scratch.len();
        if scattered {
            let mut rng = Rng::stream(seed, TAG_SCATTER, r as u64);
            let k = extras(&mut rng, band);
            let mut picked: Vec<u32> = Vec::with_capacity(k);
            while picked.len() < k {
                let mut need = k - picked.len();
                while need > 0 {
                    let c = rng.below(n as u64) as u32;
                    if scratch.binary_search(&c).is_err() {
                        picked.push(c);
                        need -= 1;
                    }
                }
                picked.sort_unstable();
                picked.dedup();
            }
            scratch.extend_from_slice(&picked);
            scratch.sort_unstable();
        }
        for (p, &c) in scratch.iter().enumerate() {
            cols[p] = c;
            vals[p] = entry_value(seed, r, c);
        }
    };
    Ok(build_rows(n, n, len, fill))
}
