//! [`MultigridKernels`] and [`TransferKernels`]: the multigrid kernels of
//! the backend where the vectors live, each operation one `match` over the
//! backends ([`MultigridOps`] on each side).

use std::sync::Arc;

use super::{IndexSet, Location, Vector};
use crate::native::multigrid::NativeMultigrid;
use crate::opencl::multigrid::{DeviceTransfer, MultigridKernels as DeviceKernels};
use crate::opencl::vector::DeviceVector;
use crate::seam::{ChebyshevCoefficients, ChebyshevOperands, MultigridOps, TransferGraph};
use crate::{Error, Real, Result};

/// The multigrid kernels (point-block Jacobi, random fill, transfers; see
/// [`MultigridOps`]) for fields of [`MultigridKernels::n_comp`] components,
/// on the host or on one device. Cloning shares the device kernels.
#[derive(Clone, Debug)]
pub enum MultigridKernels<R: Real> {
    /// On host vectors.
    Native(NativeMultigrid<R>),
    /// On the vectors of one OpenCL device.
    OpenCl(Arc<DeviceKernels<R>>),
}

/// The error for an operand `name` at `at` given to `what` at `here`;
/// `place` says how to make `what` for another place.
fn elsewhere(name: &'static str, at: Location, what: &str, here: Location, place: &str) -> Error {
    Error::arg(
        name,
        format!(
            "`{name}` is on {at} but the {what} on {here}: femquad never transfers \
             implicitly ({place}, or move the vector with Vector::to_device or Vector::to_host)"
        ),
    )
}

impl<R: Real> MultigridKernels<R> {
    /// The kernels for fields of `n_comp` components where `like` lives (on
    /// a device: built, or taken from the device's program cache).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_comp` if it is 0; on a device
    /// the build errors of the multigrid program ([`Error::NoFp64`] for
    /// `f64` on a device without double precision, [`Error::DeviceLimit`]).
    pub fn like(like: &Vector<R>, n_comp: usize) -> Result<Self> {
        Ok(match like {
            Vector::Host(_) => MultigridKernels::host(n_comp)?,
            Vector::Device(d) => MultigridKernels::OpenCl(DeviceKernels::new(d.device(), n_comp)?),
        })
    }

    /// The kernels for fields of `n_comp` components on host vectors.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_comp` if it is 0.
    pub fn host(n_comp: usize) -> Result<Self> {
        Ok(MultigridKernels::Native(NativeMultigrid::new(n_comp)?))
    }

    /// Components per node.
    pub fn n_comp(&self) -> usize {
        match self {
            MultigridKernels::Native(k) => k.n_comp(),
            MultigridKernels::OpenCl(k) => k.n_comp(),
        }
    }

    /// Where the vectors these kernels work on live.
    pub fn location(&self) -> Location {
        match self {
            MultigridKernels::Native(_) => Location::Host,
            MultigridKernels::OpenCl(k) => Location::of_device(k.device()),
        }
    }

    /// A vector of `values` where the kernels are (on a device: uploaded).
    ///
    /// # Errors
    /// Device errors (allocation, transfer).
    pub fn vector_of(&self, values: Vec<R>) -> Result<Vector<R>> {
        Ok(match self {
            MultigridKernels::Native(_) => Vector::Host(values),
            MultigridKernels::OpenCl(k) => {
                Vector::Device(DeviceVector::from_host(k.device(), &values)?)
            }
        })
    }

