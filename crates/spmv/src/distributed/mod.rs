//! A matrix spread over several GPUs of one process: rows cut into contiguous parts of about
//! equal entries ([`Partition`]), part `i` on GPU `i` in any format (`auto` chooses per
//! part), and `x` split like the rows.
//!
//! Each part holds its rows with the columns renumbered into a local `x` of
//! `[halo below | own | halo above]` ([`LocalPart`]): only the `x` entries its rows touch in
//! other parts (the halo), not all of `x`. A product exchanges the halo — every owner
//! gathers the entries others need into one send buffer (one kernel), each receiver copies its
//! runs of it into its local `x` (`cuMemcpyPeerAsync` between devices, with peer access on,
//! which rides NVLink where the GPUs have it; a plain device copy between parts on one
//! device) on a second stream of its device — while each part multiplies its *interior* rows
//! (the longest run of rows that touch no halo column, when it holds at least half the part's
//! rows and 2^16 rows: the part is then built as three pieces, boundary · interior ·
//! boundary); then the boundary rows. The GPUs work at once; the host only queues.
//!
//! **Results.** Each row is summed by one part, by the part's format, in the format's order
//! over the row's entries, which the renumbering keeps (it is monotone in the column): a
//! format whose order does not depend on where the row sits (CSR-scalar, DIA, CSR-vector with
//! its lanes given: by default they follow each part's mean row length) gives `y` with the
//! bits of the same format on one GPU; merge-CSR, SELL-C-σ and `auto` agree to rounding (their
//! sums split by tiles, slices or choices of the part). The solvers (`solve::cg`,
//! `solve::bicgstab` on a distributed matrix: module `cg`) sum their dot products per part in
//! a fixed order and add the parts' sums in part order: the same bits run after run and for
//! any placement of the parts, but not the bits of the one-GPU CG (whose sums split at other
//! places); their iterates agree to rounding.
//!
//! **Devices.** Parts on one device must share its [`Gpu`] (one stream for the products and
//! one for the exchange, ordered by events); the constructor refuses two handles of one
//! device. The exchange stream starts after its device's gathers; the boundary rows wait for
//! it; between devices a receiver's copy waits for the owner's gather, and an owner's next
//! gather waits for its receivers' copies.
//!
//! **Exchange.** Two ways to move the halo ([`Exchange`]): peer copies (the default, above)
//! or NCCL (`ncclSend`/`ncclRecv` in one group per product, one communicator per device made
//! by `ncclCommInitAll`; parts on one device send to themselves through NCCL too). Both
//! move the same bytes into the same places, so the results are the same bits.
//!
//! **More processes and nodes** ([`DistributedMatrix::for_rank`], module `rank`). The
//! exchange is the only place parts meet (plus the solvers' partial sums). With one process
//! per GPU each process holds one part: the same plan — the send lists and the halo runs —
//! is the NCCL group above with each process queuing its own part's sends and receives (the
//! communicator made by `ncclCommInitRank` from rank 0's `ncclUniqueId`, shared through the
//! [`world::Rendezvous`]), and the parts' sums are gathered by `ncclAllGather` and added in
//! part order on every rank: the same bits as one process driving every part. Host vectors
//! (`upload`, `download`, the solvers' b and x) hold this process's rows only.

mod cg;
mod nccl;
mod pagerank;
mod partition;
mod rank;
mod setup;
pub mod world;

use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};

pub use nccl::version as nccl_version;
pub use partition::{LocalPart, Partition};
pub use rank::{own_rows, rank_gpu, Ranks};
pub use setup::{Phase, Phases};

use crate::choice::Choice;
use crate::error::{Error, Result};
use crate::formats::{DeviceMatrix, FormatHandle};
use crate::gpu::{grid_stride, with_sub_slice, with_sub_slice_ref, Gpu, Kernel};
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;
use crate::operator::{from_columns, to_columns, Block, Layout};

/// How the halo travels between parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Exchange {
    /// `cuMemcpyPeerAsync` between devices (NVLink where present), device copies within one.
    #[default]
    Peer,
    /// NCCL's `ncclSend`/`ncclRecv` (loaded at run time: `libnccl.so.2`, or `$SPMV_NCCL`).
    Nccl,
}

impl std::str::FromStr for Exchange {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "peer" => Ok(Exchange::Peer),
            "nccl" => Ok(Exchange::Nccl),
            _ => Err(Error::Unsupported(format!("exchange '{s}': use peer or nccl"))),
        }
    }
}

impl std::fmt::Display for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Exchange::Peer => "peer",
            Exchange::Nccl => "nccl",
        })
    }
}

/// NCCL's communicators and each part's rank (its device's place among the distinct devices).
struct NcclRoute {
    comms: nccl::Comms,
    rank_of_part: Vec<usize>,
}

/// A square matrix cut into row parts, one per GPU: every part in this process, or (one
/// process per GPU) this process's part.
pub struct DistributedMatrix<T: Scalar> {
    /// Set for [`Exchange::Nccl`]; first, so that the communicators go before the devices.
    nccl: Option<NcclRoute>,
    partition: Partition,
    /// The parts this process holds: parts `first_part..first_part + parts.len()`.
    parts: Vec<Part<T>>,
    first_part: usize,
    /// The other processes, when each holds one part.
    ranks: Option<rank::Ranks>,
    /// Halo runs of every part, in receiver order and, within a receiver, owner order.
    transfers: Vec<Transfer>,
    /// Each held owner's send buffer (entries its receivers need, receivers in order);
    /// locked for a whole exchange.
    sends: Mutex<SendBuffers<T>>,
    nnz: usize,
    /// Whether interior pieces run while the halo travels (else every piece waits for it).
    overlap: bool,
    /// The matrix the parts were cut from (shared, no copy): the transposed product's source
    /// (one process per GPU: the process's rows).
    source: Csr<T>,
    /// Aᵀ on the same GPUs and partition, built on the first transposed product.
    transposed: OnceLock<Box<Transposed<T>>>,
    /// The parts' format, for the transpose.
    spec: Choice,
    /// Where this process waited in each [`DistributedMatrix::gathered`] (one process per
    /// GPU): for its own GPU, then for the gather, ms (at most `MAX_WAIT_SAMPLES` kept).
    waits: Mutex<Vec<(f64, f64)>>,
    /// What the setup took, phase by phase (this process's).
    setup: Phases,
}

/// Gathers whose waits are kept (16 bytes each): a solve's first 2^20.
const MAX_WAIT_SAMPLES: usize = 1 << 20;

