//! [`DistVector`]: a vector over the vertices of a [`DistMesh`], each rank
//! holding its owned and ghost entries on the host; femquad's solvers run on
//! it through [`VectorOps`].
//!
//! # Owned and ghost entries
//! `per_node` entries per local vertex, in the layout's local numbering
//! (owned vertices first): entry `l·per_node + c` is global entry
//! `global_vertices[l]·per_node + c`. Owned entries are the vector's
//! values; ghost entries are copies, current only after
//! [`DistVector::ghost_update`] (the owner's values to every ghost), or
//! partial sums to add to the owner by [`DistVector::ghost_accumulate`].
//! Elementwise operations act on all local entries; reductions read owned
//! entries only.
//!
//! # Reproducible reductions
//! Each rank sums the products of its owned entries in local order in `f64`;
//! the partial sums of all ranks are all-gathered and summed in rank order
//! on every rank. So every rank gets the same bits, and a reduction is
//! bitwise reproducible from run to run at a fixed number of ranks and
//! partition (not across numbers of ranks: the order of additions changes).
//!
//! # Halo messages
//! Tagged by direction ([`TAG_UPDATE`] owner → ghosts, [`TAG_ACCUMULATE`]
//! ghosts → owner), one message per neighbour and direction, sent
//! non-blocking while the receives are posted; the owner adds received
//! contributions in increasing neighbour rank, after its own (a fixed order).

use std::rc::Rc;

use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;

use femquad::vector::{CgFusion, VectorOps};
use femquad::{Error, Precision, Real, Result};

use crate::dist_mesh::DistMesh;
use crate::layout::Neighbour;

/// Tag of ghost updates (owner → ghosts).
pub const TAG_UPDATE: i32 = 1;
/// Tag of ghost accumulations (ghosts → owner).
pub const TAG_ACCUMULATE: i32 = 2;

/// A vector over a [`DistMesh`]: `per_node` entries per vertex, owned and
/// ghost entries on each rank (see the [module documentation](self)).
#[derive(Clone)]
pub struct DistVector<R: Real> {
    mesh: Rc<DistMesh>,
    per_node: usize,
    values: Vec<R>,
}

impl<R: Real + Equivalence> DistVector<R> {
    /// Zeros, `per_node` entries per vertex (`N_comp` for a field).
    pub fn zeros(mesh: &Rc<DistMesh>, per_node: usize) -> Self {
        DistVector {
            mesh: mesh.clone(),
            per_node,
            values: vec![R::ZERO; mesh.layout().n_local() * per_node],
        }
    }

    /// This rank's entries taken from a global vector `global`
    /// (`n_global_vertices·per_node` entries in the serial numbering), ghosts
    /// included; every rank passes the same vector (e.g. values interpolated
    /// on the global mesh and broadcast).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `global` for a wrong length.
    pub fn from_global(mesh: &Rc<DistMesh>, per_node: usize, global: &[R]) -> Result<Self> {
        let n = mesh.layout().n_global_vertices * per_node;
        if global.len() != n {
            return Err(Error::arg(
                "global",
                format!(
                    "expected {n} entries (global vertices × {per_node}), got {}",
                    global.len()
                ),
            ));
        }
        let values = mesh
            .layout()
            .global_vertices
            .iter()
            .flat_map(|&v| {
                let at = v as usize * per_node;
                global[at..at + per_node].iter().copied()
            })
            .collect();
        Ok(DistVector {
            mesh: mesh.clone(),
            per_node,
            values,
        })
    }

