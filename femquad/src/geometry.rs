//! Per-cell geometry of affine simplices: `J⁻¹` and `det J`.
//!
//! Cell `c` with vertices `X_0, …, X_dim` is the image of the reference
//! simplex under `x = X_0 + J ξ`, `J[:, i] = X_{i+1} − X_0`. Gradients map as
//! `∇_x φ = J⁻ᵀ ∇_ξ φ`, i.e. `∂φ/∂x_d = Σ_e ∂φ/∂ξ_e · J⁻¹[e][d]`, and
//! `∫_cell g dx = det J · ∫_ref g dξ`. Layouts: [`crate::layout::inv_j`],
//! [`crate::layout::cell_coord`].

use rayon::prelude::*;

use crate::mesh::Mesh;
use crate::{Error, Real, Result};

/// Cells per rayon task in the geometry loops.
const CHUNK: usize = 4096;

/// `J⁻¹` and `det J` of every cell, and optionally the cell vertex
/// coordinates (needed when the physics reads `x`), in precision `R`.
#[derive(Clone, Debug)]
pub struct Geometry<R> {
    dim: usize,
    n_cells: usize,
    inv_j: Vec<R>,
    det_j: Vec<R>,
    coords: Option<Vec<R>>,
}

/// The vertex coordinates of cell `c`, `x[v·dim + d]` for its `dim + 1`
/// local vertices `v` ([`crate::layout::cell_coord`]'s order within a cell).
fn cell_vertices(mesh: &Mesh, c: usize, x: &mut [f64; 12]) {
    let dim = mesh.dim();
    for (v, &vertex) in mesh.cell(c).iter().enumerate() {
        x[v * dim..(v + 1) * dim].copy_from_slice(mesh.vertex(vertex as usize));
    }
}

/// Jacobian of the cell whose vertex coordinates are `x`
/// ([`cell_vertices`]): `J[d][i] = X_{i+1}[d] − X_0[d]`, row-major `dim × dim`.
fn jacobian(dim: usize, x: &[f64; 12], j: &mut [f64; 9]) {
    for i in 0..dim {
        for d in 0..dim {
            j[d * dim + i] = x[(i + 1) * dim + d] - x[d];
        }
    }
}

/// Determinant and inverse of a `dim × dim` row-major matrix (dim 2 or 3).
/// Returns the determinant; `inv` is valid only if it is non-zero.
pub fn det_inverse(dim: usize, m: &[f64], inv: &mut [f64]) -> f64 {
    if dim == 2 {
        let det = m[0] * m[3] - m[1] * m[2];
        let s = 1.0 / det;
        inv[0] = m[3] * s;
        inv[1] = -m[1] * s;
        inv[2] = -m[2] * s;
        inv[3] = m[0] * s;
        det
    } else {
        let c00 = m[4] * m[8] - m[5] * m[7];
        let c01 = m[5] * m[6] - m[3] * m[8];
        let c02 = m[3] * m[7] - m[4] * m[6];
        let det = m[0] * c00 + m[1] * c01 + m[2] * c02;
        let s = 1.0 / det;
        inv[0] = c00 * s;
        inv[1] = (m[2] * m[7] - m[1] * m[8]) * s;
        inv[2] = (m[1] * m[5] - m[2] * m[4]) * s;
        inv[3] = c01 * s;
        inv[4] = (m[0] * m[8] - m[2] * m[6]) * s;
        inv[5] = (m[2] * m[3] - m[0] * m[5]) * s;
        inv[6] = c02 * s;
        inv[7] = (m[1] * m[6] - m[0] * m[7]) * s;
        inv[8] = (m[0] * m[4] - m[1] * m[3]) * s;
        det
    }
}

impl<R: Real> Geometry<R> {
    /// Computes `J⁻¹` and `det J` for every cell (in `f64`, then rounded to `R`).
    ///
    /// Fails with [`Error::InvalidCell`] naming the first cell whose
    /// `det J ≤ 0` (inverted or degenerate).
    pub fn new(mesh: &Mesh) -> Result<Self> {
        Self::compute(mesh, false)
    }

    /// As [`Geometry::new`], also storing the cell vertex coordinates (for
    /// physics that reads the point `x = X_0 + J ξ`), `n_cells × (dim+1) ×
    /// dim` ([`crate::layout::cell_coord`]), gathered in the same pass over the
    /// cells as `J` (each cell's vertices are read once).
    pub fn with_coordinates(mesh: &Mesh) -> Result<Self> {
        Self::compute(mesh, true)
    }

