//! The pictures: `spmv report` from the committed runs (data/pictures) and from a bench run,
//! `info --spy`, `solve --plot`, their refusals, and each picture rendered by headless
//! Chromium (where it is installed) and checked for drawn plots and titles.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

fn committed_runs() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/pictures");
    let mut runs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".json"))
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 5, "{runs:?}");
    runs
}

/// The committed runs' page at `dir/report.html`.
fn report_page(dir: &Path) -> PathBuf {
    let page = dir.join("report.html");
    let mut args = vec!["report".to_string()];
    args.extend(committed_runs());
    args.extend(["-o".into(), page.to_string_lossy().into_owned()]);
    spmv_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    page
}

#[test]
fn report_draws_the_committed_runs_and_a_bench_run() {
    let dir = temp_dir("report");
    let page = std::fs::read_to_string(report_page(&dir)).unwrap();
    for title in [
        "Roofline",
        "Speed relative to the best",
        "auto and tune",
        "Scaling over GPUs",
        "Convergence",
    ] {
        assert!(page.contains(&format!("<h2>{title}")), "{title}");
    }
    let (html, json) = (dir.join("b.html"), dir.join("b.json"));
    spmv_ok(&words_at(
        "bench poisson2d:nx=20 kron:scale=7 --cpu --formats csr-vector,ell,auto --reps 2 --warmup 0 --report PATH",
        &html,
    ));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Roofline") && page.contains("kron:scale=7"), "{page}");
    // The JSON names the command and is a report's input too.
    spmv_ok(&words_at(
        "bench poisson2d:nx=20 --cpu --formats csr-vector --reps 2 --warmup 0 --json PATH",
        &json,
    ));
    let run = read_json(&json);
    assert!(run["command"].as_str().unwrap().starts_with("spmv bench poisson2d:nx=20"), "{run}");
    spmv_ok(&["report", json.to_str().unwrap(), "-o", html.to_str().unwrap()]);
}

#[test]
fn report_refuses_what_is_not_a_run_naming_it() {
    let dir = temp_dir("report-refusals");
    let page = dir.join("r.html");
    let page = page.to_str().unwrap();
    let missing = dir.join("missing.json");
    fails_with(&["report", missing.to_str().unwrap(), "-o", page], "missing.json");
    let text = write_file(&dir, "text.json", "hello");
    fails_with(&["report", text.to_str().unwrap(), "-o", page], "not JSON");
    let number = write_file(&dir, "number.json", "3");
    fails_with(&["report", number.to_str().unwrap(), "-o", page], "neither a bench run");
    let nowhere = dir.join("no-such-folder/r.html");
    fails_with(&["report", number.to_str().unwrap(), "-o", nowhere.to_str().unwrap()], "-o");
    assert!(!Path::new(page).exists(), "no page written on a refusal");
    let same = dir.join("same");
    let same = same.to_str().unwrap();
    fails_with(
        &["bench", "poisson2d:nx=5", "--cpu", "--json", same, "--report", same],
        "name the same file",
    );
}

#[test]
fn spy_and_plot_write_svg_pictures() {
    let dir = temp_dir("spy-plot");
    let spy = dir.join("spy.svg");
    spmv_ok(&words_at("info poisson2d:nx=20 --spy PATH", &spy));
    let svg = std::fs::read_to_string(&spy).unwrap();
    assert!(svg.contains("data:image/png;base64,") && svg.contains("rows by entries"), "{svg}");
    fails_with(
        &words_at("info poisson2d:nx=20 --spy PATH", &dir.join("spy.png")),
        "ending in .svg",
    );
    fails_with(&words_at("info poisson2d:nx=20 poisson2d:nx=5 --spy PATH", &spy), "one matrix");

    let (plot, json) = (dir.join("conv.svg"), dir.join("solve.json"));
    let line = format!(
        "solve poisson2d:nx=12 --cpu --method cg,minres --format csr-vector,ell --check-every 1 --plot {} --json {}",
        plot.display(),
        json.display()
    );
    spmv_ok(&words(&line));
    let svg = std::fs::read_to_string(&plot).unwrap();
    for label in
        ["cg on csr-vector", "minres on csr-vector", "cg on ell", "minres on ell", "tol 1e-8"]
    {
        assert!(svg.contains(label), "{label}");
    }
    // One JSON object per solve, each with its residual history from (0, 1) to the stop.
    let solves = read_json(&json);
    let solves = solves.as_array().unwrap();
    assert_eq!(solves.len(), 4);
    for s in solves {
        let points = s["history"][0]["residuals"].as_array().unwrap();
        assert_eq!(points[0], serde_json::json!([0, 1.0]));
        assert_eq!(points.last().unwrap()[0], s["iterations"]);
    }
    let x = dir.join("x.mtx");
    fails_with(
        &words_at("solve poisson2d:nx=12 --cpu --method cg,minres -o PATH", &x),
        "one method and one format",
    );
    fails_with(
        &words_at("solve poisson2d:nx=12 --cpu --plot PATH", &dir.join("conv.pdf")),
        "ending in .svg",
    );
}

