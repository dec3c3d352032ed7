//! Tests of [`super`].

use super::*;

/// Two triangles of the unit square, positively oriented.
fn two_triangles() -> (Vec<f64>, Vec<u32>) {
    (
        vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
        vec![0, 1, 2, 0, 2, 3],
    )
}

fn cell_error(r: Result<Mesh>) -> (usize, String) {
    match r {
        Err(Error::InvalidCell { cell, reason }) => (cell, reason),
        other => panic!("expected InvalidCell, got {other:?}"),
    }
}

#[test]
fn valid_mesh_and_measures() {
    let (v, c) = two_triangles();
    let m = Mesh::new(2, v, c).unwrap();
    assert_eq!(m.n_cells(), 2);
    assert_eq!(m.det_j(0), 1.0);
    assert_eq!(m.cell_volume(1), 0.5);
    assert_eq!(m.cell_diameter(0), 2f64.sqrt());
    assert_eq!(m.h_max(), 2f64.sqrt());
    assert_eq!(m.total_volume(), 1.0);
    // the reference tetrahedron: det J = 1, volume 1/6
    let t = Mesh::new(
        3,
        vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.],
        vec![0, 1, 2, 3],
    )
    .unwrap();
    assert_eq!(t.det_j(0), 1.0);
    assert_eq!(t.cell_volume(0), 1.0 / 6.0);
}

#[test]
fn rejects_out_of_range_index() {
    let (v, mut c) = two_triangles();
    c[4] = 99;
    let (cell, reason) = cell_error(Mesh::new(2, v, c));
    assert_eq!(cell, 1);
    assert_eq!(
        reason,
        "vertex index 99 (local vertex 1) is out of range (4 vertices)"
    );
}

#[test]
fn rejects_repeated_vertex() {
    let (v, mut c) = two_triangles();
    c[2] = 0;
    let (cell, reason) = cell_error(Mesh::new(2, v, c));
    assert_eq!(cell, 0);
    assert_eq!(reason, "vertex 0 is repeated");
}

#[test]
fn rejects_inverted_cell_and_reorient_fixes_it() {
    let (v, mut c) = two_triangles();
    c.swap(4, 5); // cell 1 = (0, 3, 2): det J = -1, consistently flipped
    let (cell, reason) = cell_error(Mesh::new(2, v.clone(), c.clone()));
    assert_eq!(cell, 1);
    assert_eq!(
        reason,
        "negatively oriented (det J = -1); if the mesh, or a region of it, is written \
         clockwise, Mesh::reorient flips its cells (it refuses a tangled mesh)"
    );
    let mut m = Mesh::from_raw(2, v, c).unwrap();
    assert_eq!(m.reorient().unwrap(), 1);
    assert_eq!(m.cell(1), &[0, 2, 3]);
    assert_eq!(m.reorient().unwrap(), 0);
    m.validate().unwrap();
}

#[test]
fn reorients_tetrahedra_and_counts() {
    // the reference tet written clockwise, and its mirror image across
    // z = 0: neighbours across the face (0, 1, 2), one on each side of it
    let v = vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., -1.];
    let c = vec![0, 2, 1, 3, 0, 1, 2, 4];
    let mut m = Mesh::from_raw(3, v, c).unwrap();
    assert_eq!(cell_error(m.validate().map(|_| m.clone())).0, 0);
    assert_eq!(m.reorient().unwrap(), 2);
    m.validate().unwrap();
    for c in 0..2 {
        assert_eq!(m.det_j(c), 1.0);
    }
}

