//! The element kernel (BK, the paper's measure): cell-local coefficients in,
//! element vectors out, every cell on the device. Three steps, so that a
//! benchmark can launch the kernel alone on inputs already on the device:
//! upload the inputs, launch, read the element vectors back.

use opencl3::memory::Buffer;

use super::{CELL_PADDING, Inputs, KernelKey, OpenClOperator};
use crate::discretization::CellInputs;
use crate::error::check_len;
use crate::opencl::context::Transfer;
use crate::opencl::timing::Run;
use crate::real::check_finite;
use crate::{Error, Real, Result};

impl<R: Real> OpenClOperator<R> {
    /// Uploads the cell-local `u`, aux and time state of `inputs` (padded
    /// by [`CELL_PADDING`] cells), kept until the next call; the constants
    /// are the caller's (the bound form's).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `u`, `aux` or `b` (length, with
    /// the expected one), [`Error::NonFinite`] with the index; device
    /// memory.
    pub(super) fn set_cell_inputs(&mut self, inputs: &CellInputs<'_, R>) -> Result<()> {
        let n_cells = self.disc.n_cells();
        let (n_bt, aux_pc) = (self.disc.n_bt(), self.disc.aux_per_cell());
        check_len("u", inputs.u, n_cells * n_bt)?;
        check_len("aux", inputs.aux, n_cells * aux_pc)?;
        check_finite("u", inputs.u)?;
        check_finite("aux", inputs.aux)?;
        let cell_u = self.data.cell_u.take();
        self.data.cell_u = Some(self.padded_upload(cell_u, inputs.u, n_bt, "coefficients")?);
        if aux_pc > 0 {
            let a = self.data.cell_aux.take();
            let what = "auxiliary coefficients";
            self.data.cell_aux = Some(self.padded_upload(a, inputs.aux, aux_pc, what)?);
        }
        self.set_cell_time(inputs.time.as_ref())
    }

    /// Enqueues the element kernel `key` on the inputs
    /// [`OpenClOperator::set_cell_inputs`] left on the device, into the
    /// element-vector buffer.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `inputs` if none were set; launch
    /// errors.
    pub(super) fn enqueue_element(&mut self, key: &KernelKey) -> Result<()> {
        let Some(u) = self.data.cell_u.take() else {
            return Err(Error::arg(
                "inputs",
                "no cell-local inputs on the device: call OpenClIntegrator::set_cell_inputs \
                 first",
            ));
        };
        let aux = self.data.cell_aux.take();
        let launched = self.launch_element(key, &u, aux.as_ref());
        self.data.cell_u = Some(u);
        self.data.cell_aux = aux;
        let (event, launch) = launched?;
        self.last = Run {
            events: vec![event],
            launch: Some(launch),
            facets: Vec::new(),
        };
        self.data.element_vectors_of_cells = true;
        Ok(())
    }

    /// Launches the element kernel `key` on the cell-local `u` and `aux`
    /// into the element-vector buffer (allocated on first use).
    fn launch_element(
        &mut self,
        key: &KernelKey,
        u: &Buffer<R>,
        aux: Option<&Buffer<R>>,
    ) -> Result<(opencl3::event::Event, crate::opencl::LaunchRecord)> {
        self.element_vectors_buffer()?;
        let Some(ev) = self.data.element_vectors.take() else {
            return Err(Error::internal(
                "the element-vector buffer was not allocated",
            ));
        };
        let inputs = Inputs {
            u,
            direction: None,
            aux,
        };
        let launched = self.launch(key, &inputs, &ev);
        self.data.element_vectors = Some(ev);
        launched
    }

    /// Reads the element vectors of the last
    /// [`OpenClOperator::enqueue_element`] into `out` (`n_cells·N_bt`
    /// entries, [`crate::layout::cell_dof`]), waiting for it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `out` (length) or, if the element
    /// kernel has not run since the last deterministic residual, naming
    /// `out` with what to call first; device errors.
    pub(super) fn read_element_vectors(&self, out: &mut [R]) -> Result<()> {
        check_len("out", out, self.disc.n_cells() * self.disc.n_bt())?;
        let (Some(ev), true) = (
            &self.data.element_vectors,
            self.data.element_vectors_of_cells,
        ) else {
            return Err(Error::arg(
                "out",
                "no element vectors of the element kernel on the device: call \
                 OpenClIntegrator::integrate_cells first",
            ));
        };
        self.device.read(ev, out, "element vectors")
    }

    /// Writes the cell-local `values` (`per_cell` per cell) into `buffer`
    /// (or a new one), padded with zeros by [`CELL_PADDING`] cells.
    pub(super) fn padded_upload(
        &self,
        buffer: Option<Buffer<R>>,
        values: &[R],
        per_cell: usize,
        what: &str,
    ) -> Result<Buffer<R>> {
        let padded = (self.disc.n_cells() + CELL_PADDING) * per_cell;
        let mut buf = match buffer {
            Some(b) => b,
            None => {
                let mut b = self.device.alloc::<R>(padded, what)?;
                let zeros = vec![R::ZERO; padded];
                self.device
                    .write(&mut b, &zeros, Transfer::Coefficients, what)?;
                b
            }
        };
        self.device
            .write(&mut buf, values, Transfer::Coefficients, what)?;
        Ok(buf)
    }
}