/// Where a process's host waits in a gather across processes (one process per GPU): for its
/// own GPU to finish the work queued before the gather, then for the gather itself — the
/// other ranks' arrival and NCCL's transfer. Medians, so that the first gathers (which wait
/// for kernel compilation and uploads) do not count.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct RankWaits {
    /// Gathers across processes so far (a solver's sums, the checks that every rank agrees).
    pub gathers: usize,
    /// Median wait for the own GPU, milliseconds.
    pub own_gpu_ms: f64,
    /// Median wait for the gather once the own GPU was done, milliseconds.
    pub gather_ms: f64,
}

/// Each held owner's send buffer, `None` for an owner nobody needs.
type SendBuffers<T> = Vec<Option<CudaSlice<T>>>;

struct Part<T: Scalar> {
    gpu: Arc<Gpu>,
    /// Where the halo travels to and from this part: a second stream of its device (shared by
    /// the parts of one device), so that the interior rows' product runs meanwhile.
    comm: Arc<CudaStream>,
    rows: Range<usize>,
    /// Where the own entries sit in the local `x`.
    own_offset: usize,
    /// Halo below + own + halo above.
    local_len: usize,
    /// The part's rows in one piece, or three: the boundary rows before the interior run, the
    /// interior run, the boundary rows after it (`LocalPart::interior_rows`).
    pieces: Vec<Piece<T>>,
    /// The part's format (`auto`'s choice named; of its largest piece).
    label: String,
    /// Positions in this part's local `x` of the entries other parts need (receivers in
    /// part order), or `None` when no part needs any.
    send_idx: Option<CudaSlice<u32>>,
    gather: Kernel,
    /// Recorded on the part's stream after its gather: its send buffer is full, and the
    /// products queued before (which read the halo room) are past.
    sendable: CudaEvent,
    /// Recorded on the exchange stream after the part's halo has come in (and, for an
    /// owner, after its sends have left).
    halo_in: CudaEvent,
}

/// Some of a part's rows in the part's format.
struct Piece<T: Scalar> {
    /// Which of the part's rows (local row indices).
    rows: Range<usize>,
    matrix: DeviceMatrix<T>,
    /// Its rows touch only the part's own `x` entries: it need not wait for the halo.
    interior: bool,
}

/// Rows a part's interior run must hold (and at least half the part's) for the part to be
/// cut into pieces: below that, the two extra launches cost more than the overlap saves.
const MIN_INTERIOR_ROWS: usize = 1 << 16;

/// A part built, with what it receives from the others.
struct Built<T: Scalar> {
    index: usize,
    part: Part<T>,
    receives: Vec<Receive>,
    phases: Phases,
}

/// Halo entries part `to` receives from part `from`: their global columns, in order, and
/// where they go in `to`'s local `x`.
#[derive(Clone, Debug, PartialEq)]
struct Receive {
    to: usize,
    from: usize,
    cols: Vec<u32>,
    recv_at: usize,
}

impl Receive {
    /// What part `i` (`local`) receives from each other part, owners in order.
    fn of<T: Scalar>(local: &LocalPart<T>, partition: &Partition, i: usize) -> Vec<Receive> {
        (0..partition.parts())
            .filter(|&j| j != i)
            .filter_map(|j| {
                let (cols, recv_at) = local.halo_from(partition, j);
                (!cols.is_empty()).then_some(Receive { to: i, from: j, cols, recv_at })
            })
            .collect()
    }
}

/// The transfers of every part's `receives` (given in receiver order, as [`Receive::of`]
/// lists them part after part) over `nparts` parts, and the send lists of the held `parts`
/// (parts `first…`): an owner sends its receivers' halo columns, receivers in order, gathered
/// from its local `x` into its send buffer (returned; `None` for an owner nobody needs).
fn plan<T: Scalar>(
    receives: &[Receive], nparts: usize, parts: &mut [Part<T>], first: usize,
) -> Result<(Vec<Transfer>, SendBuffers<T>)> {
    let mut filled = vec![0usize; nparts];
    let transfers = receives
        .iter()
        .map(|r| {
            let send_at = filled[r.from];
            filled[r.from] += r.cols.len();
            Transfer { from: r.from, to: r.to, send_at, count: r.cols.len(), recv_at: r.recv_at }
        })
        .collect();
    let mut sends = Vec::with_capacity(parts.len());
    for (k, owner) in parts.iter_mut().enumerate() {
        let j = first + k;
        if filled[j] > u32::MAX as usize {
            return Err(Error::Unsupported(format!(
                "part {j} sends {} halo entries, beyond 32-bit counts",
                filled[j]
            )));
        }
        let base = owner.own_offset - owner.rows.start;
        let idx: Vec<u32> = receives
            .iter()
            .filter(|r| r.from == j)
            .flat_map(|r| r.cols.iter().map(move |&c| (base + c as usize) as u32))
            .collect();
        if idx.is_empty() {
            sends.push(None);
        } else {
            owner.send_idx = Some(owner.gpu.upload(&idx)?);
            sends.push(Some(owner.gpu.alloc::<T>(idx.len())?));
        }
    }
    Ok((transfers, sends))
}

/// `count` entries of owner `from`'s send buffer at `send_at` go to receiver `to`'s local `x`
/// at `recv_at`.
#[derive(Clone, Copy, Debug)]
struct Transfer {
    from: usize,
    to: usize,
    send_at: usize,
    count: usize,
    recv_at: usize,
}

/// A vector (or a block of `columns` vectors) split like the rows of a [`DistributedMatrix`]:
/// one buffer per part, either the part's own entries only, or with room for its halo around
/// them (a vector that is multiplied: [`DistributedMatrix::new_x`]). A block holds its
/// vectors one after another in each part's buffer (column-major per part). The halo room is
/// the products' scratch: a product writes it, even through a shared reference.
pub struct DistVector<T> {
    parts: Vec<CudaSlice<T>>,
    halo: bool,
    columns: usize,
}

impl<T> DistVector<T> {
    /// Whether the parts have halo room (the vector can be multiplied).
    pub fn has_halo(&self) -> bool {
        self.halo
    }
    /// How many vectors the block holds (1 for a vector).
    pub fn columns(&self) -> usize {
        self.columns
    }
}

