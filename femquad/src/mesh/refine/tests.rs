//! Tests of [`super`].

use std::collections::BTreeSet;
use std::path::Path;

use super::*;
use crate::layout::{TETRAHEDRON_EDGES, simplex_edges};
use crate::mesh::generate::{MeshOptions, mesh_for_cells, unit_cube, unit_square};
use crate::mesh::gmsh::{GmshOptions, read_gmsh_with};
use crate::rng::Rng;

fn jittered(seed: u64, shuffle: bool) -> MeshOptions {
    MeshOptions {
        jitter: 0.15,
        shuffle,
        seed,
    }
}

/// A jittered, shuffled square (2·6² cells) and cube (6·3³ cells).
fn meshes() -> [Mesh; 2] {
    [
        unit_square(6, &jittered(1, true)).unwrap(),
        unit_cube(3, &jittered(2, true)).unwrap(),
    ]
}

/// One irregular, positively oriented tetrahedron; `order` 1 lists its
/// vertices in another even order, whose first diagonal is the longest.
fn irregular_tet(order: usize) -> Mesh {
    let cell = if order == 0 {
        [0, 1, 2, 3]
    } else {
        [1, 3, 2, 0]
    };
    Mesh::new(
        3,
        vec![
            0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.9, 0.45, 0.05, 0.2, 0.15, 0.55,
        ],
        cell.to_vec(),
    )
    .unwrap()
}

/// Shape measure `h_max^dim / |det J|` of cell `c` (scale invariant;
/// 2/√3 for an equilateral triangle, √2 for a regular tetrahedron).
fn shape(m: &Mesh, c: usize) -> f64 {
    m.cell_diameter(c).powi(m.dim() as i32) / m.det_j(c).abs()
}

fn worst_shape(m: &Mesh) -> f64 {
    (0..m.n_cells()).map(|c| shape(m, c)).fold(0.0, f64::max)
}

/// The permutations of `(0, 1, 2, 3)` that map the pair of edges
/// `{02, 13}` onto itself.
fn d4() -> Vec<[usize; 4]> {
    let pair = |x: usize, y: usize| [x.min(y), x.max(y)];
    let mut out = Vec::new();
    for code in 0..256 {
        let g = [code & 3, (code >> 2) & 3, (code >> 4) & 3, code >> 6];
        let distinct = (0..4).all(|i| (0..i).all(|j| g[i] != g[j]));
        let diagonals = [pair(g[0], g[2]), pair(g[1], g[3])];
        if distinct && diagonals.contains(&[0, 2]) && diagonals.contains(&[1, 3]) {
            out.push(g);
        }
    }
    out
}

/// The children of a tetrahedron whose local vertex `i` is original
/// vertex `labels[i]`, by `table`, as tuples of original vertex pairs
/// (`[i, i]` a vertex, `[i, j]`, `i < j`, a midpoint).
fn children_of(labels: [usize; 4], table: &[[usize; 4]; 8]) -> Vec<[[usize; 2]; 4]> {
    table
        .iter()
        .map(|child| {
            child.map(|l| {
                let [a, b] = if l < 4 {
                    [l, l]
                } else {
                    TETRAHEDRON_EDGES[l - 4]
                };
                let (a, b) = (labels[a], labels[b]);
                [a.min(b), a.max(b)]
            })
        })
        .collect()
}

/// Whether the children of `g·T` are `D₄`-reorderings of the children of
/// `T`, one to one.
fn equivariant(g: [usize; 4], table: &[[usize; 4]; 8], group: &[[usize; 4]]) -> bool {
    let base = children_of([0, 1, 2, 3], table);
    let mut used = [false; 8];
    children_of(g, table).iter().all(|child| {
        let found = base
            .iter()
            .enumerate()
            .find(|(i, c)| !used[*i] && group.iter().any(|h| h.map(|x| c[x]) == *child));
        found.map(|(i, _)| used[i] = true).is_some()
    })
}

#[test]
fn bey_rule_is_equivariant_under_d4() {
    let group = d4();
    assert_eq!(group.len(), 8);
    assert!(group.contains(&[2, 1, 0, 3])); // the swap 0 ↔ 2 used for T6, T8
    // Bey's table in his own vertex order
    let mut bey = TETRAHEDRON_CHILDREN;
    bey[5].swap(0, 2);
    bey[7].swap(0, 2);
    assert_eq!(bey[5], [4, 6, 5, 8]);
    assert_eq!(bey[7], [6, 5, 8, 9]);
    for table in [&bey, &TETRAHEDRON_CHILDREN] {
        for &g in &group {
            assert!(equivariant(g, table, &group), "{g:?}");
        }
        // and the property is not trivial: the swap 1 ↔ 2 (not in D4)
        // changes the interior diagonal
        assert!(!equivariant([0, 2, 1, 3], table, &group));
    }
}

