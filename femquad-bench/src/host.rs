//! Host data of the cases: the mesh of one dimension in one numbering, its
//! function spaces and boundary nodes, random data, and the cells compared
//! with the native integrator.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use femquad::Real;
use femquad::element::Element;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, mesh_for_cells, unit_box};
use femquad::rng::Rng;
use femquad::space::FunctionSpace;
use rayon::prelude::*;

use crate::BenchError;
use crate::numbering::Numbering;
use crate::options::Options;
use crate::progress::Progress;

/// The mesh of one dimension in one numbering and the function spaces
/// built on it, shared by all cases of that dimension.
pub struct Host {
    /// The mesh (jittered; numbered as `numbering` says), shared with the
    /// spaces on it.
    pub mesh: Arc<Mesh>,
    /// How the mesh is numbered.
    pub numbering: Numbering,
    /// `max |x|` over the vertices divided by the shortest cell edge: the
    /// factor by which rounding the coordinates to a precision with unit
    /// roundoff `ε` perturbs the cells' Jacobians (relative error about
    /// `2ε·coordinate_scale`), see [`crate::bp::check_tolerance_bp`].
    pub coordinate_scale: f64,
    spaces: HashMap<(usize, usize), FunctionSpace>,
    /// Boundary nodes per Lagrange order.
    boundary: HashMap<usize, Vec<u32>>,
}

impl Host {
    /// Builds the mesh for `dim` from the options (`--refine` or
    /// `--cells`) in `numbering`.
    pub fn build(
        dim: usize,
        numbering: Numbering,
        opts: &Options,
        progress: &Progress,
    ) -> Result<Host, BenchError> {
        let mopts = MeshOptions {
            jitter: opts.jitter,
            shuffle: numbering.shuffled(),
            seed: opts.seed,
        };
        progress.stage(&format!("{dim}D mesh: generating"));
        let t = Instant::now();
        let mesh = match opts.refine {
            Some(n) => unit_box(dim, n, &mopts)?,
            None => mesh_for_cells(dim, opts.cells, &mopts)?,
        };
        progress.stage(&format!(
            "{dim}D mesh: {} cells, {} vertices in {:.2} s",
            mesh.n_cells(),
            mesh.n_vertices(),
            t.elapsed().as_secs_f64()
        ));
        match numbering {
            Numbering::Renumbered => Self::renumber(&mesh, progress),
            _ => Ok(Self::from_mesh(mesh, numbering)),
        }
    }

    /// The host of `numbering` for `dim`: the renumbered mesh is made from
    /// `previous` if that is the random mesh of the same dimension (no
    /// second generation), everything else is built anew.
    pub fn next(
        previous: Option<Host>,
        dim: usize,
        numbering: Numbering,
        opts: &Options,
        progress: &Progress,
    ) -> Result<Host, BenchError> {
        match previous {
            Some(p)
                if numbering == Numbering::Renumbered
                    && p.numbering == Numbering::Random
                    && p.mesh.dim() == dim =>
            {
                Self::renumber(&p.mesh, progress)
            }
            _ => Self::build(dim, numbering, opts, progress),
        }
    }

    /// `mesh` (randomly numbered) renumbered for locality.
    fn renumber(mesh: &Mesh, progress: &Progress) -> Result<Host, BenchError> {
        let dim = mesh.dim();
        progress.stage(&format!("{dim}D mesh: renumbering for locality"));
        let t = Instant::now();
        let (renumbered, _) = mesh.renumbered_for_locality()?;
        progress.stage(&format!(
            "{dim}D mesh: renumbered in {:.2} s",
            t.elapsed().as_secs_f64()
        ));
        Ok(Self::from_mesh(renumbered, Numbering::Renumbered))
    }

    fn from_mesh(mesh: Mesh, numbering: Numbering) -> Host {
        let coordinate_scale = coordinate_scale(&mesh);
        Host {
            mesh: Arc::new(mesh),
            numbering,
            coordinate_scale,
            spaces: HashMap::new(),
            boundary: HashMap::new(),
        }
    }

    /// Makes sure the space of Lagrange `order` with `n_comp` components exists.
    pub fn ensure_space(
        &mut self,
        order: usize,
        n_comp: usize,
        progress: &Progress,
    ) -> Result<(), BenchError> {
        if !self.spaces.contains_key(&(order, n_comp)) {
            let t = Instant::now();
            let element = Element::lagrange(self.mesh.dim(), order)?;
            let space = FunctionSpace::new(self.mesh.clone(), element, n_comp)?;
            progress.stage(&format!(
                "P{order} space with {n_comp} component(s): {} dofs in {:.2} s",
                space.n_dofs(),
                t.elapsed().as_secs_f64()
            ));
            self.spaces.insert((order, n_comp), space);
        }
        Ok(())
    }

    /// A space made by [`Host::ensure_space`].
    pub fn space(&self, order: usize, n_comp: usize) -> Result<&FunctionSpace, BenchError> {
        self.spaces.get(&(order, n_comp)).ok_or_else(|| {
            BenchError::Femquad(femquad::Error::internal(format!(
                "the benchmark's P{order} space with {n_comp} components was not built"
            )))
        })
    }

