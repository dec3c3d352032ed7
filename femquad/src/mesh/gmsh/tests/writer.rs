//! A small MSH 4.1 writer (ASCII or binary, either byte order, `size_t` of 4
//! or 8 bytes), to test the encodings Gmsh's files in `tests/data` do not
//! cover, and to time the reading of a million-cell file.

use std::time::{Duration, Instant};

use super::*;
use crate::mesh::MeshOptions;
use crate::mesh::generate::unit_cube;

/// How a file is encoded.
#[derive(Clone, Copy, Debug)]
pub(super) struct Encoding {
    pub binary: bool,
    pub little_endian: bool,
    pub size_t: usize,
}

/// Every encoding the reader supports.
pub(super) const ENCODINGS: [Encoding; 5] = [
    Encoding {
        binary: false,
        little_endian: true,
        size_t: 8,
    },
    Encoding {
        binary: true,
        little_endian: true,
        size_t: 8,
    },
    Encoding {
        binary: true,
        little_endian: false,
        size_t: 8,
    },
    Encoding {
        binary: true,
        little_endian: true,
        size_t: 4,
    },
    Encoding {
        binary: true,
        little_endian: false,
        size_t: 4,
    },
];

/// Values written as text (space-separated, a line per record) or raw.
struct Out {
    bytes: Vec<u8>,
    enc: Encoding,
}

impl Out {
    fn text(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    /// A value: `text()` in ASCII, else its bytes in little- or big-endian
    /// order.
    fn value(&mut self, text: impl FnOnce() -> String, le: &[u8], be: &[u8]) {
        if !self.enc.binary {
            if self.bytes.last() != Some(&b'\n') {
                self.bytes.push(b' ');
            }
            self.text(&text());
        } else if self.enc.little_endian {
            self.bytes.extend_from_slice(le);
        } else {
            self.bytes.extend_from_slice(be);
        }
    }

    fn size(&mut self, v: u64) {
        if self.enc.size_t == 4 {
            let v = u32::try_from(v).expect("size_t of 4 bytes");
            self.value(|| v.to_string(), &v.to_le_bytes(), &v.to_be_bytes());
        } else {
            self.value(|| v.to_string(), &v.to_le_bytes(), &v.to_be_bytes());
        }
    }

    fn int(&mut self, v: i32) {
        self.value(|| v.to_string(), &v.to_le_bytes(), &v.to_be_bytes());
    }

    fn float(&mut self, v: f64) {
        self.value(|| format!("{v:?}"), &v.to_le_bytes(), &v.to_be_bytes());
    }

    /// Ends a record (a line in ASCII).
    fn end(&mut self) {
        if !self.enc.binary {
            self.bytes.push(b'\n');
        }
    }

    /// Ends a section's data: binary data is followed by a newline.
    fn close(&mut self, name: &str) {
        if self.enc.binary {
            self.bytes.push(b'\n');
        }
        self.text(&format!("$End{name}\n"));
    }
}

/// Writes `g` as Gmsh would: its named physical groups, its entities, one
/// node block of the mesh vertices, and element blocks of the
/// lower-dimensional elements then of the cells (a block per run of equal
/// entity), so that reading the file gives `g` back (with `reoriented = 0`
/// and `second_order = false`).
pub(super) fn write_msh(g: &GmshMesh, enc: Encoding) -> Vec<u8> {
    let mut o = Out {
        bytes: Vec::new(),
        enc,
    };
    o.text(&format!(
        "$MeshFormat\n4.1 {} {}\n",
        u8::from(enc.binary),
        enc.size_t
    ));
    if enc.binary {
        o.int(1);
        o.text("\n");
    }
    o.text("$EndMeshFormat\n");
    let named: Vec<&PhysicalGroup> = g
        .physical_groups
        .iter()
        .filter(|p| !p.name.is_empty())
        .collect();
    if !named.is_empty() {
        o.text(&format!("$PhysicalNames\n{}\n", named.len()));
        for p in named {
            o.text(&format!("{} {} \"{}\"\n", p.dim, p.tag, p.name));
        }
        o.text("$EndPhysicalNames\n");
    }

    o.text("$Entities\n");
    for dim in 0..4 {
        o.size(g.entities.iter().filter(|e| e.dim == dim).count() as u64);
    }
    o.end();
    for dim in 0..4 {
        for e in g.entities.iter().filter(|e| e.dim == dim) {
            o.int(e.tag);
            for _ in 0..if dim == 0 { 3 } else { 6 } {
                o.float(0.0);
            }
            o.size(e.physical_tags.len() as u64);
            e.physical_tags.iter().for_each(|&t| o.int(t));
            if dim > 0 {
                o.size(0);
            }
            o.end();
        }
    }
    o.close("Entities");

    let m = &g.mesh;
    let (nv, dim) = (m.n_vertices(), m.dim());
    let tags = &g.node_tags;
    o.text("$Nodes\n");
    for v in [1, nv as u64, tags[0], tags[nv - 1]] {
        o.size(v);
    }
    o.end();
    o.int(dim as i32);
    o.int(1);
    o.int(0);
    o.size(nv as u64);
    o.end();
    for &t in tags {
        o.size(t);
        o.end();
    }
    for v in 0..nv {
        let p = m.vertex(v);
        o.float(p[0]);
        o.float(p[1]);
        o.float(if dim == 3 { p[2] } else { 0.0 });
        o.end();
    }
    o.close("Nodes");

    // (dimension, entity, element tag, vertices) in file order
    let mut all: Vec<(usize, i32, u64, &[u32])> = g
        .elements
        .iter()
        .map(|e| (e.dim, e.entity, e.tag, &e.vertices[..]))
        .collect();
    all.extend((0..m.n_cells()).map(|c| (dim, g.cell_entities[c], g.cell_tags[c], m.cell(c))));
    let blocks: Vec<_> = all.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)).collect();
    let (min, max) = all
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), e| (lo.min(e.2), hi.max(e.2)));
    o.text("$Elements\n");
    for v in [blocks.len() as u64, all.len() as u64, min, max] {
        o.size(v);
    }
    o.end();
    for block in blocks {
        let (edim, entity) = (block[0].0, block[0].1);
        o.int(edim as i32);
        o.int(entity);
        o.int([15, 1, 2, 4][edim]);
        o.size(block.len() as u64);
        o.end();
        for &(_, _, tag, vertices) in block {
            o.size(tag);
            vertices.iter().for_each(|&v| o.size(tags[v as usize]));
            o.end();
        }
    }
    o.close("Elements");
    o.bytes
}

