//! A matrix's picture: its sparsity pattern, shaded by the entries each pixel holds when the
//! matrix is larger than the picture, beside the histogram of its row lengths (what `auto`
//! looks at first).

use plotters::prelude::*;

use super::canvas;
use crate::error::Result;
use crate::matrix::{Csr, Scalar};

/// Most cells along a side of the pattern: one cell a pixel or more.
const CELLS: usize = 400;
/// Shades of the pattern, lightest to darkest (a cell's entries on a log scale).
const SHADES: usize = 8;

/// The picture of `a`, titled `name`, as SVG.
pub fn spy_svg<T: Scalar>(name: &str, a: &Csr<T>) -> Result<String> {
    let (m, n) = (a.nrows(), a.ncols());
    let grid = Grid::of(m, n);
    let counts = grid.count(a);
    let most = counts.iter().copied().max().unwrap_or(0);
    let histogram = RowHistogram::of(a);
    canvas::svg((1000, 540), |root, overlay| {
        let (left, right) = root.split_horizontally(540);
        let title = format!("{}: {m} × {n}, {} entries", name, a.nnz());
        let mut chart = ChartBuilder::on(&left)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..n.max(1) as f64, m.max(1) as f64..0f64)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .y_desc("row")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        // The cells as one raster over the plotting area, a pixel a cell.
        let mut rgb = Vec::with_capacity(counts.len() * 3);
        for &count in &counts {
            rgb.extend_from_slice(&colour_of(shade(count, most)));
        }
        let top_left = chart.backend_coord(&(0.0, 0.0));
        let bottom_right = chart.backend_coord(&(n.max(1) as f64, m.max(1) as f64));
        overlay.image((grid.cols as u32, grid.rows as u32), &rgb, top_left, bottom_right)?;
        let (cw, ch) = (n as f64 / grid.cols as f64, m as f64 / grid.rows as f64);
        if grid.binned() {
            let text = format!(
                "a pixel: {cw:.1} × {ch:.1} of the matrix, darker with more entries (most: {most})"
            );
            left.draw_text(&text, &("sans-serif", 12).into_text_style(&left), (12, 526))?;
        }
        histogram.draw(&right, overlay)?;
        Ok(())
    })
}

/// A shade's colour: white for an empty cell, light to dark blue.
fn colour_of(shade: Option<usize>) -> [u8; 3] {
    match shade {
        None => [255, 255, 255],
        Some(s) => {
            let light = 1.0 - (s as f64 + 1.0) / SHADES as f64; // 0 darkest
            let mix = |dark: f64, pale: f64| (dark + (pale - dark) * light) as u8;
            [mix(8.0, 198.0), mix(48.0, 219.0), mix(107.0, 239.0)]
        }
    }
}

/// A cell's shade: `None` when empty, else 0 (one entry) to `SHADES − 1` (the most).
fn shade(count: u32, most: u32) -> Option<usize> {
    if count == 0 {
        return None;
    }
    if most <= 1 {
        return Some(SHADES - 1);
    }
    let t = (count as f64).ln() / (most as f64).ln();
    Some(((t * (SHADES - 1) as f64).round() as usize).min(SHADES - 1))
}

/// The cells of the pattern: the matrix's own entries when it fits, else bins of rows and
/// columns keeping its shape.
struct Grid {
    rows: usize,
    cols: usize,
    m: usize,
    n: usize,
}

impl Grid {
    fn of(m: usize, n: usize) -> Grid {
        let side = m.max(n).max(1);
        let scale = (CELLS as f64 / side as f64).min(1.0);
        let cells = |len: usize| ((len as f64 * scale).ceil() as usize).clamp(1, len.max(1));
        Grid { rows: cells(m), cols: cells(n), m, n }
    }
    fn binned(&self) -> bool {
        self.rows < self.m || self.cols < self.n
    }
    /// Entries per cell, row-major.
    fn count<T: Scalar>(&self, a: &Csr<T>) -> Vec<u32> {
        let mut counts = vec![0u32; self.rows * self.cols];
        let (m, n) = (self.m.max(1) as u128, self.n.max(1) as u128);
        for r in 0..a.nrows() {
            let cr = (r as u128 * self.rows as u128 / m) as usize;
            for &c in a.row(r).0 {
                let cc = (c as u128 * self.cols as u128 / n) as usize;
                let cell = &mut counts[cr * self.cols + cc];
                *cell = cell.saturating_add(1);
            }
        }
        counts
    }
}

/// Rows by their entries, in buckets 0, 1, 2–3, 4–7, … (powers of two).
struct RowHistogram {
    rows: Vec<u64>,
    mean: f64,
    max: usize,
    cv: f64,
}

impl RowHistogram {
    fn of<T: Scalar>(a: &Csr<T>) -> RowHistogram {
        let mut rows = Vec::new();
        let (mut sum, mut sq, mut max) = (0f64, 0f64, 0usize);
        for r in 0..a.nrows() {
            let len = a.row_len(r);
            let bucket = if len == 0 { 0 } else { 1 + len.ilog2() as usize };
            if rows.len() <= bucket {
                rows.resize(bucket + 1, 0);
            }
            rows[bucket] += 1;
            sum += len as f64;
            sq += (len as f64) * (len as f64);
            max = max.max(len);
        }
        let count = a.nrows().max(1) as f64;
        let mean = sum / count;
        let var = (sq / count - mean * mean).max(0.0);
        let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
        RowHistogram { rows, mean, max, cv }
    }

    /// A bucket's entries: "0", "1", "2–3", "4–7", …
    fn label(bucket: usize) -> String {
        match bucket {
            0 => "0".into(),
            1 => "1".into(),
            b => format!("{}–{}", 1u64 << (b - 1), (1u64 << b) - 1),
        }
    }

    /// A bucket's first row length, as the axis names it (the whole range in the tooltip).
    fn start(bucket: usize) -> String {
        match bucket {
            0 => "0".into(),
            b => human(1u64 << (b - 1)),
        }
    }

    fn draw(&self, area: &canvas::Area<'_>, overlay: &mut canvas::Overlay) -> canvas::Drawn {
        let buckets = self.rows.len().max(1) as u32;
        let top = self.rows.iter().copied().max().unwrap_or(0).max(1);
        let title = format!(
            "rows by entries: mean {:.1}, max {}, spread (CV) {:.2}",
            self.mean, self.max, self.cv
        );
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((0u32..buckets).into_segmented(), 0u64..top + top / 10 + 1)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("entries in the row (from)")
            .y_desc("rows")
            .x_labels(buckets as usize)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(b) => Self::start(*b as usize),
                _ => String::new(),
            })
            .draw()?;
        let bar = RGBColor(31, 119, 180);
        chart.draw_series(self.rows.iter().enumerate().map(|(b, &count)| {
            let b = b as u32;
            Rectangle::new(
                [(SegmentValue::Exact(b), 0), (SegmentValue::Exact(b + 1), count)],
                bar.filled(),
            )
        }))?;
        for (b, &count) in self.rows.iter().enumerate() {
            let at = chart.backend_coord(&(SegmentValue::CenterOf(b as u32), count));
            overlay.tip(at, 8, format!("{} entries: {count} rows", Self::label(b)));
        }
        Ok(())
    }
}

/// 1024 as "1k", 1048576 as "1M": short axis labels.
fn human(v: u64) -> String {
    match v {
        v if v >= 1 << 20 && v % (1 << 20) == 0 => format!("{}M", v >> 20),
        v if v >= 1 << 10 && v % (1 << 10) == 0 => format!("{}k", v >> 10),
        v => v.to_string(),
    }
}
