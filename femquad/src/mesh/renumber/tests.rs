//! Tests of [`super`].

use super::hilbert::hilbert_index;
use super::*;
use crate::mesh::edges::mesh_edges;
use crate::mesh::generate::{MeshOptions, mesh_for_cells, unit_cube, unit_square};

fn jittered_shuffled(seed: u64) -> MeshOptions {
    MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed,
    }
}

/// A shuffled jittered square (2·64² cells) and cube (6·12³ cells).
fn meshes() -> [Mesh; 2] {
    [
        unit_square(64, &jittered_shuffled(1)).unwrap(),
        unit_cube(12, &jittered_shuffled(2)).unwrap(),
    ]
}

fn is_permutation(p: &[u32]) -> bool {
    let mut s = p.to_vec();
    s.sort_unstable();
    s.iter().enumerate().all(|(i, &v)| v as usize == i)
}

/// Grid points sorted by Hilbert index: the indices are `0..4^b` (`8^b`)
/// and consecutive points are face neighbours (one coordinate ±1).
#[test]
fn hilbert_index_walks_the_grid_by_face_neighbours() {
    fn check<const D: usize>(bits: u32) {
        let side = 1u32 << bits;
        let n = (side as usize).pow(D as u32);
        let mut points: Vec<(u64, [u32; D])> = (0..n)
            .map(|i| {
                let x: [u32; D] = std::array::from_fn(|d| (i as u32 >> (bits * d as u32)) % side);
                (hilbert_index(x, bits), x)
            })
            .collect();
        points.sort();
        for (i, (h, _)) in points.iter().enumerate() {
            assert_eq!(*h, i as u64);
        }
        assert_eq!(points[0].1, [0; D]);
        for w in points.windows(2) {
            let dist: u32 = (0..D).map(|d| w[0].1[d].abs_diff(w[1].1[d])).sum();
            assert_eq!(dist, 1, "{:?} → {:?}", w[0], w[1]);
        }
    }
    check::<2>(1);
    check::<2>(5);
    check::<3>(1);
    check::<3>(4);
}

#[test]
fn renumbered_mesh_has_the_same_cells_and_volume() {
    for m in meshes() {
        let (new, r) = m.renumbered_for_locality().unwrap();
        new.validate().unwrap();
        assert_eq!(r.n_vertices(), m.n_vertices());
        assert_eq!(r.n_cells(), m.n_cells());
        for p in [
            r.vertex_new_of_old(),
            r.vertex_old_of_new(),
            r.cell_new_of_old(),
            r.cell_old_of_new(),
        ] {
            assert!(is_permutation(p));
        }
        for (v, &nv) in r.vertex_new_of_old().iter().enumerate() {
            assert_eq!(r.vertex_old_of_new()[nv as usize] as usize, v);
            assert_eq!(new.vertex(nv as usize), m.vertex(v));
        }
        for (c, &nc) in r.cell_new_of_old().iter().enumerate() {
            assert_eq!(r.cell_old_of_new()[nc as usize] as usize, c);
            // same points in the same local order: the same det J, bit for bit
            let old_points: Vec<&[f64]> = m.cell(c).iter().map(|&v| m.vertex(v as usize)).collect();
            let new_points: Vec<&[f64]> = new
                .cell(nc as usize)
                .iter()
                .map(|&v| new.vertex(v as usize))
                .collect();
            assert_eq!(old_points, new_points);
            assert_eq!(new.det_j(nc as usize), m.det_j(c));
        }
        let (a, b) = (m.total_volume(), new.total_volume());
        assert!(
            (a - 1.0).abs() < 1e-12 && (b - 1.0).abs() < 1e-12,
            "{a} {b}"
        );
        // P2 edge count unchanged (the edges are relabelled, not changed)
        assert_eq!(
            mesh_edges(&m).unwrap().n_edges(),
            mesh_edges(&new).unwrap().n_edges()
        );
    }
}