    /// `J⁻¹`, `det J` and (if `with_coords`) the cell vertex coordinates
    /// of every cell, in one parallel pass over chunks of [`CHUNK`] cells.
    fn compute(mesh: &Mesh, with_coords: bool) -> Result<Self> {
        let dim = mesh.dim();
        let n_cells = mesh.n_cells();
        let per_cell = (dim + 1) * dim;
        let mut inv_j = vec![R::ZERO; n_cells * dim * dim];
        let mut det_j = vec![R::ZERO; n_cells];
        let mut coords = vec![R::ZERO; if with_coords { n_cells * per_cell } else { 0 }];
        // one slice of coordinates per chunk of cells (empty without them)
        let coord_chunks: Vec<&mut [R]> = if with_coords {
            coords.chunks_mut(CHUNK * per_cell).collect()
        } else {
            (0..n_cells.div_ceil(CHUNK))
                .map(|_| Default::default())
                .collect()
        };
        let bad = inv_j
            .par_chunks_mut(CHUNK * dim * dim)
            .zip(det_j.par_chunks_mut(CHUNK))
            .zip(coord_chunks.into_par_iter())
            .enumerate()
            .filter_map(|(chunk, ((inv_chunk, det_chunk), coords_chunk))| {
                let (mut x, mut j, mut inv) = ([0.0; 12], [0.0; 9], [0.0; 9]);
                for (k, det_out) in det_chunk.iter_mut().enumerate() {
                    let c = chunk * CHUNK + k;
                    cell_vertices(mesh, c, &mut x);
                    if with_coords {
                        for (o, &v) in coords_chunk[k * per_cell..(k + 1) * per_cell]
                            .iter_mut()
                            .zip(&x[..per_cell])
                        {
                            *o = R::from_f64(v);
                        }
                    }
                    jacobian(dim, &x, &mut j);
                    let det = det_inverse(dim, &j[..dim * dim], &mut inv[..dim * dim]);
                    if !(det > 0.0 && det.is_finite()) {
                        return Some((c, det));
                    }
                    *det_out = R::from_f64(det);
                    for (o, &v) in inv_chunk[k * dim * dim..(k + 1) * dim * dim]
                        .iter_mut()
                        .zip(&inv[..dim * dim])
                    {
                        *o = R::from_f64(v);
                    }
                }
                None
            })
            .min_by_key(|&(c, _)| c);
        if let Some((cell, det)) = bad {
            return Err(Error::InvalidCell {
                cell,
                reason: format!("det J = {det:e} is not positive (inverted or degenerate cell)"),
            });
        }
        Ok(Geometry {
            dim,
            n_cells,
            inv_j,
            det_j,
            coords: with_coords.then_some(coords),
        })
    }

