//! The module graph of `femquad/src` has no cycle.
//!
//! Every path that names another module of the crate (`crate::a::b…`,
//! `super::x…`, in `use` lines and inline) is an edge from the module of the
//! file it appears in to the module it names (the longest prefix that is a
//! module file). Two graphs must be acyclic:
//!
//! * the **top-level** modules (`mesh`, `space`, `opencl`, `solve`, …);
//! * the **siblings** inside every module directory (e.g. `opencl::shape`,
//!   `opencl::tune`, `opencl::residual`): an edge `a → b` when code under
//!   `a` names something under `b`. A child naming an item of its parent's
//!   own file (`super::Item` defined in `mod.rs`), or a parent naming (or
//!   re-exporting) its children, is not a sibling edge.
//!
//! Comments and string literals are skipped; test modules (`#[cfg(test)]`
//! blocks at the end of a file, by convention `mod tests`) are included: a
//! test that needs a cycle is a design smell too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path of a source file: `src/opencl/shape.rs` → `["opencl", "shape"]`,
/// `src/opencl/mod.rs` → `["opencl"]`, `src/lib.rs` → `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments, string and char literals.
fn strip(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i..].starts_with(b"r#\"") {
            let end = code[i + 3..].find("\"#").map_or(b.len(), |e| i + 3 + e + 2);
            i = end;
            out.push_str("\"\"");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// The first segments of every path starting at `start` in `code`
/// (`crate::a::b` → `[a, b]`; `crate::{a::x, b}` → `[a, x]`, `[b]`).
fn paths_after(code: &str, start: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find(start) {
        let at = from + k;
        from = at + start.len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        collect(&code[from..], &mut Vec::new(), &mut found);
    }
    found
}

/// Parses `a::b::{c, d::e}` at the start of `rest` (after a `::`), pushing
/// every complete path (prefix + segments) into `found`.
fn collect(rest: &str, prefix: &mut Vec<String>, found: &mut Vec<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        // split the brace group at top-level commas
        let mut depth = 0;
        let mut item_start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    collect(&inner[item_start..i], &mut prefix.clone(), found);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    collect(&inner[item_start..i], &mut prefix.clone(), found);
                    item_start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let ident: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if ident.is_empty() {
        if !prefix.is_empty() {
            found.push(prefix.clone());
        }
        return;
    }
    prefix.push(ident.clone());
    let after = &rest[ident.len()..];
    match after.strip_prefix("::") {
        Some(next) => collect(next, prefix, found),
        None => found.push(prefix.clone()),
    }
}

/// The longest prefix of `path` that is a module.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_default()
}

/// A cycle in `graph`, if any (depth-first search).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0
            && let Some(c) = visit(n, graph, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// Sibling graphs by parent module (`""` is the crate root, i.e. the
/// top-level modules).
fn sibling_graphs(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let from = module_of(src, file);
        let code = strip(&std::fs::read_to_string(file).unwrap());
        let mut targets: Vec<Vec<String>> = paths_after(&code, "crate::");
        let parent = &from[..from.len().saturating_sub(1)];
        // in mod.rs/lib.rs, `super::` is the module's parent; elsewhere the file's parent
        let is_dir_module = file.ends_with("mod.rs") || file.ends_with("lib.rs");
        let super_base: Vec<String> = if is_dir_module {
            parent.to_vec()
        } else {
            from[..from.len() - 1].to_vec()
        };
        for p in paths_after(&code, "super::") {
            targets.push(super_base.iter().cloned().chain(p).collect());
        }
        for t in targets {
            let to = resolve(&t, &modules);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            // siblings below the common ancestor: both must go deeper than it
            if common < from.len() && common < to.len() {
                graphs
                    .entry(from[..common].join("::"))
                    .or_default()
                    .entry(from[common].clone())
                    .or_default()
                    .insert(to[common].clone());
            }
        }
    }
    graphs
}

#[test]
fn the_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graphs = sibling_graphs(&src);
    assert!(
        graphs.get("").is_some_and(|g| g.len() > 10),
        "the top-level graph should have edges: {graphs:?}"
    );
    let mut cycles = Vec::new();
    for (parent, graph) in &graphs {
        if let Some(c) = find_cycle(graph) {
            let name = if parent.is_empty() { "crate" } else { parent };
            cycles.push(format!("in `{name}`: {}", c.join(" → ")));
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
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
