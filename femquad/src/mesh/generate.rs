//! Structured simplicial meshes of the unit square and the unit cube.
//!
//! The unit square `[0,1]²` is divided into `n × n` squares of side
//! `h = 1/n`, each split into two triangles along its diagonal from
//! `(x, y)` to `(x+h, y+h)`: `2n²` cells, `(n+1)²` vertices. The unit cube
//! `[0,1]³` is divided into `n³` cubes, each split into the six tetrahedra
//! of the Kuhn (Freudenthal) subdivision: for every permutation `π` of the
//! axes, the tetrahedron with vertices `c`, `c + h e_π(0)`,
//! `c + h e_π(0) + h e_π(1)`, `c + h(1,1,1)` (`c` the cube's lower corner).
//! Every cube is subdivided the same way (all share the main diagonal's
//! direction), so the mesh is conforming: `6n³` cells, `(n+1)³` vertices.
//!
//! Vertex `(i, j[, k])` (grid indices) has index `i + (n+1)(j + (n+1)k)`
//! unless shuffled. Every cell is positively oriented (`det J > 0`): the
//! Kuhn tetrahedra of odd permutations, which come out negative, have their
//! local vertices 1 and 2 swapped.
//!
//! [`MeshOptions`] add *jitter* (random displacement of interior vertices)
//! and *shuffling* (random numbering of vertices and cells), so that
//! structured meshes exercise the same memory-access patterns as
//! unstructured ones. Generation is parallel (rayon) and writes into
//! pre-sized arrays, with no per-cell allocation: in release mode a mesh of
//! 2²⁵ cells takes about 0.2 s on two cores (0.03 s on sixteen), shuffled
//! and jittered about 2 s (0.3 s).

use rayon::prelude::*;

use super::Mesh;
use crate::rng::Rng;
use crate::{Error, Result};

/// Largest allowed [`MeshOptions::jitter`].
///
/// Each coordinate of an interior vertex moves by at most `jitter · h`. As
/// `det J` is an affine function of each vertex separately, its minimum over
/// all such displacements is attained when every vertex sits at a corner of
/// its box of displacements; checking these corners (done in this module's
/// tests) gives, for `jitter = a`, `det J ≥ (1 − 4a) h²` for the triangles
/// and `det J ≥ (1 − 6a) h³` for the Kuhn tetrahedra (nominal values `h²`,
/// `h³`). At `a = 0.15` that is `0.4 h²` and `0.1 h³`: every cell stays
/// positively oriented and well away from degenerate.
pub const MAX_JITTER: f64 = 0.15;

/// Salt of the random stream used for jitter (so that jitter and shuffle
/// draw independent numbers from one seed).
const JITTER_SALT: u64 = 0x6a09_e667_f3bc_c908;
/// Salt of the random stream used for shuffling.
const SHUFFLE_SALT: u64 = 0xbb67_ae85_84ca_a73b;

/// Options of the structured mesh generators.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshOptions {
    /// Random displacement of interior vertices as a fraction of `h = 1/n`:
    /// each coordinate of each interior vertex moves by a uniform random
    /// amount in `[−jitter·h, jitter·h)`. Boundary vertices (a coordinate
    /// 0 or 1) do not move, so the domain stays the unit square or cube.
    /// Must lie in `[0, MAX_JITTER]` ([`MAX_JITTER`]); `0` (the default)
    /// means no jitter.
    pub jitter: f64,
    /// Renumber vertices and cells by pseudo-random permutations and rotate
    /// the local vertex order of each cell by a random *even* permutation
    /// (which keeps `det J > 0`), so that neighbouring cells and vertices
    /// are far apart in memory, as in meshes from unstructured generators.
    /// The permutations are keyed bijections evaluated per index (fast and
    /// parallel; not uniformly distributed over all permutations). The
    /// geometry (vertex positions, jitter included, and cells as point sets)
    /// is the same as without shuffling. Default `false`.
    pub shuffle: bool,
    /// Seed of the random numbers for jitter and shuffle (SplitMix64,
    /// [`crate::rng::Rng`]); the same seed gives the same mesh on every
    /// platform and for any number of threads. Default `0`.
    pub seed: u64,
}

impl Default for MeshOptions {
    /// No jitter, no shuffle, seed 0.
    fn default() -> Self {
        MeshOptions {
            jitter: 0.0,
            shuffle: false,
            seed: 0,
        }
    }
}

/// Even permutations of a triangle's local vertices (the rotations).
const EVEN_PERMUTATIONS_3: [[usize; 3]; 3] = [[0, 1, 2], [1, 2, 0], [2, 0, 1]];

