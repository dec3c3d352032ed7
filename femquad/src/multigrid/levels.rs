//! [`LevelSpaces`]: the function space of every multigrid level, the
//! transfers between them and the fixed (Dirichlet) dofs of each level.

use std::sync::Arc;

use super::hierarchy::MeshHierarchy;
use super::transfer::Transfer;
use crate::element::Element;
use crate::linalg::FixedDofs;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

/// Why a space or a problem does not fit a hierarchy (the argument is named
/// by the caller).
pub(crate) const NOT_ON_FINEST: &str = "its mesh is not the hierarchy's finest mesh: build the space on \
     `hierarchy.finest().clone()` (the same `Arc<Mesh>`; a copy of the mesh, even an equal one, \
     is another mesh)";

/// The levels of geometric multigrid for a field on a [`MeshHierarchy`],
/// numbered from 0 (the coarsest) to `n_levels − 1` (the field's own
/// space):
///
/// * **P1 field** — one level per mesh: P1 on mesh 0, …, P1 on the finest
///   mesh (`n_levels = n_meshes`).
/// * **P2 field** — the same P1 levels, then P2 on the finest mesh
///   (`n_levels = n_meshes + 1`): the last step coarsens the order, not the
///   mesh.
///
/// Every level has the field's `N_comp` components. Between levels `l` and
/// `l + 1` the fine nodes are the coarse nodes followed by midpoints of
/// coarse edges (a refinement's new vertices, or a mesh's P2 edge nodes), so
/// every transfer is a [`Transfer`].
///
/// # Fixed dofs on every level
/// The coarse nodes are the first fine nodes (same indices), and a coarse
/// dof is fixed exactly when the fine dof with its index is
/// ([`LevelSpaces::fixed_dofs`]). For the boundary of a generated mesh this
/// gives each level's boundary dofs, and for a Gmsh physical group each
/// level's group vertices (the refined group's vertices are the coarse
/// group's plus midpoints of its edges; the test
/// `fixed_dofs_are_each_levels_boundary_and_groups` checks both).
#[derive(Clone, Debug)]
pub struct LevelSpaces {
    spaces: Vec<FunctionSpace>,
    mesh_levels: Vec<usize>,
    /// `edges[l]`: the coarse edges whose midpoints are the new nodes of
    /// level `l + 1` (shared with the hierarchy and the transfers).
    edges: Vec<Arc<Vec<[u32; 2]>>>,
}

impl LevelSpaces {
    /// The levels of the field space `finest` on the finest mesh of
    /// `hierarchy` (P1 or P2, any `N_comp`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `finest` if it is not a space on
    /// `hierarchy.finest()` (the same `Arc`, compared by pointer); those of
    /// [`FunctionSpace::new`].
    pub fn new(hierarchy: &MeshHierarchy, finest: &FunctionSpace) -> Result<Self> {
        if !Arc::ptr_eq(finest.mesh(), hierarchy.finest()) {
            return Err(Error::arg("finest", NOT_ON_FINEST));
        }
        let (dim, n_comp) = (finest.dim(), finest.n_comp());
        let n_meshes = hierarchy.n_levels();
        let mut spaces = Vec::new();
        let mut mesh_levels = Vec::new();
        let mut edges = Vec::new();
        for (l, mesh) in hierarchy.meshes().enumerate() {
            if l + 1 == n_meshes && finest.element().order() == 1 {
                spaces.push(finest.clone());
            } else {
                spaces.push(FunctionSpace::new(
                    mesh.clone(),
                    Element::lagrange(dim, 1)?,
                    n_comp,
                )?);
            }
            mesh_levels.push(l);
            if let Some(e) = hierarchy.shared_edges(l) {
                edges.push(e.clone());
            }
        }
        if finest.element().order() == 2 {
            let p2_edges = (0..finest.n_edges())
                .map(|k| {
                    finest
                        .edge(k)
                        .ok_or_else(|| Error::internal(format!("the P2 space has no edge {k}")))
                })
                .collect::<Result<Vec<_>>>()?;
            edges.push(Arc::new(p2_edges));
            spaces.push(finest.clone());
            mesh_levels.push(n_meshes - 1);
        }
        Ok(LevelSpaces {
            spaces,
            mesh_levels,
            edges,
        })
    }

