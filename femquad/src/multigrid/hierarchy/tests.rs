//! Hierarchies: nestedness over several levels (the prolongation reproduces
//! a coarse function on the finest mesh), element quality over several
//! levels of tetrahedra and Gmsh tags on every level. (The fixed dofs of
//! every multigrid level are tested with `LevelSpaces`, in `levels.rs`.)

use super::*;
use crate::backend::Vector;
use crate::mesh::check_refinements;
use crate::mesh::generate::{MeshOptions, unit_cube, unit_square};
use crate::mesh::read_gmsh;
use crate::multigrid::Transfer;
use crate::rng::Rng;

fn jittered(seed: u64) -> MeshOptions {
    MeshOptions {
        jitter: 0.15,
        shuffle: true,
        seed,
    }
}

fn test_gmsh(name: &str) -> GmshMesh {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    read_gmsh(path).unwrap()
}

/// Barycentric coordinates of `x` in the simplex `cell` of `m`.
fn barycentric(m: &Mesh, cell: &[u32], x: &[f64]) -> Vec<f64> {
    let dim = m.dim();
    let x0 = m.vertex(cell[0] as usize);
    // J λ' = x − x0 with columns X_i − X_0; λ_0 = 1 − Σ λ'
    let mut j = vec![0.0; dim * dim];
    for i in 0..dim {
        let xi = m.vertex(cell[i + 1] as usize);
        for d in 0..dim {
            j[d * dim + i] = xi[d] - x0[d];
        }
    }
    let rhs: Vec<f64> = (0..dim).map(|d| x[d] - x0[d]).collect();
    // Gaussian elimination (dim ≤ 3)
    let mut a = j;
    let mut b = rhs;
    for col in 0..dim {
        let p = (col..dim)
            .max_by(|&r, &s| a[r * dim + col].abs().total_cmp(&a[s * dim + col].abs()))
            .unwrap();
        for k in 0..dim {
            a.swap(p * dim + k, col * dim + k);
        }
        b.swap(p, col);
        for r in col + 1..dim {
            let f = a[r * dim + col] / a[col * dim + col];
            for k in col..dim {
                a[r * dim + k] -= f * a[col * dim + k];
            }
            b[r] -= f * b[col];
        }
    }
    let mut l = vec![0.0; dim];
    for r in (0..dim).rev() {
        let s: f64 = (r + 1..dim).map(|k| a[r * dim + k] * l[k]).sum();
        l[r] = (b[r] - s) / a[r * dim + r];
    }
    let mut out = vec![1.0 - l.iter().sum::<f64>()];
    out.extend(l);
    out
}

/// A random coarse P1 field of 3 components, prolonged through every level,
/// equals the coarse function at the centroid of every finest cell
/// (evaluated in its coarse ancestor, `fine / 2^(dim·L)`): the spaces are
/// nested and the transfers interpolate exactly. The vertices of each mesh
/// are the first vertices of the next, and vertex `n_v + k` is the midpoint
/// of `edges(l)[k]`. Plain and Gmsh hierarchies (whose edges must be the
/// ones `refine_gmsh` numbered its midpoints by).
#[test]
fn prolongation_reproduces_coarse_functions_on_the_finest_mesh() {
    let mut rng = Rng::new(5);
    for (h, levels) in [
        (
            MeshHierarchy::new(&unit_square(3, &jittered(1)).unwrap(), 4).unwrap(),
            4,
        ),
        (
            MeshHierarchy::new(&unit_cube(2, &jittered(2)).unwrap(), 3).unwrap(),
            3,
        ),
        (
            MeshHierarchy::from_gmsh(&test_gmsh("mesh_square.msh"), 3).unwrap(),
            3,
        ),
        (
            MeshHierarchy::from_gmsh(&test_gmsh("mesh_cube.msh"), 2).unwrap(),
            2,
        ),
    ] {
        assert_eq!(h.n_levels(), levels + 1);
        for l in 0..levels {
            let (mc, mf) = (h.mesh(l).unwrap(), h.mesh(l + 1).unwrap());
            for (k, &[a, b]) in h.edges(l).unwrap().iter().enumerate() {
                let (xa, xb) = (mc.vertex(a as usize), mc.vertex(b as usize));
                let mid: Vec<f64> = (0..mc.dim()).map(|d| 0.5 * (xa[d] + xb[d])).collect();
                let v = mc.n_vertices() + k;
                assert_eq!(mf.vertex(v), &mid[..], "level {l}, vertex {v}");
            }
        }
        let nc = 3;
        let m0 = h.mesh(0).unwrap();
        let u0 = rng.vec(m0.n_vertices() * nc, -1.0, 1.0);
        let mut u = Vector::from(u0.clone());
        for l in 0..levels {
            let (mc, mf) = (h.mesh(l).unwrap(), h.mesh(l + 1).unwrap());
            let k = mc.vertices().len();
            assert_eq!(&mf.vertices()[..k], mc.vertices(), "level {l}");
            let t =
                Transfer::<f64>::new(mc.n_vertices(), h.edges(l).unwrap().to_vec(), nc).unwrap();
            let mut fine = Vector::from(vec![0.0; mf.n_vertices() * nc]);
            t.prolong_add(&mut fine, &u).unwrap();
            u = fine;
        }
        let uf = u.to_host().unwrap();
        let f = h.finest();
        let (dim, kv) = (f.dim(), f.vertices_per_cell());
        let per_ancestor = 1usize << (dim * levels);
        let mut worst: f64 = 0.0;
        for c in 0..f.n_cells() {
            let cell = f.cell(c);
            let x: Vec<f64> = (0..dim)
                .map(|d| cell.iter().map(|&v| f.vertex(v as usize)[d]).sum::<f64>() / kv as f64)
                .collect();
            let parent = m0.cell(c / per_ancestor);
            let lambda = barycentric(m0, parent, &x);
            assert!(lambda.iter().all(|&l| l > -1e-12), "{lambda:?}");
            for j in 0..nc {
                let fine: f64 =
                    cell.iter().map(|&v| uf[v as usize * nc + j]).sum::<f64>() / kv as f64;
                let coarse: f64 = parent
                    .iter()
                    .zip(&lambda)
                    .map(|(&v, l)| l * u0[v as usize * nc + j])
                    .sum();
                worst = worst.max((fine - coarse).abs());
            }
        }
        assert!(worst < 1e-12, "{dim}D: {worst:e}");
    }
}