/// Even permutations of a tetrahedron's local vertices (the alternating group A₄).
const EVEN_PERMUTATIONS_4: [[usize; 4]; 12] = [
    [0, 1, 2, 3],
    [0, 2, 3, 1],
    [0, 3, 1, 2],
    [1, 0, 3, 2],
    [1, 2, 0, 3],
    [1, 3, 2, 0],
    [2, 0, 1, 3],
    [2, 1, 3, 0],
    [2, 3, 0, 1],
    [3, 0, 2, 1],
    [3, 1, 0, 2],
    [3, 2, 1, 0],
];

/// Largest `n` per dimension: keeps the cell count within `u32` (cell
/// indices are stored as `u32` elsewhere, e.g. in [`super::BoundaryFacet`]).
fn max_n(dim: usize) -> usize {
    if dim == 2 { 46_340 } else { 894 }
}

fn check_args(dim: usize, n: usize, opts: &MeshOptions) -> Result<()> {
    if n == 0 {
        return Err(Error::arg("n", "must be at least 1"));
    }
    if n > max_n(dim) {
        return Err(Error::arg(
            "n",
            format!(
                "{n} gives more than 2^32 cells in {dim}D (largest n: {})",
                max_n(dim)
            ),
        ));
    }
    if !(0.0..=MAX_JITTER).contains(&opts.jitter) {
        return Err(Error::arg(
            "jitter",
            format!(
                "{} is outside [0, {MAX_JITTER}]: larger displacements can invert cells",
                opts.jitter
            ),
        ));
    }
    Ok(())
}

/// Sets `out` to the position of grid vertex `grid = (i, j, k)` (index
/// `v`): `grid / n`, plus the jitter of interior vertices, drawn from random
/// stream `v` so that it does not depend on the order of generation.
#[inline]
fn place_vertex(out: &mut [f64], grid: [usize; 3], v: usize, n: usize, opts: &MeshOptions) {
    let dim = out.len();
    for (x, &g) in out.iter_mut().zip(&grid) {
        *x = g as f64 / n as f64;
    }
    if opts.jitter > 0.0 && grid[..dim].iter().all(|&g| g > 0 && g < n) {
        let (a, h) = (opts.jitter, 1.0 / n as f64);
        let mut rng = Rng::stream(opts.seed ^ JITTER_SALT, v as u64);
        for x in out.iter_mut() {
            *x += h * rng.range(-a, a);
        }
    }
}

/// Coordinates of the `(n+1)^dim` grid vertices in grid order, interior
/// ones jittered; one task per row of constant `(j, k)`.
fn grid_vertices(dim: usize, n: usize, opts: &MeshOptions) -> Vec<f64> {
    let m = n + 1;
    let mut vertices = vec![0.0; m.pow(dim as u32) * dim];
    vertices
        .par_chunks_mut(m * dim)
        .enumerate()
        .for_each(|(row, out)| {
            let (j, k) = (row % m, row / m);
            for (i, p) in out.chunks_exact_mut(dim).enumerate() {
                place_vertex(p, [i, j, k], row * m + i, n, opts);
            }
        });
    vertices
}

/// Local vertex offsets (in grid index units) of the two triangles of a
/// square, both positively oriented.
fn square_triangles(m: u32) -> [[u32; 3]; 2] {
    // (0,0) (1,0) (1,1) and (0,0) (1,1) (0,1)
    [[0, 1, m + 1], [0, m + 1, m]]
}

/// Local vertex offsets of the six Kuhn tetrahedra of a cube, all positively
/// oriented (odd permutations get local vertices 1 and 2 swapped).
fn kuhn_tetrahedra(m: u32) -> [[u32; 4]; 6] {
    let stride = [1, m, m * m];
    // permutations of the axes; odd ones are marked
    let perms: [([usize; 3], bool); 6] = [
        ([0, 1, 2], false),
        ([0, 2, 1], true),
        ([1, 0, 2], true),
        ([1, 2, 0], false),
        ([2, 0, 1], false),
        ([2, 1, 0], true),
    ];
    perms.map(|(p, odd)| {
        let v1 = stride[p[0]];
        let v2 = v1 + stride[p[1]];
        let v3 = v2 + stride[p[2]];
        if odd {
            [0, v2, v1, v3]
        } else {
            [0, v1, v2, v3]
        }
    })
}

