//! A solve's residual history: ‖r‖/‖b‖ against the iteration, log scale, one curve per solve
//! (method, format, `auto`'s attempts), the tolerance drawn.

use plotters::prelude::*;

use super::canvas::{self, colour, log_range};
use crate::error::Result;

/// One solve's history: its label ("cg on dia", "minres after cg") and the recurrence's
/// ‖r‖/‖b‖ at the iterations where it was read (the solver's `check_every`).
#[derive(Clone, Debug)]
pub struct Curve {
    /// The legend's text.
    pub label: String,
    /// (iteration, ‖r‖/‖b‖), iterations rising.
    pub points: Vec<(usize, f64)>,
}

/// The residual histories of `curves` as an SVG picture titled `title`, with the tolerance
/// `tol` as a dashed line.
pub fn convergence_svg(title: &str, curves: &[Curve], tol: f64) -> Result<String> {
    let finite = |c: &Curve| -> Vec<(f64, f64)> {
        c.points
            .iter()
            .filter(|(_, r)| r.is_finite() && *r > 0.0)
            .map(|&(i, r)| (i as f64, r))
            .collect()
    };
    let series: Vec<Vec<(f64, f64)>> = curves.iter().map(finite).collect();
    let last = series.iter().flatten().map(|p| p.0).fold(1.0f64, f64::max);
    let ys = series.iter().flatten().map(|p| p.1).chain([tol, 1.0]);
    let y_range = log_range(ys);
    canvas::svg((800, 480), |root, overlay| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..last * 1.02, y_range.log_scale())?;
        canvas::axes(
            &mut chart,
            ("iteration", |v| format!("{v:.0}")),
            ("‖r‖ / ‖b‖", |v| format!("{v:.0e}")),
        )?;
        if tol > 0.0 {
            let dashes =
                DashedLineSeries::new([(0.0, tol), (last * 1.02, tol)], 6, 4, BLACK.into());
            chart
                .draw_series(dashes)?
                .label(format!("tol {tol:.0e}"))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK));
        }
        for (i, (curve, points)) in curves.iter().zip(&series).enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))?
                .label(curve.label.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], c.stroke_width(2)));
            for &(it, r) in points {
                let text = format!("{}: iteration {it}, ‖r‖/‖b‖ = {r:.3e}", curve.label);
                overlay.tip(chart.backend_coord(&(it, r)), 4, text);
            }
        }
        canvas::legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}
