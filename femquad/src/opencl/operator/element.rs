//! The element kernel (BK, the paper's measure): cell-local coefficients in,
//! element vectors out, every cell on the device.

use opencl3::memory::Buffer;

use super::{CELL_PADDING, Inputs, OpenClOperator, event_ns};
use crate::discretization::CellInputs;
use crate::opencl::context::Transfer;
use crate::opencl::shape::{KernelVariant, LaunchConfig};
use crate::physics::Pointwise;
use crate::{Error, Real, Result};

impl<R: Real> OpenClOperator<R> {
    /// Element vectors of all cells into `out` (`n_cells·N_bt` entries,
    /// [`crate::layout::cell_dof`]) from the cell-local `inputs`, computed by
    /// the element kernel launched with `config` (`None`:
    /// [`OpenClOperator::config_for`]). Uploads the inputs, launches over
    /// every cell and reads the element vectors back; returns the kernel's
    /// device time in nanoseconds.
    ///
    /// This is the paper's measure of the element kernel alone; a residual
    /// never needs it ([`OpenClOperator::residual`] keeps everything on the
    /// device).
    ///
    /// # Errors
    /// Inputs of the wrong length or with non-finite values (named), a
    /// physics that does not fit the discretization, kernel build and launch
    /// errors.
    pub fn element_vectors<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        inputs: &CellInputs<'_, R>,
        out: &mut [R],
        config: Option<LaunchConfig>,
    ) -> Result<Option<u64>> {
        let n_cells = self.disc.n_cells();
        self.disc.check_physics(physics, inputs.constants.len())?;
        self.disc.check_inputs(inputs, n_cells, out)?;
        let key = self.compile(physics, KernelVariant::Element, config)?;
        let shape = self.compiled(&key)?.shape;
        self.prepare_geometry(&shape)?;
        self.upload_constants(inputs.constants)?;
        let n_bt = self.disc.n_bt();
        let cell_u = self.data.cell_u.take();
        let u = padded_upload(self, cell_u, inputs.u, n_bt, "coefficients")?;
        let aux_pc = self.disc.aux_per_cell();
        let aux = if aux_pc > 0 {
            let a = self.data.cell_aux.take();
            Some(padded_upload(
                self,
                a,
                inputs.aux,
                aux_pc,
                "auxiliary coefficients",
            )?)
        } else {
            None
        };
        self.element_vectors_buffer()?;
        let ev = self.data.element_vectors.take().expect("allocated above");
        let inputs = Inputs {
            u: &u,
            direction: None,
            aux: aux.as_ref(),
        };
        let launched = self.launch(&key, &inputs, &ev);
        let read = launched.and_then(|kernel| {
            let queue = self.device.live_queue()?;
            // SAFETY: blocking read of the first n_cells·N_bt values into `out`
            // (checked length), after the kernel (in-order queue).
            unsafe { queue.enqueue_read_buffer(&ev, opencl3::types::CL_BLOCKING, 0, out, &[]) }
                .map_err(|e| {
                    self.device.failure(
                        "clEnqueueReadBuffer",
                        "element vectors",
                        std::mem::size_of_val(out),
                        e,
                    )
                })?;
            self.device.count_read(std::mem::size_of_val(out));
            Ok(event_ns(&kernel))
        });
        self.data.element_vectors = Some(ev);
        self.data.cell_u = Some(u);
        self.data.cell_aux = aux;
        read
    }

    /// Launches the element kernel of `physics` with `config` `repetitions`
    /// times on the inputs the last [`OpenClOperator::element_vectors`] call
    /// left on the device, and returns each launch's device time in
    /// nanoseconds. For benchmarks and the autotuner.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if no element-kernel evaluation ran yet;
    /// kernel build and launch errors.
    pub fn time_element_kernel<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        config: LaunchConfig,
        repetitions: usize,
    ) -> Result<Vec<u64>> {
        let key = self.compile(physics, KernelVariant::Element, Some(config))?;
        let shape = self.compiled(&key)?.shape;
        self.prepare_geometry(&shape)?;
        let Some(u) = self.data.cell_u.take() else {
            return Err(Error::arg(
                "physics",
                "no element-kernel inputs on the device: call element_vectors first",
            ));
        };
        let aux = self.data.cell_aux.take();
        self.element_vectors_buffer()?;
        let ev = self.data.element_vectors.take().expect("allocated above");
        let mut run = || -> Result<Vec<u64>> {
            let mut times = Vec::with_capacity(repetitions);
            for _ in 0..repetitions {
                let inputs = Inputs {
                    u: &u,
                    direction: None,
                    aux: aux.as_ref(),
                };
                let e = self.launch(&key, &inputs, &ev)?;
                self.device.wait(&e, "element kernel")?;
                times.push(event_ns(&e).unwrap_or(0));
            }
            Ok(times)
        };
        let times = run();
        self.data.element_vectors = Some(ev);
        self.data.cell_u = Some(u);
        self.data.cell_aux = aux;
        times
    }
}

/// Writes the cell-local `values` (`per_cell` per cell) into `buffer` (or a
/// new one), padded with zeros by [`CELL_PADDING`] cells.
fn padded_upload<R: Real>(
    op: &OpenClOperator<R>,
    buffer: Option<Buffer<R>>,
    values: &[R],
    per_cell: usize,
    what: &str,
) -> Result<Buffer<R>> {
    let padded = (op.disc.n_cells() + CELL_PADDING) * per_cell;
    let mut buf = match buffer {
        Some(b) => b,
        None => {
            let mut b = op.device.alloc::<R>(padded, what)?;
            op.device
                .write(&mut b, &vec![R::ZERO; padded], Transfer::Coefficients, what)?;
            b
        }
    };
    op.device
        .write(&mut buf, values, Transfer::Coefficients, what)?;
    Ok(buf)
}
