//! Tests of [`super`]: flipped regions are reoriented, tangled meshes refused.

use super::*;
use crate::mesh::{MeshOptions, unit_box};

/// A jittered, shuffled mesh of the unit square or cube, `n` intervals per side.
fn mesh(dim: usize, n: usize) -> Mesh {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 5,
    };
    unit_box(dim, n, &opts).unwrap()
}

/// The centroid of cell `c`.
fn centroid(m: &Mesh, c: usize) -> Vec<f64> {
    let k = m.vertices_per_cell() as f64;
    (0..m.dim())
        .map(|d| {
            m.cell(c)
                .iter()
                .map(|&v| m.vertex(v as usize)[d])
                .sum::<f64>()
                / k
        })
        .collect()
}

/// A mesh written clockwise in a region (the cells whose centroid has
/// `x₀ < 0.4`), or everywhere, is consistently flipped: reorient flips
/// exactly those cells back and gives the original mesh.
#[test]
fn consistently_flipped_regions_are_reoriented() {
    for dim in [2, 3] {
        let m = mesh(dim, 5);
        let k = m.vertices_per_cell();
        for region in [0.4, 2.0] {
            let mut cells = m.cells().to_vec();
            let mut flipped = 0;
            for c in 0..m.n_cells() {
                if centroid(&m, c)[0] < region {
                    cells[c * k..][..k].swap(1, 2);
                    flipped += 1;
                }
            }
            assert!(flipped > 0 && (region > 1.0) == (flipped == m.n_cells()));
            let mut f = Mesh::from_raw(dim, m.vertices().to_vec(), cells).unwrap();
            assert!(f.validate().is_err());
            assert_eq!(f.reorient().unwrap(), flipped, "{dim}D, x0 < {region}");
            assert_eq!(f, m);
        }
    }
}

/// A vertex moved across its neighbours inverts cells that overlap their
/// neighbours: reorient refuses the mesh, naming the smallest such cell,
/// a neighbour it overlaps, their shared facet and every inverted cell, and
/// leaves the mesh unchanged; `Mesh::new` refuses it too, with the hint.
#[test]
fn a_tangled_mesh_is_refused_naming_the_cells() {
    for dim in [2, 3] {
        let m = mesh(dim, 4);
        // the vertex nearest the centre, moved 1.5 h along x₀
        let dist = |v: usize| -> f64 { m.vertex(v).iter().map(|x| (x - 0.5).powi(2)).sum() };
        let centre = (0..m.n_vertices())
            .min_by(|&a, &b| dist(a).total_cmp(&dist(b)))
            .unwrap();
        let mut v = m.vertices().to_vec();
        v[centre * dim] += 1.5 / 4.0;
        let tangled = Mesh::from_raw(dim, v.clone(), m.cells().to_vec()).unwrap();
        let inverted: Vec<usize> = (0..m.n_cells())
            .filter(|&c| tangled.det_j(c) < 0.0)
            .collect();
        assert!(!inverted.is_empty(), "{dim}D");
        let mut t = tangled.clone();
        let (cell, reason) = match t.reorient() {
            Err(Error::InvalidCell { cell, reason }) => (cell, reason),
            other => panic!("{dim}D: {other:?}"),
        };
        assert_eq!(t, tangled, "{dim}D: the mesh is left unchanged");
        assert_eq!(cell, inverted[0], "{dim}D");
        assert!(
            reason.starts_with(&format!(
                "negatively oriented (det J = {}) and overlapping its neighbour, cell ",
                super::super::num(tangled.det_j(cell))
            )),
            "{reason}"
        );
        // every inverted cell overlaps a neighbour here (each has the moved
        // vertex, on the wrong side of its opposite facet), and all are named
        let listed = reason
            .split(": cells ")
            .nth(1)
            .or_else(|| reason.split(": cell ").last())
            .unwrap()
            .split(')')
            .next()
            .unwrap();
        let mut want: Vec<String> = inverted.iter().take(10).map(|c| c.to_string()).collect();
        if inverted.len() > 10 {
            want.push("…".into());
        }
        assert_eq!(listed, want.join(", "), "{dim}D: {reason}");
        assert!(reason.contains("so the mesh is tangled"), "{reason}");
        assert!(reason.ends_with("move the misplaced vertices"), "{reason}");
        // the checked constructor refuses the same cell, saying what to do
        match Mesh::new(dim, v, m.cells().to_vec()) {
            Err(Error::InvalidCell { cell: c, reason }) => {
                assert_eq!(c, cell);
                assert!(
                    reason.contains("Mesh::reorient flips its cells"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

/// Two copies of one cell, one written clockwise: the flipped copy lies on
/// the same side of every facet as the other — overlapping cells, refused.
#[test]
fn a_flipped_duplicate_cell_is_refused() {
    let v = vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.];
    let mut m = Mesh::from_raw(3, v, vec![0, 1, 2, 3, 0, 2, 1, 3]).unwrap();
    let e = m.reorient().unwrap_err().to_string();
    assert!(
        e.starts_with(
            "invalid mesh: cell 1: negatively oriented (det J = -1) and overlapping its \
             neighbour, cell 0: the two lie on the same side of their shared face (vertices 0, \
             1, 2)"
        ),
        "{e}"
    );
}
