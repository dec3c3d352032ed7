//! Quadrature rules on the reference simplex.
//!
//! The reference simplex is `T̂ = {ξ ∈ ℝ^dim : ξ_i ≥ 0, Σ ξ_i ≤ 1}` with
//! vertices `0, e_1, …, e_dim` (see [`crate::layout`]); its volume is
//! `1/dim!` ([`reference_volume`]). A rule approximates
//!
//! ```text
//! ∫_T̂ f(ξ) dξ ≈ Σ_q w_q f(ξ_q)
//! ```
//!
//! and has *degree* `k` when this is exact for every polynomial of total
//! degree `≤ k`. The weights of every rule here are positive, sum to `1/dim!`,
//! and every point lies strictly inside `T̂`.
//!
//! # Rules
//!
//! Two families are provided:
//!
//! * [`Quadrature::collapsed`] — the *collapsed* (Stroud conical product)
//!   Gauss–Jacobi rules PETSc uses: `n = ⌈(k+1)/2⌉` Gauss–Jacobi points per
//!   direction on `[0,1]^dim` mapped to the simplex by the Duffy map, `n^dim`
//!   points in all. Nodes and weights are computed in code (Golub–Welsch
//!   Jacobi matrix, eigenvalues by Sturm-sequence bisection, weights from the
//!   Christoffel function), accurate to a few ulps.
//! * [`Quadrature::simplex`] — the default: the rule with the fewest points
//!   among the collapsed rule and a few classical fully symmetric rules with
//!   positive weights and interior points:
//!
//! | degree | 2D rule (points) | 3D rule (points) |
//! |---|---|---|
//! | 0, 1 | centroid (1) | centroid (1) |
//! | 2 | Strang–Fix, `(1/6, 1/6, 2/3)` orbit (3) | Hammer–Stroud, `a = (5−√5)/20` orbit (4) |
//! | 3 | collapsed Gauss–Jacobi, `n = 2` (4) | collapsed Gauss–Jacobi, `n = 2` (8) |
//! | 4 | Dunavant degree-4 (6) | Keast/Walkington 14-point degree-5 (14) |
//! | 5 | Radon degree-5 (7) | Keast/Walkington 14-point degree-5 (14) |
//! | k ≥ 6 | collapsed, `n = ⌈(k+1)/2⌉` (`n²`) | collapsed, `n = ⌈(k+1)/2⌉` (`n³`) |
//!
//! The Dunavant and Keast/Walkington parameters are published to about 15
//! digits; their orbit parameters are refined here by Gauss–Newton on the
//! moment equations of all monomials up to the rule's degree, so every
//! monomial is integrated to within a few ulps (relative error ≤ 1e-15).
//! Points of a symmetric rule are listed orbit by orbit.
//!
//! The degree-0/1 rule is the single centroid point for both families (the
//! collapsed rule with `n = 1` *is* the centroid), which is what the paper's
//! P1 benchmarks use.
//!
//! The default degree for a `Pk` discretization is [`default_degree`]`(k) = 2k`.

use crate::{Error, Result};

/// Highest degree accepted by the constructors.
pub const MAX_DEGREE: usize = 20;

/// Volume of the reference simplex of dimension `dim`: `1/dim!`
/// (`1/2` for the triangle, `1/6` for the tetrahedron).
pub fn reference_volume(dim: usize) -> f64 {
    1.0 / (1..=dim).map(|i| i as f64).product::<f64>()
}

/// Default quadrature degree for Lagrange elements of order `order`: `2·order`.
///
/// With affine cells, degree `2k` integrates the `Pk` mass matrix `∫ φ_a φ_b`
/// and a `Pk` forcing term `∫ f φ_b` with `f ∈ Pk` exactly, and the stiffness
/// matrix `∫ ∇φ_a·∇φ_b` (degree `2k−2`) as well. For P1 this gives degree 2
/// (3 points in 2D, 4 in 3D); a one-point rule (`Quadrature::simplex(dim, 1)`)
/// is exact for the P1 stiffness with a constant coefficient.
pub fn default_degree(order: usize) -> usize {
    2 * order
}

/// A quadrature rule on the reference simplex: points `ξ_q` (`n_q × dim`,
/// reference coordinates, row-major) and weights `w_q`, exact for all
/// polynomials of total degree `≤ degree`.
#[derive(Clone, Debug, PartialEq)]
pub struct Quadrature {
    dim: usize,
    degree: usize,
    points: Vec<f64>,
    weights: Vec<f64>,
}

