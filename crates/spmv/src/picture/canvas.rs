//! One SVG picture: plotters draws on it, and marks get tooltips.

use std::fmt::Write as _;

use base64::Engine as _;

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

use crate::error::{Error, Result};

/// The drawing area plotters draws a picture on.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What a drawing step returns: plotters' errors, boxed.
pub type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;

/// What is laid over plotters' drawing: raster images (a picture of many cells is far
/// smaller as one PNG than as SVG shapes) and hover targets (a circle of `radius` pixels at
/// a point, with its text).
#[derive(Default)]
pub struct Overlay {
    tips: Vec<((i32, i32), u32, String)>,
    images: Vec<String>,
}

impl Overlay {
    /// A tooltip `text` over the pixels within `radius` of `at`.
    pub fn tip(&mut self, at: (i32, i32), radius: u32, text: String) {
        self.tips.push((at, radius, text));
    }

    /// An RGB raster of `width` × `height` pixels (`rgb`, row after row) stretched over the
    /// rectangle from `top_left` to `bottom_right`, its pixels kept square-edged.
    pub fn image(
        &mut self, (width, height): (u32, u32), rgb: &[u8], top_left: (i32, i32),
        bottom_right: (i32, i32),
    ) -> Result<()> {
        let mut png = Vec::new();
        let mut encoder = png::Encoder::new(&mut png, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let encoded = encoder.write_header().and_then(|mut w| w.write_image_data(rgb));
        encoded.map_err(|e| Error::Picture(format!("PNG: {e}")))?;
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let (x, y) = top_left;
        let (w, h) = (bottom_right.0 - x, bottom_right.1 - y);
        self.images.push(format!(
            "<image x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{data}\"/>\n"
        ));
        Ok(())
    }
}

/// An SVG picture of `size` pixels drawn by `draw` on a white ground, with what it laid over.
pub fn svg(
    size: (u32, u32), draw: impl FnOnce(&Area<'_>, &mut Overlay) -> Drawn,
) -> Result<String> {
    let mut svg = String::new();
    let mut overlay = Overlay::default();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(Into::into)
            .and_then(|()| draw(&root, &mut overlay))
            .and_then(|()| root.present().map_err(Into::into));
        drawn.map_err(|e| Error::Picture(e.to_string()))?;
    }
    // Images, then transparent circles above everything else, so that the pointer finds them.
    let mut layer = overlay.images.concat();
    layer.push_str("<g fill=\"#000\" fill-opacity=\"0\" pointer-events=\"all\">\n");
    for ((x, y), r, text) in &overlay.tips {
        let _ = writeln!(
            layer,
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"{r}\"><title>{}</title></circle>",
            escape(text)
        );
    }
    layer.push_str("</g>\n");
    let end = svg
        .rfind("</svg>")
        .ok_or_else(|| Error::Picture("no </svg> in plotters' output".into()))?;
    svg.insert_str(end, &layer);
    Ok(svg)
}

/// Draws the chart's legend at `at`, on a pale box.
pub fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>, at: SeriesLabelPosition,
) -> Drawn {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Draws the chart's grid and axes: each axis a (description, label of a value) pair.
pub fn axes<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    (x_desc, x_label): (&str, fn(&f64) -> String), (y_desc, y_label): (&str, fn(&f64) -> String),
) -> Drawn
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc).y_desc(y_desc).x_label_formatter(&x_label).y_label_formatter(&y_label);
    mesh.draw()?;
    Ok(())
}

/// `text` safe inside an XML or HTML element or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0: shown escaped.
            c if c.is_control() && c != '\n' && c != '\t' => {
                s.push_str(&c.escape_default().to_string())
            }
            c => s.push(c),
        }
    }
    s
}

/// The i-th of the colours the pictures tell series apart by.
pub fn colour(i: usize) -> RGBColor {
    // Tableau's ten, then plotters' palette.
    const TEN: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    match TEN.get(i) {
        Some(&(r, g, b)) => RGBColor(r, g, b),
        None => {
            let (r, g, b) = Palette99::pick(i).rgb();
            RGBColor(r, g, b)
        }
    }
}

/// A log axis' range covering `values` (positive and finite ones), widened to whole decades
/// where that adds little, never empty.
pub fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 0.1..10.0;
    }
    let (lo, hi) = (lo / 1.5, hi * 1.5);
    if hi / lo < 10.0 {
        let mid = (lo * hi).sqrt();
        return mid / 3.2..mid * 3.2;
    }
    lo..hi
}
