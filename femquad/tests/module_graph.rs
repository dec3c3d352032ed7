//! The module graph of `femquad/src` has no cycle.
//!
//! Every path that names another module of the crate (`crate::a::b…`,
//! `super::x…`, `self::x…`, in `use` lines and inline) is an edge from the
//! module of the file it appears in to the module that defines what it names:
//! the longest prefix that is a module file, followed through re-exports. A
//! name that a module imports (`pub use a::b::Name;`, `pub use a::{X, Y as
//! Z};`, `pub use a::*;`, or a private `use` that its descendants name through
//! `super::`) resolves to where the item really lives, so `crate::Error`
//! (re-exported at the root) is an edge to `error`, and `super::Item` naming a
//! re-export in the parent's `mod.rs` is an edge to the sibling that defines
//! `Item`. Two graphs must be acyclic:
//!
//! * the **top-level** modules (`mesh`, `space`, `opencl`, `solve`, …);
//! * the **siblings** inside every module directory (e.g. `opencl::shape`,
//!   `opencl::tune`, `opencl::residual`): an edge `a → b` when code under
//!   `a` names something under `b`. A child naming an item of its parent's
//!   own file (`super::Item` defined in `mod.rs`), or a parent naming (or
//!   re-exporting) its children, is not a sibling edge.
//!
//! A third rule is the backend seam: the algorithm modules (see
//! [`BACKEND_FREE`]) name no backend module (`crate::opencl`,
//! `crate::native`), neither in a `use` nor inline; they reach the backends
//! only through `crate::backend`.
//!
//! Comments, string literals (raw ones too) and char literals are skipped;
//! `super::` inside an inline module (`mod tests { use super::X; }`) is
//! relative to that inline module. Test modules (`#[cfg(test)]` blocks at the
//! end of a file, by convention `mod tests`) are included: a test that needs a
//! cycle is a design smell too. Paths written by macros (`::femquad::…` in the
//! code `#[pointwise]` generates) are not seen.

#[path = "module_graph/checker.rs"]
mod checker;

use checker::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[test]
fn the_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graphs = sibling_graphs(&src);
    assert!(
        graphs.get("").is_some_and(|g| g.len() > 10),
        "the top-level graph should have edges: {graphs:?}"
    );
    let cycles = cycles(&graphs);
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

/// The algorithm modules, which name no backend module ([`BACKENDS`]); they
/// reach a backend through `crate::backend` only.
const BACKEND_FREE: [&str; 4] = ["vector", "operator", "multigrid", "solve"];

/// The backend modules.
const BACKENDS: [&str; 2] = ["opencl", "native"];

/// The paths in modules under one of `algorithms` that name a module under
/// one of [`BACKENDS`], as `module names path` lines.
fn backend_names(files: &[(Vec<String>, String)], algorithms: &[&str]) -> Vec<String> {
    crate_paths(files)
        .into_iter()
        .filter(|p| {
            p.from
                .first()
                .is_some_and(|m| algorithms.contains(&m.as_str()))
        })
        .filter(|p| {
            p.path
                .first()
                .is_some_and(|m| BACKENDS.contains(&m.as_str()))
        })
        .map(|p| {
            format!(
                "`{}` names `crate::{}`",
                p.from.join("::"),
                p.path.join("::")
            )
        })
        .collect()
}

