//! The native integrator against closed forms and patch tests.

use std::sync::Arc;

use femquad::aux_space::AuxSpace;
use femquad::backend::Backend;
use femquad::backend::Vector;
use femquad::discretization::{CellInputs, Discretization};
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::native::{Execution, element_vectors};
use femquad::operator::Operator;
use femquad::physics::PointwiseEvalBoth;
use femquad::physics::builtin::{Lame, Laplacian, LaplacianCoefficient};
use femquad::quadrature::Quadrature;
use femquad::rng::Rng;
use femquad::space::FunctionSpace;

/// Solves `a x = b` (dense, partial pivoting); `a` is n×n row-major.
fn solve(n: usize, mut a: Vec<f64>, mut b: Vec<f64>) -> Vec<f64> {
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .unwrap();
        for j in 0..n {
            a.swap(k * n + j, p * n + j);
        }
        b.swap(k, p);
        for i in k + 1..n {
            let f = a[i * n + k] / a[k * n + k];
            for j in k..n {
                a[i * n + j] -= f * a[k * n + j];
            }
            b[i] -= f * b[k];
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|j| a[k * n + j] * x[j]).sum();
        x[k] = (b[k] - s) / a[k * n + k];
    }
    x
}

/// Gradients of the barycentric coordinates of a simplex, from
/// `λ_i(X_j) = δ_ij` with `λ_i(x) = c_i + g_i·x` (independent of femquad's
/// geometry code).
fn barycentric_gradients(dim: usize, verts: &[f64]) -> Vec<Vec<f64>> {
    let n = dim + 1;
    (0..n)
        .map(|i| {
            let mut m = vec![0.0; n * n];
            for j in 0..n {
                m[j * n] = 1.0;
                for d in 0..dim {
                    m[j * n + 1 + d] = verts[j * dim + d];
                }
            }
            let rhs: Vec<f64> = (0..n).map(|j| if j == i { 1.0 } else { 0.0 }).collect();
            solve(n, m, rhs)[1..].to_vec()
        })
        .collect()
}

fn simplex_volume(dim: usize, verts: &[f64]) -> f64 {
    let j = |r: usize, c: usize| verts[(c + 1) * dim + r] - verts[r];
    let det = if dim == 2 {
        j(0, 0) * j(1, 1) - j(0, 1) * j(1, 0)
    } else {
        j(0, 0) * (j(1, 1) * j(2, 2) - j(1, 2) * j(2, 1))
            - j(0, 1) * (j(1, 0) * j(2, 2) - j(1, 2) * j(2, 0))
            + j(0, 2) * (j(1, 0) * j(2, 1) - j(1, 1) * j(2, 0))
    };
    det / if dim == 2 { 2.0 } else { 6.0 }
}

#[test]
fn p1_stiffness_equals_closed_form() {
    let mut rng = Rng::new(11);
    for dim in [2, 3] {
        for _trial in 0..5 {
            // A random positively oriented simplex.
            let verts = loop {
                let v = rng.vec((dim + 1) * dim, -1.0, 1.0);
                if simplex_volume(dim, &v) > 0.05 {
                    break v;
                }
            };
            let cell: Vec<u32> = (0..=dim as u32).collect();
            let mesh = Mesh::new(dim, verts.clone(), cell).unwrap();
            let mesh = Arc::new(mesh);
            let space =
                FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1).unwrap(), 1).unwrap();
            let disc = Discretization::<f64>::new(
                &space,
                Quadrature::simplex(dim, 1).unwrap(),
                AuxSpace::None,
            )
            .unwrap();
            let g = barycentric_gradients(dim, &verts);
            let vol = simplex_volume(dim, &verts);
            let n = dim + 1;
            for j in 0..n {
                let mut u = vec![0.0; n];
                u[j] = 1.0;
                let mut e = vec![0.0; n];
                let inputs = CellInputs {
                    u: &u,
                    aux: &[],
                    constants: &[],
                    time: None,
                };
                element_vectors(&disc, &Laplacian, &inputs, &mut e, Execution::Serial).unwrap();
                for i in 0..n {
                    let k_ij: f64 = vol * (0..dim).map(|d| g[i][d] * g[j][d]).sum::<f64>();
                    assert!(
                        (e[i] - k_ij).abs() < 1e-12 * (1.0 + k_ij.abs()),
                        "{dim}D K[{i}][{j}] = {} expected {k_ij}",
                        e[i]
                    );
                }
            }
        }
    }
}

