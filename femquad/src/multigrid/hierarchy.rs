//! [`MeshHierarchy`]: a coarse mesh and its uniform refinements.

use std::sync::Arc;

use crate::Result;
use crate::facet::FacetSet;
use crate::mesh::refine::{
    check_refinements, prepare_for_refinement, refine, refine_gmsh_with_edges,
};
use crate::mesh::{GmshMesh, Mesh, MeshPart};

/// The meshes of a hierarchy: plain, or Gmsh meshes with their tags.
#[derive(Clone, Debug)]
enum Meshes {
    Plain(Vec<Arc<Mesh>>),
    Gmsh(Vec<GmshMesh>),
}

/// A coarse mesh and `L` uniform refinements of it, for geometric
/// multigrid: mesh `l + 1` is [`refine`] of mesh `l` (triangles into 4,
/// tetrahedra into 8 by Bey's rule), mesh 0 the coarse mesh with its
/// tetrahedra's local vertices permuted (evenly) by
/// [`prepare_for_refinement`] so that every level keeps the coarse mesh's
/// element quality (see [`crate::mesh::refine()`]).
///
/// # Nesting
/// The vertices of mesh `l` are the first vertices of mesh `l + 1`, in the
/// same order; fine vertex `n_v(l) + k` is the midpoint of edge `k` of mesh
/// `l` ([`MeshHierarchy::edges`]: the refinement's first-touch order of the
/// edges, [`crate::mesh::Refinement::edge_vertices`], not the sorted order
/// of [`crate::mesh::mesh_edges`] that a P2 space numbers its edge nodes
/// in). So a P1 function of level `l` is, on level `l + 1`, the function
/// with the same values at the old vertices and the averages of the edge
/// endpoints at the new ones — and a set of coarse vertices (a boundary
/// part) is found on the fine mesh by the same indices.
///
/// # Boundary tags
/// [`MeshHierarchy::from_gmsh`] refines a Gmsh mesh with its boundary
/// elements and physical groups
/// ([`refine_gmsh`](crate::mesh::refine_gmsh)), so every level's
/// [`GmshMesh::group_vertices`] is the refinement of the coarse group.
///
/// # Example
/// ```
/// use femquad::mesh::{MeshOptions, unit_square};
/// use femquad::multigrid::MeshHierarchy;
///
/// let coarse = unit_square(4, &MeshOptions::default())?; // 32 triangles
/// let h = MeshHierarchy::new(&coarse, 3)?;
/// assert_eq!(h.n_levels(), 4);
/// assert_eq!(h.finest().n_cells(), 32 * 4 * 4 * 4);
/// // nested: the vertices of level 1 start with those of level 0
/// let (m0, m1) = (h.mesh(0).unwrap(), h.mesh(1).unwrap());
/// assert_eq!(&m1.vertices()[..m0.vertices().len()], m0.vertices());
/// assert_eq!(m1.n_vertices(), m0.n_vertices() + h.edges(0).unwrap().len());
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MeshHierarchy {
    meshes: Meshes,
    /// `edges[l]`: the edges of mesh `l`, whose midpoints are the new
    /// vertices of mesh `l + 1` (the refinement's `edge_vertices`).
    edges: Vec<Arc<Vec<[u32; 2]>>>,
}

impl MeshHierarchy {
    /// `coarse` and `refinements` uniform refinements of it.
    ///
    /// # Errors
    /// Those of [`check_refinements`] first (more refinements than 32-bit
    /// indices or this machine's memory hold, refused before anything is
    /// allocated, with the most that fit); then those of [`refine`] (an
    /// invalid coarse mesh, naming the cell).
    pub fn new(coarse: &Mesh, refinements: usize) -> Result<Self> {
        check_refinements(coarse, refinements)?;
        Self::refined(prepare_for_refinement(coarse)?, refinements)
    }

    /// `coarse` as it is and `refinements` uniform refinements of it: no
    /// [`prepare_for_refinement`], so the cells keep their vertex order
    /// (which decides how a tetrahedron is refined). For a mesh whose
    /// levels must be those of another refinement of it as it is — e.g. the
    /// coarse mesh of a distributed hierarchy gathered back onto one
    /// process, whose serial levels must be the distributed ones exactly,
    /// prepared or not. (Of a prepared mesh, `new` gives the same levels:
    /// preparing is idempotent.)
    ///
    /// # Errors
    /// As [`MeshHierarchy::new`].
    pub fn prepared(coarse: Mesh, refinements: usize) -> Result<Self> {
        check_refinements(&coarse, refinements)?;
        Self::refined(coarse, refinements)
    }

