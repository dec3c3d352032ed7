//! The native (CPU) integrator: the reference for the OpenCL kernel. It
//! evaluates the physics in the precision `R` it integrates in
//! ([`PointwiseEval<R>`]).
//!
//! It computes exactly the element vectors defined in [`crate::discretization`],
//! one cell at a time. The parallel version splits the cells into chunks
//! handled by rayon; every cell is computed by the same sequence of
//! operations either way, so serial and parallel results are bit-identical.

mod facets;
mod integrator;
pub mod multigrid;

use std::ops::Range;

use rayon::prelude::*;

use crate::aux_space::AuxSpace;
use crate::discretization::{CellInputs, CellTime, Discretization};
use crate::layout;
use crate::physics::{Direction, PointArgs, PointwiseEval};
use crate::{Error, Real, Result};

pub use facets::BoundaryIntegrals;
pub(crate) use facets::TermData as BoundaryTermData;
pub use integrator::{NativeIntegrator, point_block_diagonal};

/// Serial or parallel execution of the native integrator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Execution {
    /// One thread.
    Serial,
    /// All rayon threads.
    #[default]
    Parallel,
}

/// Cells per rayon task.
const CHUNK: usize = 1024;

/// Element vectors of all cells: `out[c·N_bt + i] = E[c][i]`.
pub fn element_vectors<R: Real, P: PointwiseEval<R> + ?Sized>(
    disc: &Discretization<R>,
    physics: &P,
    inputs: &CellInputs<'_, R>,
    out: &mut [R],
    execution: Execution,
) -> Result<()> {
    element_vectors_range(disc, physics, inputs, 0..disc.n_cells(), out, execution)
}

/// Tangent element vectors of all cells, the derivative of
/// [`element_vectors`] at `inputs.u` in the direction `direction` (cell-local,
/// like `inputs.u`):
///
/// ```text
/// δE[c][i] = Σ_q w_q det J_c ( φ_i · δf0(x_q) + ∇φ_i : δf1(x_q) ),
/// (δf0, δf1) = ∂(f0, f1)/∂(u, ∇u) · (δu, δ∇u),
/// ```
///
/// with `δu`, `δ∇u` the values and gradients of the direction at the
/// quadrature points, computed as `u`, `∇u` are. Summed over cells, this
/// is the Jacobian action `J(u)·v` ([`crate::operator::Operator::jacobian_action`]).
/// With a time state ([`CellInputs::time`], `u_t = σ·u + b`) and a physics
/// that reads `u_t`, the direction in `u_t` is `σ·δu`: the step Jacobian
/// `σ·∂F/∂u_t + ∂F/∂u` (likewise in [`diagonal_blocks`]).
///
/// # Errors
/// As [`element_vectors`]; `direction` is named for a wrong length or a
/// non-finite value; [`crate::physics::PointwiseError::NoDerivatives`] for a
/// physics without derivatives.
pub fn tangent_element_vectors<R: Real, P: PointwiseEval<R> + ?Sized>(
    disc: &Discretization<R>,
    physics: &P,
    inputs: &CellInputs<'_, R>,
    direction: &[R],
    out: &mut [R],
    execution: Execution,
) -> Result<()> {
    crate::error::check_len("direction", direction, disc.n_cells() * disc.n_bt())?;
    crate::real::check_finite("direction", direction)?;
    integrate_range(
        disc,
        physics,
        inputs,
        Some(direction),
        0..disc.n_cells(),
        out,
        execution,
    )
}

