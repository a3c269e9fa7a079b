//! Pictures for people: the page of a benchmark run ([`report`]: roofline, heat map, `auto`
//! against the best, scaling, convergence), a matrix's sparsity pattern ([`spy`]) and a
//! solve's residual history ([`convergence`]). Plotters draws them as SVG; [`canvas`] adds
//! what it does not draw: tooltips on the marks (SVG `<title>`, shown on hover).

pub mod canvas;
pub mod convergence;
pub mod report;
pub mod spy;

pub use convergence::{convergence_svg, Curve};
pub use report::report_html;
pub use spy::spy_svg;

#[cfg(test)]
mod tests;
