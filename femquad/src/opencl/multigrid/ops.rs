//! The multigrid kernels on the device: [`MultigridOps`] for
//! [`MultigridKernels`], each operation one launch.

use std::sync::Arc;

use super::MultigridKernels;
use super::transfer::DeviceTransfer;
use crate::opencl::vector::{DeviceIndices, DeviceVector, Launch, index_groups};
use crate::seam::{
    ChebyshevCoefficients, ChebyshevOperands, MultigridOps, ResidualUpdate, TransferGraph,
};
use crate::{Error, Real, Result};

impl<R: Real> MultigridKernels<R> {
    fn check(&self, name: &'static str, v: &DeviceVector<R>, want: usize) -> Result<()> {
        if !Arc::ptr_eq(v.device(), self.device()) {
            return Err(Error::arg(
                name,
                "lives on another device than the multigrid kernels",
            ));
        }
        if v.len() != want {
            return Err(Error::arg(
                name,
                format!("expected {want} entries, got {}", v.len()),
            ));
        }
        Ok(())
    }

    /// Number of nodes of a block array (`n_nodes·N_comp²` entries).
    fn block_nodes(&self, name: &'static str, blocks: &DeviceVector<R>) -> Result<usize> {
        let nc2 = self.n_comp() * self.n_comp();
        if !blocks.len().is_multiple_of(nc2) {
            return Err(Error::arg(
                name,
                format!(
                    "{} entries are not whole {nc}×{nc} blocks",
                    blocks.len(),
                    nc = self.n_comp()
                ),
            ));
        }
        Ok(blocks.len() / nc2)
    }
}

/// Checks that `v` lives on the transfer's device and has `want` entries.
fn check_transfer<R: Real>(
    t: &DeviceTransfer,
    name: &'static str,
    v: &DeviceVector<R>,
    want: usize,
) -> Result<()> {
    if !Arc::ptr_eq(v.device(), &t.device) {
        return Err(Error::arg(
            name,
            "lives on another device than the transfer's index arrays",
        ));
    }
    if v.len() != want {
        return Err(Error::arg(
            name,
            format!("expected {want} entries, got {}", v.len()),
        ));
    }
    Ok(())
}

impl<R: Real> MultigridOps<R> for MultigridKernels<R> {
    type Vector = DeviceVector<R>;
    type Indices = DeviceIndices;
    type Transfer = DeviceTransfer;

    fn n_comp(&self) -> usize {
        MultigridKernels::n_comp(self)
    }

    /// Dirichlet rows: for each fixed dof `n·N_comp + c`, row and column `c`
    /// of block `n` become those of `diagonal·I`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `blocks` (not whole blocks, another
    /// device) or `fixed` (a dof beyond the blocks' nodes, another device).
    fn block_fix(
        &self,
        blocks: &mut DeviceVector<R>,
        fixed: &DeviceIndices,
        diagonal: f64,
    ) -> Result<()> {
        let n_nodes = self.block_nodes("blocks", blocks)?;
        self.check("blocks", blocks, blocks.len())?;
        if !Arc::ptr_eq(fixed.device(), self.device()) {
            return Err(Error::arg(
                "fixed",
                "lives on another device than the blocks",
            ));
        }
        if fixed.bound() > n_nodes * self.n_comp() {
            return Err(Error::arg(
                "fixed",
                format!(
                    "dof {} is out of range for {n_nodes} nodes of {} components",
                    fixed.bound() - 1,
                    self.n_comp()
                ),
            ));
        }
        let k = self.lock();
        Launch::new(&k.block_fix)
            .mem(blocks.buffer())?
            .mem(fixed.buffer())?
            .value(fixed.len() as u64)?
            .value(R::from_f64(diagonal))?
            .run(
                self.device(),
                index_groups(fixed.len()),
                "block Dirichlet rows",
            )
    }

