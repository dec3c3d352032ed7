//! A physics that returns NaN from finite inputs: `Operator::apply`,
//! `Operator::jacobian_diagonal` and `Operator::assemble_jacobian` return
//! `Error::NonFiniteResult` naming the first dof (in the numbering of `u`),
//! its node and component — natively and on the device — never `Ok` with
//! NaN entries (issue 19).
//!
//! Runs on the device chosen by `FEMQUAD_DEVICE` (PoCL in CI).

use std::sync::Arc;

use femquad::opencl::testing;
use femquad::prelude::*;

/// `√(u_c − ½)` per component: NaN wherever a component is below ½ at a
/// quadrature point (and so are its derivatives).
#[pointwise]
fn root_source<const D: usize>(
    u: &[f64; 2],
    grad_u: &[[f64; D]; 2],
    f0: &mut [f64; 2],
    f1: &mut [[f64; D]; 2],
) {
    for c in 0..2 {
        f0[c] = (u[c] - 0.5).sqrt();
        f1[c] = grad_u[c];
    }
}

fn backends() -> [Backend; 2] {
    [
        Backend::native(),
        Backend::opencl_with(testing::device(), testing::options()),
    ]
}

fn operator(mesh: &Arc<Mesh>, backend: &Backend) -> Operator<f64> {
    let element = Element::lagrange(2, 1).unwrap();
    let space = FunctionSpace::new(mesh.clone(), element, 2).unwrap();
    let q = Quadrature::default_for(&element).unwrap();
    let form = Form::new(space, RootSource)
        .and_then(|f| f.with_quadrature(q))
        .unwrap();
    Operator::new(form, backend).unwrap()
}

/// u = 1 everywhere but component 1 of `node`, −10: NaN in every cell
/// around `node`, first at the smallest node of those cells (component 1).
fn nan_around(res: &Operator<f64>, node: u32) -> (Vec<f64>, usize) {
    let space = res.space();
    let mut u = vec![1.0; space.n_dofs()];
    u[node as usize * 2 + 1] = -10.0;
    let first = (0..space.n_cells())
        .map(|c| space.cell_nodes(c))
        .filter(|nodes| nodes.contains(&node))
        .flat_map(|nodes| nodes.iter().copied())
        .min()
        .unwrap();
    (u, first as usize)
}

/// Checks that `e` is the non-finite result at component 1 of `node`.
fn assert_names(e: &Error, quantity: &str, node: usize, what: &str) {
    let text = e.to_string();
    match e {
        Error::NonFiniteResult {
            physics,
            dof,
            node: n,
            component,
            ..
        } => {
            assert_eq!(
                (*dof, *n, *component),
                (2 * node + 1, node, 1),
                "{what}: {text}"
            );
            assert_eq!(*physics, "root_source", "{what}");
        }
        _ => panic!("{what}: {e:?}"),
    }
    let expected = format!(
        "{quantity} of the physics `root_source` is not finite at dof {} (node {node}, component 1): NaN",
        2 * node + 1
    );
    assert!(text.starts_with(&expected), "{what}: {text}");
}

#[test]
fn apply_names_the_first_non_finite_dof() {
    let mesh = unit_square(6, &MeshOptions::default()).unwrap();
    let mesh = Arc::new(mesh);
    for backend in backends() {
        let what = backend.describe();
        let mut res = operator(&mesh, &backend);
        let mut r = res.vector().unwrap();
        for node in [0u32, 17, 40] {
            let (u, first) = nan_around(&res, node);
            let u = res.vector_from(&u).unwrap();
            let e = res.apply(&u, &mut r).unwrap_err();
            assert_names(&e, "the residual F(u)", first, &what);
        }
        // finite everywhere: Ok
        let u = res.vector_from(&vec![1.0; res.space().n_dofs()]).unwrap();
        res.apply(&u, &mut r).unwrap();
        // a NaN in u is u's: named by its index in u, not blamed on the physics
        let mut values = vec![1.0; res.space().n_dofs()];
        values[9] = f64::NAN;
        let u = res.vector_from(&values).unwrap();
        let e = res.apply(&u, &mut r).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NonFinite {
                    name: "u",
                    index: 9,
                    ..
                }
            ),
            "{what}: {e:?}"
        );
    }
}

/// A vector for the point-block diagonal, where `res` lives.
fn diagonal_vector(res: &Operator<f64>, backend: &Backend) -> Vector<f64> {
    let len = res.jacobian_diagonal_len();
    match backend {
        Backend::OpenCl { device, .. } => Vector::device_zeros(device, len).unwrap(),
        _ => Vector::host_zeros(len),
    }
}

#[test]
fn the_jacobian_diagonal_and_the_assembled_jacobian_name_the_same_node() {
    let mesh = unit_square(6, &MeshOptions::default()).unwrap();
    let mesh = Arc::new(mesh);
    let quantity = "entry [1][1] of the diagonal block of the Jacobian J(u)";
    for backend in backends() {
        let what = backend.describe();
        let mut res = operator(&mesh, &backend);
        let mut diag = diagonal_vector(&res, &backend);
        for node in [0u32, 17, 40] {
            let (u, first) = nan_around(&res, node);
            let u = res.vector_from(&u).unwrap();
            let e = res.jacobian_diagonal(&u, &mut diag).unwrap_err();
            assert_names(&e, quantity, first, &format!("{what}: diagonal"));
            let e = res.assemble_jacobian(&u).unwrap_err();
            assert_names(&e, quantity, first, &format!("{what}: assembled"));
        }
        // finite: both succeed, and agree
        let ones = res.vector_from(&vec![1.0; res.space().n_dofs()]).unwrap();
        res.jacobian_diagonal(&ones, &mut diag).unwrap();
        let matrix = res.assemble_jacobian(&ones).unwrap();
        let diag = diag.to_host().unwrap();
        for dof in 0..res.space().n_dofs() {
            let (node, c) = (dof / 2, dof % 2);
            let block = diag[(node * 2 + c) * 2 + c];
            let entry = matrix.get(dof, dof).unwrap();
            assert!(
                (block - entry).abs() <= 1e-12 * entry.abs(),
                "{what}: dof {dof}"
            );
        }
    }
}
