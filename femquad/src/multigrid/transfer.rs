//! [`Transfer`]: the nested prolongation, its transpose and the injection of
//! states between two levels, on host or device vectors.

use std::sync::Arc;

use rayon::prelude::*;

use crate::backend::{MultigridKernels, TransferKernels, Vector};
use crate::linalg::FixedDofs;
use crate::seam::TransferGraph;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The transfer between a coarse level with `n_c` nodes and a fine level
/// whose nodes are the `n_c` coarse nodes followed by the midpoints of
/// coarse edges `k = 0, 1, …` — both uniform refinement (P1 on mesh `l` to
/// P1 on mesh `l + 1`) and P1 to P2 on one mesh have this form (the P2
/// nodes of a mesh are its vertices, then its edge midpoints), each with
/// its own edge list: the refinement's new vertices follow its first-touch
/// edge order, the P2 nodes the sorted one. For a field of `N_comp`
/// components (dofs interleaved
/// node-major, `dof = node·N_comp + c`), per component:
///
/// ```text
/// prolongation   (P e)[v] = e[v]                       v < n_c
///                (P e)[n_c + k] = ½ (e[a_k] + e[b_k])  edge k = (a_k, b_k)
/// restriction    (Pᵀ r)[v] = r[v] + Σ_{k ∋ v} ½ r[n_c + k]   (edges at v, increasing k)
/// injection      (I u)[v] = u[v]                       v < n_c
/// ```
///
/// `P` interpolates exactly (nested spaces: the coarse function *is* a fine
/// function), so `P` is the natural prolongation and `Pᵀ` the restriction
/// that keeps a V-cycle symmetric; `I` moves a state (the Newton iterate)
/// to the coarse level, where the operator is linearized.
///
/// With fixed (Dirichlet) dofs given ([`Transfer::with_fixed`]) the
/// prolongation and restriction are those of `P̃`, `P` with the rows of the
/// fixed fine dofs and the columns of the fixed coarse dofs zero:
///
/// ```text
/// (P̃ e)[i] = 0 for a fixed fine dof i,  P̃ e = P ẽ otherwise,  ẽ = e with its fixed entries 0
/// P̃ᵀ r     = (Pᵀ r̃) with its fixed coarse entries 0,        r̃ = r with its fixed entries 0
/// ```
///
/// — the transfers between the free dofs, with no zeroing pass before or
/// after them. [`Transfer::restrict_residual`] restricts a residual
/// `b − w` in the same pass that forms it.
///
/// A transfer works on the vectors of one place: the host (as built by
/// [`Transfer::new`]) or the place of the kernels given to
/// [`Transfer::with_kernels`]. Native and device implementations compute
/// every entry with the same operations in the same order and agree
/// bitwise: on the device one work-item per output entry, no atomics; on
/// the host rayon over blocks of entries. The restriction reads the edges
/// at each coarse node from a CSR list built once here.
///
/// # Example
/// ```
/// use femquad::multigrid::Transfer;
/// use femquad::backend::Vector;
///
/// // two coarse nodes and one edge between them: the fine level has a midpoint
/// let t = Transfer::<f64>::new(2, vec![[0, 1]], 1)?;
/// let coarse = Vector::from(vec![1.0, 3.0]);
/// let mut fine = Vector::from(vec![0.0; 3]);
/// t.prolong_add(&mut fine, &coarse)?;
/// assert_eq!(fine.to_host()?, vec![1.0, 3.0, 2.0]);
/// let mut r = Vector::from(vec![0.0; 2]);
/// t.restrict(&mut r, &Vector::from(vec![1.0, 1.0, 1.0]))?;
/// assert_eq!(r.to_host()?, vec![1.5, 1.5]);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Debug)]
pub struct Transfer<R: Real> {
    graph: Arc<TransferGraph>,
    kernels: TransferKernels<R>,
}

