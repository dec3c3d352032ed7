//! The dofs a Dirichlet condition fixes: those of a [`MeshPart`] (the
//! boundary, boundary facets chosen by a predicate, Gmsh physical groups),
//! for any space — P1 or P2, scalar or vector, all components or some.
//!
//! A condition given on a part fixes the nodes on its closure: its vertices
//! (every space) and, for P2, the midpoint nodes of its edges. Fixing the
//! vertices alone leaves a P2 field free on the edges between them, which
//! solves a different problem without a warning.

use super::FunctionSpace;
use crate::layout::global_dof;
use crate::mesh::MeshPart;
use crate::{Error, Result};

/// The components of a field a condition fixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Components<'a> {
    /// Every component (`0..N_comp`).
    All,
    /// These components (e.g. `&[0]`: the normal displacement on a symmetry
    /// plane `x₀ = 0`); each `< N_comp`, at least one.
    Only(&'a [usize]),
}

impl FunctionSpace {
    /// The nodes on `part`, increasing: its vertices and, for P2, the nodes
    /// `n_vertices + k` of its edges `k`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `part` if it was made on a mesh of
    /// other counts than this space's, or (P2) has an edge that is not an
    /// edge of this space's mesh.
    pub fn nodes_on(&self, part: &MeshPart) -> Result<Vec<u32>> {
        part.check_counts(self.n_vertices(), self.n_cells())?;
        let mut nodes = part.vertices().to_vec();
        if self.element.order() == 2 {
            for &[a, b] in part.edges() {
                let key = (u64::from(a) << 32) | u64::from(b);
                let k = self.numbering.edge_keys.binary_search(&key).map_err(|_| {
                    Error::arg(
                        "part",
                        format!(
                            "its edge ({a}, {b}) is not an edge of the space's mesh: make the part \
                             on the mesh of the space"
                        ),
                    )
                })?;
                // vertices come first, the edge nodes after them: the order stays increasing
                nodes.push((self.n_vertices() + k) as u32);
            }
        }
        Ok(nodes)
    }

    /// The dofs a Dirichlet condition on `part` fixes, increasing:
    /// `node·N_comp + c` for every node of [`FunctionSpace::nodes_on`] and
    /// every chosen component `c`.
    ///
    /// For a problem posed with [`crate::solve::DirichletProblem::new`]
    /// (several parts, or several components with different parts: chain
    /// the dofs; repetitions are allowed there).
    ///
    /// ```
    /// use femquad::mesh::MeshPart;
    /// use femquad::prelude::*;
    /// use femquad::space::Components;
    ///
    /// let mesh = unit_square(2, &MeshOptions::default())?;
    /// // P2 displacement (2 components)
    /// let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 2)?, 2)?;
    /// // 3 vertices and 2 edge nodes on the left side
    /// let left = MeshPart::boundary_where(space.mesh(), |x| x[0] == 0.0)?;
    /// assert_eq!(space.nodes_on(&left)?.len(), 5);
    /// assert_eq!(space.dofs_on(&left, Components::All)?.len(), 10);
    /// let normal = space.dofs_on(&left, Components::Only(&[0]))?; // u₀ = 0 only
    /// assert!(normal.iter().all(|d| d % 2 == 0) && normal.len() == 5);
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// Those of [`FunctionSpace::nodes_on`]; [`Error::InvalidArgument`]
    /// naming `components` for a component `≥ N_comp` or an empty list, or
    /// naming `self` if `n_dofs()` exceeds the `u32` range.
    pub fn dofs_on(&self, part: &MeshPart, components: Components) -> Result<Vec<u32>> {
        let nc = self.n_comp;
        let chosen: Vec<usize> = match components {
            Components::All => (0..nc).collect(),
            Components::Only(list) => {
                if list.is_empty() {
                    return Err(Error::arg(
                        "components",
                        "lists no component: give Components::All or at least one component",
                    ));
                }
                if let Some(&c) = list.iter().find(|&&c| c >= nc) {
                    return Err(Error::arg(
                        "components",
                        format!("component {c} is out of range: the field has {nc} (0..{nc})"),
                    ));
                }
                let mut l = list.to_vec();
                l.sort_unstable();
                l.dedup();
                l
            }
        };
        if self.n_dofs() > u32::MAX as usize + 1 {
            return Err(Error::arg(
                "self",
                format!("{} dofs exceed the u32 index range", self.n_dofs()),
            ));
        }
        Ok(self
            .nodes_on(part)?
            .into_iter()
            .flat_map(|n| {
                chosen
                    .iter()
                    .map(move |&c| global_dof(n as usize, c, nc) as u32)
            })
            .collect())
    }

    /// The nodes on the boundary, increasing: [`FunctionSpace::nodes_on`]
    /// of [`MeshPart::boundary`] — the vertices of the boundary facets and,
    /// for P2, the nodes of their edges. A boundary facet is a facet (edge
    /// in 2D, triangle in 3D) of exactly one cell ([`Mesh::boundary_facets`](crate::mesh::Mesh::boundary_facets)).
    ///
    /// # Errors
    /// Those of [`Mesh::boundary_facets`](crate::mesh::Mesh::boundary_facets) (e.g. a non-manifold mesh).
    pub fn boundary_nodes(&self) -> Result<Vec<u32>> {
        self.nodes_on(&MeshPart::boundary(&self.mesh)?)
    }

    /// All dofs of the boundary nodes, increasing:
    /// [`FunctionSpace::dofs_on`] of [`MeshPart::boundary`], every component.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `n_dofs()` exceeds the `u32` range;
    /// those of [`Mesh::boundary_facets`](crate::mesh::Mesh::boundary_facets).
    pub fn boundary_dofs(&self) -> Result<Vec<u32>> {
        self.dofs_on(&MeshPart::boundary(&self.mesh)?, Components::All)
    }
}

#[cfg(test)]
mod tests;