/// Connectivity of the structured mesh, one task per row of squares/cubes.
fn grid_cells(dim: usize, n: usize) -> Vec<u32> {
    let m = n + 1;
    let k = dim + 1;
    if dim == 2 {
        let local = square_triangles(m as u32);
        let mut cells = vec![0u32; 2 * n * n * k];
        cells
            .par_chunks_mut(2 * n * k)
            .enumerate()
            .for_each(|(j, out)| {
                for i in 0..n {
                    let corner = (j * m + i) as u32;
                    for (t, tri) in local.iter().enumerate() {
                        let o = (2 * i + t) * k;
                        for (slot, &off) in out[o..o + k].iter_mut().zip(tri) {
                            *slot = corner + off;
                        }
                    }
                }
            });
        cells
    } else {
        let local = kuhn_tetrahedra(m as u32);
        let mut cells = vec![0u32; 6 * n * n * n * k];
        cells
            .par_chunks_mut(6 * n * k)
            .enumerate()
            .for_each(|(row, out)| {
                let (j, kk) = (row % n, row / n);
                for i in 0..n {
                    let corner = ((kk * m + j) * m + i) as u32;
                    for (t, tet) in local.iter().enumerate() {
                        let o = (6 * i + t) * k;
                        for (slot, &off) in out[o..o + k].iter_mut().zip(tet) {
                            *slot = corner + off;
                        }
                    }
                }
            });
        cells
    }
}

/// A keyed pseudo-random permutation of `0..n` that is evaluated elementwise
/// in both directions, in O(1) time and memory.
///
/// `[0, 2^b)` (`2^b ≥ n`) is permuted by three rounds of
/// `x ← (x + a_r) mod 2^b`, `x ← x · m_r mod 2^b` (`m_r` odd) and
/// `x ← x ⊕ ⌊x / 2^s⌋`, each a bijection of `[0, 2^b)`; cycle walking
/// (re-applying the map until the result is `< n`) restricts it to a
/// bijection of `0..n`, with fewer than two steps on average. This is not a
/// uniformly distributed random permutation, but neighbouring indices land
/// far apart, which is what shuffling a mesh needs; and it lets the shuffled
/// mesh be generated in parallel without permutation tables.
struct Permutation {
    n: u64,
    bits: u32,
    mask: u64,
    shift: u32,
    /// `(a_r, m_r, m_r⁻¹ mod 2^64)` per round.
    rounds: [(u64, u64, u64); 3],
}

