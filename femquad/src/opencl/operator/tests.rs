//! The operator's kernels against the native reference, on the tests' device
//! with the tests' kernel options ([`crate::opencl::testing`]: `FEMQUAD_DEVICE`,
//! PoCL in CI; no tuning cache, so every launch here has the configuration
//! the test asks for, or the device default where none is given):
//!
//! * [`every_mode`]: `F(u)` and `J(u)·v` of every physics in both assembly
//!   modes and both geometry modes, and the element kernel (BK), on meshes
//!   of several work-groups, of less than one and of exactly one;
//! * [`launch_configs`]: launch configurations (threads per cell, prefetch)
//!   and the tuning cache, which the default options never read;
//! * [`deterministic`]: the deterministic assembly is the fixed-order sum
//!   of the device's own element vectors that its kernel promises.
//!
//! Every cell is shown integrated by the device itself: the element-vector
//! buffer is filled with NaN before a launch, and a cell the kernel skipped
//! would leave NaN in the result (which [`rel_diff`] never lets pass).

mod deterministic;
mod every_mode;
mod launch_configs;
mod physics;

use std::sync::Arc;

use super::*;
use crate::aux_space::AuxSpace;
use crate::discretization::CellInputs;
use crate::element::Element;
use crate::mesh::Mesh;
use crate::mesh::generate::{MeshOptions, unit_box};
use crate::native::{
    Execution, element_vectors as native_element_vectors, tangent_element_vectors,
};
use crate::opencl::DeviceVector;
use crate::opencl::testing::{device, options};
use crate::physics::builtin::LaplacianCoefficient;
use crate::physics::{EvalPrecision, PointwiseEvalBoth};
use crate::quadrature::Quadrature;
use crate::real::convert_slice;
use crate::rng::Rng;
use crate::seam::Integrate;

fn mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 21,
    };
    Arc::new(unit_box(dim, n, &opts).unwrap())
}

/// [`mesh`] in the generator's numbering (row by row, not shuffled): a
/// work-group's cells are compact (a few rows), so from a chunk of about
/// two rows on, groups fit their patch capacities (at smaller chunks some
/// do and some do not); on the shuffled [`mesh`] almost none does.
fn patch_mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: false,
        seed: 21,
    };
    Arc::new(unit_box(dim, n, &opts).unwrap())
}

/// Max-norm relative difference `‖a − b‖∞ / ‖b‖∞`; infinite if an entry of
/// either is not finite (a NaN never passes a tolerance), or the lengths
/// differ.
fn rel_diff<R: Real>(a: &[R], b: &[R]) -> f64 {
    let finite = |v: &[R]| v.iter().all(|x| x.to_f64().is_finite());
    if a.len() != b.len() || !finite(a) || !finite(b) {
        return f64::INFINITY;
    }
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.to_f64() - y.to_f64()).abs())
        .fold(0.0, f64::max);
    let den = b.iter().map(|y| y.to_f64().abs()).fold(0.0, f64::max);
    num / den
}

/// One physics on one mesh.
struct Case {
    dim: usize,
    order: usize,
    n: usize,
    physics: &'static dyn PointwiseEvalBoth,
    aux: AuxSpace,
    constants: Vec<f64>,
    degree: usize,
}

/// Everything both paths need for one case: `u` and the direction `v` of a
/// Jacobian action.
struct Setup<R: Real> {
    space: FunctionSpace,
    disc: Discretization<R>,
    u: Vec<R>,
    v: Vec<R>,
    aux: Vec<R>,
    constants: Vec<R>,
}

fn setup<R: Real>(case: &Case) -> Setup<R> {
    setup_on(case, mesh(case.dim, case.n))
}

/// [`setup`] on `mesh` (a unit box of `case`'s dimension).
fn setup_on<R: Real>(case: &Case, mesh: Arc<Mesh>) -> Setup<R> {
    let n_comp = case.physics.info().n_comp.resolve(case.dim);
    let element = Element::lagrange(case.dim, case.order).unwrap();
    let space = FunctionSpace::new(mesh.clone(), element, n_comp).unwrap();
    let quad = Quadrature::simplex(case.dim, case.degree).unwrap();
    let disc = Discretization::<R>::new(&space, quad, case.aux).unwrap();
    let mut rng = Rng::new(case.dim as u64 * 100 + case.order as u64 + case.n as u64);
    let u = convert_slice(&rng.vec(space.n_dofs(), -1.0, 1.0));
    let v = convert_slice(&rng.vec(space.n_dofs(), -1.0, 1.0));
    let aux_len = match case.aux {
        AuxSpace::None => 0,
        AuxSpace::Field { n_comp } => space.n_nodes() * n_comp,
        AuxSpace::Cell { n_comp } => space.n_cells() * n_comp,
    };
    let aux = convert_slice(&rng.vec(aux_len, 0.5, 2.0));
    Setup {
        constants: convert_slice(&case.constants),
        space,
        disc,
        u,
        v,
        aux,
    }
}

