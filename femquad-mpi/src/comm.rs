//! The ranks of a distributed computation: MPI's world communicator, the
//! agreement on failure that keeps every rank from waiting for a failed
//! one, and the collectives the distributed types need.
//!
//! # Failure
//! Every step that may fail on some ranks only (building a local mesh or
//! operator, evaluating it) ends in [`Ranks::agree`]: all ranks exchange
//! whether they failed, and if one did, every rank returns
//! [`Error::RankFailed`] naming the lowest failing rank and its message
//! (that rank keeps its own error) — before any halo message is sent, so
//! no rank blocks on a message a failed rank will never send. A panic is
//! not an error value: [`abort_on_panic`] makes it abort every rank.

use std::cell::Cell;

use mpi::Count;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::datatype::{Equivalence, Partition, PartitionMut};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;

use femquad::{Error, Result};

/// MPI's world communicator with what the distributed types ask of it.
pub struct Ranks {
    world: SimpleCommunicator,
    /// Agreements ([`Ranks::agree`]) so far.
    agreements: Cell<u64>,
}

impl Ranks {
    /// The ranks of `MPI_COMM_WORLD` (MPI initialised by the caller, once
    /// per process: `mpi::initialize()`).
    pub fn world() -> Ranks {
        Ranks {
            world: SimpleCommunicator::world(),
            agreements: Cell::new(0),
        }
    }

    /// The communicator.
    pub fn comm(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// Collective: `result` if every rank succeeded; otherwise, on every
    /// rank, the failure of the lowest failing rank — its own error there,
    /// [`Error::RankFailed`] (`"rank {r} of {n} failed: {message}"`)
    /// elsewhere.
    ///
    /// # Errors
    /// As described.
    pub fn agree<T>(&self, result: Result<T>) -> Result<T> {
        self.agreements.set(self.agreements.get() + 1);
        let failed = i32::from(result.is_err());
        let mut all = vec![0i32; self.size()];
        self.world.all_gather_into(&failed, &mut all[..]);
        let Some(first) = all.iter().position(|&f| f != 0) else {
            return result;
        };
        let mut message = match &result {
            Err(e) if first == self.rank() => e.to_string().into_bytes(),
            _ => Vec::new(),
        };
        let mut len = message.len() as u64;
        let root = self.world.process_at_rank(first as i32);
        root.broadcast_into(&mut len);
        message.resize(len as usize, 0);
        root.broadcast_into(&mut message[..]);
        match result {
            Err(e) if first == self.rank() => Err(e),
            _ => Err(Error::RankFailed {
                rank: first,
                n_ranks: self.size(),
                message: String::from_utf8_lossy(&message).into_owned(),
            }),
        }
    }

    /// The number of [`Ranks::agree`] calls on this rank so far: each one
    /// all-gather (a synchronisation of all ranks), so the distributed
    /// types keep them off their hot paths (a ghost update agrees once
    /// before its messages and once after).
    pub fn agreements(&self) -> u64 {
        self.agreements.get()
    }

    /// Collective: whether `flag` holds on every rank (one all-reduce).
    pub fn all(&self, flag: bool) -> bool {
        let mut all = 0i32;
        self.world
            .all_reduce_into(&i32::from(flag), &mut all, SystemOperation::min());
        all == 1
    }

    /// Collective: every rank's `value`, in rank order.
    pub fn all_gather_f64(&self, value: f64) -> Vec<f64> {
        let mut all = vec![0.0; self.size()];
        self.world.all_gather_into(&value, &mut all[..]);
        all
    }

    /// Collective: every rank's `values` (the same length on every rank),
    /// rank-major.
    pub fn all_gather_f64s(&self, values: &[f64]) -> Vec<f64> {
        let mut all = vec![0.0; self.size() * values.len()];
        self.world.all_gather_into(values, &mut all[..]);
        all
    }

    /// Collective: every rank's `value`, in rank order.
    pub fn all_gather_u64(&self, value: u64) -> Vec<u64> {
        let mut all = vec![0; self.size()];
        self.world.all_gather_into(&value, &mut all[..]);
        all
    }

    /// Collective: every rank's `values` (of any length), one list per rank
    /// in rank order.
    pub fn all_gather_u32s_varcount(&self, values: &[u32]) -> Vec<Vec<u32>> {
        let counts: Vec<Count> = self
            .all_gather_u64(values.len() as u64)
            .into_iter()
            .map(|c| c as Count)
            .collect();
        let parts = Parts {
            displs: displacements(&counts),
            counts,
        };
        let mut all = vec![0u32; parts.total()];
        {
            let mut partition =
                PartitionMut::new(&mut all[..], &parts.counts[..], &parts.displs[..]);
            self.world.all_gather_varcount_into(values, &mut partition);
        }
        parts.split(&all)
    }

    /// Collective: rank 0's `values` on every rank (their length taken from
    /// rank 0).
    pub fn broadcast_f64s(&self, values: &mut Vec<f64>) {
        let root = self.world.process_at_rank(0);
        let mut len = values.len() as u64;
        root.broadcast_into(&mut len);
        values.resize(len as usize, 0.0);
        root.broadcast_into(&mut values[..]);
    }

    /// Collective: rank 0's `values` on every rank (their length taken from
    /// rank 0).
    pub fn broadcast_u32s(&self, values: &mut Vec<u32>) {
        let root = self.world.process_at_rank(0);
        let mut len = values.len() as u64;
        root.broadcast_into(&mut len);
        values.resize(len as usize, 0);
        root.broadcast_into(&mut values[..]);
    }
}

/// How many entries each rank sends to rank 0 in a gather, or receives
/// from it in a scatter ([`Ranks::gather_parts`], [`Ranks::scatter_parts`]),
/// and where each rank's entries start in rank 0's buffer (rank order).
/// Meaningful on rank 0; empty elsewhere.
#[derive(Clone, Debug, Default)]
pub(crate) struct Parts {
    counts: Vec<Count>,
    displs: Vec<Count>,
}

impl Parts {
    /// The parts of `counts` entries, one count per rank.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `counts` if their sum exceeds MPI's
    /// 32-bit counts.
    pub(crate) fn new(counts: &[usize]) -> Result<Self> {
        let total: usize = counts.iter().sum();
        if total > Count::MAX as usize {
            return Err(Error::arg(
                "counts",
                format!("{total} entries in one gather, more than MPI's 32-bit counts hold"),
            ));
        }
        let counts: Vec<Count> = counts.iter().map(|&c| c as Count).collect();
        Ok(Parts {
            displs: displacements(&counts),
            counts,
        })
    }