impl<R: Real> Transfer<R> {
    /// The transfer from `n_coarse` nodes to `n_coarse + edges.len()` nodes,
    /// new node `n_coarse + k` the midpoint of `edges[k]`, for fields of
    /// `n_comp` components, on host vectors. `edges` is a `Vec` or one
    /// shared by an `Arc` (kept, not copied).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_comp` if it is 0, `edges` if an
    /// endpoint is not a coarse node (naming the edge) or there are more
    /// than `u32::MAX / 2` edges.
    pub fn new(
        n_coarse: usize,
        edges: impl Into<Arc<Vec<[u32; 2]>>>,
        n_comp: usize,
    ) -> Result<Self> {
        let edges = edges.into();
        if n_comp == 0 {
            return Err(Error::arg("n_comp", "a field has at least one component"));
        }
        if 2 * edges.len() > u32::MAX as usize {
            return Err(Error::arg(
                "edges",
                format!("{} edges exceed the 32-bit incidence lists", edges.len()),
            ));
        }
        if let Some((k, e)) = edges
            .iter()
            .enumerate()
            .find(|(_, e)| e.iter().any(|&v| v as usize >= n_coarse))
        {
            return Err(Error::arg(
                "edges",
                format!(
                    "edge {k} = {e:?} has an endpoint that is not one of the {n_coarse} coarse nodes"
                ),
            ));
        }
        let range = n_coarse
            .div_ceil(rayon::current_num_threads())
            .max(MIN_RANGE);
        let (offsets, incident) = incidence(n_coarse, &edges, range);
        let graph = Arc::new(TransferGraph {
            n_coarse,
            n_comp,
            coarse_fixed: vec![0; n_coarse * n_comp],
            fine_fixed: vec![0; (n_coarse + edges.len()) * n_comp],
            edges,
            offsets,
            incident,
        });
        let kernels = MultigridKernels::host(n_comp)?.transfer(&graph)?;
        Ok(Transfer { graph, kernels })
    }

    /// The same transfer for the vectors where `kernels` work (its index
    /// arrays uploaded for a device).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `kernels` if built for another
    /// `N_comp`; [`Error::OutOfDeviceMemory`].
    pub fn with_kernels(self, kernels: &MultigridKernels<R>) -> Result<Self> {
        Ok(Transfer {
            kernels: kernels.transfer(&self.graph)?,
            graph: self.graph,
        })
    }

    /// The same transfer for vectors of the precision `S`, on the host
    /// (its weights, 1 and ½, are exact in either precision): what a
    /// multigrid whose cycle runs in `f32` inside an `f64` solve starts
    /// from ([`super::CyclePrecision::Single`]).
    ///
    /// # Errors
    /// Those of [`Transfer::new`]'s kernels.
    pub(crate) fn in_precision<S: Real>(&self) -> Result<Transfer<S>> {
        Ok(Transfer {
            kernels: MultigridKernels::host(self.graph.n_comp)?.transfer(&self.graph)?,
            graph: self.graph.clone(),
        })
    }