#[test]
fn algorithms_name_no_backend() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = backend_names(&crate_files(&src), &BACKEND_FREE);
    assert!(
        found.is_empty(),
        "algorithm modules naming a backend (go through `crate::backend`):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_backend_rule_sees_uses_inline_paths_and_super() {
    let files: Vec<(Vec<String>, String)> = [
        (
            "",
            "pub mod backend; pub mod multigrid; pub mod native; pub mod opencl;",
        ),
        (
            "backend",
            "pub use crate::native::Execution; pub struct Vector;",
        ),
        ("native", "pub enum Execution {} pub fn run() {}"),
        ("opencl", "pub struct Device;"),
        (
            "multigrid",
            "pub mod a; pub mod b; use crate::backend::{Execution, Vector};",
        ),
        (
            "multigrid::a",
            "use crate::opencl::Device; // crate::native::run\n",
        ),
        (
            "multigrid::b",
            "fn f() { super::super::native::run(); let _ = \"crate::opencl\"; }",
        ),
    ]
    .iter()
    .map(|(m, code)| {
        let module = m.split("::").filter(|s| !s.is_empty()).map(String::from);
        (module.collect(), code.to_string())
    })
    .collect();
    assert_eq!(
        backend_names(&files, &["multigrid"]),
        [
            "`multigrid::a` names `crate::opencl::Device`",
            "`multigrid::b` names `crate::native::run`",
        ]
    );
}

/// The library crates of the workspace, by their source root relative to
/// the workspace: `femquad`, the macro crate, the benchmark and difftest
/// crates, and the root package's `femquad_examples`.
const LIBRARIES: [&str; 5] = [
    "femquad/src",
    "femquad-macros/src",
    "femquad-bench/src",
    "pointwise-difftest/src",
    "examples/support",
];