    /// All entries.
    pub(crate) fn total(&self) -> usize {
        self.counts.iter().map(|&c| c as usize).sum()
    }

    /// The entries of rank `q` in rank 0's buffer.
    pub(crate) fn range(&self, q: usize) -> std::ops::Range<usize> {
        let start = self.displs[q] as usize;
        start..start + self.counts[q] as usize
    }

    /// `all` (every rank's entries concatenated) as one list per rank.
    fn split<T: Copy>(&self, all: &[T]) -> Vec<Vec<T>> {
        (0..self.counts.len())
            .map(|q| all[self.range(q)].to_vec())
            .collect()
    }
}

/// Where each part of `counts` entries starts when they are concatenated.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

impl Ranks {
    /// Collective: every rank's `values` on rank 0, one list per rank in
    /// rank order (`None` elsewhere); the counts are gathered first.
    ///
    /// # Errors
    /// Those of [`Parts::new`], on every rank.
    pub(crate) fn gather_varcount<T: Equivalence + Copy + Default>(
        &self,
        values: &[T],
    ) -> Result<Option<Vec<Vec<T>>>> {
        let root = self.world.process_at_rank(0);
        let count = values.len() as u64;
        let parts = if self.rank() == 0 {
            let mut counts = vec![0u64; self.size()];
            root.gather_into_root(&count, &mut counts[..]);
            Parts::new(&counts.iter().map(|&c| c as usize).collect::<Vec<_>>())
        } else {
            root.gather_into(&count);
            Ok(Parts::default())
        };
        let parts = self.agree(parts)?;
        Ok(self
            .gather_parts(values, &parts)
            .map(|all| parts.split(&all)))
    }

    /// Collective: every rank's `values` on rank 0, concatenated in rank
    /// order (`None` elsewhere); `parts` (on rank 0) must hold every
    /// rank's count.
    pub(crate) fn gather_parts<T: Equivalence + Copy + Default>(
        &self,
        values: &[T],
        parts: &Parts,
    ) -> Option<Vec<T>> {
        let mut all = vec![T::default(); if self.rank() == 0 { parts.total() } else { 0 }];
        self.gather_parts_into(values, parts, &mut all);
        (self.rank() == 0).then_some(all)
    }

    /// Collective: every rank's `values` into rank 0's `out` (ignored
    /// elsewhere), concatenated in rank order; `parts` (on rank 0) must
    /// hold every rank's count, and `out` their total.
    pub(crate) fn gather_parts_into<T: Equivalence + Copy + Default>(
        &self,
        values: &[T],
        parts: &Parts,
        out: &mut [T],
    ) {
        let root = self.world.process_at_rank(0);
        let dummy = [T::default()];
        let values = not_in_place(values, &dummy);
        if self.rank() != 0 {
            root.gather_varcount_into(values);
            return;
        }
        let mut partition = PartitionMut::new(out, &parts.counts[..], &parts.displs[..]);
        root.gather_varcount_into_root(values, &mut partition);
    }

    /// Collective: rank 0's `values` (its parts concatenated in rank order;
    /// ignored elsewhere) scattered, each rank's part into its `out`
    /// (whose length must be its count in `parts`).
    pub(crate) fn scatter_parts<T: Equivalence + Copy + Default>(
        &self,
        values: &[T],
        parts: &Parts,
        out: &mut [T],
    ) {
        let root = self.world.process_at_rank(0);
        let mut dummy = [T::default()];
        let out = if out.is_empty() { &mut dummy[..0] } else { out };
        if self.rank() != 0 {
            root.scatter_varcount_into(out);
            return;
        }
        let partition = Partition::new(values, &parts.counts[..], &parts.displs[..]);
        root.scatter_varcount_into_root(&partition, out);
    }
}

/// `values`, or if empty an empty slice of `dummy`: an empty `Vec`'s
/// pointer is dangling, `1` for bytes — OpenMPI's `MPI_IN_PLACE`, which a
/// gather refuses from a rank other than the root.
fn not_in_place<'a, T>(values: &'a [T], dummy: &'a [T; 1]) -> &'a [T] {
    if values.is_empty() {
        &dummy[..0]
    } else {
        values
    }
}

/// Makes a panic on any rank abort every rank (`MPI_Abort`, exit code 101)
/// after printing it, instead of leaving the others waiting for it: call it
/// once after initialising MPI.
pub fn abort_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        SimpleCommunicator::world().abort(101);
    }));
}
