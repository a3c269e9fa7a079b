//! One process per GPU (the shape of a multi-node run): each rank holds one part of a
//! [`DistributedMatrix`] — its rows only, on the host and on its GPU — and meets the others
//! through the rendezvous ([`Rendezvous`], for the setup: the partition, the halo plan,
//! NCCL's unique id, errors) and through NCCL (every product's halo, the solvers' sums).
//!
//! **Rows.** Each rank first reads an even share of the rows (its *stripe*); the ranks then
//! find the cuts of [`Partition::balanced`] from their stripes' row pointers alone (each rank
//! proposes, for every cut, the first row of its stripe that reaches the cut's share of the
//! entries; the first proposal wins), so the partition is the one a single process would
//! make of the whole matrix, and the bits of every product and solve are too. A rank then
//! reads the rows of its part that its stripe lacks (a generator makes any row block; a
//! Matrix Market file is read again, keeping only those rows).
//!
//! **Plan.** Each rank lists the columns it needs from every other part (its halo); the
//! lists are gathered on every rank, which then builds the whole plan — the transfers and
//! every owner's send list — as one process does, and keeps what concerns its own part.
//!
//! **Errors.** A rank that fails alone must not leave the others waiting in a collective
//! that it never joins: the setup's steps that may fail on one rank only (reading its rows,
//! building its part) end in [`Ranks::agree`], which fails every rank, naming the first that
//! failed and why.

use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use super::world::{Rendezvous, World};
use super::{
    nccl, plan, DistributedMatrix, LocalPart, NcclRoute, Part, Partition, Phases, Receive,
};
use crate::choice::Choice;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::matrix::{Csr, Scalar};

/// The processes of a multi-process run as one of them sees it: its place, and the rendezvous
/// with the others, which everything built over them shares (a clone is the same meeting;
/// every rank must take the same steps on it in the same order).
#[derive(Clone)]
pub struct Ranks {
    world: World,
    meet: Arc<Mutex<Rendezvous>>,
}

impl Ranks {
    /// The ranks met at `meet`.
    pub fn new(meet: Rendezvous) -> Self {
        Ranks { world: meet.world(), meet: Arc::new(Mutex::new(meet)) }
    }

    /// This process's place.
    pub fn world(&self) -> World {
        self.world
    }

    /// Every rank's `mine`, in rank order.
    pub fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.meet.lock().unwrap_or_else(|e| e.into_inner()).all_gather(mine)
    }

    /// The whole of a vector of which each rank holds its rows (`mine`; the ranks' rows follow
    /// each other in rank order), on every rank (at most 1 GiB per rank).
    pub fn gather_rows(&self, mine: &[f64]) -> Result<Vec<f64>> {
        Ok(self.all_gather_f64(mine)?.concat())
    }

    /// Every rank's `mine`, in rank order (at most 1 GiB per rank).
    pub fn all_gather_f64(&self, mine: &[f64]) -> Result<Vec<Vec<f64>>> {
        let bytes: Vec<u8> = mine.iter().flat_map(|v| v.to_le_bytes()).collect();
        let all = self.all_gather(&bytes)?;
        let floats = |m: &Vec<u8>| -> Vec<f64> {
            let words = m.chunks_exact(8);
            words.map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))).collect()
        };
        Ok(all.iter().map(floats).collect())
    }

    /// Rank 0's `bytes` on every rank (the others' are ignored).
    pub fn broadcast(&self, bytes: &[u8]) -> Result<Vec<u8>> {
        self.meet.lock().unwrap_or_else(|e| e.into_inner()).broadcast(bytes)
    }

    /// `result` on every rank when every rank's is `Ok`; else an error on every rank that
    /// names the first rank that failed and why (a rank's own error as it is): for a step
    /// that may fail on one rank only, before a step that the others would wait in.
    pub fn agree<R>(&self, result: Result<R>) -> Result<R> {
        let mine = match &result {
            Ok(_) => Vec::new(),
            Err(e) => e.to_string().into_bytes(),
        };
        let all = self.all_gather(&mine)?;
        let value = result?;
        match all.iter().position(|m| !m.is_empty()) {
            None => Ok(value),
            Some(r) => Err(Error::Launch(format!(
                "rank {r} of {} failed: {}",
                all.len(),
                String::from_utf8_lossy(&all[r])
            ))),
        }
    }
}

