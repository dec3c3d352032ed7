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
//! `r`'s entries gathered, the part's result added, scattered back: one
//! addition per entry after whatever `r` held (the interior cells' sum).
//! The gathers and scatters run where the vectors live (device index
//! kernels on a device) and move only the part's entries.

use femquad::backend::{IndexSet, Vector};
use femquad::operator::Operator;
use femquad::vector::VectorOps;
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
    /// Part vectors of `N_comp` per vertex: `u`, `v`, the result, and `r`'s
    /// entries gathered.
    u: Vector<R>,
    v: Vector<R>,
    out: Vector<R>,
    own: Vector<R>,
    /// Part vectors of `N_comp²` per vertex: the diagonal and `r`'s entries.
    out_blocks: Vector<R>,
    own_blocks: Vector<R>,
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
            own: zeros(n * nc)?,
            out_blocks: zeros(n * nc * nc)?,
            own_blocks: zeros(n * nc * nc)?,
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

    /// `r[B] += F_B(u[B])` (unchecked for NaN: enqueued only on a device).
    ///
    /// # Errors
    /// Those of [`Operator::apply_unchecked`] and the index kernels.
    pub(crate) fn add_residual(&mut self, u: &Vector<R>, r: &mut Vector<R>) -> Result<()> {
        self.u.gather(u, &self.field)?;
        self.op.apply_unchecked(&self.u, &mut self.out)?;
        add_at(r, &self.field, &mut self.own, &self.out)
    }

    /// `out[B] += J_B(u[B])·v[B]`.
    ///
    /// # Errors
    /// Those of [`Operator::jacobian_action`] and the index kernels.
    pub(crate) fn add_jacobian_action(
        &mut self,
        u: &Vector<R>,
        v: &Vector<R>,
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.u.gather(u, &self.field)?;
        self.v.gather(v, &self.field)?;
        self.op.jacobian_action(&self.u, &self.v, &mut self.out)?;
        add_at(out, &self.field, &mut self.own, &self.out)
    }

    /// `out[B] += diag_B J(u[B])` (point blocks, `N_comp²` per vertex;
    /// unchecked for NaN).
    ///
    /// # Errors
    /// Those of [`Operator::jacobian_diagonal_unchecked`] and the index
    /// kernels.
    pub(crate) fn add_jacobian_diagonal(
        &mut self,
        u: &Vector<R>,
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.u.gather(u, &self.field)?;
        self.op
            .jacobian_diagonal_unchecked(&self.u, &mut self.out_blocks)?;
        add_at(out, &self.blocks, &mut self.own_blocks, &self.out_blocks)
    }
}

/// `y[at] += x` through `own` (`y[at]` gathered, `x` added, scattered).
fn add_at<R: Real>(
    y: &mut Vector<R>,
    at: &IndexSet,
    own: &mut Vector<R>,
    x: &Vector<R>,
) -> Result<()> {
    own.gather(y, at)?;
    own.axpy(1.0, x)?;
    y.scatter(at, own)
}
