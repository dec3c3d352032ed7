//! A Gmsh mesh renumbered with its tags, boundary elements and groups
//! ([`Renumbering::apply_to_gmsh`]), as [`super::read_gmsh`] does by
//! default ([`super::GmshNumbering::Locality`]).

use std::sync::Arc;

use rayon::prelude::*;

use super::{GmshElement, GmshMesh};
use crate::mesh::renumber::{Renumbering, permute};
use crate::{Error, Result};

impl Renumbering {
    /// The renumbered Gmsh mesh: the [`Mesh`] as [`Renumbering::apply`];
    /// `node_tags`, `cell_tags` and `cell_entities` permuted with their
    /// vertices and cells (so `node_tags` is no longer increasing: it maps
    /// each new vertex to its Gmsh node tag); lower-dimensional `elements`
    /// keep their order, tags and entities, with their vertices relabelled;
    /// entities and physical groups unchanged. Hence
    /// [`GmshMesh::group_vertices`] of the result is the renumbered image of
    /// the original's, and [`GmshMesh::group_cells`] likewise.
    ///
    /// Errors: those of [`Renumbering::apply`]; [`Error::InvalidArgument`]
    /// (`gmsh`) if a tag array's length differs from the mesh's counts or an
    /// element names a vertex out of range (naming the element's tag).
    pub fn apply_to_gmsh(&self, gmsh: &GmshMesh) -> Result<GmshMesh> {
        let (nv, nc) = (gmsh.mesh.n_vertices(), gmsh.mesh.n_cells());
        for (name, len, want) in [
            ("node_tags", gmsh.node_tags.len(), nv),
            ("cell_tags", gmsh.cell_tags.len(), nc),
            ("cell_entities", gmsh.cell_entities.len(), nc),
        ] {
            if len != want {
                return Err(Error::arg(
                    "gmsh",
                    format!("{name} has {len} entries for {want} mesh entities"),
                ));
            }
        }
        if let Some(e) = gmsh
            .elements
            .iter()
            .find(|e| e.vertices.iter().any(|&v| v as usize >= nv))
        {
            return Err(Error::arg(
                "gmsh",
                format!(
                    "element {} names vertices {:?}, out of range ({nv} vertices)",
                    e.tag, e.vertices
                ),
            ));
        }
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