    /// The error for the first of `operands` (name, place) that is not
    /// where the kernels are.
    fn misplaced(&self, operands: &[(&'static str, Location)]) -> Error {
        let here = self.location();
        match operands.iter().find(|(_, at)| *at != here) {
            Some((name, at)) => elsewhere(
                name,
                at.clone(),
                "multigrid kernels",
                here,
                "build the kernels where the vectors live with MultigridKernels::like",
            ),
            None => Error::internal("multigrid kernels: operands in place but not matched"),
        }
    }

    /// Rows and columns of the dofs `fixed` in `blocks` set to those of
    /// `diagonal·I` ([`MultigridOps::block_fix`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `blocks` or `fixed` (length, range
    /// or place).
    pub fn block_fix(&self, blocks: &mut Vector<R>, fixed: &IndexSet, diagonal: f64) -> Result<()> {
        match (self, &mut *blocks, fixed) {
            (MultigridKernels::Native(k), Vector::Host(b), IndexSet::Host(f)) => {
                k.block_fix(b, f, diagonal)
            }
            (MultigridKernels::OpenCl(k), Vector::Device(b), IndexSet::Device(f)) => {
                k.block_fix(b, f, diagonal)
            }
            _ => Err(self.misplaced(&[("blocks", blocks.location()), ("fixed", fixed.location())])),
        }
    }

    /// `inv ← D⁻¹` blockwise ([`MultigridOps::block_invert`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `blocks` or `inv` (length or place).
    pub fn block_invert(&self, inv: &mut Vector<R>, blocks: &Vector<R>) -> Result<()> {
        match (self, &mut *inv, blocks) {
            (MultigridKernels::Native(k), Vector::Host(i), Vector::Host(b)) => k.block_invert(i, b),
            (MultigridKernels::OpenCl(k), Vector::Device(i), Vector::Device(b)) => {
                k.block_invert(i, b)
            }
            _ => Err(self.misplaced(&[("blocks", blocks.location()), ("inv", inv.location())])),
        }
    }

    /// `y ← A x`, `A` dense `n × n` row-major in `a`
    /// ([`MultigridOps::dense_apply`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a`, `x` or `y` (length or place).
    pub fn dense_apply(&self, y: &mut Vector<R>, a: &Vector<R>, x: &Vector<R>) -> Result<()> {
        match (self, &mut *y, a, x) {
            (MultigridKernels::Native(k), Vector::Host(y), Vector::Host(a), Vector::Host(x)) => {
                k.dense_apply(y, a, x)
            }
            (
                MultigridKernels::OpenCl(k),
                Vector::Device(y),
                Vector::Device(a),
                Vector::Device(x),
            ) => k.dense_apply(y, a, x),
            _ => Err(self.misplaced(&[
                ("a", a.location()),
                ("x", x.location()),
                ("y", y.location()),
            ])),
        }
    }

    /// `y ← a·y + b·D⁻¹r` ([`MultigridOps::block_update`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `inv`, `r` or `y` (length or place).
    pub fn block_update(
        &self,
        y: &mut Vector<R>,
        a: f64,
        inv: &Vector<R>,
        r: &Vector<R>,
        b: f64,
    ) -> Result<()> {
        match (self, &mut *y, inv, r) {
            (MultigridKernels::Native(k), Vector::Host(y), Vector::Host(i), Vector::Host(r)) => {
                k.block_update(y, a, i, r, b)
            }
            (
                MultigridKernels::OpenCl(k),
                Vector::Device(y),
                Vector::Device(i),
                Vector::Device(r),
            ) => k.block_update(y, a, i, r, b),
            _ => Err(self.misplaced(&[
                ("inv", inv.location()),
                ("r", r.location()),
                ("y", y.location()),
            ])),
        }
    }

    /// One Chebyshev smoothing step fused ([`MultigridOps::chebyshev_step`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming an operand of a wrong length or
    /// place.
    pub fn chebyshev_step(
        &self,
        o: ChebyshevOperands<'_, Vector<R>>,
        k: ChebyshevCoefficients,
    ) -> Result<()> {
        let places = [
            ("inv", o.inv.location()),
            ("b", o.b.location()),
            ("w", o.w.location()),
            ("r", o.r.location()),
            ("d", o.d.location()),
            ("x", o.x.location()),
        ];
        match (self, o.x, o.d, o.r, o.b, o.w, o.inv) {
            (
                MultigridKernels::Native(kernels),
                Vector::Host(x),
                Vector::Host(d),
                Vector::Host(r),
                Vector::Host(b),
                Vector::Host(w),
                Vector::Host(inv),
            ) => kernels.chebyshev_step(ChebyshevOperands { x, d, r, b, w, inv }, k),
            (
                MultigridKernels::OpenCl(kernels),
                Vector::Device(x),
                Vector::Device(d),
                Vector::Device(r),
                Vector::Device(b),
                Vector::Device(w),
                Vector::Device(inv),
            ) => kernels.chebyshev_step(ChebyshevOperands { x, d, r, b, w, inv }, k),
            _ => Err(self.misplaced(&places)),
        }
    }

    /// `x[i]` uniform in `[−1, 1)` from `seed` and `i`
    /// ([`MultigridOps::fill_random`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` if it lives elsewhere.
    pub fn fill_random(&self, x: &mut Vector<R>, seed: u64) -> Result<()> {
        match (self, &mut *x) {
            (MultigridKernels::Native(k), Vector::Host(x)) => k.fill_random(x, seed),
            (MultigridKernels::OpenCl(k), Vector::Device(x)) => k.fill_random(x, seed),
            _ => Err(self.misplaced(&[("x", x.location())])),
        }
    }

    /// `graph` where these kernels work (uploaded for a device).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `kernels` if `graph` is for fields
    /// of another `N_comp`, `offsets` or `incident` if they do not fit;
    /// [`Error::OutOfDeviceMemory`].
    pub fn transfer(&self, graph: &Arc<TransferGraph>) -> Result<TransferKernels<R>> {
        Ok(match self {
            MultigridKernels::Native(k) => TransferKernels::Native(*k, k.transfer(graph)?),
            MultigridKernels::OpenCl(k) => TransferKernels::OpenCl(k.clone(), k.transfer(graph)?),
        })
    }
}

/// A [`TransferGraph`] with the kernels of the place it is in: the
/// prolongation, restriction and injection of [`MultigridOps`] on the
/// vectors of that place.
#[derive(Debug)]
pub enum TransferKernels<R: Real> {
    /// On host vectors.
    Native(NativeMultigrid<R>, Arc<TransferGraph>),
    /// On the vectors of one OpenCL device.
    OpenCl(Arc<DeviceKernels<R>>, DeviceTransfer),
}

impl<R: Real> TransferKernels<R> {
    /// Where the vectors it transfers live.
    pub fn location(&self) -> Location {
        match self {
            TransferKernels::Native(..) => Location::Host,
            TransferKernels::OpenCl(k, _) => Location::of_device(k.device()),
        }
    }

    fn misplaced(&self, operands: &[(&'static str, Location)]) -> Error {
        let here = self.location();
        match operands.iter().find(|(_, at)| *at != here) {
            Some((name, at)) => elsewhere(
                name,
                at.clone(),
                "transfer",
                here,
                "place the transfer with Transfer::with_kernels",
            ),
            None => Error::internal("transfer: operands in place but not matched"),
        }
    }

    /// The kernels these transfers run on.
    pub fn kernels(&self) -> MultigridKernels<R> {
        match self {
            TransferKernels::Native(k, _) => MultigridKernels::Native(*k),
            TransferKernels::OpenCl(k, _) => MultigridKernels::OpenCl(k.clone()),
        }
    }

    /// `fine ← fine + P̃ coarse`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `fine` or `coarse` (length or place).
    pub fn prolong_add(&self, fine: &mut Vector<R>, coarse: &Vector<R>) -> Result<()> {
        match (self, &mut *fine, coarse) {
            (TransferKernels::Native(k, t), Vector::Host(f), Vector::Host(c)) => {
                k.prolong_add(t, f, c)
            }
            (TransferKernels::OpenCl(k, t), Vector::Device(f), Vector::Device(c)) => {
                k.prolong_add(t, f, c)
            }
            _ => Err(self.misplaced(&[("fine", fine.location()), ("coarse", coarse.location())])),
        }
    }

    /// `coarse ← P̃ᵀ b`, or `P̃ᵀ (b − w)` given `w`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `coarse`, `fine` (`b`) or `w`
    /// (length or place).
    pub fn restrict(
        &self,
        coarse: &mut Vector<R>,
        b: &Vector<R>,
        w: Option<&Vector<R>>,
    ) -> Result<()> {
        match (self, &mut *coarse, b, w) {
            (TransferKernels::Native(k, t), Vector::Host(c), Vector::Host(b), None) => {
                k.restrict(t, c, b, None)
            }
            (
                TransferKernels::Native(k, t),
                Vector::Host(c),
                Vector::Host(b),
                Some(Vector::Host(w)),
            ) => k.restrict(t, c, b, Some(w)),
            (TransferKernels::OpenCl(k, t), Vector::Device(c), Vector::Device(b), None) => {
                k.restrict(t, c, b, None)
            }
            (
                TransferKernels::OpenCl(k, t),
                Vector::Device(c),
                Vector::Device(b),
                Some(Vector::Device(w)),
            ) => k.restrict(t, c, b, Some(w)),
            _ => {
                let mut operands = vec![("coarse", coarse.location()), ("fine", b.location())];
                operands.extend(w.map(|w| ("w", w.location())));
                Err(self.misplaced(&operands))
            }
        }
    }

    /// `coarse ← I fine`.
    ///
    /// # Errors
    /// As [`TransferKernels::prolong_add`].
    pub fn inject(&self, coarse: &mut Vector<R>, fine: &Vector<R>) -> Result<()> {
        match (self, &mut *coarse, fine) {
            (TransferKernels::Native(k, t), Vector::Host(c), Vector::Host(f)) => k.inject(t, c, f),
            (TransferKernels::OpenCl(k, t), Vector::Device(c), Vector::Device(f)) => {
                k.inject(t, c, f)
            }
            _ => Err(self.misplaced(&[("coarse", coarse.location()), ("fine", fine.location())])),
        }
    }
}
