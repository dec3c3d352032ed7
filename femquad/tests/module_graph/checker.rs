//! The checker of `module_graph.rs`: sources stripped of comments and
//! literals, the paths and `use` trees in them, re-exports followed to the
//! module that defines an item, and the cycle search over the graphs.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Module path of a source file: `src/opencl/shape.rs` → `["opencl", "shape"]`,
/// `src/opencl/mod.rs` → `["opencl"]`, `src/lib.rs` → `[]`.
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
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

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The code of a file without comments, string literals (`"…"`, `b"…"`,
/// `r"…"`, `r#"…"#`, …; each becomes `""`) and char literals (`'a'`, `'\''`,
/// `'"'`, `'\u{22}'`, `b'x'`; each becomes `' '`). Lifetimes and labels
/// (`'a`, `'static`, `<'a>`) are kept.
pub fn strip(code: &str) -> String {
    let c: Vec<char> = code.chars().collect();
    let at = |i: usize, s: &str| {
        s.chars()
            .enumerate()
            .all(|(k, ch)| c.get(i + k) == Some(&ch))
    };
    let ident_at = |i: Option<usize>| i.and_then(|i| c.get(i)).is_some_and(|&ch| is_ident(ch));
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < c.len() {
        // `r`, `br` or `cr` starting a raw string: the `r` not inside an identifier
        let raw_start = c[i] == 'r'
            && (!ident_at(i.checked_sub(1))
                || (matches!(c[i - 1], 'b' | 'c') && !ident_at(i.checked_sub(2))));
        let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
        if at(i, "//") {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            let mut depth = 0;
            while i < c.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if raw_start && c.get(i + 1 + hashes) == Some(&'"') {
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            i += 2 + hashes;
            while i < c.len() && !at(i, &close) {
                i += 1;
            }
            i += close.chars().count();
            out.push_str("\"\"");
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            // an escaped char literal: `'\''`, `'\\'`, `'\n'`, `'\x22'`, `'\u{22}'`
            i += 3;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            // a plain char literal, `'a'` or `'"'` (a lifetime is never followed by `'`)
            i += 3;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Every path starting at `start` in `code` (`crate::a::b` → `[a, b]`;
/// `crate::{a::x, b}` → `[a, x]`, `[b]`), with the byte offset of its start.
pub fn paths_at(code: &str, start: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find(start) {
        let at = from + k;
        from = at + start.len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let mut paths = Vec::new();
        collect(&code[from..], &mut Vec::new(), &mut paths);
        found.extend(paths.into_iter().map(|p| (at, p)));
    }
    found
}

/// The paths of [`paths_at`], without their offsets.
pub fn paths_after(code: &str, start: &str) -> Vec<Vec<String>> {
    paths_at(code, start).into_iter().map(|(_, p)| p).collect()
}

/// Parses `a::b::{c, d::e}` at the start of `rest` (after a `::`), pushing
/// every complete path (prefix + segments) into `found`.
pub fn collect(rest: &str, prefix: &mut Vec<String>, found: &mut Vec<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        for item in brace_items(inner) {
            collect(item, &mut prefix.clone(), found);
        }
        return;
    }
    let ident: String = rest.chars().take_while(|&c| is_ident(c)).collect();
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

/// The comma-separated items of a brace group, `inner` starting just after
/// its `{` (nested groups stay whole).
pub fn brace_items(inner: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut item_start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&inner[item_start..i]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[item_start..i]);
                item_start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// What a file declares at its top level (outside any braces), and where its
/// inline modules are.
#[derive(Default)]
pub struct FileItems {
    /// The trees of its `use` declarations (the text between `use` and `;`).
    pub uses: Vec<String>,
    /// The names of the items it defines (`fn`, `struct`, `mod`, …).
    pub defined: BTreeSet<String>,
    /// Inline modules (`mod tests { … }`): the byte range of the body and the
    /// module path below the file's module (outermost first).
    pub inline: Vec<(Range<usize>, Vec<String>)>,
}

/// Scans stripped code (see [`strip`]) for its [`FileItems`].
pub fn file_items(code: &str) -> FileItems {
    // words and single punctuation characters, with their byte offsets
    let mut toks: Vec<(usize, String)> = Vec::new();
    let mut chars = code.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if is_ident(c) {
            let mut word = c.to_string();
            while let Some(&(_, d)) = chars.peek().filter(|(_, d)| is_ident(*d)) {
                word.push(d);
                chars.next();
            }
            toks.push((at, word));
        } else if !c.is_whitespace() {
            toks.push((at, c.to_string()));
        }
    }
    let word = |k: usize| toks.get(k).map_or("", |t| t.1.as_str());
    let named = |k: usize| toks.get(k).is_some_and(|t| t.1.starts_with(is_ident));

    let mut items = FileItems::default();
    let mut depth = 0;
    // inline modules being read: (depth inside the body, body start, name)
    let mut open: Vec<(usize, usize, String)> = Vec::new();
    let mut pending: Option<String> = None;
    let mut k = 0;
    while k < toks.len() {
        let (at, w) = (toks[k].0, word(k));
        match w {
            "{" => {
                depth += 1;
                if let Some(name) = pending.take() {
                    open.push((depth, at + 1, name));
                }
            }
            "}" => {
                if open.last().is_some_and(|o| o.0 == depth) {
                    let (_, start, _) = open.last().unwrap();
                    let path = open.iter().map(|o| o.2.clone()).collect();
                    items.inline.push((*start..at, path));
                    open.pop();
                }
                depth -= 1;
            }
            "mod" if named(k + 1) => {
                if word(k + 2) == "{" {
                    pending = Some(word(k + 1).to_string());
                }
                if depth == 0 {
                    items.defined.insert(word(k + 1).to_string());
                }
            }
            "use" if depth == 0 => {
                let end = (k..toks.len())
                    .find(|&e| word(e) == ";")
                    .unwrap_or(toks.len());
                let stop = toks.get(end).map_or(code.len(), |t| t.0);
                items.uses.push(code[at + w.len()..stop].to_string());
                k = end;
            }
            "fn" | "struct" | "enum" | "union" | "trait" | "type" | "const" | "static"
                if depth == 0 =>
            {
                let name = if word(k + 1) == "mut" { k + 2 } else { k + 1 };
                if named(name) {
                    items.defined.insert(word(name).to_string());
                }
            }
            "macro_rules" if depth == 0 && word(k + 1) == "!" && named(k + 2) => {
                items.defined.insert(word(k + 2).to_string());
            }
            _ => {}
        }
        k += 1;
    }
    items
}

/// What a `use` tree imports: each imported path, with the name it binds
/// (`None` for a glob, `a::*`). `a::{self, B as C}` → `([a], a)`, `([a, B], C)`.
pub fn use_tree(text: &str) -> Vec<(Vec<String>, Option<String>)> {
    pub fn walk(s: &str, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
        let s = s.trim_start();
        let s = s.strip_prefix("::").unwrap_or(s).trim_start();
        if let Some(inner) = s.strip_prefix('{') {
            for item in brace_items(inner) {
                walk(item, prefix.clone(), out);
            }
            return;
        }
        if s.starts_with('*') {
            out.push((prefix, None));
            return;
        }
        let ident: String = s.chars().take_while(|&c| is_ident(c)).collect();
        if ident.is_empty() {
            return;
        }
        let rest = s[ident.len()..].trim_start();
        if let Some(next) = rest.strip_prefix("::") {
            let mut prefix = prefix;
            prefix.push(ident);
            walk(next, prefix, out);
            return;
        }
        let (path, mut name) = if ident == "self" {
            let name = prefix.last().cloned().unwrap_or_default();
            (prefix, name)
        } else {
            let mut path = prefix;
            path.push(ident.clone());
            (path, ident)
        };
        if let Some(alias) = rest.strip_prefix("as")
            && alias.starts_with(char::is_whitespace)
        {
            name = alias.trim().chars().take_while(|&c| is_ident(c)).collect();
        }
        if !name.is_empty() && name != "_" {
            out.push((path, Some(name)));
        }
    }
    let mut out = Vec::new();
    walk(text, Vec::new(), &mut out);
    out
}

/// `path` as written in module `here`, from the crate root: `crate::`,
/// `self::` and (repeated) `super::` are replaced; any other first segment is
/// taken as a name in `here` (a child module, an imported name, or something
/// outside the crate such as `std`, which [`Crate::resolve`] stops at `here`).
pub fn absolute(here: &[String], path: &[String]) -> Vec<String> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (here.to_vec(), &path[1..]),
        _ => (here.to_vec(), path),
    };
    while let Some((first, tail)) = rest.split_first()
        && first == "super"
    {
        base.pop();
        rest = tail;
    }
    base.extend(rest.iter().cloned());
    base
}

/// The crate's modules and what each of them imports and defines.
#[derive(Default)]
pub struct Crate {
    /// The module files.
    pub modules: BTreeSet<Vec<String>>,
    /// Names a module imports (`use` at its top level), to the absolute path
    /// of what they name.
    pub imports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    /// Glob imports of a module (`use a::*`), absolute.
    pub globs: BTreeMap<Vec<String>, Vec<Vec<String>>>,
    /// Names a module's file defines.
    pub defined: BTreeMap<Vec<String>, BTreeSet<String>>,
}

impl Crate {
    pub fn new(files: &[(Vec<String>, FileItems)]) -> Self {
        let mut krate = Crate {
            modules: files.iter().map(|(m, _)| m.clone()).collect(),
            ..Crate::default()
        };
        for (module, items) in files {
            for text in &items.uses {
                for (path, name) in use_tree(text) {
                    let target = absolute(module, &path);
                    match name {
                        Some(name) => {
                            let imports = krate.imports.entry(module.clone()).or_default();
                            imports.insert(name, target);
                        }
                        None => krate.globs.entry(module.clone()).or_default().push(target),
                    }
                }
            }
            krate.defined.insert(module.clone(), items.defined.clone());
        }
        krate
    }

    /// Whether `module` has a name `name` of its own or imported by name.
    pub fn has(&self, module: &[String], name: &str) -> bool {
        self.defined.get(module).is_some_and(|d| d.contains(name))
            || self
                .imports
                .get(module)
                .is_some_and(|i| i.contains_key(name))
    }

    /// The module that defines what the absolute `path` names: its longest
    /// prefix that is a module, followed through that module's imports (and
    /// glob imports) of the next segment.
    pub fn resolve(&self, path: &[String]) -> Vec<String> {
        self.resolve_within(path, 32)
    }

    pub fn resolve_within(&self, path: &[String], budget: usize) -> Vec<String> {
        let n = (0..=path.len())
            .rev()
            .find(|&n| self.modules.contains(&path[..n]))
            .unwrap_or(0);
        let module = path[..n].to_vec();
        let (Some(name), Some(budget)) = (path.get(n), budget.checked_sub(1)) else {
            return module;
        };
        if let Some(target) = self.imports.get(&module).and_then(|i| i.get(name)) {
            let via: Vec<String> = target.iter().chain(&path[n + 1..]).cloned().collect();
            return self.resolve_within(&via, budget);
        }
        if !self.has(&module, name) {
            for glob in self.globs.get(&module).into_iter().flatten() {
                if self.has(&self.resolve_within(glob, budget), name) {
                    let via: Vec<String> = glob.iter().chain(&path[n..]).cloned().collect();
                    return self.resolve_within(&via, budget);
                }
            }
        }
        module
    }
}

/// A cycle in `graph`, if any (depth-first search).
pub fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    pub fn visit(
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

pub type Graphs = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// Every path a crate given as its files (module path and code) writes:
/// the module of the file, the path from the crate root as written there
/// (`crate::`, `self::` and `super::` replaced; `super::` inside an inline
/// module is relative to it), and the module that defines what it names
/// ([`Crate::resolve`], through re-exports).
pub fn crate_paths(files: &[(Vec<String>, String)]) -> Vec<CratePath> {
    let stripped: Vec<(Vec<String>, String)> = files
        .iter()
        .map(|(m, code)| (m.clone(), strip(code)))
        .collect();
    let items: Vec<(Vec<String>, FileItems)> = stripped
        .iter()
        .map(|(m, code)| (m.clone(), file_items(code)))
        .collect();
    let krate = Crate::new(&items);
    let mut found = Vec::new();
    for ((from, code), (_, items)) in stripped.iter().zip(&items) {
        // the module a path is written in: the file's, or an inline one in it
        let here = |at: usize| -> Vec<String> {
            let inline = items.inline.iter().filter(|(body, _)| body.contains(&at));
            let below = inline.map(|(_, p)| p).max_by_key(|p| p.len());
            from.iter()
                .chain(below.into_iter().flatten())
                .cloned()
                .collect()
        };
        for start in ["crate", "super", "self"] {
            for (at, p) in paths_at(code, &format!("{start}::")) {
                let written: Vec<String> = std::iter::once(start.to_string()).chain(p).collect();
                let path = absolute(&here(at), &written);
                let target = krate.resolve(&path);
                found.push(CratePath {
                    from: from.clone(),
                    path,
                    target,
                });
            }
        }
    }
    found
}

/// A path written in a crate (see [`crate_paths`]).
pub struct CratePath {
    /// The module of the file it is written in.
    pub from: Vec<String>,
    /// The path from the crate root, as written.
    pub path: Vec<String>,
    /// The module that defines what it names.
    pub target: Vec<String>,
}

/// Sibling graphs by parent module (`""` is the crate root, i.e. the
/// top-level modules) of a crate given as its files: module path and code.
pub fn sibling_graphs_of(files: &[(Vec<String>, String)]) -> Graphs {
    let mut graphs = Graphs::new();
    for CratePath {
        from, target: to, ..
    } in crate_paths(files)
    {
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
    graphs
}

/// The files of the crate whose sources are in `src`: module path and code.
pub fn crate_files(src: &Path) -> Vec<(Vec<String>, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .iter()
        .map(|f| (module_of(src, f), std::fs::read_to_string(f).unwrap()))
        .collect()
}

/// Sibling graphs of the crate whose sources are in `src`.
pub fn sibling_graphs(src: &Path) -> Graphs {
    sibling_graphs_of(&crate_files(src))
}

/// The cycles of `graphs`, one line each.
pub fn cycles(graphs: &Graphs) -> Vec<String> {
    let mut cycles = Vec::new();
    for (parent, graph) in graphs {
        if let Some(c) = find_cycle(graph) {
            let name = if parent.is_empty() { "crate" } else { parent };
            cycles.push(format!("in `{name}`: {}", c.join(" → ")));
        }
    }
    cycles
}