/// The diagonal blocks of the element Jacobians of all cells, from the
/// physics' tangent (the native twin of `kernels/jacobian_diagonal.cl`,
/// computed by the same operations):
///
/// ```text
/// B[c][b][fc][gc] = Σ_q w_q det J_c ( δf0_fc · φ_b + δf1_fc · ∇φ_b )(x_q),
/// (δf0, δf1) = ∂(f0, f1)/∂(u, ∇u) · (φ_b e_gc, ∇φ_b e_gc),
/// ```
///
/// at `(u, ∇u, a, ∇a, x)` of the point, into
/// `out[((c·N_b + b)·N_comp + fc)·N_comp + gc]` (`n_cells·N_b·N_comp²`
/// entries). Summed over the cells of each node, these are the point blocks
/// of the Jacobian's diagonal
/// ([`crate::operator::Operator::jacobian_diagonal`]). NaN and ±∞ that the
/// physics returns are kept, for the caller to report where they land.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `u`, `aux` or `blocks` for a wrong
/// length; [`Error::NonFinite`] for NaN or ±∞ in the inputs;
/// [`crate::physics::PointwiseError::NoDerivatives`] for a physics without
/// derivatives.
pub fn diagonal_blocks<R: Real, P: PointwiseEval<R> + ?Sized>(
    disc: &Discretization<R>,
    physics: &P,
    inputs: &CellInputs<'_, R>,
    out: &mut [R],
    execution: Execution,
) -> Result<()> {
    disc.check_physics(physics, inputs.constants.len())?;
    let (n_cells, n_b, nc, dim) = (disc.n_cells(), disc.n_b(), disc.n_comp(), disc.dim());
    let per_cell = n_b * nc * nc;
    crate::error::check_len("u", inputs.u, n_cells * n_b * nc)?;
    crate::error::check_len("aux", inputs.aux, n_cells * disc.aux_per_cell())?;
    crate::error::check_len("blocks", out, n_cells * per_cell)?;
    crate::real::check_finite("u", inputs.u)?;
    crate::real::check_finite("aux", inputs.aux)?;
    crate::real::check_finite("constants", inputs.constants)?;
    crate::discretization::check_time(inputs.time.as_ref(), n_cells * n_b * nc)?;
    let reads_u_t = physics.info().reads.u_t;
    // The direction's u_t part is σ·(its u part): the step Jacobian.
    let sigma = match (&inputs.time, reads_u_t) {
        (Some(time), true) => Some(time.sigma),
        _ => None,
    };
    let z = |n: usize| vec![R::ZERO; n];
    let cell = |c: usize, blocks: &mut [R], s: &mut DiagonalScratch<R>| -> Result<()> {
        let geom = disc.geometry();
        let inv_j = &geom.inv_j()[c * dim * dim..(c + 1) * dim * dim];
        let det_j = geom.det_j()[c];
        let u_cell = &inputs.u[c * n_b * nc..(c + 1) * n_b * nc];
        let aux_per_cell = disc.aux_per_cell();
        let aux_cell = &inputs.aux[c * aux_per_cell..(c + 1) * aux_per_cell];
        blocks.fill(R::ZERO);
        for q in 0..disc.n_q() {
            s.point.evaluate(disc, c, u_cell, aux_cell, q);
            s.point
                .evaluate_time(disc, inputs.time.as_ref(), reads_u_t, c, q);
            let args = s.point.args(inputs.constants);
            let phi = &disc.phi[layout::tab_phi(q, 0, n_b)..layout::tab_phi(q + 1, 0, n_b)];
            let dphi = &disc.dphi
                [layout::tab_dphi(q, 0, 0, n_b, dim)..layout::tab_dphi(q + 1, 0, 0, n_b, dim)];
            let wdet = disc.weights[q] * det_j;
            for b in 0..n_b {
                // ∇φ_b = Σ_e ∂φ_b/∂ξ_e J⁻¹[e][d]
                for d in 0..dim {
                    let mut g = R::ZERO;
                    for e in 0..dim {
                        g += dphi[b * dim + e] * inv_j[e * dim + d];
                    }
                    s.grad_phi[d] = g;
                }
                for gc in 0..nc {
                    s.du.fill(R::ZERO);
                    s.dgrad_u.fill(R::ZERO);
                    s.du[gc] = phi[b];
                    for d in 0..dim {
                        s.dgrad_u[layout::point_grad(gc, d, dim)] = s.grad_phi[d];
                    }
                    s.df0.fill(R::ZERO);
                    s.df1.fill(R::ZERO);
                    let du_t: &[R] = match sigma {
                        Some(sigma) => {
                            for (t, &d) in s.du_t.iter_mut().zip(&s.du) {
                                *t = sigma * d;
                            }
                            &s.du_t
                        }
                        None => &[],
                    };
                    let dir = Direction {
                        du: &s.du,
                        dgrad_u: &s.dgrad_u,
                        du_t,
                    };
                    physics.eval_tangent(dim, &args, &dir, &mut s.df0, &mut s.df1)?;
                    for fc in 0..nc {
                        let mut k = (s.df0[fc] * wdet) * phi[b];
                        for d in 0..dim {
                            k += (s.df1[layout::point_grad(fc, d, dim)] * wdet) * s.grad_phi[d];
                        }
                        blocks[(b * nc + fc) * nc + gc] += k;
                    }
                }
            }
        }
        Ok(())
    };
    let run_chunk = |(k, chunk): (usize, &mut [R])| -> Result<()> {
        let mut s = DiagonalScratch {
            point: PointValues::new(dim, nc, disc.aux().n_comp()),
            grad_phi: z(dim),
            du: z(nc),
            dgrad_u: z(nc * dim),
            du_t: z(nc),
            df0: z(nc),
            df1: z(nc * dim),
        };
        for (j, blocks) in chunk.chunks_mut(per_cell).enumerate() {
            cell(k * CHUNK + j, blocks, &mut s)?;
        }
        Ok(())
    };
    match execution {
        Execution::Serial => out
            .chunks_mut(CHUNK * per_cell)
            .enumerate()
            .try_for_each(run_chunk),
        Execution::Parallel => out
            .par_chunks_mut(CHUNK * per_cell)
            .enumerate()
            .try_for_each(run_chunk),
    }
}

