//! One process per GPU (issue 34): the test starts this test binary once per rank, as a
//! launcher would (torchrun's variables, a rendezvous on a free loopback port); each rank
//! reads only its rows of the matrix, builds its part (`DistributedMatrix::for_rank`), runs a
//! product and a solve, and writes its rows of y and x; the parent runs the same on every
//! part from one process (`DistributedMatrix::new` over the same GPUs, the halo by NCCL) and
//! asks for the same bits, iteration counts and residuals. Needs NCCL and as many GPUs as
//! ranks (NCCL takes one rank per GPU): 2 ranks, and 4 where the machine has 4.

use std::path::{Path, PathBuf};
use std::process::Command;

use spmv::app::Named as _;
use spmv::choice::Choice;
use spmv::distributed::world::{Rendezvous, World};
use spmv::distributed::{own_rows, rank_gpu, DistributedMatrix, Exchange, Ranks};
use spmv::io::inputs::Input;
use spmv::reference::test_vector_rows;
use spmv::solve::{self, KrylovSettings, Method};

/// The variable that makes [`gpu_rank_child`] a rank: `spec;format;method;output file`.
const CHILD: &str = "SPMV_TEST_RANK_CASE";

/// The cases: a stencil (CG, MINRES, GMRES), a power-law and a Kronecker graph
/// (nonsymmetric: GMRES, BiCGSTAB) and a shared matrix file, in fixed formats and in `auto`
/// among the deterministic formats.
fn cases() -> Vec<(String, &'static str, Method)> {
    let mut cases = vec![
        ("poisson3d:n=20".to_string(), "csr-vector:lanes=8", Method::Cg),
        ("poisson3d:n=20".to_string(), "dia", Method::Minres),
        ("poisson3d:n=20".to_string(), "auto:only=deterministic", Method::Gmres),
        ("powerlaw:n=6000,mean=8,exp=2.1".to_string(), "csr-scalar", Method::Gmres),
        ("kron:scale=11".to_string(), "csr-vector:lanes=8", Method::Bicgstab),
    ];
    if let Some(file) = crate::common::named_matrix_file("bcsstk09") {
        cases.push((file.display().to_string(), "csr-vector:lanes=8", Method::Cg));
    }
    cases
}

fn settings() -> KrylovSettings {
    KrylovSettings { tol: 1e-9, max_iter: 400, ..KrylovSettings::default() }
}

fn input(spec: &str) -> Input {
    if Path::new(spec).is_file() {
        Input::File(PathBuf::from(spec))
    } else {
        Input::Spec(spec.to_string())
    }
}