    /// Collective: the owned entries of all ranks in the serial numbering,
    /// on rank 0 (`None` elsewhere) — to compare with a serial result or
    /// write output.
    pub fn gather_to_root(&self) -> Option<Vec<R>> {
        const TAG_GATHER: i32 = 3;
        let layout = self.mesh.layout();
        let comm = self.mesh.ranks().comm();
        let k = self.per_node;
        let owned = &self.values[..layout.n_owned * k];
        if layout.rank != 0 {
            let root = comm.process_at_rank(0);
            root.send_with_tag(&layout.global_vertices[..layout.n_owned], TAG_GATHER);
            root.send_with_tag(owned, TAG_GATHER);
            return None;
        }
        let mut global = vec![R::ZERO; layout.n_global_vertices * k];
        let mut place = |vertices: &[u32], values: &[R]| {
            for (&v, chunk) in vertices.iter().zip(values.chunks_exact(k)) {
                global[v as usize * k..(v as usize + 1) * k].copy_from_slice(chunk);
            }
        };
        place(&layout.global_vertices[..layout.n_owned], owned);
        for q in 1..layout.n_ranks {
            let from = comm.process_at_rank(q as i32);
            let (vertices, _) = from.receive_vec_with_tag::<u32>(TAG_GATHER);
            let (values, _) = from.receive_vec_with_tag::<R>(TAG_GATHER);
            place(&vertices, &values);
        }
        Some(global)
    }

    /// The distributed mesh.
    pub fn mesh(&self) -> &Rc<DistMesh> {
        &self.mesh
    }

    /// Entries per vertex.
    pub fn per_node(&self) -> usize {
        self.per_node
    }

    /// This rank's entries: owned, then ghosts.
    pub fn local(&self) -> &[R] {
        &self.values
    }

    /// This rank's entries, mutable.
    pub fn local_mut(&mut self) -> &mut [R] {
        &mut self.values
    }

    /// This rank's owned entries.
    pub fn owned(&self) -> &[R] {
        &self.values[..self.mesh.layout().n_owned * self.per_node]
    }

    /// Replaces this rank's entries (owned, then ghosts).
    ///
    /// # Errors
    /// [`Error::Internal`] for a wrong length (a bug of the caller in this
    /// crate).
    pub(crate) fn set_local(&mut self, values: Vec<R>) -> Result<()> {
        if values.len() != self.values.len() {
            return Err(Error::Internal {
                what: format!(
                    "a local result has {} entries, the rank holds {}",
                    values.len(),
                    self.values.len()
                ),
            });
        }
        self.values = values;
        Ok(())
    }

    /// Collective: every ghost entry gets its owner's value.
    pub fn ghost_update(&mut self) {
        let received = self.exchange(TAG_UPDATE, |n| &n.shared_owned, |n| &n.ghosts);
        let k = self.per_node;
        for (n, buf) in self.mesh.clone().layout().neighbours.iter().zip(received) {
            for (&l, chunk) in n.ghosts.iter().zip(buf.chunks_exact(k)) {
                self.values[l as usize * k..(l as usize + 1) * k].copy_from_slice(chunk);
            }
        }
    }

    /// Collective: every ghost entry is added to its owner's entry (own
    /// value first, then the neighbours' in increasing rank); ghost entries
    /// are left as they were (not current: call
    /// [`DistVector::ghost_update`] to make them so).
    pub fn ghost_accumulate(&mut self) {
        let received = self.exchange(TAG_ACCUMULATE, |n| &n.ghosts, |n| &n.shared_owned);
        let k = self.per_node;
        for (n, buf) in self.mesh.clone().layout().neighbours.iter().zip(received) {
            for (&l, chunk) in n.shared_owned.iter().zip(buf.chunks_exact(k)) {
                for (y, &x) in self.values[l as usize * k..].iter_mut().zip(chunk) {
                    *y += x;
                }
            }
        }
    }