/// Each child of one random cell: positive, `det J / 2^dim`; together
/// they fill the parent (volumes sum, and a conforming fine mesh).
#[test]
fn children_are_positive_and_fill_the_parent() {
    let mut rng = Rng::new(7);
    for dim in [2, 3] {
        for _ in 0..50 {
            let x = rng.vec((dim + 1) * dim, -1.0, 1.0);
            let mut m = Mesh::from_raw(dim, x, (0..=dim as u32).collect()).unwrap();
            if m.reorient().is_err() || m.validate().is_err() {
                continue; // a near-degenerate draw
            }
            let r = refine(&m).unwrap();
            let f = r.mesh();
            assert_eq!(f.n_cells(), 1 << dim);
            let det = m.det_j(0);
            for c in 0..f.n_cells() {
                let d = f.det_j(c);
                assert!(
                    (d - det / f64::from(1 << dim)).abs() < 1e-13 * det,
                    "{d} {det}"
                );
                assert_eq!(r.parent_cell(c), 0);
            }
            let sum: f64 = (0..f.n_cells()).map(|c| f.cell_volume(c)).sum();
            assert!((sum - m.cell_volume(0)).abs() < 1e-13 * sum);
            assert_eq!(f.boundary_facets().unwrap().len(), (dim + 1) << (dim - 1));
        }
    }
}

#[test]
fn volumes_orientation_and_conformity() {
    for m in meshes() {
        let dim = m.dim();
        let r = refine(&m).unwrap();
        let f = r.mesh();
        f.validate().unwrap(); // every child positively oriented
        assert_eq!(f.n_cells(), m.n_cells() << dim);
        assert_eq!(r.n_coarse_cells(), m.n_cells());
        assert_eq!(f.n_vertices(), m.n_vertices() + r.edge_vertices().len());
        for c in 0..m.n_cells() {
            let sum: f64 = r.children(c).map(|j| f.cell_volume(j)).sum();
            assert!((sum - m.cell_volume(c)).abs() < 1e-14, "cell {c}");
        }
        assert!((f.total_volume() - 1.0).abs() < 1e-13);
        // no facet is shared by more than two cells (else an error), and
        // the facets of only one cell are the refined coarse boundary:
        // 2 (4) per coarse boundary facet, all on the unit box's boundary
        let coarse = m.boundary_facets().unwrap();
        let fine = f.boundary_facets().unwrap();
        assert_eq!(fine.len(), coarse.len() << (dim - 1));
        for facet in &fine {
            let on_side = (0..dim).any(|d| {
                [0.0, 1.0].iter().any(|&s| {
                    facet
                        .vertex_slice()
                        .iter()
                        .all(|&v| f.vertex(v as usize)[d] == s)
                })
            });
            assert!(on_side, "{facet:?}");
        }
        // facet incidences: 2 per interior facet + 1 per boundary facet
        let incidences = (dim + 1) * f.n_cells();
        assert_eq!((incidences - fine.len()) % 2, 0);
    }
}

