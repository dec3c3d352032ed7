//! [`FacetDiscretization`]: a boundary integral `∫_S φ_i f0 ds`, natively.

use crate::error::check_len;
use crate::layout::{global_dof, point_grad, tab_dphi, tab_phi};
use crate::real::check_finite;
use crate::space::FunctionSpace;
use crate::{Error, Result};

use super::{FacetGeometry, FacetQuadrature, FacetSet, FacetTabulation};

/// A function space, a set of its mesh's boundary facets, and the facet
/// rule, tabulation and geometry to integrate over them: the native
/// reference of boundary assembly.
#[derive(Clone, Debug)]
pub struct FacetDiscretization {
    space: FunctionSpace,
    set: FacetSet,
    quadrature: FacetQuadrature,
    tabulation: FacetTabulation,
    geometry: FacetGeometry<f64>,
}

impl FacetDiscretization {
    /// Integration over `set` with the default facet rule of the space's
    /// element ([`FacetQuadrature::default_for`]: degree `2k` for `Pk`).
    ///
    /// # Errors
    /// Those of [`FacetDiscretization::with_quadrature`].
    pub fn new(space: &FunctionSpace, set: FacetSet) -> Result<Self> {
        let quadrature = FacetQuadrature::default_for(&space.element())?;
        FacetDiscretization::with_quadrature(space, set, quadrature)
    }

    /// Integration over `set` with `quadrature`.
    ///
    /// # Errors
    /// Those of [`FacetTabulation::new`] (a rule of another dimension) and
    /// [`FacetGeometry::new`] (a set made on another mesh, a degenerate
    /// cell).
    pub fn with_quadrature(
        space: &FunctionSpace,
        set: FacetSet,
        quadrature: FacetQuadrature,
    ) -> Result<Self> {
        let tabulation = FacetTabulation::new(&space.element(), &quadrature)?;
        let geometry = FacetGeometry::new(space.mesh(), &set, &quadrature)?;
        Ok(FacetDiscretization {
            space: space.clone(),
            set,
            quadrature,
            tabulation,
            geometry,
        })
    }

    /// The space.
    pub fn space(&self) -> &FunctionSpace {
        &self.space
    }
    /// The facets integrated over.
    pub fn set(&self) -> &FacetSet {
        &self.set
    }
    /// The facet rule.
    pub fn quadrature(&self) -> &FacetQuadrature {
        &self.quadrature
    }
    /// The element at the facet points.
    pub fn tabulation(&self) -> &FacetTabulation {
        &self.tabulation
    }
    /// The facets' geometry.
    pub fn geometry(&self) -> &FacetGeometry<f64> {
        &self.geometry
    }

    /// The global vector `F_i = Σ_{F ∈ set} ∫_F φ_i f0(x, n, u, ∇u) ds`,
    /// dof `i = (node, comp)` at [`global_dof`]:
    ///
    /// ```text
    /// F[(node_b, c)] += measure_F · Σ_q w_q φ_b(ξ_q) f0_c(x_q, n_F, u(x_q), ∇u(x_q))
    /// ```
    ///
    /// with `u_c = Σ_b φ_b u[(node_b, c)]` and
    /// `∇u[c·dim + d] = Σ_b Σ_e ∂φ_b/∂ξ_e J⁻¹[e][d] u[(node_b, c)]` gathered
    /// from `u` (`n_dofs` long) on the facet's cell. `f0(x, n, u, grad_u,
    /// out)` gets `x` and `n` (`dim`), `u` (`n_comp`), `grad_u`
    /// (`n_comp × dim`, [`point_grad`]) and writes `out` (`n_comp`, zeroed
    /// before each call) — PETSc's boundary residual `f0`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`u`) if `u` is not `n_dofs` long;
    /// [`Error::NonFinite`] for a NaN/∞ in `u`; [`Error::InvalidArgument`]
    /// (`f0`) naming the point, facet and cell if `f0` returns a non-finite
    /// value.
    pub fn integrate_vector(
        &self,
        u: &[f64],
        f0: impl Fn(&[f64], &[f64], &[f64], &[f64], &mut [f64]),
    ) -> Result<Vec<f64>> {
        let space = &self.space;
        check_len("u", u, space.n_dofs())?;
        check_finite("u", u)?;
        let (dim, nc, nb, nq) = (
            space.dim(),
            space.n_comp(),
            space.n_basis(),
            self.quadrature.n_points(),
        );
        let g = &self.geometry;
        let mut out = vec![0.0; space.n_dofs()];
        let (mut uq, mut grad, mut f) = (vec![0.0; nc], vec![0.0; nc * dim], vec![0.0; nc]);
        for (k, facet) in self.set.facets().iter().enumerate() {
            let local = facet.local as usize;
            let (phi, dphi) = (self.tabulation.phi(local), self.tabulation.dphi(local));
            let nodes = space.cell_nodes(facet.cell as usize);
            let inv_j = &g.inv_j()[k * dim * dim..(k + 1) * dim * dim];
            let n = &g.normals()[k * dim..(k + 1) * dim];
            for q in 0..nq {
                uq.fill(0.0);
                grad.fill(0.0);
                for (b, &node) in nodes.iter().enumerate() {
                    for c in 0..nc {
                        let ub = u[global_dof(node as usize, c, nc)];
                        uq[c] += phi[tab_phi(q, b, nb)] * ub;
                        for e in 0..dim {
                            let de = dphi[tab_dphi(q, b, e, nb, dim)] * ub;
                            for d in 0..dim {
                                grad[point_grad(c, d, dim)] += de * inv_j[e * dim + d];
                            }
                        }
                    }
                }
                let x = &g.points()[(k * nq + q) * dim..(k * nq + q + 1) * dim];
                f.fill(0.0);
                f0(x, n, &uq, &grad, &mut f);
                if let Some(bad) = f.iter().find(|v| !v.is_finite()) {
                    return Err(Error::arg(
                        "f0",
                        format!(
                            "returned {bad} at point {x:?} of facet {local} of cell {} (n = \
                             {n:?}, u = {uq:?}): f0 must be finite",
                            facet.cell
                        ),
                    ));
                }
                let wq = self.quadrature.weights()[q] * g.measure()[k];
                for (b, &node) in nodes.iter().enumerate() {
                    let wphi = wq * phi[tab_phi(q, b, nb)];
                    for c in 0..nc {
                        out[global_dof(node as usize, c, nc)] += wphi * f[c];
                    }
                }
            }
        }
        Ok(out)
    }
}
