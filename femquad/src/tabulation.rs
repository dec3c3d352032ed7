//! Basis tabulation: basis values and reference gradients at quadrature points.
//!
//! For an [`Element`] with basis `φ_b` and a [`Quadrature`] with points `ξ_q`
//! and weights `w_q`, a [`Tabulation`] stores, in `f64` and full precision,
//!
//! ```text
//! phi [q·N_b + b]           = φ_b(ξ_q)               (layout [q][b])
//! dphi[(q·N_b + b)·dim + e] = ∂φ_b/∂ξ_e (ξ_q)         (layout [q][b][e], reference gradients)
//! ```
//!
//! with the indices of [`crate::layout::tab_phi`] and
//! [`crate::layout::tab_dphi`], plus a copy of the rule's points and weights.
//! Physical gradients follow on each cell from `∇_x φ_b = J⁻ᵀ ∇_ξ φ_b`, i.e.
//! `∂φ_b/∂x_j = Σ_e J⁻¹[e][j] ∂φ_b/∂ξ_e`. The OpenCL kernels inline these
//! arrays as literals, so they are computed once on the host in `f64`.

use crate::element::Element;
use crate::layout::{tab_dphi, tab_phi};
use crate::quadrature::Quadrature;
use crate::{Error, Result};

/// Basis values and reference gradients of an element at the points of a
/// quadrature rule (see the [module documentation](self) for the layouts).
#[derive(Clone, Debug, PartialEq)]
pub struct Tabulation {
    element: Element,
    degree: usize,
    dim: usize,
    n_b: usize,
    n_q: usize,
    phi: Vec<f64>,
    dphi: Vec<f64>,
    weights: Vec<f64>,
    points: Vec<f64>,
}

impl Tabulation {
    /// Tabulates `element` at the points of `quadrature`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the element and rule dimensions differ.
    pub fn new(element: &Element, quadrature: &Quadrature) -> Result<Tabulation> {
        let dim = element.dim();
        if quadrature.dim() != dim {
            return Err(Error::arg(
                "quadrature",
                format!(
                    "rule is for dimension {} but the element {element} is for dimension {dim}",
                    quadrature.dim()
                ),
            ));
        }
        let n_b = element.n_basis();
        let n_q = quadrature.n_points();
        let mut phi = vec![0.0; n_q * n_b];
        let mut dphi = vec![0.0; n_q * n_b * dim];
        for q in 0..n_q {
            let xi = quadrature.point(q);
            element.eval(xi, &mut phi[tab_phi(q, 0, n_b)..tab_phi(q + 1, 0, n_b)])?;
            element.grad(
                xi,
                &mut dphi[tab_dphi(q, 0, 0, n_b, dim)..tab_dphi(q + 1, 0, 0, n_b, dim)],
            )?;
        }
        Ok(Tabulation {
            element: *element,
            degree: quadrature.degree(),
            dim,
            n_b,
            n_q,
            phi,
            dphi,
            weights: quadrature.weights().to_vec(),
            points: quadrature.points().to_vec(),
        })
    }

    /// The tabulated element.
    pub fn element(&self) -> Element {
        self.element
    }

    /// Degree of the quadrature rule that was tabulated.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Spatial dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of basis functions `N_b`.
    pub fn n_basis(&self) -> usize {
        self.n_b
    }

    /// Number of quadrature points `N_q`.
    pub fn n_points(&self) -> usize {
        self.n_q
    }

    /// Basis values `φ_b(ξ_q)`, `N_q × N_b`, layout `[q][b]`.
    pub fn phi(&self) -> &[f64] {
        &self.phi
    }

    /// Reference gradients `∂φ_b/∂ξ_e (ξ_q)`, `N_q × N_b × dim`, layout `[q][b][e]`.
    pub fn dphi(&self) -> &[f64] {
        &self.dphi
    }