    /// `coarse` (mesh 0) and `refinements` refinements of it.
    fn refined(coarse: Mesh, refinements: usize) -> Result<Self> {
        let mut finest = coarse;
        let mut meshes = Vec::with_capacity(refinements + 1);
        let mut edges = Vec::with_capacity(refinements);
        for _ in 0..refinements {
            let (fine, fine_edges) = refine(&finest)?.into_parts();
            edges.push(Arc::new(fine_edges));
            meshes.push(Arc::new(std::mem::replace(&mut finest, fine)));
        }
        meshes.push(Arc::new(finest));
        Ok(MeshHierarchy {
            meshes: Meshes::Plain(meshes),
            edges,
        })
    }

    /// One mesh, not refined (a hierarchy of one level): what a problem on a
    /// single mesh has. Shares `mesh` (no copy): pass the mesh of the
    /// problem's space, `space.mesh().clone()`.
    pub fn single(mesh: Arc<Mesh>) -> Self {
        MeshHierarchy {
            meshes: Meshes::Plain(vec![mesh]),
            edges: Vec::new(),
        }
    }

    /// A Gmsh mesh and `refinements` uniform refinements of it with their
    /// boundary elements and physical groups
    /// ([`refine_gmsh`](crate::mesh::refine_gmsh)); the coarse mesh's
    /// tetrahedra are first reordered by [`prepare_for_refinement`] (which
    /// keeps vertices, cells and tags).
    ///
    /// # Errors
    /// Those of [`check_refinements`] first, as [`MeshHierarchy::new`]; then
    /// those of [`refine_gmsh`](crate::mesh::refine_gmsh).
    pub fn from_gmsh(coarse: &GmshMesh, refinements: usize) -> Result<Self> {
        check_refinements(&coarse.mesh, refinements)?;
        let mut finest = coarse.clone();
        finest.mesh = Arc::new(prepare_for_refinement(&coarse.mesh)?);
        let mut meshes = Vec::with_capacity(refinements + 1);
        let mut edges = Vec::with_capacity(refinements);
        for _ in 0..refinements {
            let (fine, fine_edges) = refine_gmsh_with_edges(&finest)?;
            edges.push(Arc::new(fine_edges));
            meshes.push(std::mem::replace(&mut finest, fine));
        }
        meshes.push(finest);
        Ok(MeshHierarchy {
            meshes: Meshes::Gmsh(meshes),
            edges,
        })
    }

    /// Number of meshes, `refinements + 1`.
    pub fn n_levels(&self) -> usize {
        self.edges.len() + 1
    }

    /// Mesh `level` (0 the coarsest), if there is one, shared: a space on
    /// it holds a clone of this `Arc`.
    pub fn mesh(&self, level: usize) -> Option<&Arc<Mesh>> {
        match &self.meshes {
            Meshes::Plain(m) => m.get(level),
            Meshes::Gmsh(g) => g.get(level).map(|g| &g.mesh),
        }
    }

    /// The finest mesh, shared: build the problem's space on it,
    /// `FunctionSpace::new(hierarchy.finest().clone(), …)`.
    pub fn finest(&self) -> &Arc<Mesh> {
        match &self.meshes {
            Meshes::Plain(m) => &m[m.len() - 1],
            Meshes::Gmsh(g) => &g[g.len() - 1].mesh,
        }
    }

    /// The Gmsh mesh (tags, physical groups) of `level`, for a hierarchy
    /// made by [`MeshHierarchy::from_gmsh`].
    pub fn gmsh(&self, level: usize) -> Option<&GmshMesh> {
        match &self.meshes {
            Meshes::Plain(_) => None,
            Meshes::Gmsh(g) => g.get(level),
        }
    }

    /// The edges `[a, b]` (`a < b`) of mesh `level` whose midpoints are the
    /// vertices `n_v(level) + k` of mesh `level + 1`, in the refinement's
    /// first-touch order ([`crate::mesh::Refinement::edge_vertices`], for
    /// [`MeshHierarchy::new`] and [`MeshHierarchy::from_gmsh`] alike);
    /// `None` for the finest.
    pub fn edges(&self, level: usize) -> Option<&[[u32; 2]]> {
        self.edges.get(level).map(|e| e.as_slice())
    }

