//! The boundary terms of a form on the device (`kernels/facet_integrate.cl`):
//! per term, its facets' data uploaded once (the facet's cell nodes and
//! local facet, the cell's `J⁻¹`, the normal, the points and weights
//! `w_q |F|/|F̂|`), its programs built once per (residual or tangent,
//! assembly), and its launches added after the cell kernels' into the same
//! global vector: `F(u)`, `J(u)·v` (atomic or deterministic assembly, as the
//! cells') and the point-block diagonal (atomic, as the cells'); and the
//! facets' element matrices of `J(u)`, added into the values of a device
//! CSR matrix after the cells' ([`DeviceFacets::add_matrices`], for
//! [`crate::opencl::DeviceCsr::assemble`]).
//!
//! The deterministic assembly writes facet vectors (facet matrices) and
//! sums them per node (per row of a node) in the order of an incidence
//! list built on the host (the node's `(facet, b)` slots, increasing):
//! bitwise reproducible.
//!
//! A facet's entry `(a·N_comp + fc, b·N_comp + gc)` of the matrix lies at
//! the CSR position of its cell's slots `(a, b)`: the facet kernels read the
//! matrix's map of cell positions
//! ([`SparsityPattern::node_pair_positions`](crate::sparse::SparsityPattern::node_pair_positions),
//! `[cell][a][b]`) at the facet's cell, uploaded once per term
//! (`facet_cells`) — no map of their own.
//!
//! A transient evaluation passes the cells' time state ([`TimeArgs`]: the
//! global `b`, `σ`, `t`) to the points, diagonal and matrix kernels of a term
//! whose physics reads `u_t` or `t` (`TIME_PARAMS`): they form
//! `u_t = σ·u + b` at the facet points and the direction `σ·v` in `u_t`.
//!
//! Every launch of `F(u)`, `J(u)·v` and the diagonal is recorded
//! ([`FacetLaunch`]: kernel, term, bytes, event) in the evaluation's
//! [`Run`](crate::opencl::timing::Run); a matrix assembly records none, as
//! the cells' element-matrix launches are not recorded either.

use std::collections::HashMap;
use std::sync::Arc;

use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

use super::Assembly;
use super::time::{TimeArgs, push_time_args};
use crate::native::{BoundaryIntegrals, BoundaryTermData};
use crate::opencl::DeviceVector;
use crate::opencl::context::{Device, Transfer};
use crate::opencl::launch::Launch;
use crate::opencl::shape::AtomicAdd;
use crate::opencl::source::facet_source;
use crate::opencl::timing::FacetLaunch;
use crate::physics::PointwiseEval;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

/// Work-items per work-group of the facet kernels.
const GROUP: usize = 64;

/// The boundary terms of a bound form on its device.
pub(crate) struct DeviceFacets<R: Real> {
    device: Arc<Device>,
    terms: Vec<DeviceTerm<R>>,
    /// The stand-in for `b` of a physics that reads `t` only, evaluated
    /// without a time state (`t` = 0, as natively).
    unused_b: Buffer<R>,
}

/// The kernels of one program of a term.
struct Kernels {
    points: Kernel,
    scatter: Kernel,
    sum: Kernel,
    /// In the tangent program only: the diagonal blocks, the element
    /// matrices and their deterministic sum.
    tangent: Option<TangentKernels>,
}

/// The kernels of a term's tangent program.
struct TangentKernels {
    diagonal: Kernel,
    matrices: Kernel,
    sum_matrices: Kernel,
}

/// One boundary term on the device.
struct DeviceTerm<R: Real> {
    physics: Arc<dyn PointwiseEval<R>>,
    sizes: [usize; 3],
    n_facets: usize,
    n_fq: usize,
    tabulation: crate::facet::FacetTabulation,
    facet_nodes: Buffer<u32>,
    facet_local: Buffer<u32>,
    /// The facet's cell, `[facet]`: where its matrix entries go.
    facet_cells: Buffer<u32>,
    inv_j: Buffer<R>,
    normals: Buffer<R>,
    points: Buffer<R>,
    weights: Buffer<R>,
    constants: Buffer<R>,
    /// `W_q f0(q)`, `[facet][q][comp]`.
    point_values: Buffer<R>,
    /// Facet vectors of the deterministic assembly, `[facet][b][comp]`.
    facet_vectors: Buffer<R>,
    /// Facet matrices of the deterministic matrix assembly,
    /// `[facet][i][j]`, allocated on first use.
    facet_matrices: Option<Buffer<R>>,
    /// The incidence of the deterministic sum: the set's nodes, and per
    /// node its `facet·N_b + b` slots (CSR).
    sum_nodes: Buffer<u32>,
    sum_offsets: Buffer<u32>,
    sum_slots: Buffer<u32>,
    n_sum_nodes: usize,
    /// Built programs, by (tangent, atomic output).
    kernels: HashMap<(bool, bool), Kernels>,
}

