//! [`FacetSet`]: a set of boundary facets of one mesh.

use crate::layout::simplex_edges;
use crate::mesh::refine::{TETRAHEDRON_CHILDREN, TRIANGLE_CHILDREN};
use crate::mesh::{BoundaryFacet, Mesh};
use crate::{Error, Result};

/// Boundary facets of one mesh, as sorted, distinct `(cell, local facet)`
/// pairs ([`BoundaryFacet`]: local facet `i` is opposite local vertex `i`
/// of its cell, its vertices outward oriented): where a boundary term
/// `∫_F φ_i f0 ds` is integrated.
///
/// Made by [`FacetSet::boundary`], [`FacetSet::boundary_where`] (facets
/// chosen by their midpoints, for generated meshes) or
/// [`GmshMesh::facet_set`](crate::mesh::GmshMesh::facet_set) (Gmsh physical
/// groups by name). It keeps the vertices of each facet, so that it is
/// checked against a mesh in `O(len)` ([`FacetSet::check_mesh`]): a set
/// made on another mesh, or on the same mesh before its cells' local
/// vertices were permuted, is refused instead of integrating the wrong
/// facets.
///
/// ```
/// use femquad::facet::FacetSet;
/// use femquad::prelude::*;
///
/// let mesh = unit_square(2, &MeshOptions::default())?; // 8 triangles
/// assert_eq!(FacetSet::boundary(&mesh)?.len(), 8);
/// // the right side x = 1: two edges
/// let right = FacetSet::boundary_where(&mesh, |x| x[0] == 1.0)?;
/// assert_eq!(right.len(), 2);
/// for f in right.facets() {
///     assert!(f.vertex_slice().iter().all(|&v| mesh.vertex(v as usize)[0] == 1.0));
/// }
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FacetSet {
    dim: usize,
    n_vertices: usize,
    n_cells: usize,
    /// Sorted by `(cell, local)`, distinct.
    facets: Vec<BoundaryFacet>,
}

impl FacetSet {
    /// The whole boundary of `mesh`: every facet of exactly one cell
    /// ([`Mesh::boundary_facets`]).
    ///
    /// # Errors
    /// Those of [`Mesh::boundary_facets`] (an index out of range, a
    /// non-manifold mesh).
    pub fn boundary(mesh: &Mesh) -> Result<FacetSet> {
        Ok(FacetSet::from_facets(mesh, mesh.boundary_facets()?))
    }

    /// The boundary facets of `mesh` whose midpoint `x` (the mean of their
    /// vertices: their sum divided by their number, `dim` coordinates)
    /// satisfies `on(x)` — the rule of
    /// [`MeshPart::boundary_where`](crate::mesh::MeshPart::boundary_where):
    /// `|x| x[0] == 1.0` is exact for a side of a generated box; compare
    /// with a tolerance elsewhere.
    ///
    /// # Errors
    /// Those of [`FacetSet::boundary`].
    pub fn boundary_where(mesh: &Mesh, on: impl Fn(&[f64]) -> bool) -> Result<FacetSet> {
        let dim = mesh.dim();
        let facets = mesh
            .boundary_facets()?
            .into_iter()
            .filter(|f| {
                let vs = f.vertex_slice();
                let mut mid = [0.0; 3];
                for &v in vs {
                    for (m, x) in mid.iter_mut().zip(mesh.vertex(v as usize)) {
                        *m += x;
                    }
                }
                for m in &mut mid[..dim] {
                    *m /= vs.len() as f64;
                }
                on(&mid[..dim])
            })
            .collect();
        Ok(FacetSet::from_facets(mesh, facets))
    }

    /// The set of `facets` (boundary facets of `mesh`, any order, repeats
    /// allowed): sorted by `(cell, local)`, repeats removed.
    pub(crate) fn from_facets(mesh: &Mesh, mut facets: Vec<BoundaryFacet>) -> FacetSet {
        facets.sort_unstable_by_key(|f| (f.cell, f.local));
        facets.dedup_by_key(|f| (f.cell, f.local));
        FacetSet {
            dim: mesh.dim(),
            n_vertices: mesh.n_vertices(),
            n_cells: mesh.n_cells(),
            facets,
        }
    }

    /// The facets, sorted by `(cell, local)`.
    pub fn facets(&self) -> &[BoundaryFacet] {
        &self.facets
    }

    /// Number of facets.
    pub fn len(&self) -> usize {
        self.facets.len()
    }

    /// Whether the set has no facet.
    pub fn is_empty(&self) -> bool {
        self.facets.is_empty()
    }

