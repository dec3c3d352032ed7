//! [`Vector`]: a field's values on the host or on a device, and its
//! [`Location`].

use std::fmt;
use std::sync::Arc;

use crate::opencl::{Device, DeviceVector};
use crate::vector::{CgFusion, VectorOps};
use crate::{Error, Precision, Real, Result};

/// Where a [`Vector`] lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// Host memory.
    Host,
    /// An OpenCL device: its index in
    /// [`list_devices`](crate::opencl::list_devices) and its name.
    Device {
        /// Index of the device.
        index: usize,
        /// Name of the device.
        name: String,
    },
}

impl Location {
    /// The location of `device`.
    pub(crate) fn of_device(device: &Device) -> Location {
        Location::Device {
            index: device.info().index,
            name: device.info().name.clone(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Host => f.write_str("the host"),
            Location::Device { index, name } => write!(f, "device [{index}] `{name}`"),
        }
    }
}

/// The values of a field (a solution `u`, a residual `F`, a solver vector),
/// on the host or on a device: `R` is `f32` or `f64`.
///
/// `Vector` implements [`VectorOps`] by dispatching to `Vec<R>` or
/// [`DeviceVector<R>`], so the solvers of [`crate::solve`] run on either.
/// Operands must live where the receiver lives: combining a host and a
/// device vector is an [`Error::InvalidArgument`] naming the argument and
/// both locations. femquad never transfers implicitly; transfers are
/// explicit: [`Vector::to_device`], [`Vector::to_host`].
///
/// On the host:
/// ```
/// use femquad::backend::{Location, Vector};
/// use femquad::vector::VectorOps;
/// let mut y = Vector::from(vec![1.0f64, 2.0, 3.0]);
/// let x = Vector::from(vec![1.0, 1.0, 1.0]);
/// y.axpy(2.0, &x)?; // y ← y + 2x
/// assert_eq!(y.dot(&x)?, 12.0);
/// assert_eq!(y.location(), Location::Host);
/// assert_eq!(y.to_host()?, vec![3.0, 4.0, 5.0]);
/// # Ok::<(), femquad::Error>(())
/// ```
///
/// On a device (the same calls; only the construction differs):
/// ```
/// use femquad::opencl::Device;
/// use femquad::backend::Vector;
/// use femquad::vector::VectorOps;
/// let device = Device::from_env()?;
/// let mut y = Vector::from(vec![1.0f64, 2.0, 3.0]).to_device(&device)?; // upload
/// let x = Vector::device_zeros(&device, 3)?;
/// y.axpy(2.0, &x)?; // a kernel; nothing crosses PCIe
/// let norm = y.norm2()?; // one scalar read
/// assert!((norm - 14f64.sqrt()).abs() < 1e-14);
/// let host = Vector::from(vec![0.0f64; 3]);
/// assert!(y.axpy(1.0, &host).is_err()); // `x` is on the host but `y` on device …
/// let values: Vec<f64> = y.to_host()?; // download
/// assert_eq!(values, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Debug)]
pub enum Vector<R: Real> {
    /// Values in host memory.
    Host(Vec<R>),
    /// Values in a device buffer.
    Device(DeviceVector<R>),
}

impl<R: Real> From<Vec<R>> for Vector<R> {
    fn from(values: Vec<R>) -> Self {
        Vector::Host(values)
    }
}

impl<R: Real> From<DeviceVector<R>> for Vector<R> {
    fn from(values: DeviceVector<R>) -> Self {
        Vector::Device(values)
    }
}

impl<R: Real> Vector<R> {
    /// `len` zeros on the host.
    pub fn host_zeros(len: usize) -> Self {
        Vector::Host(vec![R::ZERO; len])
    }

    /// `len` zeros on `device`.
    ///
    /// # Errors
    /// Those of [`DeviceVector::zeros`].
    pub fn device_zeros(device: &Arc<Device>, len: usize) -> Result<Self> {
        Ok(Vector::Device(DeviceVector::zeros(device, len)?))
    }

    /// Where the values live.
    pub fn location(&self) -> Location {
        match self {
            Vector::Host(_) => Location::Host,
            Vector::Device(d) => Location::of_device(d.device()),
        }
    }

    /// A copy of the values on the host (a download for a device vector).
    pub fn to_host(&self) -> Result<Vec<R>> {
        match self {
            Vector::Host(v) => Ok(v.clone()),
            Vector::Device(d) => d.to_host(),
        }
    }

