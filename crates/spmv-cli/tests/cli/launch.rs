//! Issue 34, the part a machine without GPUs can check: `spmv launch` starts ranks that find
//! each other through the rendezvous, a failing rank stops the run with its name, and `spmv
//! world` reads the launchers' variables.

use crate::common;

use std::process::Command;

use common::{spmv, spmv_ok, text};

#[test]
fn launched_ranks_meet_and_rank_0_lists_them() {
    let out = spmv_ok(&["launch", "-n", "3", "--", "world"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("3 ranks (torchrun / spmv launch's variables) met at 127.0.0.1:"),
        "{stdout}"
    );
    let ranks: Vec<&str> =
        stdout.lines().skip(2).map(|l| l.split_whitespace().next().unwrap_or("")).collect();
    assert_eq!(ranks, ["0", "1", "2"], "{stdout}");
}

#[test]
fn a_failing_rank_stops_the_run_and_is_named() {
    let out = spmv(&["launch", "-n", "2", "--", "info", "no-such-matrix.mtx"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("of 2 failed"), "{stderr}");
    let out = spmv(&["launch", "-n", "0", "--", "world"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn world_reads_the_launchers_variables() {
    let world = |vars: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_spmv"));
        command.arg("world");
        for name in [
            "RANK",
            "OMPI_COMM_WORLD_RANK",
            "PMI_RANK",
            "SLURM_PROCID",
            "MASTER_ADDR",
            "MASTER_PORT",
        ] {
            command.env_remove(name);
        }
        command.envs(vars.iter().copied()).output().unwrap()
    };
    let alone = world(&[]);
    assert!(text(&alone.stdout).contains("a single process"), "{}", text(&alone.stderr));
    let bad = world(&[("RANK", "one"), ("WORLD_SIZE", "2")]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains("RANK must be a non-negative integer"),
        "{}",
        text(&bad.stderr)
    );
    let no_address = world(&[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "")]);
    assert!(
        text(&no_address.stderr).contains("set MASTER_ADDR and MASTER_PORT"),
        "{}",
        text(&no_address.stderr)
    );
}

#[test]
fn ranks_refuse_what_one_process_per_gpu_does_not_do() {
    // Each rank drives one GPU: placing parts by hand is refused, on every rank.
    let out = spmv(&["launch", "-n", "2", "--", "solve", "poisson2d:n=8", "--devices", "2"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("each rank drives one GPU, so --devices and --cpu do not apply"),
        "{stderr}"
    );
    let out = spmv(&["launch", "-n", "2", "--", "pagerank", "kron:scale=8"]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("PageRank with one process per GPU is not written yet"), "{stderr}");
}

#[test]
fn ranks_without_a_gpu_say_so() {
    // On a machine without a GPU (CI) every rank stops at its device with the reason; with
    // GPUs (fewer than the ranks, or NCCL missing) the run fails naming the rank.
    let out = spmv(&["launch", "-n", "2", "--", "solve", "poisson2d:n=8", "--max-iter", "5"]);
    let stderr = text(&out.stderr);
    if stderr.contains("no GPU") {
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("rank 0 (local rank 0)") || stderr.contains("rank 1 (local rank 1)"),
            "{stderr}"
        );
    }
}