/// The rows rank `rank` of `size` reads first: an even share (`nrows·rank/size` on).
fn stripe(nrows: usize, world: &World) -> Range<usize> {
    let at = |r: usize| (nrows as u128 * r as u128 / world.size as u128) as usize;
    at(world.rank)..at(world.rank + 1)
}

/// For every cut `k` of `parts` (1 ≤ k < parts), the first row index `i` of `rows.start
/// ..= rows.end` whose global row pointer (`base + row_ptr[i − rows.start]`, `row_ptr` the
/// stripe's own) reaches the cut's share of the `nnz` entries, or `u64::MAX` if none does:
/// the stripe's proposal for [`Partition::balanced`]'s `k`-th start.
fn cut_proposals(
    row_ptr: &[usize], rows: &Range<usize>, base: usize, nnz: usize, parts: usize,
) -> Vec<u64> {
    (1..parts)
        .map(|k| {
            let share = (nnz as u128 * k as u128 / parts as u128) as usize;
            let i = row_ptr.partition_point(|&p| base + p < share);
            if i < row_ptr.len() {
                (rows.start + i) as u64
            } else {
                u64::MAX
            }
        })
        .collect()
}

/// The partition from every stripe's proposals (the first proposal of each cut; none: the
/// last row), or the even split of the rows when the matrix has no entries — as
/// [`Partition::balanced`] cuts the whole matrix.
fn partition_from_proposals(
    proposals: &[Vec<u64>], nrows: usize, nnz: usize, parts: usize,
) -> Result<Partition> {
    let mut starts = vec![0usize; parts + 1];
    for (k, start) in starts.iter_mut().enumerate().take(parts).skip(1) {
        *start = if nnz == 0 {
            nrows * k / parts
        } else {
            proposals.iter().map(|p| p[k - 1]).min().unwrap_or(u64::MAX).min(nrows as u64) as usize
        };
    }
    starts[parts] = nrows;
    Partition::from_starts(starts, nrows)
}

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes"))).collect()
}

fn bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// [`Partition::balanced`] of the whole `nrows`-row matrix into one part per rank, found
/// from each rank's stripe (`block`: the rows [`stripe`] gives, global columns).
fn balanced_from_stripes<T: Scalar>(
    block: &Csr<T>, nrows: usize, meet: &Ranks,
) -> Result<Partition> {
    let world = meet.world();
    let rows = stripe(nrows, &world);
    if block.nrows() != rows.len() {
        return Err(Error::Shape(format!(
            "rank {} read {} rows for its stripe of {} ({}..{})",
            world.rank,
            block.nrows(),
            rows.len(),
            rows.start,
            rows.end
        )));
    }
    let counts = words(&meet.all_gather(&bytes(&[block.nnz() as u64]))?.concat());
    let base: u64 = counts[..world.rank].iter().sum();
    let nnz = counts.iter().sum::<u64>() as usize;
    let mine = cut_proposals(block.row_ptr(), &rows, base as usize, nnz, world.size);
    let proposals: Vec<Vec<u64>> =
        meet.all_gather(&bytes(&mine))?.iter().map(|p| words(p)).collect();
    partition_from_proposals(&proposals, nrows, nnz, world.size)
}

/// Row blocks of one width stacked in order.
fn stack_rows<T: Scalar>(blocks: &[Csr<T>], ncols: usize) -> Csr<T> {
    let nrows = blocks.iter().map(|b| b.nrows()).sum();
    let nnz: usize = blocks.iter().map(|b| b.nnz()).sum();
    let (mut row_ptr, mut cols, mut vals) =
        (Vec::with_capacity(nrows + 1), Vec::with_capacity(nnz), Vec::with_capacity(nnz));
    row_ptr.push(0);
    for b in blocks {
        let at = cols.len();
        row_ptr.extend(b.row_ptr()[1..].iter().map(|&p| p + at));
        cols.extend_from_slice(b.col_idx());
        vals.extend_from_slice(b.values());
    }
    debug_assert!(blocks.iter().all(|b| b.ncols() == ncols));
    // SAFETY: whole rows of valid matrices of `ncols` columns, the pointers shifted by the
    // entries before them.
    unsafe { Csr::new_unchecked(nrows, ncols, row_ptr, cols, vals) }
}