    /// Quadrature weights `w_q` on the reference simplex (sum `1/dim!`).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Quadrature points `ξ_q`, `N_q × dim`.
    pub fn points(&self) -> &[f64] {
        &self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quadrature::reference_volume;

    #[test]
    fn p1_tabulation_at_centroid() {
        let e = Element::lagrange(2, 1).unwrap();
        let t = Tabulation::new(&e, &Quadrature::simplex(2, 1).unwrap()).unwrap();
        assert_eq!(
            (t.dim(), t.n_basis(), t.n_points(), t.degree()),
            (2, 3, 1, 1)
        );
        for &p in t.phi() {
            assert!((p - 1.0 / 3.0).abs() < 1e-16);
        }
        assert_eq!(t.dphi(), &[-1.0, -1.0, 1.0, 0.0, 0.0, 1.0]);
        assert_eq!(t.weights(), &[0.5]);
        assert_eq!(t.element(), e);
    }

    #[test]
    fn layout_matches_element_eval() {
        for dim in [2, 3] {
            for order in [1, 2] {
                let e = Element::lagrange(dim, order).unwrap();
                let quad = Quadrature::simplex(dim, 4).unwrap();
                let t = Tabulation::new(&e, &quad).unwrap();
                let nb = e.n_basis();
                assert_eq!(t.phi().len(), quad.n_points() * nb);
                assert_eq!(t.dphi().len(), quad.n_points() * nb * dim);
                assert_eq!(t.points(), quad.points());
                let mut phi = vec![0.0; nb];
                let mut dphi = vec![0.0; nb * dim];
                for q in 0..quad.n_points() {
                    e.eval(quad.point(q), &mut phi).unwrap();
                    e.grad(quad.point(q), &mut dphi).unwrap();
                    for b in 0..nb {
                        assert_eq!(t.phi()[tab_phi(q, b, nb)], phi[b]);
                        for k in 0..dim {
                            assert_eq!(t.dphi()[tab_dphi(q, b, k, nb, dim)], dphi[b * dim + k]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn reference_mass_matrix_is_exact() {
        // P1 reference mass matrix: |T̂|/((d+1)(d+2)) · (1 + δ_ab).
        for dim in [2, 3] {
            let e = Element::lagrange(dim, 1).unwrap();
            let t = Tabulation::new(&e, &Quadrature::simplex(dim, 2).unwrap()).unwrap();
            let nb = t.n_basis();
            let vol = reference_volume(dim);
            let d = dim as f64;
            for a in 0..nb {
                for b in 0..nb {
                    let m: f64 = (0..t.n_points())
                        .map(|q| t.weights()[q] * t.phi()[q * nb + a] * t.phi()[q * nb + b])
                        .sum();
                    let want = vol / ((d + 1.0) * (d + 2.0)) * if a == b { 2.0 } else { 1.0 };
                    assert!(
                        (m - want).abs() < 1e-15,
                        "dim {dim} ({a},{b}): {m} vs {want}"
                    );
                }
            }
        }
        // P2 triangle of area |T|: M = |T|/180 · (6 on vertex diagonal, 32 on edge
        // diagonal, −4 between a vertex and its opposite edge); |T̂| = 1/2.
        let e = Element::lagrange(2, 2).unwrap();
        let t = Tabulation::new(&e, &Quadrature::simplex(2, 4).unwrap()).unwrap();
        let m = |a: usize, b: usize| -> f64 {
            (0..t.n_points())
                .map(|q| t.weights()[q] * t.phi()[q * 6 + a] * t.phi()[q * 6 + b])
                .sum()
        };
        assert!((m(0, 0) - 1.0 / 60.0).abs() < 1e-15);
        assert!((m(3, 3) - 4.0 / 45.0).abs() < 1e-15);
        // vertex 0 and the opposite edge (1,2) (local 4): −|T|/45 = −1/90
        assert!((m(0, 4) + 1.0 / 90.0).abs() < 1e-15);
    }

    #[test]
    fn rejects_dimension_mismatch() {
        let e = Element::lagrange(3, 1).unwrap();
        let err = Tabulation::new(&e, &Quadrature::simplex(2, 2).unwrap()).unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidArgument {
                name: "quadrature",
                ..
            }
        ));
    }
}
