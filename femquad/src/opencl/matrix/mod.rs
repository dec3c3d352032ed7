//! A sparse matrix on the device ([`DeviceCsr`]): the Jacobian `J(u)` of a
//! bound form assembled on the device from its element matrices, and its
//! kernels — `y = A x` and the point-block diagonal.
//!
//! # Layout
//! Compressed sparse rows on a [`SparsityPattern`] of a space
//! ([`SparsityPattern::of_space`]: rows and columns the space's dofs,
//! interleaved node-major, columns increasing), its columns stored by
//! node: `row_ptr` (`n_rows + 1`), and the node columns
//! ([`SparsityPattern::node_columns`]) `node_ptr` (`n_nodes + 1`) and
//! `node_col` (`nnz / N_comp²`) — entry `k` of row `i = n·N_comp + fc` is
//! the column `node_col[node_ptr[n] + k / N_comp]·N_comp + k % N_comp` —
//! all as `uint`; the values (`nnz`) in the operator's precision, uploaded
//! once; assembly rewrites the values only. The scalar column indices stay
//! on the host (for `N_comp = 1` they are the node columns).
//!
//! # Assembly (`kernels/element_matrix.cl`)
//! One work-item per cell computes its element matrix
//!
//! ```text
//! K_c[a·N_comp + fc][b·N_comp + gc] = Σ_q w_q |det J_c| (δf0_fc φ_a + δf1_fc · ∇φ_a),
//! (δf0, δf1) = the physics' tangent at u in the direction φ_b e_gc,
//! ```
//!
//! column block by column block (all `N_bt` columns), and sums it into
//! `A[node(c,a)·N_comp + fc][node(c,b)·N_comp + gc]` through a map computed
//! once on the host from the pattern
//! ([`SparsityPattern::node_pair_positions`]: the position of
//! `(node(c,a)·N_comp, node(c,b)·N_comp)` for every cell and pair of its
//! slots; entry `(fc, gc)` is `fc` row lengths and `gc` further). The
//! [`Assembly`] keeps its meaning:
//!
//! * [`Assembly::Atomic`]: the entries are added with atomics into the
//!   zeroed values (one launch; the order of the additions varies);
//! * [`Assembly::Deterministic`]: the element matrices are written, then a
//!   second launch (one work-item per row) sums them through the node →
//!   cell-slot incidence in increasing cell order — the order of the host
//!   assembly ([`crate::sparse::assemble_into`]), bitwise the same on every
//!   run.
//!
//! A form's boundary terms add their facets' element matrices after the
//! cells' (`facet_matrices` in `kernels/facet_integrate.cl`: the boundary
//! tangent along `φ_b e_gc` with every row `a`, at the positions of the
//! facet's cell in the same map), atomically, or per facet and then summed
//! per row in the fixed order of the facets' node incidence — so every
//! value is the cells' sum followed by the facets', bitwise the same on
//! every run.
//!
//! # Kernels of the matrix (`kernels/spmv.cl`)
//! `y = A x` by teams of `L` work-items per row ("CSR-vector",
//! [`lanes::lanes_for`] picks `L ∈ {1, 2, 4, 8, 16, 32}` from the bytes of
//! values in a mean row when the matrix is made, [`DeviceCsr::set_lanes`]
//! overrides it):
//! lane `j` sums the row's entries `j, j + L, …` in column order, then the
//! team's partial sums are added by a fixed tree in local memory, so two
//! applies give the same bits (the order depends on the row and `L` only).
//!
//! Bytes moved per stored entry: its value (`sizeof(R)`), read once and
//! coalesced — a team loads one contiguous row segment and neighbouring
//! teams the next rows — and its share of a node column, `4 / N_comp²`
//! (the `N_comp` rows of a node read the same node columns in
//! neighbouring teams, so from cache); plus the gathered `x[col]` (from
//! cache on a locality-numbered mesh); per row, its `row_ptr` pair and
//! `y`. Scalar CSR reads a 4-byte column index per entry instead: `R + 4`
//! against `R + 4 / N_comp²` bytes, the same for a scalar field, 1.6×
//! (2D) and 1.8× (3D) fewer for Lamé in `f32`, 1.3× and 1.4× in `f64`.
//! SELL-C-σ would move the same bytes per entry plus the padding of each
//! slice to its longest row, and needs its own layout (the element →
//! position map, the download and the diagonal all read CSR positions);
//! with the near-uniform rows of a finite-element matrix it buys nothing
//! CSR-vector does not already get. With `L = 1` the kernel is the
//! row-per-work-item one, which strides a warp's loads by the row length
//! (uncoalesced for the 27–81 entries of a Lamé row).
//!
//! A Chebyshev step of the multigrid smoother runs fused with its SpMV
//! (`spmv_chebyshev_step`, [`DeviceCsr::chebyshev_step`]): a team of `L`
//! work-items per node sums the node's `N_comp` rows as the SpMV does (the
//! same function, the same bits), then updates the node's residual,
//! direction and iterate — one launch where the SpMV and the step were two,
//! and `w = A d` never written.
//!
//! The point-block diagonal is found by a binary search per entry, of the
//! node among the node's own node columns.