impl Permutation {
    fn new(n: usize, rng: &mut Rng) -> Self {
        let bits = super::bits_for(n);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        let rounds = [(); 3].map(|_| {
            let a = rng.next_u64() & mask;
            let m = rng.next_u64() | 1;
            // Newton's iteration for the inverse modulo 2^64 (3 → 96 bits)
            let mut inv = m;
            for _ in 0..5 {
                inv = inv.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(inv)));
            }
            (a, m, inv)
        });
        Permutation {
            n: n as u64,
            bits,
            mask,
            shift: bits.div_ceil(2),
            rounds,
        }
    }

    #[inline]
    fn step(&self, mut x: u64) -> u64 {
        for &(a, m, _) in &self.rounds {
            x = x.wrapping_add(a) & self.mask;
            x = x.wrapping_mul(m) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    #[inline]
    fn step_back(&self, mut x: u64) -> u64 {
        for &(a, _, inv) in self.rounds.iter().rev() {
            // undo x ^= x >> s: each pass fixes s more high bits
            let y = x;
            let mut fixed = self.shift;
            while fixed < self.bits {
                x = y ^ (x >> self.shift);
                fixed += self.shift;
            }
            x = x.wrapping_mul(inv) & self.mask;
            x = x.wrapping_sub(a) & self.mask;
        }
        x
    }

    /// The image of `i < n`.
    #[inline]
    fn forward(&self, i: usize) -> usize {
        let mut x = self.step(i as u64);
        while x >= self.n {
            x = self.step(x);
        }
        x as usize
    }

    /// The preimage of `j < n`.
    #[inline]
    fn inverse(&self, j: usize) -> usize {
        let mut x = self.step_back(j as u64);
        while x >= self.n {
            x = self.step_back(x);
        }
        x as usize
    }
}

/// Vertex indices of structured cell `c` (in grid order; see [`grid_cells`]).
#[inline]
fn grid_cell(dim: usize, n: usize, c: usize, tri: &[[u32; 3]; 2], tet: &[[u32; 4]; 6]) -> [u32; 4] {
    let m = n + 1;
    if dim == 2 {
        let (j, r) = (c / (2 * n), c % (2 * n));
        let corner = (j * m + r / 2) as u32;
        let t = tri[r % 2];
        [corner + t[0], corner + t[1], corner + t[2], 0]
    } else {
        let (row, r) = (c / (6 * n), c % (6 * n));
        let (j, k) = (row % n, row / n);
        let corner = ((k * m + j) * m + r / 6) as u32;
        tet[r % 6].map(|o| corner + o)
    }
}

/// The structured mesh with vertices and cells renumbered by pseudo-random
/// permutations ([`Permutation`]) and each cell's local vertices rotated
/// by a random even permutation (keeping `det J > 0`).
///
/// New vertex `w` is grid vertex `π_v(w)` and new cell `w` is structured
/// cell `π_c(w)`, whose grid vertices `v` become `π_v⁻¹(v)`: every entry is
/// computed independently, in parallel, without reading other arrays.
fn shuffled(dim: usize, n: usize, opts: &MeshOptions) -> (Vec<f64>, Vec<u32>) {
    let (m, k) = (n + 1, dim + 1);
    let nv = m.pow(dim as u32);
    let nc = if dim == 2 { 2 * n * n } else { 6 * n * n * n };
    let mut rng = Rng::new(opts.seed ^ SHUFFLE_SALT);
    let pv = Permutation::new(nv, &mut rng);
    let pc = Permutation::new(nc, &mut rng);
    let rotation_seed = rng.next_u64();
    let mut vertices = vec![0.0; nv * dim];
    vertices
        .par_chunks_mut(dim)
        .with_min_len(4096)
        .enumerate()
        .for_each(|(w, out)| {
            let v = pv.forward(w);
            place_vertex(out, [v % m, v / m % m, v / (m * m)], v, n, opts);
        });
    let (tri, tet) = (square_triangles(m as u32), kuhn_tetrahedra(m as u32));
    let mut cells = vec![0u32; nc * k];
    cells
        .par_chunks_mut(k)
        .with_min_len(4096)
        .enumerate()
        .for_each(|(w, out)| {
            let old = grid_cell(dim, n, pc.forward(w), &tri, &tet);
            let mut rng = Rng::stream(rotation_seed, w as u64);
            if dim == 2 {
                let p = EVEN_PERMUTATIONS_3[rng.below(3)];
                for (slot, &l) in out.iter_mut().zip(&p) {
                    *slot = pv.inverse(old[l] as usize) as u32;
                }
            } else {
                let p = EVEN_PERMUTATIONS_4[rng.below(12)];
                for (slot, &l) in out.iter_mut().zip(&p) {
                    *slot = pv.inverse(old[l] as usize) as u32;
                }
            }
        });
    (vertices, cells)
}

/// Structured mesh of `[0,1]^dim` with `n` intervals per side: `2n²`
/// triangles ([`unit_square`]) or `6n³` tetrahedra ([`unit_cube`]).
///
/// Errors: [`Error::InvalidArgument`] for `dim ∉ {2, 3}`, `n = 0`, `n` so
/// large that the cell count exceeds `2^32`, or a jitter outside
/// `[0, MAX_JITTER]`.
pub fn unit_box(dim: usize, n: usize, opts: &MeshOptions) -> Result<Mesh> {
    if dim != 2 && dim != 3 {
        return Err(Error::arg("dim", format!("{dim} is not 2 or 3")));
    }
    check_args(dim, n, opts)?;
    let (vertices, cells) = if opts.shuffle {
        shuffled(dim, n, opts)
    } else {
        (grid_vertices(dim, n, opts), grid_cells(dim, n))
    };
    let mesh = Mesh::from_raw(dim, vertices, cells)?;
    // Valid by construction: the grid cells are positively oriented and the
    // jitter bound is proven at MAX_JITTER (tests check it, and every
    // generated mesh in debug builds). In release builds the check is
    // skipped: on a shuffled mesh of 2^25 cells it costs more than the
    // generation.
    if cfg!(debug_assertions) {
        mesh.validate()?;
    }
    Ok(mesh)
}

/// Mesh of the unit square `[0,1]²`: `n × n` squares of side `h = 1/n`,
/// each split into two triangles along the diagonal of direction `(1, 1)`;
/// `2n²` cells and `(n+1)²` vertices (see the [module docs](self)).
///
/// Errors as [`unit_box`].
pub fn unit_square(n: usize, opts: &MeshOptions) -> Result<Mesh> {
    unit_box(2, n, opts)
}

/// Mesh of the unit cube `[0,1]³`: `n³` cubes of side `h = 1/n`, each split
/// into the six tetrahedra of the Kuhn subdivision along the diagonal of
/// direction `(1, 1, 1)`; `6n³` cells and `(n+1)³` vertices, conforming
/// (see the [module docs](self)).
///
/// Errors as [`unit_box`].
pub fn unit_cube(n: usize, opts: &MeshOptions) -> Result<Mesh> {
    unit_box(3, n, opts)
}

/// The smallest `n` for which [`unit_box`]`(dim, n, …)` has at least
/// `target_cells` cells: the smallest `n ≥ 1` with `2n² ≥ target_cells` in
/// 2D, `6n³ ≥ target_cells` in 3D.
///
/// Errors: [`Error::InvalidArgument`] for `dim ∉ {2, 3}` or a target that
/// needs more than `2^32` cells.
pub fn n_for_cells(dim: usize, target_cells: usize) -> Result<usize> {
    let cells = |n: usize| -> usize { if dim == 2 { 2 * n * n } else { 6 * n * n * n } };
    if dim != 2 && dim != 3 {
        return Err(Error::arg("dim", format!("{dim} is not 2 or 3")));
    }
    if target_cells > cells(max_n(dim)) {
        return Err(Error::arg(
            "target_cells",
            format!(
                "{target_cells} exceeds the largest structured mesh in {dim}D ({} cells)",
                cells(max_n(dim))
            ),
        ));
    }
    let per = if dim == 2 { 2.0 } else { 6.0 };
    let mut n = ((target_cells as f64 / per).powf(1.0 / dim as f64).floor() as usize).max(1);
    while n > 1 && cells(n - 1) >= target_cells {
        n -= 1;
    }
    while cells(n) < target_cells {
        n += 1;
    }
    Ok(n)
}

/// [`unit_box`]`(dim, n, opts)` with the smallest `n` that gives at least
/// `target_cells` cells ([`n_for_cells`]); for benchmarks that ask for a
/// problem size.
///
/// Errors as [`n_for_cells`] and [`unit_box`].
pub fn mesh_for_cells(dim: usize, target_cells: usize, opts: &MeshOptions) -> Result<Mesh> {
    unit_box(dim, n_for_cells(dim, target_cells)?, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(jitter: f64, shuffle: bool, seed: u64) -> MeshOptions {
        MeshOptions {
            jitter,
            shuffle,
            seed,
        }
    }

    /// Checks counts, validity, volume, conformity and the boundary of a
    /// mesh of `[0,1]^dim` with `n` intervals per side.
    fn check_box(m: &Mesh, dim: usize, n: usize, exact_grid: bool) {
        let cells = if dim == 2 { 2 * n * n } else { 6 * n * n * n };
        assert_eq!(m.dim(), dim);
        assert_eq!(m.n_cells(), cells);
        assert_eq!(m.n_vertices(), (n + 1).pow(dim as u32));
        m.validate().unwrap();
        for c in 0..m.n_cells() {
            assert!(m.det_j(c) > 0.0, "cell {c}");
        }
        let vol = m.total_volume();
        assert!((vol - 1.0).abs() < 1e-13, "volume {vol}");
        // conforming: Euler-type count of facets. Each cell has dim+1 facets;
        // interior ones are counted twice.
        let boundary = m.boundary_facets().unwrap();
        let expected_boundary = if dim == 2 { 4 * n } else { 12 * n * n };
        assert_eq!(boundary.len(), expected_boundary);
        let total_facets = cells * (dim + 1);
        assert_eq!((total_facets - boundary.len()) % 2, 0);
        // every boundary facet lies in a face of the box
        for f in &boundary {
            let on_face = (0..dim).any(|d| {
                [0.0, 1.0].iter().any(|&s| {
                    f.vertex_slice()
                        .iter()
                        .all(|&v| m.vertex(v as usize)[d] == s)
                })
            });
            assert!(on_face, "{f:?}");
        }
        // boundary vertices are exactly those with a coordinate 0 or 1
        let mask = m.boundary_vertices().unwrap();
        for (v, &b) in mask.iter().enumerate() {
            let x = m.vertex(v);
            assert_eq!(
                b,
                x.iter().any(|&c| c == 0.0 || c == 1.0),
                "vertex {v} {x:?}"
            );
        }
        let n_boundary = mask.iter().filter(|&&b| b).count();
        assert_eq!(
            n_boundary,
            (n + 1).pow(dim as u32) - (n - 1).pow(dim as u32)
        );
        if exact_grid {
            assert!((m.h_max() - (dim as f64).sqrt() / n as f64).abs() < 1e-15);
        }
    }

    #[test]
    fn unit_square_counts_volume_boundary() {
        for n in [1, 2, 3, 8] {
            let m = unit_square(n, &MeshOptions::default()).unwrap();
            check_box(&m, 2, n, true);
        }
        let m = unit_square(2, &MeshOptions::default()).unwrap();
        // first square: (0,0) (1,0) (1,1) and (0,0) (1,1) (0,1) in grid units
        assert_eq!(&m.cells()[..6], &[0, 1, 4, 0, 4, 3]);
        assert_eq!(m.vertex(5), &[1.0, 0.5]);
        assert_eq!(m.cell_volume(0), 0.125);
    }

    #[test]
    fn unit_cube_counts_volume_boundary() {
        for n in [1, 2, 3, 5] {
            let m = unit_cube(n, &MeshOptions::default()).unwrap();
            check_box(&m, 3, n, true);
        }
        let m = unit_cube(1, &MeshOptions::default()).unwrap();
        // all six tets share the main diagonal 0–7 and have volume 1/6
        for c in 0..6 {
            assert!(m.cell(c).contains(&0) && m.cell(c).contains(&7));
            assert!((m.cell_volume(c) - 1.0 / 6.0).abs() < 1e-15);
        }
    }

    #[test]
    fn interior_facets_are_shared_by_exactly_two_cells() {
        // independent check with a map: every facet occurs once or twice,
        // twice exactly when it is not on the boundary of the box
        use std::collections::HashMap;
        for (dim, n) in [(2, 4), (3, 3)] {
            let m = unit_box(dim, n, &opts(0.1, true, 5)).unwrap();
            let mut count: HashMap<Vec<u32>, usize> = HashMap::new();
            for c in 0..m.n_cells() {
                for i in 0..=dim {
                    let mut f: Vec<u32> = m
                        .cell(c)
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(_, &v)| v)
                        .collect();
                    f.sort();
                    *count.entry(f).or_default() += 1;
                }
            }
            let mask = m.boundary_vertices().unwrap();
            for (f, &k) in &count {
                // a facet with a vertex off the boundary is interior
                if f.iter().any(|&v| !mask[v as usize]) {
                    assert_eq!(k, 2, "{f:?}");
                } else {
                    assert!(k == 1 || k == 2, "{f:?}");
                }
            }
            let once = count.values().filter(|&&k| k == 1).count();
            assert_eq!(once, if dim == 2 { 4 * n } else { 12 * n * n });
        }
    }

    #[test]
    fn shuffle_keeps_validity_volume_and_boundary() {
        for dim in [2, 3] {
            let n = 4;
            let plain = unit_box(dim, n, &MeshOptions::default()).unwrap();
            let m = unit_box(dim, n, &opts(0.0, true, 11)).unwrap();
            check_box(&m, dim, n, true);
            assert_ne!(m.cells(), plain.cells());
            assert_ne!(m.vertices(), plain.vertices());
            // same set of points
            let sorted = |m: &Mesh| {
                let mut p: Vec<Vec<u64>> = (0..m.n_vertices())
                    .map(|v| m.vertex(v).iter().map(|x| x.to_bits()).collect())
                    .collect();
                p.sort();
                p
            };
            assert_eq!(sorted(&m), sorted(&plain));
            // same set of cells (as sets of points)
            let cellset = |m: &Mesh| {
                let mut cs: Vec<Vec<Vec<u64>>> = (0..m.n_cells())
                    .map(|c| {
                        let mut pts: Vec<Vec<u64>> = m
                            .cell(c)
                            .iter()
                            .map(|&v| m.vertex(v as usize).iter().map(|x| x.to_bits()).collect())
                            .collect();
                        pts.sort();
                        pts
                    })
                    .collect();
                cs.sort();
                cs
            };
            assert_eq!(cellset(&m), cellset(&plain));
            // the local vertex order was rotated in some cells
            let first_vertex_moved = (0..m.n_cells()).any(|c| {
                let x0 = m.vertex(m.cell(c)[0] as usize);
                let min = m
                    .cell(c)
                    .iter()
                    .map(|&v| m.vertex(v as usize))
                    .fold(x0, |a, b| if b < a { b } else { a });
                x0 != min
            });
            assert!(first_vertex_moved);
            // deterministic in the seed
            assert_eq!(m, unit_box(dim, n, &opts(0.0, true, 11)).unwrap());
            assert_ne!(m, unit_box(dim, n, &opts(0.0, true, 12)).unwrap());
        }
    }

    #[test]
    fn jitter_moves_interior_vertices_only() {
        for dim in [2, 3] {
            let n = 5;
            let plain = unit_box(dim, n, &MeshOptions::default()).unwrap();
            let m = unit_box(dim, n, &opts(MAX_JITTER, false, 3)).unwrap();
            check_box(&m, dim, n, false);
            let h = 1.0 / n as f64;
            let mut moved = 0;
            for v in 0..m.n_vertices() {
                let (x, x0) = (m.vertex(v), plain.vertex(v));
                let boundary = x0.iter().any(|&c| c == 0.0 || c == 1.0);
                if boundary {
                    assert_eq!(x, x0, "boundary vertex {v} moved");
                } else {
                    for d in 0..dim {
                        assert!((x[d] - x0[d]).abs() <= MAX_JITTER * h, "vertex {v}");
                    }
                    moved += (x != x0) as usize;
                }
            }
            assert_eq!(moved, (n - 1).pow(dim as u32));
            // same seed, same mesh; jitter and shuffle combine
            assert_eq!(m, unit_box(dim, n, &opts(MAX_JITTER, false, 3)).unwrap());
            let both = unit_box(dim, n, &opts(MAX_JITTER, true, 3)).unwrap();
            check_box(&both, dim, n, false);
        }
    }

    /// Proves the bound stated at [`MAX_JITTER`]: the worst case of `det J`
    /// over all displacements is attained at corners of the displacement
    /// boxes (det J is affine in each vertex), so checking those is exact.
    #[test]
    fn max_jitter_keeps_every_cell_positive() {
        let a = MAX_JITTER;
        // 2D: the two triangles of the unit square (h = 1)
        let grid2 = |o: u32| [(o % 2) as f64, (o / 2) as f64];
        let mut min2 = f64::INFINITY;
        for tri in square_triangles(2) {
            for corners in 0..4usize.pow(3) {
                let p: Vec<[f64; 2]> = (0..3)
                    .map(|l| {
                        let s = corners / 4usize.pow(l as u32) % 4;
                        let g = grid2(tri[l]);
                        [g[0] + a * sign(s, 0), g[1] + a * sign(s, 1)]
                    })
                    .collect();
                let det = (p[1][0] - p[0][0]) * (p[2][1] - p[0][1])
                    - (p[1][1] - p[0][1]) * (p[2][0] - p[0][0]);
                min2 = min2.min(det);
            }
        }
        assert!((min2 - (1.0 - 4.0 * a)).abs() < 1e-12, "{min2}");
        // 3D: the six Kuhn tetrahedra of the unit cube
        let grid3 = |o: u32| [(o % 2) as f64, (o / 2 % 2) as f64, (o / 4) as f64];
        let mut min3 = f64::INFINITY;
        for tet in kuhn_tetrahedra(2) {
            for corners in 0..8usize.pow(4) {
                let p: Vec<[f64; 3]> = (0..4)
                    .map(|l| {
                        let s = corners / 8usize.pow(l as u32) % 8;
                        let g = grid3(tet[l]);
                        [0, 1, 2].map(|d| g[d] + a * sign(s, d))
                    })
                    .collect();
                let d = |i: usize| [0, 1, 2].map(|k| p[i][k] - p[0][k]);
                let (x, y, z) = (d(1), d(2), d(3));
                let det = x[0] * (y[1] * z[2] - y[2] * z[1]) - y[0] * (x[1] * z[2] - x[2] * z[1])
                    + z[0] * (x[1] * y[2] - x[2] * y[1]);
                min3 = min3.min(det);
            }
        }
        assert!((min3 - (1.0 - 6.0 * a)).abs() < 1e-12, "{min3}");
        assert!(min2 > 0.0 && min3 > 0.0);
    }

    /// `±1` from bit `d` of `s`.
    fn sign(s: usize, d: usize) -> f64 {
        if s >> d & 1 == 1 { 1.0 } else { -1.0 }
    }

    #[test]
    fn kuhn_tetrahedra_fill_the_cube_positively() {
        let tets = kuhn_tetrahedra(2);
        let mut seen = std::collections::HashSet::new();
        for t in tets {
            assert_eq!(t[0], 0);
            assert_eq!(t[3], 7);
            assert!(seen.insert(t));
        }
        let m = Mesh::new(
            3,
            (0..8)
                .flat_map(|o| [(o % 2) as f64, (o / 2 % 2) as f64, (o / 4) as f64])
                .collect(),
            tets.concat(),
        )
        .unwrap();
        assert!((m.total_volume() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn permutations_are_bijections_with_inverse() {
        let mut rng = Rng::new(4);
        for n in [1usize, 2, 3, 7, 64, 1000, (1 << 16) + 3] {
            let p = Permutation::new(n, &mut rng);
            let mut seen = vec![false; n];
            for i in 0..n {
                let j = p.forward(i);
                assert!(j < n && !seen[j], "n = {n}");
                seen[j] = true;
                assert_eq!(p.inverse(j), i);
            }
            if n >= 64 {
                // scattered: few indices keep a neighbour as neighbour
                let close = (1..n)
                    .filter(|&i| p.forward(i).abs_diff(p.forward(i - 1)) <= 2)
                    .count();
                assert!(close < n / 10, "n = {n}: {close}");
            }
        }
        // a large n: spot checks
        let n = 33_838_512;
        let p = Permutation::new(n, &mut rng);
        for i in (0..n).step_by(100_003) {
            assert_eq!(p.inverse(p.forward(i)), i);
            assert!(p.forward(i) < n);
        }
    }

    #[test]
    fn even_permutation_tables() {
        let parity = |p: &[usize]| {
            let mut inv = 0;
            for i in 0..p.len() {
                for j in i + 1..p.len() {
                    inv += (p[i] > p[j]) as usize;
                }
            }
            inv % 2
        };
        let mut all = std::collections::HashSet::new();
        for p in EVEN_PERMUTATIONS_4 {
            assert_eq!(parity(&p), 0);
            assert!(all.insert(p));
        }
        for p in EVEN_PERMUTATIONS_3 {
            assert_eq!(parity(&p), 0);
        }
    }

    #[test]
    fn n_for_cells_is_smallest() {
        assert_eq!(n_for_cells(2, 0).unwrap(), 1);
        assert_eq!(n_for_cells(2, 2).unwrap(), 1);
        assert_eq!(n_for_cells(2, 3).unwrap(), 2);
        assert_eq!(n_for_cells(2, 1 << 25).unwrap(), 4096);
        assert_eq!(n_for_cells(2, (1 << 25) + 1).unwrap(), 4097);
        assert_eq!(n_for_cells(3, 6).unwrap(), 1);
        assert_eq!(n_for_cells(3, 7).unwrap(), 2);
        assert_eq!(n_for_cells(3, 6000).unwrap(), 10);
        assert_eq!(n_for_cells(3, 1 << 25).unwrap(), 178);
        for t in 1..3000 {
            for dim in [2, 3] {
                let n = n_for_cells(dim, t).unwrap();
                let c = |n: usize| if dim == 2 { 2 * n * n } else { 6 * n.pow(3) };
                assert!(c(n) >= t && (n == 1 || c(n - 1) < t));
            }
        }
        let m = mesh_for_cells(3, 100, &MeshOptions::default()).unwrap();
        assert_eq!(m.n_cells(), 162);
    }

    #[test]
    fn bad_arguments_are_errors() {
        let d = MeshOptions::default();
        let name = |r: Result<Mesh>| match r {
            Err(Error::InvalidArgument { name, reason }) => (name, reason),
            other => panic!("{other:?}"),
        };
        assert_eq!(name(unit_square(0, &d)).0, "n");
        assert_eq!(name(unit_cube(895, &d)).0, "n");
        assert_eq!(name(unit_box(4, 2, &d)).0, "dim");
        let (n, r) = name(unit_square(2, &opts(0.2, false, 0)));
        assert_eq!(n, "jitter");
        assert_eq!(
            r,
            "0.2 is outside [0, 0.15]: larger displacements can invert cells"
        );
        assert_eq!(name(unit_square(2, &opts(f64::NAN, false, 0))).0, "jitter");
        assert_eq!(name(unit_square(2, &opts(-0.1, false, 0))).0, "jitter");
        assert_eq!(name(mesh_for_cells(3, usize::MAX, &d)).0, "target_cells");
    }

    /// Generation time for ≥ 2²⁵ cells; run with
    /// `cargo test --release -p femquad --lib mesh::generate -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_2_pow_25_cells() {
        for (dim, shuffle, jitter) in [
            (2, false, 0.0),
            (3, false, 0.0),
            (2, true, 0.1),
            (3, true, 0.1),
        ] {
            let o = opts(jitter, shuffle, 1);
            let t = std::time::Instant::now();
            let m = mesh_for_cells(dim, 1 << 25, &o).unwrap();
            let gen_time = t.elapsed();
            let t = std::time::Instant::now();
            m.validate().unwrap();
            let val = t.elapsed();
            let t = std::time::Instant::now();
            let b = m.boundary_facets().unwrap();
            let bt = t.elapsed();
            println!(
                "\n{dim}D shuffle={shuffle} jitter={jitter}: {} cells, {} vertices: generate {:.2?}, \
                 validate {:.2?}, boundary_facets {:.2?} ({} facets)",
                m.n_cells(),
                m.n_vertices(),
                gen_time,
                val,
                bt,
                b.len()
            );
        }
    }
}
