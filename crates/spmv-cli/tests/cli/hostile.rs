//! Hostile and huge input (issue: allocations follow the data, honest figures, exit codes):
//! every case must end in a clear error or a right answer, never an abort.

use crate::common;

use std::process::Command;

use common::{
    fails_with, spmv, spmv_json_on_mtx, spmv_ok, temp_dir, text, words, words_at, write_file,
    write_mtx,
};

/// Runs `spmv args` under an address-space limit of `kib` KiB (`ulimit -v`).
fn spmv_limited(kib: u64, args: &[&str]) -> std::process::Output {
    let mut command = format!("ulimit -v {kib}; exec \"$0\"");
    for (i, _) in args.iter().enumerate() {
        command.push_str(&format!(" \"${}\"", i + 1));
    }
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .arg(env!("CARGO_BIN_EXE_spmv"))
        .args(args)
        .output()
        .expect("sh runs")
}

#[test]
fn a_huge_size_line_with_one_entry_is_refused_with_the_memory_it_needs() {
    let dir = temp_dir("huge-size-line");
    let path = write_mtx(&dir, "huge.mtx", "2000000000 2000000000 1\n1 1 1.0\n");
    let path = path.to_str().unwrap();
    // 4 GiB of address space: far less than the 32 GB of row pointers the size line asks for.
    let out = spmv_limited(4 << 20, &["info", path]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "not a clean error exit:\n{stderr}");
    assert!(stderr.contains("out of memory") && stderr.contains("needs 32.0 GB"), "{stderr}");
    // A size that fits is read, whatever the width: 1 x 4,294,967,295 with one entry.
    let wide = write_mtx(&dir, "wide.mtx", "1 4294967295 1\n1 4294967295 2.5\n");
    let out = spmv_limited(4 << 20, &["info", wide.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn empty_format_and_precision_lists_are_errors() {
    fails_with(&["bench", "poisson2d:n=8", "--formats", "", "--cpu"], "no format");
    fails_with(&["bench", "poisson2d:n=8", "--precision", "", "--cpu"], "no precision");
}

#[test]
fn an_unwritable_json_path_fails_before_the_run() {
    let out = spmv(&words(
        "bench poisson2d:n=8 --formats csr-scalar --cpu --json /nonexistent-folder/r.json",
    ));
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("/nonexistent-folder/r.json"), "{stderr}");
    // Nothing was benchmarked: the table never started.
    assert!(
        !text(&out.stdout).contains("csr-scalar"),
        "the run went ahead:\n{}",
        text(&out.stdout)
    );
}

#[test]
fn pagerank_that_does_not_converge_exits_non_zero() {
    let out =
        spmv(&["pagerank", "kron:scale=8", "--format", "csr-scalar", "--cpu", "--max-iter", "2"]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "exit 0 although it stopped after 2 iterations:\n{stderr}");
    assert!(stderr.contains("did not converge within --max-iter 2"), "{stderr}");
}

#[test]
fn non_finite_values_are_refused_with_their_line_unless_allowed() {
    let dir = temp_dir("non-finite");
    for (name, value) in [("big", "1e400"), ("inf", "inf"), ("nan", "nan")] {
        let path = write_mtx(&dir, &format!("{name}.mtx"), &format!("2 2 2\n1 1 {value}\n2 2 1\n"));
        let path = path.to_str().unwrap();
        fails_with(
            &["bench", path, "--cpu", "--formats", "csr-scalar"],
            &format!("line 3: value '{value}' is not finite"),
        );
        // Allowed, the row's infinity (or NaN) is checked as such: every format passes.
        let out = spmv(&[
            "bench",
            path,
            "--cpu",
            "--formats",
            "csr-scalar,csr-vector",
            "--allow-non-finite",
            "--reps",
            "3",
        ]);
        assert!(out.status.success(), "{name}: {}{}", text(&out.stdout), text(&out.stderr));
        assert!(text(&out.stdout).contains("all 2 results match"), "{name}: {}", text(&out.stdout));
    }
    // A value finite in f64 but not in f32 is refused for f32 only, as unsupported (range).
    let path = write_mtx(&dir, "f32.mtx", "2 2 2\n1 1 1e300\n2 2 1\n");
    let out = spmv(&words_at(
        "bench PATH --cpu --formats csr-scalar --precision f64,f32 --reps 3 --wide",
        &path,
    ));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("UNSUPPORTED (the matrix does not fit f32"), "{stdout}");
    assert!(!stdout.contains("WRONG"), "{stdout}");
}

#[test]
fn bandwidth_counts_only_the_x_a_product_can_touch() {
    // 1 x 20,000,000 with one entry: the product reads one x value, not 160 MB of x.
    let (_, report) = spmv_json_on_mtx(
        "wide-bandwidth",
        "wide.mtx",
        "1 20000000 1\n1 7 2.0\n",
        "bench PATH --cpu --formats csr-scalar --reps 3",
    );
    let gbs = report["results"][0]["effective_gbs"].as_f64().unwrap();
    assert!(gbs < 10.0, "{gbs} GB/s for a product that moves a few dozen bytes");
}

#[test]
fn zero_repetitions_is_an_error() {
    fails_with(&["bench", "poisson2d:n=8", "--cpu", "--reps", "0"], "--reps");
}

#[test]
fn messages_name_the_problem_once() {
    // A missing file is a missing file, said once, not "not a generator spec".
    let out = spmv(&["info", "/nonexistent-folder/m.mtx.gz"]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("/nonexistent-folder/m.mtx.gz: No such file or directory"), "{stderr}");
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
    assert!(!stderr.contains("generator") && !stderr.contains("os error"), "{stderr}");
    // A generator key beyond what the matrix can hold is an error, not clamped silently.
    fails_with(
        &["bench", "longrows:n=10,long=100", "--cpu"],
        "long = 100 entries per row exceed the n = 10 columns",
    );
}

#[test]
fn generator_specs_too_big_for_memory_are_refused_with_the_estimate() {
    let dir = temp_dir("big-generators");
    let out_path = dir.join("x.mtx");
    for (spec, needs) in [
        ("poisson3d:n=1000", "needs 100.0 GB"),
        ("kron:scale=28", "needs 141.7 GB"),
        ("poisson2d:n=65536", "needs 326.4 GB"),
        // No entries, but 2^32 rows: 16 bytes a row (row pointers and lengths).
        ("random:rows=4294967296,mean=0", "needs 68.7 GB"),
        ("longrows:n=4294967296,short=0,count=0,long=0", "needs 68.7 GB"),
        ("banded:n=4294967296,offsets=", "needs 68.7 GB"),
        ("blockdiag:k=4294967296,of=random:rows=1,mean=0", "needs 68.7 GB"),
        ("powerlaw:n=4294967296,mean=0", "needs 103.1 GB"),
        ("kron:scale=32,ef=0", "needs 68.7 GB"),
    ] {
        let out = spmv_limited(4 << 20, &["gen", spec, "-o", out_path.to_str().unwrap()]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{spec}: not a clean error exit:\n{stderr}");
        assert!(stderr.contains("out of memory") && stderr.contains(needs), "{spec}: {stderr}");
        // It parsed: it is refused for its size, not called something else.
        assert!(!stderr.contains("neither a file"), "{spec}: {stderr}");
        let out = spmv_limited(4 << 20, &["info", spec]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "info {spec}: not a clean error exit:\n{stderr}");
        assert!(stderr.contains(needs) && !stderr.contains("neither a file"), "{spec}: {stderr}");
    }
}

#[test]
fn control_bytes_are_escaped_and_carriage_return_files_get_a_hint() {
    let dir = temp_dir("control-bytes");
    // An escape sequence (ESC [2J clears a terminal) in a value is quoted escaped.
    let escape = write_mtx(&dir, "escape.mtx", "2 2 1\n1 1 \x1b[2J\n");
    let out = spmv(&["info", escape.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(!stderr.contains('\x1b') && stderr.contains("\\u{1b}[2J"), "{stderr}");
    assert!(stderr.contains("line 3"), "{stderr}");
    // A file with CR-only line endings is one long line: say so, with the fix.
    let mac = write_file(
        &dir,
        "mac.mtx",
        "%%MatrixMarket matrix coordinate real general\r2 2 1\r1 1 1.0\r",
    );
    let out = spmv(&["info", mac.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("only carriage returns") && !stderr.contains('\r'), "{stderr}");
}

#[test]
fn plus_signed_integers_are_read_wherever_integers_are() {
    let path = write_file(
        &temp_dir("plus-signs"),
        "plus.mtx",
        "%%MatrixMarket matrix coordinate integer general\n+2 +2 +2\n+1 +2 +3\n2 1 -4\n",
    );
    let out = spmv_ok(&["info", path.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("2 x 2, nnz 2"), "{}", text(&out.stdout));
    fails_with(&["info", "poisson2d:n=+4,bogus=1"], "valid keys");
    let out = spmv(&["info", "poisson2d:n=+4"]);
    assert!(out.status.success() && text(&out.stdout).contains("16 x 16"), "{}", text(&out.stderr));
}

#[test]
fn the_cpu_default_set_is_scaled_down_and_reports_progress_when_piped() {
    let out = spmv(&["bench", "--cpu", "--formats", "csr-scalar,sell-c-sigma", "--wide"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    // The header says the set is scaled down and how many runs; rows then follow.
    assert!(
        stdout.contains("# default set on the CPU")
            && stdout.contains("median of 10 runs after 2 warm-up"),
        "{stdout}"
    );
    for spec in spmv::io::inputs::DEFAULT_SPECS_CPU {
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with(spec)).count(),
            2,
            "{spec} rows in:\n{stdout}"
        );
    }
    // stderr is a pipe here: plain progress lines, one per matrix, then "done".
    let matrices = stderr.lines().filter(|l| l.contains("] matrix ")).count();
    assert!(matrices >= spmv::io::inputs::DEFAULT_SPECS_CPU.len(), "{stderr}");
    assert!(stderr.lines().any(|l| l.ends_with("] done")), "{stderr}");
}

#[test]
fn devices_and_pipes_are_refused_wherever_a_matrix_is_read() {
    let a = write_mtx(&temp_dir("devices"), "a.mtx", "2 2 2\n1 1 2\n2 2 2\n");
    let a = a.to_str().unwrap();
    // Each read 2 GB of /dev/zero before running out of memory.
    for args in [
        &["solve", a, "--rhs", "/dev/zero", "--cpu"][..],
        &["info", "blockdiag:k=2,of=file=/dev/zero"],
        &["info", "/dev/zero"],
    ] {
        let out = spmv_limited(4 << 20, args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: not a clean error exit:\n{stderr}");
        assert!(stderr.contains("/dev/zero: not a regular file"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_blockdiag_spec_of_a_file_with_a_path_is_a_spec() {
    // The documented example: a `/` in the spec's file does not make the spec a path.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spmv"))
        .args(["info", "blockdiag:k=8,of=file=data/matrices/cvxbqp1.mtx.gz"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("400000 x 400000"), "{}", text(&out.stdout));
}
