//! Function spaces: an element on every cell of a mesh, and the map between
//! global and cell-local degrees of freedom.
//!
//! # Nodes and dofs
//!
//! * **P1**: node `v` is mesh vertex `v` (`n_nodes = n_vertices`).
//! * **P2**: nodes `0..n_vertices` are the vertices; node `n_vertices + k`
//!   is the midpoint of global edge `k`. Global edges are the distinct vertex
//!   pairs `(min, max)` of all cell edges, numbered in increasing
//!   lexicographic order of `(min, max)` — deterministic, independent of the
//!   thread count and of the cell order.
//!
//! The local nodes of a cell follow the element ([`crate::element`]): its
//! `dim + 1` vertices in the cell's order, then (P2) its edges in
//! [`crate::layout::simplex_edges`] order. A field with `N_comp` components
//! has `n_dofs = n_nodes·N_comp` global dofs, **interleaved node-major**:
//! dof `node·N_comp + comp` ([`crate::layout::global_dof`]); cell-local arrays
//! are `[cell][b][comp]` ([`crate::layout::cell_dof`]).
//!
//! # Gather and assembly
//!
//! Let `E` be the (Boolean) extraction matrix: `(E w)[c][b][comp] =
//! w[node(c, b)·N_comp + comp]`. [`FunctionSpace::gather`] computes `E w`,
//! [`FunctionSpace::assemble`] computes `Eᵀ e` (sum over cells of element
//! vectors into the global vector: the assembly of a weak form). Hence
//! `⟨Eᵀ e, v⟩ = ⟨e, E v⟩` and `Eᵀ E w = m ⊙ w` with `m` the node
//! multiplicity (number of cells containing the node).
//!
//! # Complexity
//!
//! Construction is `O(n_cells)` for P1 and `O(n_cells·log n_cells)` for P2:
//! the cell edges are grouped by their smaller vertex (a parallel sort of
//! packed `u64` keys `min << 32 | slot`), each vertex's short list is sorted
//! by the other vertex and deduplicated, and the ids follow from a prefix
//! sum — no hash map, no binary search (see [`crate::mesh::edges::mesh_edges`]).
//! Peak temporary memory for P2 is 12 bytes per cell edge (6 edges per
//! tetrahedron).
//! `gather`, `interpolate` and `node_coordinates` are `O(n_cells·N_b·N_comp)`
//! / `O(n_nodes·N_comp)` and run in parallel. `assemble` is
//! `O(n_cells·N_b·N_comp)`; for large inputs on several threads it runs in
//! parallel over nodes through the node → cell-slot incidence (built once,
//! on first use, by the same parallel sort; 4 bytes per cell slot kept),
//! summing each node's contributions in the same order as the serial loop,
//! so the result is bitwise identical to the serial sum and independent of
//! the thread count.
//! The dofs a Dirichlet condition fixes on a part of the mesh (the
//! boundary, some of its facets, Gmsh physical groups) are
//! [`FunctionSpace::dofs_on`] (`O(n_cells·log n_cells)` for the boundary,
//! [`Mesh::boundary_facets`]).

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::element::Element;
use crate::error::check_len;
use crate::layout::{cell_dof, global_dof};
use crate::mesh::Mesh;
use crate::mesh::edges::{bucket_sort, mesh_edges};
use crate::{Error, Real, Result};

/// Below this many cell slots (`n_cells·N_b`) assembly runs serially.
const PARALLEL_ASSEMBLY_MIN_SLOTS: usize = 1 << 16;

/// Cells per task of the parallel check of [`FunctionSpace::new`].
const CHECK_BLOCK: usize = 4096;

/// Coordinates per task of the parallel copy in
/// [`FunctionSpace::node_coordinates`].
const COPY_BLOCK: usize = 1 << 16;

/// Node → cell-slot incidence (CSR): slots `cell·N_b + b` of node `n` are
/// `slots[offsets[n]..offsets[n+1]]`, increasing.
#[derive(Clone, Debug)]
struct Incidence {
    offsets: Vec<usize>,
    slots: Vec<u32>,
}

/// Checks a component count.
fn check_n_comp(n_comp: usize) -> Result<()> {
    if n_comp == 0 {
        return Err(Error::arg("n_comp", "a field needs at least one component"));
    }
    Ok(())
}

