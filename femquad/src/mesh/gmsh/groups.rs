//! Physical groups of a [`GmshMesh`] resolved on its mesh: their cells,
//! lower-dimensional elements and vertices, and the [`MeshPart`] where a
//! Dirichlet condition given on them fixes the dofs of a space.

use super::{GmshElement, GmshMesh, PhysicalGroup};
use crate::facet::FacetSet;
use crate::mesh::{BoundaryFacet, MeshPart};
use crate::{Error, Result};

impl GmshMesh {
    /// The physical group called `name`, if any.
    pub fn physical_group(&self, name: &str) -> Option<&PhysicalGroup> {
        self.physical_groups.iter().find(|g| g.name == name)
    }

    /// Physical tags of entity `(dim, tag)` (empty if unknown).
    pub fn physical_tags(&self, dim: usize, entity: i32) -> &[i32] {
        self.entities
            .iter()
            .find(|e| e.dim == dim && e.tag == entity)
            .map_or(&[], |e| &e.physical_tags)
    }

    /// Entity tags of dimension `group.dim` that belong to `group`.
    fn group_entities(&self, group: &PhysicalGroup) -> Vec<i32> {
        self.entities
            .iter()
            .filter(|e| e.dim == group.dim && e.physical_tags.contains(&group.tag))
            .map(|e| e.tag)
            .collect()
    }

    /// Indices of the cells in `group` (empty unless `group.dim` is the mesh
    /// dimension), increasing.
    pub fn group_cells(&self, group: &PhysicalGroup) -> Vec<u32> {
        if group.dim != self.mesh.dim() {
            return Vec::new();
        }
        let ents = self.group_entities(group);
        (0..self.mesh.n_cells() as u32)
            .filter(|&c| ents.contains(&self.cell_entities[c as usize]))
            .collect()
    }

    /// The lower-dimensional elements in `group` (e.g. the boundary lines of
    /// a physical curve), in file order.
    pub fn group_elements(&self, group: &PhysicalGroup) -> Vec<&GmshElement> {
        let ents = self.group_entities(group);
        self.elements
            .iter()
            .filter(|e| e.dim == group.dim && ents.contains(&e.entity))
            .collect()
    }

    /// The mesh vertices of the elements (or cells) in `group`, sorted and
    /// without repetition.
    ///
    /// These are vertices, not the dofs of a Dirichlet condition: a P2
    /// space also has nodes on the group's edges, and a vector field one
    /// dof per component. For the dofs, take the group's
    /// [`GmshMesh::part`] to [`FunctionSpace::dofs_on`](crate::space::FunctionSpace::dofs_on).
    pub fn group_vertices(&self, group: &PhysicalGroup) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .group_elements(group)
            .iter()
            .flat_map(|e| e.vertices.iter().copied())
            .collect();
        for c in self.group_cells(group) {
            v.extend_from_slice(self.mesh.cell(c as usize));
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The part of the mesh in the physical groups `names` (their union):
    /// the vertices and edges of their elements — boundary lines or
    /// triangles, points, or cells for a group of the mesh's dimension —
    /// where a Dirichlet condition given on those groups fixes the dofs of
    /// a space ([`FunctionSpace::dofs_on`](crate::space::FunctionSpace::dofs_on):
    /// for P2 the edge nodes too).
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
    /// let edges = g.part(&["bottom"])?.edges().to_vec();
    /// assert_eq!(edges.len(), 1);
    /// // nodes 1 and 2 of the file, whatever their vertex numbers
    /// let mut tags: Vec<u64> = edges[0].iter().map(|&v| g.node_tags[v as usize]).collect();
    /// tags.sort();
    /// assert_eq!(tags, [1, 2]);
    /// let e = g.part(&["top"]).unwrap_err().to_string();
    /// assert!(e.contains("no physical group `top`") && e.contains("`bottom` (1D, tag 1)"), "{e}");
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `names` if it is empty or names a
    /// group the mesh does not have (the reason lists the groups it has).
    pub fn part(&self, names: &[&str]) -> Result<MeshPart> {
        let groups = self.groups_named(names)?;
        let cells: Vec<u32> = groups.iter().flat_map(|g| self.group_cells(g)).collect();
        let elements: Vec<&GmshElement> =
            groups.iter().flat_map(|g| self.group_elements(g)).collect();
        let simplices = elements
            .iter()
            .map(|e| e.vertices.as_slice())
            .chain(cells.iter().map(|&c| self.mesh.cell(c as usize)));
        Ok(MeshPart::closure(&self.mesh, simplices))
    }

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

    /// The physical groups called `names`, each name at least one group.
    fn groups_named(&self, names: &[&str]) -> Result<Vec<&PhysicalGroup>> {
        if names.is_empty() {
            return Err(Error::arg(
                "names",
                "lists no physical group: name at least one",
            ));
        }
        let mut groups = Vec::new();
        for &name in names {
            let before = groups.len();
            groups.extend(self.physical_groups.iter().filter(|g| g.name == name));
            if groups.len() == before {
                return Err(Error::arg(
                    "names",
                    format!(
                        "no physical group `{name}` in this mesh; {}",
                        self.groups_list()
                    ),
                ));
            }
        }
        Ok(groups)
    }

    /// The physical groups as an error message lists them.
    fn groups_list(&self) -> String {
        if self.physical_groups.is_empty() {
            return "it has no physical groups (a Gmsh model saves them in $PhysicalNames and \
                    $Entities when it defines them)"
                .into();
        }
        let groups: Vec<String> = self
            .physical_groups
            .iter()
            .map(|g| {
                let name = if g.name.is_empty() {
                    "unnamed".to_string()
                } else {
                    format!("`{}`", g.name)
                };
                format!("{name} ({}D, tag {})", g.dim, g.tag)
            })
            .collect();
        format!("its groups: {}", groups.join(", "))
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
