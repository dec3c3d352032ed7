use super::*;

#[test]
fn square_with_boundary_lines_and_groups() {
    let g = read("mesh_square.msh");
    let m = &g.mesh;
    assert_eq!((m.dim(), m.n_vertices(), m.n_cells()), (2, 12, 14));
    assert_eq!(g.reoriented, 0);
    assert!(!g.second_order);
    assert_eq!(g.node_tags, (1..=12).collect::<Vec<u64>>());
    assert_eq!(g.cell_tags, (10..=23).collect::<Vec<u64>>());
    assert!(g.cell_entities.iter().all(|&e| e == 1));
    assert!((m.total_volume() - 1.0).abs() < 1e-14);
    // node 5 is (0.5, 0) up to Gmsh's rounding
    assert!((m.vertex(4)[0] - 0.5).abs() < 1e-11 && m.vertex(4)[1] == 0.0);
    // element 10 is "6 3 11"
    assert_eq!(m.cell(0), &[5, 2, 10]);
    let names: Vec<_> = g
        .physical_groups
        .iter()
        .map(|p| (p.dim, p.tag, p.name.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            (0, 5, "origin"),
            (1, 1, "bottom"),
            (1, 2, "rest"),
            (2, 3, "domain")
        ]
    );
    // 1 point + 8 boundary lines
    assert_eq!(g.elements.len(), 9);
    assert_eq!(g.elements.iter().filter(|e| e.dim == 1).count(), 8);
    assert_eq!(
        g.elements[0],
        GmshElement {
            tag: 1,
            dim: 0,
            entity: 1,
            vertices: vec![0]
        }
    );
    let bottom = g.physical_group("bottom").unwrap();
    assert_eq!(g.group_elements(bottom).len(), 2);
    let bv = g.group_vertices(bottom);
    assert_eq!(bv, vec![0, 1, 4]);
    assert!(bv.iter().all(|&v| m.vertex(v as usize)[1] == 0.0));
    let rest = g.group_vertices(g.physical_group("rest").unwrap());
    assert_eq!(rest.len(), 7);
    assert_eq!(
        g.group_vertices(g.physical_group("origin").unwrap()),
        vec![0]
    );
    let domain = g.physical_group("domain").unwrap();
    assert_eq!(g.group_cells(domain), (0..14).collect::<Vec<u32>>());
    assert_eq!(g.group_vertices(domain).len(), 12);
    assert_eq!(g.physical_tags(1, 2), &[2]);
    // the Gmsh boundary lines are the mesh's boundary facets
    let mut facets: Vec<[u32; 2]> = m
        .boundary_facets()
        .unwrap()
        .iter()
        .map(|f| {
            let mut e = [f.vertices[0], f.vertices[1]];
            e.sort();
            e
        })
        .collect();
    let mut lines: Vec<[u32; 2]> = g
        .elements
        .iter()
        .filter(|e| e.dim == 1)
        .map(|e| {
            let mut v = [e.vertices[0], e.vertices[1]];
            v.sort();
            v
        })
        .collect();
    facets.sort();
    lines.sort();
    assert_eq!(facets, lines);
}

#[test]
fn binary_equals_ascii() {
    // Gmsh writes ASCII coordinates with 16 digits, so they may differ from
    // the binary doubles in the last bit; everything else is identical
    for (ascii, binary) in [
        ("mesh_square.msh", "mesh_square_binary.msh"),
        ("mesh_cube.msh", "mesh_cube_binary.msh"),
    ] {
        let a = read(ascii);
        let b = read(binary);
        assert_eq!(a.mesh.cells(), b.mesh.cells());
        let (va, vb) = (a.mesh.vertices(), b.mesh.vertices());
        assert_eq!(va.len(), vb.len());
        assert!(va.iter().zip(vb).all(|(x, y)| (x - y).abs() <= 1e-15));
        assert_eq!(
            (&a.node_tags, &a.cell_tags, &a.cell_entities, &a.elements),
            (&b.node_tags, &b.cell_tags, &b.cell_entities, &b.elements)
        );
        assert_eq!(
            (&a.entities, &a.physical_groups, a.reoriented),
            (&b.entities, &b.physical_groups, b.reoriented)
        );
    }
}