    /// Spatial dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.n_cells
    }
    /// All `J⁻¹`, `n_cells × dim × dim` ([`crate::layout::inv_j`]).
    pub fn inv_j(&self) -> &[R] {
        &self.inv_j
    }
    /// All `det J`, one per cell.
    pub fn det_j(&self) -> &[R] {
        &self.det_j
    }
    /// Cell vertex coordinates, `n_cells × (dim+1) × dim`, if stored.
    pub fn coords(&self) -> Option<&[R]> {
        self.coords.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn right_triangle_scaled() -> Mesh {
        // (0,0), (2,0), (0,3): J = diag(2,3), det 6.
        Mesh::from_raw(2, vec![0.0, 0.0, 2.0, 0.0, 0.0, 3.0], vec![0, 1, 2]).unwrap()
    }

    #[test]
    fn triangle_inverse_and_determinant() {
        let g = Geometry::<f64>::new(&right_triangle_scaled()).unwrap();
        assert_eq!(g.det_j(), &[6.0]);
        assert_eq!(g.inv_j(), &[0.5, 0.0, 0.0, 1.0 / 3.0]);
    }

    #[test]
    fn tetrahedron_inverse_times_jacobian_is_identity() {
        let verts = vec![0.1, 0.2, 0.3, 1.3, 0.1, 0.4, 0.2, 1.1, 0.5, 0.3, 0.4, 1.7];
        let mesh = Mesh::from_raw(3, verts, vec![0, 1, 2, 3]).unwrap();
        let g = Geometry::<f64>::new(&mesh).unwrap();
        let (mut x, mut j) = ([0.0; 12], [0.0; 9]);
        cell_vertices(&mesh, 0, &mut x);
        jacobian(3, &x, &mut j);
        let inv = g.inv_j();
        for r in 0..3 {
            for c in 0..3 {
                let s: f64 = (0..3).map(|k| inv[r * 3 + k] * j[k * 3 + c]).sum();
                let expected = if r == c { 1.0 } else { 0.0 };
                assert!((s - expected).abs() < 1e-14, "({r},{c}) = {s}");
            }
        }
        // det J by cofactor expansion of the columns X_i − X_0
        let det = j[0] * (j[4] * j[8] - j[5] * j[7]) - j[1] * (j[3] * j[8] - j[5] * j[6])
            + j[2] * (j[3] * j[7] - j[4] * j[6]);
        assert!((g.det_j()[0] - det).abs() < 1e-15);
    }

    #[test]
    fn inverted_cell_is_named() {
        let mesh = Mesh::from_raw(
            2,
            vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
            vec![0, 1, 2, 1, 2, 3],
        )
        .unwrap();
        // cell 1 = (1,0),(0,1),(1,1): J columns (-1,1),(0,1): det = -1
        match Geometry::<f32>::new(&mesh) {
            Err(Error::InvalidCell { cell, .. }) => assert_eq!(cell, 1),
            other => panic!("expected InvalidCell, got {other:?}"),
        }
    }

    /// On a shuffled, jittered cube of several chunks of cells, the cell
    /// coordinates gathered with the Jacobians are each cell's vertices in
    /// the layout's order, and `J⁻¹`, `det J` are those of
    /// [`Geometry::new`] (the same values, bitwise) and of `J` from the
    /// mesh: `J⁻¹ J = I`, `det J` its determinant.
    #[test]
    fn coordinates_and_jacobians_of_many_chunks() {
        use crate::mesh::generate::{MeshOptions, unit_cube};
        let options = MeshOptions {
            jitter: 0.15,
            shuffle: true,
            seed: 3,
        };
        let mesh = unit_cube(12, &options).unwrap();
        assert!(mesh.n_cells() > 2 * CHUNK);
        let g = Geometry::<f64>::with_coordinates(&mesh).unwrap();
        let plain = Geometry::<f64>::new(&mesh).unwrap();
        assert!(plain.coords().is_none());
        assert_eq!(g.inv_j(), plain.inv_j());
        assert_eq!(g.det_j(), plain.det_j());
        let coords = g.coords().unwrap();
        assert_eq!(coords.len(), mesh.n_cells() * 12);
        for c in 0..mesh.n_cells() {
            let cell = mesh.cell(c);
            for (v, &vertex) in cell.iter().enumerate() {
                for d in 0..3 {
                    let i = crate::layout::cell_coord(c, v, d, 3);
                    assert_eq!(coords[i], mesh.vertex(vertex as usize)[d], "cell {c}");
                }
            }
            let x0 = mesh.vertex(cell[0] as usize);
            let jac = |d: usize, i: usize| mesh.vertex(cell[i + 1] as usize)[d] - x0[d];
            let inv = &g.inv_j()[c * 9..(c + 1) * 9];
            for r in 0..3 {
                for col in 0..3 {
                    let s: f64 = (0..3).map(|k| inv[r * 3 + k] * jac(k, col)).sum();
                    let expected = if r == col { 1.0 } else { 0.0 };
                    assert!((s - expected).abs() < 1e-10, "cell {c} ({r},{col}) = {s}");
                }
            }
            let det = jac(0, 0) * (jac(1, 1) * jac(2, 2) - jac(1, 2) * jac(2, 1))
                - jac(0, 1) * (jac(1, 0) * jac(2, 2) - jac(1, 2) * jac(2, 0))
                + jac(0, 2) * (jac(1, 0) * jac(2, 1) - jac(1, 1) * jac(2, 0));
            assert!(
                (g.det_j()[c] - det).abs() < 1e-12 * det.abs().max(1e-3),
                "cell {c}"
            );
        }
    }

    #[test]
    fn coordinates_follow_layout() {
        let g = Geometry::<f32>::with_coordinates(&right_triangle_scaled()).unwrap();
        assert_eq!(g.coords().unwrap(), &[0.0, 0.0, 2.0, 0.0, 0.0, 3.0]);
    }
}
