//! The bound operator: what it checks once, what `set_constants` and
//! `set_aux` change, natively and on the OpenCL device.

use std::sync::Arc;

use super::*;
use crate::element::Element;
use crate::mesh::Mesh;
use crate::mesh::generate::{MeshOptions, unit_square};
use crate::physics::builtin::{LaplacianCoefficient, Poisson};

/// Native, then the tests' OpenCL device.
fn backends() -> Vec<Backend> {
    Backend::for_tests().to_vec()
}

fn mesh() -> Arc<Mesh> {
    unit_square(3, &MeshOptions::default()).unwrap().into()
}

#[test]
fn a_form_without_its_constants_or_aux_is_refused_when_bound() {
    let mesh = mesh();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let form = Form::<f64>::new(space.clone(), Poisson).unwrap();
    let e = Operator::new(form, &Backend::native()).err().unwrap();
    assert!(
        e.to_string()
            .contains("`poisson` takes 1 constant(s), the form has 0"),
        "{e}"
    );
    let form = Form::<f64>::new(space, LaplacianCoefficient).unwrap();
    let e = Operator::new(form, &Backend::native()).err().unwrap();
    assert!(e.to_string().contains("Form::with_aux"), "{e}");
}

/// `F(0) = −f ∫φ_i` for Poisson: doubling the constant `f` with
/// `set_constants` doubles `F(0)` — on the device too, where the constants
/// live in a buffer uploaded when they change.
#[test]
fn set_constants_changes_the_next_evaluations() {
    let mesh = mesh();
    for backend in backends() {
        let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
        let form = Form::<f64>::new(space, Poisson)
            .and_then(|f| f.with_constants(&[1.0]))
            .unwrap();
        let mut op = Operator::new(form, &backend).unwrap();
        let u = op.vector().unwrap();
        let (mut r1, mut r2) = (op.vector().unwrap(), op.vector().unwrap());
        op.apply(&u, &mut r1).unwrap();
        op.set_constants(&[2.0]).unwrap();
        assert_eq!(op.form().constants(), &[2.0]);
        op.apply(&u, &mut r2).unwrap();
        let (r1, r2) = (r1.to_host().unwrap(), r2.to_host().unwrap());
        // Σ_i F(0)_i = −f·|Ω|
        assert!((r1.iter().sum::<f64>() + 1.0).abs() < 1e-13, "{backend:?}");
        for (a, b) in r1.iter().zip(&r2) {
            assert!((2.0 * a - b).abs() < 1e-15, "{backend:?}: {a} {b}");
        }
        // and a refused change keeps the last good constants
        assert!(op.set_constants(&[1.0, 2.0]).is_err());
        assert_eq!(op.form().constants(), &[2.0]);
    }
}

/// The auxiliary field is read once set, and a physics that reads it is
/// refused before: `f1 = a₀∇u` with `a₀ = 3` per cell is three times the
/// Laplacian.
#[test]
fn the_aux_field_must_be_set_before_the_physics_reads_it() {
    let mesh = mesh();
    for backend in backends() {
        let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let form = Form::<f64>::new(space, LaplacianCoefficient)
            .and_then(|f| f.with_aux(AuxSpace::Cell { n_comp: 1 }))
            .unwrap();
        let mut op = Operator::new(form, &backend).unwrap();
        let values = op.space().interpolate(|x, u| u[0] = x[0] * x[1]);
        let u = op.vector_from(&values).unwrap();
        let mut r = op.vector().unwrap();
        let e = op.apply(&u, &mut r).unwrap_err().to_string();
        assert!(
            e.contains("never set") && e.contains("Operator::set_aux"),
            "{e}"
        );
        op.set_aux(&vec![1.0; mesh.n_cells()]).unwrap();
        op.apply(&u, &mut r).unwrap();
        let r1 = r.to_host().unwrap();
        op.set_aux(&vec![3.0; mesh.n_cells()]).unwrap();
        op.apply(&u, &mut r).unwrap();
        let r3 = r.to_host().unwrap();
        assert!(r1.iter().any(|v| v.abs() > 0.01));
        for (a, b) in r1.iter().zip(&r3) {
            assert!((3.0 * a - b).abs() < 1e-14, "{backend:?}: {a} {b}");
        }
    }
}

