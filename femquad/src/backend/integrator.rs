//! The operator's integrator on whichever backend it was bound
//! ([`Integrator`]): every method one `match` over the backends, and the
//! one place where vectors living elsewhere than the integrator are an
//! error.

use std::borrow::Cow;
use std::sync::Arc;

use super::{Location, Vector};
use crate::discretization::{CellInputs, Discretization};
use crate::form::Form;
use crate::native::{BoundaryIntegrals, Execution, NativeIntegrator, point_block_diagonal};
use crate::opencl::{Assembly, DeviceVector, OpenClIntegrator, OpenClOperator};
use crate::physics::PointwiseEval;
use crate::seam::Integrate;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

use super::Backend;

/// A form bound on a backend ([`Backend::bind`]): the native integrator or
/// the OpenCL one, evaluating `F(u)`, `J(u)·v` and the point-block
/// diagonal of `J(u)` on [`Vector`]s that live where it does.
pub enum Integrator<R: Real> {
    /// On the host.
    Native(Box<NativeIntegrator<R>>),
    /// On an OpenCL device.
    OpenCl(Box<OpenClIntegrator<R>>),
}

impl Backend {
    /// Binds `form` here, with `boundary` its boundary terms prepared on
    /// the host ([`BoundaryIntegrals::new`]): its discretization built, and
    /// on a device its kernels built and the mesh data, constants and
    /// [`Assembly::default`] kernels prepared.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `physics` or `constants` if they do
    /// not fit the discretization; device errors (no fp64 for `f64`, a
    /// build failure, memory).
    pub fn bind<R: Real>(
        &self,
        form: &Form<R>,
        boundary: &Arc<BoundaryIntegrals<R>>,
    ) -> Result<Integrator<R>> {
        let space = form.space();
        let physics = form.shared_physics();
        // the cell coordinates only for a physics that reads x
        let disc = if physics.info().reads.x {
            Discretization::new(space, form.quadrature().clone(), form.aux())?
        } else {
            Discretization::without_coordinates(space, form.quadrature().clone(), form.aux())?
        };
        Ok(match self {
            Backend::Native(execution) => Integrator::Native(Box::new(NativeIntegrator::new(
                space,
                disc,
                physics,
                Arc::clone(boundary),
                form.constants(),
                *execution,
            )?)),
            Backend::OpenCl { device, options } => {
                let op = OpenClOperator::new(device.clone(), options.clone(), space, disc)?;
                let bound =
                    OpenClIntegrator::new(op, physics, form.constants(), Assembly::default())?
                        .with_boundary(boundary)?;
                Integrator::OpenCl(Box::new(bound))
            }
        })
    }
}

impl<R: Real> Integrator<R> {
    /// `r = F(u)`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `u` if the vectors do not live
    /// where the integrator does; those of [`Integrate::residual`].
    pub fn residual(&mut self, u: &Vector<R>, r: &mut Vector<R>) -> Result<()> {
        match (self, u, r) {
            (Integrator::Native(n), Vector::Host(u), Vector::Host(r)) => n.residual(u, r),
            (Integrator::OpenCl(d), Vector::Device(u), Vector::Device(r)) => d.residual(u, r),
            _ => Err(misplaced()),
        }
    }

    /// `out = J(u)·v`.
    ///
    /// # Errors
    /// As [`Integrator::residual`]; a physics without derivatives.
    pub fn jacobian_action(
        &mut self,
        u: &Vector<R>,
        v: &Vector<R>,
        out: &mut Vector<R>,
    ) -> Result<()> {
        match (self, u, v, out) {
            (Integrator::Native(n), Vector::Host(u), Vector::Host(v), Vector::Host(out)) => {
                n.jacobian_action(u, v, out)
            }
            (Integrator::OpenCl(d), Vector::Device(u), Vector::Device(v), Vector::Device(out)) => {
                d.jacobian_action(u, v, out)
            }
            _ => Err(misplaced()),
        }
    }

    /// `out` = the point-block diagonal of `J(u)` (NaN and ±∞ kept).
    ///
    /// # Errors
    /// As [`Integrator::jacobian_action`].
    pub fn jacobian_diagonal(&mut self, u: &Vector<R>, out: &mut Vector<R>) -> Result<()> {
        match (self, u, out) {
            (Integrator::Native(n), Vector::Host(u), Vector::Host(out)) => {
                n.jacobian_diagonal(u, out)
            }
            (Integrator::OpenCl(d), Vector::Device(u), Vector::Device(out)) => {
                d.jacobian_diagonal(u, out)
            }
            _ => Err(misplaced()),
        }
    }

    /// Binds the time state `t`, `u_t = σ·u + b` (`b` checked by the
    /// caller), or unbinds it (`None`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `b` if it does not live where the
    /// integrator does; those of [`Integrate::set_time`] (the OpenCL
    /// backend refuses a time state).
    pub fn set_time(&mut self, time: Option<(R, R, &Vector<R>)>) -> Result<()> {
        match (self, time) {
            (Integrator::Native(n), None) => n.set_time(None),
            (Integrator::OpenCl(d), None) => d.set_time(None),
            (Integrator::Native(n), Some((t, s, Vector::Host(b)))) => n.set_time(Some((t, s, b))),
            (Integrator::OpenCl(d), Some((t, s, Vector::Device(b)))) => d.set_time(Some((t, s, b))),
            _ => Err(misplaced()),
        }
    }

