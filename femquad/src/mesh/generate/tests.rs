//! Tests of [`super`].

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
    // sizes beyond u32 indices (or this machine's memory) are refused before
    // anything is allocated, with the largest n that fits
    let (n, r) = name(unit_square(46341, &d));
    assert_eq!(n, "n");
    assert!(
        r.starts_with(
            "46341 intervals per side give 4.295e9 triangles, more than the 4294967295 cells \
             a mesh can number (cell indices are u32); the largest n in 2D on this machine is "
        ),
        "{r}"
    );
    let most: usize = r.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(most <= 46340, "{r}");
    let (n, r) = name(mesh_for_cells(2, 10_000_000_000, &d));
    assert_eq!(n, "target_cells");
    assert!(
        r.starts_with("10000000000 cells: 70711 intervals per side give 1.000e10 triangles"),
        "{r}"
    );
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