/// y = A·x (x the test vector), then x of A·x = 1 by `method`, with the iterations and the
/// residual: the figures the ranks and the one process compare, as little-endian f64 words.
fn figures(d: &DistributedMatrix<f64>, method: Method) -> Vec<u64> {
    let rows = d.host_rows();
    let x = d.upload(&test_vector_rows::<f64>(rows.clone()), true).unwrap();
    let mut y = d.upload(&vec![f64::NAN; rows.len()], false).unwrap();
    d.spmv(&x, &mut y).unwrap();
    let y = d.download(&y).unwrap();
    let b = vec![1.0; rows.len()];
    let s = solve::solve(d, method, &b, None, &settings()).unwrap();
    let mut out = vec![s.iterations as u64, s.residual.to_bits(), s.true_residual.to_bits()];
    out.extend(y.iter().chain(&s.x).map(|v| v.to_bits()));
    out
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_rank_child() {
    // A rank of the test below; without its variable, nothing to do.
    let Ok(case) = std::env::var(CHILD) else { return };
    let [spec, format, method, output]: [&str; 4] =
        case.split(';').collect::<Vec<_>>().try_into().expect("spec;format;method;output");
    let world = World::from_env().unwrap().expect("the launcher's variables");
    let address = World::rendezvous_address().unwrap();
    let timeout = std::time::Duration::from_secs(120);
    let ranks = Ranks::new(Rendezvous::connect(world, &address, timeout).unwrap());
    let input = input(spec);
    let n = input.dims().unwrap().0;
    let options = spmv::io::ReadOptions::default();
    let (_, own, read) = own_rows(n, |r| input.load_rows(r, &options), &ranks).unwrap();
    assert_eq!(read.phases().len(), 3);
    let gpu = rank_gpu(&world).unwrap();
    let choice = Choice::parse(format).unwrap();
    let d = DistributedMatrix::for_rank(&own, &gpu, &choice, &ranks).unwrap();
    assert_eq!((d.nrows(), d.world().unwrap().rank), (n, world.rank));
    let setup = d.setup_phases().unwrap();
    let names: Vec<&str> = setup.phases().iter().map(|p| p.name.as_str()).collect();
    let want = ["partition", "renumber", "halo lists", "nccl id", "convert", "upload"];
    let want = [&want[..], &["halo plan", "nccl init", "nccl connect"]].concat();
    assert_eq!(names, want);
    let words = figures(&d, method.parse().unwrap());
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(format!("{output}.{}", world.rank), bytes).unwrap();
}

/// Starts `ranks` copies of this binary as the ranks of `case`; their figures, in rank order.
fn run_ranks(
    ranks: usize, (spec, format, method): (&str, &str, Method), dir: &Path,
) -> Vec<Vec<u64>> {
    let port = spmv::distributed::world::free_port().unwrap();
    let output = dir.join("rank");
    let children: Vec<_> = (0..ranks)
        .map(|rank| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "ranks::gpu_rank_child", "--include-ignored", "--nocapture"])
                .env(CHILD, format!("{spec};{format};{};{}", method.name(), output.display()))
                .envs([
                    ("RANK", rank.to_string()),
                    ("LOCAL_RANK", rank.to_string()),
                    ("WORLD_SIZE", ranks.to_string()),
                    ("MASTER_ADDR", "127.0.0.1".to_string()),
                    ("MASTER_PORT", port.to_string()),
                ])
                .spawn()
                .unwrap()
        })
        .collect();
    for (rank, mut child) in children.into_iter().enumerate() {
        assert!(child.wait().unwrap().success(), "{spec} {format}: rank {rank} of {ranks} failed");
    }
    (0..ranks)
        .map(|rank| {
            let bytes = std::fs::read(format!("{}.{rank}", output.display())).unwrap();
            bytes.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().unwrap())).collect()
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_one_process_per_gpu_gives_the_bits_of_one_process() {
    if !crate::distributed::nccl_or_skip() {
        return;
    }
    let count = crate::distributed::devices().len();
    if count < 2 {
        eprintln!("skipped: one process per GPU needs 2 GPUs, this machine has {count}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("spmv-ranks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for ranks in [2, 4].into_iter().filter(|&r| r <= count) {
        for (spec, format, method) in cases() {
            let a = input(&spec).load().unwrap();
            let choice = Choice::parse(format).unwrap();
            let mut d =
                DistributedMatrix::new(&a, &crate::distributed::gpus(ranks), &choice).unwrap();
            d.set_exchange(Exchange::Nccl).unwrap();
            let whole = figures(&d, method);
            let parts = run_ranks(ranks, (&spec, format, method), &dir);
            let (n, label) = (a.nrows(), format!("{spec} {format} {} over {ranks}", method.name()));
            for (rank, got) in parts.iter().enumerate() {
                assert_eq!(got[..3], whole[..3], "{label}: rank {rank}'s iterations and residuals");
            }
            // Each rank's rows of y, then of x, in rank order: the one process's y and x.
            let rows = |k: usize| {
                parts.iter().flat_map(move |p| {
                    let own = (p.len() - 3) / 2;
                    p[3 + k * own..3 + (k + 1) * own].to_vec()
                })
            };
            let (y, x): (Vec<u64>, Vec<u64>) = (rows(0).collect(), rows(1).collect());
            assert_eq!(y, whole[3..3 + n], "{label}: y");
            assert_eq!(x, whole[3 + n..], "{label}: x");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