    /// Dimension of the mesh (the facets have one less).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Checks that this set belongs to `mesh`: the same dimension and
    /// counts, and every facet's vertices those of its `(cell, local)` on
    /// `mesh`. `O(len)`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`facets`) naming the first difference.
    pub fn check_mesh(&self, mesh: &Mesh) -> Result<()> {
        let (dim, nv, nc) = (mesh.dim(), mesh.n_vertices(), mesh.n_cells());
        if (self.dim, self.n_vertices, self.n_cells) != (dim, nv, nc) {
            return Err(Error::arg(
                "facets",
                format!(
                    "the facet set was made on a {}D mesh of {} vertices and {} cells, not on \
                     this {dim}D mesh of {nv} vertices and {nc} cells: make it on this mesh",
                    self.dim, self.n_vertices, self.n_cells
                ),
            ));
        }
        for f in &self.facets {
            let here = mesh.facet_vertices(f.cell as usize, f.local as usize);
            if here != f.vertices {
                return Err(Error::arg(
                    "facets",
                    format!(
                        "facet {} of cell {} has vertices {:?} in the facet set but {:?} on this \
                         mesh (its cells were changed or their vertices permuted since the set \
                         was made): make the set on this mesh",
                        f.local,
                        f.cell,
                        f.vertex_slice(),
                        &here[..dim]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The set on `fine`, the uniform refinement of `coarse`
    /// ([`crate::mesh::refine()`]): the children of every facet of the set.
    ///
    /// Child cell `j` of coarse cell `c` is fine cell `2^dim·c + j`, with
    /// the local vertices [`TRIANGLE_CHILDREN`] / [`TETRAHEDRON_CHILDREN`]`[j]`
    /// (local P2 nodes of the parent). Local facet `l` of a child lies on
    /// local facet `f` of its parent exactly when all its nodes do: parent
    /// vertices other than `f`, midpoints of parent edges without `f`. Each
    /// parent facet has `2^(dim−1)` children (2 edges, 4 triangles), which
    /// tile it; their vertices are the fine mesh's
    /// ([`Mesh::facet_vertices`]), outward oriented like the parent's.
    ///
    /// # Errors
    /// Those of [`FacetSet::check_mesh`] on `coarse`;
    /// [`Error::InvalidArgument`] (`fine`) if `fine` does not have
    /// `2^dim` cells per coarse cell, or a child's corner is not its
    /// parent's vertex (`fine` is not the refinement of `coarse`).
    pub fn refine(&self, coarse: &Mesh, fine: &Mesh) -> Result<FacetSet> {
        self.check_mesh(coarse)?;
        let dim = coarse.dim();
        let per_cell = 1usize << dim;
        if fine.dim() != dim || fine.n_cells() != coarse.n_cells() * per_cell {
            return Err(Error::arg(
                "fine",
                format!(
                    "a {}D mesh of {} cells is not the uniform refinement of a {dim}D mesh of \
                     {} cells ({} cells)",
                    fine.dim(),
                    fine.n_cells(),
                    coarse.n_cells(),
                    coarse.n_cells() * per_cell
                ),
            ));
        }
        let table = child_facets(dim);
        let mut facets = Vec::with_capacity(self.len() << (dim - 1));
        for f in &self.facets {
            let parent = coarse.cell(f.cell as usize);
            for &(j, l) in &table[f.local as usize] {
                let child = f.cell as usize * per_cell + j;
                let nodes = children(dim)[j];
                // the child's corners that are parent vertices keep their index
                for (k, &node) in nodes.iter().enumerate() {
                    if node <= dim && fine.cell(child)[k] != parent[node] {
                        return Err(Error::arg(
                            "fine",
                            format!(
                                "its cell {child} (child {j} of cell {}) has vertex {} where the \
                                 refinement of `coarse` has {}: it is not the refinement of \
                                 `coarse`",
                                f.cell,
                                fine.cell(child)[k],
                                parent[node]
                            ),
                        ));
                    }
                }
                facets.push(BoundaryFacet {
                    cell: child as u32,
                    local: l as u8,
                    vertices: fine.facet_vertices(child, l),
                });
            }
        }
        Ok(FacetSet::from_facets(fine, facets))
    }
}

impl FacetSet {
    /// The set on `coarse` whose refinement onto `fine` is this set: the
    /// parents of its facets, the inverse of [`FacetSet::refine`]
    /// (child cell `j` of coarse cell `c` is fine cell `2^dim·c + j`). A
    /// multigrid level integrates a boundary term over the same surface as
    /// the finest level this way.
    ///
    /// # Errors
    /// Those of [`FacetSet::check_mesh`] on `fine`;
    /// [`Error::InvalidArgument`] (`fine`) if `fine` does not have `2^dim`
    /// cells per coarse cell or a facet does not lie on a facet of its
    /// parent cell (`fine` is not the refinement of `coarse`);
    /// [`Error::InvalidArgument`] (`facets`) naming a coarse facet of which
    /// the set holds only some children (the set is not a union of coarse
    /// facets: make it on the coarsest mesh and refine it,
    /// `MeshHierarchy::facet_sets`).
    pub fn coarsen(&self, coarse: &Mesh, fine: &Mesh) -> Result<FacetSet> {
        self.check_mesh(fine)?;
        let dim = coarse.dim();
        let per_cell = 1usize << dim;
        if fine.dim() != dim || fine.n_cells() != coarse.n_cells() * per_cell {
            return Err(Error::arg(
                "fine",
                format!(
                    "a {}D mesh of {} cells is not the uniform refinement of a {dim}D mesh of \
                     {} cells ({} cells)",
                    fine.dim(),
                    fine.n_cells(),
                    coarse.n_cells(),
                    coarse.n_cells() * per_cell
                ),
            ));
        }
        // (child, child's local facet) → the parent's local facet
        let mut parent_facet = vec![None; per_cell * (dim + 1)];
        for (f, pairs) in child_facets(dim).iter().enumerate() {
            for &(j, l) in pairs {
                parent_facet[j * (dim + 1) + l] = Some(f);
            }
        }
        let mut parents: Vec<(u32, u8)> = Vec::with_capacity(self.len());
        for f in &self.facets {
            let (cell, j) = (f.cell as usize / per_cell, f.cell as usize % per_cell);
            let Some(local) = parent_facet[j * (dim + 1) + f.local as usize] else {
                return Err(Error::arg(
                    "fine",
                    format!(
                        "facet {} of its cell {} lies inside coarse cell {cell}, not on one of its \
                         facets: `fine` is not the refinement of `coarse`",
                        f.local, f.cell
                    ),
                ));
            };
            parents.push((cell as u32, local as u8));
        }
        parents.sort_unstable();
        let children = 1usize << (dim - 1);
        let mut facets = Vec::with_capacity(parents.len() / children);
        for group in parents.chunk_by(|a, b| a == b) {
            let (cell, local) = group[0];
            if group.len() != children {
                return Err(Error::arg(
                    "facets",
                    format!(
                        "it holds {} of the {children} children of facet {local} of coarse cell \
                         {cell}: a coarser multigrid level cannot integrate over part of a facet; \
                         make the set on the coarsest mesh and refine it \
                         (MeshHierarchy::facet_sets)",
                        group.len()
                    ),
                ));
            }
            facets.push(BoundaryFacet {
                cell,
                local,
                vertices: coarse.facet_vertices(cell as usize, local as usize),
            });
        }
        Ok(FacetSet::from_facets(coarse, facets))
    }
}

/// The children's local nodes (parent P2 nodes), one row per child.
fn children(dim: usize) -> Vec<&'static [usize]> {
    if dim == 2 {
        TRIANGLE_CHILDREN.iter().map(|c| &c[..]).collect()
    } else {
        TETRAHEDRON_CHILDREN.iter().map(|c| &c[..]).collect()
    }
}

/// For each local facet `f` of a parent, the `(child, child's local facet)`
/// pairs that lie on it (see [`FacetSet::refine`]).
fn child_facets(dim: usize) -> Vec<Vec<(usize, usize)>> {
    let edges = simplex_edges(dim);
    // parent node `n` lies on parent facet `f` (opposite vertex `f`)
    let on = |n: usize, f: usize| {
        if n <= dim {
            n != f
        } else {
            !edges[n - dim - 1].contains(&f)
        }
    };
    (0..=dim)
        .map(|f| {
            let mut pairs = Vec::new();
            for (j, nodes) in children(dim).iter().enumerate() {
                for l in 0..=dim {
                    if (0..=dim).all(|k| k == l || on(nodes[k], f)) {
                        pairs.push((j, l));
                    }
                }
            }
            pairs
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parent_facet_has_its_children() {
        for dim in [2, 3] {
            let table = child_facets(dim);
            assert_eq!(table.len(), dim + 1);
            for pairs in &table {
                assert_eq!(pairs.len(), 1 << (dim - 1), "dim {dim}: {pairs:?}");
            }
        }
    }
}