use std::borrow::Cow;
use std::sync::Arc;

use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

use super::context::{Device, Transfer};
use super::launch::Launch;
use super::operator::{Assembly, OpenClIntegrator};
use super::source::spmv_source;
use super::vector::DeviceVector;
use crate::seam::{AssembledMatrix, FusedChebyshevStep};
use crate::sparse::{CsrMatrix, SparsityPattern};
use crate::{Error, Real, Result};

pub mod lanes;
#[cfg(test)]
mod tests;

use lanes::{check_lanes, lanes_for};

/// Work-items per work-group of the matrix kernels (`SPMV_GROUP` in
/// `kernels/spmv.cl`, which sizes the SpMV's local memory by it).
const GROUP: usize = 128;

/// What assembly from element matrices reads, uploaded on the first
/// assembly and kept.
struct AssemblyMaps<R> {
    /// `[cell][a][b]`: the position of `(node_a·N_comp, node_b·N_comp)`.
    positions: Buffer<u32>,
    /// Cells of the space (`positions` holds `n_cells·N_b²`).
    n_cells: usize,
    /// The deterministic sum's: the node → cell-slot incidence
    /// (`offsets`, `slots`) and the element matrices `[cell][i][j]`.
    deterministic: Option<(Buffer<u32>, Buffer<u32>, Buffer<R>)>,
}

/// A square CSR matrix of a space's dofs on an OpenCL device, values in the
/// precision `R`: the assembled Jacobian of an operator
/// ([`DeviceCsr::assemble`]), applied as `y = A x`
/// ([`DeviceCsr::apply`]), its point-block diagonal
/// ([`DeviceCsr::point_block_diagonal`]) and downloaded
/// ([`DeviceCsr::to_host`]); or a host matrix uploaded
/// ([`DeviceCsr::from_host`]).
pub struct DeviceCsr<R: Real> {
    device: Arc<Device>,
    pattern: Arc<SparsityPattern>,
    n_comp: usize,
    /// Shared with the matrices converted from or to this one
    /// ([`DeviceCsr::converted`]).
    row_ptr: Arc<Buffer<u32>>,
    /// The node columns ([`SparsityPattern::node_columns`]): the SpMV and
    /// the diagonal read these, not the scalar columns.
    node_ptr: Arc<Buffer<u32>>,
    node_col: Arc<Buffer<u32>>,
    values: DeviceVector<R>,
    /// Work-items per row of the SpMV ([`lanes::SPMV_LANES`]).
    lanes: usize,
    spmv: Kernel,
    chebyshev_step: Kernel,
    diagonal: Kernel,
    maps: Option<AssemblyMaps<R>>,
}

impl<R: Real> DeviceCsr<R> {
    /// A matrix on `pattern` (a pattern of [`SparsityPattern::of_space`])
    /// on `device`, all values zero: the pattern uploaded, the CSR kernels
    /// built.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `pattern` if it was not built from
    /// a space, is not node-major ([`SparsityPattern::node_columns`]) or
    /// its `nnz` exceeds the 32-bit positions of the kernels;
    /// [`Error::NoFp64`]; device memory, build failures.
    pub fn new(device: &Arc<Device>, pattern: &Arc<SparsityPattern>) -> Result<Self> {
        let n_comp = pattern.n_comp().ok_or_else(|| {
            Error::arg(
                "pattern",
                "was not built from a function space (SparsityPattern::of_space): \
                 a device matrix is assembled from element matrices (upload a host \
                 matrix with DeviceCsr::from_host)",
            )
        })?;
        Self::zeros(device, pattern, n_comp)
    }

