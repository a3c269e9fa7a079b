//! The `spmv` binary end to end (on the CPU when no GPU is present).

use crate::common;

use common::{
    fails_with, spmv, spmv_json, spmv_json_on_mtx, spmv_ok, temp_dir, text, words, words_at,
    write_file, write_mtx,
};

/// A 3 x 2 matrix: not square, so neither reordered nor solved.
const TALL: &str = "3 2 2\n1 1 1.0\n3 2 2.0\n";

#[test]
fn bench_reorders_on_request_and_says_so() {
    let (out, report) = spmv_json_on_mtx(
        "reorder",
        "tall.mtx",
        TALL,
        "bench poisson2d:nx=30 PATH --cpu --reps 1 --formats csr-vector,csr5:values=auto --reorder rcm --wide",
    );
    let stdout = text(&out.stdout);
    // The non-square matrix cannot be reordered: its rows are unsupported and say why.
    assert!(stdout.contains("UNSUPPORTED (unsupported: reordering permutes rows and columns alike: it needs a square matrix, not 3 x 2)"), "{stdout}");
    assert!(
        stdout.contains("csr5:values=auto+rcm") && stdout.contains("reordered by rcm"),
        "{stdout}"
    );
    let first = &report["results"][0];
    assert_eq!(
        (first["format"].as_str(), first["reorder"].as_str(), first["status"].as_str()),
        (Some("csr-vector+rcm"), Some("rcm"), Some("ok"))
    );
    assert!(first["reorder_ms"].as_f64().unwrap() >= 0.0);
    fails_with(&["bench", "poisson2d:nx=4", "--cpu", "--reorder", "metis"], "metis");
}

#[test]
fn formats_lists_the_registry() {
    let out = spmv(&["formats"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    for name in ["csr-scalar", "csr-vector", "cusparse-alg1", "cusparse-alg2"] {
        assert!(stdout.contains(name), "{name} missing from:\n{stdout}");
    }
}

#[test]
fn formats_lists_every_parameter_with_its_default() {
    let stdout = text(&spmv(&["formats"]).stdout);
    for info in spmv::formats::registry::<f64>() {
        for p in info.params {
            assert!(
                stdout.contains(&format!("{}={}", p.key, p.default)),
                "{} {} missing:\n{stdout}",
                info.name,
                p.key
            );
        }
    }
    assert!(stdout.contains("sigma=auto") && stdout.contains("max_padding=20"), "{stdout}");
}

#[test]
fn bench_takes_format_specs_and_records_the_canonical_spec() {
    let (_, report) = spmv_json(
        &temp_dir("specs").join("r.json"),
        &words("bench poisson2d:nx=30 --cpu --reps 1 --formats csr-vector:lanes=4,sell-c-sigma:c=16,sigma=64,ell"),
    );
    let got: Vec<(&str, &str)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["format"].as_str().unwrap(), r["spec"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("csr-vector:lanes=4", "csr-vector:lanes=4,values=full,cols=full,offsets=auto"),
            ("sell-c-sigma:c=16,sigma=64", "sell-c-sigma:c=16,sigma=64,offsets=auto"),
            ("ell", "ell:max_padding=20"),
        ]
    );
    for (spec, want) in [
        (
            "sell-c-sigma:width=3",
            "format sell-c-sigma: unknown parameter 'width'; valid keys: c, sigma",
        ),
        ("csr-vector:lanes=3", "lanes=3 must be 2, 4, 8, 16, 32 or auto"),
        ("ell:max_padding=x", "max_padding=x must be a number"),
    ] {
        fails_with(&["bench", "poisson2d:nx=4", "--cpu", "--formats", spec], want);
    }
}

#[test]
fn gen_writes_a_file_that_info_reads() {
    let dir = temp_dir("gen");
    let file = dir.join("p.mtx.gz");
    spmv_ok(&["gen", "poisson2d:nx=10", "-o", file.to_str().unwrap()]);
    let out = spmv_ok(&["info", file.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("100 x 100, nnz 460"), "{}", text(&out.stdout));
}

#[test]
fn bench_runs_checks_and_writes_json() {
    let (out, report) = spmv_json(
        &temp_dir("bench").join("r.json"),
        &words("bench poisson2d:nx=40 random:rows=500,cols=300,mean=7 --precision f64,f32 --reps 3 --warmup 1"),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stderr.contains("running on the GPU") || stderr.contains("running on the CPU"),
        "{stderr}"
    );
    // 2 matrices x 2 precisions x every registered format and chooser ("all"; on the CPU
    // without cuSPARSE's)
    let on_cpu = stderr.contains("running on the CPU");
    let registry = spmv::formats::registry::<f64>();
    let formats = registry.iter().filter(|f| !(on_cpu && f.library_baseline)).count();
    let expected = 2 * 2 * (formats + spmv::choice::CHOOSERS.len());
    assert!(stdout.contains(&format!("# all {expected} results match the oracle")), "{stdout}");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), expected);
    assert!(results.iter().all(|r| r["status"] == "ok" && r["median_ms"].as_f64().unwrap() > 0.0));
    assert!(results.iter().all(|r| r["back_to_back_ms"].as_f64().unwrap() > 0.0));
    assert_eq!(report["schema_version"], 2);
    assert!(report["machine"]["copy_gbs"].as_f64().unwrap() > 0.0);
}