    /// Sends, to each neighbour, the entries of the local vertices `send`
    /// lists, and returns what each neighbour sent for the vertices `recv`
    /// lists (in neighbour order).
    fn exchange(
        &self,
        tag: i32,
        send: impl Fn(&Neighbour) -> &Vec<u32>,
        recv: impl Fn(&Neighbour) -> &Vec<u32>,
    ) -> Vec<Vec<R>> {
        let comm = self.mesh.ranks().comm();
        let k = self.per_node;
        let neighbours = &self.mesh.layout().neighbours;
        let buffers: Vec<Vec<R>> = neighbours
            .iter()
            .map(|n| {
                send(n)
                    .iter()
                    .flat_map(|&l| {
                        self.values[l as usize * k..(l as usize + 1) * k]
                            .iter()
                            .copied()
                    })
                    .collect()
            })
            .collect();
        let mut received: Vec<Vec<R>> = neighbours
            .iter()
            .map(|n| vec![R::ZERO; recv(n).len() * k])
            .collect();
        mpi::request::scope(|scope| {
            let requests: Vec<_> = neighbours
                .iter()
                .zip(&buffers)
                .filter(|(_, b)| !b.is_empty())
                .map(|(n, b)| {
                    comm.process_at_rank(n.rank as i32)
                        .immediate_send_with_tag(scope, &b[..], tag)
                })
                .collect();
            for (n, r) in neighbours.iter().zip(&mut received) {
                if !r.is_empty() {
                    comm.process_at_rank(n.rank as i32)
                        .receive_into_with_tag(&mut r[..], tag);
                }
            }
            for request in requests {
                request.wait();
            }
        });
        received
    }

    /// The reproducible sum over ranks of each rank's `partial`s (see the
    /// [module documentation](self#reproducible-reductions)).
    fn sum_over_ranks(&self, partials: &[f64]) -> Vec<f64> {
        let all = self.mesh.ranks().all_gather_f64s(partials);
        let m = partials.len();
        (0..m)
            .map(|j| {
                all.chunks_exact(m.max(1))
                    .map(|p| p[j])
                    .fold(0.0, |s, x| s + x)
            })
            .collect()
    }

    fn local_dot(&self, y: &Self) -> f64 {
        self.owned()
            .iter()
            .zip(y.owned())
            .fold(0.0, |s, (&a, &b)| s + a.to_f64() * b.to_f64())
    }
}

