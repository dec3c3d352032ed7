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
use super::size::{Footprint, MeshSize, largest, physical_memory};
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
    /// femquad's own generator); the same seed gives the same mesh on every
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

/// Why [`unit_box`]`(dim, n, …)` cannot be built on this machine (more
/// cells than `u32` indices number, or more memory than it has:
/// [`Footprint::too_large`]), with the largest `n` that can; `None` if it
/// can. `memory` in bytes ([`physical_memory`]).
fn too_large(dim: usize, n: usize, memory: Option<u64>) -> Option<String> {
    let why = |n: usize| {
        Footprint {
            meshes: &[MeshSize::unit_box(dim, n as f64)],
            field: None,
        }
        .too_large(memory)
    };
    let reason = why(n)?;
    let most = match largest(1, n, |n| why(n).is_none()) {
        Some(most) => format!("the largest n in {dim}D on this machine is {most}"),
        None => "no mesh fits".to_string(),
    };
    Some(format!("{n} intervals per side give {reason}; {most}"))
}

fn check_args(dim: usize, n: usize, opts: &MeshOptions) -> Result<()> {
    if n == 0 {
        return Err(Error::arg("n", "must be at least 1"));
    }
    if let Some(why) = too_large(dim, n, physical_memory()) {
        return Err(Error::arg("n", why));
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
/// Errors: [`Error::InvalidArgument`] for `dim ∉ {2, 3}`, `n = 0`, a
/// jitter outside `[0, MAX_JITTER]`, or an `n` so large that the mesh would
/// have more than `u32::MAX` cells or vertices or need more memory than
/// this machine has ([`super::size`]; checked before anything is
/// allocated, the reason states the largest `n` that fits).
///
/// ```
/// use femquad::prelude::*;
///
/// // jittered and shuffled: the same domain, cells as point sets, and seed → mesh
/// let opts = MeshOptions { jitter: 0.1, shuffle: true, seed: 7 };
/// let mesh = unit_box(3, 2, &opts)?;
/// assert_eq!((mesh.dim(), mesh.n_cells()), (3, 48));
/// assert!((mesh.total_volume() - 1.0).abs() < 1e-14);
/// assert!((0..mesh.n_cells()).all(|c| mesh.det_j(c) > 0.0));
/// assert_eq!(mesh, unit_box(3, 2, &opts)?);
/// assert_ne!(mesh, unit_cube(2, &MeshOptions::default())?);
/// assert!(unit_box(4, 2, &opts).is_err()); // 2D or 3D only
/// # Ok::<(), femquad::Error>(())
/// ```
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
///
/// ```
/// use femquad::prelude::*;
///
/// let mesh = unit_square(2, &MeshOptions::default())?;
/// assert_eq!((mesh.n_cells(), mesh.n_vertices()), (8, 9)); // 2n², (n+1)²
/// // grid vertex (i, j) is vertex i + (n+1)j: (1, 1) is the centre
/// assert_eq!(mesh.vertex(4), &[0.5, 0.5]);
/// assert!((0..mesh.n_cells()).all(|c| mesh.cell_volume(c) == 0.125));
/// # Ok::<(), femquad::Error>(())
/// ```
pub fn unit_square(n: usize, opts: &MeshOptions) -> Result<Mesh> {
    unit_box(2, n, opts)
}

/// Mesh of the unit cube `[0,1]³`: `n³` cubes of side `h = 1/n`, each split
/// into the six tetrahedra of the Kuhn subdivision along the diagonal of
/// direction `(1, 1, 1)`; `6n³` cells and `(n+1)³` vertices, conforming
/// (see the [module docs](self)).
///
/// Errors as [`unit_box`].
///
/// ```
/// use femquad::prelude::*;
///
/// let mesh = unit_cube(2, &MeshOptions::default())?;
/// assert_eq!((mesh.n_cells(), mesh.n_vertices()), (48, 27)); // 6n³, (n+1)³
/// // grid vertex (i, j, k) is vertex i + (n+1)(j + (n+1)k): (1, 1, 1) is the centre
/// assert_eq!(mesh.vertex(13), &[0.5, 0.5, 0.5]);
/// assert!((0..mesh.n_cells()).all(|c| mesh.det_j(c) > 0.0));
/// assert!((mesh.total_volume() - 1.0).abs() < 1e-14);
/// # Ok::<(), femquad::Error>(())
/// ```
pub fn unit_cube(n: usize, opts: &MeshOptions) -> Result<Mesh> {
    unit_box(3, n, opts)
}

/// The smallest `n` for which [`unit_box`]`(dim, n, …)` has at least
/// `target_cells` cells: the smallest `n ≥ 1` with `2n² ≥ target_cells` in
/// 2D, `6n³ ≥ target_cells` in 3D.
///
/// Errors: [`Error::InvalidArgument`] for `dim ∉ {2, 3}`, or naming
/// `target_cells` for a target whose mesh [`unit_box`] would refuse (more
/// than `u32::MAX` cells or vertices, or more memory than this machine
/// has), with the reason and the largest `n`.
pub fn n_for_cells(dim: usize, target_cells: usize) -> Result<usize> {
    if dim != 2 && dim != 3 {
        return Err(Error::arg("dim", format!("{dim} is not 2 or 3")));
    }
    let per = if dim == 2 { 2.0 } else { 6.0 };
    // the size first, in floating point: no integer overflow for any target
    let n_f = (target_cells as f64 / per)
        .powf(1.0 / dim as f64)
        .ceil()
        .max(1.0);
    let n_max = n_f.min(usize::MAX as f64 / 2.0) as usize;
    if let Some(why) = too_large(dim, n_max, physical_memory()) {
        return Err(Error::arg(
            "target_cells",
            format!("{target_cells} cells: {why}"),
        ));
    }
    let cells = |n: usize| -> usize { if dim == 2 { 2 * n * n } else { 6 * n * n * n } };
    let mut n = n_max;
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
mod tests;
