//! `spmv pagerank` end to end (on the CPU when no GPU is present).

use crate::common;

use common::{fails_with, spmv, spmv_json, temp_dir, text, words, words_at, write_file};

#[test]
fn ranks_a_small_graph_and_writes_json() {
    // 1 -> 2, 1 -> 3, 2 -> 3 (1-based); node 3 is dangling and ranks first.
    let dir = temp_dir("small");
    let file = write_file(
        &dir,
        "g.mtx",
        "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n1 3\n2 3\n",
    );
    let (out, report) = spmv_json(
        &dir.join("r.json"),
        &words_at("pagerank PATH --format csr-vector,lightspmv --precision f64,f32 --tol 1e-10 --exact --top 3 --runs 2", &file),
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("3 nodes, 3 edges, 1 dangling"), "{stdout}");
    let results = report["graphs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["top"][0][0], 2, "node 3 (0-based 2) ranks first: {r}");
        assert_eq!(r["agreement"]["same_position"], 3, "{r}");
        assert_eq!(r["identical_runs"], true, "{r}");
    }
    // The hand-computed rank of node 3 (see the library's unit tests).
    let (a, c) = (0.85f64, 0.15f64);
    let r2 = (3.0 - c * (2.0 + a / 2.0)) / (1.0 + 2.0 * a / 3.0 + a * a / 6.0);
    let got = results[0]["top"][0][1].as_f64().unwrap();
    assert!((got - r2).abs() < 1e-8, "{got} vs {r2}");
    assert!(report["graphs"][0]["exact"]["converged"].as_bool().unwrap());
}

#[test]
fn every_format_on_a_generated_graph() {
    let out = spmv(&words("pagerank powerlaw:n=3000,mean=5,exp=2.1 --format all --exact --top 0"));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let formats = spmv::formats::registry::<f64>().len() + spmv::choice::CHOOSERS.len();
    let rows = stdout.lines().filter(|l| l.ends_with("  ok") || l.contains("UNSUPPORTED")).count();
    assert_eq!(rows, formats, "{stdout}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    fails_with(&["pagerank", "random:rows=10,cols=5,mean=2"], "square");
    fails_with(&["pagerank", "poisson2d:n=4", "--format", "no-such-format"], "unknown format");
    fails_with(
        &["pagerank", "poisson2d:n=4", "--format", "brc", "--deterministic"],
        "--deterministic: brc",
    );
    fails_with(&["pagerank", "poisson2d:n=4", "--alpha", "1.5"], "alpha");
}

#[test]
fn reordered_products_give_the_ranks_in_the_original_node_order() {
    let (out, report) = spmv_json(
        &temp_dir("pagerank-reorder").join("r.json"),
        &words(
            "pagerank kron:scale=10 --cpu --format csr-vector --reorder rcm --exact --tol 1e-10",
        ),
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("csr-vector+rcm"), "{stdout}");
    let r = &report["graphs"][0]["results"][0];
    assert_eq!(r["status"], "ok", "{r}");
    assert!(r["reorder_ms"].as_f64().unwrap() >= 0.0, "{r}");
    // The same top nodes as the exact ranking, which was computed without reordering.
    assert_eq!(r["agreement"]["same_position"], 100, "{r}");
}
