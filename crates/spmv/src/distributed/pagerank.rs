//! PageRank's engine on a [`DistributedMatrix`] holding `Gᵀ` (built from
//! [`Transition::matrix`]): per iteration the product through the halo exchange, then on every
//! part the one-GPU solver's update kernel (solve/pagerank.cu) over its own nodes, which also
//! gives its blocks' largest change and dangling-rank sums. The host combines those (the
//! maximum, and the sum in part and block order) into the residual and the next dangling
//! share, so each iteration waits for the GPUs once; the ranks are the same bits run after
//! run. The iteration's control is the one of every backend (`solve::pagerank`).

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{DistVector, DistributedMatrix};
use crate::error::{Error, Result};
use crate::matrix::Scalar;
use crate::solve::pagerank::{update_blocks, PowerEngine, Transition, KERNELS, UPDATE_BLOCK};

/// One part's buffers: its nodes' dangling flags, the dangling share it reads, and its
/// blocks' partial results.
struct PartState<T> {
    update: CudaFunction,
    dangling: CudaSlice<u8>,
    share: CudaSlice<T>,
    block_max_diff: CudaSlice<T>,
    block_dangling_sum: CudaSlice<T>,
    blocks: usize,
}

struct DistPower<'a, T: Scalar> {
    a: &'a DistributedMatrix<T>,
    factors: [T; 3],
    state: Vec<PartState<T>>,
    rank: DistVector<T>,
    next: DistVector<T>,
    dangling_sum: f64,
    residual: f64,
}

/// The power iteration's engine on the distributed `Gᵀ` of `t` (n nodes; see the module
/// doc); `a` must be built from `t.matrix()` (same size).
pub(crate) fn engine<'a, T: Scalar>(
    a: &'a DistributedMatrix<T>, t: &Transition, n: usize, factors: [T; 3],
) -> Result<impl PowerEngine<T> + 'a> {
    if a.nrows() != n {
        return Err(Error::Unsupported(format!(
            "a distributed matrix of {} rows for a graph of {n} nodes",
            a.nrows()
        )));
    }
    let mut state = Vec::with_capacity(a.parts.len());
    for p in &a.parts {
        let blocks = update_blocks(p.rows.len().max(1));
        state.push(PartState {
            update: p.gpu.function(&KERNELS, &format!("pagerank_update_{}", T::SUFFIX))?,
            dangling: p.gpu.upload_nonempty(&t.dangling()[p.rows.clone()])?,
            share: p.gpu.alloc::<T>(1)?,
            block_max_diff: p.gpu.alloc::<T>(blocks)?,
            block_dangling_sum: p.gpu.alloc::<T>(blocks)?,
            blocks,
        });
    }
    Ok(DistPower {
        a,
        factors,
        state,
        rank: a.upload(&vec![T::ONE; n], true)?,
        next: a.new_y()?,
        dangling_sum: t.dangling_count() as f64,
        residual: f64::INFINITY,
    })
}

impl<T: Scalar> PowerEngine<T> for DistPower<'_, T> {
    fn iterate(&mut self) -> Result<()> {
        let (a, [alpha, teleport, inv_n]) = (self.a, &self.factors);
        a.spmv(&self.rank, &mut self.next)?;
        for (i, (p, s)) in
            a.parts.iter().zip(&mut self.state).enumerate().filter(|(_, (p, _))| !p.rows.is_empty())
        {
            p.gpu.stream().memcpy_htod(&[T::from_f64(self.dangling_sum)], &mut s.share)?;
            let n_part = p.rows.len() as u32;
            let own = self.rank.parts[i].slice(p.own_offset..p.own_offset + p.rows.len());
            let config = LaunchConfig {
                grid_dim: (s.blocks as u32, 1, 1),
                block_dim: (UPDATE_BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = p.gpu.stream().launch_builder(&s.update);
            launch
                .arg(&n_part)
                .arg(alpha)
                .arg(teleport)
                .arg(inv_n)
                .arg(&s.share)
                .arg(&s.dangling)
                .arg(&own)
                .arg(&mut self.next.parts[i])
                .arg(&s.block_max_diff)
                .arg(&s.block_dangling_sum);
            // SAFETY: matches pagerank_update_<T>(u32, T, T, T, const T*, const u8*, const T*,
            // T*, T*, T*); the grid-stride loop stays below n_part = the length of the part's
            // dangling flags, of the own view of rank and of next's part; block b < blocks
            // writes slot b of the two partial arrays (blocks entries each).
            unsafe { launch.launch(config) }?;
        }
        // The residual and the next dangling sum, over blocks and parts in order.
        let (mut max_diff, mut sum) = (0.0f64, 0.0f64);
        for (p, s) in a.parts.iter().zip(&self.state).filter(|(p, _)| !p.rows.is_empty()) {
            for m in p.gpu.download(&s.block_max_diff)? {
                max_diff =
                    max_diff.max(if m.to_f64().is_nan() { f64::INFINITY } else { m.to_f64() });
            }
            sum += p.gpu.download(&s.block_dangling_sum)?.iter().map(|v| v.to_f64()).sum::<f64>();
        }
        // next becomes the rank: its own entries into rank's own run.
        for (i, p) in a.parts.iter().enumerate().filter(|(_, p)| !p.rows.is_empty()) {
            let mut own = self.rank.parts[i].slice_mut(p.own_offset..p.own_offset + p.rows.len());
            p.gpu.stream().memcpy_dtod(&self.next.parts[i].slice(0..p.rows.len()), &mut own)?;
        }
        (self.dangling_sum, self.residual) = (sum, max_diff);
        Ok(())
    }
    fn residual(&mut self, _due: bool) -> Result<Option<f64>> {
        Ok(Some(self.residual))
    }
    fn synchronize(&self) -> Result<()> {
        self.a.synchronize()
    }
    fn ranks(&mut self) -> Result<Vec<T>> {
        self.a.download(&self.rank)
    }
}