/// Over 4 levels (5 for one tetrahedron) the worst shape stays within a
/// fixed factor of the coarse mesh's and does not change after the
/// first level: Bey's bounded congruence classes, kept by the
/// orientation swap. Both for repeated [`refine`] on the stored order
/// and for [`refine_uniformly`] (shortest diagonal first).
#[test]
fn quality_stays_bounded() {
    let kuhn = unit_cube(2, &jittered(3, false)).unwrap();
    // measured worst shapes: coarse, then every level ≥ 1 as stored and
    // prepared (shortest diagonal first)
    for (m, levels, want) in [
        (kuhn, 4, [6.2119, 16.9586, 6.2119]),
        (irregular_tet(0), 5, [5.3399, 5.3399, 5.3399]),
        (irregular_tet(1), 5, [5.3399, 31.3042, 5.3399]),
    ] {
        let mut stored = vec![m.clone()];
        for _ in 0..levels {
            let next = refine(stored.last().unwrap()).unwrap().into_mesh();
            stored.push(next);
        }
        let mut uniform = vec![m.clone()];
        uniform.extend(
            refine_uniformly(&m, levels)
                .unwrap()
                .into_iter()
                .map(|r| r.into_mesh()),
        );
        for (hierarchy, level_value) in [(stored, want[1]), (uniform, want[2])] {
            let worst: Vec<f64> = hierarchy.iter().map(worst_shape).collect();
            println!("worst shape per level: {worst:?}");
            assert!((worst[0] - want[0]).abs() < 1e-4, "{worst:?}");
            for l in 1..=levels {
                assert!((worst[l] - level_value).abs() < 1e-4, "{worst:?}");
                // no drift at all: the same congruence classes each level
                assert!((worst[l] - worst[1]).abs() < 1e-12 * worst[1], "{worst:?}");
            }
        }
    }
    // one tetrahedron: at most 3 congruence classes at every level
    // (compared by sorted edge lengths, a congruence invariant)
    let hierarchy = refine_uniformly(&irregular_tet(0), 4).unwrap();
    for (l, r) in hierarchy.iter().enumerate() {
        let f = r.mesh();
        let classes: BTreeSet<Vec<i64>> = (0..f.n_cells())
            .map(|c| {
                let cell = f.cell(c);
                let mut lengths: Vec<i64> = TETRAHEDRON_EDGES
                    .iter()
                    .map(|&[a, b]| {
                        let (p, q) = (f.vertex(cell[a] as usize), f.vertex(cell[b] as usize));
                        let d: f64 = (0..3).map(|i| (p[i] - q[i]).powi(2)).sum();
                        (d.sqrt() * f64::from(1 << (l + 1)) * 1e9).round() as i64
                    })
                    .collect();
                lengths.sort();
                lengths
            })
            .collect();
        assert!(
            classes.len() <= 3,
            "level {}: {} classes",
            l + 1,
            classes.len()
        );
    }
}

/// A coarse P1 function prolonged is the same function: at every fine
/// cell's centroid the fine interpolant equals the coarse function
/// evaluated there (barycentric coordinates in the parent cell).
#[test]
fn prolongation_is_exact_for_nested_p1() {
    let mut rng = Rng::new(11);
    for m in meshes() {
        let (dim, k) = (m.dim(), m.vertices_per_cell());
        let r = refine(&m).unwrap();
        let f = r.mesh();
        let n_comp = 2;
        let uc = rng.vec(m.n_vertices() * n_comp, -1.0, 1.0);
        let uf = r.prolong_p1(&uc, n_comp).unwrap();
        assert_eq!(&uf[..uc.len()], &uc[..]);
        let mut worst: f64 = 0.0;
        for c in 0..f.n_cells() {
            let cell = f.cell(c);
            let x: Vec<f64> = (0..dim)
                .map(|d| cell.iter().map(|&v| f.vertex(v as usize)[d]).sum::<f64>() / k as f64)
                .collect();
            let p = m.cell(r.parent_cell(c));
            let lambda = barycentric(&m, p, &x);
            assert!(
                lambda.iter().all(|&l| l > 0.0),
                "centroid inside the parent"
            );
            for j in 0..n_comp {
                let fine: f64 = cell
                    .iter()
                    .map(|&v| uf[v as usize * n_comp + j])
                    .sum::<f64>()
                    / k as f64;
                let coarse: f64 = p
                    .iter()
                    .zip(&lambda)
                    .map(|(&v, l)| l * uc[v as usize * n_comp + j])
                    .sum();
                worst = worst.max((fine - coarse).abs());
            }
        }
        assert!(worst < 1e-13, "{worst}");
    }
}

