//! Output files written whole or not at all: the text goes to a temporary file beside the
//! target, which is renamed over the target only once every byte is written and synced. A
//! failure (a full disk, an error before the end) leaves the target as it was, never empty or
//! cut short. Every file the library and the CLI write (Matrix Market, JSON reports, solutions)
//! goes through [`write_file`]. JSON reports begin with their [`Provenance`].

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::error::{Error, Result};

/// Which code wrote a JSON report (`spmv bench`'s, `spmv solve`'s, `spmv pagerank`'s): its
/// first fields.
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// Version of the report's JSON layout; bumped when a field changes meaning.
    pub schema_version: u32,
    /// Version of the `spmv` crate that wrote it.
    pub spmv_version: String,
    /// The commit the binary was built from ([`crate::COMMIT`]), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl Provenance {
    /// This build's provenance for a report of layout `schema_version`.
    pub fn of_layout(schema_version: u32) -> Self {
        Provenance {
            schema_version,
            spmv_version: env!("CARGO_PKG_VERSION").to_string(),
            commit: crate::COMMIT.map(str::to_string),
        }
    }
}

/// Writes the file `path` with `write`, atomically: `write` fills a temporary file in the
/// same folder, which replaces `path` once written, flushed and synced. On any error the
/// temporary file is removed and `path` is untouched; the error names `path`. A target that
/// exists and is not a regular file (`/dev/stdout`, a pipe) is written directly.
pub fn write_file<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
{
    let io = |e| Error::io(path, e);
    if let Some(special) = special_target(path) {
        let mut w = BufWriter::new(special.map_err(io)?);
        return write(&mut w).and_then(|()| w.flush()).map_err(io);
    }
    refuse_folder(path)?;
    let (tmp, file) = temporary_beside(path).map_err(io)?;
    let written = (|| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        // A full disk may show only here (delayed allocation): before the rename, not after.
        file.sync_all()
    })()
    .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

/// Fails when `path` cannot be written, without creating or changing it: its folder must
/// exist and take a new file (a temporary one is created there and removed), and `path` must
/// not be a folder. Lets a run fail before its work rather than at the end.
pub fn check_writable(path: &Path) -> Result<()> {
    let io = |e| Error::io(path, e);
    if let Some(special) = special_target(path) {
        return special.map(drop).map_err(io);
    }
    refuse_folder(path)?;
    let (tmp, file) = temporary_beside(path).map_err(io)?;
    drop(file);
    let _ = std::fs::remove_file(tmp);
    Ok(())
}

/// An existing target that is not a regular file nor a folder (a device, a pipe), opened for
/// writing; `None` for anything else.
fn special_target(path: &Path) -> Option<std::io::Result<File>> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() || meta.is_dir() {
        return None;
    }
    Some(OpenOptions::new().write(true).open(path))
}

fn refuse_folder(path: &Path) -> Result<()> {
    if path.is_dir() || path.as_os_str().is_empty() {
        let what = if path.as_os_str().is_empty() { "an empty file name" } else { "a folder" };
        return Err(Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{what}, not a file")),
        ));
    }
    Ok(())
}

/// A new, uniquely named hidden file in the folder of `path`.
fn temporary_beside(path: &Path) -> std::io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().map_or("output".into(), |n| n.to_string_lossy());
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = folder.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spmv-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name());
        let sorted: std::collections::BTreeSet<_> = names.collect();
        sorted.into_iter().map(|n| n.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn a_failed_write_leaves_the_target_as_it_was_and_no_temporary_file() {
        let dir = scratch("failed");
        let target = dir.join("out.json");
        let failing = |w: &mut BufWriter<File>| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        };
        // No target before: none after.
        let e = write_file(&target, failing).unwrap_err();
        assert!(e.to_string().contains("out.json") && e.to_string().contains("disk full"), "{e}");
        assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
        // An old target: kept whole.
        std::fs::write(&target, "old").unwrap();
        write_file(&target, failing).unwrap_err();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(entries(&dir), ["out.json"]);
        // Success replaces it.
        write_file(&target, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(entries(&dir), ["out.json"]);
    }

    #[test]
    fn checking_creates_nothing_and_names_the_cause() {
        let dir = scratch("check");
        check_writable(&dir.join("r.json")).unwrap();
        assert!(entries(&dir).is_empty());
        let e = check_writable(&dir.join("missing/r.json")).unwrap_err().to_string();
        assert!(e.contains("missing/r.json") && e.contains("No such file"), "{e}");
        let e = check_writable(&dir).unwrap_err().to_string();
        assert!(e.contains("a folder, not a file"), "{e}");
        check_writable(Path::new("/dev/null")).unwrap();
        write_file(Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap();
    }
}
