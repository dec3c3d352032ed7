//! The global operators the global measures time ([`GlobalOp`]): what is
//! specific to each (how it is launched and timed, its host reference, its
//! minimal bytes); the rest of a global measure's rows is shared
//! ([`crate::bp`]).

use femquad::aux_space::AuxSpace;
use femquad::opencl::OpenClIntegrator;
use femquad::opencl::{
    Assembly, DeviceInfo, DeviceVector, KernelShape, KernelVariant, LaunchConfig,
};
use femquad::physics::PointwiseInfo;
use femquad::seam::Integrate;
use femquad::space::FunctionSpace;
use femquad::{Real, Result};

use crate::measure::Measure;
use crate::options::Plan;
use crate::perf_model::ResidualModel;

/// A global operator: device-resident input vector in, device-resident
/// output vector out, one kernel variant per assembly. Each is the
/// operator of one [`Measure`] other than BK; a new measure (`J(u)·v`,
/// `diag J(u)`) is a new variant with its arms below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalOp {
    /// `F(u)`, the residual (BP): `OpenClIntegrator`'s `Integrate::residual`.
    Residual,
}

/// What the global rows of a case are made of beyond the case: the
/// operator, how their configurations are chosen, and the element kernel's
/// default configuration (for the reference, and the rows of a case whose
/// setup failed).
#[derive(Clone, Copy)]
pub(crate) struct GlobalRun<'p> {
    pub(crate) g: GlobalOp,
    pub(crate) plan: &'p Plan,
    pub(crate) element_default: LaunchConfig,
}

impl GlobalOp {
    /// The global operator of `measure` (`None` for BK, the element kernel).
    pub fn of(measure: Measure) -> Option<GlobalOp> {
        match measure {
            Measure::Bk => None,
            Measure::Bp => Some(GlobalOp::Residual),
        }
    }

    /// The measure whose rows this operator makes.
    pub fn measure(self) -> Measure {
        match self {
            GlobalOp::Residual => Measure::Bp,
        }
    }

    /// What it computes, for messages.
    pub fn name(self) -> &'static str {
        match self {
            GlobalOp::Residual => "F(u)",
        }
    }

    /// The kernel variant it launches with `assembly` on the device `info`.
    pub fn variant(self, info: &DeviceInfo, assembly: Assembly) -> KernelVariant {
        match self {
            GlobalOp::Residual => KernelVariant::Residual(assembly.output(info)),
        }
    }

    /// Enqueues `output = A(input)` on the bound form `op`, with its bound
    /// assembly and configuration (nothing waited for or read).
    pub fn apply<R: Real>(
        self,
        op: &mut OpenClIntegrator<R>,
        input: &DeviceVector<R>,
        output: &mut DeviceVector<R>,
    ) -> Result<()> {
        match self {
            GlobalOp::Residual => op.residual(input, output),
        }
    }

    /// Applies it `n` times, each waited for, and returns each
    /// application's device times ([`Timed`]: the whole, from its first
    /// command's start to its last command's end, and its boundary terms'
    /// facet launches, profiling events; 0 where the device reports none).
    pub fn time<R: Real>(
        self,
        op: &mut OpenClIntegrator<R>,
        input: &DeviceVector<R>,
        output: &mut DeviceVector<R>,
        n: usize,
    ) -> Result<Vec<Timed>> {
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            self.apply(op, input, output)?;
            let (run, device) = (op.last_run(), op.device());
            times.push(Timed {
                total_ns: run.wait_ns(device)?.unwrap_or(0),
                facet_ns: run.facet_ns(device)?.unwrap_or(0),
            });
        }
        Ok(times)
    }

    /// The host reference of its output from the element vectors
    /// `element_vectors` of the same input (checked against the native
    /// integrator by the caller): for `F(u)` their assembly `Eᵀ`, summed
    /// in a fixed order.
    pub fn reference<R: Real>(
        self,
        space: &FunctionSpace,
        element_vectors: &[R],
    ) -> Result<Vec<R>> {
        match self {
            GlobalOp::Residual => {
                let mut f = vec![R::ZERO; space.n_dofs()];
                space.assemble(element_vectors, &mut f)?;
                Ok(f)
            }
        }
    }

    /// Minimal bytes and flops of one application with the kernel `shape`
    /// ([`crate::perf_model`]).
    pub fn model(
        self,
        shape: &KernelShape,
        aux: AuxSpace,
        physics: &PointwiseInfo,
        sizes: MeshSizes,
    ) -> (f64, f64) {
        match self {
            GlobalOp::Residual => {
                let m = ResidualModel::new(
                    shape,
                    aux,
                    physics,
                    sizes.cells,
                    sizes.nodes,
                    sizes.vertices,
                );
                (m.bytes, m.flops)
            }
        }
    }
}

/// The device times of one application of a global operator, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timed {
    /// The whole application.
    pub total_ns: u64,
    /// Its boundary terms' facet launches (0 without boundary terms).
    pub facet_ns: u64,
}

/// The sizes a global operator's model depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshSizes {
    /// Cells of the mesh.
    pub cells: usize,
    /// Nodes of the space.
    pub nodes: usize,
    /// Vertices of the mesh.
    pub vertices: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_and_operators() {
        assert_eq!(GlobalOp::of(Measure::Bk), None);
        assert_eq!(GlobalOp::of(Measure::Bp), Some(GlobalOp::Residual));
        assert_eq!(GlobalOp::Residual.measure(), Measure::Bp);
        assert_eq!(GlobalOp::Residual.name(), "F(u)");
    }

    #[test]
    fn the_residual_reference_sums_element_vectors() {
        use femquad::element::Element;
        use femquad::mesh::generate::{MeshOptions, unit_box};
        let mesh = unit_box(2, 2, &MeshOptions::default()).unwrap();
        let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let ev: Vec<f64> = (0..space.n_cell_dofs()).map(|k| k as f64 + 0.5).collect();
        let f = GlobalOp::Residual.reference(&space, &ev).unwrap();
        let mut expected = vec![0.0; space.n_dofs()];
        for c in 0..space.n_cells() {
            for (b, &node) in space.cell_nodes(c).iter().enumerate() {
                expected[node as usize] += ev[3 * c + b];
            }
        }
        assert_eq!(f, expected);
        let total: f64 = ev.iter().sum();
        assert!((f.iter().sum::<f64>() - total).abs() < 1e-12);
    }
}