/// Per-thread work arrays of [`diagonal_blocks`].
struct DiagonalScratch<R> {
    point: PointValues<R>,
    /// `∇φ_b` at the point, `[d]`.
    grad_phi: Vec<R>,
    /// The direction `φ_b e_gc`, its gradient and `σ·φ_b e_gc` (the
    /// direction in `u_t`) at the point.
    du: Vec<R>,
    dgrad_u: Vec<R>,
    du_t: Vec<R>,
    /// The tangent there.
    df0: Vec<R>,
    df1: Vec<R>,
}

/// Element vectors of the cells `cells`; `inputs` holds the cell-local data
/// of those cells only (`u` has `cells.len()·N_bt` entries, …) and `out`
/// receives `cells.len()·N_bt` entries. Geometry is taken for the global cell
/// indices in `cells`.
pub fn element_vectors_range<R: Real, P: PointwiseEval<R> + ?Sized>(
    disc: &Discretization<R>,
    physics: &P,
    inputs: &CellInputs<'_, R>,
    cells: Range<usize>,
    out: &mut [R],
    execution: Execution,
) -> Result<()> {
    integrate_range(disc, physics, inputs, None, cells, out, execution)
}

/// Element vectors (`direction` `None`) or tangent element vectors of the
/// cells `cells`.
fn integrate_range<R: Real, P: PointwiseEval<R> + ?Sized>(
    disc: &Discretization<R>,
    physics: &P,
    inputs: &CellInputs<'_, R>,
    direction: Option<&[R]>,
    cells: Range<usize>,
    out: &mut [R],
    execution: Execution,
) -> Result<()> {
    if cells.end > disc.n_cells() || cells.start > cells.end {
        return Err(Error::arg(
            "cells",
            format!("range {cells:?} is not within the {} cells", disc.n_cells()),
        ));
    }
    disc.check_physics(physics, inputs.constants.len())?;
    let n = cells.len();
    disc.check_inputs(inputs, n, out)?;
    let kernel = CellKernel::new(disc, physics, inputs, direction);
    let n_bt = disc.n_bt();
    let run_chunk = |(k, chunk): (usize, &mut [R])| -> Result<()> {
        let mut scratch = kernel.scratch();
        let first = k * CHUNK;
        for (j, e) in chunk.chunks_mut(n_bt).enumerate() {
            kernel.cell(first + j, cells.start + first + j, e, &mut scratch)?;
        }
        Ok(())
    };
    match execution {
        Execution::Serial => out
            .chunks_mut(CHUNK * n_bt)
            .enumerate()
            .try_for_each(run_chunk),
        Execution::Parallel => out
            .par_chunks_mut(CHUNK * n_bt)
            .enumerate()
            .try_for_each(run_chunk),
    }
}

/// Per-thread work arrays of [`CellKernel::cell`].
struct Scratch<R> {
    point: PointValues<R>,
    f0: Vec<R>,
    f1: Vec<R>,
    g: Vec<R>,
    /// The direction's values and gradients at the point (tangents only),
    /// and the gradient work array of their evaluation.
    du: Vec<R>,
    dgrad_u: Vec<R>,
    dgrad_ref: Vec<R>,
    /// `σ·du`, the direction in `u_t` (transient tangents only).
    du_t: Vec<R>,
}