impl<T: Scalar> DistributedMatrix<T> {
    /// `a` cut into `gpus.len()` parts balanced by entries, part `i` built as `spec` and
    /// uploaded to `gpus[i]` (one [`Gpu`] may carry several parts).
    pub fn new(a: &Csr<T>, gpus: &[Arc<Gpu>], spec: &Choice) -> Result<Self> {
        let mut phases = Phases::default();
        let partition = phases.time("partition", || Partition::balanced(a, gpus.len()))?;
        let mut d = Self::with_partition(a, gpus, spec, partition)?;
        d.setup = phases.then(std::mem::take(&mut d.setup));
        Ok(d)
    }

    /// The same with a given partition (`partition.parts() == gpus.len()`).
    pub fn with_partition(
        a: &Csr<T>, gpus: &[Arc<Gpu>], spec: &Choice, partition: Partition,
    ) -> Result<Self> {
        if gpus.len() != partition.parts() || partition.starts().last() != Some(&a.nrows()) {
            return Err(Error::Unsupported(format!(
                "a partition of {} parts over {} rows for {} GPUs and {} rows",
                partition.parts(),
                partition.starts().last().unwrap_or(&0),
                gpus.len(),
                a.nrows()
            )));
        }
        for (i, g) in gpus.iter().enumerate() {
            let ordinal = g.context().ordinal();
            if gpus[..i].iter().any(|h| h.context().ordinal() == ordinal && !Arc::ptr_eq(g, h)) {
                return Err(Error::Unsupported(format!(
                    "parts {i} and an earlier one are on device {ordinal} through two Gpu handles: pass the same Gpu for parts on one device"
                )));
            }
        }
        let mut setup = Phases::default();
        // Copies between devices go straight over NVLink (or PCIe) where the devices allow;
        // where peer access cannot be had (or fails), the driver stages them: slower, but
        // the same results, so it is not an error.
        setup.time("peer access", || {
            for g in gpus {
                for h in gpus.iter().filter(|h| !Arc::ptr_eq(g, h)) {
                    let _ = g.enable_peer_access(h);
                }
            }
        });
        // One exchange stream per device, shared by its parts.
        let mut comms: Vec<Arc<CudaStream>> = Vec::with_capacity(gpus.len());
        for (i, gpu) in gpus.iter().enumerate() {
            comms.push(match gpus[..i].iter().position(|g| Arc::ptr_eq(g, gpu)) {
                Some(j) => comms[j].clone(),
                None => gpu.context().new_stream()?,
            });
        }
        let build = |i: usize| -> Result<Built<T>> {
            let mut phases = Phases::default();
            let (local, receives) = phases.time("renumber", || {
                let local = LocalPart::of(a, &partition, i);
                let receives = Receive::of(&local, &partition, i);
                (local, receives)
            });
            let part = Part::build(local, &gpus[i], comms[i].clone(), spec, &mut phases)?;
            Ok(Built { index: i, part, receives, phases })
        };
        // The devices' parts are built side by side (one thread per device: the conversions,
        // kernel compilations and uploads overlap), a device's parts one after another — when
        // the host can hold what every device's build holds at once (a part's renumbered
        // columns and its format's arrays, about a CSR's size); else one part at a time.
        let held = 16 * a.nnz() as u64 + 16 * a.nrows() as u64;
        let mut devices: Vec<Vec<usize>> = Vec::new();
        for i in 0..gpus.len() {
            match devices.iter_mut().find(|d| Arc::ptr_eq(&gpus[d[0]], &gpus[i])) {
                Some(d) => d.push(i),
                None => devices.push(vec![i]),
            }
        }
        let room = crate::error::available_memory().unwrap_or(0);
        let side_by_side = devices.len() > 1 && room > 3 * held;
        let start = std::time::Instant::now();
        let built: Vec<Result<Built<T>>> = if side_by_side {
            std::thread::scope(|scope| {
                let threads: Vec<_> = (devices.iter())
                    .map(|d| scope.spawn(|| d.iter().map(|&i| build(i)).collect::<Vec<_>>()))
                    .collect();
                let joined =
                    threads.into_iter().map(|t| t.join().expect("a part's build panicked"));
                joined.flatten().collect()
            })
        } else {
            (0..gpus.len()).map(build).collect()
        };
        let parts_ms = ms_since(start);
        let mut built = built.into_iter().collect::<Result<Vec<_>>>()?;
        built.sort_by_key(|b| b.index);
        // Each phase's slowest device (its parts one after another; all parts one after
        // another when they were not built side by side), then their wall time.
        if !side_by_side {
            devices = vec![(0..gpus.len()).collect()];
        }
        let per_device: Vec<Phases> = (devices.iter())
            .map(|d| {
                let mut sum = Phases::default();
                d.iter().for_each(|&i| sum.add(std::mem::take(&mut built[i].phases)));
                sum
            })
            .collect();
        setup = setup.then(Phases::side_by_side(&per_device));
        setup.record("parts (wall)", parts_ms);
        let receives: Vec<Receive> =
            built.iter_mut().flat_map(|b| std::mem::take(&mut b.receives)).collect();
        let mut parts: Vec<Part<T>> = built.into_iter().map(|b| b.part).collect();
        let (transfers, sends) =
            setup.time("halo plan", || plan(&receives, partition.parts(), &mut parts, 0))?;
        Ok(DistributedMatrix {
            nccl: None,
            partition,
            parts,
            first_part: 0,
            ranks: None,
            transfers,
            sends: Mutex::new(sends),
            nnz: a.nnz(),
            overlap: true,
            source: a.clone(),
            transposed: OnceLock::new(),
            spec: spec.clone(),
            waits: Mutex::default(),
            setup,
        })
    }

    /// A part's rows built as `spec` and uploaded: in three pieces when its interior run is
    /// long enough to be worth running during the exchange (and the format takes every
    /// piece), else in one (the pieces are row blocks sharing `local`'s arrays, not copies).
    /// Also the largest piece's format.
    fn pieces(
        local: LocalPart<T>, gpu: &Arc<Gpu>, spec: &Choice, times: &mut PieceTimes,
    ) -> Result<(Vec<Piece<T>>, String)> {
        let n = local.rows.len();
        let inner = local.interior_rows();
        if inner.len() == n || inner.len() < MIN_INTERIOR_ROWS.max(n / 2) {
            let one = vec![(0..n, local.local, inner.len() == n)];
            return Self::build_pieces(gpu, spec, one, times);
        }
        let three = [(0..inner.start, false), (inner.clone(), true), (inner.end..n, false)]
            .map(|(rows, interior)| (rows.clone(), local.local.row_block(rows), interior));
        match Self::build_pieces(gpu, spec, three.into(), times) {
            // A piece the format refuses (a boundary piece's padding, say): the part whole.
            Err(Error::Format { .. }) => {
                Self::build_pieces(gpu, spec, vec![(0..n, local.local, false)], times)
            }
            built => built,
        }
    }