#[test]
fn locality_improves_by_large_factors() {
    for m in [
        unit_square(128, &jittered_shuffled(4)).unwrap(),
        unit_cube(20, &jittered_shuffled(5)).unwrap(),
    ] {
        let before = locality_metrics(&m).unwrap();
        let (new, _) = m.renumbered_for_locality().unwrap();
        let after = locality_metrics(&new).unwrap();
        // measured factors: 2D 54, 40, 54, 14.5; 3D 11.7, 3.0, 13, 12.2
        let want = if m.dim() == 2 {
            [40.0, 30.0, 40.0, 12.0]
        } else {
            [10.0, 2.5, 10.0, 10.0]
        };
        let got = [
            before.mean_span / after.mean_span,
            f64::from(before.p95_span) / f64::from(after.p95_span),
            before.mean_jump / after.mean_jump,
            before.warp_sectors_per_cell / after.warp_sectors_per_cell,
        ];
        for (g, w) in got.iter().zip(want) {
            assert!(*g >= w, "{}D: factors {got:?}, want {want:?}", m.dim());
        }
        // a warp's gather: 0.20 (2D) and 0.31 (3D) sectors per cell,
        // against ≈ dim + 1 − ε when shuffled
        let bound = if m.dim() == 2 { 0.21 } else { 0.32 };
        assert!(after.warp_sectors_per_cell < bound, "{after:?}");
    }
}

#[test]
fn boundary_vertices_map_to_boundary_vertices() {
    for m in meshes() {
        let (new, r) = m.renumbered_for_locality().unwrap();
        let (bo, bn) = (
            m.boundary_vertices().unwrap(),
            new.boundary_vertices().unwrap(),
        );
        assert_eq!(
            bo.iter().filter(|&&b| b).count(),
            bn.iter().filter(|&&b| b).count()
        );
        for (v, &on) in bo.iter().enumerate() {
            assert_eq!(bn[r.vertex_new_of_old()[v] as usize], on, "vertex {v}");
        }
        assert_eq!(
            m.boundary_facets().unwrap().len(),
            new.boundary_facets().unwrap().len()
        );
    }
}

#[test]
fn same_result_on_any_thread_count() {
    // large enough for several parallel blocks and first-touch chunks
    let m = unit_square(300, &jittered_shuffled(3)).unwrap();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let r = locality_renumbering(&m).unwrap();
                let metrics = locality_metrics(&r.apply(&m).unwrap()).unwrap();
                (r, metrics)
            })
    };
    let one = run(1);
    assert_eq!(one, run(3));
    assert_eq!(one, run(4));
}

#[test]
fn data_moves_across_and_back() {
    let m = &meshes()[1];
    let (new, r) = m.renumbered_for_locality().unwrap();
    // vertex data: the coordinates themselves, 3 components
    let x = r.vertex_data_to_new(m.vertices(), 3).unwrap();
    assert_eq!(x, new.vertices());
    assert_eq!(r.vertex_data_to_old(&x, 3).unwrap(), m.vertices());
    // cell data: det J per cell
    let det: Vec<f64> = (0..m.n_cells()).map(|c| m.det_j(c)).collect();
    let det_new = r.cell_data_to_new(&det, 1).unwrap();
    for (c, &d) in det_new.iter().enumerate() {
        assert_eq!(d, new.det_j(c));
    }
    assert_eq!(r.cell_data_to_old(&det_new, 1).unwrap(), det);
    // the inverse renumbering maps the new mesh back
    assert_eq!(&r.inverse().apply(&new).unwrap(), m);
    let again = Renumbering::from_permutations(
        r.vertex_new_of_old().to_vec(),
        r.cell_new_of_old().to_vec(),
    )
    .unwrap();
    assert_eq!(again, r);
}

#[test]
fn unused_vertices_come_last() {
    // vertex 0 and 4 are used by no cell
    let m = Mesh::new(
        2,
        vec![9.0, 9.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 7.0, 7.0, 1.0, 1.0],
        vec![1, 2, 3, 2, 5, 3],
    )
    .unwrap();
    let r = locality_renumbering(&m).unwrap();
    assert_eq!(&r.vertex_old_of_new()[4..], &[0, 4]);
    let first = r.cell_old_of_new()[0] as usize;
    // the first new cell numbers its vertices 0, 1, 2 in local order
    let new = r.apply(&m).unwrap();
    assert_eq!(new.cell(0), &[0, 1, 2]);
    assert_eq!(new.vertex(0), m.vertex(m.cell(first)[0] as usize));
    let empty = Mesh::new(3, vec![], vec![]).unwrap();
    let r = locality_renumbering(&empty).unwrap();
    assert_eq!((r.n_vertices(), r.n_cells()), (0, 0));
}

