//! Tests of [`super`].

use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::layout::simplex_edges;
use crate::rng::Rng;

/// Unit square, `n × n` squares each split into two triangles.
fn square(n: usize) -> Arc<Mesh> {
    let id = |i: usize, j: usize| (j * (n + 1) + i) as u32;
    let mut x = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            x.extend([i as f64 / n as f64, j as f64 / n as f64]);
        }
    }
    let mut c = Vec::new();
    for j in 0..n {
        for i in 0..n {
            c.extend([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            c.extend([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    Arc::new(Mesh::from_raw(2, x, c).unwrap())
}

/// Unit cube, `n³` cubes each split into 6 Kuhn tetrahedra.
fn cube(n: usize) -> Arc<Mesh> {
    let id = |i: usize, j: usize, k: usize| ((k * (n + 1) + j) * (n + 1) + i) as u32;
    let mut x = Vec::new();
    for k in 0..=n {
        for j in 0..=n {
            for i in 0..=n {
                x.extend([i, j, k].map(|v| v as f64 / n as f64));
            }
        }
    }
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut c = Vec::new();
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                for p in perms {
                    let mut v = [i, j, k];
                    c.push(id(v[0], v[1], v[2]));
                    for &axis in &p {
                        v[axis] += 1;
                        c.push(id(v[0], v[1], v[2]));
                    }
                }
            }
        }
    }
    Arc::new(Mesh::from_raw(3, x, c).unwrap())
}

/// Test meshes with their dimension: the helpers above, and the mesh
/// module's generators, plain and shuffled + jittered.
fn meshes() -> Vec<(Arc<Mesh>, usize)> {
    use crate::mesh::generate::{MeshOptions, unit_cube, unit_square};
    let mixed = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 17,
    };
    vec![
        (square(4), 2),
        (cube(2), 3),
        (unit_square(4, &MeshOptions::default()).unwrap().into(), 2),
        (unit_cube(2, &MeshOptions::default()).unwrap().into(), 3),
        (unit_square(5, &mixed).unwrap().into(), 2),
        (unit_cube(3, &mixed).unwrap().into(), 3),
    ]
}

fn two_triangles() -> Arc<Mesh> {
    Mesh::from_raw(
        2,
        vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
        vec![0, 1, 2, 0, 2, 3],
    )
    .unwrap()
    .into()
}

fn p(dim: usize, order: usize) -> Element {
    Element::lagrange(dim, order).unwrap()
}

#[test]
fn two_triangles_p2_numbering() {
    let m = two_triangles();
    let s = FunctionSpace::new(m.clone(), p(2, 2), 1).unwrap();
    assert_eq!(
        (s.n_nodes(), s.n_edges(), s.n_cells(), s.n_basis()),
        (9, 5, 2, 6)
    );
    // edges sorted: (0,1) (0,2) (0,3) (1,2) (2,3) → nodes 4..9
    assert_eq!(s.cell_nodes(0), &[0, 1, 2, 4, 7, 5]);
    assert_eq!(s.cell_nodes(1), &[0, 2, 3, 5, 8, 6]);
    assert_eq!(s.edge(1), Some([0, 2]));
    assert_eq!(s.edge(5), None);
    let x = s.node_coordinates();
    assert_eq!(&x[5 * 2..6 * 2], &[0.5, 0.5]);
    assert_eq!(s.node_multiplicity(), vec![2, 1, 2, 1, 1, 2, 1, 1, 1]);
    let p1 = FunctionSpace::new(m.clone(), p(2, 1), 3).unwrap();
    assert_eq!((p1.n_nodes(), p1.n_dofs(), p1.n_edges()), (4, 12, 0));
    assert_eq!(p1.cell_nodes_all(), m.cells());
}

#[test]
fn one_tetrahedron_p2() {
    let m = Mesh::from_raw(
        3,
        vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.],
        vec![0, 1, 2, 3],
    )
    .unwrap();
    let s = FunctionSpace::new(m.into(), p(3, 2), 1).unwrap();
    assert_eq!(s.n_nodes(), 10);
    // Local node coordinates equal the reference nodes (identity map).
    let x = s.node_coordinates();
    let nodes = p(3, 2).nodes();
    for (b, &n) in s.cell_nodes(0).iter().enumerate() {
        assert_eq!(
            &x[n as usize * 3..n as usize * 3 + 3],
            &nodes[b * 3..b * 3 + 3]
        );
    }
    assert_eq!(s.boundary_nodes().unwrap(), (0..10).collect::<Vec<u32>>());
}

