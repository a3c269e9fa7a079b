//! What the CLI tests share: running the binary and a scratch folder per test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn spmv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spmv")).args(args).output().expect("the spmv binary runs")
}

/// `spmv(args)`, which must succeed (its stderr shown where it does not).
pub fn spmv_ok(args: &[&str]) -> Output {
    let out = spmv(args);
    assert!(out.status.success(), "{args:?}:\n{}", text(&out.stderr));
    out
}

/// A command line's arguments, split on spaces: long argument lists stay on one line (for
/// arguments without spaces).
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// `words(line)` with the word `PATH` replaced by `path` (which may hold spaces).
pub fn words_at<'a>(line: &'a str, path: &'a Path) -> Vec<&'a str> {
    line.split_whitespace().map(|w| if w == "PATH" { path.to_str().unwrap() } else { w }).collect()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh folder named after the test binary, the test and the process.
pub fn temp_dir(name: &str) -> PathBuf {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()));
    let dir = std::env::temp_dir().join(format!(
        "spmv-{}-{name}-{}",
        binary.unwrap_or_default(),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `spmv args`, which must fail with `message` in its error output.
pub fn fails_with(args: &[&str], message: &str) {
    let out = spmv(args);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded:\n{stderr}");
    assert!(stderr.contains(message), "{args:?}: expected '{message}' in:\n{stderr}");
}

/// Writes `contents` (a Matrix Market file, mostly) to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// The JSON report a run wrote to `path`.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs `spmv args --json json`, which must succeed, and returns its output and the report:
/// the shape of every test that checks what a run recorded.
pub fn spmv_json(json: &Path, args: &[&str]) -> (Output, serde_json::Value) {
    let args = [args, &["--json", json.to_str().unwrap()]].concat();
    let out = spmv(&args);
    assert!(out.status.success(), "{args:?}:\n{}\n{}", text(&out.stdout), text(&out.stderr));
    (out, read_json(json))
}

/// Writes the Matrix Market file `name` (`write_mtx`: `body` after the header) in a fresh
/// folder `test`, and runs `spmv_json` on the words of `line` with `PATH` that file
/// (`words_at`).
pub fn spmv_json_on_mtx(
    test: &str, name: &str, body: &str, line: &str,
) -> (Output, serde_json::Value) {
    let dir = temp_dir(test);
    let path = write_mtx(&dir, name, body);
    spmv_json(&dir.join("r.json"), &words_at(line, &path))
}

/// Writes a real general coordinate Matrix Market file: its header, then `body` (the size
/// line and the entries).
pub fn write_mtx(dir: &Path, name: &str, body: &str) -> PathBuf {
    write_file(dir, name, &format!("%%MatrixMarket matrix coordinate real general\n{body}"))
}