/// Sibling graphs of the library whose sources are in `src`: its files but
/// the binary crates beside it (`main.rs`, `bin/`), which are roots of their
/// own.
fn library_graphs(src: &Path) -> Graphs {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let files: Vec<(Vec<String>, String)> = files
        .iter()
        .filter(|f| {
            let rel = f.strip_prefix(src).unwrap();
            rel != Path::new("main.rs") && !rel.starts_with("bin")
        })
        .map(|f| (module_of(src, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    sibling_graphs_of(&files)
}

/// No library of the workspace has a module cycle (femquad's own graph is
/// checked above with the expectation that it has edges at all).
#[test]
fn every_library_of_the_workspace_has_an_acyclic_module_graph() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for lib in LIBRARIES {
        let graphs = library_graphs(&workspace.join(lib));
        assert!(!graphs.is_empty(), "{lib}: no module graph");
        found.extend(cycles(&graphs).into_iter().map(|c| format!("{lib}: {c}")));
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

/// Every source file, stripped, has balanced braces: no literal or comment
/// was misread (a `'"'` read as the start of a string unbalances them).
#[test]
fn stripped_sources_have_balanced_braces() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in &files {
        let code = strip(&std::fs::read_to_string(file).unwrap());
        let mut depth = 0i64;
        for c in code.chars() {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            assert!(depth >= 0, "{}: unbalanced `}}`", file.display());
        }
        assert_eq!(depth, 0, "{}: unbalanced `{{`", file.display());
    }
}

#[test]
fn the_checker_finds_cycles_and_parses_grouped_paths() {
    let code = strip(
        "use crate::{a::x, b::{c, d::e}}; // crate::zz\n let s = \"crate::q\"; super::f::g();",
    );
    assert_eq!(
        paths_after(&code, "crate::"),
        [vec!["a", "x"], vec!["b", "c"], vec!["b", "d", "e"]]
    );
    assert_eq!(paths_after(&code, "super::"), [vec!["f", "g"]]);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn char_and_raw_string_literals_hide_no_path_and_lifetimes_stay() {
    let code = strip(
        r####"let q = '"'; crate::a::x(); let e = ['\'', '\\', '\n', '\u{22}', b'"'];
        fn f<'a>(s: &'a str) -> &'static str { 'outer: loop { break 'outer; } }
        let r = r#"crate::no "quoted" "#; let r2 = br"crate::no"; let t = "\"crate::no";
        crate::b::y(); let r#type = 1; crate::c::z"####,
    );
    assert_eq!(
        paths_after(&code, "crate::"),
        [vec!["a", "x"], vec!["b", "y"], vec!["c", "z"]]
    );
    assert!(
        code.contains("fn f<'a>(s: &'a str) -> &'static str"),
        "{code}"
    );
    assert!(code.contains("'outer: loop { break 'outer; }"), "{code}");
    assert!(code.contains("let r#type = 1;"), "{code}");
}

/// A crate given as `(module path, code)` pairs, e.g. `("a::b", "…")`.
fn graphs_of(files: &[(&str, &str)]) -> Graphs {
    let files: Vec<(Vec<String>, String)> = files
        .iter()
        .map(|(m, code)| {
            let module = m.split("::").filter(|s| !s.is_empty()).map(String::from);
            (module.collect(), code.to_string())
        })
        .collect();
    sibling_graphs_of(&files)
}

fn edges(graphs: &Graphs, parent: &str, from: &str) -> Vec<String> {
    let to = graphs.get(parent).and_then(|g| g.get(from));
    to.into_iter().flatten().cloned().collect()
}

#[test]
fn re_exports_resolve_to_the_module_that_defines_the_item() {
    // the root re-exports `a::Thing`, `b::Gadget` (renamed) and `c`'s items
    // (glob); a private import at the root is named from a child as `super::`
    let graphs = graphs_of(&[
        (
            "",
            "pub mod a; pub mod b; pub mod c; pub mod d;\n\
             pub use a::Thing;\npub use b::{Gadget as Widget, Other};\npub use c::*;\n\
             use crate::d::Hidden;",
        ),
        ("a", "pub struct Thing; fn f(_: crate::Widget) {}"),
        (
            "b",
            "pub struct Gadget; pub struct Other; fn g(_: crate::Thing) {}",
        ),
        ("c", "pub fn helper() {}"),
        (
            "d",
            "pub struct Hidden; fn h() { crate::helper(); let _ = super::Hidden; }",
        ),
    ]);
    assert_eq!(edges(&graphs, "", "a"), ["b"]);
    assert_eq!(edges(&graphs, "", "b"), ["a"]);
    assert_eq!(edges(&graphs, "", "d"), ["c"]);
    assert_eq!(cycles(&graphs), ["in `crate`: a → b → a"]);

    // `super::Item` naming a re-export in the parent's mod.rs is an edge to
    // the sibling that defines it; inside an inline module, `super::` is the
    // file's own module
    let graphs = graphs_of(&[
        ("", "pub mod p;"),
        (
            "p",
            "mod x; mod y; mod z;\npub use x::X;\npub(crate) use y::{self, Y};",
        ),
        ("p::x", "use super::Y; pub struct X;"),
        ("p::y", "pub struct Y; fn f(_: super::X) {}"),
        (
            "p::z",
            "pub struct Z;\n#[cfg(test)]\nmod tests { use super::Z; fn t(_: super::super::y::Y) {} }",
        ),
    ]);
    assert_eq!(edges(&graphs, "p", "x"), ["y"]);
    assert_eq!(edges(&graphs, "p", "y"), ["x"]);
    assert_eq!(edges(&graphs, "p", "z"), ["y"]);
    assert_eq!(cycles(&graphs), ["in `p`: x → y → x"]);
}

#[test]
fn use_trees_bind_names() {
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        use_tree(" {a::{self, b::C as D, e::*, F}, ::g::H}"),
        [
            (s(&["a"]), Some("a".into())),
            (s(&["a", "b", "C"]), Some("D".into())),
            (s(&["a", "e"]), None),
            (s(&["a", "F"]), Some("F".into())),
            (s(&["g", "H"]), Some("H".into())),
        ]
    );
    assert_eq!(
        absolute(&s(&["p", "q"]), &s(&["super", "super", "r"])),
        s(&["r"])
    );
}

#[test]
#[ignore = "prints the graphs: cargo test -p femquad --test module_graph -- --ignored --nocapture"]
fn print_the_module_graph() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (parent, graph) in sibling_graphs(&src) {
        println!("[{}]", if parent.is_empty() { "crate" } else { &parent });
        for (from, to) in graph {
            println!(
                "  {from} → {}",
                to.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
    }
}