    /// [`MeshHierarchy::edges`], shared (for the transfers, without a copy).
    pub(crate) fn shared_edges(&self, level: usize) -> Option<&Arc<Vec<[u32; 2]>>> {
        self.edges.get(level)
    }

    /// The boundary of the finest mesh, [`MeshPart::boundary`] of
    /// [`MeshHierarchy::finest`] (the same vertices and edges), found on
    /// the coarsest mesh and refined: the boundary facets of a uniform
    /// refinement are the children of the coarse boundary facets
    /// ([`MeshHierarchy::facet_sets`] of [`FacetSet::boundary`]). The
    /// facets of the coarsest mesh are sorted, and the finer levels cost
    /// their boundary facets only, not a sort of all the finest mesh's
    /// facets.
    ///
    /// # Errors
    /// Those of [`FacetSet::boundary`] on the coarsest mesh (a
    /// non-manifold mesh: the cell named is the coarsest mesh's, like
    /// [`MeshHierarchy::new`]'s errors) and of [`FacetSet::refine`].
    pub fn finest_boundary(&self) -> Result<MeshPart> {
        let coarsest = self.meshes().next().unwrap_or_else(|| self.finest());
        let sets = self.facet_sets(&FacetSet::boundary(coarsest)?)?;
        let finest = self.finest();
        let facets = sets.last().map_or(&[][..], FacetSet::facets);
        Ok(MeshPart::closure(
            finest,
            facets.iter().map(|f| f.vertex_slice()),
        ))
    }

    /// `coarse` (a facet set of [`MeshHierarchy::mesh`]`(0)`) on every
    /// level, coarse to fine: level `l + 1`'s set is the children of level
    /// `l`'s ([`FacetSet::refine`]), so every level integrates a boundary
    /// term over the same surface. Make `coarse` on `mesh(0)`, not on the
    /// mesh the hierarchy was made from: the hierarchy permutes the local
    /// vertices of its tetrahedra ([`prepare_for_refinement`]), which
    /// renumbers their local facets.
    ///
    /// ```
    /// use femquad::facet::FacetSet;
    /// use femquad::mesh::{MeshOptions, unit_cube};
    /// use femquad::multigrid::MeshHierarchy;
    ///
    /// let h = MeshHierarchy::new(&unit_cube(2, &MeshOptions::default())?, 2)?;
    /// let top = FacetSet::boundary_where(h.mesh(0).unwrap(), |x| x[2] == 1.0)?;
    /// let sets = h.facet_sets(&top)?;
    /// assert_eq!(sets.iter().map(FacetSet::len).collect::<Vec<_>>(), [8, 32, 128]);
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// Those of [`FacetSet::check_mesh`] if `coarse` is not a set of
    /// `mesh(0)`.
    pub fn facet_sets(&self, coarse: &FacetSet) -> Result<Vec<FacetSet>> {
        let meshes: Vec<&Arc<Mesh>> = self.meshes().collect();
        coarse.check_mesh(meshes[0])?;
        let mut sets = vec![coarse.clone()];
        for pair in meshes.windows(2) {
            let next = sets[sets.len() - 1].refine(pair[0], pair[1])?;
            sets.push(next);
        }
        Ok(sets)
    }

    /// `finest` (a facet set of [`MeshHierarchy::finest`]) on every level,
    /// coarse to fine: level `l`'s set is the parents of level `l + 1`'s
    /// ([`FacetSet::coarsen`]), the inverse of
    /// [`MeshHierarchy::facet_sets`]. The multigrid levels of a form with
    /// boundary terms integrate them over these sets.
    ///
    /// # Errors
    /// Those of [`FacetSet::coarsen`]: a set of another mesh, or one that
    /// holds only part of a coarser facet.
    pub fn coarsened_facet_sets(&self, finest: &FacetSet) -> Result<Vec<FacetSet>> {
        let meshes: Vec<&Arc<Mesh>> = self.meshes().collect();
        let mut sets = vec![finest.clone()];
        for pair in meshes.windows(2).rev() {
            let next = sets[sets.len() - 1].coarsen(pair[0], pair[1])?;
            sets.push(next);
        }
        sets.reverse();
        Ok(sets)
    }

    /// The hierarchy's meshes as [`MeshHierarchy::mesh`] returns them,
    /// coarse to fine.
    pub fn meshes(&self) -> impl Iterator<Item = &Arc<Mesh>> {
        (0..self.n_levels()).filter_map(|l| self.mesh(l))
    }
}

#[cfg(test)]
mod tests;