#[test]
fn prepare_picks_the_shortest_diagonal() {
    let m = unit_cube(3, &jittered(8, true)).unwrap();
    let p = prepare_for_refinement(&m).unwrap();
    assert_eq!(p.vertices(), m.vertices());
    for c in 0..m.n_cells() {
        // the same vertex set, an even permutation (same det J)
        let (mut a, mut b) = (m.cell(c).to_vec(), p.cell(c).to_vec());
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert!((p.det_j(c) - m.det_j(c)).abs() < 1e-15, "cell {c}");
        let x = |i: usize| p.vertex(p.cell(c)[i] as usize);
        let diagonal = |a: usize, b: usize, c: usize, d: usize| -> f64 {
            (0..3)
                .map(|i| ((x(a)[i] + x(b)[i]) - (x(c)[i] + x(d)[i])).powi(2))
                .sum()
        };
        // the shortest, up to the tie tolerance
        let d02 = diagonal(0, 2, 1, 3) * (1.0 - DIAGONAL_TIE);
        assert!(d02 <= diagonal(0, 1, 2, 3) && d02 <= diagonal(0, 3, 1, 2));
    }
    // preparing twice changes nothing; triangles are left alone
    assert_eq!(prepare_for_refinement(&p).unwrap(), p);
    // Kuhn cubes have diagonals that tie up to rounding:
    // each of the six tetrahedra of a cube is reordered as in every other
    // cube, whatever the rounding of its coordinates, and preparing twice
    // changes nothing
    for n in 2..=8 {
        let cube = unit_cube(n, &MeshOptions::default()).unwrap();
        // moved, scaled and written with 12 decimals, as a mesh file may
        // hold it: coordinates 0.1 + 0.7·i/n up to 5e-13
        let moved = (cube.vertices().iter())
            .map(|x| format!("{:.12}", 0.1 + 0.7 * x).parse().unwrap())
            .collect();
        let kuhn = Mesh::from_raw(3, moved, cube.cells().to_vec()).unwrap();
        let once = prepare_for_refinement(&kuhn).unwrap();
        assert_eq!(prepare_for_refinement(&once).unwrap(), once, "n = {n}");
        let order = |c: usize| -> Vec<usize> {
            let old = kuhn.cell(c);
            once.cell(c)
                .iter()
                .map(|v| old.iter().position(|w| w == v).unwrap())
                .collect()
        };
        for c in 0..kuhn.n_cells() {
            assert_eq!(order(c), order(c % 6), "n = {n}, cell {c}");
        }
    }
    // a Kuhn tetrahedron in path order (x₀₂–x₁₃ ties x₀₃–x₁₂) with x₃
    // moved by δ along x: x₀₃–x₁₂ shorter by 2δ relatively — a tie up to
    // rounding for δ = 1e-13 (kept), a shorter diagonal for δ = 1e-3
    for (delta, expected) in [(1e-13, [0, 1, 2, 3]), (1e-3, [0, 2, 3, 1])] {
        let x = vec![0., 0., 0., 1., 0., 0., 1., 1., 0., 1. + delta, 1., 1.];
        let tet = Mesh::from_raw(3, x, vec![0, 1, 2, 3]).unwrap();
        let prepared = prepare_for_refinement(&tet).unwrap();
        assert_eq!(prepared.cell(0), &expected, "δ = {delta}");
    }
    let s = unit_square(3, &jittered(8, true)).unwrap();
    assert_eq!(prepare_for_refinement(&s).unwrap(), s);
    let bad = Mesh::from_raw(3, vec![0.0; 9], vec![0, 1, 2, 3]).unwrap();
    assert!(matches!(
        prepare_for_refinement(&bad),
        Err(Error::InvalidCell { cell: 0, .. })
    ));
}

/// Barycentric coordinates of `x` in the simplex `cell` of `m`.
fn barycentric(m: &Mesh, cell: &[u32], x: &[f64]) -> Vec<f64> {
    let dim = m.dim();
    let x0 = m.vertex(cell[0] as usize);
    // solve J λ' = x − X_0, J = [X_1 − X_0, …] by Cramer's rule
    let col = |i: usize| -> Vec<f64> {
        let xi = m.vertex(cell[i] as usize);
        (0..dim).map(|d| xi[d] - x0[d]).collect()
    };
    let rhs: Vec<f64> = (0..dim).map(|d| x[d] - x0[d]).collect();
    let cols: Vec<Vec<f64>> = (1..=dim).map(col).collect();
    let det = |c: &[Vec<f64>]| -> f64 {
        if dim == 2 {
            c[0][0] * c[1][1] - c[0][1] * c[1][0]
        } else {
            c[0][0] * (c[1][1] * c[2][2] - c[1][2] * c[2][1])
                - c[1][0] * (c[0][1] * c[2][2] - c[0][2] * c[2][1])
                + c[2][0] * (c[0][1] * c[1][2] - c[0][2] * c[1][1])
        }
    };
    let d = det(&cols);
    let mut lambda = vec![0.0; dim + 1];
    for i in 0..dim {
        let mut c = cols.clone();
        c[i] = rhs.clone();
        lambda[i + 1] = det(&c) / d;
    }
    lambda[0] = 1.0 - lambda[1..].iter().sum::<f64>();
    lambda
}