    fn build_pieces(
        gpu: &Arc<Gpu>, spec: &Choice, pieces: Vec<(Range<usize>, Csr<T>, bool)>,
        times: &mut PieceTimes,
    ) -> Result<(Vec<Piece<T>>, String)> {
        let mut built = Vec::with_capacity(pieces.len());
        let mut label = (0, spec.label());
        for (rows, matrix, interior) in pieces.into_iter().filter(|(r, _, _)| !r.is_empty()) {
            let start = std::time::Instant::now();
            let host = spec.build(&matrix)?;
            times.convert_ms += ms_since(start);
            if rows.len() >= label.0 {
                label = (rows.len(), host.chosen().unwrap_or_else(|| spec.label()));
            }
            let start = std::time::Instant::now();
            let matrix = host.upload(gpu)?;
            times.upload_ms += ms_since(start);
            built.push(Piece { rows, matrix, interior });
        }
        Ok((built, label.1))
    }

    /// Whether the interior rows' product runs while the halo travels (the default), or
    /// waits for it like the rest: for measuring what the overlap gains.
    pub fn set_overlap(&mut self, overlap: bool) {
        self.overlap = overlap;
    }
    /// How many parts are cut into pieces (interior rows that can overlap the exchange).
    pub fn parts_with_interior(&self) -> usize {
        self.parts.iter().filter(|p| p.pieces.len() > 1).count()
    }

    /// Moves the halo by `exchange` from now on (NCCL: its communicators are created here,
    /// an error if NCCL cannot be loaded or initialised).
    pub fn set_exchange(&mut self, exchange: Exchange) -> Result<()> {
        if self.ranks.is_some() {
            return match exchange {
                Exchange::Nccl => Ok(()),
                Exchange::Peer => Err(Error::Unsupported(
                    "with one process per GPU the halo travels by NCCL (peer copies need every GPU in one process)".into(),
                )),
            };
        }
        self.nccl = match exchange {
            Exchange::Peer => None,
            Exchange::Nccl => {
                let mut ordinals: Vec<usize> = Vec::new();
                let mut rank_of_part = Vec::with_capacity(self.parts.len());
                for p in &self.parts {
                    let o = p.gpu.context().ordinal();
                    let rank = ordinals.iter().position(|&d| d == o).unwrap_or_else(|| {
                        ordinals.push(o);
                        ordinals.len() - 1
                    });
                    rank_of_part.push(rank);
                }
                self.synchronize()?;
                let start = std::time::Instant::now();
                let comms = nccl::Comms::new(&ordinals)?;
                self.setup.record("nccl init", ms_since(start));
                Some(NcclRoute { comms, rank_of_part })
            }
        };
        if self.nccl.is_some() {
            let start = std::time::Instant::now();
            self.connect()?;
            self.setup.record("nccl connect", ms_since(start));
        }
        Ok(())
    }

    /// What this matrix's setup took, phase by phase; with one process per GPU, over every
    /// rank (the slowest's time, the largest's memory), so every rank calls it together.
    pub fn setup_phases(&self) -> Result<Phases> {
        match &self.ranks {
            Some(ranks) => self.setup.across(ranks),
            None => Ok(self.setup.clone()),
        }
    }

    /// One exchange of a zero `x` (and, with one process per GPU, one gather across the
    /// processes), waited for. NCCL connects two ranks on their first send and receive, and
    /// the ranks of a gather on its first gather: with 4 processes on 4 H200s that took some
    /// 0.5 s, which a solve of a few hundred iterations showed as several milliseconds per
    /// iteration (`poisson3d:n=60`: 3.30 ms against 0.54 ms with NCCL's older transport).
    /// Done once, in the setup, so that products and solves time only themselves.
    fn connect(&self) -> Result<()> {
        let x = self.zeros(true, 1)?;
        self.gather_sends(&x, 0)?;
        self.transfer(&x, 0)?;
        self.parts.iter().try_for_each(|p| self.await_halo(p))?;
        if self.ranks.is_some() {
            self.on_every_rank(true)?;
        }
        self.synchronize()
    }

    /// How the halo travels.
    pub fn exchange_kind(&self) -> Exchange {
        if self.nccl.is_some() {
            Exchange::Nccl
        } else {
            Exchange::Peer
        }
    }