impl<R: Real> DeviceFacets<R> {
    /// Uploads the terms of `boundary` (of a form on `space`) to `device`.
    ///
    /// # Errors
    /// Device errors (memory, uploads); [`Error::InvalidArgument`] (`mesh`)
    /// if an index exceeds the device's 32-bit indices.
    pub(crate) fn new(
        device: &Arc<Device>,
        space: &FunctionSpace,
        boundary: &BoundaryIntegrals<R>,
    ) -> Result<Self> {
        let terms = boundary
            .terms()
            .iter()
            .map(|t| DeviceTerm::new(device, space, boundary.sizes(), t))
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceFacets {
            device: Arc::clone(device),
            terms,
            unused_b: device.alloc::<R>(1, "facet time stand-in")?,
        })
    }

    /// Adds the boundary terms' part of `F(u)` (`v = None`) or of
    /// `J(u)·v` into `out`, which holds the cells' part (written by the
    /// launches before, on the same in-order queue), at the time state
    /// `time` (`None`: stationary); returns the launches.
    ///
    /// # Errors
    /// Kernel builds and launches; a physics without derivatives for `v`;
    /// a physics that reads `u_t` without a time state.
    pub(super) fn add(
        &mut self,
        u: &DeviceVector<R>,
        v: Option<&DeviceVector<R>>,
        out: &mut DeviceVector<R>,
        assembly: Assembly,
        time: Option<TimeArgs<'_, R>>,
    ) -> Result<Vec<FacetLaunch>> {
        let atomic = assembly == Assembly::Atomic;
        let mut launches = Vec::new();
        for (term, t) in self.terms.iter_mut().enumerate() {
            t.build(&self.device, v.is_some(), atomic)?;
            let k = &t.kernels[&(v.is_some(), atomic)];
            let n_points = t.n_facets * t.n_fq;
            let (bytes, n_facets) = (t.bytes(v.is_some(), atomic), t.n_facets);
            let mut record = |kernel, bytes, event| {
                launches.push(FacetLaunch {
                    kernel,
                    term,
                    facets: n_facets,
                    bytes,
                    event,
                })
            };
            // Argument types and order match kernels/facet_integrate.cl;
            // every index is below the lengths the buffers were made with.
            let launch = Launch::new(&k.points)
                .mem(u.buffer())?
                .mem(v.unwrap_or(u).buffer())?
                .mem(&t.facet_nodes)?
                .mem(&t.facet_local)?
                .mem(&t.inv_j)?
                .mem(&t.normals)?
                .mem(&t.points)?
                .mem(&t.weights)?
                .mem(&t.constants)?
                .mem(&t.point_values)?
                .value(count(n_points)?)?;
            let event = push_time_args(launch, t.physics.info().reads, time, &self.unused_b)?
                .enqueue(
                    &self.device,
                    groups(n_points),
                    Some(GROUP),
                    "the facet points kernel",
                )?;
            record("facet_points", bytes.points, event);
            let n_slots = t.n_facets * t.sizes[1];
            let target = if atomic {
                out.buffer_mut()
            } else {
                &mut t.facet_vectors
            };
            let event = Launch::new(&k.scatter)
                .mem(&t.point_values)?
                .mem(&t.facet_nodes)?
                .mem(&t.facet_local)?
                .mem(target)?
                .value(count(n_slots)?)?
                .enqueue(
                    &self.device,
                    groups(n_slots),
                    Some(GROUP),
                    "the facet scatter kernel",
                )?;
            record("facet_scatter", bytes.scatter, event);
            if !atomic {
                let event = Launch::new(&k.sum)
                    .mem(&t.facet_vectors)?
                    .mem(&t.sum_nodes)?
                    .mem(&t.sum_offsets)?
                    .mem(&t.sum_slots)?
                    .mem(out.buffer_mut())?
                    .value(count(t.n_sum_nodes)?)?
                    .enqueue(
                        &self.device,
                        groups(t.n_sum_nodes),
                        Some(GROUP),
                        "the facet sum kernel",
                    )?;
                record("facet_sum", bytes.sum, event);
            }
        }
        Ok(launches)
    }

    /// Adds the boundary terms' diagonal blocks of `J(u)` at the time
    /// state `time` into `out` (`[node][fc][gc]`, holding the cells'
    /// blocks), atomically; returns the launches.
    ///
    /// # Errors
    /// Kernel builds and launches; a physics without derivatives; a
    /// physics that reads `u_t` without a time state.
    pub(super) fn add_diagonal(
        &mut self,
        u: &DeviceVector<R>,
        out: &mut DeviceVector<R>,
        time: Option<TimeArgs<'_, R>>,
    ) -> Result<Vec<FacetLaunch>> {
        let mut launches = Vec::new();
        for (term, t) in self.terms.iter_mut().enumerate() {
            t.build(&self.device, true, true)?;
            let k = &tangent_kernels(&t.kernels, true)?.diagonal;
            let launch = t
                .tangent_launch(k, u)?
                .mem(out.buffer_mut())?
                .value(count(t.n_facets)?)?;
            let event = push_time_args(launch, t.physics.info().reads, time, &self.unused_b)?
                .enqueue(
                    &self.device,
                    groups(t.n_facets),
                    Some(GROUP),
                    "the facet diagonal kernel",
                )?;
            launches.push(FacetLaunch {
                kernel: "facet_diagonal",
                term,
                facets: t.n_facets,
                bytes: t.bytes(true, true).diagonal,
                event,
            });
        }
        Ok(launches)
    }

    /// Adds the boundary terms' element matrices of `J(u)` at the time
    /// state `time` into `values`, the values of a CSR matrix holding the
    /// cells' (summed by the launches before, on the same in-order queue),
    /// through the matrix's map `positions` (`[cell][a][b]`, the position
    /// of `(node_a·N_comp, node_b·N_comp)`) and `row_ptr`: with
    /// [`Assembly::Atomic`] added atomically by `facet_matrices`, with
    /// [`Assembly::Deterministic`] written per facet and added per row by
    /// `facet_sum_matrices` in the fixed order of the incidence, term after
    /// term.
    ///
    /// # Errors
    /// Kernel builds and launches; a physics without derivatives; a
    /// physics that reads `u_t` without a time state; device memory.
    pub(super) fn add_matrices(
        &mut self,
        u: &DeviceVector<R>,
        positions: &Buffer<u32>,
        row_ptr: &Buffer<u32>,
        values: &mut DeviceVector<R>,
        assembly: Assembly,
        time: Option<TimeArgs<'_, R>>,
    ) -> Result<()> {
        let atomic = assembly == Assembly::Atomic;
        for t in &mut self.terms {
            t.build(&self.device, true, atomic)?;
            let [_, n_b, n_comp] = t.sizes;
            if !atomic && t.facet_matrices.is_none() {
                let len = t.n_facets * (n_b * n_comp).pow(2);
                t.facet_matrices = Some(self.device.alloc::<R>(len, "facet matrices")?);
            }
            let k = tangent_kernels(&t.kernels, atomic)?;
            // Argument types and order match kernels/facet_integrate.cl;
            // every facet's cell has its n_b² positions in `positions` (the
            // pattern of the form's space, checked by DeviceCsr::assemble).
            let launch = t
                .tangent_launch(&k.matrices, u)?
                .mem(&t.facet_cells)?
                .mem(positions)?
                .mem(row_ptr)?;
            let launch = match &mut t.facet_matrices {
                Some(m) if !atomic => launch.mem(m)?,
                _ => launch.mem(values.buffer_mut())?,
            }
            .value(count(t.n_facets)?)?;
            push_time_args(launch, t.physics.info().reads, time, &self.unused_b)?.enqueue(
                &self.device,
                groups(t.n_facets),
                Some(GROUP),
                "the facet element-matrix kernel",
            )?;
            if let (Some(matrices), false) = (&t.facet_matrices, atomic) {
                let n_rows = t.n_sum_nodes * n_comp;
                Launch::new(&k.sum_matrices)
                    .mem(matrices)?
                    .mem(&t.sum_nodes)?
                    .mem(&t.sum_offsets)?
                    .mem(&t.sum_slots)?
                    .mem(&t.facet_cells)?
                    .mem(positions)?
                    .mem(row_ptr)?
                    .mem(values.buffer_mut())?
                    .value(count(n_rows)?)?
                    .enqueue(
                        &self.device,
                        groups(n_rows),
                        Some(GROUP),
                        "the deterministic sum of facet matrices",
                    )?;
            }
        }
        Ok(())
    }
}