    /// The same transfer between the free dofs: `P̃` with the fixed dofs
    /// `coarse` and `fine` of the two levels (see the [type
    /// documentation](Self)), where this transfer works.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `coarse` or `fine` for a set of
    /// another number of dofs than its level's; [`Error::OutOfDeviceMemory`].
    pub fn with_fixed(self, coarse: &FixedDofs, fine: &FixedDofs) -> Result<Self> {
        let mask = |name: &'static str, set: &FixedDofs, n: usize| -> Result<Vec<u8>> {
            if set.n_dofs() != n {
                return Err(Error::arg(
                    name,
                    format!(
                        "fixed dofs of a system of {} dofs, the level has {n}",
                        set.n_dofs()
                    ),
                ));
            }
            let mut m = vec![0u8; n];
            for &d in set.dofs() {
                m[d as usize] = 1;
            }
            Ok(m)
        };
        let coarse_fixed = mask("coarse", coarse, self.n_coarse_dofs())?;
        let fine_fixed = mask("fine", fine, self.n_fine_dofs())?;
        let Transfer { graph, kernels } = self;
        let place = kernels.kernels();
        // the index arrays move over, not copied, unless another transfer
        // shares them (the host kernels hold a reference: dropped first)
        drop(kernels);
        let graph = Arc::new(TransferGraph {
            coarse_fixed,
            fine_fixed,
            ..Arc::unwrap_or_clone(graph)
        });
        Ok(Transfer {
            kernels: place.transfer(&graph)?,
            graph,
        })
    }

    /// Dofs of the coarse level, `n_c·N_comp`.
    pub fn n_coarse_dofs(&self) -> usize {
        self.graph.n_coarse_dofs()
    }

    /// Dofs of the fine level, `(n_c + n_edges)·N_comp`.
    pub fn n_fine_dofs(&self) -> usize {
        self.graph.n_fine_dofs()
    }

    /// Components per node.
    pub fn n_comp(&self) -> usize {
        self.graph.n_comp
    }

    /// The edges whose midpoints are the new fine nodes.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.graph.edges
    }

    /// `fine ← fine + P̃ coarse` (`P̃ = P` without fixed dofs).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `fine` or `coarse` for a wrong
    /// length, or living elsewhere than the transfer (see
    /// [`Transfer::with_kernels`]).
    pub fn prolong_add(&self, fine: &mut Vector<R>, coarse: &Vector<R>) -> Result<()> {
        check("fine", fine.len(), self.n_fine_dofs())?;
        check("coarse", coarse.len(), self.n_coarse_dofs())?;
        self.kernels.prolong_add(fine, coarse)
    }

    /// `coarse ← P̃ᵀ fine` (overwrites `coarse`).
    ///
    /// # Errors
    /// As [`Transfer::prolong_add`].
    pub fn restrict(&self, coarse: &mut Vector<R>, fine: &Vector<R>) -> Result<()> {
        check("coarse", coarse.len(), self.n_coarse_dofs())?;
        check("fine", fine.len(), self.n_fine_dofs())?;
        self.kernels.restrict(coarse, fine, None)
    }

    /// `coarse ← P̃ᵀ (b − w)` in one pass (`w = A x`: the residual of `x`
    /// restricted without being stored); each entry of `b − w` is
    /// `b + (−1)·w`, as [`crate::vector::VectorOps::axpby`] forms it.
    ///
    /// # Errors
    /// As [`Transfer::prolong_add`], naming `fine` for `b` and `w` for `w`.
    pub fn restrict_residual(
        &self,
        coarse: &mut Vector<R>,
        b: &Vector<R>,
        w: &Vector<R>,
    ) -> Result<()> {
        check("coarse", coarse.len(), self.n_coarse_dofs())?;
        check("fine", b.len(), self.n_fine_dofs())?;
        check("w", w.len(), self.n_fine_dofs())?;
        self.kernels.restrict(coarse, b, Some(w))
    }

    /// `coarse ← I fine`: the first `n_c·N_comp` entries (the coarse nodes'
    /// values), e.g. a Newton iterate moved to a coarse level.
    ///
    /// # Errors
    /// As [`Transfer::prolong_add`].
    pub fn inject(&self, coarse: &mut Vector<R>, fine: &Vector<R>) -> Result<()> {
        check("coarse", coarse.len(), self.n_coarse_dofs())?;
        check("fine", fine.len(), self.n_fine_dofs())?;
        self.kernels.inject(coarse, fine)
    }
}

/// The fewest coarse nodes per range of [`incidence`] (below, one range).
const MIN_RANGE: usize = 1 << 12;

