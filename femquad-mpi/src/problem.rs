//! [`DistProblem`]: a [`DistOperator`] with Dirichlet conditions and a
//! preconditioner, a [`TimeProblem`] — so that femquad's own
//! [`TimeIntegrator`](femquad::time::TimeIntegrator) (backward Euler, θ,
//! BDF2; fixed or adaptive steps) advances it over all ranks with the same
//! code as a serial [`DirichletProblem`](femquad::solve::DirichletProblem).
//!
//! # A step
//! With `D` the fixed local entries and `g` their values, a step's system
//! is the serial problem's,
//!
//! ```text
//! G(y)_f = F(t, y, σ·y + b)_f,   G(y)_D = y_D − g_D,
//! J_G(y)·v = (σ·∂F/∂u_t + ∂F/∂u)(y)·v on the free rows,  v_D on D,
//! ```
//!
//! (`F`, `J·v` from [`DistOperator`], the time state bound by
//! [`DistOperator::set_time`]), solved by femquad's
//! [`newton_krylov_relinearized`] on [`DistVector`]s with exact Jacobian
//! products, every GMRES right-preconditioned by a [`StepPreconditioner`]
//! set up at each Newton iterate. Every method is collective, its errors the
//! same on every rank.
//!
//! # Output
//! The series of [`TimeIntegrator::with_output`](femquad::time::TimeIntegrator::with_output)
//! is a [`PvtuSeries`]: a `.pvtu` per recorded step, listed with its time
//! in a `.pvd` on rank 0.

use std::cell::RefCell;
use std::rc::Rc;

use mpi::datatype::Equivalence;

use femquad::backend::IndexSet;
use femquad::linalg::{Jacobi, LinearOperator};
use femquad::solve::{
    Jacobian, NewtonOptions, NewtonPreconditioner, NewtonStats, newton_krylov_relinearized,
};
use femquad::time::{FormKind, TimeProblem};
use femquad::vector::VectorOps;
use femquad::{Error, Real, Result};

use crate::multigrid::DistMultigrid;
use crate::operator::DistOperator;
use crate::output::PvtuSeries;
use crate::solve::inverse_diagonal;
use crate::vector::DistVector;

/// The preconditioner of a [`DistProblem`]'s Newton steps, set up for the
/// step Jacobian at every Newton iterate.
pub enum StepPreconditioner<R: Real> {
    /// Jacobi: the inverse of the Jacobian's diagonal (1 at the fixed
    /// dofs), as [`solve_linear`](crate::solve::solve_linear)'s. For a
    /// scalar field the serial `Preconditioner::Jacobi` (point blocks of
    /// one entry).
    Jacobi,
    /// A [`DistMultigrid`] of the same form and fixed dofs on a hierarchy
    /// whose finest level is the problem's mesh (its levels take the time
    /// state too, [`DistMultigrid::set_time`]).
    Multigrid(Box<DistMultigrid<R>>),
}

/// A [`DistOperator`] `F` with the local entries `fixed` fixed to values
/// `g` (see the [module documentation](self)), advanced in time by
/// femquad's [`TimeIntegrator`](femquad::time::TimeIntegrator). Its host
/// values ([`TimeProblem`]) are each rank's local entries (owned, then
/// ghosts).
pub struct DistProblem<R: Real> {
    op: DistOperator<R>,
    /// The fixed local entries, on the host and where the vectors live.
    fixed_entries: Vec<u32>,
    fixed: IndexSet,
    /// `g` on the fixed entries, 0 elsewhere: on the host and where the
    /// vectors live.
    values: Vec<f64>,
    base: DistVector<R>,
    preconditioner: StepPreconditioner<R>,
    kind: FormKind,
}

impl<R: Real + Equivalence> DistProblem<R> {
    /// Collective: `op` with the local entries `fixed` marks (one flag per
    /// local entry, e.g. [`DistMesh::mask_where`](crate::DistMesh::mask_where))
    /// fixed to `values` (one per local entry; the free ones ignored),
    /// preconditioned by `preconditioner`.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `fixed` or `values`
    /// for another length than the rank's local entries, `preconditioner`
    /// for a multigrid whose finest mesh is not `op`'s; [`Error::NonFinite`]
    /// naming `values` (with the serial dof) for a non-finite fixed value;
    /// device errors.
    pub fn new(
        op: DistOperator<R>,
        fixed: &[bool],
        values: &[f64],
        mut preconditioner: StepPreconditioner<R>,
    ) -> Result<Self> {
        let mesh = op.mesh().clone();
        let ranks = mesh.ranks();
        let base = op.vector()?;
        let n_local = base.n_local();
        let checked = if fixed.len() != n_local {
            Err(Error::arg(
                "fixed",
                format!(
                    "expected one flag per local entry ({n_local}), got {}",
                    fixed.len()
                ),
            ))
        } else if let StepPreconditioner::Multigrid(mg) = &mut preconditioner
            && !Rc::ptr_eq(mg.finest_operator().mesh(), &mesh)
        {
            Err(Error::arg(
                "preconditioner",
                "the multigrid's finest level is not the operator's DistMesh: build the \
                 operator on the hierarchy's finest mesh (DistHierarchy::finest)",
            ))
        } else {
            Ok(())
        };
        ranks.agree(checked)?;
        let fixed_entries: Vec<u32> = (0..n_local as u32).filter(|&i| fixed[i as usize]).collect();
        let fixed = ranks.agree(base.index_set(&fixed_entries))?;
        let kind = form_kind(&op);
        let mut problem = DistProblem {
            op,
            fixed_entries,
            fixed,
            values: Vec::new(),
            base,
            preconditioner,
            kind,
        };
        problem.set_fixed_values(values)?;
        Ok(problem)
    }

