//! Quadrature on the facets of the reference cell, and the cell basis
//! tabulated there.

use crate::element::Element;
use crate::layout::{tab_dphi, tab_phi};
use crate::mesh::{TETRAHEDRON_FACETS, TRIANGLE_FACETS};
use crate::quadrature::{MAX_DEGREE, Quadrature, default_degree, gauss_jacobi_01};
use crate::{Error, Result};

/// Volume of the reference facet of a cell of dimension `dim`: the unit
/// interval (`1`) for a triangle, the reference triangle (`1/2`) for a
/// tetrahedron — `1/(dim−1)!`.
pub fn reference_facet_volume(dim: usize) -> f64 {
    1.0 / (1..dim).map(|i| i as f64).product::<f64>()
}

/// A quadrature rule on the reference facet (dimension `dim − 1`) and its
/// image on each local facet of the reference cell.
///
/// The reference facet is `[0, 1]` (a triangle's facets) or the reference
/// triangle `{s ≥ 0, s_1 + s_2 ≤ 1}` (a tetrahedron's), with points `s_q`
/// and weights `w_q` summing to [`reference_facet_volume`]: Gauss–Legendre
/// with `⌈(degree+1)/2⌉` points on `[0, 1]`, [`Quadrature::simplex`]`(2,
/// degree)` on the triangle — exact for polynomials of degree `≤ degree`.
///
/// Local facet `i` of the reference cell (opposite local vertex `i`) has
/// the vertices `(a, b[, c])` = [`TRIANGLE_FACETS`]`[i]` /
/// [`TETRAHEDRON_FACETS`]`[i]` (outward oriented, the order of
/// [`BoundaryFacet`](crate::mesh::BoundaryFacet)), and its points are
///
/// ```text
/// ξ_{i,q} = V_a + s_q,1 (V_b − V_a) [+ s_q,2 (V_c − V_a)],   V_0 = 0, V_k = e_k,
/// ```
///
/// so the point `q` of local facet `i` of a cell with vertices `X_k` is
/// `X_a + s_q,1 (X_b − X_a) [+ s_q,2 (X_c − X_a)]`, and
/// `∫_F g ds = (|F| / |F̂|) Σ_q w_q g(x_q)` with `|F̂|` the reference
/// facet's volume ([`FacetGeometry`](super::FacetGeometry) holds the
/// factor).
#[derive(Clone, Debug, PartialEq)]
pub struct FacetQuadrature {
    dim: usize,
    degree: usize,
    /// `s_q`, `n_q × (dim − 1)`.
    facet_points: Vec<f64>,
    weights: Vec<f64>,
    /// `ξ_{i,q}`, `(dim + 1) × n_q × dim`.
    points: Vec<f64>,
}

impl FacetQuadrature {
    /// The rule of degree `degree` on the facets of the reference cell of
    /// dimension `dim`.
    ///
    /// ```
    /// use femquad::facet::FacetQuadrature;
    /// let q = FacetQuadrature::new(2, 3)?; // 2 Gauss points per edge
    /// assert_eq!(q.n_points(), 2);
    /// // local facet 0 of the triangle is the edge from (1, 0) to (0, 1)
    /// let p = q.point(0, 0);
    /// assert!((p[0] + p[1] - 1.0).abs() < 1e-15);
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `dim ∉ {2, 3}` or `degree > 20`.
    pub fn new(dim: usize, degree: usize) -> Result<FacetQuadrature> {
        if degree > MAX_DEGREE {
            return Err(Error::arg(
                "degree",
                format!("degree {degree} exceeds the maximum {MAX_DEGREE}"),
            ));
        }
        let (facet_points, weights) = match dim {
            2 => gauss_jacobi_01(degree / 2 + 1, 0),
            3 => {
                let q = Quadrature::simplex(2, degree)?;
                (q.points().to_vec(), q.weights().to_vec())
            }
            _ => {
                return Err(Error::arg(
                    "dim",
                    format!("dimension {dim} is not supported (2 or 3)"),
                ));
            }
        };
        let n_q = weights.len();
        let mut points = Vec::with_capacity((dim + 1) * n_q * dim);
        for i in 0..=dim {
            let corners: &[usize] = if dim == 2 {
                &TRIANGLE_FACETS[i]
            } else {
                &TETRAHEDRON_FACETS[i]
            };
            let vertex = |k: usize| -> [f64; 3] {
                let mut v = [0.0; 3];
                if k > 0 {
                    v[k - 1] = 1.0;
                }
                v
            };
            let a = vertex(corners[0]);
            for s in facet_points.chunks_exact(dim - 1) {
                for (e, &ae) in a.iter().enumerate().take(dim) {
                    let mut x = ae;
                    for (t, &c) in s.iter().zip(&corners[1..]) {
                        x += t * (vertex(c)[e] - ae);
                    }
                    points.push(x);
                }
            }
        }
        Ok(FacetQuadrature {
            dim,
            degree,
            facet_points,
            weights,
            points,
        })
    }