#[test]
fn rejects_degenerate_cell_and_reorient_refuses_it_too() {
    // cell 1 has three collinear vertices
    let v = vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 2.0, 0.0];
    let c = vec![0, 1, 2, 0, 1, 3];
    let (cell, reason) = cell_error(Mesh::new(2, v.clone(), c.clone()));
    assert_eq!(cell, 1);
    assert_eq!(
        reason,
        "degenerate (det J = 0, below 1e-12·h^2 = 4e-12 for its longest edge h = 2)"
    );
    // nearly degenerate at scale 1e-3: det J = 1e-21 ≪ 1e-12·(1e-3)²
    let s = 1e-3;
    let v = vec![0.0, 0.0, s, 0.0, 0.5 * s, 1e-18];
    let (cell, reason) = cell_error(Mesh::new(2, v.clone(), vec![0, 1, 2]));
    assert_eq!(cell, 0);
    assert!(reason.starts_with("degenerate (det J = "), "{reason}");
    // but a tiny well-shaped cell is fine: the tolerance is relative
    Mesh::new(2, vec![0.0, 0.0, s, 0.0, 0.0, s], vec![0, 1, 2]).unwrap();
    // a degenerate cell written clockwise: reorient names it, unchanged
    let mut m = Mesh::from_raw(2, v, vec![0, 2, 1]).unwrap();
    let before = m.clone();
    let (cell, reason) = cell_error(m.reorient().map(|_| m.clone()));
    assert_eq!(cell, 0);
    assert!(reason.starts_with("degenerate (det J = "), "{reason}");
    assert_eq!(m, before);
}