    /// The operator `F`.
    pub fn operator(&self) -> &DistOperator<R> {
        &self.op
    }

    /// `g` on the fixed local entries, 0 on the free ones.
    pub fn fixed_values(&self) -> &[f64] {
        &self.values
    }
}

/// Collective: the kind of the form of every rank's operator — transient
/// if one rank's is, affine if every rank's is, the physics' name that of
/// the lowest rank with cells (a rank without cells has no form).
fn form_kind<R: Real + Equivalence>(op: &DistOperator<R>) -> FormKind {
    let own = op.form().map(FormKind::of);
    let ranks = op.mesh().ranks();
    let flags = own.as_ref().map_or(0, |k| {
        1 | (u64::from(k.transient) << 1) | (u64::from(k.affine) << 2)
    });
    let flags = ranks.all_gather_u64(flags);
    let name: Vec<u32> = own
        .as_ref()
        .map_or(Vec::new(), |k| k.physics.chars().map(u32::from).collect());
    let names = ranks.all_gather_u32s_varcount(&name);
    let with_cells = || flags.iter().filter(|&&f| f & 1 == 1);
    let physics = flags
        .iter()
        .zip(&names)
        .find(|&(&f, _)| f & 1 == 1)
        .map_or(String::new(), |(_, name)| {
            name.iter().filter_map(|&c| char::from_u32(c)).collect()
        });
    FormKind {
        physics,
        transient: with_cells().any(|&f| f & 2 != 0),
        affine: with_cells().all(|&f| f & 4 != 0),
    }
}

impl<R: Real + Equivalence> TimeProblem for DistProblem<R> {
    type Vector = DistVector<R>;
    type Series = PvtuSeries;

    fn form_kind(&self) -> FormKind {
        self.kind.clone()
    }

    fn interpolate(&self, g: &(dyn Fn(&[f64], &mut [f64]) + Sync)) -> Vec<f64> {
        let layout = self.op.mesh().layout();
        let nc = self.op.n_comp();
        let mut values = vec![0.0; layout.n_local() * nc];
        for (x, out) in layout
            .coordinates
            .chunks_exact(layout.dim.max(1))
            .zip(values.chunks_exact_mut(nc))
        {
            g(x, out);
        }
        values
    }

    fn set_fixed_values(&mut self, values: &[f64]) -> Result<()> {
        let ranks = self.op.mesh().ranks();
        let n_local = self.base.n_local();
        let checked = if values.len() != n_local {
            Err(Error::arg(
                "values",
                format!(
                    "expected one value per local entry ({n_local}), got {}",
                    values.len()
                ),
            ))
        } else {
            match self
                .fixed_entries
                .iter()
                .find(|&&i| !values[i as usize].is_finite())
            {
                Some(&i) => Err(Error::NonFinite {
                    name: "values",
                    index: self.global_dof(i as usize),
                    value: values[i as usize].to_string(),
                }),
                None => Ok(()),
            }
        };
        ranks.agree(checked)?;
        let mut base = vec![0.0; n_local];
        for &i in &self.fixed_entries {
            base[i as usize] = values[i as usize];
        }
        let base_r: Vec<R> = base.iter().map(|&v| R::from_f64(v)).collect();
        ranks.agree(self.base.set_local_from_host(&base_r))?;
        self.values = base;
        Ok(())
    }

    fn initial_vector(&self, u0: &[f64]) -> Result<DistVector<R>> {
        let ranks = self.op.mesh().ranks();
        let n_local = self.base.n_local();
        let checked = (u0.len() != n_local).then(|| {
            Error::arg(
                "u0",
                format!(
                    "expected one value per local entry of this rank ({n_local}), got {}",
                    u0.len()
                ),
            )
        });
        ranks.agree(checked.map_or(Ok(()), Err))?;
        let mut start: Vec<R> = u0.iter().map(|&v| R::from_f64(v)).collect();
        for &i in &self.fixed_entries {
            start[i as usize] = R::from_f64(self.values[i as usize]);
        }
        let mut u = self.op.vector()?;
        ranks.agree(u.set_local_from_host(&start))?;
        Ok(u)
    }

    fn host_values(&self, u: &DistVector<R>) -> Result<Vec<f64>> {
        // ghosts current: every rank's local entries are the owners' values
        let mut current = u.try_clone()?;
        current.ghost_update()?;
        let values = self.op.mesh().ranks().agree(current.local_to_host())?;
        Ok(values.iter().map(|v| v.to_f64()).collect())
    }