/// `g` as the writer gives it back.
fn as_written(g: &GmshMesh) -> GmshMesh {
    GmshMesh {
        reoriented: 0,
        second_order: false,
        ..g.clone()
    }
}

#[test]
fn every_encoding_reads_back_what_was_written() {
    for name in [
        "mesh_square.msh",
        "mesh_square_clockwise.msh",
        "mesh_cube_binary.msh",
        "mesh_cube_p2_binary.msh",
        "mesh_disk_p2.msh",
    ] {
        let g = as_written(&read_reoriented(name));
        for enc in ENCODINGS {
            let bytes = write_msh(&g, enc);
            let back = parse_gmsh(&bytes, "written.msh")
                .unwrap_or_else(|e| panic!("{name} written as {enc:?}: {e}"));
            assert_eq!(back, g, "{name} written as {enc:?}");
        }
    }
}

#[test]
fn big_endian_errors_name_the_byte_offset() {
    let g = read("mesh_cube_binary.msh");
    let enc = ENCODINGS[2];
    let bytes = write_msh(&g, enc);
    // the first element's first node tag: 99
    let el = find(&bytes, b"$Elements\n", 0).unwrap() + 10;
    let first_node = el + 4 * 8 + 3 * 4 + 8 + 8;
    let mut bad = bytes.clone();
    bad[first_node..first_node + 8].copy_from_slice(&99u64.to_be_bytes());
    let (line, reason) = error(&bad);
    assert_eq!(line, 0);
    let tag = g.elements[0].tag;
    assert_eq!(
        reason,
        format!(
            "element {tag} refers to node 99, which is not in the $Nodes section (binary file: \
             section $Elements, byte offset {})",
            first_node - 8
        )
    );
}

/// The 6·56³ = 1 053 696 tetrahedra of the unit cube with its boundary
/// triangles, as a [`GmshMesh`] with one volume and one surface entity.
fn million_tetrahedra() -> GmshMesh {
    let mesh = unit_cube(56, &MeshOptions::default()).expect("mesh");
    let elements: Vec<GmshElement> = mesh
        .boundary_facets()
        .expect("facets")
        .iter()
        .enumerate()
        .map(|(i, f)| GmshElement {
            tag: i as u64 + 1,
            dim: 2,
            entity: 1,
            vertices: f.vertices[..3].to_vec(),
        })
        .collect();
    let (nv, nc, nb) = (mesh.n_vertices(), mesh.n_cells(), elements.len());
    GmshMesh {
        reoriented: 0,
        second_order: false,
        node_tags: (1..=nv as u64).collect(),
        cell_tags: (nb as u64 + 1..=(nb + nc) as u64).collect(),
        cell_entities: vec![1; nc],
        elements,
        entities: vec![
            GmshEntity {
                dim: 2,
                tag: 1,
                physical_tags: vec![2],
            },
            GmshEntity {
                dim: 3,
                tag: 1,
                physical_tags: vec![1],
            },
        ],
        physical_groups: vec![
            PhysicalGroup {
                dim: 2,
                tag: 2,
                name: "boundary".to_string(),
            },
            PhysicalGroup {
                dim: 3,
                tag: 1,
                name: "solid".to_string(),
            },
        ],
        mesh: mesh.into(),
    }
}

/// Times the reading of a binary file of a million tetrahedra (best of 3).
/// `RAYON_NUM_THREADS=1 cargo test --release -p femquad --lib
/// read_a_million_tetrahedra -- --ignored --nocapture`
#[test]
#[ignore = "timing; run in release"]
fn read_a_million_tetrahedra() {
    let g = million_tetrahedra();
    let bytes = write_msh(&g, ENCODINGS[1]);
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let back = parse_gmsh(&bytes, "cube.msh").expect("read");
        best = best.min(t.elapsed());
        assert_eq!(back.mesh.n_cells(), g.mesh.n_cells());
        assert!(back == g);
    }
    eprintln!(
        "read {} tetrahedra + {} triangles, {} vertices ({:.1} MB binary) in {:.0} ms ({} threads)",
        g.mesh.n_cells(),
        g.elements.len(),
        g.mesh.n_vertices(),
        bytes.len() as f64 / 1e6,
        best.as_secs_f64() * 1e3,
        rayon::current_num_threads()
    );
    if !cfg!(debug_assertions) {
        assert!(best < Duration::from_secs(1), "{best:?}");
    }
}