impl Quadrature {
    /// The default rule of degree `degree` on the reference simplex of
    /// dimension `dim`: the rule with the fewest points from the table in the
    /// [module documentation](self). `Quadrature::simplex(dim, 1)` (and
    /// degree 0) is the one-point centroid rule `ξ = (1/(dim+1), …)`,
    /// `w = 1/dim!`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `dim ∉ {2, 3}` or `degree > 20`.
    pub fn simplex(dim: usize, degree: usize) -> Result<Quadrature> {
        check_dim_degree(dim, degree)?;
        match (dim, degree) {
            (_, 0 | 1) => Quadrature::collapsed(dim, degree),
            (2, 2) => Ok(symmetric::strang_fix_2(degree)),
            (3, 2) => Ok(symmetric::hammer_stroud_2(degree)),
            (2, 4) => Ok(symmetric::dunavant_4(degree)),
            (2, 5) => Ok(symmetric::radon_5(degree)),
            (3, 4 | 5) => Ok(symmetric::keast_14(degree)),
            _ => Quadrature::collapsed(dim, degree),
        }
    }

    /// The default rule for `element`: degree [`default_degree`]`(k) = 2k`
    /// for Lagrange elements of order `k` (2 for P1, 4 for P2), exact for
    /// the mass matrix and the stiffness matrix on affine cells.
    ///
    /// ```
    /// use femquad::prelude::*;
    /// let q = Quadrature::default_for(&Element::lagrange(2, 1)?)?;
    /// assert_eq!((q.degree(), q.n_points()), (2, 3));
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// Never for the elements femquad constructs (dimension 2 or 3, order 1 or 2).
    pub fn default_for(element: &crate::element::Element) -> Result<Quadrature> {
        Quadrature::simplex(element.dim(), default_degree(element.order()))
    }

    /// The collapsed (Stroud conical product) Gauss–Jacobi rule of degree
    /// `degree`: `n = ⌈(degree+1)/2⌉` points per direction, `n^dim` points.
    ///
    /// With `(u, v, w) ∈ [0,1]³` the Duffy map is, in 2D,
    /// `ξ_1 = u(1−v)`, `ξ_2 = v` (Jacobian `1−v`), and in 3D
    /// `ξ_1 = u(1−v)(1−w)`, `ξ_2 = v(1−w)`, `ξ_3 = w` (Jacobian
    /// `(1−v)(1−w)²`). The Jacobian factors are absorbed into Gauss–Jacobi
    /// weights `(1−t)^α` on `[0,1]`: `α = 0` for `u`, `1` for `v`, `2` for
    /// `w`. An `n`-point Gauss–Jacobi rule is exact to degree `2n−1`, and a
    /// polynomial of degree `k` in `ξ` has degree `≤ k` in each of `u, v, w`
    /// after removing the Jacobian, so the rule is exact to degree `k`.
    /// Points are ordered with `u` fastest, then `v`, then `w`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `dim ∉ {2, 3}` or `degree > 20`.
    pub fn collapsed(dim: usize, degree: usize) -> Result<Quadrature> {
        check_dim_degree(dim, degree)?;
        let n = degree / 2 + 1;
        let (tu, wu) = gauss_jacobi_01(n, 0);
        let (tv, wv) = gauss_jacobi_01(n, 1);
        let mut points = Vec::with_capacity(n.pow(dim as u32) * dim);
        let mut weights = Vec::with_capacity(n.pow(dim as u32));
        if dim == 2 {
            for j in 0..n {
                for i in 0..n {
                    points.push(tu[i] * (1.0 - tv[j]));
                    points.push(tv[j]);
                    weights.push(wu[i] * wv[j]);
                }
            }
        } else {
            let (tw, ww) = gauss_jacobi_01(n, 2);
            for k in 0..n {
                for j in 0..n {
                    for i in 0..n {
                        points.push(tu[i] * (1.0 - tv[j]) * (1.0 - tw[k]));
                        points.push(tv[j] * (1.0 - tw[k]));
                        points.push(tw[k]);
                        weights.push(wu[i] * wv[j] * ww[k]);
                    }
                }
            }
        }
        Ok(Quadrature {
            dim,
            degree,
            points,
            weights,
        })
    }

