//! What `bench` and `pagerank` share: the backend (GPU unless `--cpu` or none is usable),
//! the format specs of `--formats`, the precisions of `--precision`, and the end of a run
//! (the JSON report, the exit code).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use spmv::choice::{self, Choice};
use spmv::formats;
use spmv::{Backend, Precision};

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
pub fn format_specs(list: &str, deterministic: bool) -> Result<Vec<Choice>> {
    let specs = choice::parse_list(list)?;
    if specs.is_empty() {
        bail!("no format given (see `spmv formats`)");
    }
    if !deterministic {
        return Ok(specs);
    }
    let all = list.split(',').any(|p| p.trim().eq_ignore_ascii_case("all"));
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
    let p: Vec<Precision> = list
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().map_err(anyhow::Error::msg))
        .collect::<Result<_>>()?;
    if p.is_empty() {
        bail!("no precision given (f64, f32, f16)");
    }
    Ok(p)
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

/// Most parts of `--devices`.
const MAX_PARTS: usize = 1024;

/// The devices of a `--devices` value: a count (`2`: devices 0 and 1) or a list of ordinals
/// (`0,1`; one may repeat, putting several parts on one device).
pub fn devices(list: &str) -> Result<Vec<usize>> {
    let items: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let numbers: Vec<usize> = items
        .iter()
        .map(|s| {
            s.parse::<usize>().with_context(|| {
                format!("--devices {list}: '{s}' is not a device count or ordinal")
            })
        })
        .collect::<Result<_>>()?;
    match numbers.as_slice() {
        [] => bail!("--devices: no device given"),
        [0] => bail!("--devices 0: give a count of at least 1, or a list of ordinals such as 0,1"),
        // A count sizes the list of parts: more than any host has GPUs is refused, not allocated.
        [count] if items.len() == 1 && *count > MAX_PARTS => bail!(
            "--devices {count}: at most {MAX_PARTS} parts (a count of devices, or a list of ordinals)"
        ),
        [count] if items.len() == 1 => Ok((0..*count).collect()),
        _ if numbers.len() > MAX_PARTS => {
            bail!("--devices: {} parts given, at most {MAX_PARTS}", numbers.len())
        }
        _ => Ok(numbers),
    }
}

/// One handle per distinct device of `ordinals`, repeated where an ordinal repeats.
pub fn open_gpus(ordinals: &[usize]) -> Result<Vec<std::sync::Arc<spmv::gpu::Gpu>>> {
    let mut open: Vec<(usize, std::sync::Arc<spmv::gpu::Gpu>)> = Vec::new();
    ordinals
        .iter()
        .map(|&d| {
            if let Some((_, g)) = open.iter().find(|(o, _)| *o == d) {
                return Ok(g.clone());
            }
            let g = spmv::gpu::Gpu::new(d).with_context(|| format!("--devices: device {d}"))?;
            open.push((d, g.clone()));
            Ok(g)
        })
        .collect()
}

/// `a` over `gpus` as `spec`, its halo moved by `exchange` ("peer" or "nccl").
pub fn distribute<T: spmv::Scalar>(
    a: &spmv::Csr<T>,
    gpus: &[std::sync::Arc<spmv::gpu::Gpu>],
    spec: &Choice,
    exchange: &str,
) -> Result<spmv::distributed::DistributedMatrix<T>> {
    let mut d = spmv::distributed::DistributedMatrix::new(a, gpus, spec)?;
    d.set_exchange(exchange.parse()?).with_context(|| format!("--exchange {exchange}"))?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn devices_take_a_count_or_a_list() {
        assert_eq!(super::devices("2").unwrap(), [0, 1]);
        assert_eq!(super::devices("1").unwrap(), [0]);
        assert_eq!(super::devices("0,1").unwrap(), [0, 1]);
        assert_eq!(super::devices("0,0,1").unwrap(), [0, 0, 1]);
        assert_eq!(super::devices("3,").unwrap(), [0, 1, 2]);
        for bad in ["", "0", "x", "1,y", "1025", "18446744073709551615"] {
            assert!(super::devices(bad).is_err(), "{bad}");
        }
    }
}