/// The P2 edge numbering ([`mesh_edges`]) as sorted edge keys
/// `min << 32 | max` and the cell → node map (`n_cells × N_b`: the cell's
/// vertices, then `n_vertices + edge` in local edge order).
fn number_edges(mesh: &Mesh) -> Result<(Vec<u64>, Vec<u32>)> {
    let edges = mesh_edges(mesh)?;
    let (nv, ne) = (mesh.vertices_per_cell(), edges.edges_per_cell());
    let (n_vertices, n_edges) = (mesh.n_vertices(), edges.n_edges());
    if n_vertices + n_edges > u32::MAX as usize {
        return Err(Error::arg(
            "mesh",
            format!(
                "{} P2 nodes exceed the u32 index range",
                n_vertices + n_edges
            ),
        ));
    }
    let keys = edges
        .endpoints()
        .par_iter()
        .map(|&[a, b]| ((a as u64) << 32) | b as u64)
        .collect();
    let mut cell_nodes = vec![0u32; mesh.n_cells() * (nv + ne)];
    cell_nodes
        .par_chunks_mut(nv + ne)
        .zip(mesh.cells().par_chunks(nv))
        .zip(edges.cell_edges_all().par_chunks(ne))
        .for_each(|((nodes, cell), cell_edges)| {
            nodes[..nv].copy_from_slice(cell);
            for (n, &e) in nodes[nv..].iter_mut().zip(cell_edges) {
                *n = (n_vertices + e as usize) as u32;
            }
        });
    Ok((keys, cell_nodes))
}

/// A scalar or vector Lagrange space on a simplicial mesh: the mesh it is
/// built on (shared, [`FunctionSpace::mesh`]), the element, the number of
/// components and the cell → node map (see the [module documentation](self)).
///
/// # Sharing
/// A space holds its mesh as an `Arc<Mesh>`, so every function that needs
/// a space's geometry (interpolation, the boundary dofs, the residual's
/// cell geometry, output) takes the space alone, and a space cannot be
/// paired with the wrong mesh. Its node numbering — the P2 edge numbering,
/// the cell → node map and the node → cell incidence — is built once and
/// shared by every clone of the space and by [`FunctionSpace::with_n_comp`]:
/// cloning a space (a residual, a multigrid level, the OpenCL operator and
/// an auxiliary field each keep one) copies no array. A P1 space's
/// cell → node map *is* its mesh's cells: it stores none of its own.
///
/// ```
/// use std::sync::Arc;
/// use femquad::prelude::*;
///
/// let mesh = Arc::new(unit_square(2, &MeshOptions::default())?); // 9 vertices, 16 edges, 8 triangles
/// let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 2)?, 2)?; // a P2 vector field
/// assert!(Arc::ptr_eq(space.mesh(), &mesh)); // the same mesh, not a copy
/// assert_eq!(space.n_nodes(), 9 + 16); // the vertices, then the edge midpoints
/// assert_eq!(space.n_dofs(), 25 * 2); // dof node·N_comp + comp
/// assert_eq!(space.cell_nodes(0).len(), 6);
/// // nodal interpolation, u[node·N_comp + comp] = f(x_node)[comp]: here f(x) = x
/// let u = space.interpolate(|x, out| out.copy_from_slice(x));
/// assert_eq!(u, space.node_coordinates());
/// // gather E u: cell-local values, [cell][b][comp]
/// let mut local = vec![0.0; space.n_cell_dofs()];
/// space.gather(&u, &mut local)?;
/// let node = space.cell_nodes(0)[0] as usize;
/// assert_eq!(&local[..2], &u[2 * node..2 * node + 2]);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FunctionSpace {
    mesh: Arc<Mesh>,
    element: Element,
    n_comp: usize,
    numbering: Arc<Numbering>,
}

/// A space's node numbering, independent of its component count: built
/// once by [`FunctionSpace::new`], shared (`Arc`) by the space's clones and
/// by [`FunctionSpace::with_n_comp`].
#[derive(Debug)]
struct Numbering {
    n_nodes: usize,
    /// Sorted, distinct edge keys `min << 32 | max` (P2 only; empty for P1):
    /// edge `k` is `edge_keys[k]`.
    edge_keys: Vec<u64>,
    /// The P2 cell → node map, `n_cells × N_b` node indices in the
    /// element's local node order; empty for P1, whose map is the mesh's
    /// cells ([`FunctionSpace::cell_nodes_all`]).
    p2_cell_nodes: Vec<u32>,
    incidence: OnceLock<Option<Incidence>>,
}