/// The larger of `a` and `b`, NaN if either is (`f64::max` would drop a
/// NaN, and a NaN entry would pass every tolerance).
fn max_or_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn jittered(dim: usize, n: usize, seed: u64) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.12,
        shuffle: true,
        seed,
    };
    unit_box(dim, n, &opts).unwrap().into()
}

/// The element vectors of `res`'s discretization, physics and constants for
/// the global `u` and the cell-local `aux`, natively.
fn cell_vectors(res: &Operator<f64>, u: &[f64], aux: &[f64], execution: Execution) -> Vec<f64> {
    let space = res.space();
    let mut cells = vec![0.0; space.n_cell_dofs()];
    space.gather(u, &mut cells).unwrap();
    let inputs = CellInputs {
        u: &cells,
        aux,
        constants: res.form().constants(),
        time: None,
    };
    let mut out = vec![0.0; cells.len()];
    element_vectors(
        res.discretization(),
        res.physics(),
        &inputs,
        &mut out,
        execution,
    )
    .unwrap();
    out
}

/// `r = F(u)` on host vectors.
fn eval(res: &mut Operator<f64>, u: &[f64], r: &mut Vec<f64>) -> femquad::Result<()> {
    let u = Vector::from(u.to_vec());
    let mut out = Vector::from(vec![0.0; r.len()]);
    res.apply(&u, &mut out)?;
    *r = out.to_host()?;
    Ok(())
}

/// The form of `physics` on the Lagrange space of `order` with `n_comp`
/// components, integrated exactly for the stiffness terms.
fn form(
    mesh: &Arc<Mesh>,
    order: usize,
    n_comp: usize,
    physics: &'static dyn PointwiseEvalBoth,
) -> Form<f64> {
    let dim = mesh.dim();
    let space =
        FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order).unwrap(), n_comp).unwrap();
    // Degree 2·order is exact for the stiffness terms of P1/P2 on affine cells.
    let quad = Quadrature::simplex(dim, 2 * order).unwrap();
    Form::new(space, physics)
        .and_then(|f| f.with_quadrature(quad))
        .unwrap()
}

/// The native operator of [`form`] with aux `aux` and `constants`.
fn operator(
    mesh: &Arc<Mesh>,
    order: usize,
    n_comp: usize,
    aux: AuxSpace,
    physics: &'static dyn PointwiseEvalBoth,
    constants: &[f64],
    execution: Execution,
) -> Operator<f64> {
    let form = form(mesh, order, n_comp, physics)
        .with_aux(aux)
        .and_then(|f| f.with_constants(constants))
        .unwrap();
    Operator::new(form, &Backend::Native(execution)).unwrap()
}

#[test]
fn linear_fields_give_zero_interior_laplacian_residual() {
    for dim in [2, 3] {
        for order in [1, 2] {
            let mesh = jittered(dim, if dim == 2 { 6 } else { 3 }, 5);
            let mut res = operator(
                &mesh,
                order,
                1,
                AuxSpace::None,
                &Laplacian,
                &[],
                Execution::Parallel,
            );
            let coef = [0.3, -1.2, 0.7, 2.0];
            let u = res.space().interpolate(|x, out| {
                out[0] = coef[0] + (0..dim).map(|d| coef[d + 1] * x[d]).sum::<f64>()
            });
            let mut r = vec![0.0; u.len()];
            eval(&mut res, &u, &mut r).unwrap();
            let boundary = res.space().boundary_dofs().unwrap();
            let mut on_boundary = vec![false; r.len()];
            for &b in &boundary {
                on_boundary[b as usize] = true;
            }
            let interior_max = r
                .iter()
                .zip(&on_boundary)
                .filter(|(_, b)| !**b)
                .map(|(v, _)| v.abs())
                .fold(0.0, max_or_nan);
            let boundary_max = boundary
                .iter()
                .map(|&b| r[b as usize].abs())
                .fold(0.0, max_or_nan);
            assert!(
                interior_max < 1e-12,
                "{dim}D P{order}: interior residual {interior_max:e}"
            );
            // The boundary residual is the flux of the linear field: not zero.
            assert!(
                boundary_max > 1e-3,
                "{dim}D P{order}: boundary residual {boundary_max:e}"
            );
            // Σ_i φ_i = 1, so the residual entries sum to ∫ ∇1·∇u = 0.
            let total: f64 = r.iter().sum();
            assert!(total.abs() < 1e-12, "sum {total:e}");
        }
    }
}