    /// Number of levels.
    pub fn n_levels(&self) -> usize {
        self.spaces.len()
    }

    /// The space of `level` (0 the coarsest).
    pub fn space(&self, level: usize) -> Option<&FunctionSpace> {
        self.spaces.get(level)
    }

    /// The spaces, coarse to fine.
    pub fn spaces(&self) -> &[FunctionSpace] {
        &self.spaces
    }

    /// The hierarchy mesh of `level`.
    pub fn mesh_level(&self, level: usize) -> Option<usize> {
        self.mesh_levels.get(level).copied()
    }

    /// The coarse edges whose midpoints are the new nodes of `level + 1`.
    pub fn edges(&self, level: usize) -> Option<&[[u32; 2]]> {
        self.edges.get(level).map(|e| e.as_slice())
    }

    /// The transfer between `level` and `level + 1`, on host vectors.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `level` if it is the finest; those
    /// of [`Transfer::new`].
    pub fn transfer<R: Real>(&self, level: usize) -> Result<Transfer<R>> {
        let edges = self.edges.get(level).ok_or_else(|| {
            Error::arg(
                "level",
                format!("{level} has no finer level ({} levels)", self.n_levels()),
            )
        })?;
        let coarse = &self.spaces[level];
        Transfer::new(coarse.n_nodes(), edges.clone(), coarse.n_comp())
    }