#[test]
fn restriction_is_the_transpose_of_prolongation() {
    let mut rng = Rng::new(12);
    for m in meshes() {
        let r = refine(&m).unwrap();
        for n_comp in [1, 3] {
            let u = rng.vec(m.n_vertices() * n_comp, -1.0, 1.0);
            let res = rng.vec(r.mesh().n_vertices() * n_comp, -1.0, 1.0);
            let pu = r.prolong_p1(&u, n_comp).unwrap();
            let ptr = r.restrict_p1(&res, n_comp).unwrap();
            let lhs: f64 = pu.iter().zip(&res).map(|(a, b)| a * b).sum();
            let rhs: f64 = u.iter().zip(&ptr).map(|(a, b)| a * b).sum();
            assert!(
                (lhs - rhs).abs() < 1e-12 * lhs.abs().max(1.0),
                "{lhs} {rhs}"
            );
            // f32 too
            let u32s: Vec<f32> = u.iter().map(|&x| x as f32).collect();
            let p32 = r.prolong_p1(&u32s, n_comp).unwrap();
            for (a, b) in p32.iter().zip(&pu) {
                assert!((f64::from(*a) - b).abs() < 1e-6);
            }
        }
    }
}

#[test]
fn hierarchy_counts() {
    // unit square n = 2: 8 cells, 9 vertices, 16 edges; each level:
    // V' = V + E, E' = 2E + 3C, C' = 4C
    let m = unit_square(2, &MeshOptions::default()).unwrap();
    let h = refine_uniformly(&m, 3).unwrap();
    let (mut v, mut e, mut c) = (9, 16, 8);
    for r in &h {
        assert_eq!(r.n_coarse_vertices(), v);
        assert_eq!(r.edge_vertices().len(), e);
        (v, e, c) = (v + e, 2 * e + 3 * c, 4 * c);
        assert_eq!((r.mesh().n_vertices(), r.mesh().n_cells()), (v, c));
    }
    assert_eq!(h[2].mesh().n_cells(), 8 * 64);
    assert!(refine_uniformly(&m, 0).unwrap().is_empty());
    // an empty mesh refines to an empty mesh
    let empty = Mesh::new(2, vec![], vec![]).unwrap();
    let r = refine(&empty).unwrap();
    assert_eq!((r.mesh().n_vertices(), r.mesh().n_cells()), (0, 0));
    // 3D: C' = 8C
    let t = refine_uniformly(&irregular_tet(0), 2).unwrap();
    assert_eq!(t[1].mesh().n_cells(), 64);
    assert_eq!(t[0].mesh().n_vertices(), 10);
    assert_eq!(t[1].mesh().n_vertices(), 35);
}

/// The new vertices are numbered by first touch: over the coarse cells in
/// order, and each cell's local edges in [`simplex_edges`] order, the fine
/// vertex at the edge's midpoint (found among the cell's children by its
/// coordinates, not through the children tables) is either one met before
/// or the next new number — `n_v, n_v + 1, …` — and all are met; it is the
/// midpoint of the edge `edge_vertices()` names. (The children's own order
/// is not the local edge order: the first triangle child holds the
/// midpoints of local edges 0 and 2.)
#[test]
fn new_vertices_are_numbered_by_first_touch() {
    let plain = MeshOptions::default();
    let [square, cube] = meshes();
    for m in [
        square,
        cube,
        unit_square(3, &plain).unwrap(),
        unit_cube(2, &plain).unwrap(),
        // more cell edges than one block of `first_touch` (4096): 3 and 16 blocks
        unit_square(40, &plain).unwrap(),
        unit_cube(12, &plain).unwrap(),
    ] {
        let (dim, nv) = (m.dim(), m.n_vertices());
        let r = refine(&m).unwrap();
        let f = r.mesh();
        let mut next = nv;
        for c in 0..m.n_cells() {
            let cell = m.cell(c);
            let children: Vec<usize> = r
                .children(c)
                .flat_map(|j| f.cell(j).iter().map(|&v| v as usize))
                .collect();
            for (e, &[i, j]) in simplex_edges(dim).iter().enumerate() {
                let (a, b) = (cell[i], cell[j]);
                let (xa, xb) = (m.vertex(a as usize), m.vertex(b as usize));
                let mid: Vec<f64> = (0..dim).map(|d| 0.5 * (xa[d] + xb[d])).collect();
                let v = children
                    .iter()
                    .copied()
                    .find(|&v| f.vertex(v) == &mid[..])
                    .unwrap_or_else(|| panic!("cell {c}: no child vertex at local edge {e}"));
                assert!(v >= nv, "cell {c}, local edge {e}: {v}");
                assert_eq!(r.edge_vertices()[v - nv], [a.min(b), a.max(b)]);
                assert!(
                    v <= next,
                    "{dim}D, coarse cell {c}, local edge {e}: new vertex {v}, expected {next} \
                     or an earlier one"
                );
                if v == next {
                    next += 1;
                }
            }
        }
        assert_eq!(next, f.n_vertices(), "{dim}D");
    }
}

