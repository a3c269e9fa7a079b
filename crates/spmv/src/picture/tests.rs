//! The pictures from committed runs (`data/pictures`: H200 bench runs on one and two GPUs,
//! solves) and from edge cases: every section drawn, names escaped, bad input refused.

use base64::Engine as _;
use serde_json::{json, Value};

use super::*;
use crate::matrix::Csr;

fn committed(name: &str) -> (String, Value) {
    let path = format!("{}/../../data/pictures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (name.to_string(), serde_json::from_str(&text).unwrap())
}

fn all_committed() -> Vec<(String, Value)> {
    [
        "bench-h200.json",
        "scale-1gpu-h200.json",
        "scale-2gpu-h200.json",
        "solve-lf10-h200.json",
        "solve-poisson2d-cpu.json",
    ]
    .map(committed)
    .to_vec()
}

#[test]
fn the_report_shows_every_section_of_the_committed_runs() {
    let page = report_html(&all_committed()).unwrap();
    for title in [
        "<h2>Roofline</h2>",
        "<h2>Speed relative to the best</h2>",
        "<h3>f64 · A·x</h3>",
        "<h3>f64 · A·x, 2 GPUs</h3>",
        "<h2>auto and tune against the best</h2>",
        "<h2>Scaling over GPUs</h2>",
        "<h2>Convergence</h2>",
    ] {
        assert!(page.contains(title), "{title}");
    }
    // Roofline, auto and tune, scaling, convergence; no section says it had nothing.
    assert_eq!(page.matches("<svg").count(), 4);
    assert!(!page.contains("Nothing of this kind"));
    assert!(!page.contains("NaN") && !page.contains("inf<"));
    // The runs' facts: machine, command, commit.
    assert!(page.contains("NVIDIA H200 (sm_90)") && page.contains("spmv bench --devices 0,1"));
    assert!(page.contains("85153187dd083149a7a9cdcd1894ec6b9439b1db"));
    // A tooltip per drawn mark at least: one per correct result in the roofline alone.
    let ok = page.matches("<title>").count();
    assert!(ok > 100, "{ok} tooltips");
    // Every heat-map cell of a result that ran has a relative speed in (0, ~3].
    for cell in page.split("<td data-v=\"").skip(1) {
        let v: f64 = cell.split('"').next().unwrap().parse().unwrap();
        assert!(v == -1.0 || v > 0.0, "{v}");
    }
    // Self-contained: no address to fetch anything from (the SVG namespace is a name).
    let addresses = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!addresses.contains("http") && !addresses.contains("src="));
}

#[test]
fn names_from_the_json_cannot_break_the_page() {
    let evil = "<script>alert(1)</script>\"'&";
    let result = json!({
        "matrix": evil, "format": evil, "spec": "csr-vector", "precision": "f64", "nrows": 4,
        "nnz": 8, "status": "ok", "back_to_back_ms": 0.01, "gflops": 1.0, "effective_gbs": 10.0,
        "bound_ms": 0.005
    });
    let page = report_html(&[(evil.to_string(), json!([result]))]).unwrap();
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"));
}

#[test]
fn inputs_that_are_not_runs_are_refused_naming_the_cause() {
    let refused = |value: Value, message: &str| {
        let e = report_html(&[("input.json".into(), value)]).unwrap_err().to_string();
        assert!(e.contains(message), "{e}");
    };
    refused(json!(3), "input.json: neither a bench run");
    refused(json!([]), "nothing to show");
    refused(json!({"results": [{"matrix": "m"}]}), "input.json: a bench result");
    refused(json!({"outcome": "converged"}), "input.json: a solve");
    refused(json!({"results": "x"}), "a bench result");
}

#[test]
fn results_that_did_not_run_leave_grey_cells_and_no_marks() {
    let row = |format: &str, status: &str, ms: Value| {
        json!({"matrix": "m", "format": format, "spec": format, "precision": "f64", "nrows": 4,
               "nnz": 8, "status": status, "error": "declined", "back_to_back_ms": ms})
    };
    let page = report_html(&[(
        "run".into(),
        json!([row("csr-vector", "ok", json!(0.01)), row("ell", "unsupported", Value::Null)]),
    )])
    .unwrap();
    assert!(page.contains("title=\"unsupported: declined\">—</td>"), "{page}");
    // auto and tune were not run: that section says so.
    assert!(page.contains("Nothing of this kind"));
}

/// The raster in a spy picture: its PNG's width and height.
fn spy_raster(svg: &str) -> (u32, u32) {
    let data = svg.split("data:image/png;base64,").nth(1).unwrap().split('"').next().unwrap();
    let png = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    let reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
    let info = reader.info();
    (info.width, info.height)
}

#[test]
fn spy_draws_every_shape_a_cell_an_entry_until_the_matrix_is_larger_than_the_picture() {
    let band = crate::io::gen::generate("poisson2d:n=30").unwrap(); // 900 x 900
    let svg = spy_svg("poisson2d", &band).unwrap();
    assert_eq!(spy_raster(&svg), (400, 400));
    assert!(svg.contains("poisson2d: 900 × 900, 4380 entries") && svg.contains("a pixel: 2.2"));
    let small = crate::io::gen::generate("poisson2d:n=5").unwrap();
    assert_eq!(spy_raster(&spy_svg("small", &small).unwrap()), (25, 25));
    // Flat and tall matrices keep their shape; empty ones still draw.
    let cases: [(Csr<f64>, (u32, u32)); 4] = [
        (Csr::zeros(3, 5000), (400, 1)),
        (Csr::zeros(5000, 2), (1, 400)),
        (Csr::zeros(0, 0), (1, 1)),
        (Csr::zeros(1, 1), (1, 1)),
    ];
    for (a, raster) in cases {
        let svg = spy_svg("m", &a).unwrap();
        assert_eq!(spy_raster(&svg), raster, "{} x {}", a.nrows(), a.ncols());
    }
}

#[test]
fn convergence_draws_curves_with_holes_and_none() {
    let curves = [
        Curve { label: "cg".into(), points: vec![(0, 1.0), (5, 1e-3), (10, 1e-9)] },
        Curve { label: "broken".into(), points: vec![(0, 1.0), (3, f64::NAN), (4, 0.0)] },
        Curve { label: "empty".into(), points: vec![] },
    ];
    let svg = convergence_svg("t", &curves, 1e-8).unwrap();
    assert!(svg.contains("cg: iteration 10") && svg.contains("tol 1e-8"));
    assert!(!svg.contains("NaN"));
    assert!(convergence_svg("none", &[], 1e-8).unwrap().contains("</svg>"));
}
