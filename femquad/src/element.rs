//! Scalar Lagrange elements P1 and P2 on the reference simplex.
//!
//! The reference simplex has vertices `0, e_1, …, e_dim` ([`crate::layout`]).
//! With reference coordinates `ξ`, the barycentric coordinates are
//!
//! ```text
//! λ_0 = 1 − Σ_i ξ_i,   λ_i = ξ_i  (i = 1..dim),
//! ∇λ_0 = −(1, …, 1),   ∇λ_i = e_i.
//! ```
//!
//! * **P1** (`dim + 1` basis functions): `φ_v = λ_v`, one per vertex.
//! * **P2** (`(dim+1)(dim+2)/2` basis functions): vertex functions
//!   `φ_v = λ_v (2λ_v − 1)` for `v = 0..=dim`, then edge functions
//!   `φ = 4 λ_i λ_j` for the edges `(i, j)` in the order of
//!   [`crate::layout::simplex_edges`] (triangle `(0,1), (1,2), (2,0)`;
//!   tetrahedron `(0,1), (1,2), (2,0), (0,3), (1,3), (2,3)`).
//!
//! Both are nodal: `φ_b(ν_c) = δ_bc` for the nodes `ν` of [`Element::nodes`]
//! (the vertices, then the edge midpoints in the same edge order).

use std::fmt;

use crate::error::check_len;
use crate::layout::simplex_edges;
use crate::{Error, Result};

/// A scalar Lagrange element of order 1 or 2 on the reference triangle
/// (`dim = 2`) or tetrahedron (`dim = 3`). Vector fields use one copy per
/// component (see [`crate::space::FunctionSpace`]).
///
/// ```
/// use femquad::prelude::*;
///
/// let p2 = Element::lagrange(2, 2)?; // P2 on the reference triangle
/// assert_eq!((p2.dim(), p2.order(), p2.n_basis()), (2, 2, 6));
/// // the nodes: vertices 0, e₁, e₂, then the midpoints of edges (0,1), (1,2), (2,0)
/// assert_eq!(&p2.nodes()[6..], &[0.5, 0.0, 0.5, 0.5, 0.0, 0.5]);
/// // nodal: φ_b(ν_c) = δ_bc, here at the midpoint of edge (0,1)
/// let mut phi = [0.0; 6];
/// p2.eval(&[0.5, 0.0], &mut phi)?;
/// assert_eq!(phi, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
/// assert!(Element::lagrange(2, 3).is_err()); // P1 and P2 only
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Element {
    dim: usize,
    order: usize,
}

impl Element {
    /// The Lagrange element `P{order}` on the reference simplex of dimension `dim`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `dim ∉ {2, 3}` or `order ∉ {1, 2}`.
    pub fn lagrange(dim: usize, order: usize) -> Result<Element> {
        if dim != 2 && dim != 3 {
            return Err(Error::arg(
                "dim",
                format!("dimension {dim} is not supported (2 or 3)"),
            ));
        }
        if order != 1 && order != 2 {
            return Err(Error::arg(
                "order",
                format!("Lagrange order {order} is not supported (1 or 2)"),
            ));
        }
        Ok(Element { dim, order })
    }

    /// Spatial dimension (2 or 3).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Polynomial order (1 or 2).
    pub fn order(&self) -> usize {
        self.order
    }

    /// Number of basis functions `N_b = C(dim + order, dim)`: 3 / 6 in 2D,
    /// 4 / 10 in 3D for P1 / P2.
    pub fn n_basis(&self) -> usize {
        let nv = self.dim + 1;
        if self.order == 1 {
            nv
        } else {
            nv + simplex_edges(self.dim).len()
        }
    }

    /// Reference coordinates of the nodes, `n_basis × dim` row-major: the
    /// vertices `0, e_1, …, e_dim`, then (P2) the edge midpoints
    /// `(ν_i + ν_j)/2` in [`crate::layout::simplex_edges`] order.
    pub fn nodes(&self) -> Vec<f64> {
        let d = self.dim;
        let mut x = vec![0.0; self.n_basis() * d];
        for v in 1..=d {
            x[v * d + v - 1] = 1.0;
        }
        if self.order == 2 {
            for (k, &[i, j]) in simplex_edges(d).iter().enumerate() {
                for e in 0..d {
                    x[(d + 1 + k) * d + e] = 0.5 * (x[i * d + e] + x[j * d + e]);
                }
            }
        }
        x
    }

    /// Barycentric coordinates `λ_0..λ_dim` of `xi` (`dim ≤ 3`, so 4 entries suffice).
    #[inline]
    fn barycentric(&self, xi: &[f64]) -> [f64; 4] {
        let mut l = [0.0; 4];
        l[0] = 1.0 - xi.iter().sum::<f64>();
        l[1..=self.dim].copy_from_slice(xi);
        l
    }