#[test]
fn rigid_motions_give_zero_lame_residual() {
    let constants = [1.3, 0.7]; // μ, λ
    for dim in [2, 3] {
        for order in [1, 2] {
            let mesh = jittered(dim, if dim == 2 { 5 } else { 2 }, 9);
            let mut res = operator(
                &mesh,
                order,
                dim,
                AuxSpace::None,
                &Lame,
                &constants,
                Execution::Parallel,
            );
            // Translation plus infinitesimal rotation: u = t + ω × x.
            let rigid = |x: &[f64], out: &mut [f64]| {
                if dim == 2 {
                    out[0] = 0.4 - 0.9 * x[1];
                    out[1] = -0.2 + 0.9 * x[0];
                } else {
                    let (t, w) = ([0.4, -0.2, 0.1], [0.3, -0.5, 0.8]);
                    out[0] = t[0] + w[1] * x[2] - w[2] * x[1];
                    out[1] = t[1] + w[2] * x[0] - w[0] * x[2];
                    out[2] = t[2] + w[0] * x[1] - w[1] * x[0];
                }
            };
            let u = res.space().interpolate(rigid);
            let mut r = vec![1.0; u.len()];
            eval(&mut res, &u, &mut r).unwrap();
            let max = r.iter().map(|v| v.abs()).fold(0.0, max_or_nan);
            assert!(
                max < 1e-12,
                "{dim}D P{order}: Lamé residual of a rigid motion {max:e}"
            );
            // A stretch is not rigid: the residual must not vanish.
            let stretch = res.space().interpolate(|x, out| {
                for d in 0..dim {
                    out[d] = 0.1 * x[d] * (d + 1) as f64;
                }
            });
            eval(&mut res, &stretch, &mut r).unwrap();
            assert!(r.iter().map(|v| v.abs()).fold(0.0, max_or_nan) > 1e-3);
        }
    }
}

#[test]
fn serial_and_parallel_are_bit_identical() {
    for dim in [2, 3] {
        let mesh = jittered(dim, if dim == 2 { 40 } else { 8 }, 3);
        let mut rng = Rng::new(4);
        let mut results = Vec::new();
        for execution in [Execution::Serial, Execution::Parallel] {
            let mut res = operator(&mesh, 2, dim, AuxSpace::None, &Lame, &[1.0, 2.0], execution);
            let u = rng.clone().vec(res.space().n_dofs(), -1.0, 1.0);
            let mut r = vec![0.0; u.len()];
            eval(&mut res, &u, &mut r).unwrap();
            let ev = cell_vectors(&res, &u, &[], execution);
            results.push((r, ev));
        }
        assert_eq!(results[0].1, results[1].1, "{dim}D element vectors differ");
        assert_eq!(results[0].0, results[1].0, "{dim}D residuals differ");
        rng.next_u64();
    }
}

#[test]
fn coefficient_fields_scale_the_laplacian() {
    let dim = 2;
    let mesh = jittered(dim, 6, 1);
    let serial = Execution::Serial;
    let mut plain = operator(&mesh, 1, 1, AuxSpace::None, &Laplacian, &[], serial);
    let u = Rng::new(8).vec(plain.space().n_dofs(), -1.0, 1.0);
    let mut r0 = vec![0.0; u.len()];
    eval(&mut plain, &u, &mut r0).unwrap();
    let e0 = cell_vectors(&plain, &u, &[], serial);

    // A constant field coefficient 2.5 doubles-and-a-half the residual.
    let field_aux = AuxSpace::Field { n_comp: 1 };
    let mut field = operator(&mesh, 1, 1, field_aux, &LaplacianCoefficient, &[], serial);
    field.set_aux(&vec![2.5; field.aux_len()]).unwrap();
    let mut r1 = vec![0.0; u.len()];
    eval(&mut field, &u, &mut r1).unwrap();
    for (a, b) in r1.iter().zip(&r0) {
        assert!((a - 2.5 * b).abs() < 1e-13 * (1.0 + b.abs()));
    }

    // A P0 coefficient scales each cell's element vector by its value.
    let cell_aux = AuxSpace::Cell { n_comp: 1 };
    let mut cell = operator(&mesh, 1, 1, cell_aux, &LaplacianCoefficient, &[], serial);
    let k: Vec<f64> = (0..mesh.n_cells()).map(|c| 1.0 + c as f64 * 0.01).collect();
    cell.set_aux(&k).unwrap();
    let mut r2 = vec![0.0; u.len()];
    eval(&mut cell, &u, &mut r2).unwrap();
    let e2 = cell_vectors(&cell, &u, &k, serial);
    for (c, (e, e_ref)) in e2.chunks(3).zip(e0.chunks(3)).enumerate() {
        for (a, b) in e.iter().zip(e_ref) {
            assert!((a - k[c] * b).abs() < 1e-13 * (1.0 + b.abs()), "cell {c}");
        }
    }
    // ... and the residual is the sum of those scaled element vectors over
    // each node's cells: r2[node] = Σ_c k_c e0_c[b] over the cells c with
    // node b.
    let mut expected = vec![0.0; u.len()];
    for (c, e) in e0.chunks(3).enumerate() {
        for (&node, v) in plain.space().cell_nodes(c).iter().zip(e) {
            expected[node as usize] += k[c] * v;
        }
    }
    let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (dof, (a, b)) in r2.iter().zip(&expected).enumerate() {
        assert!(
            (a - b).abs() <= 1e-13 * scale,
            "dof {dof}: P0-coefficient residual {a}, Σ_c k_c e0_c = {b}"
        );
    }
    // Wrong sizes are named.
    let err = cell.set_aux(&k[1..]).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "invalid argument `aux`: expected {} entries, got {}",
            k.len(),
            k.len() - 1
        )
    );
    // A physics that reads no aux in a form with one: refused when the form
    // is given the aux space.
    let Err(err) = form(&mesh, 1, 1, &Laplacian).with_aux(cell_aux) else {
        panic!("the Laplacian's form took a P0 auxiliary field");
    };
    let err = err.to_string();
    assert_eq!(
        err,
        format!(
            "invalid argument `aux`: physics `{}` reads 0 auxiliary component(s) but the \
             auxiliary space Cell {{ n_comp: 1 }} has 1",
            femquad::Pointwise::info(&Laplacian).name
        )
    );
}