/// `h_max^dim / |det J|`, the worst over the mesh.
fn worst_shape(m: &Mesh) -> f64 {
    (0..m.n_cells())
        .map(|c| m.cell_diameter(c).powi(m.dim() as i32) / m.det_j(c).abs())
        .fold(0.0, f64::max)
}

/// Over 4 levels of tetrahedra (a jittered cube and the Gmsh cube) the worst
/// shape of every level is that of level 1, within 2.5 times the coarse
/// mesh's: Bey's refinement keeps the quality bounded at any depth.
#[test]
fn tetrahedra_keep_their_quality_over_four_levels() {
    let gmsh = test_gmsh("mesh_cube.msh");
    for h in [
        MeshHierarchy::new(&unit_cube(2, &jittered(3)).unwrap(), 4).unwrap(),
        MeshHierarchy::from_gmsh(&gmsh, 3).unwrap(),
    ] {
        let worst: Vec<f64> = h.meshes().map(|m| worst_shape(m)).collect();
        eprintln!("worst shape per level: {worst:?}");
        for l in 1..worst.len() {
            assert!(worst[l] <= 2.5 * worst[0], "{worst:?}");
            assert!((worst[l] - worst[1]).abs() <= 1e-9 * worst[1], "{worst:?}");
        }
        // every level valid and positively oriented, volumes 1/8 of the parent's
        for (l, m) in h.meshes().enumerate().skip(1) {
            m.validate().unwrap();
            let coarse = h.mesh(l - 1).unwrap();
            for c in (0..m.n_cells()).step_by(97) {
                let v = m.cell_volume(c) * 8.0;
                let p = coarse.cell_volume(c / 8);
                assert!((v - p).abs() <= 1e-12 * p, "level {l} cell {c}");
            }
        }
    }
}

/// On every level of a Gmsh hierarchy the physical groups resolve to the
/// refined groups: a group's vertices on level `l` that are vertices of
/// level `l − 1` are exactly its vertices there, and the domain group holds
/// every cell.
#[test]
fn groups_resolve_on_every_level() {
    let gmsh = test_gmsh("mesh_cube.msh");
    let levels = 2;
    let h = MeshHierarchy::from_gmsh(&gmsh, levels).unwrap();
    for name in ["bottom", "sides and top", "solid"] {
        let group = gmsh.physical_group(name).unwrap().clone();
        for l in 1..=levels {
            let (gc, gf) = (h.gmsh(l - 1).unwrap(), h.gmsh(l).unwrap());
            if group.dim == 3 {
                assert_eq!(gf.group_cells(&group).len(), gf.mesh.n_cells(), "{name}");
                continue;
            }
            let nv = gc.mesh.n_vertices() as u32;
            let coarse: Vec<u32> = gf
                .group_vertices(&group)
                .into_iter()
                .filter(|&v| v < nv)
                .collect();
            assert_eq!(coarse, gc.group_vertices(&group), "{name}, level {l}");
            assert!(gf.group_vertices(&group).len() > coarse.len());
        }
    }
}