    /// `inv[n] = B_n⁻¹` for every node (Gauss–Jordan with partial pivoting);
    /// a singular block gets NaN entries (the caller finds them with one
    /// reduction, [`DeviceVector::first_non_finite`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `blocks` or `inv` for lengths that
    /// are not whole blocks or differ, or another device.
    fn block_invert(&self, inv: &mut DeviceVector<R>, blocks: &DeviceVector<R>) -> Result<()> {
        let n_nodes = self.block_nodes("blocks", blocks)?;
        self.check("blocks", blocks, blocks.len())?;
        self.check("inv", inv, blocks.len())?;
        let k = self.lock();
        Launch::new(&k.block_invert)
            .mem(inv.buffer())?
            .mem(blocks.buffer())?
            .value(n_nodes as u64)?
            .run(self.device(), index_groups(n_nodes), "block inverse")
    }

    /// `y ← a·y + b·D⁻¹r`, `D⁻¹` given by its blocks `inv` (one launch).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `inv`, `r` or `y` for lengths that
    /// do not fit one field, or another device.
    fn block_update(
        &self,
        y: &mut DeviceVector<R>,
        a: f64,
        inv: &DeviceVector<R>,
        r: &DeviceVector<R>,
        b: f64,
    ) -> Result<()> {
        let n_nodes = self.block_nodes("inv", inv)?;
        self.check("inv", inv, inv.len())?;
        let n = n_nodes * self.n_comp();
        self.check("r", r, n)?;
        self.check("y", y, n)?;
        let k = self.lock();
        Launch::new(&k.block_update)
            .mem(y.buffer())?
            .mem(inv.buffer())?
            .mem(r.buffer())?
            .value(n as u64)?
            .value(R::from_f64(a))?
            .value(R::from_f64(b))?
            .run(self.device(), index_groups(n), "block Jacobi update")
    }

    /// `y ← A x`, one work-group per row.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the operand of a wrong length or
    /// on another device.
    fn dense_apply(
        &self,
        y: &mut DeviceVector<R>,
        a: &DeviceVector<R>,
        x: &DeviceVector<R>,
    ) -> Result<()> {
        let n = x.len();
        self.check("x", x, n)?;
        self.check("a", a, n * n)?;
        self.check("y", y, n)?;
        let k = self.lock();
        Launch::new(&k.dense_apply)
            .mem(y.buffer())?
            .mem(a.buffer())?
            .mem(x.buffer())?
            .value(n as u64)?
            .run(self.device(), n, "dense matrix-vector product")
    }

    /// The fused Chebyshev step, one work-item per node.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the operand of a wrong length or
    /// on another device.
    fn chebyshev_step(
        &self,
        o: ChebyshevOperands<'_, DeviceVector<R>>,
        k: ChebyshevCoefficients,
    ) -> Result<()> {
        let n_nodes = self.block_nodes("inv", o.inv)?;
        self.check("inv", o.inv, o.inv.len())?;
        let n = n_nodes * self.n_comp();
        for (name, v) in [
            ("x", &*o.x),
            ("d", &*o.d),
            ("r", &*o.r),
            ("b", o.b),
            ("w", o.w),
        ] {
            self.check(name, v, n)?;
        }
        let residual: u32 = match k.residual {
            ResidualUpdate::FromRhs => 0,
            ResidualUpdate::RhsMinusW => 1,
            ResidualUpdate::MinusW => 2,
        };
        let kernels = self.lock();
        Launch::new(&kernels.chebyshev_step)
            .mem(o.x.buffer())?
            .mem(o.d.buffer())?
            .mem(o.r.buffer())?
            .mem(o.b.buffer())?
            .mem(o.w.buffer())?
            .mem(o.inv.buffer())?
            .value(n_nodes as u64)?
            .value(R::from_f64(k.a))?
            .value(R::from_f64(k.c))?
            .value(residual)?
            .value(u32::from(k.x_from_zero))?
            .run(self.device(), index_groups(n_nodes), "Chebyshev step")
    }