/// Edge nodes sit at the midpoints of the cell's edges; each distinct
/// vertex pair maps to exactly one node; multiplicities are correct.
#[test]
fn shared_edges_share_nodes() {
    for (m, dim) in meshes() {
        let s = FunctionSpace::new(m.clone(), p(dim, 2), 1).unwrap();
        let x = s.node_coordinates();
        let mut pair_node: HashMap<(u32, u32), u32> = HashMap::new();
        let mut pair_count: HashMap<(u32, u32), u32> = HashMap::new();
        for c in 0..m.n_cells() {
            let cell = m.cell(c);
            let nodes = s.cell_nodes(c);
            assert_eq!(&nodes[..dim + 1], cell);
            for (e, &[i, j]) in simplex_edges(dim).iter().enumerate() {
                let key = (cell[i].min(cell[j]), cell[i].max(cell[j]));
                let n = nodes[dim + 1 + e];
                assert_eq!(*pair_node.entry(key).or_insert(n), n);
                *pair_count.entry(key).or_insert(0) += 1;
                for d in 0..dim {
                    let mid = 0.5 * (m.vertex(cell[i] as usize)[d] + m.vertex(cell[j] as usize)[d]);
                    assert_eq!(x[n as usize * dim + d], mid);
                }
            }
        }
        assert_eq!(s.n_edges(), pair_node.len());
        let mut distinct: Vec<u32> = pair_node.values().copied().collect();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), pair_node.len());
        // multiplicity: vertices from the mesh, edges from the pair counts
        let mult = s.node_multiplicity();
        let mut vcount = vec![0u32; m.n_vertices()];
        for &v in m.cells() {
            vcount[v as usize] += 1;
        }
        assert_eq!(&mult[..m.n_vertices()], &vcount[..]);
        for (key, &n) in &pair_node {
            assert_eq!(mult[n as usize], pair_count[key]);
        }
    }
    // Known counts: square(4): 25 vertices + 56 edges; cube(2): 27 + 98.
    assert_eq!(
        FunctionSpace::new(square(4), p(2, 2), 1).unwrap().n_nodes(),
        81
    );
    assert_eq!(
        FunctionSpace::new(cube(2), p(3, 2), 1).unwrap().n_nodes(),
        125
    );
}

#[test]
fn gather_assemble_round_trip_and_adjointness() {
    let mut rng = Rng::new(9);
    for (m, dim) in meshes() {
        for order in [1, 2] {
            for nc in [1, 2, 3] {
                let s = FunctionSpace::new(m.clone(), p(dim, order), nc).unwrap();
                let w = rng.vec(s.n_dofs(), -1.0, 1.0);
                let mut cl = vec![0.0; s.n_cell_dofs()];
                s.gather(&w, &mut cl).unwrap();
                // gather is E: check entries directly
                for c in 0..s.n_cells() {
                    for (b, &n) in s.cell_nodes(c).iter().enumerate() {
                        for k in 0..nc {
                            assert_eq!(
                                cl[cell_dof(c, b, k, s.n_basis(), nc)],
                                w[n as usize * nc + k]
                            );
                        }
                    }
                }
                let mut back = vec![7.0; s.n_dofs()];
                s.assemble(&cl, &mut back).unwrap();
                let mult = s.node_multiplicity();
                for i in 0..s.n_dofs() {
                    let want = mult[i / nc] as f64 * w[i];
                    assert!(
                        (back[i] - want).abs() < 1e-14 * want.abs().max(1.0),
                        "dim {dim} P{order} nc {nc} dof {i}: {} vs {want}",
                        back[i]
                    );
                }
                // ⟨Eᵀ e, v⟩ = ⟨e, E v⟩
                let e = rng.vec(s.n_cell_dofs(), -1.0, 1.0);
                let v = rng.vec(s.n_dofs(), -1.0, 1.0);
                let mut ete = vec![0.0; s.n_dofs()];
                s.assemble(&e, &mut ete).unwrap();
                s.gather(&v, &mut cl).unwrap();
                let lhs: f64 = ete.iter().zip(&v).map(|(a, b)| a * b).sum();
                let rhs: f64 = e.iter().zip(&cl).map(|(a, b)| a * b).sum();
                assert!(
                    (lhs - rhs).abs() < 1e-12 * rhs.abs().max(1.0),
                    "{lhs} vs {rhs}"
                );
            }
        }
    }
}