    /// Makes sure the boundary nodes of the Lagrange `order` space exist
    /// (computed once per order from the space with `n_comp` components,
    /// which [`Host::ensure_space`] made).
    pub fn ensure_boundary(&mut self, order: usize, n_comp: usize) -> Result<(), BenchError> {
        if !self.boundary.contains_key(&order) {
            let nodes = self.space(order, n_comp)?.boundary_nodes()?;
            self.boundary.insert(order, nodes);
        }
        Ok(())
    }

    /// The dofs of the boundary nodes of the Lagrange `order` space with
    /// `n_comp` components (interleaved node-major, `node·n_comp + comp`),
    /// sorted; after [`Host::ensure_boundary`].
    pub fn boundary_dofs(&self, order: usize, n_comp: usize) -> Result<Vec<u32>, BenchError> {
        let nodes = self.boundary.get(&order).ok_or_else(|| {
            BenchError::Femquad(femquad::Error::internal(format!(
                "the benchmark's P{order} boundary nodes were not computed"
            )))
        })?;
        let nc = n_comp as u32;
        Ok(nodes
            .iter()
            .flat_map(|&n| (0..nc).map(move |c| n * nc + c))
            .collect())
    }
}

/// `max |x_i|` over the vertex coordinates divided by the shortest edge of
/// any cell (parallel over cells); 1 for a mesh without cells.
pub fn coordinate_scale(mesh: &Mesh) -> f64 {
    let dim = mesh.dim();
    let x = mesh.vertices();
    let max_abs = x.par_iter().map(|v| v.abs()).reduce(|| 0.0, f64::max);
    let shortest = mesh
        .cells()
        .par_chunks(mesh.vertices_per_cell())
        .map(|cell| {
            let mut h = f64::INFINITY;
            for (i, &a) in cell.iter().enumerate() {
                for &b in &cell[i + 1..] {
                    let (a, b) = (a as usize * dim, b as usize * dim);
                    let d2: f64 = (0..dim).map(|k| (x[a + k] - x[b + k]).powi(2)).sum();
                    h = h.min(d2.sqrt());
                }
            }
            h
        })
        .reduce(|| f64::INFINITY, f64::min);
    if shortest.is_finite() && shortest > 0.0 {
        max_abs / shortest
    } else {
        1.0
    }
}

/// `n` values uniform in `[lo, hi)`, generated in parallel (reproducible
/// for a seed and stream, independent of the thread count).
pub fn random_vec<R: Real>(n: usize, lo: f64, hi: f64, seed: u64, stream: u64) -> Vec<R> {
    const BLOCK: usize = 1 << 16;
    let mut v = vec![R::ZERO; n];
    v.par_chunks_mut(BLOCK).enumerate().for_each(|(i, chunk)| {
        let mut rng = Rng::stream(seed, (stream << 32) ^ i as u64);
        for x in chunk {
            *x = R::from_f64(rng.range(lo, hi));
        }
    });
    v
}

/// Sorted, merged, non-empty cell ranges within `0..n`.
pub fn merge_windows(mut w: Vec<Range<usize>>, n: usize) -> Vec<Range<usize>> {
    for r in &mut w {
        r.start = r.start.min(n);
        r.end = r.end.min(n);
    }
    w.retain(|r| r.start < r.end);
    w.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in w {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The cells compared with the native integrator when `n_dev` of `n` cells
/// ran on the device: `k` at the start, the middle and the end of the
/// device range, and the native remainder.
pub fn check_windows(n: usize, n_dev: usize, k: usize) -> Vec<Range<usize>> {
    let mid = (n_dev / 2).saturating_sub(k / 2);
    merge_windows(
        vec![0..k, mid..mid + k, n_dev.saturating_sub(k)..n_dev, n_dev..n],
        n,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        assert_eq!(check_windows(100, 96, 10), vec![0..10, 43..53, 86..100]);
        assert_eq!(check_windows(100, 96, 60), vec![0..100]);
        assert_eq!(check_windows(10, 0, 4), vec![0..10]);
        assert_eq!(
            merge_windows(vec![5..7, 0..2, 1..3, 9..20], 10),
            vec![0..3, 5..7, 9..10]
        );
    }

    #[test]
    fn coordinate_scale_of_a_square() {
        // n = 4 without jitter: max |x| = 1, shortest edge 1/4.
        let mesh = unit_box(2, 4, &MeshOptions::default()).unwrap();
        assert!((coordinate_scale(&mesh) - 4.0).abs() < 1e-12);
    }

    #[test]
    fn random_values() {
        let a = random_vec::<f64>(200_000, 0.5, 2.0, 3, 1);
        let b = random_vec::<f64>(200_000, 0.5, 2.0, 3, 1);
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| (0.5..2.0).contains(&x)));
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!((mean - 1.25).abs() < 0.01, "{mean}");
        assert_ne!(a, random_vec::<f64>(200_000, 0.5, 2.0, 3, 2));
    }
}
