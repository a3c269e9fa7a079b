//! Issue 30, the CLI's part: counts from arguments checked before they size anything, output
//! files whole or absent, messages that name the true cause, figures that say what ran.

use crate::common;

use std::path::Path;

use common::{
    fails_with, spmv, spmv_json, spmv_json_on_mtx, spmv_ok, temp_dir, text, words, write_file,
    write_mtx,
};

/// The run failed cleanly: an exit status, no abort or panic.
fn clean_failure(out: &std::process::Output, what: &str) -> String {
    let stderr = text(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(1) | Some(2)),
        "{what}: not a clean error exit ({:?}):\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked") && !stderr.contains("overflow"), "{what}: {stderr}");
    stderr
}

/// The files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name());
    let sorted: std::collections::BTreeSet<_> = names.collect();
    sorted.into_iter().map(|n| n.to_string_lossy().into_owned()).collect()
}

#[test]
fn counts_out_of_range_are_refused_before_they_size_anything() {
    for (flag, value) in [
        ("--reps", "1000000000000"),
        ("--reps", "18446744073709551615"),
        ("--reps", "0"),
        ("--warmup", "18446744073709551615"),
    ] {
        let out =
            spmv(&["bench", "poisson2d:n=8", "--cpu", "--formats", "csr-scalar", flag, value]);
        let stderr = clean_failure(&out, &format!("{flag} {value}"));
        assert!(stderr.contains(flag) && stderr.contains("1000000"), "{flag} {value}: {stderr}");
        assert!(!text(&out.stdout).contains("csr-scalar"), "{flag} {value}: the run went ahead");
    }
    for (flag, value) in [("--runs", "1000000000000"), ("--runs", "0")] {
        let out = spmv(&["pagerank", "kron:scale=6", "--cpu", flag, value]);
        let stderr = clean_failure(&out, &format!("{flag} {value}"));
        assert!(stderr.contains(flag) && stderr.contains("1000"), "{flag} {value}: {stderr}");
    }
    // A top-k comparison past the node count compares all nodes (no overflow of k + 1).
    spmv_ok(&words("pagerank kron:scale=6 --cpu --exact --agreement 18446744073709551615 --top 18446744073709551615"));
}