/// The edges at each coarse node in CSR form: `incident[offsets[v]..offsets[v + 1]]`
/// are the `k` with `v ∈ edges[k]`, increasing (every endpoint `< n_coarse`, checked by
/// the caller). A counting sort, parallel over ranges of `range` nodes: each range
/// counts its nodes' edges, then lists them, in a pass over all the edges in order —
/// so the lists do not depend on how the nodes are split (deterministic), and no
/// range writes another's entries. `O(n_ranges·n_edges)` reads, `O(n_edges)` writes.
fn incidence(n_coarse: usize, edges: &[[u32; 2]], range: usize) -> (Vec<u32>, Vec<u32>) {
    let in_range =
        |v0: usize, n: usize| move |v: u32| (v as usize).checked_sub(v0).filter(|&i| i < n);
    // offsets[v + 1] = the number of edges at v
    let mut offsets = vec![0u32; n_coarse + 1];
    offsets[1..]
        .par_chunks_mut(range)
        .enumerate()
        .for_each(|(r, degree)| {
            let local = in_range(r * range, degree.len());
            for &v in edges.as_flattened() {
                if let Some(i) = local(v) {
                    degree[i] += 1;
                }
            }
        });
    for v in 0..n_coarse {
        offsets[v + 1] += offsets[v];
    }
    let mut incident = vec![0u32; offsets[n_coarse] as usize];
    // each range's own part of `incident`
    let mut parts = Vec::with_capacity(n_coarse.div_ceil(range));
    let mut rest = incident.as_mut_slice();
    for v0 in (0..n_coarse).step_by(range) {
        let v1 = (v0 + range).min(n_coarse);
        let (part, tail) =
            std::mem::take(&mut rest).split_at_mut((offsets[v1] - offsets[v0]) as usize);
        parts.push((v0, v1, part));
        rest = tail;
    }
    parts.into_par_iter().for_each(|(v0, v1, part)| {
        let local = in_range(v0, v1 - v0);
        let mut next: Vec<u32> = offsets[v0..v1].iter().map(|&o| o - offsets[v0]).collect();
        for (k, e) in edges.iter().enumerate() {
            for &v in e {
                if let Some(i) = local(v) {
                    part[next[i] as usize] = k as u32;
                    next[i] += 1;
                }
            }
        }
    });
    (offsets, incident)
}

fn check(name: &'static str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::arg(
            name,
            format!("expected {want} entries, got {got}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::{MeshOptions, unit_square};
    use crate::mesh::refine::refine;
    use crate::rng::Rng;

    /// The edges at each node listed in one pass over the edges, in order.
    fn incidence_serial(n: usize, edges: &[[u32; 2]]) -> (Vec<u32>, Vec<u32>) {
        let mut lists = vec![Vec::new(); n];
        for (k, e) in edges.iter().enumerate() {
            for &v in e {
                lists[v as usize].push(k as u32);
            }
        }
        let mut offsets = vec![0u32];
        for l in &lists {
            offsets.push(offsets[offsets.len() - 1] + l.len() as u32);
        }
        (offsets, lists.concat())
    }

    /// The incidence lists split over ranges of nodes are those of one
    /// serial pass (increasing edge numbers at each node), whatever the
    /// range length: for random edges (repeated ones and loops `[v, v]`
    /// too, and nodes with none) and for a refinement's first-touch edges.
    #[test]
    fn incidence_lists_do_not_depend_on_the_ranges() {
        let mut rng = Rng::new(11);
        let n = 97;
        let mut random: Vec<[u32; 2]> = (0..400)
            .map(|_| {
                let v = rng.vec(2, 0.0, 90.0);
                [v[0] as u32, v[1] as u32]
            })
            .collect();
        random.extend([[5, 5], [3, 8], [3, 8]]);
        let mesh = unit_square(
            6,
            &MeshOptions {
                shuffle: true,
                seed: 2,
                ..MeshOptions::default()
            },
        )
        .unwrap();
        let r = refine(&mesh).unwrap();
        let cases = [(n, random), (mesh.n_vertices(), r.edge_vertices().to_vec())];
        for (n, edges) in &cases {
            let want = incidence_serial(*n, edges);
            for range in [1, 2, 3, 7, 16, n - 1, *n, n + 5] {
                assert_eq!(incidence(*n, edges, range), want, "range {range}");
            }
        }
    }
}