/// `f0 = −x₀`: a physics that reads the point `x`.
#[femquad::pointwise]
fn source_x<const D: usize>(
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = -x[0];
    f1[0] = grad_u[0];
}

/// The cell coordinates (`(dim+1)·dim` values a cell) are stored only for a
/// physics that reads `x` (`Backend::bind`), natively and on the device, and
/// that physics still gets its `x`: `F(0)_i = −∫ x₀ φ_i`, summing to
/// `−∫_Ω x₀ = −½`. A native integrator given a discretization without them
/// (`Discretization::without_coordinates`) for such a physics is refused
/// naming the physics (it would evaluate at `x = 0`); with them it is built.
#[test]
fn cell_coordinates_are_stored_only_for_physics_that_read_x() {
    use femquad::backend::BoundaryIntegrals;
    use femquad::native::NativeIntegrator;
    use femquad::opencl::testing;
    let mesh: Arc<Mesh> = unit_box(2, 3, &MeshOptions::default()).unwrap().into();
    let space = FunctionSpace::new(mesh, Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let backends = [
        Backend::native(),
        Backend::opencl_with(testing::device(), testing::options()),
    ];
    for backend in backends {
        let form = Form::<f64>::new(space.clone(), Laplacian).unwrap();
        let op = Operator::new(form, &backend).unwrap();
        let coords = op.discretization().geometry().coords();
        assert!(coords.is_none(), "{backend:?}: Laplacian");
        let form = Form::<f64>::new(space.clone(), SourceX).unwrap();
        let mut op = Operator::new(form, &backend).unwrap();
        let coords = op.discretization().geometry().coords();
        assert!(coords.is_some(), "{backend:?}: source_x");
        let (u, mut r) = (op.vector().unwrap(), op.vector().unwrap());
        op.apply(&u, &mut r).unwrap();
        let sum: f64 = r.to_host().unwrap().iter().sum();
        assert!((sum + 0.5).abs() < 1e-13, "{backend:?}: Σ F(0) = {sum}");
    }
    let boundary = Arc::new(BoundaryIntegrals::new(&space, &[]).unwrap());
    let quadrature = Quadrature::simplex(2, 2).unwrap();
    let integrator = |disc| {
        NativeIntegrator::<f64>::new(
            &space,
            disc,
            Arc::new(SourceX),
            boundary.clone(),
            &[],
            Execution::Serial,
        )
    };
    let without =
        Discretization::without_coordinates(&space, quadrature.clone(), AuxSpace::None).unwrap();
    let e = integrator(without).err().unwrap();
    assert_eq!(
        e.to_string(),
        "invalid argument `physics`: `source_x` reads x but the discretization stores no cell \
         coordinates (Discretization::without_coordinates): build it with Discretization::new"
    );
    let with = Discretization::new(&space, quadrature, AuxSpace::None).unwrap();
    assert!(integrator(with).is_ok());
}