    /// Overwrites the values with `values` (an upload for a device
    /// vector).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming
    /// `values` for another length; device errors.
    pub fn copy_from_host(&mut self, values: &[R]) -> Result<()> {
        match self {
            Vector::Host(v) => {
                crate::error::check_len("values", values, v.len())?;
                v.copy_from_slice(values);
                Ok(())
            }
            Vector::Device(d) => d.upload(values),
        }
    }

    /// A copy of the values on `device` (an upload, or a copy through the
    /// host from another device; a device-side copy if already there).
    pub fn to_device(&self, device: &Arc<Device>) -> Result<Self> {
        match self {
            Vector::Device(d) if Arc::ptr_eq(d.device(), device) => {
                let mut c = d.zeros_like()?;
                c.copy_from(d)?;
                Ok(Vector::Device(c))
            }
            _ => Ok(Vector::Device(DeviceVector::from_host(
                device,
                &self.to_host()?,
            )?)),
        }
    }

    /// Waits until every operation enqueued on the vector's device has
    /// finished (nothing to wait for on the host). For timing: the device
    /// operations are asynchronous, so a wall-clock time taken without it
    /// measures their enqueueing only.
    ///
    /// # Errors
    /// The device's error if the queue cannot be finished.
    pub fn finish(&self) -> Result<()> {
        match self {
            Vector::Host(_) => Ok(()),
            Vector::Device(d) => d
                .device()
                .queue()
                .finish()
                .map_err(crate::opencl::device::cl_error("clFinish")),
        }
    }

    /// Submits the operations enqueued on the vector's device without
    /// waiting for them (`clFlush`; nothing to do on the host), so that the
    /// device computes while the host does other work (femquad-mpi's halo
    /// messages): an enqueued launch may otherwise wait in the queue until
    /// the next blocking call.
    ///
    /// # Errors
    /// The device's error if the queue cannot be flushed.
    pub fn flush(&self) -> Result<()> {
        match self {
            Vector::Host(_) => Ok(()),
            Vector::Device(d) => d
                .device()
                .queue()
                .flush()
                .map_err(crate::opencl::device::cl_error("clFlush")),
        }
    }

    /// `y_i ← round_R(x_i)` (this vector is `y`) from a vector `x` of either
    /// precision in the same place: `f64 → f32` rounded to nearest, ties to
    /// even (beyond `f32::MAX` ±∞, below the smallest subnormal ±0),
    /// `f32 → f64` exact, within one precision a copy. On the host
    /// [`crate::vector::convert`], on a device one elementwise kernel
    /// ([`DeviceVector::convert_from`]); both give the same bits. A
    /// single-precision multigrid cycle inside a double-precision solve
    /// converts its right-hand side and its result with it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` for another length or place;
    /// [`Error::NoFp64`] for two precisions on a device without doubles.
    pub fn convert_from<S: Real>(&mut self, x: &Vector<S>) -> Result<()> {
        match (self, x) {
            (Vector::Host(y), Vector::Host(x)) => crate::vector::convert(x, y),
            (Vector::Device(y), Vector::Device(x)) => y.convert_from(x),
            (y, x) => Err(mixed("x", x.location(), "y", y.location())),
        }
    }

    /// The host values, if on the host.
    pub fn as_host(&self) -> Option<&Vec<R>> {
        match self {
            Vector::Host(v) => Some(v),
            Vector::Device(_) => None,
        }
    }

    /// The device vector, if on a device.
    pub fn as_device(&self) -> Option<&DeviceVector<R>> {
        match self {
            Vector::Device(d) => Some(d),
            Vector::Host(_) => None,
        }
    }