    /// The host matrix `a` uploaded to `device` (values rounded to `R`), on
    /// any square pattern — one not built from a space has no assembly
    /// ([`DeviceCsr::assemble`] refuses it) and its point-block diagonal is
    /// the diagonal (`N_comp = 1`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if it is not square; those of
    /// [`DeviceCsr::new`] but the pattern's origin.
    pub fn from_host(device: &Arc<Device>, a: &CsrMatrix) -> Result<Self> {
        if a.n_rows() != a.n_cols() {
            return Err(Error::arg(
                "a",
                format!(
                    "is {} × {}: a device matrix is square (y = A x with x and y of \
                     the same space)",
                    a.n_rows(),
                    a.n_cols()
                ),
            ));
        }
        let pattern = a.pattern();
        let mut m = Self::zeros(device, pattern, pattern.n_comp().unwrap_or(1))?;
        let values: Vec<R> = a.values().iter().map(|&v| R::from_f64(v)).collect();
        m.values.upload(&values)?;
        Ok(m)
    }

    /// A matrix of zeros on `pattern`, its point blocks `n_comp` wide.
    fn zeros(device: &Arc<Device>, pattern: &Arc<SparsityPattern>, n_comp: usize) -> Result<Self> {
        device.check_precision::<R>()?;
        let nnz = pattern.nnz();
        if u32::try_from(nnz).is_err() || i32::try_from(pattern.n_rows()).is_err() {
            return Err(Error::arg(
                "pattern",
                format!(
                    "{nnz} stored entries in {} rows exceed the 32-bit positions of the \
                     device matrix kernels: assemble on the host (Operator::assemble_jacobian)",
                    pattern.n_rows()
                ),
            ));
        }
        let row_ptr = upload(device, &to_u32(pattern.row_ptr()), "the CSR row pointers")?;
        let (node_ptr, node_col) = pattern.node_columns()?;
        let node_ptr = upload(device, &to_u32(&node_ptr), "the node column pointers")?;
        let node_col = upload(device, &node_col, "the node columns")?;
        let source = spmv_source::<R>(n_comp);
        Ok(DeviceCsr {
            device: device.clone(),
            pattern: pattern.clone(),
            n_comp,
            row_ptr: Arc::new(row_ptr),
            node_ptr: Arc::new(node_ptr),
            node_col: Arc::new(node_col),
            values: DeviceVector::zeros(device, nnz)?,
            lanes: lanes_for(nnz, pattern.n_rows(), R::PRECISION.size()),
            spmv: device.kernel(&source, "spmv")?,
            chebyshev_step: device.kernel(&source, "spmv_chebyshev_step")?,
            diagonal: device.kernel(&source, "point_block_diagonal")?,
            maps: None,
        })
    }

    /// The pattern.
    pub fn pattern(&self) -> &Arc<SparsityPattern> {
        &self.pattern
    }

    /// This matrix with its values rounded to the precision `S`
    /// ([`DeviceVector::convert_from`]: `f64 → f32` to nearest), e.g. the
    /// single-precision copy a multigrid cycle in `f32` applies. It shares
    /// the pattern and the device's row pointers and node columns with
    /// this matrix (no second copy of them): the copy costs its values,
    /// `nnz·sizeof(S)` bytes of device memory, and the SpMV and
    /// point-block diagonal kernels of `S`, with the team size
    /// [`lanes::lanes_for`] picks for `S` (not this matrix's: fewer bytes a
    /// row want fewer lanes). Refill it after a reassembly with
    /// [`DeviceCsr::convert_values_from`].
    ///
    /// # Errors
    /// [`Error::NoFp64`] for `f64` on a device without double precision;
    /// device memory, build failures.
    pub fn converted<S: Real>(&self) -> Result<DeviceCsr<S>> {
        self.device.check_precision::<S>()?;
        let source = spmv_source::<S>(self.n_comp);
        let mut m = DeviceCsr {
            device: self.device.clone(),
            pattern: self.pattern.clone(),
            n_comp: self.n_comp,
            row_ptr: self.row_ptr.clone(),
            node_ptr: self.node_ptr.clone(),
            node_col: self.node_col.clone(),
            values: DeviceVector::zeros(&self.device, self.pattern.nnz())?,
            lanes: lanes_for(
                self.pattern.nnz(),
                self.pattern.n_rows(),
                S::PRECISION.size(),
            ),
            spmv: self.device.kernel(&source, "spmv")?,
            chebyshev_step: self.device.kernel(&source, "spmv_chebyshev_step")?,
            diagonal: self.device.kernel(&source, "point_block_diagonal")?,
            maps: None,
        };
        m.convert_values_from(self)?;
        Ok(m)
    }

