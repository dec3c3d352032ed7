//! [`BoundaryIntegrals`]: the boundary terms of a form integrated natively,
//! added into the cell-local arrays of the cell integrals before assembly.
//!
//! A boundary facet `F` is a facet of one cell `c`, and every basis
//! function that does not vanish on `F` is one of `c`'s. So the integral
//! over `F` is a contribution to `c`'s element vector (matrix, diagonal
//! block), computed from `c`'s cell-local coefficients with the facet
//! tabulation ([`FacetTabulation`]) and the cell's `J⁻¹`:
//!
//! ```text
//! E[c][(b, i)]       += |F|/|F̂| Σ_q w_q φ_b(ξ_q) f0_i(u_q, ∇u_q, u_t,q, x_q, n_F, t; c_t)
//! δE[c][(b, i)]      += |F|/|F̂| Σ_q w_q φ_b(ξ_q) δf0_i      (tangent along (v_q, ∇v_q, σ v_q))
//! K[c][(a, i)][(b, j)] += |F|/|F̂| Σ_q w_q φ_a ((g0 + σ g0_t)[i][j] φ_b + Σ_d g1[i][j][d] ∂φ_b/∂x_d)
//! ```
//!
//! with `u_q = Σ_b φ_b(ξ_q) u_c[b]`, `∇u_q = Σ_b Σ_e ∂φ_b/∂ξ_e(ξ_q) J⁻¹[e][·] u_c[b]`
//! at the reference points `ξ_q` of the facet's rule on the cell's local
//! facet, and `x_q`, `n_F`, `|F|/|F̂|` of [`FacetGeometry`]. In a transient
//! evaluation the facets share the cells' time state ([`CellTime`]: `t`,
//! `u_t = σ·u + b`): `u_t,q = σ u_q + Σ_b φ_b(ξ_q) b_c[b]` (for a physics
//! that reads `u_t`) and the time `t` (0 without a time state), so the
//! Jacobians are the step Jacobian `σ·∂F/∂u_t + ∂F/∂u`. The sums run
//! over the facets in the order of their sets (sorted by cell), term after
//! term, so the result is deterministic. The assembly `Eᵀ` of the cell
//! integrals then sums them with the rest.

use crate::discretization::CellTime;
use crate::error::PointwiseError;
use crate::facet::{BoundaryTerm, FacetGeometry, FacetTabulation};
use crate::layout::{elem_mat, tab_dphi, tab_phi};
use crate::physics::{Direction, PointArgs};
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

/// The boundary terms of a form with their facet tabulations and
/// geometries, integrated into cell-local arrays (`[cell][b][comp]`,
/// `[cell][i][j]`, `[cell][b][fc][gc]`) on the host.
pub struct BoundaryIntegrals<R: Real> {
    dim: usize,
    n_b: usize,
    n_comp: usize,
    terms: Vec<TermData<R>>,
}

/// One term and what integrating it needs (the device copies it,
/// `crate::opencl::operator::facets`).
pub(crate) struct TermData<R: Real> {
    pub(crate) term: BoundaryTerm<R>,
    /// The rule's weights `w_q`.
    pub(crate) weights: Vec<f64>,
    pub(crate) tabulation: FacetTabulation,
    pub(crate) geometry: FacetGeometry<f64>,
}

/// The values at one facet point and their work arrays.
struct FacetPoint<R> {
    u: Vec<R>,
    grad_u: Vec<R>,
    x: Vec<R>,
    n: Vec<R>,
    /// `u_t = σ·u + b` at the point (a physics that reads `u_t`).
    u_t: Vec<R>,
    /// `∂φ_b/∂x_d` at the point, `[b][d]`.
    dphi_x: Vec<f64>,
}

