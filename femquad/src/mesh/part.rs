//! Parts of a mesh where conditions are imposed: the boundary, the boundary
//! facets a predicate selects, the elements of Gmsh physical groups.
//!
//! A [`MeshPart`] is the closure of such simplices: their vertices and
//! their edges. That is what the dofs of a Dirichlet condition need — the
//! vertex nodes of every space, and for P2 the edge nodes too — and
//! [`FunctionSpace::dofs_on`](crate::space::FunctionSpace::dofs_on) turns
//! it into the dofs of a space (chosen components of a vector field).

use rayon::prelude::*;

use super::{BLOCK, Mesh};
use crate::{Error, Result};

/// The vertices and edges of some simplices of a mesh (facets, Gmsh
/// elements, cells): where a Dirichlet condition given on them fixes the
/// dofs of a space ([`FunctionSpace::dofs_on`](crate::space::FunctionSpace::dofs_on)).
///
/// Made by [`MeshPart::boundary`], [`MeshPart::boundary_where`] (boundary
/// facets chosen by their midpoints, e.g. one side of a generated box) or
/// [`GmshMesh::part`](super::GmshMesh::part) (the elements of named
/// physical groups). It remembers the counts of its mesh, so that a space
/// on another mesh refuses it.
///
/// ```
/// use femquad::mesh::MeshPart;
/// use femquad::prelude::*;
///
/// let mesh = unit_square(2, &MeshOptions::default())?; // 3 × 3 vertices
/// // the bottom side y = 0: three vertices, two edges
/// let bottom = MeshPart::boundary_where(&mesh, |x| x[1] == 0.0)?;
/// assert_eq!(bottom.vertices(), &[0, 1, 2]);
/// assert_eq!(bottom.edges(), &[[0, 1], [1, 2]]);
/// assert_eq!(MeshPart::boundary(&mesh)?.vertices().len(), 8);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshPart {
    n_vertices: usize,
    n_cells: usize,
    /// Sorted, distinct.
    vertices: Vec<u32>,
    /// Sorted, distinct, `[a, b]` with `a < b`.
    edges: Vec<[u32; 2]>,
}

impl MeshPart {
    /// The whole boundary of `mesh`: the facets (edges in 2D, triangles in
    /// 3D) of exactly one cell ([`Mesh::boundary_facets`]).
    ///
    /// # Errors
    /// Those of [`Mesh::boundary_facets`] (an index out of range, a
    /// non-manifold mesh).
    pub fn boundary(mesh: &Mesh) -> Result<MeshPart> {
        MeshPart::boundary_where(mesh, |_| true)
    }

    /// The boundary facets of `mesh` whose midpoint `x` (the mean of their
    /// vertices, `dim` coordinates: their sum divided by their number)
    /// satisfies `on(x)`: a side of a generated box (`|x| x[0] == 0.0`, or
    /// `== 1.0`: the mean of equal coordinates 0 or 1 is exact), or a
    /// boundary region of any shape (compare with a tolerance elsewhere,
    /// e.g. `(x[1] - 0.3).abs() < 1e-12`: a mean of other values may round).
    ///
    /// # Errors
    /// Those of [`MeshPart::boundary`].
    pub fn boundary_where(mesh: &Mesh, on: impl Fn(&[f64]) -> bool + Sync) -> Result<MeshPart> {
        let dim = mesh.dim();
        let facets: Vec<[u32; 3]> = mesh
            .boundary_keys()?
            .into_par_iter()
            .with_min_len(BLOCK)
            .filter(|f| {
                let mut mid = [0.0; 3];
                for &v in &f[..dim] {
                    for (m, x) in mid.iter_mut().zip(mesh.vertex(v as usize)) {
                        *m += x;
                    }
                }
                for m in &mut mid {
                    *m /= dim as f64;
                }
                on(&mid[..dim])
            })
            .collect();
        Ok(MeshPart::closure(mesh, facets.iter().map(|f| &f[..dim])))
    }

    /// The closure of `simplices` (each its vertex indices, which must be
    /// in range): their vertices and the edges between them.
    pub(crate) fn closure<'a>(mesh: &Mesh, simplices: impl Iterator<Item = &'a [u32]>) -> Self {
        let (mut vertices, mut edges) = (Vec::new(), Vec::new());
        for s in simplices {
            vertices.extend_from_slice(s);
            for (i, &a) in s.iter().enumerate() {
                for &b in &s[i + 1..] {
                    edges.push([a.min(b), a.max(b)]);
                }
            }
        }
        vertices.par_sort_unstable();
        vertices.dedup();
        edges.par_sort_unstable();
        edges.dedup();
        MeshPart {
            n_vertices: mesh.n_vertices(),
            n_cells: mesh.n_cells(),
            vertices,
            edges,
        }
    }

    /// The vertices, increasing.
    pub fn vertices(&self) -> &[u32] {
        &self.vertices
    }

    /// The edges `[a, b]` (`a < b`), increasing.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// Whether the part has no vertex.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }

    /// Checks that the part was made on a mesh of `n_vertices` vertices and
    /// `n_cells` cells (that of a space).
    pub(crate) fn check_counts(&self, n_vertices: usize, n_cells: usize) -> Result<()> {
        if (self.n_vertices, self.n_cells) != (n_vertices, n_cells) {
            return Err(Error::arg(
                "part",
                format!(
                    "it was made on a mesh of {} vertices and {} cells, the space's mesh has {} \
                     and {}: make the part on the mesh of the space (for a hierarchy, its \
                     finest mesh)",
                    self.n_vertices, self.n_cells, n_vertices, n_cells
                ),
            ));
        }
        Ok(())
    }
}