    /// Sets the values to those of `a` rounded to `R` (one elementwise
    /// kernel, [`DeviceVector::convert_from`]); `a` is this matrix's
    /// source or another matrix on the same pattern.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if its pattern is not this
    /// matrix's or it lives on another device.
    pub fn convert_values_from<S: Real>(&mut self, a: &DeviceCsr<S>) -> Result<()> {
        if !Arc::ptr_eq(&self.pattern, &a.pattern) && !self.pattern.same_structure(&a.pattern) {
            return Err(Error::arg(
                "a",
                "its sparsity pattern is not the matrix's: convert the matrix this one was \
                 converted from (DeviceCsr::converted)",
            ));
        }
        self.values.convert_from(&a.values).map_err(|e| match e {
            Error::InvalidArgument { name: "x", reason } => Error::arg("a", reason),
            other => other,
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// The stored values (`nnz`, in the pattern's order).
    pub fn values(&self) -> &DeviceVector<R> {
        &self.values
    }

    /// Rows (= columns).
    pub fn n_rows(&self) -> usize {
        self.pattern.n_rows()
    }

    /// Work-items per row of the SpMV: [`lanes::lanes_for`] of the
    /// pattern and `R` unless set ([`DeviceCsr::set_lanes`]).
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Runs the SpMV with `lanes` work-items per row from now on (to
    /// measure or test each team size; the result changes by rounding
    /// only: the partial sums are added in another order).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `lanes` if it is not one of
    /// [`lanes::SPMV_LANES`].
    pub fn set_lanes(&mut self, lanes: usize) -> Result<()> {
        check_lanes(lanes)?;
        self.lanes = lanes;
        Ok(())
    }

    /// Assembles the Jacobian of the bound form `form` at `u` into the
    /// values (the pattern kept): the element matrices from the physics'
    /// tangent, and those of the form's boundary terms (at the form's time
    /// state, with `σ·∂f0/∂u_t`), summed by `assembly` (see the module's
    /// documentation). The
    /// first call uploads the map from element entries to positions (and
    /// for the deterministic sum the incidence and a buffer of element
    /// matrices); later calls launch only.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `form` if its space is not the
    /// pattern's; those of the form's Jacobian kernels (a physics without
    /// derivatives, an auxiliary field never set, `u` of a wrong length or
    /// on another device); build failures, device memory.
    pub fn assemble(
        &mut self,
        form: &mut OpenClIntegrator<R>,
        u: &DeviceVector<R>,
        assembly: Assembly,
    ) -> Result<()> {
        let disc = form.discretization();
        let (n_b, n_cells) = (disc.n_b(), disc.n_cells());
        if disc.n_comp() != self.n_comp
            || form.n_nodes() * self.n_comp != self.n_rows()
            || self.pattern.element_matrices_len() != Some(n_cells * disc.n_bt() * disc.n_bt())
        {
            return Err(Error::arg(
                "form",
                format!(
                    "its space ({} nodes × {} components, {n_cells} cells of {n_b} nodes) is \
                     not the space of the matrix's pattern ({} rows): assemble the operator \
                     whose space the pattern was built from",
                    form.n_nodes(),
                    disc.n_comp(),
                    self.n_rows()
                ),
            ));
        }
        let deterministic = assembly == Assembly::Deterministic;
        let source = form.element_matrix_source(!deterministic)?;
        let kernel = self.device.kernel(&source, "element_matrices")?;
        let sum = if deterministic {
            Some(self.device.kernel(&source, "sum_element_matrices")?)
        } else {
            None
        };
        self.prepare_maps(n_cells, n_b * self.n_comp, deterministic)?;
        let maps = self.maps.as_ref().expect("prepared above");
        let n_cells_arg = to_i32(n_cells, "cells")?;
        let launch = form.cell_launch(&kernel, u)?.mem(&maps.positions)?;
        let launch = launch.mem(&self.row_ptr)?;
        match (&maps.deterministic, sum) {
            (Some((offsets, slots, matrices)), Some(sum)) => {
                // Argument order of element_matrices and sum_element_matrices
                // (kernels/element_matrix.cl); `matrices` holds n_cells·N_bt²
                // values, every row its own row_ptr range.
                launch.mem(matrices)?.value(n_cells_arg)?.submit(
                    &self.device,
                    groups(n_cells),
                    Some(GROUP),
                    "the element-matrix kernel",
                )?;
                let n_rows = self.n_rows();
                Launch::new(&sum)
                    .mem(matrices)?
                    .mem(offsets)?
                    .mem(slots)?
                    .mem(&maps.positions)?
                    .mem(&self.row_ptr)?
                    .mem(self.values.buffer())?
                    .value(to_i32(n_rows, "rows")?)?
                    .submit(
                        &self.device,
                        groups(n_rows),
                        Some(GROUP),
                        "the deterministic sum of element matrices",
                    )?;
            }
            _ => {
                self.values.fill(0.0)?;
                // Every position + fc·rowLen + gc is below nnz (the map is
                // the pattern's).
                launch
                    .mem(self.values.buffer())?
                    .value(n_cells_arg)?
                    .submit(
                        &self.device,
                        groups(n_cells),
                        Some(GROUP),
                        "the element-matrix kernel",
                    )?;
            }
        }
        form.add_facet_matrices(
            u,
            &maps.positions,
            &self.row_ptr,
            &mut self.values,
            assembly,
        )
    }

    /// Uploads the position map (and for the deterministic sum the
    /// incidence and the element-matrix buffer) unless present.
    fn prepare_maps(&mut self, n_cells: usize, n_bt: usize, deterministic: bool) -> Result<()> {
        if self.maps.is_none() {
            let positions = self.pattern.node_pair_positions()?;
            self.maps = Some(AssemblyMaps {
                positions: upload(&self.device, &positions, "the element → CSR position map")?,
                n_cells,
                deterministic: None,
            });
        }
        let maps = self.maps.as_mut().expect("set above");
        if deterministic && maps.deterministic.is_none() {
            let (offsets, slots) = self
                .pattern
                .node_incidence()
                .ok_or_else(|| Error::internal("a space pattern without its node incidence"))?;
            let offsets: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();
            let len = maps.n_cells * n_bt * n_bt;
            maps.deterministic = Some((
                upload(&self.device, &offsets, "the node incidence offsets")?,
                upload(&self.device, slots, "the node incidence")?,
                self.device.alloc::<R>(len, "element matrices")?,
            ));
        }
        Ok(())
    }

    /// `y = A x` on the device (one launch, [`DeviceCsr::lanes`]
    /// work-items per row; bitwise the same on every call).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` or `y` for a length other than
    /// the matrix's rows or a vector on another device.
    pub fn apply(&self, x: &DeviceVector<R>, y: &mut DeviceVector<R>) -> Result<()> {
        let n = self.n_rows();
        self.check("x", x, n)?;
        self.check("y", y, n)?;
        // Argument order of spmv (kernels/spmv.cl); x and y hold n_rows
        // values, every node column ·N_comp + N_comp − 1 is below n_rows (the
        // pattern is node-major and square); lanes divides GROUP.
        let lanes = self.lanes as i32; // at most 32
        Launch::new(&self.spmv)
            .mem(&self.row_ptr)?
            .mem(&self.node_ptr)?
            .mem(&self.node_col)?
            .mem(self.values.buffer())?
            .mem(x.buffer())?
            .mem(y.buffer_mut())?
            .value(to_i32(n, "rows")?)?
            .value(lanes)?
            .submit(
                &self.device,
                groups(n * self.lanes),
                Some(GROUP),
                "the SpMV kernel",
            )?;
        Ok(())
    }

    /// One Chebyshev step with the SpMV fused ([`FusedChebyshevStep`]:
    /// `w = A d`, `r ← r − w`, `d_next ← a·d + c·D⁻¹r`, `x ← x + d_next`):
    /// one launch, [`DeviceCsr::lanes`] work-items per node (see the
    /// module's documentation) — bitwise [`DeviceCsr::apply`] followed by
    /// the multigrid kernels' Chebyshev step.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming an operand of a wrong length (`inv`:
    /// `n_rows·N_comp`) or on another device.
    pub fn chebyshev_step(&self, o: FusedChebyshevStep<'_, DeviceVector<R>>) -> Result<()> {
        let n = self.n_rows();
        self.check("inv", o.inv, n * self.n_comp)?;
        self.check("d", o.d, n)?;
        self.check("d_next", o.d_next, n)?;
        self.check("r", o.r, n)?;
        self.check("x", o.x, n)?;
        let n_nodes = n / self.n_comp;
        // Argument order of spmv_chebyshev_step (kernels/spmv.cl); every
        // vector holds n_rows = n_nodes·N_comp values (inv N_comp times
        // more), every node column ·N_comp + N_comp − 1 is below n_rows;
        // lanes divides GROUP.
        Launch::new(&self.chebyshev_step)
            .mem(&self.row_ptr)?
            .mem(&self.node_ptr)?
            .mem(&self.node_col)?
            .mem(self.values.buffer())?
            .mem(o.d.buffer())?
            .mem(o.d_next.buffer_mut())?
            .mem(o.r.buffer_mut())?
            .mem(o.x.buffer_mut())?
            .mem(o.inv.buffer())?
            .value(to_i32(n_nodes, "nodes")?)?
            .value(self.lanes as i32)?
            .value(R::from_f64(o.a))?
            .value(R::from_f64(o.c))?
            .submit(
                &self.device,
                groups(n_nodes * self.lanes),
                Some(GROUP),
                "the SpMV fused with a Chebyshev step",
            )?;
        Ok(())
    }

    /// The point-block diagonal into `out` (`n_nodes·N_comp²` entries,
    /// `[node][fc][gc]`, 0 where not stored).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `out` for another length or device.
    pub fn point_block_diagonal(&self, out: &mut DeviceVector<R>) -> Result<()> {
        let len = self.n_rows() * self.n_comp;
        self.check("out", out, len)?;
        Launch::new(&self.diagonal)
            .mem(&self.row_ptr)?
            .mem(&self.node_ptr)?
            .mem(&self.node_col)?
            .mem(self.values.buffer())?
            .mem(out.buffer_mut())?
            .value(to_i32(len, "diagonal entries")?)?
            .submit(
                &self.device,
                groups(len),
                Some(GROUP),
                "the point-block diagonal of a CSR matrix",
            )?;
        Ok(())
    }

    /// The matrix downloaded into a host [`CsrMatrix`] (`f64`) on the same
    /// pattern.
    ///
    /// # Errors
    /// [`Error::NonFinite`] naming `values` for a NaN or ±∞ value; device
    /// errors.
    pub fn to_host(&self) -> Result<CsrMatrix> {
        let values = self.values.to_host()?.iter().map(|v| v.to_f64()).collect();
        CsrMatrix::from_parts(self.pattern.clone(), values)
    }

    /// Checks a vector argument's length and device.
    fn check(&self, name: &'static str, v: &DeviceVector<R>, len: usize) -> Result<()> {
        if v.len() != len {
            return Err(Error::arg(
                name,
                format!(
                    "expected {len} entries (the matrix's {} rows{}), got {}",
                    self.n_rows(),
                    if matches!(name, "out" | "inv") {
                        " × N_comp"
                    } else {
                        ""
                    },
                    v.len()
                ),
            ));
        }
        if !Arc::ptr_eq(v.device(), &self.device) {
            return Err(Error::arg(
                name,
                format!(
                    "lives on device `{}`, not on the matrix's `{}`",
                    v.device().info().name,
                    self.device.info().name
                ),
            ));
        }
        Ok(())
    }
}

impl<R: Real> AssembledMatrix<R> for DeviceCsr<R> {
    type Vector = DeviceVector<R>;

    fn apply(&self, x: &DeviceVector<R>, y: &mut DeviceVector<R>) -> Result<()> {
        DeviceCsr::apply(self, x, y)
    }

    fn point_block_diagonal(&self, out: &mut DeviceVector<R>) -> Result<()> {
        DeviceCsr::point_block_diagonal(self, out)
    }

    fn values_to_host(&self) -> Result<Cow<'_, [R]>> {
        Ok(Cow::Owned(self.values.to_host()?))
    }

    fn chebyshev_step(&self, step: FusedChebyshevStep<'_, DeviceVector<R>>) -> Result<()> {
        DeviceCsr::chebyshev_step(self, step)
    }
}

/// A new device buffer holding `data`.
fn upload<T: bytemuck::Pod>(device: &Device, data: &[T], what: &str) -> Result<Buffer<T>> {
    let mut buffer = device.alloc::<T>(data.len(), what)?;
    device.write(&mut buffer, data, Transfer::Geometry, what)?;
    Ok(buffer)
}

/// Work-items covering `n` in whole groups (at least one group).
fn groups(n: usize) -> usize {
    n.div_ceil(GROUP).max(1) * GROUP
}

/// Positions or pointers as the kernels' `uint` (each at most `nnz`,
/// checked to fit before).
fn to_u32(v: &[usize]) -> Vec<u32> {
    v.iter().map(|&k| k as u32).collect()
}

/// `n` as a kernel's `int` argument.
fn to_i32(n: usize, what: &str) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::arg("pattern", format!("{n} {what} exceed 2^31")))
}
