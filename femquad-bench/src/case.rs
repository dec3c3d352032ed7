//! The state of the case being run (crate-internal): what is fixed about
//! it (`CaseCtx`), its random data (`RandomData`) and what changes while
//! its rows are measured (`Work`: the operator, the last element vectors
//! and the native reference of the checked cells).

use std::collections::HashMap;

use femquad::Real;
use femquad::aux_space::AuxSpace;
use femquad::discretization::{CellInputs, CellTime};
use femquad::native::{BoundaryIntegrals, Execution, element_vectors_range};
use femquad::opencl::{
    KernelCase, KernelOptions, KernelShape, KernelVariant, LaunchConfig, OpenClIntegrator,
};
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use rayon::prelude::*;

use crate::BenchError;
use crate::host::{Host, check_windows, random_vec};
use crate::numbering::Numbering;
use crate::physics::{TIME_SIGMA, TIME_T};
use crate::row::Mode;
use crate::spec::{CaseSpec, PhysicsKind};

/// Everything fixed about the case being run, for making rows.
pub(crate) struct CaseCtx {
    pub(crate) spec: CaseSpec,
    pub(crate) mode: Mode,
    pub(crate) numbering: Numbering,
    pub(crate) n_cells: usize,
    pub(crate) n_dofs: usize,
    pub(crate) dim: usize,
    pub(crate) n_b: usize,
    pub(crate) n_comp: usize,
    pub(crate) n_q: usize,
    pub(crate) aux: AuxSpace,
    pub(crate) physics: &'static dyn PointwiseEvalBoth,
    pub(crate) options: KernelOptions,
}

impl CaseCtx {
    pub(crate) fn shape(
        &self,
        variant: KernelVariant,
        config: LaunchConfig,
    ) -> femquad::Result<KernelShape> {
        KernelShape::new(&self.case(), variant, config, &self.options)
    }

    pub(crate) fn case(&self) -> KernelCase {
        KernelCase {
            dim: self.dim,
            n_b: self.n_b,
            n_comp: self.n_comp,
            n_q: self.n_q,
            aux: self.aux,
            physics: self.physics.info(),
            precision: self.spec.precision,
        }
    }
}

/// The random data of a case: a global `u` in `[−1, 1)` and aux values in
/// `[0.5, 2)` (global nodal values of a field, or one per cell), for the
/// transient `heat` the time state's `b` in `[−1, 1)`, and their
/// cell-local forms for the element kernel. Never zeros.
pub(crate) struct RandomData<R> {
    /// Global `u`, `n_dofs` values.
    pub(crate) u: Vec<R>,
    /// `u` gathered to the cells.
    pub(crate) u_cells: Vec<R>,
    /// Global aux values (`[node][k]` for a field, `[cell][k]` for P0;
    /// empty without aux), as `Integrate::set_aux` takes them.
    pub(crate) aux: Vec<R>,
    /// Aux gathered to the cells (P0: the same values).
    pub(crate) aux_cells: Vec<R>,
    /// The time state's global `b` (`u_t = σ·u + b`) of a transient case
    /// ([`PhysicsKind::Heat`]), empty for a stationary one.
    pub(crate) time_b: Vec<R>,
    /// `b` gathered to the cells.
    pub(crate) time_b_cells: Vec<R>,
}