/// The cell-local values of the global vector `global` and the aux of a setup.
fn cell_inputs<R: Real>(s: &Setup<R>, global: &[R]) -> (Vec<R>, Vec<R>) {
    let mut u = vec![R::ZERO; s.space.n_cell_dofs()];
    s.space.gather(global, &mut u).unwrap();
    let aux = match s.disc.aux() {
        AuxSpace::Field { n_comp } => {
            let aux_space = s.space.with_n_comp(n_comp).unwrap();
            let mut cells = vec![R::ZERO; s.space.n_cells() * s.disc.aux_per_cell()];
            aux_space.gather(&s.aux, &mut cells).unwrap();
            cells
        }
        _ => s.aux.clone(),
    };
    (u, aux)
}

/// What a global launch computes: the residual `F(u)` or the Jacobian
/// action `J(u)·v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Residual,
    JacobianAction,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Residual => "F(u)",
            Action::JacobianAction => "J(u)·v",
        }
    }
}

/// The native `F(u)` or `J(u)·v`: gather, native (tangent) element vectors,
/// assembly.
fn native_global<R: EvalPrecision>(
    s: &Setup<R>,
    physics: &dyn PointwiseEvalBoth,
    action: Action,
) -> Vec<R> {
    let native = R::physics(physics);
    let (u, aux) = cell_inputs(s, &s.u);
    let inputs = CellInputs {
        u: &u,
        aux: &aux,
        constants: &s.constants,
        time: None,
    };
    let mut ev = vec![R::ZERO; u.len()];
    match action {
        Action::Residual => {
            native_element_vectors(&s.disc, native, &inputs, &mut ev, Execution::Serial)
        }
        Action::JacobianAction => {
            let (v, _) = cell_inputs(s, &s.v);
            tangent_element_vectors(&s.disc, native, &inputs, &v, &mut ev, Execution::Serial)
        }
    }
    .unwrap();
    let mut out = vec![R::ZERO; s.space.n_dofs()];
    s.space.assemble(&ev, &mut out).unwrap();
    out
}

/// The setup's `physics` bound on the device with `assembly`, its aux
/// field set.
fn operator<R: EvalPrecision>(
    device: &Arc<Device>,
    s: &Setup<R>,
    physics: &'static dyn PointwiseEvalBoth,
    assembly: Assembly,
) -> OpenClIntegrator<R> {
    let op = OpenClOperator::new(device.clone(), options(), &s.space, s.disc.clone()).unwrap();
    let physics = Arc::new(R::physics(physics));
    let mut op = OpenClIntegrator::new(op, physics, &s.constants, assembly).unwrap();
    if !s.aux.is_empty() {
        op.set_aux(&s.aux).unwrap();
    }
    op
}

/// The kernel variant of `action` with the bound assembly.
fn global_variant<R: Real>(op: &OpenClIntegrator<R>, action: Action) -> KernelVariant {
    match action {
        Action::Residual => op.residual_variant(),
        Action::JacobianAction => op.jacobian_action_variant(),
    }
}

/// `config` for the kernel `variant`, checked against the device: a
/// configuration the device cannot run fails the test (naming the device
/// limit), it is never swapped for another.
fn runnable<R: Real>(
    op: &OpenClIntegrator<R>,
    variant: KernelVariant,
    config: LaunchConfig,
) -> LaunchConfig {
    if let Err(e) = op.shape(variant, config) {
        panic!(
            "{} {variant:?} {config}: this configuration cannot run on `{}`: {e}",
            op.case().physics.name,
            op.device().info().name
        );
    }
    config
}

/// `config` with its blocks per batch `N_bl` halved until the kernel
/// `variant` fits the device's work-group size and local memory — and if
/// one block is still too large (large elements: a block holds
/// `lcm(N_q, N_bt)/gcd(·, N_tc)` cells), with more threads per cell
/// `N_tc` (from the device default's on), halving again: the tests'
/// configurations are chosen from the device's limits up front (an H100
/// has 1024 work-items and 48 KiB of local memory a group, PoCL more), and
/// [`runnable`] then holds them to it. Any other error fails the test.
pub(super) fn fitted<R: Real>(
    op: &OpenClIntegrator<R>,
    variant: KernelVariant,
    config: LaunchConfig,
) -> LaunchConfig {
    let default_tc = op.config(variant).map_or(config.n_tc, |d| d.n_tc);
    let threads = std::iter::once(config.n_tc).chain(default_tc.max(config.n_tc + 1)..=64);
    for n_tc in threads {
        let mut n_bl = config.n_bl;
        loop {
            let c = LaunchConfig {
                n_bl,
                n_tc,
                ..config
            };
            match op.shape(variant, c) {
                Ok(_) => return c,
                Err(Error::DeviceLimit { .. }) if n_bl > 1 => n_bl /= 2,
                Err(Error::DeviceLimit { .. }) => break,
                // an N_tc the shape refuses (not the test's own): the next
                Err(_) if n_tc != config.n_tc => break,
                Err(e) => panic!("{variant:?} {config}: {e}"),
            }
        }
    }
    panic!(
        "{variant:?} {config}: no N_bl ≤ {} with N_tc ≤ 64 fits the device",
        config.n_bl
    )
}