    /// `x[i]` = uniform in `[−1, 1)` from `seed` and `i` (the numbers of
    /// [`crate::multigrid::fill_random`] on the host).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` on another device.
    fn fill_random(&self, x: &mut DeviceVector<R>, seed: u64) -> Result<()> {
        self.check("x", x, x.len())?;
        let k = self.lock();
        Launch::new(&k.fill_random)
            .mem(x.buffer())?
            .value(x.len() as u64)?
            .value(seed)?
            .run(self.device(), index_groups(x.len()), "random fill")
    }

    /// Uploads `graph` (three array transfers).
    fn transfer(&self, graph: &Arc<TransferGraph>) -> Result<DeviceTransfer> {
        if graph.n_comp != self.n_comp() {
            return Err(Error::arg(
                "kernels",
                format!(
                    "built for {} components, the transfer has {}",
                    self.n_comp(),
                    graph.n_comp
                ),
            ));
        }
        DeviceTransfer::new(self.device(), graph)
    }

    /// `fine ← fine + P̃ coarse` (one launch).
    fn prolong_add(
        &self,
        t: &DeviceTransfer,
        fine: &mut DeviceVector<R>,
        coarse: &DeviceVector<R>,
    ) -> Result<()> {
        check_transfer(t, "fine", fine, t.n_fine_dofs())?;
        check_transfer(t, "coarse", coarse, t.n_coarse_dofs())?;
        let k = self.lock();
        Launch::new(&k.prolong_add)
            .mem(fine.buffer())?
            .mem(coarse.buffer())?
            .mem(&t.edges)?
            .mem(&t.coarse_fixed)?
            .mem(&t.fine_fixed)?
            .value(t.n_coarse_dofs() as u64)?
            .value(t.n_fine_dofs() as u64)?
            .run(
                self.device(),
                index_groups(t.n_fine_dofs()),
                "multigrid prolongation",
            )
    }

    /// `coarse ← P̃ᵀ b` or `P̃ᵀ (b − w)` (one launch).
    fn restrict(
        &self,
        t: &DeviceTransfer,
        coarse: &mut DeviceVector<R>,
        b: &DeviceVector<R>,
        w: Option<&DeviceVector<R>>,
    ) -> Result<()> {
        check_transfer(t, "coarse", coarse, t.n_coarse_dofs())?;
        check_transfer(t, "fine", b, t.n_fine_dofs())?;
        if let Some(w) = w {
            check_transfer(t, "w", w, t.n_fine_dofs())?;
        }
        let k = self.lock();
        // without w the kernel reads b only (w is not read)
        Launch::new(&k.restrict)
            .mem(coarse.buffer())?
            .mem(b.buffer())?
            .mem(w.unwrap_or(b).buffer())?
            .mem(&t.offsets)?
            .mem(&t.incident)?
            .mem(&t.coarse_fixed)?
            .mem(&t.fine_fixed)?
            .value(t.n_coarse_dofs() as u64)?
            .value(u32::from(w.is_some()))?
            .run(
                self.device(),
                index_groups(t.n_coarse_dofs()),
                "multigrid restriction",
            )
    }

    /// `coarse ← fine[..n_coarse_dofs]` (one launch).
    fn inject(
        &self,
        t: &DeviceTransfer,
        coarse: &mut DeviceVector<R>,
        fine: &DeviceVector<R>,
    ) -> Result<()> {
        check_transfer(t, "coarse", coarse, t.n_coarse_dofs())?;
        check_transfer(t, "fine", fine, t.n_fine_dofs())?;
        let k = self.lock();
        Launch::new(&k.inject)
            .mem(coarse.buffer())?
            .mem(fine.buffer())?
            .value(t.n_coarse_dofs() as u64)?
            .run(
                self.device(),
                index_groups(t.n_coarse_dofs()),
                "multigrid injection",
            )
    }
}