/// The inputs of the pointwise physics at one quadrature point of a cell:
/// `u`, `∇u`, `a`, `∇a` and `x`, evaluated from the cell-local coefficients
/// as defined in [`crate::discretization`]. Shared by the element-vector
/// integrator here and the element-matrix integrator of [`crate::sparse`],
/// so both see the same numbers.
pub(crate) struct PointValues<R> {
    u: Vec<R>,
    grad_ref: Vec<R>,
    grad_u: Vec<R>,
    a: Vec<R>,
    grad_a: Vec<R>,
    x: Vec<R>,
    /// `u_t = σ·u + b` at the point, when a time state is bound and the
    /// physics reads `u_t` (`has_u_t`).
    u_t: Vec<R>,
    has_u_t: bool,
    /// The time: the time state's, else 0.
    t: R,
}

impl<R: Real> PointValues<R> {
    /// Work arrays for `n_comp` solution and `n_aux` auxiliary components in `dim` dimensions.
    pub(crate) fn new(dim: usize, n_comp: usize, n_aux: usize) -> Self {
        let z = |n: usize| vec![R::ZERO; n];
        PointValues {
            u: z(n_comp),
            grad_ref: z(dim),
            grad_u: z(n_comp * dim),
            a: z(n_aux),
            grad_a: z(n_aux * dim),
            x: z(dim),
            u_t: z(n_comp),
            has_u_t: false,
            t: R::ZERO,
        }
    }

    /// Evaluates the point values at quadrature point `q` of global cell
    /// `cell` (index into the geometry) from that cell's solution
    /// coefficients `u_cell` (`N_b·N_comp`) and auxiliary coefficients
    /// `aux_cell` (`disc.aux_per_cell()`). `x` is left untouched when the
    /// geometry keeps no coordinates.
    pub(crate) fn evaluate(
        &mut self,
        disc: &Discretization<R>,
        cell: usize,
        u_cell: &[R],
        aux_cell: &[R],
        q: usize,
    ) {
        let (dim, n_b) = (disc.dim(), disc.n_b());
        let geom = disc.geometry();
        let inv_j = &geom.inv_j()[cell * dim * dim..(cell + 1) * dim * dim];
        let phi = &disc.phi[layout::tab_phi(q, 0, n_b)..layout::tab_phi(q + 1, 0, n_b)];
        let dphi = &disc.dphi
            [layout::tab_dphi(q, 0, 0, n_b, dim)..layout::tab_dphi(q + 1, 0, 0, n_b, dim)];

        let basis = PointBasis {
            dim,
            phi,
            dphi,
            inv_j,
        };
        // Field and gradient at the point.
        evaluate_field(
            u_cell,
            disc.n_comp(),
            &basis,
            &mut self.u,
            &mut self.grad_ref,
            &mut self.grad_u,
        );
        match disc.aux() {
            AuxSpace::None => {}
            AuxSpace::Field { n_comp: n_aux } => evaluate_field(
                aux_cell,
                n_aux,
                &basis,
                &mut self.a,
                &mut self.grad_ref,
                &mut self.grad_a,
            ),
            AuxSpace::Cell { .. } => {
                self.a.copy_from_slice(aux_cell);
                self.grad_a.fill(R::ZERO);
            }
        }
        // x = X_0 + J ξ_q = X_0 + Σ_i ξ_i (X_{i+1} − X_0)
        if let Some(coords) = geom.coords() {
            let xi = &disc.points[q * dim..(q + 1) * dim];
            for d in 0..dim {
                let x0 = coords[layout::cell_coord(cell, 0, d, dim)];
                let mut x = x0;
                for (i, &xi_i) in xi.iter().enumerate() {
                    x += xi_i * (coords[layout::cell_coord(cell, i + 1, d, dim)] - x0);
                }
                self.x[d] = x;
            }
        }
    }