/// The bytes each facet kernel of a term must move ([`FacetLaunch::bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FacetBytes {
    points: usize,
    scatter: usize,
    sum: usize,
    diagonal: usize,
}

impl<R: Real> DeviceTerm<R> {
    fn new(
        device: &Arc<Device>,
        space: &FunctionSpace,
        sizes: [usize; 3],
        t: &BoundaryTermData<R>,
    ) -> Result<Self> {
        let [_, n_b, n_comp] = sizes;
        let facets = t.term.set().facets();
        let n_facets = facets.len();
        let g = &t.geometry;
        let n_fq = g.n_points();
        let mut nodes = Vec::with_capacity(n_facets * n_b);
        let mut local = Vec::with_capacity(n_facets);
        let mut cells = Vec::with_capacity(n_facets);
        for f in facets {
            nodes.extend_from_slice(space.cell_nodes(f.cell as usize));
            local.push(u32::from(f.local));
            cells.push(f.cell);
        }
        let weights: Vec<R> = (0..n_facets * n_fq)
            .map(|p| R::from_f64(t.weights[p % n_fq] * g.measure()[p / n_fq]))
            .collect();
        let to_r = |v: &[f64]| v.iter().map(|&x| R::from_f64(x)).collect::<Vec<R>>();
        // the deterministic sum's incidence: slots sorted by node, then slot
        let mut by_node: Vec<(u32, u32)> = nodes
            .iter()
            .enumerate()
            .map(|(slot, &node)| Ok((node, u32::try_from(slot).map_err(|_| too_many(slot))?)))
            .collect::<Result<_>>()?;
        by_node.sort_unstable();
        let (mut sum_nodes, mut offsets, mut slots) = (Vec::new(), vec![0u32], Vec::new());
        for group in by_node.chunk_by(|a, b| a.0 == b.0) {
            sum_nodes.push(group[0].0);
            slots.extend(group.iter().map(|p| p.1));
            offsets.push(slots.len() as u32);
        }
        let upload_u32 = |data: &[u32], what: &str| -> Result<Buffer<u32>> {
            let mut b = device.alloc::<u32>(data.len(), what)?;
            device.write(&mut b, data, Transfer::Geometry, what)?;
            Ok(b)
        };
        let upload_r = |data: &[R], what: &str, kind| -> Result<Buffer<R>> {
            let mut b = device.alloc::<R>(data.len(), what)?;
            device.write(&mut b, data, kind, what)?;
            Ok(b)
        };
        let geometry = Transfer::Geometry;
        Ok(DeviceTerm {
            physics: t.term.shared_physics(),
            sizes,
            n_facets,
            n_fq,
            tabulation: t.tabulation.clone(),
            facet_nodes: upload_u32(&nodes, "facet cell nodes")?,
            facet_local: upload_u32(&local, "facet local indices")?,
            facet_cells: upload_u32(&cells, "facet cells")?,
            inv_j: upload_r(&to_r(g.inv_j()), "facet J^-1", geometry)?,
            normals: upload_r(&to_r(g.normals()), "facet normals", geometry)?,
            points: upload_r(&to_r(g.points()), "facet points", geometry)?,
            weights: upload_r(&weights, "facet weights", geometry)?,
            constants: upload_r(
                t.term.constants(),
                "boundary constants",
                Transfer::Coefficients,
            )?,
            point_values: device.alloc::<R>(n_facets * n_fq * n_comp, "facet point values")?,
            facet_vectors: device.alloc::<R>(n_facets * n_b * n_comp, "facet vectors")?,
            facet_matrices: None,
            n_sum_nodes: sum_nodes.len(),
            sum_nodes: upload_u32(&sum_nodes, "facet nodes")?,
            sum_offsets: upload_u32(&offsets, "facet node offsets")?,
            sum_slots: upload_u32(&slots, "facet node slots")?,
            kernels: HashMap::new(),
        })
    }