/// `set_assembly(Deterministic)` switches the device to the fixed-order
/// sum and builds what it needs then — its kernels and the node incidence —
/// so the next evaluation builds, looks up and uploads nothing, and it sums
/// to the atomic assembly's values.
#[test]
fn set_assembly_prepares_the_deterministic_sum() {
    use crate::backend::Assembly;
    use crate::physics::builtin::Laplacian;
    let mesh = mesh();
    let backend = backends().remove(1);
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    let mut op = Operator::<f64>::new(Form::new(space, Laplacian).unwrap(), &backend).unwrap();
    let Backend::OpenCl { device, .. } = &backend else {
        unreachable!("backends()[1] is the device")
    };
    let device = device.clone();
    let values = op.space().interpolate(|x, u| u[0] = x[0] * x[0] - x[1]);
    let u = op.vector_from(&values).unwrap();
    let (mut atomic, mut fixed_order) = (op.vector().unwrap(), op.vector().unwrap());
    op.apply(&u, &mut atomic).unwrap();
    let before = device.stats();
    op.set_assembly(Assembly::Deterministic).unwrap();
    let prepared = device.stats();
    assert!(
        prepared.builds > before.builds,
        "no kernel built for the deterministic sum"
    );
    assert!(
        prepared.geometry_bytes > before.geometry_bytes,
        "the node incidence was not uploaded"
    );
    op.apply(&u, &mut fixed_order).unwrap();
    let after = device.stats();
    assert_eq!(
        after.builds, prepared.builds,
        "kernels built in the evaluation"
    );
    assert_eq!(after.geometry_bytes, prepared.geometry_bytes);
    assert_eq!(
        after.cache_hits, prepared.cache_hits,
        "a program looked up (its source generated and hashed) in the evaluation"
    );
    let (a, d) = (atomic.to_host().unwrap(), fixed_order.to_host().unwrap());
    for (x, y) in a.iter().zip(&d) {
        assert!((x - y).abs() < 1e-13, "{x} {y}");
    }
}

/// The Laplacian, counting how often it is asked for its OpenCL source or
/// its source hash.
struct Counting(Arc<std::sync::atomic::AtomicUsize>);

impl crate::physics::Pointwise for Counting {
    fn info(&self) -> &'static crate::physics::PointwiseInfo {
        crate::physics::builtin::Laplacian.info()
    }
    fn opencl_source(&self) -> &'static str {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::physics::builtin::Laplacian.opencl_source()
    }
    fn source_hash(&self) -> u64 {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::physics::builtin::Laplacian.source_hash()
    }
}

impl PointwiseEval<f64> for Counting {
    fn eval(
        &self,
        dim: usize,
        args: &crate::physics::PointArgs<'_, f64>,
        f0: &mut [f64],
        f1: &mut [f64],
    ) -> std::result::Result<(), crate::physics::PointwiseError> {
        crate::physics::builtin::Laplacian.eval(dim, args, f0, f1)
    }
    fn eval_tangent(
        &self,
        dim: usize,
        args: &crate::physics::PointArgs<'_, f64>,
        dir: &crate::physics::Direction<'_, f64>,
        df0: &mut [f64],
        df1: &mut [f64],
    ) -> std::result::Result<(), crate::physics::PointwiseError> {
        crate::physics::builtin::Laplacian.eval_tangent(dim, args, dir, df0, df1)
    }
}

/// A form is bound once: after `Operator::new`, evaluating `F(u)`,
/// `J(u)·v` and the diagonal of `J(u)` (three times each) never asks the
/// physics for its source or its hash again — no kernel case, configuration,
/// shape or source is recomputed per launch — and the values are the
/// Laplacian's: `J·v = F(v)` (linear), the diagonal `∫|∇φ_i|²`, positive.
#[test]
fn a_bound_form_recomputes_no_kernel_per_evaluation() {
    use crate::physics::builtin::Laplacian;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mesh = mesh();
    for backend in backends() {
        let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let form = Form::<f64>::new(space.clone(), Counting(calls.clone())).unwrap();
        let mut op = Operator::new(form, &backend).unwrap();
        let mut reference = Operator::new(Form::new(space, Laplacian).unwrap(), &backend).unwrap();
        let bound = calls.load(Ordering::Relaxed);
        let values = op
            .space()
            .interpolate(|x, u| u[0] = x[0] * x[0] - 2.0 * x[1]);
        let u = op.vector_from(&values).unwrap();
        let (mut r, mut jv, mut d) = (op.vector().unwrap(), op.vector().unwrap(), {
            let n = op.jacobian_diagonal_len();
            op.vector_from(&vec![0.0; n]).unwrap()
        });
        for _ in 0..3 {
            op.apply(&u, &mut r).unwrap();
            op.jacobian_action(&u, &u, &mut jv).unwrap();
            op.jacobian_diagonal(&u, &mut d).unwrap();
        }
        assert_eq!(
            calls.load(Ordering::Relaxed),
            bound,
            "{backend:?}: source or hash asked for per evaluation"
        );
        let mut expected = reference.vector().unwrap();
        reference.apply(&u, &mut expected).unwrap();
        let (r, jv, d) = (
            r.to_host().unwrap(),
            jv.to_host().unwrap(),
            d.to_host().unwrap(),
        );
        let expected = expected.to_host().unwrap();
        assert!(expected.iter().any(|v| v.abs() > 0.1));
        for ((a, b), c) in r.iter().zip(&jv).zip(&expected) {
            assert!(
                (a - c).abs() < 1e-13 && (b - c).abs() < 1e-13,
                "{backend:?}: {a} {b} {c}"
            );
        }
        assert!(d.iter().all(|&x| x > 0.0), "{backend:?}: {d:?}");
    }
}