impl<R: Real> RandomData<R> {
    /// The data of `spec` on `host` (`n_cells` cells) from `seed`.
    pub(crate) fn new(
        host: &Host,
        spec: &CaseSpec,
        n_cells: usize,
        seed: u64,
    ) -> Result<Self, BenchError> {
        let space = host.space(spec.order, spec.n_comp())?;
        let u = random_vec::<R>(space.n_dofs(), -1.0, 1.0, seed, 1);
        let mut u_cells = vec![R::ZERO; space.n_cell_dofs()];
        space.gather(&u, &mut u_cells)?;
        let (aux, aux_cells) = match spec.aux() {
            AuxSpace::None => (Vec::new(), Vec::new()),
            AuxSpace::Field { n_comp } => {
                let aspace = host.space(spec.order, n_comp)?;
                let global = random_vec::<R>(aspace.n_dofs(), 0.5, 2.0, seed, 2);
                let mut local = vec![R::ZERO; aspace.n_cell_dofs()];
                aspace.gather(&global, &mut local)?;
                (global, local)
            }
            AuxSpace::Cell { n_comp } => {
                let values = random_vec::<R>(n_cells * n_comp, 0.5, 2.0, seed, 3);
                (values.clone(), values)
            }
        };
        let (time_b, time_b_cells) = if spec.physics == PhysicsKind::Heat {
            let b = random_vec::<R>(space.n_dofs(), -1.0, 1.0, seed, 5);
            let mut cells = vec![R::ZERO; space.n_cell_dofs()];
            space.gather(&b, &mut cells)?;
            (b, cells)
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(RandomData {
            u,
            u_cells,
            aux,
            aux_cells,
            time_b,
            time_b_cells,
        })
    }

    /// The cell-local time state of the element kernel and the native
    /// reference: `t` = [`TIME_T`], `σ` = [`TIME_SIGMA`] and `b` for a
    /// transient case, `None` for a stationary one.
    pub(crate) fn cell_time(&self) -> Option<CellTime<'_, R>> {
        (!self.time_b.is_empty()).then(|| CellTime {
            t: R::from_f64(TIME_T),
            sigma: R::from_f64(TIME_SIGMA),
            b: &self.time_b_cells,
        })
    }
}

/// The mutable state of the case being run.
pub(crate) struct Work<'w, R: Real> {
    /// The case's physics bound on the device.
    pub(crate) integ: &'w mut OpenClIntegrator<R>,
    pub(crate) inputs: &'w CellInputs<'w, R>,
    /// Element vectors of the last element-kernel evaluation.
    pub(crate) out: &'w mut Vec<R>,
    /// Whether `out` holds an evaluation of every cell that passed
    /// [`Work::check`] (the BP rows' reference is assembled from it).
    pub(crate) out_checked: bool,
    pub(crate) reference: &'w mut HashMap<(usize, usize), Vec<R>>,
    /// The boundary terms of `F(u)` (`--neumann`), bound on `integ` too.
    pub(crate) boundary: Option<&'w BoundaryIntegrals<R>>,
}

impl<R: Real> Work<'_, R> {
    /// Element vectors of every cell from the element kernel launched with
    /// `config`, into `out` (not checked: `out_checked` is the caller's).
    pub(crate) fn element_vectors(&mut self, config: LaunchConfig) -> femquad::Result<()> {
        self.integ.set_config(KernelVariant::Element, config)?;
        self.integ.set_cell_inputs(self.inputs)?;
        self.integ.integrate_cells()?;
        self.integ.read_element_vectors(self.out)
    }
}

impl<R: EvalPrecision> Work<'_, R> {
    /// Compares `out` with native element vectors on the check windows
    /// ([`check_windows`], `k` cells each): the max-norm relative
    /// difference, infinite if any output is not finite.
    pub(crate) fn check(
        &mut self,
        ctx: &CaseCtx,
        n_dev: usize,
        k: usize,
    ) -> Result<f64, BenchError> {
        let n_bt = ctx.n_b * ctx.n_comp;
        let apc = ctx.aux.values_per_cell(ctx.n_b);
        if !self.out.par_iter().all(|x| x.is_finite()) {
            return Ok(f64::INFINITY);
        }
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for w in check_windows(ctx.n_cells, n_dev, k.max(1)) {
            let key = (w.start, w.end);
            if !self.reference.contains_key(&key) {
                let sub = CellInputs {
                    u: &self.inputs.u[w.start * n_bt..w.end * n_bt],
                    aux: &self.inputs.aux[w.start * apc..w.end * apc],
                    constants: self.inputs.constants,
                    time: self.inputs.time.map(|time| CellTime {
                        b: &time.b[w.start * n_bt..w.end * n_bt],
                        ..time
                    }),
                };
                let mut r = vec![R::ZERO; w.len() * n_bt];
                element_vectors_range(
                    self.integ.discretization(),
                    R::physics(ctx.physics),
                    &sub,
                    w.clone(),
                    &mut r,
                    Execution::Parallel,
                )?;
                self.reference.insert(key, r);
            }
            let reference = &self.reference[&key];
            for (a, b) in self.out[w.start * n_bt..w.end * n_bt].iter().zip(reference) {
                num = num.max((a.to_f64() - b.to_f64()).abs());
                den = den.max(b.to_f64().abs());
            }
        }
        Ok(if den > 0.0 { num / den } else { num })
    }
}