    /// The bytes of its launches, for `F(u)` or `J(u)·v` (`tangent`) with
    /// atomic or deterministic assembly: per facet, the points kernel reads
    /// the cell's `N_b·N_comp` values of `u` (and of `v`), its `N_b` node
    /// indices and local facet, `J⁻¹` (`dim²`), the normal (`dim`), the
    /// points (`N_q·dim`) and weights (`N_q`), and writes `N_q·N_comp`
    /// point values; the scatter reads those, the nodes and the local
    /// facet, and adds `N_b·N_comp` values into `out` (atomic: read and
    /// write) or writes them as a facet vector; the deterministic sum reads
    /// the facet vectors and the incidence (its nodes, offsets and slots)
    /// and adds each node's `N_comp` values into `out`; the diagonal reads
    /// what the points kernel reads of `u` and adds `N_b·N_comp²` values
    /// atomically. A physics that reads `u_t` has the points and diagonal
    /// kernels read the cell's `N_b·N_comp` values of the time state's `b`
    /// too.
    fn bytes(&self, tangent: bool, atomic: bool) -> FacetBytes {
        let [dim, n_b, nc] = self.sizes;
        let (real, index, nf, nq) = (size_of::<R>(), size_of::<u32>(), self.n_facets, self.n_fq);
        let cell_values = nf * n_b * nc * real;
        let indices = nf * (n_b + 1) * index;
        let geometry = nf * (dim * dim + dim + nq * dim + nq) * real;
        let point_values = nf * nq * nc * real;
        let time_b = if self.physics.info().reads.u_t {
            cell_values
        } else {
            0
        };
        let inputs = if tangent { 2 } else { 1 } * cell_values + time_b;
        FacetBytes {
            points: inputs + indices + geometry + point_values,
            scatter: point_values + indices + if atomic { 2 } else { 1 } * cell_values,
            sum: cell_values
                + (2 * self.n_sum_nodes + 1 + nf * n_b) * index
                + 2 * self.n_sum_nodes * nc * real,
            diagonal: cell_values + time_b + indices + geometry + 2 * nf * n_b * nc * nc * real,
        }
    }

