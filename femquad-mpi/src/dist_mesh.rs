//! [`DistMesh`]: this rank's part of a partitioned mesh and the ranks it
//! belongs to — what distributed vectors and operators share.

use std::rc::Rc;

use femquad::mesh::Mesh;
use femquad::{Error, Result};

use crate::comm::Ranks;
use crate::layout::RankLayout;
use crate::partition::distribute;

/// This rank's [`RankLayout`] with the ranks of the computation. Shared
/// (`Rc`) by the vectors and operators on it; a vector of one `DistMesh`
/// cannot be combined with a vector of another.
pub struct DistMesh {
    ranks: Ranks,
    layout: RankLayout,
}

impl DistMesh {
    /// Collective: distributes the mesh rank 0 holds with the rank of each
    /// of its cells ([`distribute`]); the other ranks pass `None`.
    ///
    /// # Errors
    /// Those of [`distribute`], on every rank.
    pub fn new(ranks: Ranks, mesh: Option<(&Mesh, &[u32])>) -> Result<Rc<DistMesh>> {
        let layout = distribute(&ranks, mesh)?;
        Ok(Rc::new(DistMesh { ranks, layout }))
    }

    /// This rank's part of a mesh whose layout it computed itself (every
    /// rank its own, consistent with the others': a level of a
    /// [`DistHierarchy`](crate::DistHierarchy)).
    pub(crate) fn from_layout(ranks: Ranks, layout: RankLayout) -> Rc<DistMesh> {
        Rc::new(DistMesh { ranks, layout })
    }

    /// The ranks.
    pub fn ranks(&self) -> &Ranks {
        &self.ranks
    }

    /// This rank's layout.
    pub fn layout(&self) -> &RankLayout {
        &self.layout
    }

    /// The mask of the local entries (`per_node` per local vertex) of the
    /// vertices whose coordinates `at` accepts — e.g. the boundary of a box
    /// on a level of a [`DistHierarchy`](crate::DistHierarchy), whose
    /// global numbering is not the serial one.
    pub fn mask_where(&self, per_node: usize, at: impl Fn(&[f64]) -> bool) -> Vec<bool> {
        let dim = self.layout.dim.max(1);
        self.layout
            .coordinates
            .chunks_exact(dim)
            .flat_map(|x| std::iter::repeat_n(at(x), per_node))
            .collect()
    }

    /// The mask of the local entries (`per_node` per local vertex) whose
    /// global index (`vertex·per_node + c`) is in `global` — e.g. the
    /// Dirichlet dofs of the serial space, known on every rank.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `global` for an index out of range
    /// (with the number of global entries).
    pub fn local_mask(&self, global: &[u32], per_node: usize) -> Result<Vec<bool>> {
        let n_global = self.layout.n_global_vertices * per_node;
        let mut is_in = vec![false; n_global];
        for &g in global {
            *is_in.get_mut(g as usize).ok_or_else(|| {
                Error::arg(
                    "global",
                    format!("index {g} is out of range ({n_global} global entries)"),
                )
            })? = true;
        }
        Ok(self
            .layout
            .global_vertices
            .iter()
            .flat_map(|&v| (0..per_node).map(move |c| v as usize * per_node + c))
            .map(|g| is_in[g])
            .collect())
    }
}