/// Checks that the last launch ran `config`, the configuration asked for.
fn launched<R: Real>(op: &OpenClIntegrator<R>, config: LaunchConfig) {
    let rec = op.last_run().launch().expect("a launch");
    assert_eq!(rec.config, config, "launched {rec:?}, asked for {config}");
}

/// Fills the operator's element-vector buffer (cells and padding) with NaN,
/// so that an element vector the device does not write stays NaN.
fn poison_element_vectors<R: Real>(op: &mut OpenClIntegrator<R>) {
    let op = &mut op.op;
    op.element_vectors_buffer().unwrap();
    let len = (op.disc.n_cells() + CELL_PADDING) * op.disc.n_bt();
    let buffer = op.data.element_vectors.as_mut().unwrap();
    // SAFETY: the buffer holds `len` values (element_vectors_buffer).
    let fill = unsafe {
        op.device.queue().enqueue_fill_buffer(
            buffer,
            &[R::from_f64(f64::NAN)],
            0,
            len * std::mem::size_of::<R>(),
            &[],
        )
    }
    .unwrap();
    fill.wait().unwrap();
}

/// The first `cells` cells' entries of the operator's element-vector buffer.
fn device_element_vectors<R: Real>(op: &OpenClIntegrator<R>, cells: usize) -> Vec<R> {
    let op = &op.op;
    let buffer = op.data.element_vectors.as_ref().expect("element vectors");
    let mut out = vec![R::ZERO; cells * op.disc.n_bt()];
    op.device.read(buffer, &mut out, "element vectors").unwrap();
    out
}

/// `F(u)` or `J(u)·v` on the device with the bound assembly and `config`
/// (`None`: the bound one), the element-vector buffer NaN-filled first.
fn device_global<R: Real>(
    op: &mut OpenClIntegrator<R>,
    s: &Setup<R>,
    action: Action,
    config: Option<LaunchConfig>,
) -> Vec<R> {
    let device = op.device().clone();
    let n = s.space.n_dofs();
    let u = DeviceVector::<R>::from_host(&device, &s.u).unwrap();
    let v = DeviceVector::<R>::from_host(&device, &s.v).unwrap();
    let mut out = DeviceVector::<R>::from_host(&device, &vec![R::from_f64(f64::NAN); n]).unwrap();
    if let Some(c) = config {
        op.set_config(global_variant(op, action), c).unwrap();
    }
    poison_element_vectors(op);
    match action {
        Action::Residual => op.residual(&u, &mut out),
        Action::JacobianAction => op.jacobian_action(&u, &v, &mut out),
    }
    .unwrap();
    out.to_host().unwrap()
}

/// The element kernel's element vectors of `u` against the native ones,
/// launched with `config` (the device buffer NaN-filled first).
fn check_element_kernel<R: EvalPrecision>(
    op: &mut OpenClIntegrator<R>,
    s: &Setup<R>,
    physics: &dyn PointwiseEvalBoth,
    config: LaunchConfig,
    tol: f64,
) {
    let (u, aux) = cell_inputs(s, &s.u);
    let inputs = CellInputs {
        u: &u,
        aux: &aux,
        constants: &s.constants,
        time: None,
    };
    let mut reference = vec![R::ZERO; u.len()];
    native_element_vectors(
        &s.disc,
        R::physics(physics),
        &inputs,
        &mut reference,
        Execution::Serial,
    )
    .unwrap();
    let c = runnable(op, KernelVariant::Element, config);
    op.set_config(KernelVariant::Element, c).unwrap();
    poison_element_vectors(op);
    let mut out = vec![R::from_f64(f64::NAN); u.len()];
    op.set_cell_inputs(&inputs).unwrap();
    op.integrate_cells().unwrap();
    op.read_element_vectors(&mut out).unwrap();
    launched(op, c);
    let d = rel_diff(&out, &reference);
    assert!(
        d <= tol,
        "element kernel {c}: relative difference {d:e} > {tol:e}"
    );
}

