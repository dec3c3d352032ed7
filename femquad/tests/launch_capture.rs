//! A captured launch (`Device::start_capture`, what `femquad-bench`'s
//! `ncu_capture` writes for `scripts/ncu-replay.py`) of an operator's
//! residual holds the residual: the integration kernel's one changed buffer
//! is `F(u)`, byte for byte.
//!
//! Runs on the tests' device ([`femquad::opencl::testing`]; PoCL in CI).

use std::sync::Arc;

use femquad::opencl::CapturedArg;
use femquad::opencl::testing::{device, options};
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;

fn bytes<T: bytemuck::NoUninit>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// Capturing an operator's residual: the integration kernel's output
/// buffer after the launch holds `F(u)` (read back the usual way).
#[test]
fn a_captured_residual_holds_f_of_u() {
    let d = device();
    let mesh = Arc::new(femquad::mesh::unit_square(4, &MeshOptions::default()).unwrap());
    let space = FunctionSpace::new(mesh, Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let backend = Backend::opencl_with(d.clone(), options());
    let form = Form::new(space, Laplacian).unwrap();
    let mut op = Operator::<f64>::new(form, &backend).unwrap();
    let values: Vec<f64> = (0..op.space().n_dofs())
        .map(|i| (i as f64 * 0.7).sin())
        .collect();
    let u = op.vector_from(&values).unwrap();
    let mut f = op.vector().unwrap();
    d.start_capture();
    op.apply(&u, &mut f).unwrap();
    let captures = d.take_captures();
    let want = bytes(&f.to_host().unwrap());
    let integrate: Vec<_> = captures
        .iter()
        .filter(|c| c.kernel == "integrate")
        .collect();
    assert_eq!(integrate.len(), 1);
    let changed: Vec<&Vec<u8>> = integrate[0]
        .args
        .iter()
        .filter_map(|a| match a {
            CapturedArg::Buffer { before, after, .. } if before != after => Some(after),
            _ => None,
        })
        .collect();
    assert_eq!(changed, vec![&want]);
}