#[test]
fn bad_input_is_reported() {
    let m = unit_square(2, &MeshOptions::default()).unwrap();
    let r = locality_renumbering(&m).unwrap();
    let other = unit_square(3, &MeshOptions::default()).unwrap();
    match r.apply(&other) {
        Err(Error::InvalidArgument {
            name: "mesh",
            reason,
        }) => assert_eq!(
            reason,
            "it has 16 vertices and 18 cells; the renumbering is for 9 and 8"
        ),
        e => panic!("{e:?}"),
    }
    assert!(matches!(
        r.vertex_data_to_new(&[0.0; 10], 1),
        Err(Error::InvalidArgument { name: "old", .. })
    ));
    assert!(matches!(
        r.cell_data_to_old(&[0.0; 16], 0),
        Err(Error::InvalidArgument { name: "new", .. })
    ));
    match Renumbering::from_permutations(vec![0, 2, 2], vec![]) {
        Err(Error::InvalidArgument { name, reason }) => {
            assert_eq!(name, "vertex_new_of_old");
            assert_eq!(reason, "entry 2 repeats the value 2 (not a permutation)");
        }
        e => panic!("{e:?}"),
    }
    match Renumbering::from_cell_order(&m, vec![0, 1, 2, 3, 4, 5, 6, 8]) {
        Err(Error::InvalidArgument { name, reason }) => {
            assert_eq!(name, "cell_old_of_new");
            assert_eq!(reason, "entry 7 is 8, out of range (a permutation of 0..8)");
        }
        e => panic!("{e:?}"),
    }
    let mut x = m.vertices().to_vec();
    x[9] = f64::NAN;
    let nan = Mesh::from_raw(2, x, m.cells().to_vec()).unwrap();
    match locality_renumbering(&nan) {
        Err(Error::InvalidMesh(reason)) => assert!(
            reason.starts_with("vertex 4 has a non-finite coordinate (y = NaN)"),
            "{reason}"
        ),
        e => panic!("{e:?}"),
    }
    let out = Mesh::from_raw(2, vec![0.0; 6], vec![0, 1, 2, 0, 3, 1]).unwrap();
    match locality_renumbering(&out) {
        Err(Error::InvalidCell { cell, reason }) => {
            assert_eq!(cell, 1);
            assert_eq!(
                reason,
                "vertex index 3 (local vertex 1) is out of range (3 vertices)"
            );
        }
        e => panic!("{e:?}"),
    }
}