/// The fine mesh is the refinement by the sorted edge numbering of
/// [`mesh_edges`] (that of the P2 space, and of [`refine`] before the
/// first-touch order) up to a permutation of the new vertices: the coarse
/// vertices first and unchanged (nested), `edge_vertices()` a permutation
/// of the sorted edges, fine vertex `n_v + k` at the midpoint of
/// `edge_vertices()[k]`, each fine cell, its new vertices mapped to their
/// sorted edge numbers, the child of the tables on the sorted numbering,
/// with `1/2^dim` of its parent's volume.
#[test]
fn fine_mesh_is_the_sorted_refinement_up_to_the_new_vertex_order() {
    for m in meshes() {
        let (dim, nv) = (m.dim(), m.n_vertices());
        let r = refine(&m).unwrap();
        let f = r.mesh();
        let edges = mesh_edges(&m).unwrap();
        assert_eq!(&f.vertices()[..nv * dim], m.vertices());
        assert_eq!(f.n_vertices(), nv + edges.n_edges());
        let mut sorted = r.edge_vertices().to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, edges.endpoints());
        for (k, &[a, b]) in r.edge_vertices().iter().enumerate() {
            let (xa, xb) = (m.vertex(a as usize), m.vertex(b as usize));
            let mid: Vec<f64> = (0..dim).map(|d| 0.5 * (xa[d] + xb[d])).collect();
            assert_eq!(f.vertex(nv + k), &mid[..], "fine vertex {}", nv + k);
        }
        let sorted_number = |v: u32| -> u32 {
            match (v as usize).checked_sub(nv) {
                None => v,
                Some(k) => {
                    let [a, b] = r.edge_vertices()[k];
                    nv as u32 + edges.find(a, b).unwrap()
                }
            }
        };
        let table: Vec<&[usize]> = if dim == 2 {
            TRIANGLE_CHILDREN.iter().map(|t| &t[..]).collect()
        } else {
            TETRAHEDRON_CHILDREN.iter().map(|t| &t[..]).collect()
        };
        let mut moved = 0;
        for c in 0..m.n_cells() {
            let mut nodes = m.cell(c).to_vec();
            nodes.extend(edges.cell_edges(c).iter().map(|&e| nv as u32 + e));
            for (j, child) in r.children(c).zip(&table) {
                let got: Vec<u32> = f.cell(j).iter().map(|&v| sorted_number(v)).collect();
                let want: Vec<u32> = child.iter().map(|&l| nodes[l]).collect();
                assert_eq!(got, want, "{dim}D, coarse cell {c}, fine cell {j}");
                moved += usize::from(f.cell(j) != &want[..]);
                let ratio = f.cell_volume(j) * f64::from(1 << dim) / m.cell_volume(c);
                assert!((ratio - 1.0).abs() < 1e-12, "fine cell {j}: {ratio}");
            }
        }
        // the numbering is another one indeed
        assert!(moved > 0);
    }
}

/// Refining a locality-renumbered mesh keeps its locality (children are
/// contiguous; edge vertices follow the coarse cell order, by first touch).
#[test]
fn refinement_keeps_locality_of_a_renumbered_mesh() {
    use crate::mesh::renumber::locality_metrics;
    let m = unit_square(40, &jittered(5, true)).unwrap();
    let (local, _) = m.renumbered_for_locality().unwrap();
    let shuffled = locality_metrics(refine(&m).unwrap().mesh()).unwrap();
    let kept = locality_metrics(refine(&local).unwrap().mesh()).unwrap();
    assert!(
        kept.warp_sectors_per_cell < 0.25 * shuffled.warp_sectors_per_cell,
        "{kept:?} {shuffled:?}"
    );
}

/// A file of `femquad/tests/data`, read with reorientation (one is written
/// clockwise).
fn test_mesh(name: &str) -> GmshMesh {
    read_gmsh_with(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
        &GmshOptions {
            reorient: true,
            ..GmshOptions::default()
        },
    )
    .unwrap()
}