/// Headless Chromium, where it is installed (Debian's package `chromium`; $SPMV_CHROMIUM names
/// another), with the flags a machine without network needs.
fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("SPMV_CHROMIUM").map(PathBuf::from);
    named
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from))
        .find(|p| p.exists())
}

fn headless(chromium: &Path, dir: &Path, args: &[&str]) -> Vec<u8> {
    let profile = dir.join("chromium-profile");
    let out = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .args(["--hide-scrollbars", "--force-device-scale-factor=1"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "chromium {args:?}: {}", text(&out.stderr));
    out.stdout
}

/// The screenshot of `file` in a window of `size`: its pixels (RGB, row after row), width.
fn screenshot(chromium: &Path, dir: &Path, file: &Path, size: (u32, u32)) -> (Vec<u8>, u32) {
    let png = dir.join("shot.png");
    let _ = std::fs::remove_file(&png);
    headless(
        chromium,
        dir,
        &[
            &format!("--screenshot={}", png.display()),
            &format!("--window-size={},{}", size.0, size.1),
            &format!("file://{}", file.display()),
        ],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let rgb =
        pixels[..info.buffer_size()].chunks(channels).flat_map(|p| [p[0], p[1], p[2]]).collect();
    (rgb, info.width)
}

/// The share of pixels that are not white in the rectangle `x` × `y` (pixel ranges).
fn inked(rgb: &[u8], width: u32, x: std::ops::Range<u32>, y: std::ops::Range<u32>) -> f64 {
    let (mut ink, mut all) = (0usize, 0usize);
    for row in y {
        for col in x.clone() {
            let i = 3 * (row * width + col) as usize;
            all += 1;
            if rgb[i..i + 3].iter().any(|&c| c < 235) {
                ink += 1;
            }
        }
    }
    ink as f64 / all.max(1) as f64
}

#[test]
fn the_pictures_render_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no Chromium (apt-get install chromium, or set SPMV_CHROMIUM)");
        return;
    };
    let dir = temp_dir("chromium");
    // The page: every section's title in the rendered document, and ink down the page.
    let page = report_page(&dir);
    let dom =
        text(&headless(&chromium, &dir, &["--dump-dom", &format!("file://{}", page.display())]));
    for title in [
        "Roofline",
        "Speed relative to the best",
        "auto and tune against the best",
        "Scaling over GPUs",
        "Convergence",
    ] {
        assert!(dom.contains(&format!("<h2>{title}</h2>")), "{title}");
    }
    let (rgb, width) = screenshot(&chromium, &dir, &page, (1250, 4200));
    let bands: Vec<f64> =
        (0..14).map(|b| inked(&rgb, width, 0..width, b * 300..(b + 1) * 300)).collect();
    assert!(bands.iter().filter(|&&f| f > 0.02).count() >= 10, "mostly blank page: {bands:?}");
    // The spy picture: the pattern on the left, the histogram on the right.
    let spy = dir.join("spy.svg");
    spmv_ok(&words_at("info kron:scale=10 --spy PATH", &spy));
    let (rgb, width) = screenshot(&chromium, &dir, &spy, (1000, 540));
    assert!(inked(&rgb, width, 80..520, 60..480) > 0.05, "no pattern drawn");
    assert!(inked(&rgb, width, 620..980, 60..470) > 0.05, "no histogram drawn");
    // The residual history.
    let plot = dir.join("conv.svg");
    spmv_ok(&words_at("solve poisson2d:nx=20 --cpu --method cg,gmres --plot PATH", &plot));
    let (rgb, width) = screenshot(&chromium, &dir, &plot, (800, 480));
    assert!(inked(&rgb, width, 90..780, 50..420) > 0.03, "no curves drawn");
}