    /// The row ranges of the parts.
    pub fn partition(&self) -> &Partition {
        &self.partition
    }
    /// Rows (and columns) of the whole matrix.
    pub fn nrows(&self) -> usize {
        self.partition.starts().last().copied().unwrap_or(0)
    }
    /// The rows this process holds (all of them unless one process runs per GPU): the rows
    /// of the host vectors that [`DistributedMatrix::upload`] takes and
    /// [`DistributedMatrix::download`] gives.
    pub fn host_rows(&self) -> Range<usize> {
        match (self.parts.first(), self.parts.last()) {
            (Some(first), Some(last)) => first.rows.start..last.rows.end,
            _ => 0..0,
        }
    }
    /// Where held part `i`'s rows sit in a host vector.
    fn host_range(&self, i: usize) -> Range<usize> {
        let (rows, at) = (&self.parts[i].rows, self.host_rows().start);
        rows.start - at..rows.end - at
    }
    /// This process's place when one process runs per GPU.
    pub fn world(&self) -> Option<world::World> {
        self.ranks.as_ref().map(|r| r.world())
    }
    /// `result` when it is `Ok` on every process (one process per GPU; else `result`), or an
    /// error on every process naming the first that failed: for a step that may fail on one
    /// process only, before a collective step that the others would wait in.
    pub fn agree<R>(&self, result: Result<R>) -> Result<R> {
        match &self.ranks {
            Some(ranks) => ranks.agree(result),
            None => result,
        }
    }
    /// Every part's `mine` (one list per held part, in part order), gathered from the other
    /// processes when one runs per GPU (each holds one part): the lists of all parts, in
    /// part order, on every process. The lists must be of one length.
    pub(crate) fn across_ranks(&self, mine: Vec<Vec<f64>>) -> Result<Vec<Vec<f64>>> {
        if self.ranks.is_none() {
            return Ok(mine);
        }
        let p = &self.parts[0];
        p.gpu.context().bind_to_thread()?;
        self.gathered(&p.gpu.upload(&mine[0])?)
    }
    /// Every process's `mine` (the values of its one part, on its device; one process per
    /// GPU), read back in part order: one `ncclAllGather` on the part's stream.
    pub(crate) fn gathered(&self, mine: &CudaSlice<f64>) -> Result<Vec<Vec<f64>>> {
        let (Some(ranks), Some(route)) = (&self.ranks, &self.nccl) else {
            return Err(Error::Unsupported("a gather across processes of one process".into()));
        };
        let (p, len, world) = (&self.parts[0], mine.len(), ranks.world());
        p.gpu.context().bind_to_thread()?;
        let mut all = p.gpu.alloc::<f64>(len * world.size)?;
        let stream = p.gpu.stream();
        let start = std::time::Instant::now();
        let queued = p.gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
        queued.record(stream)?;
        let (src, _) = mine.device_ptr(stream);
        let (dst, _) = all.device_ptr_mut(stream);
        // SAFETY: `mine` holds len f64 and `all` size·len, both on this rank's device and
        // used by nothing else until the download below waits for the stream.
        unsafe {
            route.comms.all_gather(
                world.rank,
                src,
                dst,
                len * std::mem::size_of::<f64>(),
                stream.cu_stream() as _,
            )?;
        }
        queued.synchronize()?;
        let own_gpu_ms = ms_since(start);
        let all = p.gpu.download(&all)?;
        let mut waits = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        if waits.len() < MAX_WAIT_SAMPLES {
            waits.push((own_gpu_ms, ms_since(start) - own_gpu_ms));
        }
        Ok(all.chunks(len.max(1)).map(<[f64]>::to_vec).collect())
    }
    /// Where this process has waited in the gathers across processes so far.
    pub fn rank_waits(&self) -> RankWaits {
        let waits = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        let median = |pick: fn(&(f64, f64)) -> f64| {
            crate::measure::median_min(&mut waits.iter().map(pick).collect::<Vec<_>>()).0
        };
        RankWaits { gathers: waits.len(), own_gpu_ms: median(|w| w.0), gather_ms: median(|w| w.1) }
    }
    /// Whether `mine` holds on every process (one process per GPU; else `mine`).
    pub fn on_every_rank(&self, mine: bool) -> Result<bool> {
        let all = self.across_ranks(vec![vec![mine as u8 as f64]; self.parts.len()])?;
        Ok(all.iter().all(|v| v[0] == 1.0))
    }
    /// Every part's format (`auto` names its choice), entries and device ordinal, in part
    /// order: the held parts', and with one process per GPU the others' too (every process
    /// calls it together).
    pub fn describe_parts(&self) -> Result<Vec<(String, usize, usize)>> {
        let mine: Vec<(String, usize, usize)> = (self.part_formats().into_iter())
            .zip(self.part_nnz())
            .zip(self.parts.iter().map(|p| p.gpu.context().ordinal()))
            .map(|((f, n), d)| (f, n, d))
            .collect();
        let Some(ranks) = &self.ranks else { return Ok(mine) };
        let (format, nnz, device) = &mine[0];
        let line = format!("{nnz}\t{device}\t{format}");
        ranks
            .all_gather(line.as_bytes())?
            .iter()
            .map(|m| {
                let text = String::from_utf8_lossy(m);
                let mut fields = text.splitn(3, '\t');
                let mut number = || fields.next().and_then(|f| f.parse().ok());
                match (number(), number(), fields.next()) {
                    (Some(n), Some(d), Some(f)) => Ok((f.to_string(), n, d)),
                    _ => Err(Error::Launch(format!("a rank described its part as '{text}'"))),
                }
            })
            .collect()
    }
    /// `a·b` for host vectors of this process's rows: each part's sum in the one-GPU
    /// kernels' order, the parts' sums added in part order (over every process): the same
    /// bits however the parts are placed.
    pub fn dot(&self, a: &[T], b: &[T]) -> Result<f64> {
        let mine = (0..self.parts.len())
            .map(|i| {
                let r = self.host_range(i);
                vec![crate::solve::krylov::dot(&a[r.clone()], &b[r])]
            })
            .collect();
        Ok(self.across_ranks(mine)?.iter().fold(0.0, |sum, s| sum + s[0]))
    }
    /// Stored entries of the whole matrix.
    pub fn nnz(&self) -> usize {
        self.nnz
    }
    /// The format each part runs (`auto` names its choice).
    pub fn part_formats(&self) -> Vec<String> {
        self.parts.iter().map(|p| p.label.clone()).collect()
    }
    /// Entries of each part's matrix.
    pub fn part_nnz(&self) -> Vec<usize> {
        self.parts.iter().map(|p| p.pieces.iter().map(|q| q.matrix.info().nnz).sum()).collect()
    }
    /// Device bytes of the parts' matrices.
    pub fn device_bytes(&self) -> usize {
        self.parts.iter().flat_map(|p| &p.pieces).map(|q| q.matrix.device_bytes()).sum()
    }
    /// Bytes of the parts' matrices one product reads.
    pub fn bytes_read(&self) -> usize {
        self.parts.iter().flat_map(|p| &p.pieces).map(|q| q.matrix.bytes_read()).sum()
    }
    /// `x` entries crossing between parts per product (the sum of the halos).
    pub fn halo_entries(&self) -> usize {
        self.transfers.iter().map(|t| t.count).sum()
    }
    /// Bytes of `x` exchanged per product.
    pub fn halo_bytes(&self) -> usize {
        self.halo_entries() * std::mem::size_of::<T>()
    }