    /// The fixed dofs of every level (coarse to fine) from those of the
    /// finest level: dof `d < n_dofs(l)` of level `l` is fixed iff dof `d`
    /// of level `l + 1` is (see the [type documentation](Self)).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `finest_fixed` if it is a set of
    /// another number of dofs than the finest level's.
    pub fn fixed_dofs(&self, finest_fixed: &FixedDofs) -> Result<Vec<FixedDofs>> {
        let n = self.spaces.last().map_or(0, FunctionSpace::n_dofs);
        if finest_fixed.n_dofs() != n {
            return Err(Error::arg(
                "finest_fixed",
                format!(
                    "fixed dofs of a system of {} dofs, but the finest level has {n}",
                    finest_fixed.n_dofs()
                ),
            ));
        }
        let mut out = vec![finest_fixed.clone()];
        for space in self.spaces.iter().rev().skip(1) {
            let finer = out.last().unwrap_or(finest_fixed);
            // a coarser level's dofs are the first of the finer level's
            let coarse = finer.first(space.n_dofs()).map_err(|e| {
                Error::internal(format!("a multigrid level larger than the next finer: {e}"))
            })?;
            out.push(coarse);
        }
        out.reverse();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{Mesh, read_gmsh};

    /// The fixed dofs of every multigrid level derived from the finest
    /// level's ([`LevelSpaces::fixed_dofs`]) on a Gmsh hierarchy are the
    /// group's dofs on that level — for a boundary part (`bottom`) and for
    /// the whole boundary, P1 and P2, scalar and vector fields; a space on
    /// another mesh is refused.
    #[test]
    fn fixed_dofs_are_each_levels_boundary_and_groups() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mesh_cube.msh");
        let gmsh = read_gmsh(path).unwrap();
        let levels = 2;
        let h = MeshHierarchy::from_gmsh(&gmsh, levels).unwrap();
        let bottom = gmsh.physical_group("bottom").unwrap().clone();
        for (order, nc) in [(1, 1), (2, 3)] {
            let finest =
                FunctionSpace::new(h.finest().clone(), Element::lagrange(3, order).unwrap(), nc)
                    .unwrap();
            let spaces = LevelSpaces::new(&h, &finest).unwrap();
            assert_eq!(spaces.n_levels(), levels + order);
            // Dirichlet on `bottom`: the finest level's dofs of the group's nodes
            let group_dofs = |space: &FunctionSpace, mesh_level: usize| -> Vec<u32> {
                let g = h.gmsh(mesh_level).unwrap();
                let vertices = g.group_vertices(&bottom);
                let mut nodes: Vec<u32> = vertices.clone();
                if space.element().order() == 2 {
                    let is: std::collections::BTreeSet<u32> = vertices.iter().copied().collect();
                    for k in 0..space.n_edges() {
                        let [a, b] = space.edge(k).unwrap();
                        // an edge of the group: both ends in it and on the bottom face z = 0
                        let on = |v: u32| g.mesh.vertex(v as usize)[2].abs() < 1e-12;
                        if is.contains(&a) && is.contains(&b) && on(a) && on(b) {
                            nodes.push((space.n_vertices() + k) as u32);
                        }
                    }
                }
                let mut dofs: Vec<u32> = nodes
                    .iter()
                    .flat_map(|&n| (0..nc as u32).map(move |c| n * nc as u32 + c))
                    .collect();
                dofs.sort_unstable();
                dofs
            };
            let top = spaces.n_levels() - 1;
            let n = finest.n_dofs();
            let finest_group = FixedDofs::new(n, &group_dofs(&finest, levels)).unwrap();
            let fixed = spaces.fixed_dofs(&finest_group).unwrap();
            for (l, fixed_l) in fixed.iter().enumerate() {
                let space = spaces.space(l).unwrap();
                let mesh_level = spaces.mesh_level(l).unwrap();
                assert_eq!(fixed_l.n_dofs(), space.n_dofs(), "P{order} level {l}");
                assert_eq!(
                    fixed_l.dofs(),
                    group_dofs(space, mesh_level),
                    "P{order} level {l}"
                );
            }
            // the whole boundary: each level's boundary dofs
            let boundary = FixedDofs::new(n, &finest.boundary_dofs().unwrap()).unwrap();
            let all = spaces.fixed_dofs(&boundary).unwrap();
            assert_eq!(all.len(), top + 1);
            for (l, all_l) in all.iter().enumerate() {
                let space = spaces.space(l).unwrap();
                // each level's space is on the hierarchy's mesh itself, not a copy
                let mesh = h.mesh(spaces.mesh_level(l).unwrap()).unwrap();
                assert!(Arc::ptr_eq(space.mesh(), mesh), "P{order} level {l}");
                assert_eq!(
                    all_l.dofs(),
                    space.boundary_dofs().unwrap(),
                    "P{order} level {l}"
                );
            }
            // fixed dofs of another system than the finest level's are refused
            let e = spaces
                .fixed_dofs(&FixedDofs::new(n + 1, &[]).unwrap())
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "invalid argument `finest_fixed`: fixed dofs of a system of {} dofs, but \
                     the finest level has {n}",
                    n + 1
                )
            );
        }
        // a space on another mesh is refused, naming the argument
        let other =
            FunctionSpace::new(gmsh.mesh.clone(), Element::lagrange(3, 1).unwrap(), 1).unwrap();
        let e = LevelSpaces::new(&h, &other).unwrap_err().to_string();
        assert!(e.contains("`finest`") && e.contains("finest mesh"), "{e}");
    }

    /// The finest space must be on the hierarchy's finest mesh itself (the
    /// same `Arc`): a space on an equal copy of it is refused with the
    /// message that says so, in O(1) (no comparison of cells).
    #[test]
    fn a_space_on_a_copy_of_the_finest_mesh_is_refused() {
        let coarse = crate::mesh::unit_square(2, &Default::default()).unwrap();
        let h = MeshHierarchy::new(&coarse, 1).unwrap();
        let copy = Arc::new(Mesh::clone(h.finest()));
        assert_eq!(*copy, **h.finest());
        let element = Element::lagrange(2, 2).unwrap();
        let space = FunctionSpace::new(copy.clone(), element, 1).unwrap();
        let e = LevelSpaces::new(&h, &space).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid argument `finest`: its mesh is not the hierarchy's finest mesh: build the \
             space on `hierarchy.finest().clone()` (the same `Arc<Mesh>`; a copy of the mesh, \
             even an equal one, is another mesh)"
        );
        let shared = FunctionSpace::new(h.finest().clone(), element, 1).unwrap();
        assert_eq!(LevelSpaces::new(&h, &shared).unwrap().n_levels(), 3);
    }
}