    /// The time inputs at quadrature point `q` of the cell whose
    /// cell-local index (into `time.b`) is `local`, after
    /// [`PointValues::evaluate`] (whose `u` it uses): without a time state
    /// `t` = 0 and no `u_t`; with one, its `t`, and `u_t = σ·u + b` at the
    /// point when `reads_u_t`.
    pub(crate) fn evaluate_time(
        &mut self,
        disc: &Discretization<R>,
        time: Option<&CellTime<'_, R>>,
        reads_u_t: bool,
        local: usize,
        q: usize,
    ) {
        let Some(time) = time else {
            self.t = R::ZERO;
            self.has_u_t = false;
            return;
        };
        self.t = time.t;
        self.has_u_t = reads_u_t;
        if !reads_u_t {
            return;
        }
        let (n_b, nc) = (disc.n_b(), disc.n_comp());
        let phi = &disc.phi[layout::tab_phi(q, 0, n_b)..layout::tab_phi(q + 1, 0, n_b)];
        let b_cell = &time.b[local * n_b * nc..(local + 1) * n_b * nc];
        for c in 0..nc {
            let mut b = R::ZERO;
            for (k, &p) in phi.iter().enumerate() {
                b += p * b_cell[layout::cell_dof(0, k, c, n_b, nc)];
            }
            self.u_t[c] = time.sigma * self.u[c] + b;
        }
    }

    /// The pointwise arguments: these values and `constants`. Cell terms:
    /// no normal (a boundary physics is refused as a cell term); `u_t` and
    /// `t` as [`PointValues::evaluate_time`] set them.
    pub(crate) fn args<'s>(&'s self, constants: &'s [R]) -> PointArgs<'s, R> {
        PointArgs {
            u: &self.u,
            grad_u: &self.grad_u,
            a: &self.a,
            grad_a: &self.grad_a,
            x: &self.x,
            constants,
            n: &[],
            u_t: if self.has_u_t { &self.u_t } else { &[] },
            t: self.t,
        }
    }
}

/// One cell's integration, with everything borrowed from the discretization.
struct CellKernel<'a, R: Real, P: ?Sized> {
    disc: &'a Discretization<R>,
    physics: &'a P,
    inputs: &'a CellInputs<'a, R>,
    /// Cell-local direction `v` of a tangent evaluation (same layout as `u`).
    direction: Option<&'a [R]>,
    dim: usize,
    n_b: usize,
    n_comp: usize,
    n_aux: usize,
    has_f0: bool,
    has_f1: bool,
    reads_u_t: bool,
}

impl<'a, R: Real, P: PointwiseEval<R> + ?Sized> CellKernel<'a, R, P> {
    fn new(
        disc: &'a Discretization<R>,
        physics: &'a P,
        inputs: &'a CellInputs<'a, R>,
        direction: Option<&'a [R]>,
    ) -> Self {
        let info = physics.info();
        CellKernel {
            disc,
            physics,
            inputs,
            direction,
            dim: disc.dim(),
            n_b: disc.n_b(),
            n_comp: disc.n_comp(),
            n_aux: disc.aux().n_comp(),
            has_f0: info.has_f0,
            has_f1: info.has_f1,
            reads_u_t: info.reads.u_t,
        }
    }

    fn scratch(&self) -> Scratch<R> {
        let z = |n: usize| vec![R::ZERO; n];
        let (dim, nc, na) = (self.dim, self.n_comp, self.n_aux);
        Scratch {
            point: PointValues::new(dim, nc, na),
            f0: z(nc),
            f1: z(nc * dim),
            g: z(nc * dim),
            du: z(nc),
            dgrad_u: z(nc * dim),
            dgrad_ref: z(dim),
            du_t: z(nc),
        }
    }

