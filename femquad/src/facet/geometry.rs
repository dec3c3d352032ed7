//! [`FacetGeometry`]: points, normals, measures and `J⁻¹` of a facet set.

use crate::geometry::det_inverse;
use crate::mesh::Mesh;
use crate::{Error, Real, Result};

use super::{FacetQuadrature, FacetSet};

/// The geometry of the facets of a [`FacetSet`] at the points of a
/// [`FacetQuadrature`], computed once in `f64` and stored in precision `R`
/// as flat arrays, facet `k` being the set's `facets()[k]`:
///
/// ```text
/// points [(k·n_q + q)·dim + d] = x_{k,q,d}     physical quadrature points
/// normals[k·dim + d]           = n_{k,d}       outward unit normal
/// measure[k]                   = |F_k| / |F̂|   surface measure factor
/// inv_j  [(k·dim + e)·dim + d] = J⁻¹[e][d]     of the facet's cell
/// ```
///
/// For facet `(a, b[, c])` (outward oriented vertices `X`, see
/// [`BoundaryFacet`](crate::mesh::BoundaryFacet)): in 2D the edge
/// `t = X_b − X_a` has `|F| / |F̂| = |t|` (`|F̂| = 1`) and
/// `n = (t_y, −t_x)/|t|`; in 3D `m = (X_b − X_a) × (X_c − X_a)` has
/// `|F| / |F̂| = |m|` (`|F| = |m|/2`, `|F̂| = 1/2`) and `n = m/|m|`. A
/// straight facet has one normal. So
/// `∫_F g ds ≈ measure[k] Σ_q w_q g(x_{k,q})`, and the cell's physical
/// gradients are `∂φ_b/∂x_d = Σ_e ∂φ_b/∂ξ_e J⁻¹[e][d]` with the facet
/// tabulation ([`FacetTabulation`](super::FacetTabulation)); `J` is the
/// cell map's (columns `X_{i+1} − X_0`, [`crate::geometry`]).
#[derive(Clone, Debug)]
pub struct FacetGeometry<R> {
    dim: usize,
    n_q: usize,
    points: Vec<R>,
    normals: Vec<R>,
    measure: Vec<R>,
    inv_j: Vec<R>,
}

impl<R: Real> FacetGeometry<R> {
    /// The geometry of `set` on `mesh` at the points of `quadrature`.
    ///
    /// # Errors
    /// Those of [`FacetSet::check_mesh`] (a set of another mesh);
    /// [`Error::InvalidArgument`] (`quadrature`) for a rule of another
    /// dimension; [`Error::InvalidCell`] naming a facet's cell whose
    /// `det J ≤ 0`, or whose facet has zero measure.
    pub fn new(mesh: &Mesh, set: &FacetSet, quadrature: &FacetQuadrature) -> Result<Self> {
        set.check_mesh(mesh)?;
        let dim = mesh.dim();
        if quadrature.dim() != dim {
            return Err(Error::arg(
                "quadrature",
                format!(
                    "facet rule is for cells of dimension {} but the mesh is {dim}D",
                    quadrature.dim()
                ),
            ));
        }
        let n_q = quadrature.n_points();
        let nf = set.len();
        let mut g = FacetGeometry {
            dim,
            n_q,
            points: Vec::with_capacity(nf * n_q * dim),
            normals: Vec::with_capacity(nf * dim),
            measure: Vec::with_capacity(nf),
            inv_j: Vec::with_capacity(nf * dim * dim),
        };
        for f in set.facets() {
            let c = f.cell as usize;
            let x = |v: u32| mesh.vertex(v as usize);
            let vs = f.vertex_slice();
            let a = x(vs[0]);
            let t1: Vec<f64> = (0..dim).map(|d| x(vs[1])[d] - a[d]).collect();
            let m: Vec<f64> = if dim == 2 {
                vec![t1[1], -t1[0]]
            } else {
                let t2: Vec<f64> = (0..3).map(|d| x(vs[2])[d] - a[d]).collect();
                vec![
                    t1[1] * t2[2] - t1[2] * t2[1],
                    t1[2] * t2[0] - t1[0] * t2[2],
                    t1[0] * t2[1] - t1[1] * t2[0],
                ]
            };
            let len = m.iter().map(|v| v * v).sum::<f64>().sqrt();
            if !(len > 0.0 && len.is_finite()) {
                return Err(Error::InvalidCell {
                    cell: c,
                    reason: format!(
                        "its boundary facet {} (vertices {vs:?}) has measure {len:e}",
                        f.local
                    ),
                });
            }
            g.measure.push(R::from_f64(len));
            g.normals.extend(m.iter().map(|v| R::from_f64(v / len)));
            // points: x = X_0 + J ξ for the reference-cell points of the facet
            let cell = mesh.cell(c);
            let x0 = x(cell[0]);
            let mut jac = [0.0; 9];
            for i in 0..dim {
                let xi = x(cell[i + 1]);
                for d in 0..dim {
                    jac[d * dim + i] = xi[d] - x0[d];
                }
            }
            for q in 0..n_q {
                let xi = quadrature.point(f.local as usize, q);
                for d in 0..dim {
                    let p = x0[d] + (0..dim).map(|i| jac[d * dim + i] * xi[i]).sum::<f64>();
                    g.points.push(R::from_f64(p));
                }
            }
            let mut inv = [0.0; 9];
            let det = det_inverse(dim, &jac[..dim * dim], &mut inv[..dim * dim]);
            if !(det > 0.0 && det.is_finite()) {
                return Err(Error::InvalidCell {
                    cell: c,
                    reason: format!(
                        "det J = {det:e} is not positive (inverted or degenerate cell)"
                    ),
                });
            }
            g.inv_j
                .extend(inv[..dim * dim].iter().map(|&v| R::from_f64(v)));
        }
        Ok(g)
    }

    /// Spatial dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of facets.
    pub fn n_facets(&self) -> usize {
        self.measure.len()
    }
    /// Points per facet.
    pub fn n_points(&self) -> usize {
        self.n_q
    }
    /// Physical quadrature points, `n_facets × n_q × dim`.
    pub fn points(&self) -> &[R] {
        &self.points
    }
    /// Outward unit normals, `n_facets × dim`.
    pub fn normals(&self) -> &[R] {
        &self.normals
    }
    /// Surface measure factors `|F| / |F̂|`, one per facet.
    pub fn measure(&self) -> &[R] {
        &self.measure
    }
    /// The facets' cells' `J⁻¹`, `n_facets × dim × dim` (row-major, the
    /// layout of [`crate::layout::inv_j`] with the facet for the cell).
    pub fn inv_j(&self) -> &[R] {
        &self.inv_j
    }
}
