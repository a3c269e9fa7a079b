//! The few NCCL calls the halo exchange needs, loaded at run time (like the driver): a
//! machine without NCCL builds and runs everything else, and asking for the NCCL exchange
//! there is an error that says so.
//!
//! Our own binding rather than cudarc's `nccl` feature: cudarc looks for `libnccl.so` (the
//! development link) but not `libnccl.so.2`, which is all that NCCL's runtime packages (the
//! `nvidia-nccl` wheels, Debian's `libnccl2`) install, and its communicator panics on drop
//! when the abort fails.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

use crate::error::{Error, Result};

type Raw = *mut c_void;
type NcclResult = c_int;
/// `ncclUint8`: the exchange moves bytes, whatever the scalar type.
const NCCL_UINT8: c_int = 1;

/// NCCL's entry points, resolved once.
struct Library {
    _lib: libloading::Library,
    version: c_int,
    error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
    comm_init_all: unsafe extern "C" fn(*mut Raw, c_int, *const c_int) -> NcclResult,
    comm_destroy: unsafe extern "C" fn(Raw) -> NcclResult,
    group_start: unsafe extern "C" fn() -> NcclResult,
    group_end: unsafe extern "C" fn() -> NcclResult,
    send: unsafe extern "C" fn(*const c_void, usize, c_int, c_int, Raw, Raw) -> NcclResult,
    recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, Raw, Raw) -> NcclResult,
}

// SAFETY: the function pointers are plain C entry points of a library that stays loaded
// (owned by the struct, which lives in a static); NCCL's calls are thread-safe per its docs
// for distinct communicators, and the exchange serialises its use of one set of them.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

/// The file names tried, in order: `$SPMV_NCCL` if set, then the runtime's soname, then the
/// development link.
fn candidates() -> Vec<String> {
    let mut names: Vec<String> = std::env::var("SPMV_NCCL").into_iter().collect();
    names.extend(["libnccl.so.2".to_string(), "libnccl.so".to_string()]);
    names
}

fn library() -> Result<&'static Library> {
    static LIB: OnceLock<std::result::Result<Library, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(|e| Error::NoGpu(e.clone()))
}

fn load() -> std::result::Result<Library, String> {
    let names = candidates();
    // SAFETY: loading NCCL runs its initialisers, which only set up the library.
    let lib = names.iter().find_map(|n| unsafe { libloading::Library::new(n) }.ok()).ok_or_else(|| {
        format!("NCCL not found (tried {}; set SPMV_NCCL to its path, or put its folder on LD_LIBRARY_PATH)", names.join(", "))
    })?;
    // SAFETY: each symbol is looked up by its C name and given the signature of nccl.h
    // (NCCL 2.x; ncclComm_t and cudaStream_t are pointers).
    unsafe {
        fn missing(name: &str, e: libloading::Error) -> String {
            format!("NCCL has no {name}: {e}")
        }
        macro_rules! sym {
            ($name:literal) => {
                *lib.get(concat!($name, "\0").as_bytes()).map_err(|e| missing($name, e))?
            };
        }
        let get_version: unsafe extern "C" fn(*mut c_int) -> NcclResult = sym!("ncclGetVersion");
        let mut version = 0;
        if get_version(&mut version) != 0 {
            return Err("ncclGetVersion failed".into());
        }
        Ok(Library {
            version,
            error_string: sym!("ncclGetErrorString"),
            comm_init_all: sym!("ncclCommInitAll"),
            comm_destroy: sym!("ncclCommDestroy"),
            group_start: sym!("ncclGroupStart"),
            group_end: sym!("ncclGroupEnd"),
            send: sym!("ncclSend"),
            recv: sym!("ncclRecv"),
            _lib: lib,
        })
    }
}

impl Library {
    fn check(&self, result: NcclResult, call: &str) -> Result<()> {
        if result == 0 {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString returns a static NUL-terminated string for any code.
        let text = unsafe { CStr::from_ptr((self.error_string)(result)) }.to_string_lossy();
        Err(Error::Cuda { code: None, message: format!("NCCL {call} failed ({result}): {text}") })
    }
}

/// NCCL's version as `major.minor.patch`, or why it cannot be loaded.
pub fn version() -> Result<String> {
    let v = library()?.version;
    // NCCL ≥ 2.9 encodes major·10000 + minor·100 + patch.
    Ok(format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100))
}