/// A file written clockwise is an error that says how to read it; with
/// `GmshOptions::reorient` its cells are flipped and counted.
#[test]
fn clockwise_triangles_are_an_error_unless_reorientation_is_asked_for() {
    let path = data("mesh_square_clockwise.msh");
    match read_gmsh(&path) {
        Err(Error::MeshFile { line, reason, .. }) => {
            // element 10, the first triangle, on its line
            assert_eq!(
                line,
                line_of(&text("mesh_square_clockwise.msh"), "10 6 11 3")
            );
            assert!(
                reason.starts_with("element 10: negatively oriented (det J = -"),
                "{reason}"
            );
            assert!(
                reason
                    .contains("read it with GmshOptions { reorient: true, ..Default::default() }"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    let g = read_gmsh_with(
        &path,
        &GmshOptions {
            reorient: true,
            numbering: GmshNumbering::File,
        },
    )
    .unwrap();
    assert_eq!(g.reoriented, 14);
    let m = &g.mesh;
    assert!((0..m.n_cells()).all(|c| m.det_j(c) > 0.0));
    assert!((m.total_volume() - 1.0).abs() < 1e-14);
    // same triangles as the counterclockwise file, vertices 1 and 2 swapped back
    assert_eq!(g.mesh, read("mesh_square.msh").mesh);
    // nothing to flip in a counterclockwise file
    let ccw = read_gmsh_with(
        data("mesh_square.msh"),
        &GmshOptions {
            reorient: true,
            numbering: GmshNumbering::File,
        },
    )
    .unwrap();
    assert_eq!((ccw.reoriented, &ccw.mesh), (0, &g.mesh));
}

/// A node moved across its neighbours (node 10 out through the bottom
/// side) inverts element 12, which overlaps element 11: an error naming
/// the elements, with reorientation asked for or not.
#[test]
fn a_tangled_file_is_refused_naming_the_elements() {
    let tangled =
        text("mesh_square.msh").replace("0.3749999999995795 0.3750000000004207 0", "0.25 -0.1 0");
    let (line, reason) = error(&tangled);
    assert_eq!(line, line_of(&tangled, "12 1 5 10"));
    // det J = 0.4999999999986942·(−0.1): node 5 is at x = 0.5 up to Gmsh's rounding
    let det = "element 12: negatively oriented (det J = -0.04999999999986943)";
    assert_eq!(
        reason,
        format!(
            "{det}; the file lists its nodes clockwise: if the mesh, or a region of it, is \
             written so (e.g. a surface whose normal is -z), read it with GmshOptions {{ \
             reorient: true, ..Default::default() }} (read_gmsh_with, or the examples' \
             --reorient), which flips consistently flipped cells and refuses a tangled mesh"
        )
    );
    let e = parse_gmsh_with(
        tangled.as_bytes(),
        "tangled.msh",
        &GmshOptions {
            reorient: true,
            ..GmshOptions::default()
        },
    )
    .unwrap_err();
    match e {
        Error::MeshFile {
            line: l, reason, ..
        } => {
            assert_eq!(l, line);
            assert_eq!(
                reason,
                format!(
                    "{det} and overlapping its neighbour, element 11: the two lie on the same \
                     side of their shared edge (nodes 1, 10), so the mesh is tangled (1 \
                     negatively oriented element overlaps its neighbours: element 12) and \
                     reorientation cannot repair it (it flips only cells whose neighbours \
                     agree: a mesh, or a region of it, written clockwise); move the misplaced \
                     nodes"
                )
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tetrahedra_with_boundary_triangles() {
    let g = read("mesh_cube.msh");
    let m = &g.mesh;
    assert_eq!(m.dim(), 3);
    assert_eq!(m.n_vertices(), 14);
    assert_eq!(m.n_cells(), 24);
    assert!((m.total_volume() - 1.0).abs() < 1e-14);
    let tris: Vec<&GmshElement> = g.elements.iter().filter(|e| e.dim == 2).collect();
    assert_eq!(tris.len(), m.boundary_facets().unwrap().len());
    let bottom = g.physical_group("bottom").unwrap();
    assert_eq!(bottom.dim, 2);
    let bv = g.group_vertices(bottom);
    assert_eq!(bv.len(), 5);
    assert!(bv.iter().all(|&v| m.vertex(v as usize)[2] == 0.0));
    let sides = g.group_vertices(g.physical_group("sides and top").unwrap());
    assert_eq!(sides.len(), 13);
    let solid = g.physical_group("solid").unwrap();
    assert_eq!(g.group_cells(solid).len(), 24);
    // the boundary mask agrees with the union of the boundary groups
    let mask = m.boundary_vertices().unwrap();
    let mut union = bv.clone();
    union.extend(sides);
    union.sort();
    union.dedup();
    let from_mask: Vec<u32> = (0..m.n_vertices() as u32)
        .filter(|&v| mask[v as usize])
        .collect();
    assert_eq!(union, from_mask);
}

#[test]
fn second_order_elements_are_read_by_their_vertices() {
    let g = read("mesh_cube_p2_binary.msh");
    assert!(g.second_order);
    // the same straight-sided mesh as the first-order file (Gmsh numbers
    // the nodes differently once it has added the edge nodes)
    let p1 = read("mesh_cube_binary.msh");
    assert_eq!(g.mesh.n_vertices(), p1.mesh.n_vertices());
    assert_eq!(cell_points(&g.mesh), cell_points(&p1.mesh));
    assert!(g.node_tags.windows(2).all(|w| w[0] < w[1]));
    let d = read("mesh_disk_p2.msh");
    assert!(d.second_order);
    assert_eq!(d.mesh.n_cells(), 14);
    assert_eq!(d.mesh.n_vertices(), 12);
    // the vertices of the circle group lie on the unit circle
    let circle = d.group_vertices(d.physical_group("circle").unwrap());
    assert_eq!(circle.len(), 8);
    for v in circle {
        let p = d.mesh.vertex(v as usize);
        assert!((p[0].hypot(p[1]) - 1.0).abs() < 1e-12);
    }
    // the inscribed polygon's area is below π
    let area = d.mesh.total_volume();
    assert!(area < std::f64::consts::PI && area > 2.5, "{area}");
}

#[test]
fn sparse_and_unordered_node_tags() {
    // every node tag times 10 (sparse), in the node section and elements
    let src = text("mesh_square.msh");
    let lines: Vec<&str> = src.lines().collect();
    let times10 = |t: &str| (t.parse::<u64>().unwrap() * 10).to_string();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let nodes = line_of(&src, "$Nodes"); // 1-based = 0-based index of its header
    out[nodes] = "9 12 10 120".to_string();
    let mut i = nodes + 1;
    while lines[i] != "$EndNodes" {
        let n: usize = lines[i].split_whitespace().nth(3).unwrap().parse().unwrap();
        for l in &mut out[i + 1..i + 1 + n] {
            *l = times10(l.trim());
        }
        i += 1 + 2 * n;
    }
    let elements = line_of(&src, "$Elements");
    let mut i = elements + 1;
    while lines[i] != "$EndElements" {
        let n: usize = lines[i].split_whitespace().nth(3).unwrap().parse().unwrap();
        for l in &mut out[i + 1..i + 1 + n] {
            let t: Vec<&str> = l.split_whitespace().collect();
            let mut v = vec![t[0].to_string()];
            v.extend(t[1..].iter().map(|x| times10(x)));
            *l = v.join(" ");
        }
        i += 1 + n;
    }
    let content = out.join("\n") + "\n";
    let g = parse_gmsh_with(content.as_bytes(), Path::new("sparse.msh"), &file_order()).unwrap();
    let plain = read("mesh_square.msh");
    assert_eq!(g.mesh, plain.mesh);
    assert_eq!(g.node_tags, (1..=12).map(|t| t * 10).collect::<Vec<u64>>());

    // dense tags out of order: swap the tag lines of nodes 9 and 10 and
    // their coordinate lines, so that tag 10 comes first: the same mesh
    let l9 = line_of(&src, "9");
    let content = square_with_line(l9, "10");
    let (x9, x10) = (
        "0.2937500000004588 0.7062500000004164 0",
        "0.3749999999995795 0.3750000000004207 0",
    );
    let content = {
        let mut lines: Vec<&str> = content.lines().collect();
        lines[l9] = "9";
        let (i9, i10) = (l9 + 3, l9 + 4);
        assert_eq!((lines[i9].trim(), lines[i10].trim()), (x9, x10));
        lines.swap(i9, i10);
        lines.join("\n") + "\n"
    };
    let g = parse_gmsh_with(content.as_bytes(), Path::new("swapped.msh"), &file_order()).unwrap();
    assert_eq!(g.mesh, plain.mesh);
    assert_eq!(g.node_tags, plain.node_tags);
}

#[test]
fn planar_2d_mesh_at_z_const_and_non_planar_is_rejected() {
    let src = text("mesh_square.msh");
    // the whole square at z = 2: every 3-token line of $Nodes is a coordinate line
    let (start, end) = (line_of(&src, "$Nodes"), line_of(&src, "$EndNodes"));
    let lifted: String = src
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let t: Vec<&str> = l.split_whitespace().collect();
            if i + 1 > start && i + 1 < end && t.len() == 3 {
                format!("{} {} 2\n", t[0], t[1])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let g = parse_gmsh_with(lifted.as_bytes(), Path::new("z2.msh"), &file_order()).unwrap();
    assert_eq!(g.mesh, read("mesh_square.msh").mesh);
    // one node off the plane
    let n = line_of(&src, "0.3749999999995795 0.3750000000004207 0");
    let (line, reason) = error(square_with_line(
        n,
        "0.3749999999995795 0.3750000000004207 0.1",
    ));
    assert_eq!(line, n);
    assert_eq!(
        reason,
        "node 10 has z = 0.1 but node 1 has z = 0: a 2D mesh must lie in a plane z = const"
    );
}