/// Whether `x` lies on the simplex spanned by `points` (1 to 3 of them).
fn on_simplex(x: &[f64], points: &[&[f64]]) -> bool {
    let sub = |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(p, q)| p - q).collect() };
    let dot = |a: &[f64], b: &[f64]| -> f64 { a.iter().zip(b).map(|(p, q)| p * q).sum() };
    let tol = 1e-10;
    let r = sub(x, points[0]);
    match points.len() {
        1 => dot(&r, &r).sqrt() < tol,
        2 => {
            let e = sub(points[1], points[0]);
            let t = dot(&r, &e) / dot(&e, &e);
            let off: Vec<f64> = r.iter().zip(&e).map(|(a, b)| a - t * b).collect();
            (-tol..=1.0 + tol).contains(&t) && dot(&off, &off).sqrt() < tol
        }
        _ => {
            // least squares in the plane of the triangle
            let (e1, e2) = (sub(points[1], points[0]), sub(points[2], points[0]));
            let (a, b, c) = (dot(&e1, &e1), dot(&e1, &e2), dot(&e2, &e2));
            let (p, q) = (dot(&r, &e1), dot(&r, &e2));
            let det = a * c - b * b;
            let (s, t) = ((c * p - b * q) / det, (a * q - b * p) / det);
            let off: Vec<f64> = (0..r.len()).map(|i| r[i] - s * e1[i] - t * e2[i]).collect();
            s > -tol && t > -tol && s + t < 1.0 + tol && dot(&off, &off).sqrt() < tol
        }
    }
}

#[test]
fn gmsh_groups_resolve_to_the_refined_boundary() {
    for name in [
        "mesh_square.msh",
        "mesh_square_binary.msh",
        "mesh_square_clockwise.msh",
        "mesh_cube.msh",
        "mesh_cube_binary.msh",
        "mesh_disk_p2.msh",
    ] {
        let g = test_mesh(name);
        let f = refine_gmsh(&g).unwrap();
        let dim = g.mesh.dim();
        let r = refine(&g.mesh).unwrap();
        assert_eq!(&*f.mesh, r.mesh(), "{name}");
        for group in &g.physical_groups {
            if group.dim == dim {
                let want: Vec<u32> = g
                    .group_cells(group)
                    .iter()
                    .flat_map(|&c| r.children(c as usize).map(|j| j as u32))
                    .collect();
                assert_eq!(f.group_cells(group), want, "{name}: {group:?}");
                continue;
            }
            let coarse = g.group_elements(group);
            assert!(!coarse.is_empty(), "{name}: {group:?}");
            let want: Vec<u32> = (0..f.mesh.n_vertices() as u32)
                .filter(|&v| {
                    coarse.iter().any(|e| {
                        let points: Vec<&[f64]> = e
                            .vertices
                            .iter()
                            .map(|&w| g.mesh.vertex(w as usize))
                            .collect();
                        on_simplex(f.mesh.vertex(v as usize), &points)
                    })
                })
                .collect();
            assert_eq!(f.group_vertices(group), want, "{name}: {group:?}");
            let n_children = [1, 2, 4][group.dim];
            assert_eq!(f.group_elements(group).len(), coarse.len() * n_children);
        }
        // the refined boundary triangles of a 3D mesh keep their normals
        for (e, child) in g.elements.iter().filter(|e| e.dim == 2).zip(
            f.elements
                .iter()
                .filter(|e| e.dim == 2)
                .collect::<Vec<_>>()
                .chunks(4),
        ) {
            let normal = |v: &[u32], m: &Mesh| {
                let p: Vec<&[f64]> = v.iter().map(|&w| m.vertex(w as usize)).collect();
                let (a, b): (Vec<f64>, Vec<f64>) = (
                    (0..3).map(|i| p[1][i] - p[0][i]).collect(),
                    (0..3).map(|i| p[2][i] - p[0][i]).collect(),
                );
                [
                    a[1] * b[2] - a[2] * b[1],
                    a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0],
                ]
            };
            let n = normal(&e.vertices, &g.mesh);
            for c in child {
                let nc = normal(&c.vertices, &f.mesh);
                for i in 0..3 {
                    assert!((nc[i] - n[i] / 4.0).abs() < 1e-12, "{n:?} {nc:?}");
                }
                assert_eq!(c.entity, e.entity);
            }
        }
        // tags: coarse node tags kept, all element tags new and distinct
        assert_eq!(&f.node_tags[..g.node_tags.len()], &g.node_tags[..]);
        let mut nodes = f.node_tags.clone();
        nodes.sort_unstable();
        nodes.dedup();
        assert_eq!(nodes.len(), f.mesh.n_vertices());
        let max_coarse = g
            .cell_tags
            .iter()
            .chain(g.elements.iter().map(|e| &e.tag))
            .max()
            .unwrap();
        let mut tags: Vec<u64> = f
            .cell_tags
            .iter()
            .chain(f.elements.iter().map(|e| &e.tag))
            .copied()
            .collect();
        assert!(tags.iter().all(|t| t > max_coarse));
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), f.cell_tags.len() + f.elements.len());
        for (c, &ent) in f.cell_entities.iter().enumerate() {
            assert_eq!(ent, g.cell_entities[r.parent_cell(c)]);
        }
    }
}