    /// A zero vector with halo room (one that can be multiplied).
    pub fn new_x(&self) -> Result<DistVector<T>> {
        self.zeros(true, 1)
    }
    /// A zero vector of the parts' own entries only (a product's result).
    pub fn new_y(&self) -> Result<DistVector<T>> {
        self.zeros(false, 1)
    }
    /// `columns` zero vectors, with halo room when `halo`.
    pub fn zeros(&self, halo: bool, columns: usize) -> Result<DistVector<T>> {
        let parts = self
            .parts
            .iter()
            .map(|p| p.gpu.alloc::<T>((p.len(halo) * columns).max(1)))
            .collect::<Result<_>>()?;
        Ok(DistVector { parts, halo, columns })
    }
    /// `v` (this process's rows: [`DistributedMatrix::host_rows`]) split over the held parts,
    /// with halo room when `halo`.
    pub fn upload(&self, v: &[T], halo: bool) -> Result<DistVector<T>> {
        self.upload_block(v, halo, Block::columns(1))
    }
    /// A block of `block.k` vectors of [`DistributedMatrix::host_rows`] entries (stored as
    /// `block.layout` says) split over the held parts, column-major in each part, with halo
    /// room when `halo`.
    pub fn upload_block(&self, v: &[T], halo: bool, block: Block) -> Result<DistVector<T>> {
        let n = self.host_rows().len();
        if block.k == 0 || n.checked_mul(block.k) != Some(v.len()) {
            return Err(Error::Shape(format!(
                "{} entries for {} vectors of a matrix of {n} rows",
                v.len(),
                block.k
            )));
        }
        let columns = to_columns(v, n, block.k, block.layout);
        let parts = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (len, at) = (p.len(halo), if halo { p.own_offset } else { 0 });
                let mut local = vec![T::ZERO; (len * block.k).max(1)];
                let rows = self.host_range(i);
                for j in 0..block.k {
                    let own = &columns[j * n + rows.start..j * n + rows.end];
                    local[j * len + at..j * len + at + own.len()].copy_from_slice(own);
                }
                p.gpu.upload(&local)
            })
            .collect::<Result<_>>()?;
        Ok(DistVector { parts, halo, columns: block.k })
    }
    /// The own entries of every held part, in row order (waits for each part's queue); a
    /// block column-major.
    pub fn download(&self, v: &DistVector<T>) -> Result<Vec<T>> {
        self.download_block(v, Layout::ColMajor)
    }
    /// The block's own entries as `layout` says (waits for each part's queue).
    pub fn download_block(&self, v: &DistVector<T>, layout: Layout) -> Result<Vec<T>> {
        let (n, k) = (self.host_rows().len(), v.columns);
        let mut columns = vec![T::ZERO; n * k];
        for (i, (p, buf)) in self.parts.iter().zip(&v.parts).enumerate() {
            let all = p.gpu.download(buf)?;
            let (len, at) = (p.len(v.halo), if v.halo { p.own_offset } else { 0 });
            let rows = self.host_range(i);
            for j in 0..k {
                columns[j * n + rows.start..j * n + rows.end]
                    .copy_from_slice(&all[j * len + at..j * len + at + p.rows.len()]);
            }
        }
        let mut out = vec![T::ZERO; n * k];
        from_columns(&columns, n, k, layout, &mut out);
        Ok(out)
    }
    /// Waits for every part's queues.
    pub fn synchronize(&self) -> Result<()> {
        self.parts.iter().try_for_each(|p| {
            p.gpu.synchronize()?;
            Ok(p.comm.synchronize()?)
        })
    }

    /// `y = A·x` (see [`DistributedMatrix::apply`]).
    pub fn spmv(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.apply(T::ONE, x, T::ZERO, y)
    }

    /// `y = α·A·x + β·y`: the halo of `x` exchanged (written into `x`'s halo room) while
    /// the parts' interior rows are multiplied, then the rows that need the halo. Every part
    /// works on its own GPU at once. Asynchronous: [`DistributedMatrix::download`] or
    /// [`DistributedMatrix::synchronize`] waits.
    pub fn apply(&self, alpha: T, x: &DistVector<T>, beta: T, y: &mut DistVector<T>) -> Result<()> {
        self.apply_block(alpha, x, beta, y, Block::columns(1))
    }

    /// `Y = α·A·X + β·Y` for blocks of `block.k` vectors made by
    /// [`DistributedMatrix::upload_block`] or [`DistributedMatrix::zeros`] (which hold them
    /// column-major: `block.layout` must say so), one column at a time.
    pub fn apply_block(
        &self, alpha: T, x: &DistVector<T>, beta: T, y: &mut DistVector<T>, block: Block,
    ) -> Result<()> {
        if block.layout != Layout::ColMajor {
            return Err(Error::Shape(
                "distributed blocks are column-major in every part: upload_block converts a row-major block".into(),
            ));
        }
        self.check(x, true, block.k)?;
        self.check(y, false, block.k)?;
        if self.nrows() == 0 {
            return Ok(()); // nothing to write, however many (empty) vectors the block says
        }
        for j in 0..block.k {
            self.gather_sends(x, j)?;
            let mut run = |i: usize, piece: &Piece<T>| -> Result<()> {
                let part = &self.parts[i];
                let (x_len, y_len) = (part.len(true), part.len(y.halo));
                let at = j * y_len + if y.halo { part.own_offset } else { 0 } + piece.rows.start;
                with_sub_slice_ref(&x.parts[i], j * x_len..(j + 1) * x_len, |xi| {
                    with_sub_slice(&mut y.parts[i], at..at + piece.rows.len(), |yi| {
                        piece.matrix.apply(alpha, xi, beta, yi)
                    })
                })
            };
            // Interior pieces read only own x entries, but a format's padding slots may point
            // at any column with a zero value: reading a halo entry mid-exchange gives 0
            // either way (for finite x). They are queued before the transfers, so that they
            // start while the host is still queueing those.
            let early = |q: &Piece<T>| self.overlap && q.interior;
            for (i, p) in self.parts.iter().enumerate() {
                p.pieces.iter().filter(|q| early(q)).try_for_each(|q| run(i, q))?;
            }
            self.transfer(x, j)?;
            for (i, p) in self.parts.iter().enumerate() {
                self.await_halo(p)?;
                p.pieces.iter().filter(|q| !early(q)).try_for_each(|q| run(i, q))?;
            }
        }
        Ok(())
    }

    /// `y = α·Aᵀ·x + β·y` through Aᵀ cut on the same partition and GPUs (built from the
    /// matrix in the parts' format on the first call, with this matrix's exchange); `x` needs
    /// halo room.
    pub fn apply_transpose(
        &self, alpha: T, x: &DistVector<T>, beta: T, y: &mut DistVector<T>,
    ) -> Result<()> {
        self.check(x, true, 1)?;
        self.check(y, false, 1)?;
        let t = self.transposed()?;
        // Aᵀ's parts need other halo entries than A's: x's own entries go into a vector of
        // Aᵀ's layout first (one device copy per part).
        let mut tx = t.x.lock().unwrap_or_else(|e| e.into_inner());
        for (i, (p, q)) in self.parts.iter().zip(&t.matrix.parts).enumerate() {
            if p.rows.is_empty() {
                continue;
            }
            let src = x.parts[i].slice(p.own_offset..p.own_offset + p.rows.len());
            let mut dst = tx.parts[i].slice_mut(q.own_offset..q.own_offset + q.rows.len());
            p.gpu.context().bind_to_thread()?;
            p.gpu.stream().memcpy_dtod(&src, &mut dst)?;
        }
        t.matrix.apply(alpha, &tx, beta, y)
    }

    /// Aᵀ on the same partition and GPUs, built on the first call.
    fn transposed(&self) -> Result<&Transposed<T>> {
        if let Some(t) = self.transposed.get() {
            return Ok(t);
        }
        if self.ranks.is_some() {
            return Err(Error::Unsupported(
                "Aᵀ·x of a matrix spread one part per process is not written yet (it needs Aᵀ's rows from every process): run it in one process with --devices".into(),
            ));
        }
        let gpus: Vec<Arc<Gpu>> = self.parts.iter().map(|p| p.gpu.clone()).collect();
        let at = self.source.transpose()?;
        let mut matrix =
            DistributedMatrix::with_partition(&at, &gpus, &self.spec, self.partition.clone())?;
        matrix.set_exchange(self.exchange_kind())?;
        matrix.overlap = self.overlap;
        let x = Mutex::new(matrix.new_x()?);
        Ok(self.transposed.get_or_init(|| Box::new(Transposed { matrix, x })))
    }

    /// Orders `p`'s stream after its halo's arrival: the rows that need it can run, and the
    /// next gather cannot overwrite a send buffer that a send or copy on this device still
    /// reads.
    fn await_halo(&self, p: &Part<T>) -> Result<()> {
        Ok(p.gpu.stream().wait(&p.halo_in)?)
    }

    /// Back-to-back means in milliseconds of `reps` products `y = A·x` and of `reps` halo
    /// exchanges alone, on a test vector (wall time from the first launch until every GPU
    /// is done; the host queues while the GPUs work).
    pub fn time_products(&self, reps: usize) -> Result<(f64, f64)> {
        let x: Vec<T> = crate::reference::test_vector_rows(self.host_rows());
        let (xd, mut y) = (self.upload(&x, true)?, self.new_y()?);
        self.spmv(&xd, &mut y)?; // warm-up: kernels loaded, caches filled
        self.synchronize()?;
        let reps = reps.max(1);
        let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
            // With one process per GPU the ranks start the clock together (a gather across
            // them): a rank that started first would count its wait for the others' first
            // exchange as product time.
            self.on_every_rank(true)?;
            let start = std::time::Instant::now();
            for _ in 0..reps {
                f()?;
            }
            self.synchronize()?;
            Ok(ms_since(start) / reps as f64)
        };
        let product = time(&mut || self.spmv(&xd, &mut y))?;
        let exchange = time(&mut || {
            self.gather_sends(&xd, 0)?;
            self.transfer(&xd, 0)?;
            self.parts.iter().try_for_each(|p| self.await_halo(p))
        })?;
        Ok((product, exchange))
    }

    fn check(&self, v: &DistVector<T>, need_halo: bool, columns: usize) -> Result<()> {
        if v.parts.len() != self.parts.len() {
            return Err(Error::Unsupported(format!(
                "a vector of {} parts for a matrix of {}",
                v.parts.len(),
                self.parts.len()
            )));
        }
        if v.columns != columns {
            return Err(Error::Shape(format!(
                "a block of {} vectors where {columns} are needed",
                v.columns
            )));
        }
        if need_halo && !v.halo {
            return Err(Error::Unsupported("x of a distributed product needs halo room: make it with new_x or upload(.., true)".into()));
        }
        Ok(())
    }

    /// The first half of the halo exchange (column `column` of `x`): every held owner gathers
    /// the entries its receivers need into its send buffer, on its stream, after the previous
    /// exchange's copies out of that buffer; then each part records `sendable`.
    fn gather_sends(&self, x: &DistVector<T>, column: usize) -> Result<()> {
        let mut sends = self.sends.lock().unwrap_or_else(|e| e.into_inner());
        for (k, p) in self.parts.iter().enumerate() {
            let j = self.first_part + k;
            p.gpu.context().bind_to_thread()?;
            if let (Some(idx), Some(buf)) = (&p.send_idx, &mut sends[k]) {
                // The previous exchange's peer copies out of this buffer run on the receivers'
                // exchange streams: wait for those on other devices (on this device, and for
                // NCCL's sends, the previous product's wait for `halo_in` did). Peer copies
                // run in one process, where held parts are all parts.
                if self.nccl.is_none() {
                    for t in self.transfers.iter().filter(|t| t.from == j) {
                        let to = &self.parts[t.to];
                        if !Arc::ptr_eq(&to.gpu, &p.gpu) {
                            p.gpu.stream().wait(&to.halo_in)?;
                        }
                    }
                }
                let n = idx.len() as u32;
                let len = p.len(true);
                let src = x.parts[k].slice(column * len..column * len + len);
                // SAFETY: gather_T(u32 n, const u32* idx, const T* x, T* out): idx holds n
                // positions below the local x's length (built from the part's own range), out
                // (the send buffer) n entries; the grid-stride loop stays below n.
                unsafe {
                    p.gather.launch_with(&p.gpu, grid_stride(n as u64), |a| {
                        a.arg(&n).arg(idx).arg(&src).arg(buf);
                    })?;
                }
            }
            p.sendable.record(p.gpu.stream())?;
        }
        Ok(())
    }

    /// The second half: the transfers on the exchange streams (`Part::comm`), each receiver's
    /// after its own `sendable` (its halo room is no longer read) and its owners'; then each
    /// part records `halo_in`, which [`DistributedMatrix::await_halo`] waits for. The events
    /// are made once per part (cudarc's `join` and cross-device copy make and drop one per
    /// call, and a product over 4 GPUs queues dozens of these steps).
    fn transfer(&self, x: &DistVector<T>, column: usize) -> Result<()> {
        let sends = self.sends.lock().unwrap_or_else(|e| e.into_inner());
        for (k, p) in self.parts.iter().enumerate() {
            p.gpu.context().bind_to_thread()?;
            p.comm.wait(&p.sendable)?;
            // NCCL's sends run on the owners' own exchange streams, after their `sendable`.
            if self.nccl.is_none() {
                let j = self.first_part + k;
                for t in self.transfers.iter().filter(|t| t.to == j) {
                    p.comm.wait(&self.parts[t.from].sendable)?;
                }
            }
        }
        match &self.nccl {
            Some(route) => self.exchange_nccl(route, &sends, x, column)?,
            None => self.copy_halo(&sends, x, column)?,
        }
        for p in &self.parts {
            p.gpu.context().bind_to_thread()?;
            p.halo_in.record(&p.comm)?;
        }
        Ok(())
    }

    /// The transfers as copies on the receivers' exchange streams (one process holds every
    /// part): `cuMemcpyPeerAsync` between devices, a device copy within one.
    fn copy_halo(&self, sends: &SendBuffers<T>, x: &DistVector<T>, column: usize) -> Result<()> {
        use cudarc::driver::result;
        let size = std::mem::size_of::<T>();
        for t in &self.transfers {
            let (from, to) = (&self.parts[t.from], &self.parts[t.to]);
            let buf = sends[t.from].as_ref().expect("an owner with transfers has a send buffer");
            let (src, _) = buf.slice(t.send_at..t.send_at + t.count).device_ptr(&to.comm);
            let at = column * to.len(true) + t.recv_at;
            let (dst, _) = x.parts[t.to].slice(at..at + t.count).device_ptr(&to.comm);
            to.gpu.context().bind_to_thread()?;
            // SAFETY: both runs lie inside their buffers (the plan built them so), which stay
            // alive; the source was filled before the owner's `sendable`, which this stream
            // waited for, and the destination is the receiver's halo room, the product's
            // scratch, which nothing else writes or reads until the rows after `halo_in` do.
            unsafe {
                if Arc::ptr_eq(&from.gpu, &to.gpu) {
                    result::memcpy_dtod_async(dst, src, t.count * size, to.comm.cu_stream())?;
                } else {
                    result::memcpy_peer_async(
                        to.gpu.context().cu_ctx(),
                        dst,
                        from.gpu.context().cu_ctx(),
                        src,
                        t.count * size,
                        to.comm.cu_stream(),
                    )?;
                }
            }
        }
        Ok(())
    }

    /// The transfers of [`DistributedMatrix::transfer`] as one NCCL group: a held owner's send
    /// on its exchange stream (after its gather), a held receiver's receive on its own (before
    /// the rows that need the halo). Every process queues its ends in the one transfer order,
    /// which is how NCCL matches a pair's sends and receives.
    fn exchange_nccl(
        &self, route: &NcclRoute, sends: &[Option<CudaSlice<T>>], x: &DistVector<T>, column: usize,
    ) -> Result<()> {
        let size = std::mem::size_of::<T>();
        let held = |part: usize| {
            let k = part.checked_sub(self.first_part).filter(|&k| k < self.parts.len())?;
            Some((k, &self.parts[k]))
        };
        route.comms.group(|group| {
            for t in &self.transfers {
                let (rank_from, rank_to) = (route.rank_of_part[t.from], route.rank_of_part[t.to]);
                // SAFETY (both calls): the runs lie inside their buffers (the plan built them
                // so), which stay alive and untouched by other work until the streams pass the
                // group: the send buffer is refilled only by the owner's next gather on the same
                // stream, and the receiver's x is read by products queued after it on its stream.
                if let Some((k, from)) = held(t.from) {
                    let buf = sends[k].as_ref().expect("an owner with transfers has a send buffer");
                    let (src, _) = buf.slice(t.send_at..t.send_at + t.count).device_ptr(&from.comm);
                    let end = nccl::End {
                        rank: rank_from,
                        addr: src,
                        stream: from.comm.cu_stream() as _,
                    };
                    unsafe { group.send(end, rank_to, t.count * size)? };
                }
                if let Some((k, to)) = held(t.to) {
                    let at = column * to.len(true) + t.recv_at;
                    let (dst, _) = x.parts[k].slice(at..at + t.count).device_ptr(&to.comm);
                    let end =
                        nccl::End { rank: rank_to, addr: dst, stream: to.comm.cu_stream() as _ };
                    unsafe { group.recv(end, rank_from, t.count * size)? };
                }
            }
            Ok(())
        })
    }
}