/// This rank's part of an `nrows`-row square matrix whose row blocks `read` gives (a row
/// range → those rows, global columns): its stripe read, the balanced partition found with
/// the other ranks, then the rows of its part that the stripe lacks read and the rest of the
/// stripe dropped; also what each step took. A rank whose read fails fails every rank (with
/// its reason).
pub fn own_rows(
    nrows: usize, read: impl Fn(Range<usize>) -> Result<Csr<f64>>, meet: &Ranks,
) -> Result<(Partition, Csr<f64>, Phases)> {
    let world = meet.world();
    let rows = stripe(nrows, &world);
    let read_checked = |range: Range<usize>| -> Result<Option<Csr<f64>>> {
        if range.is_empty() {
            return Ok(None);
        }
        read(range.clone()).and_then(|b| checked(b, &range, nrows)).map(Some)
    };
    let mut phases = Phases::default();
    let block = phases.time("read stripe", || {
        meet.agree(read(rows.clone()).and_then(|b| checked(b, &rows, nrows)))
    })?;
    let partition = phases.time("cuts", || balanced_from_stripes(&block, nrows, meet))?;
    let part = partition.rows(world.rank);
    let own = phases.time("read own rows", || -> Result<Csr<f64>> {
        let before = meet.agree(read_checked(part.start..part.end.min(rows.start)))?;
        let after = meet.agree(read_checked(part.start.max(rows.end)..part.end))?;
        let kept = part.start.max(rows.start)..part.end.min(rows.end);
        let mut pieces: Vec<Csr<f64>> = before.into_iter().collect();
        if !kept.is_empty() {
            pieces.push(block.row_block(kept.start - rows.start..kept.end - rows.start));
        }
        pieces.extend(after);
        Ok(stack_rows(&pieces, nrows))
    })?;
    Ok((partition, own, phases.across(meet)?))
}

/// `b`, checked to be rows `range` of a square matrix of `nrows` rows.
fn checked(b: Csr<f64>, range: &Range<usize>, nrows: usize) -> Result<Csr<f64>> {
    if b.nrows() != range.len() || b.ncols() != nrows {
        return Err(Error::Shape(format!(
            "rows {}..{} of a {nrows} x {nrows} matrix came as a {} x {} block",
            range.start,
            range.end,
            b.nrows(),
            b.ncols()
        )));
    }
    Ok(b)
}

/// The NCCL unique id of rank 0, on every rank.
fn shared_nccl_id(meet: &Ranks) -> Result<Vec<u8>> {
    let id = if meet.world().rank == 0 { nccl::unique_id() } else { Ok(Vec::new()) };
    let id = meet.agree(id)?;
    meet.broadcast(&id)
}

/// A device handle for this rank: device `local_rank` of those this process sees, or the only
/// one when the launcher gives each rank its own device (Slurm's `--gpus-per-task=1` sets
/// `CUDA_VISIBLE_DEVICES` per rank).
pub fn rank_gpu(world: &World) -> Result<Arc<Gpu>> {
    Gpu::new(if Gpu::count()? == 1 { 0 } else { world.local_rank })
}