/// The operator keeps the space's cell → node map, not a copy of it: the
/// host holds one map, which the upload reads.
#[test]
fn the_operator_shares_the_spaces_node_map() {
    let case = Case {
        dim: 3,
        order: 2,
        n: 2,
        physics: &LaplacianCoefficient,
        aux: AuxSpace::None,
        constants: vec![],
        degree: 2,
    };
    let s = setup::<f64>(&case);
    let op = OpenClOperator::new(device(), options(), &s.space, s.disc.clone()).unwrap();
    assert!(std::ptr::eq(
        op.mesh.space().cell_nodes_all(),
        s.space.cell_nodes_all()
    ));
    assert!(Arc::ptr_eq(op.mesh.space().mesh(), s.space.mesh()));
}

#[test]
fn an_unset_aux_field_is_an_error() {
    let device = device();
    let case = Case {
        dim: 2,
        order: 1,
        n: 4,
        physics: &LaplacianCoefficient,
        aux: AuxSpace::Field { n_comp: 1 },
        constants: vec![],
        degree: 2,
    };
    let s = setup::<f64>(&case);
    let op = OpenClOperator::new(device.clone(), options(), &s.space, s.disc.clone()).unwrap();
    let physics = Arc::new(LaplacianCoefficient);
    let mut op = OpenClIntegrator::new(op, physics, &[], Assembly::Atomic).unwrap();
    let n = s.space.n_dofs();
    let u = DeviceVector::<f64>::zeros(&device, n).unwrap();
    let mut r = DeviceVector::<f64>::zeros(&device, n).unwrap();
    let e = op.residual(&u, &mut r).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `aux`: the physics `{}` reads an auxiliary field, which was \
             never set: call set_aux first (Operator::set_aux; DirichletProblem::set_aux sets \
             it on every multigrid level too); an unset field is not read as zeros",
            LaplacianCoefficient.info().name
        )
    );
}

/// The bound form's order of calls: a kernel variant it did not bind (the
/// other assembly's residual and Jacobian action), element vectors before the element kernel ran (or after a
/// deterministic residual overwrote its buffer), the element kernel before
/// its inputs: each an error saying what to do, never a launch on stand-in
/// buffers or stale values.
#[test]
fn calls_out_of_order_are_errors_naming_what_to_call() {
    let device = device();
    let case = Case {
        dim: 2,
        order: 1,
        n: 4,
        physics: &crate::physics::builtin::Poisson,
        aux: AuxSpace::None,
        constants: vec![2.5],
        degree: 2,
    };
    let s = setup::<f64>(&case);
    let mut op = operator(&device, &s, case.physics, Assembly::Deterministic);
    let mut out = vec![0.0; s.space.n_cell_dofs()];
    let e = op.integrate_cells().unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid argument `inputs`: no cell-local inputs on the device: call \
         OpenClIntegrator::set_cell_inputs first"
    );
    let e = op.read_element_vectors(&mut out).unwrap_err().to_string();
    let not_run = "invalid argument `out`: no element vectors of the element kernel on the \
                   device: call OpenClIntegrator::integrate_cells first";
    assert_eq!(e, not_run);
    // the element kernel, then a deterministic residual in its buffer
    let (u_cells, aux) = cell_inputs(&s, &s.u);
    // the kernel evaluates with the bound constants: others are refused
    let other = CellInputs {
        u: &u_cells,
        aux: &aux,
        constants: &[1.0],
        time: None,
    };
    assert_eq!(
        op.set_cell_inputs(&other).unwrap_err().to_string(),
        "invalid argument `constants`: the kernels evaluate with the bound constants [2.5], not \
         [1.0]: bind a form with these (Form::with_constants) or change them with \
         Operator::set_constants"
    );
    let inputs = CellInputs {
        u: &u_cells,
        aux: &aux,
        constants: &s.constants,
        time: None,
    };
    op.set_cell_inputs(&inputs).unwrap();
    op.integrate_cells().unwrap();
    op.read_element_vectors(&mut out).unwrap();
    let mut reference = vec![0.0; out.len()];
    native_element_vectors(
        &s.disc,
        &crate::physics::builtin::Poisson,
        &inputs,
        &mut reference,
        Execution::Serial,
    )
    .unwrap();
    assert!(rel_diff(&out, &reference) <= 1e-12);
    device_global(&mut op, &s, Action::Residual, None);
    let e = op.read_element_vectors(&mut out).unwrap_err().to_string();
    assert_eq!(e, not_run);
    // the atomic assembly's kernels are not bound
    let atomic = Assembly::Atomic.output(device.info());
    let variants = [
        KernelVariant::Residual(atomic),
        KernelVariant::JacobianAction(atomic),
    ];
    for variant in variants {
        let e = op.config(variant).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "invalid argument `variant`: {variant:?} is not a kernel of this bound form (its \
                 element kernel, F(u) and J(u)·v with the deterministic assembly): set the \
                 assembly first"
            )
        );
        let config = LaunchConfig::new(1, 1);
        assert_eq!(op.set_config(variant, config).unwrap_err().to_string(), e);
    }
}
