//! Tests of [`super::size`]: counts against real meshes, the bound's messages,
//! the count parser.

use super::Mesh;
use super::size::*;
use crate::Error;
use crate::mesh::{MeshOptions, mesh_edges, refine, unit_box};

const GIB_U64: u64 = 1 << 30;

/// The distinct triangles of a mesh (the cells in 2D, the tetrahedra's
/// faces in 3D).
fn triangles(m: &Mesh) -> usize {
    if m.dim() == 2 {
        return m.n_cells();
    }
    let mut faces: Vec<[u32; 3]> = (0..m.n_cells())
        .flat_map(|c| (0..4).map(move |i| crate::mesh::boundary::sorted_facet(3, m.cell(c), i)))
        .collect();
    faces.sort_unstable();
    faces.dedup();
    faces.len()
}

/// The counts of `m`, all of them counted.
fn counted(m: &Mesh) -> MeshSize {
    MeshSize {
        dim: m.dim(),
        vertices: m.n_vertices() as f64,
        edges: mesh_edges(m).unwrap().n_edges() as f64,
        triangles: triangles(m) as f64,
        cells: m.n_cells() as f64,
    }
}

/// `MeshSize::unit_box` and `refined` give the counts of the generated and
/// refined meshes exactly; `MeshSize::of` a lower bound whose refinements
/// stay lower bounds.
#[test]
fn counts_are_those_of_the_meshes() {
    for dim in [2, 3] {
        for n in 1..=4 {
            let m = unit_box(dim, n, &MeshOptions::default()).unwrap();
            let size = MeshSize::unit_box(dim, n as f64);
            assert_eq!(size, counted(&m), "{dim}D n = {n}");
            let fine = refine(&refine(&m).unwrap().into_mesh())
                .unwrap()
                .into_mesh();
            assert_eq!(size.refined().refined(), counted(&fine), "{dim}D n = {n}");
            let bound = MeshSize::of(&m).refined().refined();
            let exact = counted(&fine);
            assert_eq!((bound.cells, bound.dim), (exact.cells, dim));
            assert!(bound.vertices <= exact.vertices && bound.edges <= exact.edges);
            assert!(bound.triangles <= exact.triangles);
            assert!(bound.bytes() <= exact.bytes());
        }
    }
    let p2 = FieldSize {
        order: 2,
        n_comp: 3,
    };
    let s = MeshSize::unit_box(3, 4.0);
    assert_eq!(s.nodes(1), 125.0);
    assert_eq!((s.nodes(2), p2.dofs(&s)), (729.0, 3.0 * 729.0));
}

/// The reasons state the counts and the bound: cells, then memory.
#[test]
fn too_large_states_the_bound() {
    let at = |n: f64, field| {
        let meshes = [MeshSize::unit_box(2, n)];
        Footprint {
            meshes: &meshes,
            field,
        }
        .too_large(Some(GIB_U64))
    };
    assert_eq!(at(64.0, None), None);
    assert_eq!(
        at(46341.0, None).unwrap(),
        "4.295e9 triangles, more than the 4294967295 cells a mesh can number (cell indices \
         are u32)"
    );
    // 2·8192² = 1.3e8 triangles and 6.7e7 vertices: 1.5 + 1.0 GiB
    assert_eq!(
        at(8192.0, None).unwrap(),
        "1.342e8 triangles and 6.713e7 vertices, which need at least 2.5 GiB (coordinates and \
         cells), more than this machine's 1.0 GiB of memory"
    );
    let p1 = Some(FieldSize {
        order: 1,
        n_comp: 1,
    });
    // n = 4096: the mesh alone needs 0.6 GiB, a P1 solve on it 2.9 GiB
    assert_eq!(at(4096.0, None), None);
    let e = at(4096.0, p1).unwrap();
    assert!(
        e.starts_with("3.355e7 triangles and 1.679e7 dofs, which need at least 2.9 GiB")
            && e.ends_with(
                " GiB (mesh, dof map, cell arrays, geometry, 4 solver vectors), more than this \
                 machine's 1.0 GiB of memory"
            ),
        "{e}"
    );
    // no memory known: only the indices
    let meshes = [MeshSize::unit_box(2, 8192.0)];
    let f = Footprint {
        meshes: &meshes,
        field: p1,
    };
    assert_eq!(f.too_large(None), None);
    // a vector P2 field of 2^31 nodes has more dofs than u32 indices number
    let big = [MeshSize::unit_box(3, 640.0)];
    let lame = Footprint {
        meshes: &big,
        field: Some(FieldSize {
            order: 2,
            n_comp: 3,
        }),
    };
    assert!(
        lame.too_large(None)
            .unwrap()
            .ends_with("(dof indices are u32)")
    );
}