impl<R: Real + Equivalence> VectorOps for DistVector<R>
where
    Vec<R>: VectorOps,
{
    /// The number of **global** entries (`n_global_vertices·per_node`).
    fn len(&self) -> usize {
        self.mesh.layout().n_global_vertices * self.per_node
    }

    fn precision(&self) -> Precision {
        R::PRECISION
    }

    fn zeros_like(&self) -> Result<Self> {
        Ok(DistVector::zeros(&self.mesh, self.per_node))
    }

    fn check_compatible(&self, own: &str, name: &'static str, other: &Self) -> Result<()> {
        if !Rc::ptr_eq(&self.mesh, &other.mesh) {
            return Err(Error::arg(
                name,
                format!("is distributed over another DistMesh than `{own}`"),
            ));
        }
        if self.per_node != other.per_node {
            return Err(Error::arg(
                name,
                format!(
                    "has {} entries per vertex, `{own}` has {}",
                    other.per_node, self.per_node
                ),
            ));
        }
        Ok(())
    }

    fn copy_from(&mut self, x: &Self) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.values.copy_from(&x.values)
    }

    fn fill(&mut self, value: f64) -> Result<()> {
        VectorOps::fill(&mut self.values, value)
    }

    fn scale(&mut self, alpha: f64) -> Result<()> {
        self.values.scale(alpha)
    }

    fn axpy(&mut self, alpha: f64, x: &Self) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.values.axpy(alpha, &x.values)
    }

    fn axpby(&mut self, alpha: f64, x: &Self, beta: f64) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.values.axpby(alpha, &x.values, beta)
    }

    fn pointwise_mult(&mut self, x: &Self, z: &Self) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.check_compatible("y", "y", z)?;
        self.values.pointwise_mult(&x.values, &z.values)
    }

    fn dot(&self, y: &Self) -> Result<f64> {
        self.check_compatible("x", "y", y)?;
        Ok(self.sum_over_ranks(&[self.local_dot(y)])[0])
    }

    fn norm2(&self) -> Result<f64> {
        Ok(self.dot(self)?.sqrt())
    }

    fn norm_inf(&self) -> Result<f64> {
        let local = self.owned().iter().fold(0.0f64, |m, &x| {
            let a = x.to_f64().abs();
            if m.is_nan() || a.is_nan() {
                f64::NAN
            } else {
                m.max(a)
            }
        });
        let all = self.mesh.ranks().all_gather_f64(local);
        Ok(all.into_iter().fold(0.0f64, |m, a| {
            if m.is_nan() || a.is_nan() {
                f64::NAN
            } else {
                m.max(a)
            }
        }))
    }

    fn dots(&self, vs: &[&Self]) -> Result<Vec<f64>> {
        for v in vs {
            self.check_compatible("x", "vs", v)?;
        }
        let partials: Vec<f64> = vs.iter().map(|v| self.local_dot(v)).collect();
        Ok(self.sum_over_ranks(&partials))
    }

    /// The unfused sequence of [`CgFusion`]'s table on the rank's entries
    /// (the updates are local; the reductions are [`VectorOps::dots`]'s, in
    /// rank order): the values the fused host pass gives, with one
    /// all-gather for both sums.
    fn cg_update(
        &mut self,
        alpha: f64,
        p: &Self,
        q: &Self,
        x: &mut Self,
        then: CgFusion<'_, Self>,
    ) -> Result<Option<(f64, f64)>> {
        self.check_compatible("r", "p", p)?;
        self.check_compatible("r", "q", q)?;
        self.check_compatible("r", "x", x)?;
        x.axpy(alpha, p)?;
        self.axpy(-alpha, q)?;
        match then {
            CgFusion::Update => Ok(None),
            CgFusion::Norm => {
                let rr = self.dots(&[self])?[0];
                Ok(Some((rr, rr)))
            }
            CgFusion::Jacobi {
                inverse_diagonal,
                z,
            } => {
                self.check_compatible("r", "inverse_diagonal", inverse_diagonal)?;
                self.check_compatible("r", "z", z)?;
                z.pointwise_mult(inverse_diagonal, self)?;
                let sums = self.dots(&[self, z])?;
                Ok(Some((sums[0], sums[1])))
            }
        }
    }

    fn maxpy(&mut self, alphas: &[f64], xs: &[&Self]) -> Result<()> {
        for x in xs {
            self.check_compatible("y", "xs", x)?;
        }
        let locals: Vec<&Vec<R>> = xs.iter().map(|x| &x.values).collect();
        self.values.maxpy(alphas, &locals)
    }

    /// The first **global** index (serial numbering) of a non-finite owned
    /// entry, over all ranks (collective).
    fn first_non_finite(&self) -> Result<Option<usize>> {
        let layout = self.mesh.layout();
        let k = self.per_node;
        let local = self
            .owned()
            .iter()
            .enumerate()
            .filter(|(_, x)| !x.is_finite())
            .map(|(i, _)| layout.global_vertices[i / k] as u64 * k as u64 + (i % k) as u64)
            .min()
            .unwrap_or(u64::MAX);
        let first = self.mesh.ranks().all_gather_u64(local).into_iter().min();
        Ok(first.filter(|&g| g != u64::MAX).map(|g| g as usize))
    }

    /// The entry of **global** index `index` (collective: its owner sends it).
    fn value_at(&self, index: usize) -> Result<f64> {
        let k = self.per_node;
        if index >= self.len() {
            return Err(Error::arg(
                "index",
                format!("{index} is out of range ({} global entries)", self.len()),
            ));
        }
        let mine = self
            .mesh
            .layout()
            .owned_local((index / k) as u32)
            .map(|l| self.values[l * k + index % k].to_f64());
        let ranks = self.mesh.ranks();
        let has = ranks.all_gather_u64(u64::from(mine.is_some()));
        let values = ranks.all_gather_f64(mine.unwrap_or(0.0));
        let owner = has
            .iter()
            .position(|&h| h == 1)
            .ok_or_else(|| Error::Internal {
                what: format!("global entry {index} has no owner"),
            })?;
        Ok(values[owner])
    }
}