    /// Evaluates all basis functions at `xi` (`dim` entries):
    /// `phi[b] = φ_b(ξ)` (`n_basis` entries).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a slice has the wrong length.
    pub fn eval(&self, xi: &[f64], phi: &mut [f64]) -> Result<()> {
        check_len("xi", xi, self.dim)?;
        check_len("phi", phi, self.n_basis())?;
        let l = self.barycentric(xi);
        let nv = self.dim + 1;
        if self.order == 1 {
            phi.copy_from_slice(&l[..nv]);
        } else {
            for v in 0..nv {
                phi[v] = l[v] * (2.0 * l[v] - 1.0);
            }
            for (k, &[i, j]) in simplex_edges(self.dim).iter().enumerate() {
                phi[nv + k] = 4.0 * l[i] * l[j];
            }
        }
        Ok(())
    }

    /// Reference gradients of all basis functions at `xi`:
    /// `dphi[b·dim + e] = ∂φ_b/∂ξ_e (ξ)` (`n_basis × dim`, layout `[b][e]`).
    ///
    /// P1: `∇φ_v = ∇λ_v`; P2: `∇φ_v = (4λ_v − 1)∇λ_v`,
    /// `∇(4λ_iλ_j) = 4(λ_j∇λ_i + λ_i∇λ_j)`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a slice has the wrong length.
    pub fn grad(&self, xi: &[f64], dphi: &mut [f64]) -> Result<()> {
        let d = self.dim;
        check_len("xi", xi, d)?;
        check_len("dphi", dphi, self.n_basis() * d)?;
        let l = self.barycentric(xi);
        // ∂λ_v/∂ξ_e
        let dl = |v: usize, e: usize| -> f64 {
            if v == 0 {
                -1.0
            } else if v == e + 1 {
                1.0
            } else {
                0.0
            }
        };
        let nv = d + 1;
        for v in 0..nv {
            let s = if self.order == 1 {
                1.0
            } else {
                4.0 * l[v] - 1.0
            };
            for e in 0..d {
                dphi[v * d + e] = s * dl(v, e);
            }
        }
        if self.order == 2 {
            for (k, &[i, j]) in simplex_edges(d).iter().enumerate() {
                for e in 0..d {
                    dphi[(nv + k) * d + e] = 4.0 * (l[j] * dl(i, e) + l[i] * dl(j, e));
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for Element {
    /// `P1` or `P2`, followed by the cell: e.g. `P2 (tetrahedron)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cell = if self.dim == 2 {
            "triangle"
        } else {
            "tetrahedron"
        };
        write!(f, "P{} ({cell})", self.order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn all() -> Vec<Element> {
        let mut v = Vec::new();
        for dim in [2, 3] {
            for order in [1, 2] {
                v.push(Element::lagrange(dim, order).unwrap());
            }
        }
        v
    }

    /// A random point inside the reference simplex.
    fn random_point(rng: &mut Rng, dim: usize) -> Vec<f64> {
        loop {
            let x = rng.vec(dim, 0.0, 1.0);
            if x.iter().sum::<f64>() < 1.0 {
                return x;
            }
        }
    }

    #[test]
    fn sizes() {
        let n: Vec<usize> = all().iter().map(|e| e.n_basis()).collect();
        assert_eq!(n, vec![3, 6, 4, 10]);
        let e = Element::lagrange(3, 2).unwrap();
        assert_eq!((e.dim(), e.order()), (3, 2));
        assert_eq!(e.to_string(), "P2 (tetrahedron)");
    }

    #[test]
    fn nodes_in_layout_order() {
        let e = Element::lagrange(2, 2).unwrap();
        assert_eq!(
            e.nodes(),
            vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.5, 0.5, 0.0, 0.5]
        );
        let e = Element::lagrange(3, 2).unwrap();
        let n = e.nodes();
        // edge (2,0) midpoint, edge (2,3) midpoint
        assert_eq!(&n[6 * 3..7 * 3], &[0.0, 0.5, 0.0]);
        assert_eq!(&n[9 * 3..10 * 3], &[0.0, 0.5, 0.5]);
        assert_eq!(&n[3 * 3..4 * 3], &[0.0, 0.0, 1.0]);
    }

    #[test]
    fn partition_of_unity() {
        let mut rng = Rng::new(11);
        for e in all() {
            let (nb, d) = (e.n_basis(), e.dim());
            let mut phi = vec![0.0; nb];
            let mut dphi = vec![0.0; nb * d];
            for _ in 0..50 {
                let x = random_point(&mut rng, d);
                e.eval(&x, &mut phi).unwrap();
                e.grad(&x, &mut dphi).unwrap();
                assert!((phi.iter().sum::<f64>() - 1.0).abs() < 1e-14);
                for k in 0..d {
                    let s: f64 = (0..nb).map(|b| dphi[b * d + k]).sum();
                    assert!(s.abs() < 1e-13, "{e}: Σ∂φ = {s}");
                }
            }
        }
    }

    #[test]
    fn nodal_basis() {
        for e in all() {
            let (nb, d) = (e.n_basis(), e.dim());
            let nodes = e.nodes();
            let mut phi = vec![0.0; nb];
            for c in 0..nb {
                e.eval(&nodes[c * d..(c + 1) * d], &mut phi).unwrap();
                for (b, &p) in phi.iter().enumerate() {
                    let want = if b == c { 1.0 } else { 0.0 };
                    assert_eq!(p, want, "{e}: φ_{b}(node {c})");
                }
            }
        }
    }

    #[test]
    fn p2_reproduces_quadratics_and_p1_linears() {
        let mut rng = Rng::new(5);
        for e in all() {
            let (nb, d) = (e.n_basis(), e.dim());
            // random polynomial of degree `order`: c + g·x (+ xᵀ H x)
            let c = rng.range(-1.0, 1.0);
            let g = rng.vec(d, -1.0, 1.0);
            let h = rng.vec(d * d, -1.0, 1.0);
            let quad = e.order() == 2;
            let p = |x: &[f64]| {
                let mut v = c;
                for i in 0..d {
                    v += g[i] * x[i];
                    if quad {
                        for j in 0..d {
                            v += h[i * d + j] * x[i] * x[j];
                        }
                    }
                }
                v
            };
            let dp = |x: &[f64], k: usize| {
                let mut v = g[k];
                if quad {
                    for j in 0..d {
                        v += (h[k * d + j] + h[j * d + k]) * x[j];
                    }
                }
                v
            };
            let nodes = e.nodes();
            let coef: Vec<f64> = (0..nb).map(|b| p(&nodes[b * d..(b + 1) * d])).collect();
            let mut phi = vec![0.0; nb];
            let mut dphi = vec![0.0; nb * d];
            for _ in 0..30 {
                let x = random_point(&mut rng, d);
                e.eval(&x, &mut phi).unwrap();
                e.grad(&x, &mut dphi).unwrap();
                let u: f64 = (0..nb).map(|b| coef[b] * phi[b]).sum();
                assert!((u - p(&x)).abs() < 1e-13, "{e}: {u} vs {}", p(&x));
                for k in 0..d {
                    let du: f64 = (0..nb).map(|b| coef[b] * dphi[b * d + k]).sum();
                    assert!((du - dp(&x, k)).abs() < 1e-13, "{e}: ∂_{k}");
                }
            }
        }
    }

    #[test]
    fn gradients_match_finite_differences() {
        let mut rng = Rng::new(3);
        let h = 1e-6;
        for e in all() {
            let (nb, d) = (e.n_basis(), e.dim());
            let mut dphi = vec![0.0; nb * d];
            let (mut pp, mut pm) = (vec![0.0; nb], vec![0.0; nb]);
            for _ in 0..20 {
                let x = random_point(&mut rng, d);
                e.grad(&x, &mut dphi).unwrap();
                for k in 0..d {
                    let mut xp = x.clone();
                    let mut xm = x.clone();
                    xp[k] += h;
                    xm[k] -= h;
                    e.eval(&xp, &mut pp).unwrap();
                    e.eval(&xm, &mut pm).unwrap();
                    for b in 0..nb {
                        let fd = (pp[b] - pm[b]) / (2.0 * h);
                        assert!((fd - dphi[b * d + k]).abs() < 1e-8, "{e}: b {b} k {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn known_values() {
        // P2 triangle at the centroid: vertex φ = −1/9, edge φ = 4/9.
        let e = Element::lagrange(2, 2).unwrap();
        let mut phi = [0.0; 6];
        e.eval(&[1.0 / 3.0, 1.0 / 3.0], &mut phi).unwrap();
        for (b, p) in phi.iter().enumerate() {
            let want = if b < 3 { -1.0 / 9.0 } else { 4.0 / 9.0 };
            assert!((p - want).abs() < 1e-15);
        }
        // P1 tetrahedron gradients are constant: ∇φ_0 = (−1,−1,−1), ∇φ_2 = e_2.
        let e = Element::lagrange(3, 1).unwrap();
        let mut g = [0.0; 12];
        e.grad(&[0.1, 0.2, 0.3], &mut g).unwrap();
        assert_eq!(&g[..3], &[-1.0, -1.0, -1.0]);
        assert_eq!(&g[6..9], &[0.0, 1.0, 0.0]);
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(Element::lagrange(1, 1).is_err());
        assert!(Element::lagrange(2, 3).is_err());
        assert!(Element::lagrange(3, 0).is_err());
        let e = Element::lagrange(2, 1).unwrap();
        let mut phi = [0.0; 3];
        assert!(e.eval(&[0.1, 0.1, 0.1], &mut phi).is_err());
        assert!(e.eval(&[0.1, 0.1], &mut phi[..2]).is_err());
        let mut g = [0.0; 5];
        assert!(e.grad(&[0.1, 0.1], &mut g).is_err());
    }
}
