//! Errors against known functions: the `L²` norm by quadrature.

use rayon::prelude::*;

use crate::error::check_len;
use crate::layout::global_dof;
use crate::quadrature::Quadrature;
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// Most components a field may have here (the exact values of one point
/// live on the stack).
const MAX_COMP: usize = 16;

/// The squared `L²` error of the finite-element function `u` (global vector
/// of `space`, `n_dofs` entries) against `exact` on every cell:
///
/// ```text
/// e_c = ∫_c |u_h(x) − u(x)|² dx ≈ Σ_q w_q |det J_c| Σ_comp (u_h − u)_comp(x_q)²,
/// u_h(x_q) = Σ_b φ_b(ξ_q) u[node(c, b)·N_comp + comp],  x_q = X_0 + J_c ξ_q,
/// ```
///
/// with the quadrature rule [`Quadrature::simplex`]`(dim, degree)`.
/// `exact(x, out)` receives a point (`dim` entries) and writes `N_comp`
/// values (`out` is zeroed first). Choose `degree` above `2·order` so that
/// the quadrature error stays below the discretization error (e.g.
/// `2·order + 3`). Parallel over cells.
///
/// # Errors
/// [`Error::InvalidArgument`] if `u` has the wrong length or `degree` is
/// not supported; [`Error::NonFinite`] if a cell's error is not finite
/// (e.g. `exact` returned NaN).
pub fn l2_error_cells(
    space: &FunctionSpace,
    u: &[f64],
    exact: impl Fn(&[f64], &mut [f64]) + Sync,
    degree: usize,
) -> Result<Vec<f64>> {
    let (mesh, dim) = (space.mesh(), space.dim());
    check_len("u", u, space.n_dofs())?;
    if space.n_comp() > MAX_COMP {
        return Err(Error::arg(
            "space",
            format!(
                "{} components; at most {MAX_COMP} are supported",
                space.n_comp()
            ),
        ));
    }
    let quadrature = Quadrature::simplex(dim, degree)?;
    let element = space.element();
    let (n_b, nc, n_q) = (element.n_basis(), space.n_comp(), quadrature.n_points());
    let mut phi = vec![0.0; n_q * n_b];
    for q in 0..n_q {
        element.eval(quadrature.point(q), &mut phi[q * n_b..(q + 1) * n_b])?;
    }
    let weights = quadrature.weights();
    let errors: Vec<Result<f64>> = (0..mesh.n_cells())
        .into_par_iter()
        .map(|c| {
            let verts = mesh.cell(c);
            let nodes = space.cell_nodes(c);
            let x0 = mesh.vertex(verts[0] as usize);
            let mut jac = [[0.0; 3]; 3]; // jac[d][i] = X_{i+1,d} − X_{0,d}
            for i in 0..dim {
                let xi = mesh.vertex(verts[i + 1] as usize);
                for d in 0..dim {
                    jac[d][i] = xi[d] - x0[d];
                }
            }
            let det = mesh.det_j(c).abs();
            let (mut x, mut ue, mut sum) = ([0.0; 3], [0.0; MAX_COMP], 0.0);
            for q in 0..n_q {
                let xi = quadrature.point(q);
                for d in 0..dim {
                    x[d] = x0[d] + (0..dim).map(|i| jac[d][i] * xi[i]).sum::<f64>();
                }
                let ue = &mut ue[..nc];
                ue.fill(0.0);
                exact(&x[..dim], ue);
                let p = &phi[q * n_b..(q + 1) * n_b];
                let mut e2 = 0.0;
                for (comp, &uex) in ue.iter().enumerate() {
                    let uh: f64 = nodes
                        .iter()
                        .zip(p)
                        .map(|(&node, &ph)| ph * u[global_dof(node as usize, comp, nc)])
                        .sum();
                    e2 += (uh - uex) * (uh - uex);
                }
                sum += weights[q] * e2;
            }
            let e = sum * det;
            if e.is_finite() {
                Ok(e)
            } else {
                Err(Error::NonFinite {
                    name: "cell error (u or exact)",
                    index: c,
                    value: format!("{e}"),
                })
            }
        })
        .collect();
    errors.into_iter().collect()
}

/// The `L²` error `‖u_h − u‖_{L²(Ω)} = (Σ_c e_c)^{1/2}` with the cell
/// contributions `e_c` of [`l2_error_cells`] (same arguments and errors).
pub fn l2_error(
    space: &FunctionSpace,
    u: &[f64],
    exact: impl Fn(&[f64], &mut [f64]) + Sync,
    degree: usize,
) -> Result<f64> {
    Ok(l2_error_cells(space, u, exact, degree)?
        .iter()
        .sum::<f64>()
        .sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::mesh::Mesh;
    use crate::mesh::generate::{MeshOptions, unit_box};

    #[test]
    fn exact_for_interpolated_polynomials_and_known_for_constants() {
        for dim in [2, 3] {
            let mesh = unit_box(
                dim,
                3,
                &MeshOptions {
                    jitter: 0.1,
                    shuffle: true,
                    seed: 5,
                },
            )
            .unwrap();
            let mesh = std::sync::Arc::new(mesh);
            for order in [1, 2] {
                let space =
                    FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order).unwrap(), 2)
                        .unwrap();
                // a polynomial of degree `order` per component is reproduced
                let f = move |x: &[f64], o: &mut [f64]| {
                    o[0] = 1.0 + x[0] - 2.0 * x[1] + if order == 2 { x[0] * x[1] } else { 0.0 };
                    o[1] = -3.0 + x[dim - 1];
                };
                let u = space.interpolate(f);
                let e = l2_error(&space, &u, f, 2 * order + 2).unwrap();
                assert!(e < 1e-13, "{dim}D P{order}: {e}");
                // against u + (1, 2): error √(1 + 4) on the unit box
                let g = move |x: &[f64], o: &mut [f64]| {
                    f(x, o);
                    o[0] += 1.0;
                    o[1] += 2.0;
                };
                let e = l2_error(&space, &u, g, 2).unwrap();
                assert!((e - 5f64.sqrt()).abs() < 1e-12, "{e}");
            }
        }
    }

    #[test]
    fn p1_interpolation_error_of_a_quadratic_is_exact() {
        // On a 1-cell triangle (0,0),(1,0),(0,1), u = x²: I_h u = x and
        // ∫ (x − x²)² over the triangle = 1/60 − ... computed exactly:
        // ∫∫ x²(1−x)² dy dx with y ∈ [0, 1−x] = ∫ x²(1−x)³ dx = 1/60.
        let mesh = Mesh::new(2, vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0], vec![0, 1, 2]).unwrap();
        let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let sq = |x: &[f64], o: &mut [f64]| o[0] = x[0] * x[0];
        let u = space.interpolate(sq);
        let cells = l2_error_cells(&space, &u, sq, 6).unwrap();
        assert!((cells[0] - 1.0 / 60.0).abs() < 1e-15, "{}", cells[0]);
    }

    #[test]
    fn bad_input_is_an_error() {
        let mesh = unit_box(2, 2, &MeshOptions::default()).unwrap();
        let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let zero = |_: &[f64], _: &mut [f64]| {};
        assert!(l2_error(&space, &[0.0; 3], zero, 2).is_err());
        assert!(l2_error(&space, &vec![0.0; space.n_dofs()], zero, 99).is_err());
        let nan = |_: &[f64], o: &mut [f64]| o[0] = f64::NAN;
        let e = l2_error(&space, &vec![0.0; space.n_dofs()], nan, 2).unwrap_err();
        assert!(matches!(e, Error::NonFinite { .. }), "{e}");
    }
}
