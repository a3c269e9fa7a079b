//! What `bench` and `pagerank` share: the backend (GPU unless `--cpu` or none is usable),
//! the format specs of `--formats`, the precisions of `--precision`, and the end of a run
//! (the JSON report, the exit code).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use spmv::app::{RankPlace, Target};
use spmv::choice::{self, Choice};
use spmv::distributed::world::{Rendezvous, World, RENDEZVOUS_TIMEOUT};
use spmv::distributed::Exchange;
use spmv::distributed::Ranks;
use spmv::formats;
use spmv::reorder::Reordering;
use spmv::{Backend, Precision};

/// Where a command runs: the flags `bench`, `solve` and `pagerank` share, declared once.
#[derive(clap::Args)]
pub struct Placement {
    /// Run on the CPU even when a GPU is present.
    #[arg(long)]
    pub cpu: bool,
    /// Spread the matrix over several GPUs: a count (the first N devices) or a list of device
    /// ordinals, one row part each (`0,1`; an ordinal may repeat, which puts several parts on
    /// one GPU); each part in the format given (auto chooses per part). docs/scale.md.
    #[arg(long, value_parser = parse_devices)]
    pub devices: Option<Devices>,
    /// With --devices: how the halo of x travels between parts: peer (device-to-device
    /// copies, NVLink where present) or nccl (NCCL's send/receive; needs libnccl.so.2 on the
    /// library path, or SPMV_NCCL naming it).
    #[arg(long, default_value = "peer", value_parser = parse_exchange, requires = "devices")]
    pub exchange: Exchange,
}

/// The parts of `--devices`: device ordinals, one per part.
#[derive(Clone, Debug)]
pub struct Devices(pub Vec<usize>);

fn parse_devices(list: &str) -> std::result::Result<Devices, String> {
    spmv::app::parse_devices(list).map(Devices).map_err(|e| e.to_string())
}

fn parse_exchange(name: &str) -> std::result::Result<Exchange, String> {
    name.parse().map_err(|e: spmv::Error| e.to_string())
}

/// A flag taking one of `names` (listed by clap in --help and in its error), parsed as T.
pub fn one_of<T>(names: &'static [&'static str]) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names).try_map(|s| s.parse::<T>())
}

/// The `--reorder` value.
pub fn parse_reordering(name: &str) -> std::result::Result<Reordering, String> {
    Reordering::parse(name).map_err(|e| e.to_string())
}

impl Placement {
    /// Where the products run: the GPU unless `--cpu` is set or none can be used (said on
    /// stderr), or with `--devices` one part per listed GPU.
    pub fn target(&self) -> Result<Target> {
        let backend = backend(self.cpu);
        let devices = self.devices.as_ref().map(|Devices(d)| d.as_slice());
        if devices.is_some() && matches!(backend, Backend::Cpu) {
            bail!("--devices needs a GPU");
        }
        Target::new(backend, devices, self.exchange).context("--devices")
    }
}

/// This process's place in a multi-process run of more than one process (launched by
/// `spmv launch`, torchrun, mpirun or srun: docs/scale.md), where each process drives one
/// GPU; `None` for a process alone. Such a run places parts by itself: `--devices` and
/// `--cpu` are refused there.
pub fn multi_process(place: &Placement) -> Result<Option<World>> {
    let Some(world) = World::from_env()?.filter(|w| w.size > 1) else {
        return Ok(None);
    };
    if place.devices.is_some() || place.cpu {
        bail!(
            "this process is rank {} of {} ({}): each rank drives one GPU, so --devices and --cpu do not apply",
            world.rank,
            world.size,
            world.launcher
        );
    }
    Ok(Some(world))
}