    /// Integrates local cell `local` (index into the inputs), global cell
    /// `cell` (index into the geometry), into `e` (`N_bt` entries).
    fn cell(&self, local: usize, cell: usize, e: &mut [R], s: &mut Scratch<R>) -> Result<()> {
        let (dim, n_b, n_comp) = (self.dim, self.n_b, self.n_comp);
        let disc = self.disc;
        let geom = disc.geometry();
        let inv_j = &geom.inv_j()[cell * dim * dim..(cell + 1) * dim * dim];
        let det_j = geom.det_j()[cell];
        let n_bt = n_b * n_comp;
        let u_cell = &self.inputs.u[local * n_bt..(local + 1) * n_bt];
        let aux_per_cell = disc.aux_per_cell();
        let aux_cell = &self.inputs.aux[local * aux_per_cell..(local + 1) * aux_per_cell];
        e.fill(R::ZERO);

        for q in 0..disc.n_q() {
            let phi = &disc.phi[layout::tab_phi(q, 0, n_b)..layout::tab_phi(q + 1, 0, n_b)];
            let dphi = &disc.dphi
                [layout::tab_dphi(q, 0, 0, n_b, dim)..layout::tab_dphi(q + 1, 0, 0, n_b, dim)];

            s.point.evaluate(disc, cell, u_cell, aux_cell, q);
            let time = self.inputs.time.as_ref();
            s.point.evaluate_time(disc, time, self.reads_u_t, local, q);

            s.f0.fill(R::ZERO);
            s.f1.fill(R::ZERO);
            let args = s.point.args(self.inputs.constants);
            match self.direction {
                None => self.physics.eval(dim, &args, &mut s.f0, &mut s.f1)?,
                Some(v) => {
                    evaluate_field(
                        &v[local * n_bt..(local + 1) * n_bt],
                        n_comp,
                        &PointBasis {
                            dim,
                            phi,
                            dphi,
                            inv_j,
                        },
                        &mut s.du,
                        &mut s.dgrad_ref,
                        &mut s.dgrad_u,
                    );
                    let du_t: &[R] = match time {
                        Some(time) if self.reads_u_t => {
                            for (t, &d) in s.du_t.iter_mut().zip(&s.du) {
                                *t = time.sigma * d;
                            }
                            &s.du_t
                        }
                        _ => &[],
                    };
                    let dir = Direction {
                        du: &s.du,
                        dgrad_u: &s.dgrad_u,
                        du_t,
                    };
                    self.physics
                        .eval_tangent(dim, &args, &dir, &mut s.f0, &mut s.f1)?
                }
            }

            // Scale by w_q det J; map f1 to the reference frame: g = J⁻¹ f1.
            let wdet = disc.weights[q] * det_j;
            for c in 0..n_comp {
                s.f0[c] *= wdet;
                for ee in 0..dim {
                    let mut g = R::ZERO;
                    for d in 0..dim {
                        g += inv_j[ee * dim + d] * s.f1[layout::point_grad(c, d, dim)];
                    }
                    s.g[layout::point_grad(c, ee, dim)] = g * wdet;
                }
            }
            // Test with every basis function.
            for b in 0..n_b {
                for c in 0..n_comp {
                    let mut acc = R::ZERO;
                    if self.has_f0 {
                        acc += phi[b] * s.f0[c];
                    }
                    if self.has_f1 {
                        for ee in 0..dim {
                            acc += dphi[b * dim + ee] * s.g[layout::point_grad(c, ee, dim)];
                        }
                    }
                    e[layout::cell_dof(0, b, c, n_b, n_comp)] += acc;
                }
            }
        }
        Ok(())
    }
}

/// The basis at one quadrature point of one cell: `φ_b`, `∂φ_b/∂ξ_e`
/// (`[b][e]`) and the cell's `J⁻¹` (`[e][d]`), in `dim` dimensions.
struct PointBasis<'a, R> {
    dim: usize,
    phi: &'a [R],
    dphi: &'a [R],
    inv_j: &'a [R],
}

/// Values `v[c] = Σ_b φ_b coef[b][c]` and physical gradients
/// `grad[c][d] = Σ_e (Σ_b ∂φ_b/∂ξ_e coef[b][c]) J⁻¹[e][d]` of a field with
/// `n_comp` components from its cell-local coefficients (`grad_ref`: work
/// array of `dim` entries).
fn evaluate_field<R: Real>(
    coef: &[R],
    n_comp: usize,
    basis: &PointBasis<'_, R>,
    v: &mut [R],
    grad_ref: &mut [R],
    grad: &mut [R],
) {
    let PointBasis {
        dim,
        phi,
        dphi,
        inv_j,
    } = *basis;
    let n_b = phi.len();
    for c in 0..n_comp {
        let mut val = R::ZERO;
        grad_ref[..dim].fill(R::ZERO);
        for b in 0..n_b {
            let k = coef[layout::cell_dof(0, b, c, n_b, n_comp)];
            val += phi[b] * k;
            for e in 0..dim {
                grad_ref[e] += dphi[b * dim + e] * k;
            }
        }
        v[c] = val;
        for d in 0..dim {
            let mut g = R::ZERO;
            for e in 0..dim {
                g += grad_ref[e] * inv_j[e * dim + d];
            }
            grad[layout::point_grad(c, d, dim)] = g;
        }
    }
}
