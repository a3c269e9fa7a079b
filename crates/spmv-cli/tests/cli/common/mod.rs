//! What the CLI tests share: running the binary and a scratch folder per test.

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn spmv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spmv")).args(args).output().expect("the spmv binary runs")
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
