//! Prints ptxas's resource report (registers, shared memory, spills) for the kernels of one
//! module, compiled for sm_90 as the library compiles them. Needs NVRTC, not a GPU:
//!
//! `eval "$(scripts/cuda-tools.sh)"; cargo run --release -p spmv-lab --bin ptxas_report -- merge_csr [FILTER]`
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprintln!("usage: ptxas_report MODULE [FILTER]   (modules: {})", module_names());
        std::process::exit(2);
    };
    let Some(module) = spmv::all_kernel_modules().into_iter().find(|m| m.name == name.as_str())
    else {
        eprintln!("no kernel module '{name}' (modules: {})", module_names());
        std::process::exit(2);
    };
    match spmv::gpu::jit::compile_cubin(&module, "sm_90") {
        Ok((_, log)) => {
            let filter = args.get(1).map(String::as_str).unwrap_or("");
            let mut show = false;
            for line in log.lines() {
                if line.contains("Compiling entry function")
                    || line.contains("Function properties for")
                {
                    show = line.contains(filter);
                }
                if show {
                    println!("{line}");
                }
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

fn module_names() -> String {
    spmv::all_kernel_modules().iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}