/// Refinements: the most that fit, and why one more does not.
#[test]
fn refinements_state_the_most_that_fit() {
    let square = MeshSize::unit_box(2, 2.0); // 8 triangles
    assert_eq!(refinements_too_many(&square, 14, None, None), None);
    assert_eq!(
        refinements_too_many(&square, 20, None, None).unwrap(),
        "20 refinements of 8 triangles give 8.796e12 triangles; at most 14 fit: 15 give \
         8.590e9 triangles, more than the 4294967295 cells a mesh can number (cell indices \
         are u32)"
    );
    // with 1 GiB: level 10 (8.4e6 triangles) fits, level 11 with its coarser levels does not
    let e = refinements_too_many(&square, 12, None, Some(GIB_U64)).unwrap();
    assert!(
        e.starts_with(
            "12 refinements of 8 triangles give 1.342e8 triangles; at most 11 fit: 12 give \
             1.342e8 triangles and "
        ) && e.contains("(coordinates and cells with the 12 coarser levels)"),
        "{e}"
    );
    assert_eq!(refinements_too_many(&square, 11, None, Some(GIB_U64)), None);
    // a solve needs more: fewer levels
    let p2 = Some(FieldSize {
        order: 2,
        n_comp: 2,
    });
    let e = refinements_too_many(&square, 11, p2, Some(GIB_U64)).unwrap();
    assert!(e.contains("at most 9 fit: 10 give"), "{e}");
    // a coarse mesh that is itself too large
    let huge = MeshSize::unit_box(2, 1e5);
    let e = refinements_too_many(&huge, 1, None, None).unwrap();
    assert!(
        e.starts_with("the mesh itself has 2.000e10 triangles"),
        "{e}"
    );
    // any number of refinements is answered at once
    let e = refinements_too_many(&square, usize::MAX, None, None).unwrap();
    assert!(e.contains("at most 14 fit"), "{e}");
}

#[test]
fn largest_bisects() {
    assert_eq!(largest(1, 100, |n| n * n <= 50), Some(7));
    assert_eq!(largest(1, 5, |_| true), Some(5));
    assert_eq!(largest(3, 5, |_| false), None);
    assert_eq!(largest(1, usize::MAX, |n| n < 1 << 40), Some((1 << 40) - 1));
}

/// One parser for the counts of every command line: integers, powers,
/// exponents and suffixes; errors that say what to write.
#[test]
fn counts_parse_as_people_write_them() {
    for (s, n) in [
        ("16777216", 16_777_216),
        ("16_777_216", 16_777_216),
        ("2^24", 1 << 24),
        ("1e6", 1_000_000),
        ("1e12", 1_000_000_000_000),
        ("16M", 16_000_000),
        ("4k", 4000),
        ("1G", 1_000_000_000),
        (" 1.5e3 ", 1500),
        ("2^53", 1 << 53),
    ] {
        assert_eq!(parse_count(s).unwrap(), n, "{s}");
    }
    let reason = |s: &str| match parse_count(s) {
        Err(Error::InvalidArgument { name, reason }) => {
            assert_eq!(name, "count");
            reason
        }
        other => panic!("{s}: {other:?}"),
    };
    assert_eq!(
        reason("2^x"),
        "`2^x` is not a count (write e.g. 16777216, 2^24, 1e6 or 16M)"
    );
    assert_eq!(
        reason("abc"),
        "`abc` is not a count (write e.g. 16777216, 2^24, 1e6 or 16M)"
    );
    assert_eq!(reason("0"), "`0` must be at least 1");
    assert_eq!(reason("-5"), "`-5` must be at least 1");
    assert_eq!(reason("1.5"), "`1.5` = 1.5 is not a whole number");
    assert_eq!(
        reason("1e20"),
        "`1e20` = 1e20 is above 2^53, where counts are no longer exact"
    );
    assert_eq!(reason("NaN").split(' ').nth(1), Some("is"));
    assert!(reason("inf").contains("above 2^53"));
}

#[test]
fn physical_memory_is_read() {
    // Linux has /proc/meminfo; elsewhere it may be unknown
    if cfg!(target_os = "linux") {
        let m = physical_memory().unwrap();
        assert!(m > 1 << 26, "{m}");
    }
}