    /// The default rule for `element`: degree [`default_degree`]`(k) = 2k`
    /// for order `k`, the cell rule's choice ([`Quadrature::default_for`]).
    /// On an affine facet it integrates `∫_F φ_a φ_b ds` (a Robin term) and
    /// `∫_F g φ_b ds` for `g ∈ P_k` exactly.
    ///
    /// # Errors
    /// Never for the elements femquad constructs (dimension 2 or 3).
    pub fn default_for(element: &Element) -> Result<FacetQuadrature> {
        FacetQuadrature::new(element.dim(), default_degree(element.order()))
    }

    /// Dimension of the cell (the facets have one less).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Degree up to which the rule is exact on a facet.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Number of points per facet, `n_q`.
    pub fn n_points(&self) -> usize {
        self.weights.len()
    }

    /// Points `s_q` on the reference facet, `n_q × (dim − 1)`.
    pub fn facet_points(&self) -> &[f64] {
        &self.facet_points
    }

    /// Weights `w_q`; they sum to [`reference_facet_volume`]`(dim)`.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Reference-cell coordinates of point `q` on local facet `local`
    /// (`dim` entries).
    ///
    /// # Panics
    /// If `local > dim` or `q ≥ n_points()` (an indexing bug in the caller).
    pub fn point(&self, local: usize, q: usize) -> &[f64] {
        let at = (local * self.n_points() + q) * self.dim;
        &self.points[at..at + self.dim]
    }

    /// All points, `(dim + 1) × n_q × dim`: local facet, then point, then
    /// reference coordinate.
    pub fn points(&self) -> &[f64] {
        &self.points
    }
}

/// The basis of a cell element and its reference gradients at the points
/// of a [`FacetQuadrature`] on each local facet:
///
/// ```text
/// phi [(i·n_q + q)·N_b + b]           = φ_b(ξ_{i,q})
/// dphi[((i·n_q + q)·N_b + b)·dim + e] = ∂φ_b/∂ξ_e (ξ_{i,q})
/// ```
///
/// — per local facet `i`, the layout of a cell [`Tabulation`](crate::tabulation::Tabulation)
/// (`[q][b]`, `[q][b][e]`). Physical gradients follow from the cell's
/// `J⁻¹` as in the cell integral: `∂φ_b/∂x_d = Σ_e ∂φ_b/∂ξ_e J⁻¹[e][d]`.
#[derive(Clone, Debug, PartialEq)]
pub struct FacetTabulation {
    element: Element,
    n_q: usize,
    phi: Vec<f64>,
    dphi: Vec<f64>,
}

impl FacetTabulation {
    /// Tabulates `element` at the points of `quadrature`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`quadrature`) if the rule is for cells of
    /// another dimension than the element's.
    pub fn new(element: &Element, quadrature: &FacetQuadrature) -> Result<FacetTabulation> {
        let dim = element.dim();
        if quadrature.dim() != dim {
            return Err(Error::arg(
                "quadrature",
                format!(
                    "facet rule is for cells of dimension {} but the element {element} is for \
                     dimension {dim}",
                    quadrature.dim()
                ),
            ));
        }
        let (n_b, n_q) = (element.n_basis(), quadrature.n_points());
        let rows = (dim + 1) * n_q;
        let mut phi = vec![0.0; rows * n_b];
        let mut dphi = vec![0.0; rows * n_b * dim];
        for r in 0..rows {
            let xi = quadrature.point(r / n_q, r % n_q);
            element.eval(xi, &mut phi[tab_phi(r, 0, n_b)..tab_phi(r + 1, 0, n_b)])?;
            element.grad(
                xi,
                &mut dphi[tab_dphi(r, 0, 0, n_b, dim)..tab_dphi(r + 1, 0, 0, n_b, dim)],
            )?;
        }
        Ok(FacetTabulation {
            element: *element,
            n_q,
            phi,
            dphi,
        })
    }

    /// The tabulated element.
    pub fn element(&self) -> Element {
        self.element
    }

    /// `φ_b` at the points of local facet `local`, `n_q × N_b`.
    ///
    /// # Panics
    /// If `local > dim`.
    pub fn phi(&self, local: usize) -> &[f64] {
        let len = self.n_q * self.element.n_basis();
        &self.phi[local * len..(local + 1) * len]
    }

    /// `∂φ_b/∂ξ_e` at the points of local facet `local`, `n_q × N_b × dim`.
    ///
    /// # Panics
    /// If `local > dim`.
    pub fn dphi(&self, local: usize) -> &[f64] {
        let len = self.n_q * self.element.n_basis() * self.element.dim();
        &self.dphi[local * len..(local + 1) * len]
    }

    /// All values, `(dim + 1) × n_q × N_b` (see the type's documentation).
    pub fn phi_all(&self) -> &[f64] {
        &self.phi
    }

    /// All reference gradients, `(dim + 1) × n_q × N_b × dim`.
    pub fn dphi_all(&self) -> &[f64] {
        &self.dphi
    }
}
