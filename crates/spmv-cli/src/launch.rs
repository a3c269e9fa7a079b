//! `spmv launch` (one process per rank on this machine, with torchrun's variables) and `spmv
//! world` (where this process stands in a multi-process run, and whether the ranks meet).

use std::process::{Child, Command, ExitCode, ExitStatus};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use spmv::distributed::world::{Rendezvous, World, LAUNCHERS, RENDEZVOUS_TIMEOUT};

#[derive(clap::Args)]
pub struct LaunchArgs {
    /// Processes to start, 1 to 1024: ranks 0 to n − 1, each with LOCAL_RANK = its rank.
    #[arg(short = 'n', long = "nproc", value_parser = clap::value_parser!(u16).range(1..=1024))]
    nproc: u16,
    /// Port of rank 0's rendezvous on 127.0.0.1 (default: a free one below the ephemeral ports).
    #[arg(long)]
    port: Option<u16>,
    /// The spmv command each rank runs, after `--` (e.g. `-- world`).
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// Starts the ranks and waits for them; when one fails, says which, and stops the others
/// that have not ended [`STOP_GRACE`] later. The exit status is the first failed rank's.
pub fn launch(args: LaunchArgs) -> Result<ExitCode> {
    if let Some(world) = World::from_env()? {
        bail!(
            "already rank {} of {} ({}'s variables): spmv launch starts a run, it does not nest",
            world.rank,
            world.size,
            world.launcher
        );
    }
    let port = match args.port {
        Some(port) => port,
        // Free now, and outside the ephemeral ports; rank 0 binds it a moment later.
        None => spmv::distributed::world::free_port()?,
    };
    let exe = std::env::current_exe().context("the spmv executable's path")?;
    let n = usize::from(args.nproc);
    let mut ranks: Vec<Option<Child>> = Vec::with_capacity(n);
    for rank in 0..n {
        let mut command = Command::new(&exe);
        command.args(&args.command);
        // Other launchers' variables would not describe this run.
        for (_, rank_var, size_var, local_var) in LAUNCHERS {
            command.env_remove(rank_var).env_remove(size_var).env_remove(local_var);
        }
        command.env_remove("SPMV_RENDEZVOUS").env_remove("TORCHELASTIC_USE_AGENT_STORE");
        command
            .env("RANK", rank.to_string())
            .env("WORLD_SIZE", n.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("LOCAL_WORLD_SIZE", n.to_string())
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", port.to_string());
        match command.spawn() {
            Ok(child) => ranks.push(Some(child)),
            Err(e) => {
                stop(&mut ranks);
                bail!("cannot start rank {rank} ({}): {e}", exe.display());
            }
        }
    }
    // Poll all of them. A rank that exits with a failure may only be reporting its command's
    // outcome (a solve that did not converge exits 1 on every rank): the others get
    // STOP_GRACE to end too, then those still running (waiting for the failed one, say)
    // are stopped.
    let mut running = n;
    let mut failed: Option<(usize, ExitStatus, Instant)> = None;
    while running > 0 {
        for (rank, slot) in ranks.iter_mut().enumerate() {
            let Some(child) = slot.as_mut() else { continue };
            if let Some(status) = child.try_wait()? {
                *slot = None;
                running -= 1;
                if !status.success() && failed.is_none() {
                    failed = Some((rank, status, Instant::now()));
                }
            }
        }
        if let Some((rank, status, at)) = failed {
            if running > 0 && at.elapsed() >= STOP_GRACE {
                stop(&mut ranks);
                bail!(
                    "rank {rank} of {n} failed ({status}); the other ranks were stopped ({running} still running {} s later)",
                    STOP_GRACE.as_secs()
                );
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    match failed {
        None => Ok(ExitCode::SUCCESS),
        Some((rank, status, _)) => {
            eprintln!("spmv launch: rank {rank} of {n} failed ({status})");
            let code = status.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1);
            Ok(ExitCode::from(code.max(1)))
        }
    }
}

/// How long the other ranks may run on after one failed before they are stopped.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// Kills and reaps the ranks still running.
fn stop(ranks: &mut [Option<Child>]) {
    for mut child in ranks.iter_mut().filter_map(Option::take) {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Prints this process's place; in a run of several, meets the other ranks and (rank 0)
/// lists them with their host and process id.
pub fn world() -> Result<ExitCode> {
    let Some(world) = World::from_env()? else {
        let names: Vec<String> =
            LAUNCHERS.iter().map(|(name, rank, _, _)| format!("{rank} ({name})")).collect();
        println!("a single process: none of {} is set", names.join(", "));
        return Ok(ExitCode::SUCCESS);
    };
    let address = World::rendezvous_address()?;
    let started = Instant::now();
    let mut rendezvous = Rendezvous::connect(world, &address, RENDEZVOUS_TIMEOUT)?;
    let me = format!("{} {} {}", world.local_rank, host_name(), std::process::id());
    let all = rendezvous.all_gather(me.as_bytes())?;
    if world.rank == 0 {
        println!(
            "{} ranks ({}'s variables) met at {address} in {:.1} ms:",
            world.size,
            world.launcher,
            started.elapsed().as_secs_f64() * 1e3
        );
        println!("rank  local  host  pid");
        for (rank, place) in all.iter().enumerate() {
            let place = String::from_utf8_lossy(place);
            let mut words = place.split(' ');
            let (local, host, pid) = (words.next(), words.next(), words.next());
            println!(
                "{rank:>4}  {:>5}  {}  {}",
                local.unwrap_or("?"),
                spmv::error::printable(host.unwrap_or("?")),
                pid.unwrap_or("?")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// This machine's name, as the kernel has it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().replace(' ', "_"))
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "?".into())
}
