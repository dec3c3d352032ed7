//! Shared by the integration tests that bind a physics: the operator of a
//! physics on a Lagrange space, with the form's defaults (the element's
//! default quadrature).

use std::sync::Arc;

use femquad::opencl::Device;
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use femquad::prelude::*;

/// The tests' OpenCL backend on `device` ([`femquad::opencl::testing::options`]:
/// no tuning cache).
#[allow(dead_code)] // not every test crate including this module uses it
pub fn device_backend(device: &Arc<Device>) -> Backend {
    Backend::opencl_with(device.clone(), femquad::opencl::testing::options())
}

/// The operator of `physics` (with `constants`, auxiliary field `aux`) on
/// the Lagrange space of `order` with `n_comp` components on `mesh`, in
/// precision `R`, on `backend`.
pub fn operator<R: EvalPrecision>(
    mesh: &Arc<Mesh>,
    order: usize,
    n_comp: usize,
    aux: AuxSpace,
    physics: &'static dyn PointwiseEvalBoth,
    constants: &[f64],
    backend: &Backend,
) -> Operator<R> {
    let element = Element::lagrange(mesh.dim(), order).unwrap();
    let space = FunctionSpace::new(mesh.clone(), element, n_comp).unwrap();
    let form = Form::new(space, R::physics(physics))
        .and_then(|f| f.with_aux(aux))
        .and_then(|f| f.with_constants(constants))
        .unwrap();
    Operator::new(form, backend).unwrap()
}