/// The comparison of the module documentation: locality of Hilbert,
/// Morton and reverse Cuthill–McKee orders on shuffled meshes (run in
/// release: `cargo test --release -p femquad --lib compare_orders --
/// --ignored --nocapture`).
#[test]
#[ignore]
fn compare_orders() {
    /// Cells by Morton (Z-order) index of their centroids.
    fn morton_order(m: &Mesh) -> Vec<u32> {
        let (dim, k, bits) = (m.dim(), m.vertices_per_cell(), 20);
        let mut keys: Vec<(u64, u32)> = (0..m.n_cells())
            .map(|c| {
                let mut h = 0u64;
                let q: Vec<u32> = (0..dim)
                    .map(|d| {
                        let x: f64 = m.cell(c).iter().map(|&v| m.vertex(v as usize)[d]).sum();
                        ((x / k as f64 * f64::from(1u32 << bits)) as u32).min((1 << bits) - 1)
                    })
                    .collect();
                for b in (0..bits).rev() {
                    for qd in &q {
                        h = (h << 1) | u64::from((qd >> b) & 1);
                    }
                }
                (h, c as u32)
            })
            .collect();
        keys.sort_unstable();
        keys.iter().map(|&(_, c)| c).collect()
    }
    /// Reverse Cuthill–McKee on the vertex graph (from a pseudo-peripheral
    /// vertex: the last of two breadth-first searches from a vertex of
    /// least degree; neighbours by increasing degree), then cells by
    /// (smallest, largest) new vertex.
    fn rcm(m: &Mesh) -> Renumbering {
        let nv = m.n_vertices();
        let edges = mesh_edges(m).unwrap();
        let mut adj = vec![Vec::new(); nv];
        for &[a, b] in edges.endpoints() {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        let bfs = |start: usize| {
            let mut seen = vec![false; nv];
            let mut order = vec![start as u32];
            seen[start] = true;
            let mut head = 0;
            while head < order.len() {
                let v = order[head] as usize;
                head += 1;
                let mut next: Vec<u32> = adj[v]
                    .iter()
                    .copied()
                    .filter(|&w| !seen[w as usize])
                    .collect();
                next.sort_by_key(|&w| (adj[w as usize].len(), w));
                for w in next {
                    seen[w as usize] = true;
                    order.push(w);
                }
            }
            order
        };
        let mut start = (0..nv).min_by_key(|&v| (adj[v].len(), v)).unwrap();
        for _ in 0..2 {
            start = *bfs(start).last().unwrap() as usize;
        }
        let mut order = bfs(start);
        assert_eq!(order.len(), nv, "connected mesh");
        order.reverse();
        let new_of_old = invert(&order);
        let mut cells: Vec<(u32, u32, u32)> = (0..m.n_cells())
            .map(|c| {
                let v = m.cell(c).iter().map(|&v| new_of_old[v as usize]);
                (v.clone().min().unwrap(), v.max().unwrap(), c as u32)
            })
            .collect();
        cells.sort_unstable();
        let cell_old_of_new: Vec<u32> = cells.iter().map(|t| t.2).collect();
        Renumbering::from_permutations(new_of_old, invert(&cell_old_of_new)).unwrap()
    }
    let row = |name: &str, m: &Mesh, secs: f64| {
        let l = locality_metrics(m).unwrap();
        println!(
            "| {name} | {:.0} | {} | {:.0} | {:.3} | {secs:.2} s |",
            l.mean_span, l.p95_span, l.mean_jump, l.warp_sectors_per_cell
        );
    };
    let opts = jittered_shuffled(1);
    for m in [
        mesh_for_cells(2, 1 << 22, &opts).unwrap(),
        unit_cube(88, &opts).unwrap(),
    ] {
        println!(
            "{}D, {} cells, {} threads",
            m.dim(),
            m.n_cells(),
            rayon::current_num_threads()
        );
        row("shuffled", &m, 0.0);
        let t = std::time::Instant::now();
        let r = rcm(&m);
        let secs = t.elapsed().as_secs_f64();
        row("RCM", &r.apply(&m).unwrap(), secs);
        let t = std::time::Instant::now();
        let r = Renumbering::from_cell_order(&m, morton_order(&m)).unwrap();
        let secs = t.elapsed().as_secs_f64();
        row("Morton", &r.apply(&m).unwrap(), secs);
        let t = std::time::Instant::now();
        let r = locality_renumbering(&m).unwrap();
        let secs = t.elapsed().as_secs_f64();
        row("Hilbert", &r.apply(&m).unwrap(), secs);
    }
}

/// Timing at 2²² cells, or `2^FEMQUAD_LOG2_CELLS` (run in release:
/// `cargo test --release -p femquad --lib timing_2_22_cells -- --ignored --nocapture`).
#[test]
#[ignore]
fn timing_2_22_cells() {
    let log2 = std::env::var("FEMQUAD_LOG2_CELLS").map_or(22, |s| s.parse().unwrap());
    let m = mesh_for_cells(2, 1 << log2, &jittered_shuffled(1)).unwrap();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let r = locality_renumbering(&m).unwrap();
        let t_renumber = t.elapsed();
        let t = std::time::Instant::now();
        let new = r.apply(&m).unwrap();
        println!(
            "{} cells, {} threads: locality_renumbering {t_renumber:.2?}, apply {:.2?}",
            m.n_cells(),
            rayon::current_num_threads(),
            t.elapsed()
        );
        std::hint::black_box(new);
    }
}