/// `set_aux`'s values are checked once, by the backend that takes them, with
/// the same messages natively and on the device; a rejected call changes
/// nothing (the field stays unset).
#[test]
fn set_aux_checks_the_values_on_every_backend() {
    let mesh = mesh();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let n_nodes = space.n_nodes();
    let cell = AuxSpace::Cell { n_comp: 1 };
    for backend in backends() {
        let form = Form::<f64>::new(space.clone(), LaplacianCoefficient).unwrap();
        let form = form.with_aux(AuxSpace::Field { n_comp: 1 }).unwrap();
        let mut op = Operator::new(form, &backend).unwrap();
        let e = op.set_aux(&vec![1.0; n_nodes - 1]).unwrap_err().to_string();
        let expected = format!(
            "invalid argument `aux`: expected {n_nodes} entries, got {}",
            n_nodes - 1
        );
        assert_eq!(e, expected, "{backend:?}");
        let mut aux = vec![1.0; n_nodes];
        aux[3] = f64::NAN;
        let e = op.set_aux(&aux).unwrap_err();
        assert!(
            matches!(e, Error::NonFinite { index: 3, .. }),
            "{backend:?}: {e}"
        );
        // nothing was set: evaluating is the unset-field error
        let u = op.vector().unwrap();
        let mut r = op.vector().unwrap();
        let e = op.apply(&u, &mut r).unwrap_err().to_string();
        assert!(e.contains("which was never set"), "{backend:?}: {e}");
        // P0: one value per cell
        let form = Form::<f64>::new(space.clone(), LaplacianCoefficient).unwrap();
        let mut op = Operator::new(form.with_aux(cell).unwrap(), &backend).unwrap();
        let e = op.set_aux(&vec![1.0; n_nodes]).unwrap_err().to_string();
        let n_cells = space.n_cells();
        let expected = format!("invalid argument `aux`: expected {n_cells} entries, got {n_nodes}");
        assert_eq!(e, expected, "{backend:?}");
        op.set_aux(&vec![2.0; n_cells]).unwrap();
    }
}

/// The integrator owns the auxiliary field: after each `set_aux`, the
/// residual (on the backend) and the assembled Jacobian (on the host, from
/// the integrator's cell-local field — natively its own array, on a device
/// a download) read the same, new values. `F(u) = ∫ a₀∇u·∇φ` is linear in
/// `u`, so `J·u = F(u)` for every field `a₀`, and linear in `a₀`, so
/// tripling `a₀` triples both.
#[test]
fn set_aux_reaches_the_residual_and_the_assembled_jacobian() {
    let mesh = mesh();
    for backend in backends() {
        for aux_space in [AuxSpace::Field { n_comp: 1 }, AuxSpace::Cell { n_comp: 1 }] {
            let space =
                FunctionSpace::new(mesh.clone(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
            let form = Form::<f64>::new(space, LaplacianCoefficient)
                .and_then(|f| f.with_aux(aux_space))
                .unwrap();
            let mut op = Operator::new(form, &backend).unwrap();
            let values = op.space().interpolate(|x, u| u[0] = x[0] * x[0] + x[1]);
            let u = op.vector_from(&values).unwrap();
            let e = op.assemble_jacobian(&u).unwrap_err().to_string();
            assert!(e.contains("which was never set"), "{backend:?}: {e}");
            let mut first: Option<Vec<f64>> = None;
            for scale in [1.0, 3.0] {
                let aux: Vec<f64> = (0..op.aux_len())
                    .map(|i| scale * (1.0 + 0.5 * (i as f64).sin()))
                    .collect();
                op.set_aux(&aux).unwrap();
                let mut r = op.vector().unwrap();
                op.apply(&u, &mut r).unwrap();
                let r = r.to_host().unwrap();
                let scale_r = r.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                assert!(scale_r > 0.1, "{backend:?} {aux_space:?}: F(u) = 0");
                let mut ju = vec![0.0; r.len()];
                op.assemble_jacobian(&u)
                    .unwrap()
                    .spmv(&values, &mut ju)
                    .unwrap();
                for (i, (a, b)) in ju.iter().zip(&r).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-12 * scale_r,
                        "{backend:?} {aux_space:?} a₀ × {scale}: (J·u)[{i}] = {a}, F(u)[{i}] = {b}"
                    );
                }
                match &first {
                    None => first = Some(r),
                    Some(r1) => {
                        for (a, b) in r1.iter().zip(&r) {
                            assert!((3.0 * a - b).abs() <= 1e-12 * scale_r, "{backend:?}");
                        }
                    }
                }
            }
        }
    }
}
