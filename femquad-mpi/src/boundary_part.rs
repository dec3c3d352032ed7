//! [`BoundaryPart`]: femquad's [`Operator`] on a rank's boundary cells
//! ([`CellSplit::boundary`](crate::cell_split::CellSplit)) over their own
//! vertices, applied to the rank's local vectors: its inputs gathered from
//! them, its results added into them.
//!
//! With `B` the part's vertices (`k ↦ b_k`, local vertex indices) and
//! `F_B` the boundary cells' residual on them,
//!
//! ```text
//! r[b_k] ← r[b_k] + F_B(u[B])_k        (N_comp entries per vertex)
//! ```
//!
//! The part's result is added into `r` by one scatter-add: one addition
//! per entry after whatever `r` held (the interior cells' sum). The
//! gathers and scatter-adds run where the vectors live (device index
//! kernels on a device) and move only the part's entries.

use femquad::backend::{IndexSet, Vector};
use femquad::operator::Operator;
use femquad::{Real, Result};

/// The boundary cells' operator and its staging (see the [module
/// documentation](self)).
pub(crate) struct BoundaryPart<R: Real> {
    op: Operator<R>,
    /// The local vertex of each of the part's vertices.
    vertices: Vec<u32>,
    /// The local entries of the part's vertices, `N_comp` per vertex.
    field: IndexSet,
    /// The same, `N_comp²` per vertex (point-block diagonals).
    blocks: IndexSet,
    /// Part vectors of `N_comp` per vertex: `u`, `v`, the result.
    u: Vector<R>,
    v: Vector<R>,
    out: Vector<R>,
    /// The part's diagonal, `N_comp²` per vertex.
    out_blocks: Vector<R>,
}

impl<R: Real> BoundaryPart<R> {
    /// `op` (over the part's vertices `vertices`, local indices) for local
    /// vectors living where `like` does.
    ///
    /// # Errors
    /// Device allocation errors.
    pub(crate) fn new(op: Operator<R>, vertices: &[u32], like: &Vector<R>) -> Result<Self> {
        let nc = op.space().n_comp();
        let entries = |k: usize| -> Vec<u32> {
            vertices
                .iter()
                .flat_map(|&l| (0..k as u32).map(move |c| l * k as u32 + c))
                .collect()
        };
        let n = vertices.len();
        let zeros = |len: usize| match like {
            Vector::Host(_) => Ok(Vector::host_zeros(len)),
            Vector::Device(d) => Vector::device_zeros(d.device(), len),
        };
        Ok(BoundaryPart {
            field: IndexSet::located_like(like, &entries(nc))?,
            blocks: IndexSet::located_like(like, &entries(nc * nc))?,
            u: zeros(n * nc)?,
            v: zeros(n * nc)?,
            out: zeros(n * nc)?,
            out_blocks: zeros(n * nc * nc)?,
            op,
            vertices: vertices.to_vec(),
        })
    }

    /// The part's operator.
    pub(crate) fn op(&self) -> &Operator<R> {
        &self.op
    }

    /// The part's operator, mutable.
    pub(crate) fn op_mut(&mut self) -> &mut Operator<R> {
        &mut self.op
    }

    /// The local vertex of each of the part's vertices (increasing).
    pub(crate) fn vertices(&self) -> &[u32] {
        &self.vertices
    }

    /// Binds the time state `t`, `u_t = σ·u + b` with `b[B]` gathered from
    /// the local vector `b` ([`Operator::set_time`], which copies it).
    ///
    /// # Errors
    /// Those of [`Operator::set_time`] (indices in the part's numbering)
    /// and the index kernels.
    pub(crate) fn set_time(&mut self, t: f64, sigma: f64, b: &Vector<R>) -> Result<()> {
        self.u.gather(b, &self.field)?;
        self.op.set_time(t, sigma, &self.u)
    }

    /// `u[B]` gathered from the local vector `u`, or (`None`) the last one
    /// kept: the state of a linear solve is gathered once.
    ///
    /// # Errors
    /// Those of the index kernels.
    fn gather_state(&mut self, u: Option<&Vector<R>>) -> Result<()> {
        match u {
            Some(u) => self.u.gather(u, &self.field),
            None => Ok(()),
        }
    }

    /// `r[B] += F_B(u[B])` (unchecked for NaN: enqueued only on a device);
    /// `u` as in [`BoundaryPart::gather_state`].
    ///
    /// # Errors
    /// Those of [`Operator::apply_unchecked`] and the index kernels.
    pub(crate) fn add_residual(&mut self, u: Option<&Vector<R>>, r: &mut Vector<R>) -> Result<()> {
        self.gather_state(u)?;
        self.op.apply_unchecked(&self.u, &mut self.out)?;
        r.scatter_add(&self.field, &self.out, 0)
    }

    /// `out[B] += J_B(u[B])·v[B]`; `u` as in
    /// [`BoundaryPart::gather_state`].
    ///
    /// # Errors
    /// Those of [`Operator::jacobian_action`] and the index kernels.
    pub(crate) fn add_jacobian_action(
        &mut self,
        u: Option<&Vector<R>>,
        v: &Vector<R>,
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.gather_state(u)?;
        self.v.gather(v, &self.field)?;
        self.op.jacobian_action(&self.u, &self.v, &mut self.out)?;
        out.scatter_add(&self.field, &self.out, 0)
    }

    /// `out[B] += diag_B J(u[B])` (point blocks, `N_comp²` per vertex;
    /// unchecked for NaN); `u` as in [`BoundaryPart::gather_state`].
    ///
    /// # Errors
    /// Those of [`Operator::jacobian_diagonal_unchecked`] and the index
    /// kernels.
    pub(crate) fn add_jacobian_diagonal(
        &mut self,
        u: Option<&Vector<R>>,
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.gather_state(u)?;
        self.op
            .jacobian_diagonal_unchecked(&self.u, &mut self.out_blocks)?;
        out.scatter_add(&self.blocks, &self.out_blocks, 0)
    }
}
