//! The front door: read (or generate) a matrix, put it in a format on the GPU — or on the
//! CPU when there is none — and multiply.
//!
//! ```sh
//! cargo run --release --example quickstart                          # a generated matrix
//! cargo run --release --example quickstart -- m.mtx.gz brcp         # your matrix, a format
//! cargo run --release --example quickstart -- m.mtx.gz sell-c-sigma:c=32,sigma=1024
//! ```
//! `spmv formats` (or `spmv::formats::registry()`) lists the formats and their parameters.

use spmv::{Backend, FormatHandle, Matrix};

fn run(path: Option<&str>, spec: &str) -> spmv::Result<()> {
    let a = match path {
        Some(path) => Matrix::<f64>::read(path)?,
        None => Matrix::generate("poisson3d:n=32")?,
    };
    let backend = Backend::detect(); // the first GPU, else the CPU (with a message)
    let op = a.to_device(&backend, spec)?;
    println!(
        "{} x {} matrix, {} entries, as {} on the {}",
        op.nrows(),
        op.ncols(),
        op.nnz(),
        op.spec(),
        backend.describe()
    );

    let x = vec![1.0; op.ncols()];
    let mut y = vec![0.0; op.nrows()];
    op.apply(1.0, &x, 0.0, &mut y)?; // y = A·x
    let row_sums = y.clone();
    op.apply(2.0, &x, -1.0, &mut y)?; // y = 2·A·x − y = A·x again (up to rounding)
    let scale = row_sums.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let close = |a: &[f64], b: &[f64]| {
        a.iter().zip(b).all(|(a, b)| (a - b).abs() <= 1e-12 * scale * op.ncols() as f64)
    };
    assert!(close(&y, &row_sums));
    println!("y = A·1 holds the row sums; the first three: {:?}", &y[..3.min(y.len())]);

    // Aᵀ·y and A·X for a block of vectors (here 4 copies of x, column by column).
    let mut z = vec![0.0; op.ncols()];
    op.apply_transpose(1.0, &y, 0.0, &mut z)?;
    let x4 = x.repeat(4);
    let mut y4 = vec![0.0; 4 * op.nrows()];
    op.apply_block(1.0, &x4, 0.0, &mut y4, spmv::Block::columns(4))?;
    assert!(close(&y4[3 * op.nrows()..], &row_sums));

    // CG on A·x = A·1, on the operator's backend (a square A; SPD for CG to converge).
    if op.nrows() == op.ncols() {
        let solution = spmv::solve::cg(&op, &row_sums, None, &Default::default())?;
        println!("CG: {:?} after {} iterations", solution.outcome, solution.iterations);
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spec = args.get(1).map_or("csr-vector", String::as_str);
    match run(args.first().map(String::as_str), spec) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

// `cargo test` runs the example (Cargo.toml sets `test = true` for it).
#[test]
fn quickstart_runs() {
    run(None, "csr-vector").unwrap();
    run(None, "sell-c-sigma:c=32,sigma=64").unwrap();
}