#[test]
fn bench_measures_blocks_of_vectors_and_the_transpose() {
    let (out, report) = spmv_json(
        &temp_dir("bench-products").join("r.json"),
        &words("bench random:rows=300,cols=200,mean=6 --formats csr-vector,cusparse-alg1,auto --rhs 1,3,8 --layout col --transpose --reps 2 --warmup 0"),
    );
    let stdout = text(&out.stdout);
    // 3 formats x (A·x, k = 3, k = 8, Aᵀ·x), each checked against its oracles
    assert!(stdout.contains("# all 12 results match the oracle"), "{stdout}");
    let results = report["results"].as_array().unwrap();
    let products: Vec<&str> = results.iter().map(|r| r["product"].as_str().unwrap()).collect();
    for p in ["A·x", "A·X k=3,col", "A·X k=8,col", "Aᵀ·x"] {
        assert_eq!(products.iter().filter(|&&q| q == p).count(), 3, "{p}: {products:?}");
    }
    let block = results.iter().find(|r| r["format"] == "csr-vector k=8,col").unwrap();
    assert_eq!(block["vectors"], 8);
    // The summary compares each product with the baseline's rows of the same product.
    assert!(stdout.contains("csr-vector k=8,col"), "{stdout}");
    assert!(stdout.contains("auto Aᵀ"), "{stdout}");
    let e = spmv(&words("bench poisson2d:nx=8 --rhs 0"));
    assert!(!e.status.success());
    assert!(text(&e.stderr).contains("--rhs"), "{}", text(&e.stderr));
}

#[test]
fn bench_on_the_cpu_when_asked() {
    let out = spmv(&["bench", "poisson2d:nx=8", "--cpu", "--reps", "2", "--formats", "csr-scalar"]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("running on the CPU"));
    assert!(text(&out.stdout).starts_with("# CPU"));
}

#[test]
fn bad_inputs_fail_with_a_clear_message() {
    fails_with(&["bench", "no/such/file.mtx"], "no/such/file.mtx: No such file or directory");

    fails_with(&["bench", "poisson2d:nx=4", "--formats", "nope"], "known formats: csr-scalar");

    let file = write_mtx(&temp_dir("bad"), "bad.mtx", "3 3 2\n1 1 1.0\n2 x 2.0\n");
    fails_with(&["bench", file.to_str().unwrap(), "--cpu", "--reps", "1"], "line 4");
}