    /// The device vector, mutable, if on a device (e.g. for an operator's
    /// own kernel).
    pub fn as_device_mut(&mut self) -> Option<&mut DeviceVector<R>> {
        match self {
            Vector::Device(d) => Some(d),
            Vector::Host(_) => None,
        }
    }
}

/// The error of combining vectors in different places: operand `arg` at
/// `arg_at`, receiver `receiver` at `receiver_at`.
fn mixed(arg: &'static str, arg_at: Location, receiver: &str, receiver_at: Location) -> Error {
    Error::arg(
        arg,
        format!(
            "`{arg}` is on {arg_at} but `{receiver}` on {receiver_at}: vectors combined \
             in one operation must live in one place (femquad never transfers implicitly; \
             use Vector::to_device or Vector::to_host)"
        ),
    )
}

/// The host or device parts of `vs` if all live with `this`, else the error
/// naming the first that does not.
enum Parts<'a, R: Real> {
    Host(Vec<&'a Vec<R>>),
    Device(Vec<&'a DeviceVector<R>>),
}

fn parts<'a, R: Real>(
    this: &Vector<R>,
    receiver: &str,
    name: &'static str,
    vs: &[&'a Vector<R>],
) -> Result<Parts<'a, R>> {
    let wrong = |j: usize, v: &Vector<R>| {
        let e = mixed(name, v.location(), receiver, this.location());
        match e {
            Error::InvalidArgument { reason, .. } => {
                Error::arg(name, format!("{name}[{j}]: {reason}"))
            }
            other => other,
        }
    };
    match this {
        Vector::Host(_) => vs
            .iter()
            .enumerate()
            .map(|(j, v)| v.as_host().ok_or_else(|| wrong(j, v)))
            .collect::<Result<_>>()
            .map(Parts::Host),
        Vector::Device(_) => vs
            .iter()
            .enumerate()
            .map(|(j, v)| v.as_device().ok_or_else(|| wrong(j, v)))
            .collect::<Result<_>>()
            .map(Parts::Device),
    }
}

/// Dispatches a binary operation `receiver.op(arg)` to matching parts.
macro_rules! dispatch2 {
    ($this:expr, $receiver:literal, $arg:expr, $name:literal, |$a:ident, $b:ident| $body:expr) => {
        match ($this, $arg) {
            (Vector::Host($a), Vector::Host($b)) => $body,
            (Vector::Device($a), Vector::Device($b)) => $body,
            (this, arg) => Err(mixed($name, arg.location(), $receiver, this.location())),
        }
    };
}

impl<R: Real> VectorOps for Vector<R> {
    fn len(&self) -> usize {
        match self {
            Vector::Host(v) => v.len(),
            Vector::Device(d) => d.len(),
        }
    }

    fn precision(&self) -> Precision {
        R::PRECISION
    }

    fn zeros_like(&self) -> Result<Self> {
        Ok(match self {
            Vector::Host(v) => Vector::Host(VectorOps::zeros_like(v)?),
            Vector::Device(d) => Vector::Device(d.zeros_like()?),
        })
    }

    fn check_compatible(&self, own: &str, name: &'static str, other: &Self) -> Result<()> {
        match (self, other) {
            (Vector::Host(a), Vector::Host(b)) => a.check_compatible(own, name, b),
            (Vector::Device(a), Vector::Device(b)) => a.check_compatible(own, name, b),
            (this, other) => Err(mixed(name, other.location(), own, this.location())),
        }
    }

    fn copy_from(&mut self, x: &Self) -> Result<()> {
        dispatch2!(self, "y", x, "x", |y, x| VectorOps::copy_from(y, x))
    }

    fn fill(&mut self, value: f64) -> Result<()> {
        match self {
            Vector::Host(v) => VectorOps::fill(v, value),
            Vector::Device(d) => d.fill(value),
        }
    }

    fn scale(&mut self, alpha: f64) -> Result<()> {
        match self {
            Vector::Host(v) => v.scale(alpha),
            Vector::Device(d) => d.scale(alpha),
        }
    }

    fn axpy(&mut self, alpha: f64, x: &Self) -> Result<()> {
        dispatch2!(self, "y", x, "x", |y, x| VectorOps::axpy(y, alpha, x))
    }

    fn axpby(&mut self, alpha: f64, x: &Self, beta: f64) -> Result<()> {
        dispatch2!(self, "y", x, "x", |y, x| VectorOps::axpby(
            y, alpha, x, beta
        ))
    }

    fn pointwise_mult(&mut self, x: &Self, z: &Self) -> Result<()> {
        match (self, x, z) {
            (Vector::Host(w), Vector::Host(x), Vector::Host(z)) => w.pointwise_mult(x, z),
            (Vector::Device(w), Vector::Device(x), Vector::Device(z)) => w.pointwise_mult(x, z),
            (w, x, z) => {
                let (name, other) = if x.location() != w.location() {
                    ("x", x)
                } else {
                    ("y", z)
                };
                Err(mixed(name, other.location(), "w", w.location()))
            }
        }
    }

    fn dot(&self, y: &Self) -> Result<f64> {
        dispatch2!(self, "x", y, "y", |x, y| VectorOps::dot(x, y))
    }

    fn norm2(&self) -> Result<f64> {
        match self {
            Vector::Host(v) => v.norm2(),
            Vector::Device(d) => d.norm2(),
        }
    }

    fn norm_inf(&self) -> Result<f64> {
        match self {
            Vector::Host(v) => v.norm_inf(),
            Vector::Device(d) => d.norm_inf(),
        }
    }

