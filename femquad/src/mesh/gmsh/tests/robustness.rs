//! No input makes the reader panic: every prefix of the test files, and
//! seeded random byte changes of them and of their re-encodings, give `Ok`
//! or an [`Error::MeshFile`].

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::writer::{ENCODINGS, write_msh};
use super::*;
use crate::rng::Rng;

const FILES: [&str; 7] = [
    "mesh_square.msh",
    "mesh_square_binary.msh",
    "mesh_square_clockwise.msh",
    "mesh_cube.msh",
    "mesh_cube_binary.msh",
    "mesh_cube_p2_binary.msh",
    "mesh_disk_p2.msh",
];

/// The test files, and the square written in every encoding (big-endian
/// and 4-byte `size_t` included).
fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = FILES
        .iter()
        .map(|&name| (name.to_string(), std::fs::read(data(name)).unwrap()))
        .collect();
    let square = read("mesh_square.msh");
    for enc in ENCODINGS {
        files.push((format!("square as {enc:?}"), write_msh(&square, enc)));
    }
    files
}

/// Parses `bytes`, with and without reorientation; the result must be
/// `Ok` or a [`Error::MeshFile`], and parsing must not panic. `case` names
/// the input in a failure.
fn check(bytes: &[u8], case: impl Fn() -> String) {
    for reorient in [false, true] {
        let options = GmshOptions {
            reorient,
            ..GmshOptions::default()
        };
        match catch_unwind(AssertUnwindSafe(|| {
            parse_gmsh_with(bytes, "fuzz.msh", &options)
        })) {
            Ok(Ok(_) | Err(Error::MeshFile { .. })) => {}
            Ok(Err(other)) => panic!("{} ({options:?}): not a MeshFile error: {other}", case()),
            Err(_) => panic!("{} ({options:?}): the reader panicked", case()),
        }
    }
}

#[test]
fn truncated_prefixes_never_panic() {
    for (name, bytes) in inputs() {
        for len in 0..bytes.len() {
            check(&bytes[..len], || format!("{name} cut to {len} bytes"));
        }
    }
}

#[test]
fn random_byte_changes_never_panic() {
    let mut rng = Rng::new(20_250_610);
    for (name, bytes) in inputs() {
        for case in 0..2000 {
            let mut b = bytes.clone();
            let mut changes = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(b.len());
                b[i] = match rng.below(3) {
                    0 => rng.next_u64() as u8,
                    1 => b[i] ^ (1 << rng.below(8)),
                    _ => b"0123456789 -.\n$e"[rng.below(16)],
                };
                changes.push(i);
            }
            check(&b, || {
                format!("{name}, case {case}: bytes {changes:?} changed")
            });
        }
    }
}

#[test]
fn find_agrees_with_a_naive_search() {
    let mut rng = Rng::new(7);
    for case in 0..300 {
        let len = rng.below(400);
        let hay: Vec<u8> = (0..len).map(|_| b"ab$\n"[rng.below(4)]).collect();
        let needle: &[u8] = [&b"\n$a"[..], b"$", b"a$b", b"ab", b"\n$ab$"][case % 5];
        let from = rng.below(len + 2);
        let naive = (from..=len.saturating_sub(needle.len()))
            .find(|&i| hay.len() >= needle.len() && hay[i..].starts_with(needle));
        assert_eq!(find(&hay, needle, from), naive, "case {case}");
    }
}
