use super::*;

#[test]
fn wrong_version_is_rejected() {
    let (line, reason) = error(square_with_line(2, "2.2 0 8"));
    assert_eq!(line, 2);
    assert_eq!(
        reason,
        "MSH version 2.2 is not supported; re-export as 4.1 (gmsh -format msh41, or \
         Mesh.MshFileVersion = 4.1)"
    );
    let (line, reason) = error(square_with_line(2, "4.1 2 8"));
    assert_eq!(line, 2);
    assert_eq!(
        reason,
        "file type '2' is invalid: 0 for ASCII, 1 for binary"
    );
    let (line, reason) = error(square_with_line(2, "4.1 0"));
    assert_eq!(line, 2);
    assert!(
        reason.starts_with("invalid $MeshFormat line '4.1 0'"),
        "{reason}"
    );
}

#[test]
fn not_an_msh_file() {
    let (line, reason) = error("hello\nworld\n");
    assert_eq!(line, 1);
    assert_eq!(
        reason,
        "not a Gmsh MSH file: the first line must be $MeshFormat, found 'hello'"
    );
    assert_eq!(error("").1, "empty file: not a Gmsh MSH file");
    match read_gmsh(Path::new("/nonexistent/mesh.msh")) {
        Err(Error::Io { path, .. }) => assert_eq!(path, Path::new("/nonexistent/mesh.msh")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn truncated_files() {
    let src = text("mesh_square.msh");
    let elements = line_of(&src, "$Elements");
    // cut in the middle of the elements
    let cut: String = src
        .lines()
        .take(elements + 10)
        .collect::<Vec<_>>()
        .join("\n");
    let (line, reason) = error(&cut);
    assert_eq!(line, elements);
    assert_eq!(
        reason,
        "truncated file: section $Elements has no $EndElements"
    );
    // a binary file cut in its $Nodes data
    let bin = std::fs::read(data("mesh_square_binary.msh")).unwrap();
    let nodes = find(&bin, b"$Nodes\n", 0).unwrap();
    let (line, reason) = error(&bin[..nodes + 100]);
    assert_eq!(line, 0);
    assert!(
        reason.starts_with("truncated file: section $Nodes has no $EndNodes"),
        "{reason}"
    );
    // a binary $Elements section whose data is short, though $EndElements is there
    let el = find(&bin, b"$Elements\n", 0).unwrap() + 10;
    let end = find(&bin, b"\n$EndElements", 0).unwrap();
    let mut short = bin[..el + 200].to_vec();
    short.extend_from_slice(&bin[end..]);
    let (line, reason) = error(&short);
    assert_eq!(line, 0);
    assert!(
        reason.starts_with("truncated binary $Elements section: the elements of element block"),
        "{reason}"
    );
    assert!(
        reason.contains("(binary file: section $Elements, byte offset"),
        "{reason}"
    );
}

#[test]
fn unknown_and_unsupported_element_types() {
    let src = text("mesh_square.msh");
    let block = line_of(&src, "2 1 2 14");
    let (line, reason) = error(square_with_line(block, "2 1 200 14"));
    assert_eq!(line, block);
    assert!(reason.starts_with("unknown element type 200;"), "{reason}");
    let (line, reason) = error(square_with_line(block, "2 1 99 14"));
    assert_eq!(line, block);
    assert!(
        reason.starts_with("element type 99 is not supported"),
        "{reason}"
    );
    let (line, reason) = error(square_with_line(block, "2 1 3 14"));
    assert_eq!(line, block);
    assert!(
        reason.starts_with("element type 3 (4-node quadrangle) is not supported"),
        "{reason}"
    );
    let (line, reason) = error(square_with_line(block, "1 1 2 14"));
    assert_eq!(line, block);
    assert_eq!(
        reason,
        "element type 2 has dimension 2 but its block says 1"
    );
}

#[test]
fn element_referring_to_a_missing_node() {
    let src = text("mesh_square.msh");
    let n = line_of(&src, "15 2 6 12");
    let (line, reason) = error(square_with_line(n, "15 2 6 99"));
    assert_eq!(line, n);
    assert_eq!(
        reason,
        "element 15 refers to node 99, which is not in the $Nodes section"
    );
    let (line, reason) = error(square_with_line(n, "15 2 6 6"));
    assert_eq!(line, n);
    assert_eq!(reason, "element 15 lists node 6 twice");
    // a boundary line whose node is in $Nodes but in no triangle
    let nodes = line_of(&src, "$Nodes");
    let mut c = square_with_line(nodes + 1, "10 13 1 13");
    c = c.replace("$EndNodes", "2 1 0 1\n13\n0.5 0.5 0\n$EndNodes");
    let l = line_of(&c, "2 1 5");
    let c = {
        let mut lines: Vec<&str> = c.lines().collect();
        lines[l - 1] = "2 1 13";
        lines.join("\n") + "\n"
    };
    let (line, reason) = error(&c);
    assert_eq!(line, l);
    assert_eq!(
        reason,
        "element 2 (dimension 1) uses node 13, which is not a vertex of any 2D element"
    );
}

#[test]
fn malformed_records_name_their_line() {
    let src = text("mesh_square.msh");
    // an element line with a node tag missing
    let n = line_of(&src, "18 6 11 12");
    let (line, reason) = error(square_with_line(n, "18 6 11"));
    assert_eq!(line, n);
    assert_eq!(reason, "element 18 has 2 node tags; element type 2 needs 3");
    // a coordinate line with two numbers
    let c = line_of(&src, "0.2937500000004588 0.7062500000004164 0");
    let (line, reason) = error(square_with_line(c, "0.2937500000004588 0.7062500000004164"));
    assert_eq!(line, c);
    assert_eq!(
        reason,
        "expected 3 coordinates 'x y z' for node 9 of node block 9 of 9, found \
         '0.2937500000004588 0.7062500000004164'"
    );
    // a non-numeric coordinate: the line, and the token that is not a number
    let (line, reason) = error(square_with_line(c, "0.29375 abc 0"));
    assert_eq!(line, c);
    assert_eq!(
        reason,
        "expected 3 coordinates 'x y z' for node 9 of node block 9 of 9, found \
         '0.29375 abc 0': 'abc' is not a number"
    );
    // a node tag 0 / not a number
    let t = line_of(&src, "9");
    let (line, reason) = error(square_with_line(t, "0"));
    assert_eq!(line, t);
    assert_eq!(
        reason,
        "expected one node tag (a positive integer) in node block 9 of 9, found '0'"
    );
    // a duplicate node tag
    let (line, reason) = error(square_with_line(t, "3"));
    assert_eq!(line, t);
    let first = line_of(&src, "3");
    assert_eq!(
        reason,
        format!("duplicate node tag 3 (first defined at line {first})")
    );
    // the header announces more elements than there are
    let e = line_of(&src, "$Elements");
    let (line, reason) = error(square_with_line(e + 1, "6 24 1 24"));
    assert_eq!(line, e + 1);
    assert_eq!(
        reason,
        "the $Elements header announces 24 elements but its blocks hold 23"
    );
    // an extra element line
    let end = line_of(&src, "$EndElements");
    let (line, reason) = error(square_with_line(end, "24 7 9 11\n$EndElements"));
    assert_eq!(line, end);
    assert!(
        reason.starts_with("unexpected line '24 7 9 11'"),
        "{reason}"
    );
    // garbage between sections
    let (line, reason) = error(src.replace("$EndEntities\n", "$EndEntities\nxyz\n"));
    assert_eq!(line, line_of(&src, "$EndEntities") + 1);
    assert_eq!(
        reason,
        "expected a section header such as $Nodes, found 'xyz'"
    );
    // no elements
    let (_, reason) = error(src.replace(
        &src[src.find("$Elements").unwrap()..],
        "$Elements\n0 0 0 0\n$EndElements\n",
    ));
    assert_eq!(reason, "the mesh has no elements");
    // physical names
    let p = line_of(&src, "1 1 \"bottom\"");
    let (line, reason) = error(square_with_line(p, "1 bottom"));
    assert_eq!(line, p);
    assert_eq!(
        reason,
        "$PhysicalNames: expected 'dimension tag \"name\"', found '1 bottom'"
    );
}

#[test]
fn only_lines_is_an_error_with_a_hint() {
    let src = text("mesh_square.msh");
    // drop the triangle block: 5 blocks, 9 elements
    let e = line_of(&src, "$Elements");
    let tri = line_of(&src, "2 1 2 14");
    let mut lines: Vec<&str> = src.lines().collect();
    lines.drain(tri - 1..tri + 14);
    lines[e] = "5 9 1 9";
    let (line, reason) = error(lines.join("\n") + "\n");
    assert_eq!(line, e);
    assert!(
        reason
            .starts_with("the file holds no triangles or tetrahedra (highest element dimension 1)"),
        "{reason}"
    );
}

#[test]
fn empty_triangle_block_does_not_make_a_2d_mesh() {
    let src = text("mesh_square.msh");
    let e = line_of(&src, "$Elements");
    let tri = line_of(&src, "2 1 2 14");
    let mut lines: Vec<&str> = src.lines().collect();
    lines.drain(tri..tri + 14);
    lines[tri - 1] = "2 1 2 0";
    lines[e] = "6 9 1 9";
    let (line, reason) = error(lines.join("\n") + "\n");
    assert_eq!(line, e);
    assert!(reason.contains("(highest element dimension 1)"), "{reason}");
}

#[test]
fn degenerate_cell_names_the_element() {
    // move node 10 (inside the square) onto the line through nodes 1 and 5 (y = 0):
    // elements 12 = (1, 5, 10) becomes flat
    let src = text("mesh_square.msh");
    let n = line_of(&src, "0.3749999999995795 0.3750000000004207 0");
    let c = square_with_line(n, "0.25 0 0");
    let (line, reason) = error(&c);
    let el = line_of(&src, "12 1 5 10");
    assert_eq!(line, el);
    assert!(
        reason.starts_with("element 12: degenerate (det J = 0"),
        "{reason}"
    );
}

#[test]
fn error_display_has_path_line_reason() {
    let e = parse_gmsh(
        square_with_line(2, "2.2 0 8").as_bytes(),
        Path::new("m.msh"),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("m.msh:2: MSH version 2.2 is not supported"),
        "{e}"
    );
}

#[test]
fn ascii_records_name_the_line_and_the_token() {
    let src = text("mesh_square.msh");
    // a node tag that is not a number
    let t = line_of(&src, "9");
    let (line, reason) = error(square_with_line(t, "abc"));
    assert_eq!(line, t);
    assert_eq!(
        reason,
        "expected one node tag (a positive integer) in node block 9 of 9, found 'abc': 'abc' \
         is not a non-negative integer"
    );
    // an element with a node tag too many, and one with a token that is not a tag
    let n = line_of(&src, "18 6 11 12");
    let (line, reason) = error(square_with_line(n, "18 6 11 12 13"));
    assert_eq!(line, n);
    assert_eq!(reason, "element 18 has 4 node tags; element type 2 needs 3");
    let (line, reason) = error(square_with_line(n, "18 6 x 12"));
    assert_eq!(line, n);
    assert_eq!(
        reason,
        "expected the tag and 3 node tags of element 9 of element block 6 of 6, found \
         '18 6 x 12': 'x' is not a non-negative integer"
    );
    // headers: a value missing, a negative count
    let h = line_of(&src, "$Nodes") + 1;
    let (line, reason) = error(square_with_line(h, "9 12 1"));
    assert_eq!(line, h);
    assert_eq!(
        reason,
        "expected the $Nodes header 'numEntityBlocks numNodes minNodeTag maxNodeTag', found \
         '9 12 1'"
    );
    let (line, reason) = error(square_with_line(h, "9 -12 1 12"));
    assert_eq!(line, h);
    assert!(
        reason.ends_with("found '9 -12 1 12': '-12' is not a non-negative integer"),
        "{reason}"
    );
    let b = line_of(&src, "2 1 2 14");
    let (line, reason) = error(square_with_line(b, "2 1 2"));
    assert_eq!(line, b);
    assert_eq!(
        reason,
        "expected the header of element block 6 of 6 'entityDim entityTag elementType \
         numElementsInBlock', found '2 1 2'"
    );
    // an entity without its physical tag
    let p = line_of(&src, "1 0 0 0 1 5");
    let (line, reason) = error(square_with_line(p, "1 0 0 0 1"));
    assert_eq!(line, p);
    assert_eq!(
        reason,
        "expected point entity 1 of 4 'pointTag X Y Z numPhysicalTags physicalTag…', found \
         '1 0 0 0 1'"
    );
    // a section that ends early: the last coordinate line removed
    let end = line_of(&src, "$EndNodes");
    let mut lines: Vec<&str> = src.lines().collect();
    lines.remove(end - 2);
    let (line, reason) = error(lines.join("\n") + "\n");
    assert_eq!(line, end - 1);
    assert_eq!(
        reason,
        "$Nodes ends early: expected 3 coordinates 'x y z' for node 12 of node block 9 of 9"
    );
    // more physical names announced than given
    let p = line_of(&src, "$PhysicalNames") + 1;
    let (line, reason) = error(square_with_line(p, "5"));
    assert_eq!(line, line_of(&src, "$EndPhysicalNames"));
    assert_eq!(reason, "$PhysicalNames announces 5 names but holds 4");
    // a second-order element whose mid-edge node does not exist
    let disk = text("mesh_disk_p2.msh");
    let block = line_of(&disk, "2 1 9 14");
    let lines: Vec<&str> = disk.lines().collect();
    let first: Vec<&str> = lines[block].split_whitespace().collect();
    let bad = format!("{} 999", first[..6].join(" "));
    let changed = disk.replacen(lines[block], &bad, 1);
    let (line, reason) = error(changed);
    assert_eq!(line, block + 1);
    assert_eq!(
        reason,
        format!(
            "element {} refers to node 999, which is not in the $Nodes section",
            first[0]
        )
    );
}

/// `bytes` with the `size_t` (8 bytes, little-endian) at `at` set to `v`.
fn with_size(bytes: &[u8], at: usize, v: u64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    b
}

#[test]
fn binary_errors_name_the_section_and_the_offset() {
    let bin = std::fs::read(data("mesh_square_binary.msh")).unwrap();
    // $Nodes: header (4 size_t), block header (3 int, 1 size_t), 1 tag, 3 doubles, ...
    let nodes = find(&bin, b"$Nodes\n", 0).unwrap() + 7;
    let (block1, tag1) = (nodes + 32, nodes + 52);
    let (block2, tag2) = (tag1 + 32, tag1 + 52);
    let located =
        |at: usize, section: &str| format!("(binary file: section ${section}, byte offset {at})");
    let (line, reason) = error(with_size(&bin, tag1, 0));
    assert_eq!(line, 0);
    assert_eq!(
        reason,
        format!(
            "expected one node tag (a positive integer) in node block 1 of 9, found 0 {}",
            located(tag1, "Nodes")
        )
    );
    let (_, reason) = error(with_size(&bin, tag2, 1));
    assert_eq!(
        reason,
        format!(
            "duplicate node tag 1 (first defined at byte offset {tag1}) {}",
            located(tag2, "Nodes")
        )
    );
    // a node block that claims more nodes than the section holds
    let (_, reason) = error(with_size(&bin, block2 + 12, 1000));
    assert_eq!(
        reason,
        format!(
            "truncated binary $Nodes section: the node tags of node block 2 of 9 is missing \
             (8000 bytes needed, {} left) {}",
            find(&bin, b"\n$EndNodes", 0).unwrap() - (block2 + 20),
            located(block2 + 20, "Nodes")
        )
    );
    // a parametric block
    let mut b = bin.clone();
    b[block1 + 8] = 1;
    let (_, reason) = error(&b);
    assert!(
        reason.starts_with("parametric node coordinates are not supported"),
        "{reason}"
    );
    // data after the blocks
    let end = find(&bin, b"\n$EndNodes", 0).unwrap();
    let mut b = bin[..end].to_vec();
    b.extend_from_slice(b"\x07\x00");
    b.extend_from_slice(&bin[end..]);
    let (_, reason) = error(&b);
    assert_eq!(
        reason,
        format!(
            "unexpected data after the 9 node blocks the $Nodes header announces {}",
            located(end, "Nodes")
        )
    );
    // $Elements: an unsupported type in the first block header
    let elements = find(&bin, b"$Elements\n", 0).unwrap() + 10;
    let mut b = bin.clone();
    b[elements + 32 + 8] = 3;
    let (line, reason) = error(&b);
    assert_eq!(line, 0);
    assert!(
        reason.starts_with("element type 3 (4-node quadrangle) is not supported"),
        "{reason}"
    );
    assert!(
        reason.ends_with(&located(elements + 32, "Elements")),
        "{reason}"
    );
}