    /// A launch of a tangent kernel (`facet_diagonal`, `facet_matrices`)
    /// with its first arguments set, as `load_facet_cell` and
    /// `facet_tangent_point` read them: `u`, the facets' cell nodes and
    /// local facets, `J⁻¹`, normals, points, weights, constants.
    fn tangent_launch<'k>(&self, kernel: &'k Kernel, u: &DeviceVector<R>) -> Result<Launch<'k>> {
        Launch::new(kernel)
            .mem(u.buffer())?
            .mem(&self.facet_nodes)?
            .mem(&self.facet_local)?
            .mem(&self.inv_j)?
            .mem(&self.normals)?
            .mem(&self.points)?
            .mem(&self.weights)?
            .mem(&self.constants)
    }

    /// Builds the program for (`tangent`, `atomic`) if not built yet.
    fn build(&mut self, device: &Device, tangent: bool, atomic: bool) -> Result<()> {
        if self.kernels.contains_key(&(tangent, atomic)) {
            return Ok(());
        }
        let info = self.physics.info();
        if tangent && info.opencl_tangent_name.is_empty() {
            return Err(
                crate::physics::PointwiseError::NoDerivatives { physics: info.name }.into(),
            );
        }
        let source = facet_source::<R, _>(
            self.sizes,
            self.n_fq,
            &self.tabulation,
            &*self.physics,
            tangent,
            atomic,
            AtomicAdd::for_device(device.info()),
        );
        let program = device.program(&source)?;
        let kernel = |name: &str| device.kernel_of(&program, name, GROUP, "the facet kernels");
        let kernels = Kernels {
            points: kernel("facet_points")?,
            scatter: kernel("facet_scatter")?,
            sum: kernel("facet_sum")?,
            tangent: if tangent {
                Some(TangentKernels {
                    diagonal: kernel("facet_diagonal")?,
                    matrices: kernel("facet_matrices")?,
                    sum_matrices: kernel("facet_sum_matrices")?,
                })
            } else {
                None
            },
        };
        self.kernels.insert((tangent, atomic), kernels);
        Ok(())
    }
}

/// The kernels of a term's tangent program for `atomic` output, from its
/// built programs `kernels` ([`DeviceTerm::build`] first).
fn tangent_kernels(
    kernels: &HashMap<(bool, bool), Kernels>,
    atomic: bool,
) -> Result<&TangentKernels> {
    kernels
        .get(&(true, atomic))
        .and_then(|k| k.tangent.as_ref())
        .ok_or_else(|| Error::internal("a facet tangent program used before it was built"))
}

/// Work-items for `n` items, in whole work-groups.
fn groups(n: usize) -> usize {
    n.div_ceil(GROUP).max(1) * GROUP
}

/// `n` as the kernels' `int` count.
fn count(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| too_many(n))
}

fn too_many(n: usize) -> Error {
    Error::arg(
        "mesh",
        format!("{n} facet points or slots exceed the device kernels' 32-bit indices"),
    )
}
