//! `spmv report`: the HTML page of bench runs (and solves) from their JSON, and the one
//! place the CLI writes a picture (`report`, `bench --report`, `info --spy`, `solve --plot`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use spmv::error::printable_name;

/// Largest JSON file `spmv report` reads.
const MOST_JSON_BYTES: u64 = 1 << 30;

#[derive(clap::Args)]
pub struct ReportArgs {
    /// JSON files of `spmv bench --json` (and `spmv solve --json`, whose residual histories
    /// are overlaid).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The HTML file to write (self-contained: open it in any browser, print it to PDF).
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    crate::select::check_writable(Some(&args.output), "-o")?;
    let mut sources = Vec::new();
    for path in &args.inputs {
        let name = printable_name(&path.display().to_string());
        sources.push((name.clone(), read_json(path).with_context(|| name)?));
    }
    let html = spmv::picture::report_html(&sources)?;
    write(&args.output, "-o", &html)?;
    Ok(ExitCode::SUCCESS)
}

/// A JSON file, its size checked before it is read.
fn read_json(path: &Path) -> Result<serde_json::Value> {
    let bytes = std::fs::metadata(path)?.len();
    if bytes > MOST_JSON_BYTES {
        bail!("{bytes} bytes: more than the {} MiB a report reads", MOST_JSON_BYTES >> 20);
    }
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).context("not JSON")
}

/// Writes a picture or page `text` to `path` (option `flag`), whole or not at all.
pub fn write(path: &Path, flag: &str, text: &str) -> Result<()> {
    spmv::io::output::write_file(path, |w| std::io::Write::write_all(w, text.as_bytes()))
        .context(flag.to_string())?;
    eprintln!("{flag}: written to {}", printable_name(&path.display().to_string()));
    Ok(())
}

/// Fails unless `path` names an SVG file (the pictures are SVG: text and vectors, any size).
pub fn check_svg(path: Option<&Path>, flag: &str) -> Result<()> {
    if let Some(path) = path {
        let svg = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        if !svg {
            bail!(
                "{flag} {}: the picture is written as SVG: give a name ending in .svg",
                printable_name(&path.display().to_string())
            );
        }
        crate::select::check_writable(Some(path), flag)?;
    }
    Ok(())
}