impl<R: Real> BoundaryIntegrals<R> {
    /// The terms `terms` of a form on `space`, each with its rule
    /// (its own, or the element's default), tabulation and geometry.
    ///
    /// # Errors
    /// Those of [`FacetTabulation::new`] and [`FacetGeometry::new`] (a set
    /// of another mesh, a degenerate cell).
    pub fn new(space: &FunctionSpace, terms: &[BoundaryTerm<R>]) -> Result<Self> {
        let element = space.element();
        let terms = terms
            .iter()
            .map(|term| {
                let rule = term.rule_for(&element)?;
                Ok(TermData {
                    weights: rule.weights().to_vec(),
                    tabulation: FacetTabulation::new(&element, &rule)?,
                    geometry: FacetGeometry::new(space.mesh(), term.set(), &rule)?,
                    term: term.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(BoundaryIntegrals {
            dim: space.dim(),
            n_b: space.n_basis(),
            n_comp: space.n_comp(),
            terms,
        })
    }

    /// The terms with their rules' weights, tabulations and geometries.
    pub(crate) fn terms(&self) -> &[TermData<R>] {
        &self.terms
    }

    /// The space's `[dim, N_b, N_comp]`.
    pub(crate) fn sizes(&self) -> [usize; 3] {
        [self.dim, self.n_b, self.n_comp]
    }

    /// Whether there is no boundary term.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The facets integrated over, summed over the terms.
    pub fn n_facets(&self) -> usize {
        self.terms.iter().map(|t| t.term.set().len()).sum()
    }

    /// Adds the boundary terms' element vectors at the cell-local values
    /// `u_cells` and the time state `time` (cell-local, as the cells'; `None`
    /// for a stationary evaluation) into `out` (`[cell][b][comp]`).
    ///
    /// # Errors
    /// A physics' evaluation error; [`Error::InvalidArgument`] (`physics`)
    /// naming the term, the facet point (its coordinates, the normal and
    /// `u` there) and the cell where the boundary physics returns NaN or
    /// ±∞ (its inputs are finite: the operator checks `u` first), or a
    /// term that reads `u_t` evaluated without a time state.
    pub fn add_residual(
        &self,
        u_cells: &[R],
        time: Option<&CellTime<'_, R>>,
        out: &mut [R],
    ) -> Result<()> {
        let nc = self.n_comp;
        let mut f0 = vec![R::ZERO; nc];
        self.for_each_point(u_cells, time, |t, p, args, cell, phi, _, w| {
            f0.fill(R::ZERO);
            t.term
                .physics()
                .eval(self.dim, args, &mut f0, &mut [])
                .map_err(|e| self.located(e, t, p))?;
            if let Some(bad) = f0.iter().find(|v| !v.is_finite()) {
                return Err(Error::arg(
                    "physics",
                    format!(
                        "the boundary physics `{}` returned f0 = {bad} at point {} (x = {:?}, \
                         n = {:?}, u = {:?}, u_t = {:?}, t = {}) of facet {} of cell {cell}: its \
                         f0 must be finite there; check it at that state (a division by zero, \
                         the square root or logarithm of a negative number, an overflow)",
                        t.term.physics().info().name,
                        p.1,
                        args.x,
                        args.n,
                        args.u,
                        args.u_t,
                        args.t,
                        t.term.set().facets()[p.0].local,
                    ),
                ));
            }
            self.scatter(out, cell, phi, w, &f0);
            Ok(())
        })
    }

    /// Adds the boundary terms' tangent element vectors at `u_cells` and
    /// the time state `time` along the direction `v_cells` (cell-local,
    /// like `u_cells`) into `out`: their part of `J(u)·v`, with the
    /// direction `σ·v` in `u_t` for a term that reads `u_t` (the step
    /// Jacobian `σ·∂F/∂u_t + ∂F/∂u`).
    ///
    /// # Errors
    /// A physics' evaluation error; [`PointwiseError::NoDerivatives`]; a
    /// term that reads `u_t` evaluated without a time state.
    pub fn add_tangent(
        &self,
        u_cells: &[R],
        v_cells: &[R],
        time: Option<&CellTime<'_, R>>,
        out: &mut [R],
    ) -> Result<()> {
        let (nc, dim, nb) = (self.n_comp, self.dim, self.n_b);
        let (mut dv, mut dgrad, mut dv_t, mut df0) = (
            vec![R::ZERO; nc],
            vec![R::ZERO; nc * dim],
            vec![R::ZERO; nc],
            vec![R::ZERO; nc],
        );
        self.for_each_point(u_cells, time, |t, p, args, cell, phi, dphi_x, w| {
            let v_cell = &v_cells[cell * nb * nc..(cell + 1) * nb * nc];
            field_at(v_cell, nc, dim, phi, dphi_x, &mut dv, &mut dgrad);
            df0.fill(R::ZERO);
            t.term
                .physics()
                .eval_tangent(
                    dim,
                    args,
                    &Direction {
                        du: &dv,
                        dgrad_u: &dgrad,
                        du_t: shifted(time, args, &dv, &mut dv_t),
                    },
                    &mut df0,
                    &mut [],
                )
                .map_err(|e| self.located(e, t, p))?;
            self.scatter(out, cell, phi, w, &df0);
            Ok(())
        })
    }

    /// Adds the boundary terms' diagonal blocks of the element Jacobians
    /// at `u_cells` and the time state `time` into `blocks`
    /// (`[cell][b][fc][gc]`, [`crate::native::diagonal_blocks`]'s layout),
    /// column by column from the tangent along
    /// `(φ_b e_gc, ∇φ_b e_gc, σ φ_b e_gc)`, as the cell blocks are.
    ///
    /// # Errors
    /// As [`BoundaryIntegrals::add_tangent`].
    pub fn add_diagonal_blocks(
        &self,
        u_cells: &[R],
        time: Option<&CellTime<'_, R>>,
        blocks: &mut [R],
    ) -> Result<()> {
        let (nc, dim, nb) = (self.n_comp, self.dim, self.n_b);
        let (mut dv, mut dgrad, mut dv_t, mut df0) = (
            vec![R::ZERO; nc],
            vec![R::ZERO; nc * dim],
            vec![R::ZERO; nc],
            vec![R::ZERO; nc],
        );
        self.for_each_point(u_cells, time, |t, p, args, cell, phi, dphi_x, w| {
            for b in 0..nb {
                for gc in 0..nc {
                    dv.fill(R::ZERO);
                    dgrad.fill(R::ZERO);
                    dv[gc] = R::from_f64(phi[b]);
                    for d in 0..dim {
                        dgrad[gc * dim + d] = R::from_f64(dphi_x[b * dim + d]);
                    }
                    df0.fill(R::ZERO);
                    t.term
                        .physics()
                        .eval_tangent(
                            dim,
                            args,
                            &Direction {
                                du: &dv,
                                dgrad_u: &dgrad,
                                du_t: shifted(time, args, &dv, &mut dv_t),
                            },
                            &mut df0,
                            &mut [],
                        )
                        .map_err(|e| self.located(e, t, p))?;
                    let wb = R::from_f64(w * phi[b]);
                    for fc in 0..nc {
                        blocks[((cell * nb + b) * nc + fc) * nc + gc] += wb * df0[fc];
                    }
                }
            }
            Ok(())
        })
    }

    /// Adds the boundary terms' element matrices at `u_cells` and the time
    /// state `time` into `matrices` (`[cell][i][j]`, [`elem_mat`]), from
    /// the physics' pointwise Jacobians `g0 + σ·g0_t` (`g0_t = ∂f0/∂u_t`,
    /// for a term that reads `u_t`) and `g1` in `R`, integrated in `f64`.
    ///
    /// # Errors
    /// A physics' evaluation error; [`PointwiseError::NoDerivatives`];
    /// [`Error::InvalidArgument`] (`physics`) naming the term, facet and
    /// point where a Jacobian entry is NaN or ±∞, or a term that reads
    /// `u_t` evaluated without a time state.
    pub fn add_element_matrices(
        &self,
        u_cells: &[R],
        time: Option<&CellTime<'_, R>>,
        matrices: &mut [f64],
    ) -> Result<()> {
        let (nc, dim, nb) = (self.n_comp, self.dim, self.n_b);
        let n_bt = nb * nc;
        let z = |n: usize| vec![R::ZERO; n];
        let (mut g0, mut g1, mut g2, mut g3, mut g0_t, mut g2_t) = (
            z(nc * nc),
            z(nc * nc * dim),
            z(nc * nc * dim),
            z(nc * nc * dim * dim),
            z(nc * nc),
            z(nc * nc * dim),
        );
        self.for_each_point(u_cells, time, |t, p, args, cell, phi, dphi_x, w| {
            for g in [&mut g0, &mut g1, &mut g2, &mut g3] {
                g.fill(R::ZERO);
            }
            let physics = t.term.physics();
            physics
                .eval_jacobian(dim, args, &mut g0, &mut g1, &mut g2, &mut g3)
                .map_err(|e| self.located(e, t, p))?;
            if let (Some(time), false) = (time, args.u_t.is_empty()) {
                physics
                    .eval_jacobian_u_t(dim, args, &mut g0_t, &mut g2_t)
                    .map_err(|e| self.located(e, t, p))?;
                for (g, &gt) in g0.iter_mut().zip(&g0_t) {
                    *g += time.sigma * gt;
                }
            }
            if let Some(bad) = g0.iter().chain(&g1).find(|v| !v.is_finite()) {
                return Err(Error::arg(
                    "physics",
                    format!(
                        "the Jacobian of the boundary physics `{}` is {bad} at point {} of facet \
                         {} of cell {}: its derivatives must be finite at u",
                        t.term.physics().info().name,
                        p.1,
                        t.term.set().facets()[p.0].local,
                        cell
                    ),
                ));
            }
            for a in 0..nb {
                for fc in 0..nc {
                    let i = a * nc + fc;
                    for b in 0..nb {
                        for gc in 0..nc {
                            let j = b * nc + gc;
                            let mut k = g0[fc * nc + gc].to_f64() * phi[b];
                            for d in 0..dim {
                                k += g1[(fc * nc + gc) * dim + d].to_f64() * dphi_x[b * dim + d];
                            }
                            matrices[elem_mat(cell, i, j, n_bt)] += w * phi[a] * k;
                        }
                    }
                }
            }
            Ok(())
        })
    }

    /// Calls `visit(term, (facet, q), args, cell, φ(ξ_q), ∂φ/∂x(ξ_q), w)`
    /// at every point of every facet of every term, with the physics'
    /// arguments at `u_cells` and the time state `time` (`u_t = σ·u + b` at
    /// the point for a term that reads `u_t`, the time `t`, 0 without a
    /// time state) and the weight `w = w_q |F|/|F̂|`.
    ///
    /// # Errors
    /// Those of `visit`; [`Error::InvalidArgument`] (`physics`) for a term
    /// that reads `u_t` without a time state.
    fn for_each_point(
        &self,
        u_cells: &[R],
        time: Option<&CellTime<'_, R>>,
        mut visit: impl FnMut(
            &TermData<R>,
            (usize, usize),
            &PointArgs<'_, R>,
            usize,
            &[f64],
            &[f64],
            f64,
        ) -> Result<()>,
    ) -> Result<()> {
        let (dim, nb, nc) = (self.dim, self.n_b, self.n_comp);
        let mut p = FacetPoint {
            u: vec![R::ZERO; nc],
            grad_u: vec![R::ZERO; nc * dim],
            x: vec![R::ZERO; dim],
            n: vec![R::ZERO; dim],
            u_t: vec![R::ZERO; nc],
            dphi_x: vec![0.0; nb * dim],
        };
        let t_now = time.map_or(R::ZERO, |s| s.t);
        for t in &self.terms {
            let reads_u_t = t.term.physics().info().reads.u_t;
            let shift = match time {
                Some(time) if reads_u_t => Some(time),
                None if reads_u_t => return Err(no_time_state(t.term.physics().info().name)),
                _ => None,
            };
            let g = &t.geometry;
            let nq = g.n_points();
            for (k, facet) in t.term.set().facets().iter().enumerate() {
                let (cell, local) = (facet.cell as usize, facet.local as usize);
                let (phi_f, dphi_f) = (t.tabulation.phi(local), t.tabulation.dphi(local));
                let inv_j = &g.inv_j()[k * dim * dim..(k + 1) * dim * dim];
                for (n, &v) in p.n.iter_mut().zip(&g.normals()[k * dim..(k + 1) * dim]) {
                    *n = R::from_f64(v);
                }
                let u_cell = &u_cells[cell * nb * nc..(cell + 1) * nb * nc];
                for q in 0..nq {
                    let phi = &phi_f[tab_phi(q, 0, nb)..tab_phi(q + 1, 0, nb)];
                    for b in 0..nb {
                        for d in 0..dim {
                            p.dphi_x[b * dim + d] = (0..dim)
                                .map(|e| dphi_f[tab_dphi(q, b, e, nb, dim)] * inv_j[e * dim + d])
                                .sum();
                        }
                    }
                    field_at(u_cell, nc, dim, phi, &p.dphi_x, &mut p.u, &mut p.grad_u);
                    if let Some(time) = shift {
                        // u_t = σ·u + Σ_b φ_b b_c[b], summed as u is
                        let b_cell = &time.b[cell * nb * nc..(cell + 1) * nb * nc];
                        for c in 0..nc {
                            let mut b_q = R::ZERO;
                            for (k, &phi_b) in phi.iter().enumerate() {
                                b_q += R::from_f64(phi_b) * b_cell[k * nc + c];
                            }
                            p.u_t[c] = time.sigma * p.u[c] + b_q;
                        }
                    }
                    let x = &g.points()[(k * nq + q) * dim..(k * nq + q + 1) * dim];
                    for (xd, &v) in p.x.iter_mut().zip(x) {
                        *xd = R::from_f64(v);
                    }
                    let args = PointArgs {
                        u: &p.u,
                        grad_u: &p.grad_u,
                        a: &[],
                        grad_a: &[],
                        x: &p.x,
                        constants: t.term.constants(),
                        n: &p.n,
                        u_t: if shift.is_some() { &p.u_t } else { &[] },
                        t: t_now,
                    };
                    let w = t.weights[q] * g.measure()[k];
                    visit(t, (k, q), &args, cell, phi, &p.dphi_x, w)?;
                }
            }
        }
        Ok(())
    }

    /// `out[cell][b][i] += w φ_b f[i]`.
    fn scatter(&self, out: &mut [R], cell: usize, phi: &[f64], w: f64, f: &[R]) {
        let nc = self.n_comp;
        for (b, &phi_b) in phi.iter().enumerate() {
            let wb = R::from_f64(w * phi_b);
            for (i, &fi) in f.iter().enumerate() {
                out[(cell * self.n_b + b) * nc + i] += wb * fi;
            }
        }
    }

    /// A physics' error, with the term and the facet point it came from.
    fn located(&self, e: PointwiseError, t: &TermData<R>, (k, q): (usize, usize)) -> Error {
        let f = t.term.set().facets()[k];
        Error::from(e).context(format!(
            "the boundary physics `{}` at point {q} of facet {} of cell {}",
            t.term.physics().info().name,
            f.local,
            f.cell
        ))
    }
}

/// The direction `σ·dv` in `u_t` of a tangent along `dv` at a point with
/// `u_t` (`args`: a term that reads it, with the time state `time`), written
/// into `out`; none (`&[]`) at a point without.
fn shifted<'o, R: Real>(
    time: Option<&CellTime<'_, R>>,
    args: &PointArgs<'_, R>,
    dv: &[R],
    out: &'o mut [R],
) -> &'o [R] {
    match time {
        Some(time) if !args.u_t.is_empty() => {
            for (o, &d) in out.iter_mut().zip(dv) {
                *o = time.sigma * d;
            }
            out
        }
        _ => &[],
    }
}

/// The error of a boundary physics `name` that reads `u_t` evaluated
/// without a time state.
fn no_time_state(name: &str) -> Error {
    Error::arg(
        "physics",
        format!(
            "the boundary physics `{name}` reads `u_t` and no time state is bound: bind one \
             (Operator::set_time: t and u_t = σ·u + b) or solve the problem with a time \
             integrator (femquad::time::TimeIntegrator)"
        ),
    )
}

/// The value `u[c] = Σ_b φ_b u_b[c]` and the gradient
/// `grad[c·dim + d] = Σ_b ∂φ_b/∂x_d u_b[c]` of the cell-local coefficients
/// `coef` (`[b][c]`) at a point with `phi` (`[b]`) and `dphi_x` (`[b][d]`).
fn field_at<R: Real>(
    coef: &[R],
    nc: usize,
    dim: usize,
    phi: &[f64],
    dphi_x: &[f64],
    value: &mut [R],
    grad: &mut [R],
) {
    value.fill(R::ZERO);
    grad.fill(R::ZERO);
    for (b, &phi_b) in phi.iter().enumerate() {
        for c in 0..nc {
            let ub = coef[b * nc + c];
            value[c] += R::from_f64(phi_b) * ub;
            for d in 0..dim {
                grad[c * dim + d] += R::from_f64(dphi_x[b * dim + d]) * ub;
            }
        }
    }
}
