//! [`GmshMesh::facet_set`]: the boundary facets of Gmsh physical groups.

use crate::mesh::{BoundaryFacet, GmshMesh};
use crate::{Error, Result};

use super::FacetSet;

impl GmshMesh {
    /// The boundary facets of the physical groups `names` (their union), of
    /// dimension `dim − 1` (boundary curves in 2D, surfaces in 3D): each
    /// group element is matched to the one boundary facet of the mesh with
    /// its vertices ([`Mesh::boundary_facets`](crate::mesh::Mesh::boundary_facets)),
    /// whatever the element's vertex order — the facet keeps its cell's
    /// outward orientation.
    ///
    /// ```
    /// use femquad::mesh::parse_gmsh;
    /// # let msh = "$MeshFormat\n4.1 0 8\n$EndMeshFormat
    /// # $PhysicalNames\n1\n1 1 \"bottom\"\n$EndPhysicalNames
    /// # $Entities\n0 1 1 0\n1 0 0 0 1 0 0 1 1 0\n1 0 0 0 1 1 0 0 0\n$EndEntities
    /// # $Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes
    /// # $Elements\n2 3 1 3\n1 1 1 1\n1 1 2\n2 1 2 2\n2 1 2 3\n3 1 3 4\n$EndElements\n";
    /// // the unit square of two triangles, its bottom side the group `bottom`
    /// let g = parse_gmsh(msh.as_bytes(), "square.msh")?;
    /// let bottom = g.facet_set(&["bottom"])?;
    /// assert_eq!(bottom.len(), 1);
    /// let f = bottom.facets()[0];
    /// // outward oriented: from node 1 (0, 0) to node 2 (1, 0), the square on its left
    /// let tags: Vec<u64> = f.vertex_slice().iter().map(|&v| g.node_tags[v as usize]).collect();
    /// assert_eq!(tags, [1, 2]);
    /// let e = g.facet_set(&["top"]).unwrap_err().to_string();
    /// assert!(e.contains("no physical group `top`") && e.contains("`bottom` (1D, tag 1)"), "{e}");
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`names`) if `names` is empty, names a
    /// group the mesh does not have (the reason lists the groups it has),
    /// or a group not of dimension `dim − 1`; [`Error::InvalidArgument`]
    /// (`names`) naming the tag of a group element that is not a boundary
    /// facet of the mesh (an interior facet, or not a facet of any cell);
    /// those of [`Mesh::boundary_facets`](crate::mesh::Mesh::boundary_facets).
    pub fn facet_set(&self, names: &[&str]) -> Result<FacetSet> {
        let groups = self.groups_named(names)?;
        let dim = self.mesh.dim();
        if let Some(g) = groups.iter().find(|g| g.dim + 1 != dim) {
            return Err(Error::arg(
                "names",
                format!(
                    "physical group `{}` is {}D: the facets of a {dim}D mesh are a {}D group; {}",
                    g.name,
                    g.dim,
                    dim - 1,
                    self.groups_list()
                ),
            ));
        }
        let mut boundary: Vec<([u32; 3], BoundaryFacet)> = self
            .mesh
            .boundary_facets()?
            .into_iter()
            .map(|f| (sorted_key(f.vertex_slice()), f))
            .collect();
        boundary.sort_unstable_by_key(|(k, _)| *k);
        let mut facets = Vec::new();
        for g in &groups {
            for e in self.group_elements(g) {
                let key = sorted_key(&e.vertices);
                let found = (e.vertices.len() == dim)
                    .then(|| boundary.binary_search_by_key(&key, |(k, _)| *k).ok())
                    .flatten();
                match found {
                    Some(i) => facets.push(boundary[i].1),
                    None => {
                        return Err(Error::arg(
                            "names",
                            format!(
                                "element {} of physical group `{}` (vertices {:?}) is not a \
                                 boundary facet of the mesh: a boundary term needs facets of \
                                 exactly one cell",
                                e.tag, g.name, e.vertices
                            ),
                        ));
                    }
                }
            }
        }
        Ok(FacetSet::from_facets(&self.mesh, facets))
    }
}

/// `vertices` (2 or 3) sorted, padded with `u32::MAX`.
fn sorted_key(vertices: &[u32]) -> [u32; 3] {
    let mut k = [u32::MAX; 3];
    for (k, &v) in k.iter_mut().zip(vertices) {
        *k = v;
    }
    k.sort_unstable();
    k
}
