//! A form's physics bound on the device ([`OpenClIntegrator`]): its kernels
//! (the residual's, the Jacobian action's and the diagonal's) built and
//! their configurations resolved once, the mesh data, constants and
//! auxiliary field uploaded; an evaluation is then a launch only.

use std::sync::Arc;

use opencl3::kernel::Kernel;

use super::{Assembly, KernelKey, OpenClOperator};
use crate::opencl::DeviceVector;
use crate::physics::PointwiseEval;
use crate::seam::Integrate;
use crate::{Real, Result};

/// The kernels of one physics and assembly on one operator.
struct BoundKernels {
    assembly: Assembly,
    residual: KernelKey,
    /// The Jacobian action's and the diagonal's, for a physics with derivatives.
    tangent: Option<(KernelKey, Kernel)>,
}

/// A form's physics bound on an OpenCL operator ([`Integrate`] for device
/// vectors): what a launch needs — kernels, launch configurations, shapes,
/// geometry — is resolved when it is bound, not per call.
pub struct OpenClIntegrator<R: Real> {
    op: OpenClOperator<R>,
    physics: Arc<dyn PointwiseEval<R>>,
    kernels: BoundKernels,
}

impl<R: Real> OpenClIntegrator<R> {
    /// Binds `physics` with `constants` on `op` with `assembly`: checks
    /// that the physics fits the discretization, builds its kernels and
    /// uploads the constants and the mesh data the kernels read.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `physics` or `constants`
    /// if they do not fit the discretization; build failures, device memory.
    pub fn new(
        mut op: OpenClOperator<R>,
        physics: Arc<dyn PointwiseEval<R>>,
        constants: &[R],
        assembly: Assembly,
    ) -> Result<Self> {
        op.discretization()
            .check_physics(&*physics, constants.len())?;
        crate::real::check_finite("constants", constants)?;
        op.upload_constants(constants)?;
        let kernels = bind(&mut op, &*physics, assembly)?;
        Ok(OpenClIntegrator {
            op,
            physics,
            kernels,
        })
    }

    /// The OpenCL operator (for backend-specific queries: launch records,
    /// sources).
    pub fn operator(&mut self) -> &mut OpenClOperator<R> {
        &mut self.op
    }

    /// The discretization.
    pub fn discretization(&self) -> &crate::discretization::Discretization<R> {
        self.op.discretization()
    }

    /// The device.
    pub fn device(&self) -> &Arc<crate::opencl::Device> {
        self.op.device()
    }

    /// The kernel switches.
    pub fn options(&self) -> &crate::opencl::KernelOptions {
        self.op.options()
    }

    /// How element vectors are summed.
    pub fn assembly(&self) -> Assembly {
        self.kernels.assembly
    }

    /// Sums element vectors by `assembly` from now on, with its kernels
    /// built now.
    ///
    /// # Errors
    /// Build failures, device memory.
    pub fn set_assembly(&mut self, assembly: Assembly) -> Result<()> {
        if assembly != self.kernels.assembly {
            self.kernels = bind(&mut self.op, &*self.physics, assembly)?;
        }
        Ok(())
    }

    /// The tangent kernels, or the error of a physics without derivatives.
    fn tangent(&self) -> Result<&(KernelKey, Kernel)> {
        self.kernels
            .tangent
            .as_ref()
            .ok_or_else(|| no_derivatives(&*self.physics))
    }
}

/// The error of a Jacobian asked of `physics`, which has no derivatives.
fn no_derivatives<R: Real>(physics: &dyn PointwiseEval<R>) -> crate::Error {
    crate::physics::PointwiseError::NoDerivatives {
        physics: physics.info().name,
    }
    .into()
}

/// Builds the kernels of `physics` with `assembly` on `op` and uploads what
/// they read (geometry, node windows, incidence).
fn bind<R: Real>(
    op: &mut OpenClOperator<R>,
    physics: &dyn PointwiseEval<R>,
    assembly: Assembly,
) -> Result<BoundKernels> {
    op.prepare(physics, assembly)?;
    let residual = op.compile(physics, op.residual_variant(assembly), None)?;
    let tangent = if physics.info().opencl_tangent_name.is_empty() {
        None
    } else {
        let action = op.compile(physics, op.jacobian_action_variant(assembly), None)?;
        Some((action, op.diagonal_kernel(physics)?))
    };
    Ok(BoundKernels {
        assembly,
        residual,
        tangent,
    })
}

impl<R: Real> Integrate<R> for OpenClIntegrator<R> {
    type Vector = DeviceVector<R>;

    fn residual(&mut self, u: &DeviceVector<R>, r: &mut DeviceVector<R>) -> Result<()> {
        let (key, assembly) = (self.kernels.residual, self.kernels.assembly);
        self.op.enqueue_global(&key, u, None, r, assembly)
    }

    fn jacobian_action(
        &mut self,
        u: &DeviceVector<R>,
        v: &DeviceVector<R>,
        out: &mut DeviceVector<R>,
    ) -> Result<()> {
        let key = self.tangent()?.0;
        let assembly = self.kernels.assembly;
        self.op.enqueue_global(&key, u, Some(v), out, assembly)
    }

    fn jacobian_diagonal(&mut self, u: &DeviceVector<R>, out: &mut DeviceVector<R>) -> Result<()> {
        let Some((_, kernel)) = &self.kernels.tangent else {
            return Err(no_derivatives(&*self.physics));
        };
        self.op.enqueue_diagonal(kernel, u, out)
    }

    fn set_constants(&mut self, constants: &[R]) -> Result<()> {
        self.op.upload_constants(constants)
    }

    fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        self.op.set_aux(aux)
    }
}