#[test]
fn rejects_non_finite_coordinates() {
    let (mut v, c) = two_triangles();
    v[7] = f64::NAN; // y of vertex 3, used by cell 1 only
    let (cell, reason) = cell_error(Mesh::new(2, v, c));
    assert_eq!(cell, 1);
    assert_eq!(reason, "vertex 3 has a non-finite coordinate (y = NaN)");
    // an unused vertex with an infinite coordinate
    let (mut v, c) = two_triangles();
    v.extend([f64::INFINITY, 0.0]);
    match Mesh::new(2, v, c) {
        Err(Error::InvalidMesh(m)) => assert_eq!(
            m,
            "vertex 4 (used by no cell) has a non-finite coordinate (x = inf)"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn reports_the_smallest_bad_cell() {
    // 20000 copies of the two triangles; cells 7001 and 30001 are inverted
    let (v, c) = two_triangles();
    let mut cells: Vec<u32> = c.iter().cycle().take(6 * 20000).copied().collect();
    for bad in [30001usize, 7001] {
        cells.swap(bad * 3 + 1, bad * 3 + 2);
    }
    for _ in 0..3 {
        let (cell, _) = cell_error(Mesh::new(2, v.clone(), cells.clone()));
        assert_eq!(cell, 7001);
    }
}

#[test]
fn from_raw_checks_shapes() {
    assert!(matches!(
        Mesh::from_raw(4, vec![], vec![]),
        Err(Error::InvalidMesh(_))
    ));
    assert!(matches!(
        Mesh::from_raw(2, vec![0.0; 3], vec![]),
        Err(Error::InvalidMesh(_))
    ));
    assert!(matches!(
        Mesh::from_raw(3, vec![0.0; 3], vec![0; 5]),
        Err(Error::InvalidMesh(_))
    ));
}

#[test]
fn boundary_of_two_triangles() {
    let (v, c) = two_triangles();
    let m = Mesh::new(2, v, c).unwrap();
    let b = m.boundary_facets().unwrap();
    // the diagonal (0, 2) is interior; the four sides are boundary,
    // each oriented counterclockwise around the square
    let edges: Vec<_> = b
        .iter()
        .map(|f| (f.cell, f.local, f.vertex_slice()))
        .collect();
    assert_eq!(
        edges,
        vec![
            (0, 0, &[1u32, 2][..]),
            (0, 2, &[0, 1][..]),
            (1, 0, &[2, 3][..]),
            (1, 1, &[3, 0][..]),
        ]
    );
    assert_eq!(m.boundary_vertices().unwrap(), vec![true; 4]);
}

#[test]
fn boundary_facets_of_a_tetrahedron_point_outwards() {
    let m = Mesh::new(
        3,
        vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.],
        vec![0, 1, 2, 3],
    )
    .unwrap();
    let b = m.boundary_facets().unwrap();
    assert_eq!(b.len(), 4);
    let centroid = [0.25, 0.25, 0.25];
    for f in &b {
        let p: Vec<&[f64]> = f.vertices.iter().map(|&v| m.vertex(v as usize)).collect();
        let d = |i: usize| [0, 1, 2].map(|k| p[i][k] - p[0][k]);
        let (a, bb) = (d(1), d(2));
        let n = [
            a[1] * bb[2] - a[2] * bb[1],
            a[2] * bb[0] - a[0] * bb[2],
            a[0] * bb[1] - a[1] * bb[0],
        ];
        let out: f64 = (0..3).map(|k| n[k] * (p[0][k] - centroid[k])).sum();
        assert!(out > 0.0, "facet {f:?} points inwards");
        // the facet misses exactly its opposite vertex
        assert!(!f.vertices.contains(&(f.local as u32)));
    }
}

#[test]
fn non_manifold_is_an_error() {
    // three triangles sharing the edge (0, 1)
    let v = vec![0.0, 0.0, 1.0, 0.0, 0.5, 1.0, 0.5, -1.0, 0.5, 2.0];
    let c = vec![0, 1, 2, 1, 0, 3, 0, 1, 4];
    let m = Mesh::new(2, v, c).unwrap();
    let (cell, reason) = cell_error(m.boundary_facets().map(|_| m.clone()));
    assert_eq!(cell, 0);
    assert_eq!(
        reason,
        "non-manifold mesh: its facet 2 (vertices [0, 1]) is shared by more than two cells"
    );
}

#[test]
fn boundary_detects_bad_indices_without_panicking() {
    let m = Mesh::from_raw(2, vec![0.0; 6], vec![0, 1, 7]).unwrap();
    assert_eq!(cell_error(m.boundary_facets().map(|_| m.clone())).0, 0);
}

#[test]
fn key_bits() {
    assert_eq!(bits_for(0), 1);
    assert_eq!(bits_for(1), 1);
    assert_eq!(bits_for(2), 1);
    assert_eq!(bits_for(3), 2);
    assert_eq!(bits_for(1 << 20), 20);
    assert_eq!(bits_for((1 << 20) + 1), 21);
}

/// The block-wise searches name the first bad cell or vertex of the whole
/// mesh, also past the first block of [`BLOCK`] cells: the cell-index
/// checks of `mesh_edges` and `prepare_for_refinement`, and `validate`'s
/// non-finite unused vertex (`FunctionSpace::new`'s: the space tests).
#[test]
fn checks_name_the_first_defect_past_the_first_block() {
    let square = generate::unit_square(64, &generate::MeshOptions::default()).unwrap();
    assert!(square.n_cells() > 7000 && 5000 > BLOCK);
    let mut cells = square.cells().to_vec();
    // cell 5000 repeats a vertex, cell 7000 has one out of range
    cells[3 * 5000 + 1] = cells[3 * 5000];
    cells[3 * 7000 + 2] = u32::MAX;
    let bad = Mesh::from_raw(2, square.vertices().to_vec(), cells).unwrap();
    let cell_of = |e: Error| match e {
        Error::InvalidCell { cell, .. } => cell,
        other => panic!("expected InvalidCell, got {other:?}"),
    };
    assert_eq!(cell_of(edges::mesh_edges(&bad).unwrap_err()), 5000);
    assert_eq!(
        cell_of(refine::prepare_for_refinement(&bad).unwrap_err()),
        5000
    );
    // unused vertices appended, the 50th and 60th of them not finite
    let n = square.n_vertices();
    let mut vertices = square.vertices().to_vec();
    vertices.extend(vec![0.5; 200]);
    vertices[2 * (n + 50) + 1] = f64::NAN;
    vertices[2 * (n + 60)] = f64::INFINITY;
    let unused = Mesh::from_raw(2, vertices, square.cells().to_vec()).unwrap();
    let e = unused.validate().unwrap_err().to_string();
    assert!(
        e.contains(&format!("vertex {} (used by no cell)", n + 50)) && e.contains("y = NaN"),
        "{e}"
    );
}