/// A hierarchy of one mesh is that mesh; refining an invalid mesh names
/// the cell.
#[test]
fn single_meshes_and_bad_input() {
    let m = Arc::new(unit_square(2, &MeshOptions::default()).unwrap());
    let h = MeshHierarchy::single(m.clone());
    assert_eq!(h.n_levels(), 1);
    assert!(Arc::ptr_eq(h.finest(), &m)); // shared, not copied
    assert!(h.edges(0).is_none() && h.gmsh(0).is_none());
    let bad = Mesh::from_raw(2, vec![0.0, 0.0, 1.0, 0.0, 2.0, 0.0], vec![0, 1, 2]).unwrap();
    let e = MeshHierarchy::new(&bad, 1).unwrap_err().to_string();
    assert!(e.contains("cell 0"), "{e}");
}

/// `MeshHierarchy::new` and `from_gmsh` check the depth first
/// ([`check_refinements`]): 20 levels of a small square or a Gmsh mesh are
/// refused with its message before any refinement (they ran for minutes,
/// until the process was killed): the error is `check_refinements`' own.
#[test]
fn hierarchies_check_their_depth_first() {
    let square = unit_square(2, &MeshOptions::default()).unwrap();
    let e = MeshHierarchy::new(&square, 20).unwrap_err().to_string();
    assert_eq!(e, check_refinements(&square, 20).unwrap_err().to_string());
    let g = test_gmsh("mesh_square.msh");
    let e = MeshHierarchy::from_gmsh(&g, 20).unwrap_err().to_string();
    assert_eq!(e, check_refinements(&g.mesh, 20).unwrap_err().to_string());
    assert!(
        e.starts_with("invalid argument `refinements`: 20 refinements of 14 triangles give "),
        "{e}"
    );
}

/// The finest boundary refined from the coarsest mesh's
/// ([`MeshHierarchy::finest_boundary`]) is the boundary of the finest mesh
/// found there ([`MeshPart::boundary`]: its vertices and edges), for
/// shuffled and jittered boxes and Gmsh meshes, 2D and 3D, 0 to 2
/// refinements.
#[test]
fn the_finest_boundary_is_the_finest_meshs_boundary() {
    let mut hierarchies = Vec::new();
    for levels in 0..=2 {
        hierarchies
            .push(MeshHierarchy::new(&unit_square(3, &jittered(5)).unwrap(), levels).unwrap());
        hierarchies.push(MeshHierarchy::new(&unit_cube(2, &jittered(6)).unwrap(), levels).unwrap());
        for name in ["mesh_square.msh", "mesh_cube.msh"] {
            hierarchies.push(MeshHierarchy::from_gmsh(&test_gmsh(name), levels).unwrap());
        }
    }
    for h in &hierarchies {
        let expected = MeshPart::boundary(h.finest()).unwrap();
        assert!(!expected.is_empty());
        let at = format!("{}D, {} levels", h.finest().dim(), h.n_levels());
        assert_eq!(h.finest_boundary().unwrap(), expected, "{at}");
    }
}

#[test]
fn a_prepared_hierarchy_keeps_the_vertex_order_of_its_cells() {
    // a jittered cube whose tetrahedra preparation reorders
    let m = unit_cube(3, &jittered(5)).unwrap();
    let p = prepare_for_refinement(&m).unwrap();
    assert_ne!(p.cells(), m.cells(), "the test mesh needs reordered cells");
    // taken as it is: mesh 0 is m, mesh 1 its refinement
    let kept = MeshHierarchy::prepared(m.clone(), 2).unwrap();
    assert_eq!(kept.mesh(0).unwrap().cells(), m.cells());
    let (fine, _) = refine(&m).unwrap().into_parts();
    assert_eq!(kept.mesh(1).unwrap().cells(), fine.cells());
    // of a prepared mesh: the same levels as `new` of the mesh
    let new = MeshHierarchy::new(&m, 2).unwrap();
    let again = MeshHierarchy::prepared(p, 2).unwrap();
    for l in 0..3 {
        let (a, b) = (new.mesh(l).unwrap(), again.mesh(l).unwrap());
        assert_eq!(
            (a.cells(), a.vertices()),
            (b.cells(), b.vertices()),
            "level {l}"
        );
    }
}