#[test]
fn parallel_assembly_is_bitwise_serial() {
    let m = cube(3);
    for nc in [1, 3] {
        let s = FunctionSpace::new(m.clone(), p(3, 2), nc).unwrap();
        let e = Rng::new(4).vec(s.n_cell_dofs(), -1.0, 1.0);
        let (mut a, mut b) = (vec![0.0; s.n_dofs()], vec![1.0; s.n_dofs()]);
        s.assemble_serial(&e, &mut a);
        s.assemble_pull(s.incidence().unwrap(), &e, &mut b);
        assert_eq!(a, b);
        let e32: Vec<f32> = e.iter().map(|&v| v as f32).collect();
        let (mut a, mut b) = (vec![0f32; s.n_dofs()], vec![1f32; s.n_dofs()]);
        s.assemble_serial(&e32, &mut a);
        s.assemble_pull(s.incidence().unwrap(), &e32, &mut b);
        assert_eq!(a, b);
        let mut c = vec![0f32; s.n_dofs()];
        s.assemble(&e32, &mut c).unwrap();
        assert_eq!(a, c);
    }
}

#[test]
fn interpolation_of_linear_and_vector_fields() {
    for (m, dim) in meshes() {
        for order in [1, 2] {
            let s = FunctionSpace::new(m.clone(), p(dim, order), 1).unwrap();
            let g = [0.3, -1.7, 2.1];
            let lin = |x: &[f64]| 0.5 + x.iter().zip(&g).map(|(a, b)| a * b).sum::<f64>();
            let u = s.interpolate(|x, out| out[0] = lin(x));
            for (v, &uv) in u[..m.n_vertices()].iter().enumerate() {
                assert_eq!(uv, lin(m.vertex(v)));
            }
            for k in 0..s.n_edges() {
                let [a, b] = s.edge(k).unwrap();
                let want = 0.5 * (u[a as usize] + u[b as usize]);
                assert!((u[s.n_vertices() + k] - want).abs() < 1e-14);
            }
            // Vector field, 2 components, interleaved node-major.
            let s2 = FunctionSpace::new(m.clone(), p(dim, order), 2).unwrap();
            let w = s2.interpolate(|x, out| {
                out[0] = x[0];
                out[1] = 10.0 + x[dim - 1];
            });
            let x = s2.node_coordinates();
            assert_eq!(w.len(), 2 * s2.n_nodes());
            for n in 0..s2.n_nodes() {
                assert_eq!(w[2 * n], x[n * dim]);
                assert_eq!(w[2 * n + 1], 10.0 + x[n * dim + dim - 1]);
            }
        }
    }
}

