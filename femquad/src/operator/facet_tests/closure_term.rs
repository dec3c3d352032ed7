//! For the facet tests: a boundary integral `∫_S φ_i f0 ds` of a closure
//! `f0(x, n, u, ∇u)`, computed as what a user gets — `F(u)` of a form bound
//! on the native operator, with a zero cell physics and one boundary term.

use crate::backend::Backend;
use crate::form::Form;
use crate::operator::Operator;
use crate::physics::{
    Extent, PointArgs, Pointwise, PointwiseError, PointwiseEval, PointwiseInfo, Reads,
};
use crate::space::FunctionSpace;
use crate::{Result, pointwise};

use crate::facet::{BoundaryTerm, FacetQuadrature, FacetSet};

/// `f0(x, n, u, grad_u, out)`: `x`, `n` (`dim`), `u` (`N_comp`), `grad_u`
/// (`N_comp·dim`, [`crate::layout::point_grad`]); `out` (`N_comp`) is
/// zeroed before each call.
pub(super) type F0 = dyn Fn(&[f64], &[f64], &[f64], &[f64], &mut [f64]) + Send + Sync;

/// A boundary physics from a closure, in `f64` and natively only (its
/// OpenCL source is empty: a device binding would fail to build it).
struct ClosureF0 {
    f0: Box<F0>,
    info: &'static PointwiseInfo,
}

const fn closure_info(n_comp: Extent) -> PointwiseInfo {
    PointwiseInfo {
        name: "closure_f0",
        opencl_name: "closure_f0",
        dims: &[2, 3],
        n_comp,
        n_aux: Extent::Fixed(0),
        n_constants: 0,
        has_f0: true,
        has_f1: false,
        reads: Reads {
            u: true,
            grad_u: true,
            a: false,
            grad_a: false,
            x: true,
            constants: false,
            n: true,
            u_t: false,
            t: false,
        },
        flops: [0, 0],
        opencl_tangent_name: "",
        opencl_jacobian_name: "",
        opencl_jacobian_u_t_name: "",
        tangent_flops: [0, 0],
        jacobian_flops: [0, 0],
        linear: false,
    }
}

static SCALAR: PointwiseInfo = closure_info(Extent::Fixed(1));
static VECTOR: PointwiseInfo = closure_info(Extent::Dim);

impl Pointwise for ClosureF0 {
    fn info(&self) -> &'static PointwiseInfo {
        self.info
    }
    fn opencl_source(&self) -> &'static str {
        ""
    }
    fn source_hash(&self) -> u64 {
        crate::physics::source_hash("")
    }
}

impl PointwiseEval<f64> for ClosureF0 {
    fn eval(
        &self,
        _dim: usize,
        args: &PointArgs<'_, f64>,
        f0: &mut [f64],
        _f1: &mut [f64],
    ) -> std::result::Result<(), PointwiseError> {
        (self.f0)(args.x, args.n, args.u, args.grad_u, f0);
        Ok(())
    }
}

/// No cell term: `f0 = 0` for a scalar field.
#[pointwise]
fn no_cell_term(f0: &mut [f64; 1]) {
    f0[0] = 0.0;
}

/// No cell term: `f0 = 0` for a vector field.
#[pointwise]
fn no_cell_term_vector<const D: usize>(f0: &mut [f64; D]) {
    for c in 0..D {
        f0[c] = 0.0;
    }
}

/// `F_i = Σ_{F ∈ set} ∫_F φ_i f0(x, n, u, ∇u) ds` for every dof `i` of
/// `space` (scalar, or with `dim` components), with the facet rule
/// `quadrature`: `F(u)` of the form with no cell term and the boundary term
/// `f0` on `set`, bound on the native operator.
///
/// # Errors
/// Those of [`Form::with_boundary`], [`Operator::vector_from`] and
/// [`Operator::apply`] (the bad input of a boundary integral).
pub(super) fn boundary_integral(
    space: &FunctionSpace,
    set: FacetSet,
    quadrature: FacetQuadrature,
    u: &[f64],
    f0: impl Fn(&[f64], &[f64], &[f64], &[f64], &mut [f64]) + Send + Sync + 'static,
) -> Result<Vec<f64>> {
    let vector = space.n_comp() != 1;
    let physics = ClosureF0 {
        f0: Box::new(f0),
        info: if vector { &VECTOR } else { &SCALAR },
    };
    let term = BoundaryTerm::new(set, physics)?.with_quadrature(quadrature)?;
    let form = if vector {
        Form::new(space.clone(), NoCellTermVector)?
    } else {
        Form::new(space.clone(), NoCellTerm)?
    };
    let mut op = Operator::<f64>::new(form.with_boundary(term)?, &Backend::native())?;
    let u = op.vector_from(u)?;
    let mut r = op.vector()?;
    op.apply(&u, &mut r)?;
    r.to_host()
}
