//! [`Constraints`]: the fixed (Dirichlet) dofs of a problem and their
//! values, in the forms the solvers and the preconditioners read.

use rayon::prelude::*;

use crate::backend::{IndexSet, Vector};
use crate::error::check_len;
use crate::linalg::FixedDofs;
use crate::operator::Operator;
use crate::{Error, Real, Result};

/// The fixed dofs `D` of a field and their values `g_D`, built once: `D`
/// on the host ([`FixedDofs`]: increasing, without repetitions, checked; for
/// multigrid's levels and the coarse factorization) and as an [`IndexSet`]
/// where the operator lives (for the solvers' vector operations), and
///
/// ```text
/// u_D[d] = g[d]  (d ∈ D),   u_D[d] = 0  (d ∉ D)
/// ```
///
/// on the host (`f64`) and where the operator lives (precision `R`).
#[derive(Debug)]
pub(crate) struct Constraints<R: Real> {
    fixed: FixedDofs,
    values: Vec<f64>,
    base: Vector<R>,
    set: IndexSet,
}

impl<R: Real> Constraints<R> {
    /// The dofs `fixed_dofs` (any order; repetitions allowed) of `residual`'s
    /// space fixed to `values[dof]`; `values` is a full vector (`n_dofs`
    /// entries) whose other entries are ignored.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming
    /// `values` for a wrong length or `fixed_dofs` for a dof out of range
    /// ([`FixedDofs::new`]); [`Error::NonFinite`](crate::Error::NonFinite) if
    /// a fixed value is not finite; device errors.
    pub(crate) fn new(residual: &Operator<R>, fixed_dofs: &[u32], values: &[f64]) -> Result<Self> {
        let n = residual.space().n_dofs();
        check_len("values", values, n)?;
        let fixed = FixedDofs::new(n, fixed_dofs)?;
        let (base_host, base_r) = base_values::<R>(&fixed, values)?;
        let base = residual.vector_from(&base_r)?;
        let set = IndexSet::located_like(&base, fixed.dofs())?;
        Ok(Constraints {
            fixed,
            values: base_host,
            base,
            set,
        })
    }

    /// Replaces the values of the fixed dofs by `values[dof]` (`residual`
    /// the operator of [`Constraints::new`]; `values` a full
    /// vector, `n_dofs` entries, whose free entries are ignored); the dofs
    /// stay.
    ///
    /// # Errors
    /// As [`Constraints::new`], naming `values`.
    pub(crate) fn set_values(&mut self, residual: &Operator<R>, values: &[f64]) -> Result<()> {
        check_len("values", values, self.values.len())?;
        let (base_host, base_r) = base_values::<R>(&self.fixed, values)?;
        self.base = residual.vector_from(&base_r)?;
        self.values = base_host;
        Ok(())
    }

    /// The fixed dofs, on the host.
    pub(crate) fn fixed(&self) -> &FixedDofs {
        &self.fixed
    }

    /// `u_D` on the host.
    pub(crate) fn values(&self) -> &[f64] {
        &self.values
    }

    /// `u_D` where the operator lives.
    pub(crate) fn base(&self) -> &Vector<R> {
        &self.base
    }

    /// The fixed dofs where the operator lives.
    pub(crate) fn set(&self) -> &IndexSet {
        &self.set
    }
}

/// `u_D` of the full vector `values` (`u_D[d] = values[d]` for `d ∈ D`, 0
/// elsewhere), in `f64` and in `R`: parallel over the dofs.
///
/// # Errors
/// [`Error::NonFinite`] naming `values (fixed entries)` and the first
/// fixed dof whose value is not finite (the other entries are not read).
fn base_values<R: Real>(fixed: &FixedDofs, values: &[f64]) -> Result<(Vec<f64>, Vec<R>)> {
    if let Some(&d) = fixed
        .dofs()
        .iter()
        .find(|&&d| !values[d as usize].is_finite())
    {
        return Err(Error::NonFinite {
            name: "values (fixed entries)",
            index: d as usize,
            value: format!("{}", values[d as usize]),
        });
    }
    let host: Vec<f64> = values
        .par_iter()
        .enumerate()
        .map(|(d, &v)| if fixed.is_fixed(d) { v } else { 0.0 })
        .collect();
    let r = host.par_iter().map(|&v| R::from_f64(v)).collect();
    Ok((host, r))
}
