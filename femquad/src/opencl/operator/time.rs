//! The time state on the device: `u_t = σ·u + b` and the time `t`
//! ([`Integrate::set_time`](crate::seam::Integrate::set_time)), evaluated by
//! the cell kernels of a physics that reads `u_t` or `t` (their
//! `TIME_PARAMS`, see `femquad/src/opencl/source.rs`): `b` is a global
//! vector read at the cells' nodes (cell-local for the element kernel),
//! `u_t = σ·u + b` is formed at the quadrature points and the Jacobian's
//! direction is `du_t = σ·du`, so `J = σ·∂F/∂u_t + ∂F/∂u`.

use opencl3::memory::Buffer;

use super::OpenClOperator;
use crate::discretization::CellTime;
use crate::opencl::DeviceVector;
use crate::opencl::launch::Launch;
use crate::physics::Reads;
use crate::{Error, Real, Result};

/// The bound time state: `b` (global, `[node][comp]`), `σ`, `t`.
pub(super) struct DeviceTime<R: Real> {
    b: DeviceVector<R>,
    sigma: R,
    t: R,
}

/// The time-state arguments of one launch: `b` (in the kernel's layout),
/// `σ`, `t`.
#[derive(Clone, Copy)]
pub(super) struct TimeArgs<'a, R> {
    pub(super) b: &'a Buffer<R>,
    pub(super) sigma: R,
    pub(super) t: R,
}

impl<R: Real> OpenClOperator<R> {
    /// Binds the time state `(t, σ, b)` (`b` copied; checked against the
    /// space and the device) or unbinds it (`None`).
    ///
    /// # Errors
    /// `b` of a wrong length or on another device; device memory.
    pub(super) fn set_time(&mut self, time: Option<(R, R, &DeviceVector<R>)>) -> Result<()> {
        self.data.time = match time {
            None => None,
            Some((t, sigma, b)) => {
                self.check_vector("b", b)?;
                let mut copy = match self.data.time.take() {
                    Some(old) => old.b,
                    None => b.zeros_like()?,
                };
                copy.copy_from(b)?;
                Some(DeviceTime { b: copy, sigma, t })
            }
        };
        Ok(())
    }

    /// The bound time state's arguments for the kernels that read the
    /// global vectors.
    pub(super) fn time_args(&self) -> Option<TimeArgs<'_, R>> {
        self.data.time.as_ref().map(|d| TimeArgs {
            b: d.b.buffer(),
            sigma: d.sigma,
            t: d.t,
        })
    }

    /// Uploads the cell-local time state of the element kernel's inputs
    /// (`b`: `n_cells·N_bt` values, padded), or drops it (`None`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `b` (length), [`Error::NonFinite`]
    /// with the index; device memory.
    pub(super) fn set_cell_time(&mut self, time: Option<&CellTime<'_, R>>) -> Result<()> {
        self.data.cell_time = match time {
            None => None,
            Some(time) => {
                let n_bt = self.disc.n_bt();
                crate::error::check_len("b", time.b, self.disc.n_cells() * n_bt)?;
                crate::real::check_finite("b", time.b)?;
                let old = self.data.cell_time.take().map(|(b, _, _)| b);
                let b = self.padded_upload(old, time.b, n_bt, "time state b")?;
                Some((b, time.sigma, time.t))
            }
        };
        Ok(())
    }

    /// The element kernel's time-state arguments (cell-local `b`).
    pub(super) fn cell_time_args(&self) -> Option<TimeArgs<'_, R>> {
        self.data.cell_time.as_ref().map(|(b, sigma, t)| TimeArgs {
            b,
            sigma: *sigma,
            t: *t,
        })
    }

    /// Sets the arguments `TIME_PARAMS` of a cell kernel of a physics that
    /// reads `reads` (none for a stationary physics): `b`, `σ`, `t` of
    /// `time`; without a time state, a physics that reads only `t` sees
    /// `t = 0` (as natively).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `physics` if it reads `u_t` and no
    /// time state is bound; argument errors.
    pub(super) fn push_time<'k>(
        &self,
        launch: Launch<'k>,
        reads: Reads,
        time: Option<TimeArgs<'_, R>>,
    ) -> Result<Launch<'k>> {
        push_time_args(launch, reads, time, &self.data.unused_real)
    }
}

/// Sets the arguments `TIME_PARAMS` of a kernel (a cell kernel's, a facet
/// kernel's) of a physics that reads `reads` (none for a stationary
/// physics): `b`, `σ`, `t` of `time`; without a time state, a physics that
/// reads only `t` sees `t = 0` (`unused` stands for `b`), as natively.
///
/// # Errors
/// [`no_time_state`] for a physics that reads `u_t` without a time state;
/// argument errors.
pub(super) fn push_time_args<'k, R: Real>(
    launch: Launch<'k>,
    reads: Reads,
    time: Option<TimeArgs<'_, R>>,
    unused: &Buffer<R>,
) -> Result<Launch<'k>> {
    if !(reads.u_t || reads.t) {
        return Ok(launch);
    }
    match time {
        Some(a) => launch.mem(a.b)?.value(a.sigma)?.value(a.t),
        None if reads.u_t => Err(no_time_state()),
        None => launch.mem(unused)?.value(R::ZERO)?.value(R::ZERO),
    }
}

/// The error of a physics that reads `u_t` evaluated without a time state.
pub(super) fn no_time_state() -> Error {
    Error::arg(
        "physics",
        "the physics reads `u_t` and no time state is bound: bind one (Operator::set_time: t \
         and u_t = σ·u + b) or solve it with a time integrator (femquad::time::TimeIntegrator)",
    )
}