/// One communicator per device of one process (`ncclCommInitAll`): rank `r` is
/// `devices[r]`. Several processes would instead each create their rank with
/// `ncclCommInitRank` from a `ncclUniqueId` shared by rank 0 (docs/scale.md).
pub(super) struct Comms {
    lib: &'static Library,
    comms: Vec<Raw>,
}

// SAFETY: the communicators are only used under the exchange's lock (one thread at a time),
// which is how NCCL allows a communicator to move between threads.
unsafe impl Send for Comms {}
unsafe impl Sync for Comms {}

impl Comms {
    /// Communicators over `ordinals` (distinct devices, in rank order).
    pub(super) fn new(ordinals: &[usize]) -> Result<Comms> {
        let lib = library()?;
        let devs: Vec<c_int> = ordinals.iter().map(|&o| o as c_int).collect();
        let mut comms = vec![std::ptr::null_mut(); devs.len()];
        // SAFETY: `comms` has room for one handle per device of `devs`.
        lib.check(
            unsafe { (lib.comm_init_all)(comms.as_mut_ptr(), devs.len() as c_int, devs.as_ptr()) },
            "ncclCommInitAll",
        )?;
        Ok(Comms { lib, comms })
    }

    /// Queues the point-to-point copies of `queue` as one NCCL group (so that one thread can
    /// drive every rank without deadlock); NCCL orders each on the given stream.
    pub(super) fn group(&self, queue: impl FnOnce(&Group<'_>) -> Result<()>) -> Result<()> {
        // SAFETY: plain calls; every group started is ended below, whatever `queue` returns.
        self.lib.check(unsafe { (self.lib.group_start)() }, "ncclGroupStart")?;
        let queued = queue(&Group { comms: self });
        let ended = self.lib.check(unsafe { (self.lib.group_end)() }, "ncclGroupEnd");
        queued.and(ended)
    }
}

impl Drop for Comms {
    fn drop(&mut self) {
        for &c in &self.comms {
            // SAFETY: each handle came from ncclCommInitAll and is destroyed once; an error
            // here leaves nothing to do.
            let _ = unsafe { (self.lib.comm_destroy)(c) };
        }
    }
}

/// The calls allowed inside [`Comms::group`].
pub(super) struct Group<'a> {
    comms: &'a Comms,
}

/// One end of a copy: its rank, a device address, and a stream of that rank's device.
pub(super) struct End {
    pub rank: usize,
    pub addr: u64,
    pub stream: Raw,
}

impl Group<'_> {
    /// Copies `bytes` bytes from `from` to `to`: `from`'s send and `to`'s receive, queued
    /// together (the exchange's only use of them).
    ///
    /// # Safety
    /// `from.addr` must hold `bytes` readable bytes on `from`'s device until its stream passes
    /// the send; `to.addr` `bytes` writable bytes on `to`'s device, untouched by other work
    /// until its stream passes the receive; each stream must be a live stream of its device.
    pub(super) unsafe fn copy(&self, from: End, to: End, bytes: usize) -> Result<()> {
        let (lib, comms) = (self.comms.lib, &self.comms.comms);
        let (src, dst) = (from.addr as *const c_void, to.addr as *mut c_void);
        let (peer_of_from, peer_of_to) = (to.rank as c_int, from.rank as c_int);
        lib.check(
            (lib.send)(src, bytes, NCCL_UINT8, peer_of_from, comms[from.rank], from.stream),
            "ncclSend",
        )?;
        lib.check(
            (lib.recv)(dst, bytes, NCCL_UINT8, peer_of_to, comms[to.rank], to.stream),
            "ncclRecv",
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn nccl_loads_or_says_how_to_find_it() {
        match super::version() {
            Ok(v) => assert!(v.starts_with("2."), "{v}"),
            Err(e) => assert!(
                e.to_string().contains("SPMV_NCCL") && e.to_string().contains("libnccl.so.2"),
                "{e}"
            ),
        }
    }

    #[test]
    fn exchanges_parse_and_print() {
        use crate::distributed::Exchange;
        for e in [Exchange::Peer, Exchange::Nccl] {
            assert_eq!(e.to_string().parse::<Exchange>().unwrap(), e);
        }
        assert!("mpi".parse::<Exchange>().unwrap_err().to_string().contains("peer or nccl"));
    }
}