    /// A user-supplied rule: `points` (`n_q × dim`) and `weights` (`n_q`),
    /// claimed exact to `degree`. The claim is not verified; the shape is,
    /// and every value must be finite.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `dim ∉ {2, 3}`, no points, or mismatched
    /// lengths; [`Error::NonFinite`] for NaN/∞.
    pub fn from_parts(
        dim: usize,
        degree: usize,
        points: Vec<f64>,
        weights: Vec<f64>,
    ) -> Result<Quadrature> {
        check_dim_degree(dim, 0)?;
        if weights.is_empty() {
            return Err(Error::arg("weights", "a rule needs at least one point"));
        }
        crate::error::check_len("points", &points, weights.len() * dim)?;
        crate::real::check_finite("points", &points)?;
        crate::real::check_finite("weights", &weights)?;
        Ok(Quadrature {
            dim,
            degree,
            points,
            weights,
        })
    }

    /// Spatial dimension of the reference simplex (2 or 3).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Polynomial degree up to which the rule is exact.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Number of points `n_q`.
    pub fn n_points(&self) -> usize {
        self.weights.len()
    }

    /// Reference coordinates `ξ_q` of point `q` (`dim` entries).
    ///
    /// # Panics
    /// If `q ≥ n_points()` (an indexing bug in the caller).
    pub fn point(&self, q: usize) -> &[f64] {
        &self.points[q * self.dim..(q + 1) * self.dim]
    }

    /// All points, `n_q × dim`, row-major (`points[q·dim + e] = ξ_q,e`).
    pub fn points(&self) -> &[f64] {
        &self.points
    }

    /// All weights `w_q`; they sum to `1/dim!`.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// `Σ_q w_q f(ξ_q)`: the rule applied to `f`.
    pub fn integrate(&self, f: impl Fn(&[f64]) -> f64) -> f64 {
        (0..self.n_points())
            .map(|q| self.weights[q] * f(self.point(q)))
            .sum()
    }
}

fn check_dim_degree(dim: usize, degree: usize) -> Result<()> {
    if dim != 2 && dim != 3 {
        return Err(Error::arg(
            "dim",
            format!("dimension {dim} is not supported (2 or 3)"),
        ));
    }
    if degree > MAX_DEGREE {
        return Err(Error::arg(
            "degree",
            format!("degree {degree} exceeds the maximum {MAX_DEGREE}"),
        ));
    }
    Ok(())
}

/// Monic three-term recurrence coefficients of the Jacobi weight
/// `(1−x)^α (1+x)^β` on `[−1, 1]`: `p_{k+1} = (x − a_k) p_k − b_k p_{k−1}`,
/// returns `(a_0..a_{n−1}, b_1..b_{n−1})`.
fn jacobi_recurrence(n: usize, alpha: f64, beta: f64) -> (Vec<f64>, Vec<f64>) {
    let ab = alpha + beta;
    let a = (0..n)
        .map(|k| {
            if k == 0 {
                (beta - alpha) / (ab + 2.0)
            } else {
                let k = k as f64;
                (beta * beta - alpha * alpha) / ((2.0 * k + ab) * (2.0 * k + ab + 2.0))
            }
        })
        .collect();
    let b = (1..n)
        .map(|k| {
            let k = k as f64;
            let s = 2.0 * k + ab;
            4.0 * k * (k + alpha) * (k + beta) * (k + ab) / (s * s * (s + 1.0) * (s - 1.0))
        })
        .collect();
    (a, b)
}

/// Number of eigenvalues `< x` of the symmetric tridiagonal matrix with
/// diagonal `a` and squared off-diagonal `b` (Sturm sequence).
fn sturm_count(a: &[f64], b: &[f64], x: f64) -> usize {
    let mut count = 0;
    let mut d = 1.0;
    for k in 0..a.len() {
        let off = if k == 0 { 0.0 } else { b[k - 1] / d };
        d = a[k] - x - off;
        if d == 0.0 {
            d = -f64::EPSILON * (a[k].abs() + x.abs() + f64::MIN_POSITIVE);
        }
        if d < 0.0 {
            count += 1;
        }
    }
    count
}

