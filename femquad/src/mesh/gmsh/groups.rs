//! Physical groups of a [`GmshMesh`] resolved on its mesh: their cells,
//! lower-dimensional elements and vertices, and the [`MeshPart`] where a
//! Dirichlet condition given on them fixes the dofs of a space.

use super::{GmshElement, GmshMesh, PhysicalGroup};
use crate::mesh::MeshPart;
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

    /// The physical groups called `names`, each name at least one group.
    pub(crate) fn groups_named(&self, names: &[&str]) -> Result<Vec<&PhysicalGroup>> {
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
    pub(crate) fn groups_list(&self) -> String {
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