/// `dof_coordinates` puts dof `node·N_comp + comp` at its node: for a
/// scalar space the node coordinates, for a vector space each node's point
/// repeated once per component (dofs interleaved node-major).
#[test]
fn dof_coordinates_place_every_component_at_its_node() {
    let m = two_triangles();
    // scalar P1: the vertices
    let s = FunctionSpace::new(m.clone(), p(2, 1), 1).unwrap();
    assert_eq!(s.dof_coordinates(), m.vertices());
    // scalar P2: the vertices, then the midpoints of the edges
    // (0,1) (0,2) (0,3) (1,2) (2,3)
    let s = FunctionSpace::new(m.clone(), p(2, 2), 1).unwrap();
    #[rustfmt::skip]
    let p2 = [
        0.0, 0.0,  1.0, 0.0,  1.0, 1.0,  0.0, 1.0,
        0.5, 0.0,  0.5, 0.5,  0.0, 0.5,  1.0, 0.5,  0.5, 1.0,
    ];
    assert_eq!(s.dof_coordinates(), p2);
    // vector P1 with 3 components (N_comp ≠ dim): dofs 3v, 3v+1, 3v+2 at vertex v
    let s = FunctionSpace::new(m.clone(), p(2, 1), 3).unwrap();
    #[rustfmt::skip]
    let p1x3 = [
        0.0, 0.0,  0.0, 0.0,  0.0, 0.0,
        1.0, 0.0,  1.0, 0.0,  1.0, 0.0,
        1.0, 1.0,  1.0, 1.0,  1.0, 1.0,
        0.0, 1.0,  0.0, 1.0,  0.0, 1.0,
    ];
    assert_eq!(s.dof_coordinates(), p1x3);
    // vector P2 with 2 components: node n's point at dofs 2n and 2n + 1
    let s = FunctionSpace::new(m.clone(), p(2, 2), 2).unwrap();
    let x = s.dof_coordinates();
    assert_eq!(x.len(), s.n_dofs() * 2);
    for (node, point) in p2.chunks(2).enumerate() {
        assert_eq!(&x[4 * node..4 * node + 4], [point, point].concat());
    }
    // every mesh, order and component count: consistent with node_coordinates
    for (m, dim) in meshes() {
        for order in [1, 2] {
            for nc in 1..=3 {
                let s = FunctionSpace::new(m.clone(), p(dim, order), nc).unwrap();
                let (xn, xd) = (s.node_coordinates(), s.dof_coordinates());
                assert_eq!(xd.len(), s.n_dofs() * dim);
                for node in 0..s.n_nodes() {
                    for c in 0..nc {
                        let dof = node * nc + c;
                        assert_eq!(
                            &xd[dof * dim..(dof + 1) * dim],
                            &xn[node * dim..(node + 1) * dim],
                            "{dim}D P{order}, {nc} components, dof {dof}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn boundary_nodes_lie_on_the_boundary() {
    for (m, dim) in meshes() {
        for order in [1, 2] {
            let s = FunctionSpace::new(m.clone(), p(dim, order), 1).unwrap();
            let x = s.node_coordinates();
            let want: Vec<u32> = (0..s.n_nodes() as u32)
                .filter(|&n| {
                    x[n as usize * dim..(n as usize + 1) * dim]
                        .iter()
                        .any(|&c| c == 0.0 || c == 1.0)
                })
                .collect();
            assert_eq!(s.boundary_nodes().unwrap(), want, "dim {dim} P{order}");
            let s3 = FunctionSpace::new(m.clone(), p(dim, order), 3).unwrap();
            let dofs = s3.boundary_dofs().unwrap();
            assert_eq!(dofs.len(), 3 * want.len());
            for (i, &n) in want.iter().enumerate() {
                assert_eq!(&dofs[3 * i..3 * i + 3], &[3 * n, 3 * n + 1, 3 * n + 2]);
            }
        }
    }
    // square(4): 16 boundary vertices, + 16 boundary edges for P2
    let m = square(4);
    assert_eq!(
        FunctionSpace::new(m.clone(), p(2, 1), 1)
            .unwrap()
            .boundary_nodes()
            .unwrap()
            .len(),
        16
    );
    assert_eq!(
        FunctionSpace::new(m.clone(), p(2, 2), 1)
            .unwrap()
            .boundary_nodes()
            .unwrap()
            .len(),
        32
    );
}

#[test]
fn construction_is_deterministic() {
    let m = cube(2);
    let a = FunctionSpace::new(m.clone(), p(3, 2), 1).unwrap();
    let b = FunctionSpace::new(m.clone(), p(3, 2), 1).unwrap();
    assert_eq!(a.cell_nodes_all(), b.cell_nodes_all());
}

#[test]
fn rejects_bad_input() {
    let m = two_triangles();
    assert!(matches!(
        FunctionSpace::new(m.clone(), p(2, 1), 0),
        Err(Error::InvalidArgument { name: "n_comp", .. })
    ));
    assert!(matches!(
        FunctionSpace::new(m.clone(), p(3, 1), 1),
        Err(Error::InvalidArgument {
            name: "element",
            ..
        })
    ));
    let bad = Mesh::from_raw(2, vec![0.0; 6], vec![0, 1, 3]).unwrap();
    assert!(matches!(
        FunctionSpace::new(bad.into(), p(2, 2), 1),
        Err(Error::InvalidCell { cell: 0, .. })
    ));
    let bad = Mesh::from_raw(2, vec![0.0; 6], vec![0, 1, 2, 0, 2, 2]).unwrap();
    assert!(matches!(
        FunctionSpace::new(bad.into(), p(2, 1), 1),
        Err(Error::InvalidCell { cell: 1, .. })
    ));
    let s = FunctionSpace::new(m.clone(), p(2, 2), 2).unwrap();
    let mut cl = vec![0.0; s.n_cell_dofs()];
    assert!(s.gather(&[0.0; 3], &mut cl).is_err());
    assert!(s.gather(&vec![0.0; s.n_dofs()], &mut cl[1..]).is_err());
    let mut g = vec![0.0; s.n_dofs()];
    assert!(s.assemble(&cl[1..], &mut g).is_err());
    assert!(s.assemble(&cl, &mut g[1..]).is_err());
}

/// One copy of the node numbering: a clone of a space and its spaces of
/// other component counts share the cell → node map and the node → cell
/// incidence (the same memory, not equal copies), and a P1 space's map is
/// its mesh's cells.
#[test]
fn clones_and_component_variants_share_one_map() {
    let m = cube(2);
    let p1 = FunctionSpace::new(m.clone(), p(3, 1), 1).unwrap();
    assert!(std::ptr::eq(p1.cell_nodes_all(), m.cells()));
    let s = FunctionSpace::new(m.clone(), p(3, 2), 3).unwrap();
    let (clone, scalar) = (s.clone(), s.with_n_comp(1).unwrap());
    assert_eq!((scalar.n_comp(), scalar.n_dofs()), (1, s.n_nodes()));
    for other in [&clone, &scalar] {
        assert!(Arc::ptr_eq(other.mesh(), s.mesh()));
        assert!(std::ptr::eq(other.cell_nodes_all(), s.cell_nodes_all()));
    }
    // the incidence built through one is the other's
    let (offsets, slots) = scalar.node_incidence().unwrap();
    let (o, sl) = s.node_incidence().unwrap();
    assert!(std::ptr::eq(offsets, o) && std::ptr::eq(slots, sl));
    assert!(matches!(
        s.with_n_comp(0),
        Err(Error::InvalidArgument { name: "n_comp", .. })
    ));
}

/// `FunctionSpace::new` names the first bad cell, also past its first
/// block of cells searched.
#[test]
fn a_bad_cell_past_the_first_block_is_named() {
    let square = square(64);
    assert!(square.n_cells() > 7000 && 5000 > CHECK_BLOCK);
    let mut cells = square.cells().to_vec();
    // cell 5000 repeats a vertex, cell 7000 has one out of range
    cells[3 * 5000 + 1] = cells[3 * 5000];
    cells[3 * 7000 + 2] = u32::MAX;
    let bad = Mesh::from_raw(2, square.vertices().to_vec(), cells).unwrap();
    let element = Element::lagrange(2, 1).unwrap();
    match FunctionSpace::new(Arc::new(bad), element, 1) {
        Err(Error::InvalidCell { cell, .. }) => assert_eq!(cell, 5000),
        other => panic!("expected InvalidCell, got {other:?}"),
    }
}