/// Aᵀ of a distributed matrix, and the x its products read (A's x has A's halo layout).
/// A part's pieces' conversion and upload times, summed, ms.
#[derive(Default)]
struct PieceTimes {
    convert_ms: f64,
    upload_ms: f64,
}

struct Transposed<T: Scalar> {
    matrix: DistributedMatrix<T>,
    x: Mutex<DistVector<T>>,
}

impl<T: Scalar> Part<T> {
    /// `local` built as `spec` on `gpu` ([`DistributedMatrix::pieces`]), its halo travelling
    /// on `comm`; no send list yet ([`plan`]).
    /// The conversion's and the upload's times go into `phases` ("convert", "upload": the
    /// upload with the kernels' compilation).
    fn build(
        local: LocalPart<T>, gpu: &Arc<Gpu>, comm: Arc<CudaStream>, spec: &Choice,
        phases: &mut Phases,
    ) -> Result<Self> {
        let (rows, own_offset, local_len) =
            (local.rows.clone(), local.own_offset(), local.local_len());
        let mut times = PieceTimes::default();
        let (pieces, label) = DistributedMatrix::pieces(local, gpu, spec, &mut times)?;
        phases.record("convert", times.convert_ms);
        let start = std::time::Instant::now();
        let name = format!("gather_{}", T::SUFFIX);
        let gather = Kernel::new(gpu, &crate::reorder::KERNELS, &name, grid_stride(1))?;
        phases.record("upload", times.upload_ms + ms_since(start));
        // Only ordering: no timing, which makes recording and waiting cheaper.
        let event = || gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING));
        Ok(Part {
            gpu: gpu.clone(),
            comm,
            rows,
            own_offset,
            local_len,
            pieces,
            label,
            send_idx: None,
            gather,
            sendable: event()?,
            halo_in: event()?,
        })
    }

    /// Entries of one vector in this part: the local x's (with halo room) or the own rows'.
    fn len(&self, halo: bool) -> usize {
        if halo {
            self.local_len
        } else {
            self.rows.len()
        }
    }
}

// Several GPUs: the parts' formats, the halo through peer copies or NCCL; vectors made by
// `upload` (an x with halo room, a y of own entries), blocks column-major.
crate::operator::by_inherent_methods!(DistributedMatrix, DistVector<T>, |d: &DistributedMatrix<
    T,
>| (d.nrows(), d.nrows()));
