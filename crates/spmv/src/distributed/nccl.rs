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

/// `ncclUniqueId`: 128 opaque bytes that rank 0 makes and every rank passes to
/// `ncclCommInitRank` (by value, as nccl.h declares it).
#[repr(C)]
#[derive(Clone, Copy)]
struct UniqueId {
    internal: [c_char; UNIQUE_ID_BYTES],
}

const UNIQUE_ID_BYTES: usize = 128;

/// NCCL's entry points, resolved once.
struct Library {
    _lib: libloading::Library,
    version: c_int,
    error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
    comm_init_all: unsafe extern "C" fn(*mut Raw, c_int, *const c_int) -> NcclResult,
    get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> NcclResult,
    comm_init_rank: unsafe extern "C" fn(*mut Raw, c_int, UniqueId, c_int) -> NcclResult,
    all_gather:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Raw, Raw) -> NcclResult,
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
            get_unique_id: sym!("ncclGetUniqueId"),
            comm_init_rank: sym!("ncclCommInitRank"),
            all_gather: sym!("ncclAllGather"),
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

/// A new `ncclUniqueId` (on rank 0 of a multi-process run, to be shared with the others).
pub(super) fn unique_id() -> Result<Vec<u8>> {
    let lib = library()?;
    let mut id = UniqueId { internal: [0; UNIQUE_ID_BYTES] };
    // SAFETY: `id` is a writable ncclUniqueId.
    lib.check(unsafe { (lib.get_unique_id)(&mut id) }, "ncclGetUniqueId")?;
    Ok(id.internal.iter().map(|&b| b as u8).collect())
}

/// The communicators of this process's ranks: one per device of one process
/// (`ncclCommInitAll`, rank `r` on `devices[r]`), or this process's one rank among several
/// processes (`ncclCommInitRank`).
pub(super) struct Comms {
    lib: &'static Library,
    comms: Vec<Raw>,
    /// The rank of each communicator.
    ranks: Vec<usize>,
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
        Ok(Comms { lib, comms, ranks: (0..devs.len()).collect() })
    }

    /// Rank `rank` of `size` processes on the current device of `gpu`, from rank 0's
    /// [`unique_id`]; returns when every rank has called it.
    pub(super) fn for_rank(
        id: &[u8], size: usize, rank: usize, gpu: &crate::gpu::Gpu,
    ) -> Result<Comms> {
        let lib = library()?;
        if id.len() != UNIQUE_ID_BYTES {
            return Err(Error::Launch(format!(
                "an NCCL unique id of {} bytes (NCCL's has {UNIQUE_ID_BYTES})",
                id.len()
            )));
        }
        let mut unique = UniqueId { internal: [0; UNIQUE_ID_BYTES] };
        unique.internal.iter_mut().zip(id).for_each(|(d, &s)| *d = s as c_char);
        // NCCL takes the device current on the calling thread.
        gpu.context().bind_to_thread()?;
        let mut comm = std::ptr::null_mut();
        // SAFETY: `comm` receives the handle; the id is passed by value.
        lib.check(
            unsafe { (lib.comm_init_rank)(&mut comm, size as c_int, unique, rank as c_int) },
            "ncclCommInitRank",
        )?;
        Ok(Comms { lib, comms: vec![comm], ranks: vec![rank] })
    }

    /// This process's communicator of `rank`.
    fn comm(&self, rank: usize) -> Raw {
        let at = self.ranks.iter().position(|&r| r == rank);
        self.comms[at.expect("a rank of this process")]
    }

    /// Every rank's `bytes` bytes at `send` gathered, in rank order, into `recv` (`size ×
    /// bytes`), on `stream`; `rank` is this process's (its only one).
    ///
    /// # Safety
    /// `send` must hold `bytes` readable bytes and `recv` `size × bytes` writable ones on the
    /// rank's device, untouched by other work until `stream` passes the gather.
    pub(super) unsafe fn all_gather(
        &self, rank: usize, send: u64, recv: u64, bytes: usize, stream: Raw,
    ) -> Result<()> {
        let (lib, comm) = (self.lib, self.comm(rank));
        lib.check(
            (lib.all_gather)(
                send as *const c_void,
                recv as *mut c_void,
                bytes,
                NCCL_UINT8,
                comm,
                stream,
            ),
            "ncclAllGather",
        )
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
            // SAFETY: each handle came from NCCL's init and is destroyed once; an error
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
    /// `from`'s send of `bytes` bytes to rank `to`.
    ///
    /// # Safety
    /// `from.addr` must hold `bytes` readable bytes on `from`'s device until its stream
    /// passes the send; the stream must be a live stream of that device.
    pub(super) unsafe fn send(&self, from: End, to: usize, bytes: usize) -> Result<()> {
        let (lib, addr) = (self.comms.lib, from.addr as *const c_void);
        // SAFETY: the caller's.
        self.p2p("ncclSend", &from, |comm| unsafe {
            (lib.send)(addr, bytes, NCCL_UINT8, to as c_int, comm, from.stream)
        })
    }

    /// `to`'s receive of `bytes` bytes from rank `from`.
    ///
    /// # Safety
    /// `to.addr` must hold `bytes` writable bytes on `to`'s device, untouched by other work
    /// until its stream passes the receive; the stream must be a live stream of that device.
    pub(super) unsafe fn recv(&self, to: End, from: usize, bytes: usize) -> Result<()> {
        let (lib, addr) = (self.comms.lib, to.addr as *mut c_void);
        // SAFETY: the caller's.
        self.p2p("ncclRecv", &to, |comm| unsafe {
            (lib.recv)(addr, bytes, NCCL_UINT8, from as c_int, comm, to.stream)
        })
    }

    /// `call` (NCCL's `name`) on the communicator of `end`'s rank, its result checked.
    fn p2p(&self, name: &str, end: &End, call: impl FnOnce(Raw) -> NcclResult) -> Result<()> {
        self.comms.lib.check(call(self.comms.comm(end.rank)), name)
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