#[test]
fn bad_input_is_reported() {
    // an inverted cell: refine names it
    let m = Mesh::from_raw(2, vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0], vec![0, 2, 1]).unwrap();
    match refine(&m) {
        Err(Error::InvalidCell { cell: 0, reason }) => {
            assert!(reason.starts_with("negatively oriented"), "{reason}")
        }
        e => panic!("{e:?}"),
    }
    let r = refine(&unit_square(1, &MeshOptions::default()).unwrap()).unwrap();
    match r.prolong_p1(&[1.0; 5], 1) {
        Err(Error::InvalidArgument {
            name: "coarse",
            reason,
        }) => assert_eq!(
            reason,
            "has 5 entries, expected 4 vertices × 1 components (n_comp ≥ 1)"
        ),
        e => panic!("{e:?}"),
    }
    assert!(r.prolong_p1(&[1.0; 0], 0).is_err());
    assert!(r.restrict_p1(&[1.0f32; 4], 1).is_err());
    // a boundary line that is no edge of a cell
    let mut g = test_mesh("mesh_square.msh");
    let line = g.elements.iter().position(|e| e.dim == 1).unwrap();
    let tag = g.elements[line].tag;
    let shares_a_cell = |a: u32, b: u32| {
        (0..g.mesh.n_cells()).any(|c| g.mesh.cell(c).contains(&a) && g.mesh.cell(c).contains(&b))
    };
    let a = g.mesh.cell(0)[0];
    let b = (0..g.mesh.n_vertices() as u32)
        .find(|&b| !shares_a_cell(a, b))
        .unwrap();
    g.elements[line].vertices = vec![a, b];
    match refine_gmsh(&g) {
        Err(Error::InvalidArgument {
            name: "gmsh",
            reason,
        }) => assert_eq!(
            reason,
            format!("element {tag}: its edge ({a}, {b}) is not an edge of any cell")
        ),
        e => panic!("{e:?}"),
    }
    g.elements[line].vertices = vec![a];
    assert!(refine_gmsh(&g).is_err());
    g.elements.truncate(line);
    g.cell_entities.pop();
    assert!(refine_gmsh(&g).is_err());
}

/// Too many refinements are refused before anything is allocated, with
/// the most that fit on this machine (u32 indices: 8·4^14 triangles fit,
/// 8·4^15 do not; the memory may allow fewer): where 20 levels of a small
/// square ran for minutes until the process was killed.
#[test]
fn too_many_refinements_are_refused_at_once() {
    let square = unit_square(2, &MeshOptions::default()).unwrap();
    let e = refine_uniformly(&square, 20).unwrap_err().to_string();
    let head = "invalid argument `refinements`: 20 refinements of 8 triangles give 8.796e12 \
                triangles; at most ";
    assert!(e.starts_with(head), "{e}");
    let most: usize = e[head.len()..].split(' ').next().unwrap().parse().unwrap();
    assert!((10..=14).contains(&most), "{e}");
    if most == 14 {
        assert!(
            e.ends_with(
                "15 give 8.590e9 triangles, more than the 4294967295 cells a mesh \
                             can number (cell indices are u32)"
            ),
            "{e}"
        );
    } else {
        assert!(e.contains("GiB of memory"), "{e}");
    }
    check_refinements(&square, most).unwrap();
    let next = check_refinements(&square, most + 1)
        .unwrap_err()
        .to_string();
    assert!(next.contains(&format!("at most {most} fit")), "{next}");
}

/// Timing of refinement up to 2²⁴ triangles: one level from 2²², and
/// a two-level hierarchy from 2²⁰ (run in release:
/// `cargo test --release -p femquad --lib timing_to_2_24 -- --ignored --nocapture`).
#[test]
#[ignore]
fn timing_to_2_24_cells() {
    for (log2, levels) in [(22, 1), (20, 2)] {
        let m = mesh_for_cells(2, 1 << log2, &jittered(1, false)).unwrap();
        let (m, _) = m.renumbered_for_locality().unwrap();
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let h = refine_uniformly(&m, levels).unwrap();
            println!(
                "refine_uniformly {} → {} cells ({levels} level(s)), {} threads: {:.2?}",
                m.n_cells(),
                h[levels - 1].mesh().n_cells(),
                rayon::current_num_threads(),
                t.elapsed()
            );
        }
    }
}
