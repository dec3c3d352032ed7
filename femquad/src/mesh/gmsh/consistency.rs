//! The one check that a [`GmshMesh`]'s parts fit its mesh, for the
//! operations that build a new `GmshMesh` from one a user may have edited
//! (renumbering, refinement).

use super::GmshMesh;
use crate::{Error, Result};

impl GmshMesh {
    /// Checks that the parts fit the mesh: `node_tags` has one entry per
    /// vertex, `cell_tags` and `cell_entities` one per cell, and every
    /// lower-dimensional element has dimension below the mesh's, `dim + 1`
    /// vertices, all in range.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`gmsh`) naming the array and its length,
    /// or the element by its tag and what is wrong with it.
    pub(crate) fn check_parts(&self) -> Result<()> {
        let (nv, nc) = (self.mesh.n_vertices(), self.mesh.n_cells());
        for (name, len, want) in [
            ("node_tags", self.node_tags.len(), nv),
            ("cell_tags", self.cell_tags.len(), nc),
            ("cell_entities", self.cell_entities.len(), nc),
        ] {
            if len != want {
                return Err(Error::arg(
                    "gmsh",
                    format!("{name} has {len} entries for {want} mesh entities"),
                ));
            }
        }
        for e in &self.elements {
            let bad = |why: String| Error::arg("gmsh", format!("element {}: {why}", e.tag));
            if e.dim >= self.mesh.dim() || e.vertices.len() != e.dim + 1 {
                return Err(bad(format!(
                    "{} vertices for a {}-dimensional element of a {}D mesh",
                    e.vertices.len(),
                    e.dim,
                    self.mesh.dim()
                )));
            }
            if let Some(&v) = e.vertices.iter().find(|&&v| v as usize >= nv) {
                return Err(bad(format!("vertex {v} is out of range ({nv} vertices)")));
            }
        }
        Ok(())
    }
}