    fn dots(&self, vs: &[&Self]) -> Result<Vec<f64>> {
        match (self, parts(self, "x", "vs", vs)?) {
            (Vector::Host(x), Parts::Host(vs)) => x.dots(&vs),
            (Vector::Device(x), Parts::Device(vs)) => x.dots(&vs),
            _ => Err(Error::internal(
                "dots: `parts` sorted the vectors into the other kind than `x`",
            )),
        }
    }

    fn maxpy(&mut self, alphas: &[f64], xs: &[&Self]) -> Result<()> {
        let p = parts(self, "y", "xs", xs)?;
        match (self, p) {
            (Vector::Host(y), Parts::Host(xs)) => y.maxpy(alphas, &xs),
            (Vector::Device(y), Parts::Device(xs)) => y.maxpy(alphas, &xs),
            _ => Err(Error::internal(
                "maxpy: `parts` sorted the vectors into the other kind than `y`",
            )),
        }
    }

    fn cg_update(
        &mut self,
        alpha: f64,
        p: &Self,
        q: &Self,
        x: &mut Self,
        then: CgFusion<'_, Self>,
    ) -> Result<Option<(f64, f64)>> {
        let at = self.location();
        let elsewhere = |name: &'static str, v: &Self| {
            (v.location() != at).then(|| mixed(name, v.location(), "r", at.clone()))
        };
        let mut wrong = elsewhere("p", p)
            .or_else(|| elsewhere("q", q))
            .or_else(|| elsewhere("x", x));
        if let CgFusion::Jacobi {
            inverse_diagonal,
            z,
        } = &then
        {
            wrong = wrong
                .or_else(|| elsewhere("inverse_diagonal", inverse_diagonal))
                .or_else(|| elsewhere("z", z));
        }
        if let Some(e) = wrong {
            return Err(e);
        }
        match (self, p, q, x) {
            (Vector::Host(r), Vector::Host(p), Vector::Host(q), Vector::Host(x)) => {
                let then = match then {
                    CgFusion::Update => CgFusion::Update,
                    CgFusion::Norm => CgFusion::Norm,
                    CgFusion::Jacobi {
                        inverse_diagonal: Vector::Host(d),
                        z: Vector::Host(z),
                    } => CgFusion::Jacobi {
                        inverse_diagonal: d,
                        z,
                    },
                    CgFusion::Jacobi { .. } => {
                        return Err(Error::internal(
                            "cg_update: the locations were checked above",
                        ));
                    }
                };
                r.cg_update(alpha, p, q, x, then)
            }
            (Vector::Device(r), Vector::Device(p), Vector::Device(q), Vector::Device(x)) => {
                let then = match then {
                    CgFusion::Update => CgFusion::Update,
                    CgFusion::Norm => CgFusion::Norm,
                    CgFusion::Jacobi {
                        inverse_diagonal: Vector::Device(d),
                        z: Vector::Device(z),
                    } => CgFusion::Jacobi {
                        inverse_diagonal: d,
                        z,
                    },
                    CgFusion::Jacobi { .. } => {
                        return Err(Error::internal(
                            "cg_update: the locations were checked above",
                        ));
                    }
                };
                r.cg_update(alpha, p, q, x, then)
            }
            _ => Err(Error::internal("cg_update: locations checked above")),
        }
    }

    fn first_non_finite(&self) -> Result<Option<usize>> {
        match self {
            Vector::Host(v) => v.first_non_finite(),
            Vector::Device(d) => d.first_non_finite(),
        }
    }

    fn value_at(&self, index: usize) -> Result<f64> {
        match self {
            Vector::Host(v) => v.value_at(index),
            Vector::Device(d) => VectorOps::value_at(d, index),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_vectors_dispatch() {
        let mut y = Vector::from(vec![1.0f64, 2.0]);
        let x = Vector::from(vec![3.0, 4.0]);
        y.axpy(1.0, &x).unwrap();
        assert_eq!(y.to_host().unwrap(), [4.0, 6.0]);
        assert_eq!(y.dots(&[&x, &y]).unwrap(), [36.0, 52.0]);
        y.maxpy(&[1.0, -1.0], &[&x, &x]).unwrap();
        assert_eq!(y.as_host().unwrap(), &vec![4.0, 6.0]);
        assert_eq!(Location::Host.to_string(), "the host");
        let loc = Location::Device {
            index: 1,
            name: "H200".into(),
        };
        assert_eq!(loc.to_string(), "device [1] `H200`");
        let e = mixed("x", Location::Host, "y", loc).to_string();
        assert!(
            e.contains("`x` is on the host but `y` on device [1] `H200`"),
            "{e}"
        );
    }
}