#[test]
fn a_failed_run_leaves_no_output_file_and_an_old_one_intact() {
    let dir = temp_dir("no-partial-output");
    let rect = write_mtx(&dir, "rect.mtx", "2 3 1\n1 1 1.0\n");
    let (x, json) = (dir.join("x.mtx"), dir.join("s.json"));
    let out = spmv(&[
        "solve",
        rect.to_str().unwrap(),
        "--cpu",
        "-o",
        x.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = clean_failure(&out, "solve on a 2 x 3 matrix");
    assert!(stderr.contains("square"), "{stderr}");
    assert_eq!(files(&dir), ["rect.mtx"], "solve left files behind");
    // bench on a missing input: no r.json, and an old one is kept whole.
    let r = dir.join("r.json");
    let missing = dir.join("missing.mtx");
    let bench = |r: &Path| {
        spmv(&["bench", missing.to_str().unwrap(), "--cpu", "--json", r.to_str().unwrap()])
    };
    clean_failure(&bench(&r), "bench on a missing input");
    assert_eq!(files(&dir), ["rect.mtx"], "bench left files behind");
    std::fs::write(&r, "old").unwrap();
    clean_failure(&bench(&r), "bench on a missing input");
    assert_eq!(std::fs::read_to_string(&r).unwrap(), "old");
    assert_eq!(files(&dir), ["r.json", "rect.mtx"]);
}

#[test]
fn outputs_are_written_whole_and_a_full_disk_is_an_error() {
    let dir = temp_dir("whole-output");
    let m = dir.join("m.mtx.gz");
    spmv_ok(&["gen", "poisson2d:n=20", "-o", m.to_str().unwrap()]);
    assert_eq!(files(&dir), ["m.mtx.gz"], "a temporary file was left behind");
    let a = spmv::io::read_matrix_market::<f64>(&m).unwrap();
    assert_eq!((a.nrows(), a.nnz()), (400, 1920));
    // /dev/full: every write fails with ENOSPC.
    let out = spmv(&["gen", "poisson2d:n=20", "-o", "/dev/full"]);
    let stderr = clean_failure(&out, "gen to /dev/full");
    assert!(stderr.contains("-o") && stderr.contains("No space left on device"), "{stderr}");
    // JSON and solution outputs of a good run are complete.
    let (x, json) = (dir.join("x.mtx"), dir.join("s.json"));
    let (_, s) = spmv_json(&json, &["solve", "poisson2d:n=8", "--cpu", "-o", x.to_str().unwrap()]);
    assert_eq!(s["outcome"], "converged");
    let x = spmv::io::read_matrix_market::<f64>(&x).unwrap();
    assert_eq!((x.nrows(), x.ncols()), (64, 1));
    assert_eq!(files(&dir), ["m.mtx.gz", "s.json", "x.mtx"]);
}

#[test]
fn output_errors_name_their_option_and_cause() {
    let out = spmv(&["solve", "poisson2d:n=8", "--cpu", "-o", "/nonexistent-folder/x.mtx"]);
    let stderr = clean_failure(&out, "-o in a missing folder");
    assert!(
        stderr.contains("-o: /nonexistent-folder/x.mtx: No such file or directory"),
        "{stderr}"
    );
    assert!(!stderr.contains("JSON"), "{stderr}");
    let dir = temp_dir("output-errors");
    let folder = dir.to_str().unwrap();
    fails_with(&["gen", "poisson2d:n=4", "-o", folder], "a folder, not a file");
    fails_with(
        &["bench", "poisson2d:n=4", "--cpu", "--formats", "csr-scalar", "--json", folder],
        "--json",
    );
    let same = dir.join("same");
    let same = same.to_str().unwrap();
    fails_with(&["solve", "poisson2d:n=4", "--cpu", "-o", same, "--json", same], "the same file");
}

#[test]
fn negative_numbers_are_values_and_their_errors_name_the_argument() {
    for (args, message) in [
        (&["solve", "poisson2d:n=4", "--cpu", "--tol", "-1"][..], "tol = -1"),
        (&["solve", "poisson2d:n=4", "--cpu", "--tol", "-1e-3"][..], "tol = -0.001"),
        (&["pagerank", "kron:scale=6", "--cpu", "--alpha", "-0.5"][..], "alpha = -0.5"),
        (&["pagerank", "kron:scale=6", "--cpu", "--tol", "-1"][..], "tol = -1"),
        (&["pagerank", "kron:scale=6", "--cpu", "--exact-tol", "-1"][..], "--exact-tol -1"),
        (&["pagerank", "kron:scale=6", "--cpu", "--tie-tol", "-1"][..], "--tie-tol -1"),
        (&["solve", "poisson2d:n=4", "--cpu", "--max-iter", "0"][..], "max_iter = 0"),
        (&["solve", "poisson2d:n=4", "--cpu", "--check-every", "0"][..], "check_every = 0"),
        // Negative counts are values too, refused by the option's parser with its name.
        (&["solve", "poisson2d:n=4", "--cpu", "--max-iter", "-1"][..], "'--max-iter <MAX_ITER>'"),
        (&["bench", "poisson2d:n=4", "--cpu", "--reps", "-5"][..], "'--reps <REPS>'"),
        (&["pagerank", "kron:scale=6", "--cpu", "--runs", "-1"][..], "'--runs <RUNS>'"),
    ] {
        let out = spmv(args);
        let stderr = clean_failure(&out, &format!("{args:?}"));
        assert!(stderr.contains(message), "{args:?}: expected '{message}' in:\n{stderr}");
        for wrong in ["unexpected argument", "No such file", "generator", "unsupported"] {
            assert!(!stderr.contains(wrong), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn cpu_warmups_are_reported_as_run() {
    let (out, r) = spmv_json(
        &temp_dir("cpu-warmup").join("r.json"),
        &words("bench poisson2d:n=8 --cpu --formats csr-scalar --reps 3 --warmup 100000"),
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("median of 3 runs after 3 warm-up"), "{stdout}");
    assert!(stdout.contains("3 warm-up runs, not the 100000 asked"), "{stdout}");
    assert_eq!(r["warmup"], 3);
    assert!(r["note"].as_str().unwrap().contains("not the 100000 asked"), "{r}");
}

#[test]
fn matched_non_finite_rows_have_no_relative_error() {
    let (out, r) = spmv_json_on_mtx(
        "non-finite-error",
        "inf.mtx",
        "2 2 2\n1 1 inf\n2 2 1\n",
        "bench PATH --cpu --formats csr-scalar --allow-non-finite --reps 3",
    );
    let stdout = text(&out.stdout);
    let row = stdout.lines().find(|l| l.starts_with("inf ")).expect("the row");
    assert!(row.ends_with(" ok") && !row.contains(" inf "), "{row}");
    assert_eq!(r["results"][0]["max_rel_error"].as_f64(), Some(0.0), "{r}");
}

#[test]
fn names_are_printed_escaped_on_one_line() {
    let dir = temp_dir("forged-names");
    let name = "a\nforged: 1 x 1, nnz 1\x1b[2J.mtx";
    let path = write_mtx(&dir, name, "2 2 1\n1 1 1.0\n");
    let path = path.to_str().unwrap();
    let out = spmv(&["info", path]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.contains("a\\nforged") && stdout.contains("\\u{1b}[2J"), "{stdout}");
    assert!(!stdout.contains('\x1b'), "{stdout}");
    // The benchmark's table and progress, PageRank's and explain's headers, the same.
    let out = spmv_ok(&["bench", path, "--cpu", "--formats", "csr-scalar", "--reps", "2"]);
    for stream in [text(&out.stdout), text(&out.stderr)] {
        assert!(
            !stream.lines().any(|l| l.starts_with("forged")) && !stream.contains('\x1b'),
            "{stream}"
        );
    }
    for args in [&["pagerank", path, "--cpu"][..], &["explain", path][..]] {
        let out = spmv(args);
        let stdout = text(&out.stdout);
        assert!(!stdout.lines().any(|l| l.starts_with("forged")), "{args:?}: {stdout}");
        assert!(!stdout.contains('\x1b'), "{args:?}: {stdout}");
    }
    // A name that does not load: the error line is escaped too.
    let bad = write_file(&dir, "b\nforged\x1b[2J.mtx", "not a matrix\n");
    // And so are the paths of I/O errors: a file that is missing, an output folder that is.
    let missing = dir.join("c\nforged\x1b[2J.mtx");
    let no_folder = dir.join("d\nforged\x1b[2J").join("x.mtx");
    for args in [
        vec!["info", bad.to_str().unwrap()],
        vec!["info", missing.to_str().unwrap()],
        vec!["solve", "poisson2d:n=4", "--cpu", "-o", no_folder.to_str().unwrap()],
    ] {
        let out = spmv(&args);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            !stderr.lines().any(|l| l.starts_with("forged")) && !stderr.contains('\x1b'),
            "{args:?}: {stderr}"
        );
    }
}