/// `n`-point Gauss–Jacobi rule for `∫_0^1 (1−t)^α f(t) dt`: nodes increasing.
///
/// Golub–Welsch: the nodes are the eigenvalues of the Jacobi matrix of the
/// recurrence (found by bisection on Sturm counts, to the last bit), and the
/// weights are `μ_0 / Σ_{k<n} p̂_k(x)²` with the orthonormal polynomials
/// `p̂_k` (Christoffel function), which is accurate for small weights too.
pub(crate) fn gauss_jacobi_01(n: usize, alpha: usize) -> (Vec<f64>, Vec<f64>) {
    let al = alpha as f64;
    let (a, b) = jacobi_recurrence(n, al, 0.0);
    // Total mass on [-1,1]: ∫(1−x)^α dx = 2^{α+1}/(α+1).
    let mu0 = 2f64.powi(alpha as i32 + 1) / (al + 1.0);
    let mut nodes = Vec::with_capacity(n);
    let mut weights = Vec::with_capacity(n);
    for i in 0..n {
        // i-th smallest eigenvalue in (-1, 1).
        let (mut lo, mut hi) = (-1.0f64, 1.0f64);
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if sturm_count(&a, &b, mid) > i {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let x = 0.5 * (lo + hi);
        // Orthonormal recurrence: √b_{k+1} p̂_{k+1} = (x − a_k) p̂_k − √b_k p̂_{k−1}.
        let (mut pm, mut p) = (0.0f64, 1.0f64);
        let mut sum = 1.0;
        for k in 0..n - 1 {
            let sb_prev = if k == 0 { 0.0 } else { b[k - 1].sqrt() };
            let pn = ((x - a[k]) * p - sb_prev * pm) / b[k].sqrt();
            pm = p;
            p = pn;
            sum += p * p;
        }
        nodes.push(0.5 * (1.0 + x));
        // Map to [0,1]: t = (1+x)/2, (1−t)^α dt = 2^{−α−1} (1−x)^α dx.
        weights.push(mu0 / sum * 0.5f64.powi(alpha as i32 + 1));
    }
    (nodes, weights)
}

/// Fully symmetric rules, built from symmetry orbits of barycentric coordinates.
mod symmetric {
    use super::{Quadrature, reference_volume};

    /// A symmetry orbit of barycentric points with one weight per point.
    #[derive(Clone, Copy, Debug)]
    pub(super) enum Orbit {
        /// The centroid (1 point).
        Centroid { w: f64 },
        /// `(a, …, a, 1 − dim·a)` and its permutations (`dim + 1` points).
        S1 { w: f64, a: f64 },
        /// 3D only: `(a, a, 1/2 − a, 1/2 − a)` and permutations (6 points).
        S22 { w: f64, a: f64 },
    }

    impl Orbit {
        fn params(&self) -> Vec<f64> {
            match *self {
                Orbit::Centroid { w } => vec![w],
                Orbit::S1 { w, a } | Orbit::S22 { w, a } => vec![w, a],
            }
        }

        fn with_params(&self, p: &[f64]) -> Orbit {
            match self {
                Orbit::Centroid { .. } => Orbit::Centroid { w: p[0] },
                Orbit::S1 { .. } => Orbit::S1 { w: p[0], a: p[1] },
                Orbit::S22 { .. } => Orbit::S22 { w: p[0], a: p[1] },
            }
        }

        /// Appends this orbit's points (reference coordinates `ξ = λ_1..λ_dim`)
        /// and weights.
        fn expand(&self, dim: usize, points: &mut Vec<f64>, weights: &mut Vec<f64>) {
            let nv = dim + 1;
            let mut push = |lambda: &[f64], w: f64| {
                points.extend_from_slice(&lambda[1..]);
                weights.push(w);
            };
            match *self {
                Orbit::Centroid { w } => push(&vec![1.0 / nv as f64; nv], w),
                Orbit::S1 { w, a } => {
                    for odd in 0..nv {
                        let mut l = vec![a; nv];
                        l[odd] = 1.0 - dim as f64 * a;
                        push(&l, w);
                    }
                }
                Orbit::S22 { w, a } => {
                    for i in 0..nv {
                        for j in i + 1..nv {
                            let mut l = vec![0.5 - a; nv];
                            l[i] = a;
                            l[j] = a;
                            push(&l, w);
                        }
                    }
                }
            }
        }
    }

    fn build(dim: usize, degree: usize, orbits: &[Orbit]) -> Quadrature {
        let mut points = Vec::new();
        let mut weights = Vec::new();
        for o in orbits {
            o.expand(dim, &mut points, &mut weights);
        }
        Quadrature {
            dim,
            degree,
            points,
            weights,
        }
    }

    /// Exact `∫_T̂ ξ^α dξ = α_1! ⋯ α_dim! / (|α| + dim)!`.
    pub(super) fn monomial_integral(alpha: &[usize]) -> f64 {
        let fact = |n: usize| (1..=n).map(|i| i as f64).product::<f64>();
        let total: usize = alpha.iter().sum();
        alpha.iter().map(|&a| fact(a)).product::<f64>() / fact(total + alpha.len())
    }

    /// All exponent tuples `α` with `dim` entries and `|α| ≤ degree`.
    pub(super) fn exponents(dim: usize, degree: usize) -> Vec<Vec<usize>> {
        let mut out = vec![vec![]];
        for _ in 0..dim {
            out = out
                .into_iter()
                .flat_map(|a: Vec<usize>| {
                    let used: usize = a.iter().sum();
                    (0..=degree - used).map(move |k| {
                        let mut b = a.clone();
                        b.push(k);
                        b
                    })
                })
                .collect();
        }
        out
    }

    /// Relative moment errors `(Q(ξ^α) − ∫ξ^α)/∫ξ^α` of a rule for all `|α| ≤ degree`,
    /// with a compensated (Neumaier) sum over the points.
    fn moment_errors(rule: &Quadrature, alphas: &[Vec<usize>]) -> Vec<f64> {
        alphas
            .iter()
            .map(|alpha| {
                let exact = monomial_integral(alpha);
                let (mut s, mut c) = (-exact, 0.0f64);
                for q in 0..rule.n_points() {
                    let x = rule.point(q);
                    let t: f64 = rule.weights[q]
                        * x.iter()
                            .zip(alpha)
                            .map(|(&xi, &a)| xi.powi(a as i32))
                            .product::<f64>();
                    let u = s + t;
                    c += if s.abs() >= t.abs() {
                        (s - u) + t
                    } else {
                        (t - u) + s
                    };
                    s = u;
                }
                (s + c) / exact
            })
            .collect()
    }

    /// Refines the orbit parameters by Gauss–Newton on the relative moment
    /// errors of *all* monomials of degree `≤ degree` (an overdetermined,
    /// consistent system), keeping the iterate with the smallest maximal
    /// error. The Jacobian is a central difference; from 15-digit starting
    /// values a few steps reach the rounding level.
    fn refine(dim: usize, degree: usize, orbits: &[Orbit]) -> Vec<Orbit> {
        let sizes: Vec<usize> = orbits.iter().map(|o| o.params().len()).collect();
        let mut theta: Vec<f64> = orbits.iter().flat_map(|o| o.params()).collect();
        let m = theta.len();
        let alphas = exponents(dim, degree);
        let unpack = |theta: &[f64]| -> Vec<Orbit> {
            let mut off = 0;
            orbits
                .iter()
                .zip(&sizes)
                .map(|(o, &s)| {
                    let r = o.with_params(&theta[off..off + s]);
                    off += s;
                    r
                })
                .collect()
        };
        let residual = |theta: &[f64]| moment_errors(&build(dim, 0, &unpack(theta)), &alphas);
        let max_abs = |r: &[f64]| r.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
        let mut best = (max_abs(&residual(&theta)), theta.clone());
        for _ in 0..10 {
            let r = residual(&theta);
            // Jacobian J[i][j] = ∂r_i/∂θ_j; normal equations JᵀJ δ = Jᵀ r.
            let mut cols = Vec::with_capacity(m);
            for j in 0..m {
                let h = 1e-6 * theta[j].abs().max(1e-3);
                let mut tp = theta.clone();
                let mut tm = theta.clone();
                tp[j] += h;
                tm[j] -= h;
                let (rp, rm) = (residual(&tp), residual(&tm));
                cols.push(
                    rp.iter()
                        .zip(&rm)
                        .map(|(p, q)| (p - q) / (2.0 * h))
                        .collect::<Vec<f64>>(),
                );
            }
            let mut ata = vec![0.0; m * m];
            let mut atr = vec![0.0; m];
            for i in 0..m {
                for j in 0..m {
                    ata[i * m + j] = cols[i].iter().zip(&cols[j]).map(|(a, b)| a * b).sum();
                }
                atr[i] = cols[i].iter().zip(&r).map(|(a, b)| a * b).sum();
            }
            let Some(delta) = solve(&mut ata, &atr, m) else {
                break;
            };
            for j in 0..m {
                theta[j] -= delta[j];
            }
            let err = max_abs(&residual(&theta));
            if err < best.0 {
                best = (err, theta.clone());
            }
        }
        unpack(&best.1)
    }

    /// Gaussian elimination with partial pivoting; `None` if singular.
    fn solve(a: &mut [f64], rhs: &[f64], m: usize) -> Option<Vec<f64>> {
        let mut b = rhs.to_vec();
        for col in 0..m {
            let piv =
                (col..m).max_by(|&i, &j| a[i * m + col].abs().total_cmp(&a[j * m + col].abs()))?;
            if a[piv * m + col] == 0.0 {
                return None;
            }
            if piv != col {
                for k in 0..m {
                    a.swap(piv * m + k, col * m + k);
                }
                b.swap(piv, col);
            }
            for i in col + 1..m {
                let f = a[i * m + col] / a[col * m + col];
                for k in col..m {
                    a[i * m + k] -= f * a[col * m + k];
                }
                b[i] -= f * b[col];
            }
        }
        let mut x = vec![0.0; m];
        for i in (0..m).rev() {
            let s: f64 = (i + 1..m).map(|k| a[i * m + k] * x[k]).sum();
            x[i] = (b[i] - s) / a[i * m + i];
        }
        Some(x)
    }

    /// 2D degree 2, 3 points: the `(1/6, 1/6, 2/3)` orbit, `w = 1/6`.
    pub(super) fn strang_fix_2(degree: usize) -> Quadrature {
        build(
            2,
            degree,
            &[Orbit::S1 {
                w: reference_volume(2) / 3.0,
                a: 1.0 / 6.0,
            }],
        )
    }

    /// 3D degree 2, 4 points: `a = (5 − √5)/20`, `w = 1/24`.
    pub(super) fn hammer_stroud_2(degree: usize) -> Quadrature {
        build(
            3,
            degree,
            &[Orbit::S1 {
                w: reference_volume(3) / 4.0,
                a: (5.0 - 5f64.sqrt()) / 20.0,
            }],
        )
    }

    /// 2D degree 4, 6 points (Dunavant 1985): two `(a, a, 1−2a)` orbits,
    /// starting from the published 15-digit values, refined by [`refine`].
    pub(super) fn dunavant_4(degree: usize) -> Quadrature {
        let start = [
            Orbit::S1 {
                w: 0.223_381_589_678_011 / 2.0,
                a: 0.445_948_490_915_965,
            },
            Orbit::S1 {
                w: 0.109_951_743_655_322 / 2.0,
                a: 0.091_576_213_509_771,
            },
        ];
        build(2, degree, &refine(2, 4, &start))
    }

    /// 2D degree 5, 7 points (Radon 1948), closed form: centroid `w = 9/80`,
    /// orbits `a = (6 ∓ √15)/21` with `w = (155 ∓ √15)/2400`.
    pub(super) fn radon_5(degree: usize) -> Quadrature {
        let s = 15f64.sqrt();
        build(
            2,
            degree,
            &[
                Orbit::Centroid { w: 9.0 / 80.0 },
                Orbit::S1 {
                    w: (155.0 - s) / 2400.0,
                    a: (6.0 - s) / 21.0,
                },
                Orbit::S1 {
                    w: (155.0 + s) / 2400.0,
                    a: (6.0 + s) / 21.0,
                },
            ],
        )
    }

    /// 3D degree 5, 14 points (Walkington; Keast's positive rule): two
    /// `(a, a, a, 1−3a)` orbits and one `(a, a, 1/2−a, 1/2−a)` orbit,
    /// starting from the published 16-digit values, refined by [`refine`].
    pub(super) fn keast_14(degree: usize) -> Quadrature {
        let start = [
            Orbit::S1 {
                w: 0.012_248_840_519_393_66,
                a: 0.092_735_250_310_891_2,
            },
            Orbit::S1 {
                w: 0.018_781_320_953_002_64,
                a: 0.310_885_919_263_300_6,
            },
            Orbit::S22 {
                w: 0.007_091_003_462_846_911,
                a: 0.045_503_704_125_649_6,
            },
        ];
        build(3, degree, &refine(3, 5, &start))
    }
}

#[cfg(test)]
mod tests;