#[test]
fn deterministic_keeps_only_deterministic_formats() {
    let (_, report) = spmv_json(
        &temp_dir("deterministic").join("r.json"),
        &["bench", "poisson2d:nx=8", "--cpu", "--reps", "1", "--deterministic"],
    );
    let ran: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["format"].as_str().unwrap())
        .collect();
    // On the CPU, without cuSPARSE's formats ("all" there leaves them out).
    let expected: Vec<&str> = spmv::formats::deterministic_registry::<f64>()
        .iter()
        .filter(|f| !f.library_baseline)
        .map(|f| f.name)
        .collect();
    assert_eq!(ran, expected);
    assert!(
        ran.contains(&"brcp") && !ran.contains(&"brc") && !ran.contains(&"coo-atomic"),
        "{ran:?}"
    );

    let out =
        spmv(&["bench", "poisson2d:nx=8", "--cpu", "--deterministic", "--formats", "brcp,brc"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--deterministic: brc may give different bits"), "{stderr}");
    assert!(stderr.contains("deterministic formats: csr-scalar"), "{stderr}");
}

#[test]
fn explain_shows_the_features_the_ranking_and_the_choice() {
    let out = spmv(&words("explain poisson2d:nx=40 --precision f64,f16 --top 3 --deterministic"));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    for want in [
        "# poisson2d:nx=40 (f64)",
        "# poisson2d:nx=40 (f16)",
        "features (",
        "nearest measured matrices",
        "deterministic only",
        "   1. ",
        "chosen: ",
        "products at the estimated",
        "confidence: on the ",
        "x their best (the fastest on ",
        "tune: ",
        "on the CPU backend: csr-vector",
    ] {
        assert!(stdout.contains(want), "{want} missing:\n{stdout}");
    }
    fails_with(&["explain", "no-such-file.mtx"], "No such file");
}

#[test]
fn bench_names_the_format_auto_chose() {
    let (out, report) = spmv_json(
        &temp_dir("auto").join("r.json"),
        &words("bench poisson2d:nx=30 --cpu --reps 1 --formats auto,tune:budget_ms=200 --wide"),
    );
    for (r, name) in
        report["results"].as_array().unwrap().iter().zip(["auto", "tune:budget_ms=200"])
    {
        let chosen = r["chosen"].as_str().unwrap();
        assert_eq!((r["format"].as_str(), r["status"].as_str()), (Some(name), Some("ok")));
        assert!(text(&out.stdout).contains(&format!("{name}({chosen})")), "{}", text(&out.stdout));
    }
    fails_with(
        &["bench", "poisson2d:nx=4", "--cpu", "--formats", "tune:budget_ms=0"],
        "budget_ms=0",
    );
}

#[test]
fn solve_writes_the_solution_and_reports_failures() {
    let dir = temp_dir("solve");
    let (x, json, rhs) = (dir.join("x.mtx"), dir.join("s.json"), dir.join("b.mtx"));
    let (out, report) = spmv_json(
        &json,
        &words_at(
            "solve poisson2d:n=20 --cpu --rhs random --precond jacobi --tol 1e-10 -o PATH",
            &x,
        ),
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("converged after"), "{stdout}{}", text(&out.stderr));
    assert_eq!(
        (report["outcome"].as_str(), report["method"].as_str(), report["rows"].as_u64()),
        (Some("converged"), Some("cg"), Some(400))
    );
    assert!(report["true_residual"].as_f64().unwrap() <= 1e-9);
    assert!(
        report["solve_ms"].as_f64().unwrap() >= 0.0
            && report["graph"] == false
            && report["parts"].is_null()
    );
    // Repeated solves: the median of all but the first.
    let (_, report) =
        spmv_json(&json, &["solve", "poisson2d:n=10", "--cpu", "--repeat", "3", "--no-graph"]);
    assert!(report["first_solve_ms"].as_f64().unwrap() >= 0.0);
    // The solution file: a 400 x 1 array whose values read back.
    let written = std::fs::read_to_string(&x).unwrap();
    let mut lines = written.lines().filter(|l| !l.starts_with('%'));
    assert_eq!(lines.next(), Some("400 1"));
    assert_eq!(lines.filter(|l| l.parse::<f64>().is_ok()).count(), 400);
    // BiCGSTAB with a right-hand side from a file.
    let b: String = (0..400).map(|i| format!("{}\n", (i % 7) as f64 - 3.0)).collect();
    std::fs::write(&rhs, format!("%%MatrixMarket matrix array real general\n400 1\n{b}")).unwrap();
    let out = spmv(&words_at(
        "solve poisson2d:n=20 --cpu --method bicgstab --rhs PATH --format csr5",
        &rhs,
    ));
    assert!(
        out.status.success() && text(&out.stdout).contains("bicgstab (csr5"),
        "{}",
        text(&out.stdout)
    );
    // An indefinite matrix: CG says so and the exit status is not 0; auto (the default)
    // takes MINRES, which solves it; GMRES too, its restart named.
    let indefinite = write_mtx(&dir, "indefinite.mtx", "2 2 2\n1 1 1.0\n2 2 -1.0\n");
    let path = indefinite.to_str().unwrap();
    let out = spmv(&["solve", path, "--cpu", "--format", "csr-scalar", "--method", "cg"]);
    assert!(
        !out.status.success() && text(&out.stdout).contains("not positive definite"),
        "{}",
        text(&out.stdout)
    );
    let (out, report) = spmv_json(&json, &["solve", path, "--cpu"]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("minres (auto: symmetric, a diagonal entry ≤ 0: minres)"));
    assert_eq!((&report["method"], &report["outcome"]), (&"minres".into(), &"converged".into()));
    let out = spmv(&["solve", "poisson2d:n=12", "--cpu", "--method", "gmres", "--restart", "5"]);
    assert!(
        out.status.success() && text(&out.stdout).contains("gmres(5)"),
        "{}",
        text(&out.stdout)
    );
    fails_with(
        &["solve", "poisson2d:n=5", "--cpu", "--method", "gmres", "--restart", "0"],
        "restart",
    );
    fails_with(&["solve", "poisson2d:n=5", "--cpu", "--method", "lsqr"], "auto");
    // Bad input: a clear message each.
    let tall = write_mtx(&dir, "tall.mtx", TALL);
    fails_with(&["solve", tall.to_str().unwrap(), "--cpu"], "square matrix");
    fails_with(
        &["solve", "poisson2d:n=5", "--cpu", "--rhs", rhs.to_str().unwrap()],
        "B needs 25 rows",
    );
    fails_with(&["solve", "poisson2d:n=5", "--cpu", "--tol", "0"], "tolerance");
    fails_with(&["solve", "poisson2d:n=5", "--cpu", "--repeat", "0"], "repeat");
    fails_with(
        &["solve", "poisson2d:n=5", "--cpu", "--precond", "jacobi", "--format", "nope"],
        "nope",
    );
}

/// Several right-hand sides (a file of k columns, or random:K) are solved together: one
/// report with each column's figures, X written as an n × k array whose column j is the
/// solution of b_j alone (the same bits); bad blocks are refused with the reason.
#[test]
fn solve_takes_several_right_hand_sides() {
    let dir = temp_dir("solve-block");
    let (b_path, json, x_path) = (dir.join("b.mtx"), dir.join("r.json"), dir.join("x.mtx"));
    // poisson2d:n=20 (400 rows), columns: ones, (i mod 7) − 3, i / 400.
    let column = |j: usize, i: usize| match j {
        0 => 1.0,
        1 => (i % 7) as f64 - 3.0,
        _ => i as f64 / 400.0,
    };
    let values: String =
        (0..3).flat_map(|j| (0..400).map(move |i| format!("{}\n", column(j, i)))).collect();
    std::fs::write(&b_path, format!("%%MatrixMarket matrix array real general\n400 3\n{values}"))
        .unwrap();
    let (b, x) = (b_path.to_str().unwrap(), x_path.to_str().unwrap());
    let (out, report) =
        spmv_json(&json, &["solve", "poisson2d:n=20", "--cpu", "--rhs", b, "-o", x]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    let columns = report["columns"].as_array().unwrap();
    assert_eq!(columns.len(), 3);
    assert!(columns.iter().all(|c| c["outcome"] == "converged" && c["method"] == "cg"));
    assert!(text(&out.stdout).contains("column 2: cg converged"), "{}", text(&out.stdout));
    let most = columns.iter().map(|c| c["iterations"].as_u64().unwrap()).max().unwrap();
    assert_eq!(report["iterations"].as_u64(), Some(most));
    let written = std::fs::read_to_string(&x_path).unwrap();
    let mut lines = written.lines().filter(|l| !l.starts_with('%'));
    assert_eq!(lines.next(), Some("400 3"));
    let all: Vec<&str> = lines.collect();
    // Column 1 alone: the same digits.
    let one: String = (0..400).map(|i| format!("{}\n", column(1, i))).collect();
    std::fs::write(&b_path, format!("%%MatrixMarket matrix array real general\n400 1\n{one}"))
        .unwrap();
    spmv_ok(&["solve", "poisson2d:n=20", "--cpu", "--rhs", b, "-o", x]);
    let single = std::fs::read_to_string(&x_path).unwrap();
    let single: Vec<&str> = single.lines().filter(|l| !l.starts_with('%')).skip(1).collect();
    assert_eq!(&all[400..800], &single[..]);
    // random:K: K columns of the test vector.
    let (out, report) = spmv_json(
        &json,
        &["solve", "poisson2d:n=12", "--cpu", "--rhs", "random:4", "--method", "minres"],
    );
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert_eq!(report["columns"].as_array().map(Vec::len), Some(4));
    // Bad blocks: a clear message each.
    fails_with(&["solve", "poisson2d:n=5", "--cpu", "--rhs", "random:0"], "count from 1");
    fails_with(&["solve", "poisson2d:n=5", "--cpu", "--rhs", "random:x"], "count from 1");
    fails_with(&["solve", "poisson2d:n=5", "--cpu", "--rhs", "random:100000"], "at most 1024");
    let wide = write_file(
        &dir,
        "wide.mtx",
        "%%MatrixMarket matrix coordinate real general\n25 5000 1\n1 1 1.0\n",
    );
    fails_with(
        &["solve", "poisson2d:n=5", "--cpu", "--rhs", wide.to_str().unwrap()],
        "at most 1024",
    );
}

#[test]
fn devices_need_a_gpu_and_a_valid_list() {
    // On the CPU (CI has no GPU; --cpu forces it elsewhere) a distributed run is refused with
    // the reason, for every command that takes --devices.
    for command in ["bench", "solve", "pagerank"] {
        fails_with(
            &[command, "poisson2d:nx=8", "--cpu", "--devices", "2"],
            "--devices needs a GPU",
        );
    }
    fails_with(
        &["bench", "poisson2d:nx=8", "--cpu", "--devices", "2", "--reorder", "rcm"],
        "--devices",
    );
    // --exchange goes with --devices, and names peer or nccl.
    for command in ["bench", "solve", "pagerank"] {
        fails_with(&[command, "poisson2d:nx=8", "--cpu", "--exchange", "nccl"], "--devices");
        fails_with(
            &[command, "poisson2d:nx=8", "--cpu", "--devices", "2", "--exchange", "mpi"],
            "peer",
        );
    }
    fails_with(&["bench", "poisson2d:nx=8", "--cpu", "--no-overlap"], "--devices");
}

#[test]
fn formats_align_their_parameters_and_gen_lists_the_families() {
    let stdout = text(&spmv(&["formats"]).stdout);
    // Every parameter line's text starts in the same column, after its key=default.
    let starts: std::collections::BTreeSet<usize> = stdout
        .lines()
        .filter(|l| l.starts_with(' ') && l.contains('='))
        .map(|l| {
            let rest = l.trim_start().split_once(' ').map_or("", |(_, r)| r);
            l.len() - rest.trim_start().len()
        })
        .collect();
    assert_eq!(starts.len(), 1, "parameter texts start in columns {starts:?}:\n{stdout}");
    assert!(!stdout.contains("not deterministic [not deterministic]"), "{stdout}");
    // Long descriptions continue under their own column, within 100 characters.
    assert!(stdout.lines().all(|l| l.chars().count() <= 100), "{stdout}");
    let help = text(&spmv(&["gen", "--help"]).stdout);
    for (family, example, _) in spmv::io::gen::EXAMPLES {
        assert!(help.contains(family) && help.contains(example), "{family} missing:\n{help}");
    }
}

#[test]
fn the_cpu_bench_reads_as_a_cpu_run() {
    let out = spmv_ok(&words("bench poisson2d:nx=20 --cpu --reps 2 --warmup 0"));
    let stdout = text(&out.stdout);
    // No cuSPARSE rows (a plain CSR loop on the CPU), no "CPU on CPU", no NaN speed-ups.
    assert!(!stdout.contains("cusparse"), "{stdout}");
    assert!(stdout.starts_with("# CPU (") && !stdout.contains("CPU on CPU"), "{stdout}");
    let one =
        text(&spmv_ok(&words("bench poisson2d:nx=20 --cpu --formats csr-vector --reps 2")).stdout);
    assert!(!one.contains("NaN") && one.contains("(no baseline)"), "{one}");
}