impl<T: Scalar> DistributedMatrix<T> {
    /// This process's part of a square matrix spread one part per process: rank `r` holds
    /// part `r`, `own` (its rows, all columns: the ranks' rows follow each other in rank
    /// order, as [`own_rows`] reads them), built as `spec` on `gpu`; the halo and the solvers'
    /// sums travel by NCCL. Every rank calls it together (it meets the others several times);
    /// a rank that fails makes every rank fail with its reason. A rank without rows is
    /// refused (run fewer processes).
    pub fn for_rank(own: &Csr<T>, gpu: &Arc<Gpu>, spec: &Choice, meet: &Ranks) -> Result<Self> {
        let World { rank, size, .. } = meet.world();
        let mut setup = Phases::default();
        let (shapes, partition) = setup.time("partition", || -> Result<_> {
            let shape = bytes(&[own.nrows() as u64, own.ncols() as u64, own.nnz() as u64]);
            let shapes: Vec<Vec<u64>> = meet.all_gather(&shape)?.iter().map(|m| words(m)).collect();
            let partition = meet.agree(partition_of_blocks(&shapes))?;
            meet.agree(check_rank_part(own, &partition, rank, size))?;
            Ok((shapes, partition))
        })?;
        let local = setup.time("renumber", || LocalPart::of_rows(own, &partition, rank));
        let receives = setup.time("halo lists", || -> Result<_> {
            let mine = Receive::of(&local, &partition, rank);
            let mut receives = Vec::new();
            for (to, message) in meet.all_gather(&encode(&mine))?.iter().enumerate() {
                receives.extend(decode(to, message)?);
            }
            Ok(receives)
        })?;
        let id = setup.time("nccl id", || shared_nccl_id(meet))?;
        let built = (|| {
            let comm = gpu.context().new_stream()?;
            let mut parts = vec![Part::build(local, gpu, comm, spec, &mut setup)?];
            let (transfers, sends) =
                setup.time("halo plan", || plan(&receives, size, &mut parts, rank))?;
            Ok((parts, transfers, sends))
        })();
        let (parts, transfers, sends) = meet.agree(built)?;
        let comms = setup.time("nccl init", || nccl::Comms::for_rank(&id, size, rank, gpu))?;
        let mut matrix = DistributedMatrix {
            nccl: Some(NcclRoute { comms, rank_of_part: (0..size).collect() }),
            partition,
            parts,
            first_part: rank,
            ranks: Some(meet.clone()),
            transfers,
            sends: Mutex::new(sends),
            nnz: shapes.iter().map(|s| s[2] as usize).sum(),
            overlap: true,
            source: own.clone(),
            transposed: OnceLock::new(),
            spec: spec.clone(),
            waits: Mutex::default(),
            setup: Phases::default(),
        };
        setup.time("nccl connect", || matrix.connect())?;
        matrix.setup = setup;
        Ok(matrix)
    }
}

/// The partition of the ranks' row blocks, from each one's (rows, columns, entries) in rank
/// order: the blocks follow each other.
fn partition_of_blocks(shapes: &[Vec<u64>]) -> Result<Partition> {
    if shapes.iter().any(|s| s.len() != 3) {
        return Err(Error::Launch(
            "a rank's block shape is malformed (ranks of different spmv builds?)".into(),
        ));
    }
    let mut starts = vec![0usize];
    for s in shapes {
        starts.push(starts[starts.len() - 1] + s[0] as usize);
    }
    let n = starts[starts.len() - 1];
    if let Some(r) = shapes.iter().position(|s| s[1] as usize != n) {
        return Err(Error::Shape(format!(
            "rank {r} holds rows of {} columns, but the ranks' rows add up to {n}: the matrix must be square",
            shapes[r][1]
        )));
    }
    Partition::from_starts(starts, n)
}

/// What [`DistributedMatrix::for_rank`] checks before it builds anything: the same answer
/// on every rank for the shared partition (so all refuse together), and this rank's rows.
fn check_rank_part<T: Scalar>(
    own: &Csr<T>, partition: &Partition, rank: usize, size: usize,
) -> Result<()> {
    let n = partition.starts().last().copied().unwrap_or(0);
    if partition.parts() != size {
        return Err(Error::Unsupported(format!(
            "a partition of {} parts for {size} processes",
            partition.parts()
        )));
    }
    if let Some(i) = (0..size).find(|&i| partition.rows(i).is_empty()) {
        return Err(Error::Unsupported(format!(
            "part {i} of {size} has no rows (a {n}-row matrix with {} parts): run fewer processes",
            size
        )));
    }
    let rows = partition.rows(rank);
    if own.nrows() != rows.len() || own.ncols() != n {
        return Err(Error::Shape(format!(
            "rank {rank} holds a {} x {} block for rows {}..{} of a {n} x {n} matrix",
            own.nrows(),
            own.ncols(),
            rows.start,
            rows.end
        )));
    }
    Ok(())
}