    /// Replaces the constants (checked by the caller). The form holds
    /// them; only [`Operator::set_constants`](crate::operator::Operator::set_constants)
    /// writes them, here after the form, so that the two never differ.
    ///
    /// # Errors
    /// Device errors (the upload).
    pub(crate) fn set_constants(&mut self, constants: &[R]) -> Result<()> {
        match self {
            Integrator::Native(n) => n.set_constants(constants),
            Integrator::OpenCl(d) => d.set_constants(constants),
        }
    }

    /// Replaces the auxiliary field's global values, checked by the backend
    /// (length and finiteness), which owns them and whether they were set.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `aux` (length, a form without
    /// auxiliary field), [`Error::NonFinite`] with the index; device errors
    /// (the upload).
    pub fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        match self {
            Integrator::Native(n) => n.set_aux(aux),
            Integrator::OpenCl(d) => d.set_aux(aux),
        }
    }

    /// The auxiliary field cell-local on the host ([`Integrate::cell_aux`]:
    /// natively the integrator's own array, on a device a download).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `aux` if the physics reads a field
    /// that was never set; device errors (the download).
    pub fn cell_aux(&self) -> Result<Cow<'_, [R]>> {
        match self {
            Integrator::Native(n) => n.cell_aux(),
            Integrator::OpenCl(d) => d.cell_aux(),
        }
    }

    /// How element vectors are summed on a device, with that assembly's
    /// kernels built now; native assembly is always deterministic.
    ///
    /// # Errors
    /// Device errors (a build failure, memory).
    pub fn set_assembly(&mut self, assembly: Assembly) -> Result<()> {
        match self {
            Integrator::Native(_) => Ok(()),
            Integrator::OpenCl(d) => d.set_assembly(assembly),
        }
    }

    /// The discretization.
    pub fn discretization(&self) -> &Discretization<R> {
        match self {
            Integrator::Native(n) => n.discretization(),
            Integrator::OpenCl(d) => d.discretization(),
        }
    }

    /// The backend it was bound on (the same device and kernel options, or
    /// the same native execution).
    pub fn backend(&self) -> Backend {
        match self {
            Integrator::Native(n) => Backend::Native(n.execution()),
            Integrator::OpenCl(d) => Backend::OpenCl {
                device: d.device().clone(),
                options: d.options().clone(),
            },
        }
    }

    /// Where its vectors live.
    pub fn location(&self) -> Location {
        match self {
            Integrator::Native(_) => Location::Host,
            Integrator::OpenCl(d) => {
                let info = d.device().info();
                Location::Device {
                    index: info.index,
                    name: info.name.clone(),
                }
            }
        }
    }

    /// `n` zeros where its vectors live.
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn zeros(&self, n: usize) -> Result<Vector<R>> {
        match self {
            Integrator::Native(_) => Ok(Vector::host_zeros(n)),
            Integrator::OpenCl(d) => Vector::device_zeros(d.device(), n),
        }
    }

    /// `values` where its vectors live (an upload on a device).
    ///
    /// # Errors
    /// Device errors.
    pub fn from_host(&self, values: &[R]) -> Result<Vector<R>> {
        match self {
            Integrator::Native(_) => Ok(Vector::Host(values.to_vec())),
            Integrator::OpenCl(d) => {
                Ok(Vector::Device(DeviceVector::from_host(d.device(), values)?))
            }
        }
    }

    /// The bound OpenCL form, if bound on a device (for backend-specific
    /// queries: launch records, timings, configurations, sources).
    pub fn opencl(&mut self) -> Option<&mut OpenClIntegrator<R>> {
        match self {
            Integrator::Native(_) => None,
            Integrator::OpenCl(d) => Some(d),
        }
    }
}

/// The point-block diagonal of `J(u)` computed on the host from the
/// cell-local `inputs` ([`point_block_diagonal`], in parallel), NaN and ±∞
/// kept: the host side of the assembled Jacobian on every backend.
///
/// # Errors
/// Those of [`point_block_diagonal`].
pub(crate) fn host_point_diagonal<R: Real>(
    space: &FunctionSpace,
    disc: &Discretization<R>,
    physics: &dyn PointwiseEval<R>,
    boundary: &BoundaryIntegrals<R>,
    inputs: &CellInputs<'_, R>,
) -> Result<Vec<R>> {
    point_block_diagonal(space, disc, physics, boundary, inputs, Execution::Parallel)
}

/// The error for vectors that do not live where the integrator evaluates
/// (found after the operator's per-vector checks, so not expected in
/// practice).
fn misplaced() -> Error {
    Error::arg("u", "the vectors do not live where the operator evaluates")
}
