//! A Gmsh mesh renumbered with its tags, boundary elements and groups
//! ([`Renumbering::apply_to_gmsh`]), as [`super::read_gmsh`] does by
//! default ([`super::GmshNumbering::Locality`]).

use std::sync::Arc;

use rayon::prelude::*;

use super::{GmshElement, GmshMesh};
use crate::Result;
use crate::mesh::renumber::{Renumbering, permute};

impl Renumbering {
    /// The renumbered Gmsh mesh: the [`Mesh`](crate::mesh::Mesh) as [`Renumbering::apply`];
    /// `node_tags`, `cell_tags` and `cell_entities` permuted with their
    /// vertices and cells (so `node_tags` is no longer increasing: it maps
    /// each new vertex to its Gmsh node tag); lower-dimensional `elements`
    /// keep their order, tags and entities, with their vertices relabelled;
    /// entities and physical groups unchanged. Hence
    /// [`GmshMesh::group_vertices`] of the result is the renumbered image of
    /// the original's, and [`GmshMesh::group_cells`] likewise.
    ///
    /// Errors: those of [`Renumbering::apply`]; [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// (`gmsh`) if a tag array's length differs from the mesh's counts or an
    /// element (named by its tag) has the wrong number of vertices for its
    /// dimension or a vertex out of range.
    pub fn apply_to_gmsh(&self, gmsh: &GmshMesh) -> Result<GmshMesh> {
        gmsh.check_parts()?;
        let mesh = self.apply(&gmsh.mesh)?;
        let elements = gmsh
            .elements
            .par_iter()
            .map(|e| GmshElement {
                tag: e.tag,
                dim: e.dim,
                entity: e.entity,
                vertices: e
                    .vertices
                    .iter()
                    .map(|&v| self.vertex_new_of_old()[v as usize])
                    .collect(),
            })
            .collect();
        Ok(GmshMesh {
            mesh: Arc::new(mesh),
            reoriented: gmsh.reoriented,
            second_order: gmsh.second_order,
            node_tags: permute(&gmsh.node_tags, self.vertex_old_of_new(), 1),
            cell_tags: permute(&gmsh.cell_tags, self.cell_old_of_new(), 1),
            cell_entities: permute(&gmsh.cell_entities, self.cell_old_of_new(), 1),
            elements,
            entities: gmsh.entities.clone(),
            physical_groups: gmsh.physical_groups.clone(),
        })
    }
}