/// A rank's receives for the rendezvous: their count, then (from, recv_at, count) each, as
/// little-endian u64, then every receive's columns as little-endian u32.
fn encode(receives: &[Receive]) -> Vec<u8> {
    let mut head = vec![receives.len() as u64];
    for r in receives {
        head.extend([r.from as u64, r.recv_at as u64, r.cols.len() as u64]);
    }
    let mut out = bytes(&head);
    for r in receives {
        out.extend(r.cols.iter().flat_map(|c| c.to_le_bytes()));
    }
    out
}

/// [`encode`]'s message of rank `to`, back into its receives (a message of another shape is
/// an error: ranks of different builds).
fn decode(to: usize, message: &[u8]) -> Result<Vec<Receive>> {
    let bad = || {
        Error::Launch(format!(
            "rank {to}'s halo plan is malformed (ranks of different spmv builds?)"
        ))
    };
    let word = |i: usize| -> Result<usize> {
        let w = message.get(8 * i..8 * i + 8).ok_or_else(bad)?;
        Ok(u64::from_le_bytes(w.try_into().expect("8 bytes")) as usize)
    };
    let count = word(0)?;
    let mut at = 8usize
        .checked_mul(count.checked_mul(3).ok_or_else(bad)?.checked_add(1).ok_or_else(bad)?)
        .ok_or_else(bad)?;
    let mut receives = Vec::with_capacity(count.min(message.len()));
    for i in 0..count {
        let (from, recv_at, len) = (word(1 + 3 * i)?, word(2 + 3 * i)?, word(3 + 3 * i)?);
        let end = len.checked_mul(4).and_then(|b| b.checked_add(at)).ok_or_else(bad)?;
        let cols = message.get(at..end).ok_or_else(bad)?;
        let cols = cols
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        receives.push(Receive { to, from, cols, recv_at });
        at = end;
    }
    if at != message.len() {
        return Err(bad());
    }
    Ok(receives)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripes_proposals_give_the_balanced_partition() {
        for spec in ["poisson3d:n=9", "powerlaw:n=2000,mean=6,exp=2.0", "kron:scale=9"] {
            let a = crate::io::gen::generate(spec).unwrap();
            let n = a.nrows();
            for size in [1, 2, 3, 5, 8] {
                let proposals: Vec<Vec<u64>> = (0..size)
                    .map(|rank| {
                        let world = World { rank, size, local_rank: rank, launcher: "test" };
                        let rows = stripe(n, &world);
                        let block = a.row_block(rows.clone());
                        let base = a.row_ptr()[rows.start];
                        cut_proposals(block.row_ptr(), &rows, base, a.nnz(), size)
                    })
                    .collect();
                let p = partition_from_proposals(&proposals, n, a.nnz(), size).unwrap();
                assert_eq!(p, Partition::balanced(&a, size).unwrap(), "{spec} over {size}");
            }
        }
        // No entries; more ranks than rows.
        let empty = Csr::<f64>::zeros(5, 5);
        let none: Vec<Vec<u64>> = vec![vec![u64::MAX; 2]; 3];
        assert_eq!(
            partition_from_proposals(&none, 5, 0, 3).unwrap(),
            Partition::balanced(&empty, 3).unwrap()
        );
    }

    #[test]
    fn halo_plans_travel_whole() {
        let a = crate::io::gen::generate("poisson3d:n=6").unwrap();
        let p = Partition::balanced(&a, 3).unwrap();
        for i in 0..3 {
            let r = Receive::of(&LocalPart::of(&a, &p, i), &p, i);
            assert!(!r.is_empty());
            assert_eq!(decode(i, &encode(&r)).unwrap(), r);
        }
        assert_eq!(decode(0, &encode(&[])).unwrap(), vec![]);
        let mut broken = encode(&Receive::of(&LocalPart::of(&a, &p, 1), &p, 1));
        broken.pop();
        assert!(decode(1, &broken).unwrap_err().to_string().contains("malformed"));
        assert!(decode(1, &[1, 2, 3]).is_err());
        let huge = bytes(&[u64::MAX]);
        assert!(decode(1, &huge).is_err());
    }

    /// `each(rank, rendezvous)` on `size` threads met over loopback; their results in rank
    /// order.
    fn on_ranks<R: Send + 'static>(
        size: usize, each: impl Fn(usize, Ranks) -> R + Send + Sync + 'static,
    ) -> Vec<R> {
        let port = crate::distributed::world::free_port().unwrap();
        let address = format!("127.0.0.1:{port}");
        let each = Arc::new(each);
        let threads: Vec<_> = (0..size)
            .map(|rank| {
                let (address, each) = (address.clone(), each.clone());
                std::thread::spawn(move || {
                    let world = World { rank, size, local_rank: rank, launcher: "test" };
                    let timeout = std::time::Duration::from_secs(30);
                    each(rank, Ranks::new(Rendezvous::connect(world, &address, timeout).unwrap()))
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    }

    #[test]
    fn ranks_read_their_own_rows_of_the_balanced_partition() {
        let dir = std::env::temp_dir().join(format!("spmv-rank-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("skew.mtx");
        let skewed = crate::io::gen::generate("powerlaw:n=700,mean=9,exp=1.9").unwrap();
        crate::io::write_matrix_market(&file, &skewed).unwrap();
        let inputs = [
            crate::io::inputs::Input::Spec("poisson3d:n=11".into()),
            crate::io::inputs::Input::Spec("kron:scale=10,sym=1".into()),
            crate::io::inputs::Input::File(file),
        ];
        for input in inputs {
            let whole = input.load().unwrap();
            for size in [1, 3, 4] {
                let (n, input2) = (whole.nrows(), input.clone());
                let got = on_ranks(size, move |_, meet| {
                    let options = crate::io::ReadOptions::default();
                    let (partition, own, phases) =
                        own_rows(n, |rows| input2.load_rows(rows, &options), &meet).unwrap();
                    let names: Vec<&str> =
                        phases.phases().iter().map(|p| p.name.as_str()).collect();
                    assert_eq!(names, ["read stripe", "cuts", "read own rows"]);
                    (partition, own)
                });
                let want = Partition::balanced(&whole, size).unwrap();
                assert!(got.iter().all(|(p, _)| *p == want), "{input:?} over {size}");
                let blocks: Vec<Csr<f64>> = got.into_iter().map(|(_, b)| b).collect();
                let back = stack_rows(&blocks, n);
                assert_eq!(
                    (back.row_ptr(), back.col_idx(), back.values()),
                    (whole.row_ptr(), whole.col_idx(), whole.values()),
                    "{input:?} over {size}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rank_that_fails_fails_every_rank_with_its_reason() {
        let got = on_ranks(3, |rank, meet| {
            let read = |rows: Range<usize>| {
                if rank == 1 {
                    Err(Error::Argument("no such rows here".into()))
                } else {
                    crate::io::gen::generate("poisson2d:n=9").map(|a| a.row_block(rows))
                }
            };
            own_rows(81, read, &meet).unwrap_err().to_string()
        });
        assert!(got[1].contains("no such rows here"), "{}", got[1]);
        for e in [&got[0], &got[2]] {
            assert!(e.contains("rank 1 of 3 failed: no such rows here"), "{e}");
        }
        // A block of the wrong shape is refused with the rows it should have held.
        let got = on_ranks(2, |_, meet| {
            own_rows(10, |_| Ok(Csr::<f64>::zeros(1, 10)), &meet).unwrap_err().to_string()
        });
        assert!(got.iter().all(|e| e.contains("came as a 1 x 10 block")), "{got:?}");
    }

    #[test]
    fn every_generator_and_file_kind_gives_the_whole_matrix_rows() {
        let specs = [
            "poisson2d:n=13",
            "poisson3d:n=7,points=27",
            "kron:scale=9",
            "kron:scale=9,sym=1,perm=0",
            "random:rows=300,cols=200,mean=5",
            "banded:n=400,offsets=-30;-1;0;1;30,broken=0.2,scatter=0.01",
            "powerlaw:n=500,mean=6,exp=2.0",
            "longrows:n=400,short=3,count=4,long=150",
            "blockdiag:k=3,of=poisson2d:n=5",
            "fem:n=4,dim=3,order=2,dofs=2,numbering=random,drop=0.2",
            "fem:n=6,dim=2,order=3,numbering=morton",
            "road:n=20,numbering=random",
            "circuit:n=500,window=20,nets=3,netlen=100",
            "lp:rows=300,cols=500,stages=7,dense=2,denselen=200",
        ];
        for spec in specs {
            let whole = crate::io::gen::generate(spec).unwrap();
            let g = crate::io::gen::parse_spec(spec).unwrap();
            assert_eq!(g.dims().unwrap(), (whole.nrows(), whole.ncols()), "{spec}");
            let n = whole.nrows();
            for rows in [0..0, 0..n, 1..n / 3, n / 2..n, n - 1..n + 5] {
                let got = g.generate_rows(rows.clone()).unwrap();
                let want = whole.row_block(rows.start.min(n)..rows.end.min(n));
                assert_eq!(
                    (got.ncols(), got.row_ptr(), got.col_idx(), got.values()),
                    (want.ncols(), want.row_ptr(), want.col_idx(), want.values()),
                    "{spec} rows {rows:?}"
                );
            }
        }
        // Matrix Market: every symmetry and field, coordinate and array.
        let texts = [
            "%%MatrixMarket matrix coordinate real general\n3 4 4\n1 1 1\n3 4 2\n2 2 3\n3 1 4\n",
            "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n3 1 2\n2 2 3\n3 2 4\n",
            "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 2 -1\n",
            "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 3\n2 1\n3 3\n",
            "%%MatrixMarket matrix array real general\n3 2\n1\n0\n2\n3\n4\n0\n",
            "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n0\n3\n4\n5\n",
        ];
        let dir = std::env::temp_dir().join(format!("spmv-mtx-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (k, text) in texts.iter().enumerate() {
            let file = dir.join(format!("m{k}.mtx"));
            std::fs::write(&file, text).unwrap();
            let options = crate::io::ReadOptions::default();
            let whole: Csr<f64> = crate::io::read_matrix_market(&file).unwrap();
            for rows in [0..0, 0..1, 1..3, 2..3, 0..3, 2..9] {
                let got: Csr<f64> =
                    crate::io::read_matrix_market_rows(&file, &options, rows.clone()).unwrap();
                let want = whole.row_block(rows.start.min(3)..rows.end.min(3));
                assert_eq!(
                    (got.ncols(), got.row_ptr(), got.col_idx(), got.values()),
                    (want.ncols(), want.row_ptr(), want.col_idx(), want.values()),
                    "{text} rows {rows:?}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_ranks_blocks_make_the_partition_or_a_reason() {
        let p = partition_of_blocks(&[vec![3, 10, 5], vec![7, 10, 9]]).unwrap();
        assert_eq!(p.starts(), &[0, 3, 10]);
        let e = partition_of_blocks(&[vec![3, 10, 5], vec![7, 12, 9]]).unwrap_err();
        assert!(e.to_string().contains("rank 1 holds rows of 12 columns"), "{e}");
        assert!(partition_of_blocks(&[vec![3, 10]]).unwrap_err().to_string().contains("malformed"));
        let block = Csr::<f64>::zeros(3, 10);
        assert!(check_rank_part(&block, &p, 0, 2).is_ok());
        let e = check_rank_part(&block, &p, 1, 2).unwrap_err();
        assert!(e.to_string().contains("rank 1 holds a 3 x 10 block for rows 3..10"), "{e}");
        let empty = Partition::from_starts(vec![0, 0, 10], 10).unwrap();
        let e = check_rank_part(&Csr::<f64>::zeros(0, 10), &empty, 0, 2).unwrap_err();
        assert!(e.to_string().contains("part 0 of 2 has no rows"), "{e}");
        assert!(check_rank_part(&block, &p, 0, 3)
            .unwrap_err()
            .to_string()
            .contains("for 3 processes"));
    }

    #[test]
    fn row_blocks_stack_back_into_the_matrix() {
        let a = crate::io::gen::generate("powerlaw:n=500,mean=5,exp=2.2").unwrap();
        let cuts = [0, 0, 130, 131, 400, 500];
        let blocks: Vec<Csr<f64>> = cuts.windows(2).map(|w| a.row_block(w[0]..w[1])).collect();
        let back = stack_rows(&blocks, a.ncols());
        assert_eq!(
            (back.row_ptr(), back.col_idx(), back.values()),
            (a.row_ptr(), a.col_idx(), a.values())
        );
    }
}