/// A multi-process run's place: this rank's GPU (its local rank's device), the ranks met at
/// the rendezvous (`MASTER_ADDR:MASTER_PORT`, as torchrun sets them).
pub fn rank_place(world: World) -> Result<RankPlace> {
    let gpu = spmv::distributed::rank_gpu(&world)
        .with_context(|| format!("rank {} (local rank {})", world.rank, world.local_rank))?;
    let address = World::rendezvous_address()?;
    let ranks = Ranks::new(Rendezvous::connect(world, &address, RENDEZVOUS_TIMEOUT)?);
    Ok(RankPlace { gpu, ranks })
}

/// This rank's rows of `input` (the balanced partition's, found with the other ranks).
pub fn own_rows(
    input: &spmv::io::inputs::Input, options: &spmv::io::ReadOptions, place: &RankPlace,
) -> spmv::Result<(spmv::distributed::Partition, spmv::Csr<f64>, spmv::distributed::Phases)> {
    let (n, m) = place.ranks.agree(input.dims())?;
    if n != m {
        return Err(spmv::Error::Unsupported(format!(
            "a matrix spread over processes is square (x is split like the rows); this one is {n} x {m}"
        )));
    }
    spmv::distributed::own_rows(n, |rows| input.load_rows(rows, options), &place.ranks)
}

/// The GPU unless `cpu` is set or none can be used; says on stderr which and why.
pub fn backend(cpu: bool) -> Backend {
    if cpu {
        eprintln!("running on the CPU (--cpu)");
        return Backend::Cpu;
    }
    let backend = Backend::detect(); // says why on stderr when it falls back to the CPU
    eprintln!("running on the {}", backend.describe());
    backend
}

/// The specs of a `--formats` list (`all`, names, `name:key=value,...`). With
/// `deterministic`, `all` keeps only the deterministic formats and naming another is an error.
/// Whether a `--formats` list names "all".
pub fn names_all(list: &str) -> bool {
    list.split(',').any(|p| p.trim().eq_ignore_ascii_case("all"))
}

pub fn format_specs(list: &str, deterministic: bool) -> Result<Vec<Choice>> {
    let specs = choice::parse_list(list)?;
    if specs.is_empty() {
        bail!("no format given (see `spmv formats`)");
    }
    if !deterministic {
        return Ok(specs);
    }
    let all = names_all(list);
    let names = || {
        formats::deterministic_registry::<f64>()
            .iter()
            .map(|f| f.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if all {
        return Ok(specs.into_iter().filter(Choice::deterministic).collect());
    }
    let refused: Vec<String> =
        specs.iter().filter(|s| !s.deterministic()).map(Choice::label).collect();
    if !refused.is_empty() {
        bail!(
            "--deterministic: {} may give different bits from run to run; deterministic formats: {}",
            refused.join(", "),
            names()
        );
    }
    Ok(specs)
}

/// The precisions of a `--precision` list (`f64,f32`).
pub fn precisions(list: &str) -> Result<Vec<Precision>> {
    spmv::app::parse_precisions(list).context("--precision")
}

/// Fails now, before any work, when the output `path` of option `flag` cannot be written (its
/// folder is missing, no permission, a folder): nothing is created, so a run that fails later
/// leaves no empty file behind.
pub fn check_writable(path: Option<&Path>, flag: &str) -> Result<()> {
    if let Some(path) = path {
        spmv::io::output::check_writable(path).context(flag.to_string())?;
    }
    Ok(())
}

/// Writes `report` as JSON to `path` (option `flag`), when one is given: whole or not at all.
pub fn write_json(path: Option<&Path>, flag: &str, report: &impl serde::Serialize) -> Result<()> {
    if let Some(path) = path {
        spmv::io::output::write_file(path, |w| {
            serde_json::to_writer_pretty(&mut *w, report).map_err(std::io::Error::from)
        })
        .context(flag.to_string())?;
        eprintln!(
            "results written to {}",
            spmv::error::printable_name(&path.display().to_string())
        );
    }
    Ok(())
}

/// Failure when anything failed (`what` says what and where to look), success otherwise.
pub fn exit_code(failed: usize, what: &str) -> ExitCode {
    if failed > 0 {
        eprintln!("FAILED: {failed} {what}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