impl FunctionSpace {
    /// The space of `element` with `n_comp` components on `mesh`.
    ///
    /// The space keeps `mesh` (an `Arc`, so that a residual, its multigrid
    /// levels and an output file can share one mesh without copying it, and
    /// the caller decides by `mesh.clone()` or a move whether it keeps a
    /// handle too). Pass the same `Arc` to every space of one problem: the
    /// functions that combine spaces (multigrid levels, a hierarchy) check
    /// that they share their mesh by pointer (`Arc::ptr_eq`), in O(1).
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`] if `n_comp == 0` or the element dimension
    ///   differs from the mesh dimension, or the node count exceeds `u32`.
    /// * [`Error::InvalidCell`] if a cell names a vertex out of range or
    ///   repeats a vertex.
    pub fn new(mesh: Arc<Mesh>, element: Element, n_comp: usize) -> Result<FunctionSpace> {
        let dim = mesh.dim();
        check_n_comp(n_comp)?;
        if element.dim() != dim {
            return Err(Error::arg(
                "element",
                format!("element {element} does not match the {dim}D mesh"),
            ));
        }
        let n_vertices = mesh.n_vertices();
        if n_vertices > u32::MAX as usize {
            return Err(Error::arg(
                "mesh",
                format!("{n_vertices} vertices exceed the u32 index range"),
            ));
        }
        let nv = dim + 1;
        // Validate cells: indices in range, no repeated vertex.
        if let Some((c, reason)) = mesh
            .cells()
            .par_chunks(nv * CHECK_BLOCK)
            .enumerate()
            .find_map_first(|(b, block)| {
                // serially within a block: rayon's search item by item
                // costs several times the check
                block.chunks_exact(nv).enumerate().find_map(|(j, cell)| {
                    let c = b * CHECK_BLOCK + j;
                    for (i, &v) in cell.iter().enumerate() {
                        if v as usize >= n_vertices {
                            return Some((
                                c,
                                format!("vertex index {v} out of range ({n_vertices} vertices)"),
                            ));
                        }
                        if cell[..i].contains(&v) {
                            return Some((c, format!("vertex {v} appears twice")));
                        }
                    }
                    None
                })
            })
        {
            return Err(Error::InvalidCell { cell: c, reason });
        }

        let (edge_keys, p2_cell_nodes) = if element.order() == 1 {
            (Vec::new(), Vec::new())
        } else {
            number_edges(&mesh)?
        };
        let numbering = Numbering {
            n_nodes: n_vertices + edge_keys.len(),
            edge_keys,
            p2_cell_nodes,
            incidence: OnceLock::new(),
        };
        Ok(FunctionSpace {
            mesh,
            element,
            n_comp,
            numbering: Arc::new(numbering),
        })
    }

    /// The space of the same element on the same mesh with `n_comp`
    /// components (e.g. an auxiliary field beside a vector field), sharing
    /// this space's mesh and node numbering: it copies and recomputes nothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_comp` if it is 0.
    pub fn with_n_comp(&self, n_comp: usize) -> Result<FunctionSpace> {
        check_n_comp(n_comp)?;
        Ok(FunctionSpace {
            n_comp,
            ..self.clone()
        })
    }

    /// The mesh this space is built on (shared, not a copy).
    pub fn mesh(&self) -> &Arc<Mesh> {
        &self.mesh
    }

    /// Spatial dimension.
    pub fn dim(&self) -> usize {
        self.mesh.dim()
    }

    /// The element on every cell.
    pub fn element(&self) -> Element {
        self.element
    }

    /// Number of components `N_comp` of the field.
    pub fn n_comp(&self) -> usize {
        self.n_comp
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.mesh.n_cells()
    }

    /// Basis functions (local nodes) per cell, `N_b`.
    pub fn n_basis(&self) -> usize {
        self.element.n_basis()
    }

    /// Number of mesh vertices (the first nodes).
    pub fn n_vertices(&self) -> usize {
        self.mesh.n_vertices()
    }

    /// Number of global edges carrying a node (P2); 0 for P1.
    pub fn n_edges(&self) -> usize {
        self.numbering.edge_keys.len()
    }

    /// The two vertices `(min, max)` of global edge `k` (P2), whose node is
    /// `n_vertices + k`; `None` if `k ≥ n_edges()`.
    pub fn edge(&self, k: usize) -> Option<[u32; 2]> {
        self.numbering
            .edge_keys
            .get(k)
            .map(|&key| [(key >> 32) as u32, key as u32])
    }

    /// Number of nodes: `n_vertices` (P1) or `n_vertices + n_edges` (P2).
    pub fn n_nodes(&self) -> usize {
        self.numbering.n_nodes
    }