    fn set_time(&mut self, t: f64, sigma: f64, b: &DistVector<R>) -> Result<()> {
        self.op.set_time(t, sigma, b)?;
        match &mut self.preconditioner {
            StepPreconditioner::Multigrid(mg) => mg.set_time(t, sigma, b),
            StepPreconditioner::Jacobi => Ok(()),
        }
    }

    fn solve_step(
        &mut self,
        guess: &DistVector<R>,
        options: &NewtonOptions,
    ) -> Result<(DistVector<R>, NewtonStats)> {
        let mesh = self.op.mesh().clone();
        let ranks = mesh.ranks();
        let mut u = guess.try_clone()?;
        ranks.agree(u.local_mut().copy_at(&self.fixed, self.base.local()))?;
        let options = NewtonOptions {
            residual_epsilon: options.residual_epsilon.max(R::EPSILON.to_f64()),
            ..*options
        };
        let DistProblem {
            op,
            fixed_entries,
            fixed,
            base,
            preconditioner,
            kind,
            ..
        } = self;
        let op = RefCell::new(op);
        let fixed: &IndexSet = fixed;
        let residual = |u: &DistVector<R>, r: &mut DistVector<R>| -> Result<()> {
            op.borrow_mut().apply(u, r)?;
            // r_D = u_D − g_D; g is zero off D, so the axpy changes only D
            ranks.agree(r.local_mut().copy_at(fixed, u.local()))?;
            r.axpy(-1.0, base)
        };
        let mut action = |u: &DistVector<R>, v: &DistVector<R>, jv: &mut DistVector<R>| {
            op.borrow_mut().jacobian_action(u, v, jv)?;
            ranks.agree(jv.local_mut().copy_at(fixed, v.local()))
        };
        let mut pre = Linearized {
            op: &op,
            fixed_entries,
            choice: preconditioner,
            jacobi: None,
        };
        let stats = newton_krylov_relinearized(
            residual,
            Jacobian::Exact(&mut action),
            &mut pre,
            &mut u,
            &options,
        )
        .map_err(|e| match e {
            // the Jacobian products and residual are the physics'
            Error::InvalidArgument {
                name: "jacobian" | "residual",
                reason,
            } => Error::arg(
                "physics",
                format!("Newton–Krylov on `{}`: {reason}", kind.physics),
            ),
            other => other,
        })?;
        Ok((u, stats))
    }

    fn preconditioner_cycles(&self) -> usize {
        match &self.preconditioner {
            StepPreconditioner::Multigrid(mg) => mg.cycles(),
            StepPreconditioner::Jacobi => 0,
        }
    }

    fn record(
        &self,
        series: &mut PvtuSeries,
        step: usize,
        t: f64,
        u: &DistVector<R>,
        always: bool,
    ) -> Result<bool> {
        if always {
            series.record_always(&self.op, step, t, u)?;
            Ok(true)
        } else {
            series.record(&self.op, step, t, u)
        }
    }
}

impl<R: Real + Equivalence> DistProblem<R> {
    /// The serial (global) dof of local entry `i`.
    fn global_dof(&self, i: usize) -> usize {
        let nc = self.op.n_comp();
        self.op.mesh().layout().global_vertices[i / nc] as usize * nc + i % nc
    }
}

/// The step preconditioner during one Newton solve: set up at each iterate
/// (`linearize`), then applied.
struct Linearized<'a, 'o, R: Real> {
    op: &'a RefCell<&'o mut DistOperator<R>>,
    fixed_entries: &'a [u32],
    choice: &'a mut StepPreconditioner<R>,
    /// Jacobi's inverse diagonal at the last iterate.
    jacobi: Option<Jacobi<DistVector<R>>>,
}

impl<R: Real + Equivalence> LinearOperator<DistVector<R>> for Linearized<'_, '_, R> {
    fn apply(&mut self, r: &DistVector<R>, z: &mut DistVector<R>) -> Result<()> {
        match (&mut *self.choice, &mut self.jacobi) {
            (StepPreconditioner::Multigrid(mg), _) => mg.apply(r, z),
            (StepPreconditioner::Jacobi, Some(jacobi)) => jacobi.apply(r, z),
            (StepPreconditioner::Jacobi, None) => Err(Error::internal(
                "the Jacobi preconditioner was applied before its setup",
            )),
        }
    }
}

impl<R: Real + Equivalence> NewtonPreconditioner<DistVector<R>> for Linearized<'_, '_, R> {
    fn linearize(&mut self, u: &DistVector<R>) -> Result<()> {
        match &mut *self.choice {
            StepPreconditioner::Multigrid(mg) => mg.setup(u),
            StepPreconditioner::Jacobi => {
                let mut op = self.op.borrow_mut();
                let inverse = inverse_diagonal(&mut op, u, self.fixed_entries)?;
                self.jacobi = Some(Jacobi::new(inverse));
                Ok(())
            }
        }
    }
}