    /// Number of global dofs, `n_nodes·N_comp`.
    pub fn n_dofs(&self) -> usize {
        self.n_nodes() * self.n_comp
    }

    /// Number of cell-local dofs in all cells, `n_cells·N_b·N_comp` (length of
    /// gathered coefficients and of element-vector arrays).
    pub fn n_cell_dofs(&self) -> usize {
        self.n_cells() * self.n_basis() * self.n_comp
    }

    /// Nodes of cell `c` in local order (`N_b` entries).
    ///
    /// # Panics
    /// If `c ≥ n_cells()` (an indexing bug in the caller).
    pub fn cell_nodes(&self, c: usize) -> &[u32] {
        let n_b = self.n_basis();
        &self.cell_nodes_all()[c * n_b..(c + 1) * n_b]
    }

    /// Nodes of all cells, `n_cells × N_b`: the mesh's cells for P1, the
    /// space's (shared) P2 map otherwise. Not a copy.
    pub fn cell_nodes_all(&self) -> &[u32] {
        if self.element.order() == 1 {
            self.mesh.cells()
        } else {
            &self.numbering.p2_cell_nodes
        }
    }

    /// Number of cells containing each node (`n_nodes` entries): the diagonal
    /// of `Eᵀ E` for one component.
    pub fn node_multiplicity(&self) -> Vec<u32> {
        let mut m = vec![0u32; self.n_nodes()];
        for &n in self.cell_nodes_all() {
            m[n as usize] += 1;
        }
        m
    }

    /// Physical coordinates of every node, `n_nodes × dim`: the vertices,
    /// then (P2) the edge midpoints `(X_min + X_max)/2` in edge order.
    pub fn node_coordinates(&self) -> Vec<f64> {
        let (d, mesh) = (self.dim(), &*self.mesh);
        let mut x = vec![0.0; self.n_nodes() * d];
        let (xv, xe) = x.split_at_mut(self.n_vertices() * d);
        // a parallel copy: one thread's copy of a large mesh's coordinates
        // (and the first touch of their fresh pages) is a serial part of
        // every problem's setup
        xv.par_chunks_mut(COPY_BLOCK)
            .zip(mesh.vertices().par_chunks(COPY_BLOCK))
            .for_each(|(to, from)| to.copy_from_slice(from));
        xe.par_chunks_mut(d)
            .zip(self.numbering.edge_keys.par_iter())
            .for_each(|(p, &key)| {
                let a = mesh.vertex((key >> 32) as usize);
                let b = mesh.vertex((key as u32) as usize);
                for e in 0..d {
                    p[e] = 0.5 * (a[e] + b[e]);
                }
            });
        x
    }

    /// Physical coordinates of every **dof**, `n_dofs × dim`: dof
    /// `node·N_comp + comp` sits at its node (so the `N_comp` dofs of a node
    /// of a vector field share one point). Use it to build fields dof by
    /// dof, e.g. `u[k] = g(x_k)[k % N_comp]`.
    pub fn dof_coordinates(&self) -> Vec<f64> {
        let x = self.node_coordinates();
        let (d, nc) = (self.dim(), self.n_comp);
        let mut out = vec![0.0; self.n_dofs() * d];
        out.par_chunks_mut(nc * d)
            .zip(x.par_chunks(d))
            .for_each(|(dofs, p)| {
                for dof in dofs.chunks_mut(d) {
                    dof.copy_from_slice(p);
                }
            });
        out
    }

    /// Nodal interpolation of `f : ℝ^dim → ℝ^N_comp` into a global vector
    /// (`n_dofs` entries, `u[node·N_comp + comp] = f(x_node)[comp]`).
    /// `f(x, out)` receives the node coordinates (`dim` entries) and writes
    /// `N_comp` values to `out` (zero-initialized). Runs in parallel over nodes.
    pub fn interpolate(&self, f: impl Fn(&[f64], &mut [f64]) + Sync) -> Vec<f64> {
        let x = self.node_coordinates();
        let (d, nc) = (self.dim(), self.n_comp);
        let mut u = vec![0.0; self.n_dofs()];
        u.par_chunks_mut(nc)
            .zip(x.par_chunks(d))
            .for_each(|(out, p)| f(p, out));
        u
    }

    /// Gather `E w`: `cell_local[(c·N_b + b)·N_comp + comp] =
    /// global[node(c, b)·N_comp + comp]`. Parallel over cells.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless `global.len() == n_dofs()` and
    /// `cell_local.len() == n_cell_dofs()`.
    pub fn gather<R: Real>(&self, global: &[R], cell_local: &mut [R]) -> Result<()> {
        check_len("global", global, self.n_dofs())?;
        check_len("cell_local", cell_local, self.n_cell_dofs())?;
        let (n_b, nc) = (self.n_basis(), self.n_comp);
        cell_local
            .par_chunks_mut(n_b * nc)
            .zip(self.cell_nodes_all().par_chunks(n_b))
            .for_each(|(out, nodes)| {
                for (b, &node) in nodes.iter().enumerate() {
                    for comp in 0..nc {
                        out[cell_dof(0, b, comp, n_b, nc)] =
                            global[global_dof(node as usize, comp, nc)];
                    }
                }
            });
        Ok(())
    }

    /// Assembly `global = Eᵀ element_vectors`: `global` is zeroed, then
    /// `global[node(c, b)·N_comp + comp] += element_vectors[(c·N_b + b)·N_comp + comp]`
    /// for every cell `c`, local node `b` and component `comp`.
    ///
    /// Serial for small inputs or one thread; otherwise parallel over nodes
    /// (see the [module documentation](self)); both give bitwise the same result.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless `element_vectors.len() == n_cell_dofs()`
    /// and `global.len() == n_dofs()`.
    pub fn assemble<R: Real>(&self, element_vectors: &[R], global: &mut [R]) -> Result<()> {
        check_len("element_vectors", element_vectors, self.n_cell_dofs())?;
        check_len("global", global, self.n_dofs())?;
        if self.cell_nodes_all().len() >= PARALLEL_ASSEMBLY_MIN_SLOTS
            && rayon::current_num_threads() > 1
            && let Some(inc) = self.incidence()
        {
            self.assemble_pull(inc, element_vectors, global);
        } else {
            self.assemble_serial(element_vectors, global);
        }
        Ok(())
    }

    fn assemble_serial<R: Real>(&self, ev: &[R], global: &mut [R]) {
        let (n_b, nc) = (self.n_basis(), self.n_comp);
        global.fill(R::ZERO);
        for (c, nodes) in self.cell_nodes_all().chunks(n_b).enumerate() {
            for (b, &node) in nodes.iter().enumerate() {
                for comp in 0..nc {
                    global[global_dof(node as usize, comp, nc)] +=
                        ev[cell_dof(c, b, comp, n_b, nc)];
                }
            }
        }
    }

    fn assemble_pull<R: Real>(&self, inc: &Incidence, ev: &[R], global: &mut [R]) {
        let nc = self.n_comp;
        global
            .par_chunks_mut(nc)
            .enumerate()
            .for_each(|(node, out)| {
                let slots = &inc.slots[inc.offsets[node]..inc.offsets[node + 1]];
                for (comp, o) in out.iter_mut().enumerate() {
                    let mut acc = R::ZERO;
                    for &s in slots {
                        acc += ev[s as usize * nc + comp];
                    }
                    *o = acc;
                }
            });
    }

    /// The node → cell-slot incidence in CSR form: the cell slots
    /// `cell·N_b + b` of node `n` are `slots[offsets[n]..offsets[n+1]]`, in
    /// increasing order. Built on first use (and kept).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the number of cell slots does not fit
    /// `u32`.
    pub(crate) fn node_incidence(&self) -> Result<(&[usize], &[u32])> {
        let inc = self.incidence().ok_or_else(|| {
            Error::arg(
                "space",
                format!(
                    "{} cell slots do not fit 32-bit indices",
                    self.cell_nodes_all().len()
                ),
            )
        })?;
        Ok((&inc.offsets, &inc.slots))
    }

    /// The node → cell-slot incidence, built on first use; `None` if the
    /// slot count does not fit `u32` (then assembly stays serial).
    fn incidence(&self) -> Option<&Incidence> {
        self.numbering
            .incidence
            .get_or_init(|| {
                let cn = self.cell_nodes_all();
                let n_slots = cn.len();
                if n_slots > u32::MAX as usize {
                    return None;
                }
                let (offsets, entries) =
                    bucket_sort(self.n_nodes(), n_slots, |s| cn[s] as usize, |s| s as u64);
                let slots = entries.into_par_iter().map(|s| s as u32).collect();
                Some(Incidence { offsets, slots })
            })
            .as_ref()
    }
}

mod dirichlet_dofs;
#[cfg(test)]
mod tests;

pub use dirichlet_dofs::Components;
