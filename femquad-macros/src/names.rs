//! Names: the generated struct's CamelCase name and the OpenCL C spelling of
//! user identifiers (unique per function, clear of C and OpenCL reserved
//! words, built-ins and the kernel's upper-case macros).

use std::collections::HashSet;

/// `lame_elasticity` → `LameElasticity`.
pub fn camel_case(snake: &str) -> String {
    let mut out = String::new();
    for part in snake.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// The names `use femquad::prelude::*` brings into scope in the type and
/// value namespaces (those of `femquad/src/prelude.rs`; a test checks the
/// two agree). A struct of one of these names next to that `use` would
/// silently shadow it.
pub const FEMQUAD_PRELUDE: &[&str] = &[
    "AuxSpace",
    "Backend",
    "Components",
    "DeviceSelector",
    "DirichletProblem",
    "Element",
    "Error",
    "Form",
    "FunctionSpace",
    "GmshMesh",
    "GmshOptions",
    "JacobianProducts",
    "Mesh",
    "MeshHierarchy",
    "MeshOptions",
    "MeshPart",
    "Operator",
    "Pointwise",
    "PointwiseEval",
    "Precision",
    "Preconditioner",
    "Quadrature",
    "Real",
    "Result",
    "Vector",
    "VectorOps",
    "Vtu",
    "VtuFormat",
];

/// The CamelCase names of Rust's prelude (edition 2024): its traits, types
/// and the variants of `Option` and `Result`.
pub const RUST_PRELUDE: &[&str] = &[
    "AsMut",
    "AsRef",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "Clone",
    "Copy",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// What a generated struct named `name` would shadow: `femquad::prelude`'s
/// item or the name of Rust's prelude, if any.
pub fn shadowed_prelude_name(name: &str) -> Option<String> {
    if FEMQUAD_PRELUDE.contains(&name) {
        Some(format!("`femquad::prelude::{name}`"))
    } else if RUST_PRELUDE.contains(&name) {
        Some(format!("`{name}` of Rust's prelude"))
    } else {
        None
    }
}

/// Words a C name must not be: the keywords of C99 and C11 (as clang
/// knows them in OpenCL mode), OpenCL C's keywords, qualifiers, built-in
/// types and reserved type names (OpenCL C 3.0 §6.1, §6.3, §6.12: images,
/// samplers, events, pipes, queues, atomics, …), what femquad's kernels
/// define, and the built-in functions the generated code calls. Vector
/// and matrix type names (`float4`, `double2x3`, …) are matched by pattern
/// in [`is_reserved`], names starting with `_` or `pw_` never reach C
/// unchanged (see [`CNames::fresh`]).
const C_RESERVED: &[&str] = &[
    // C99 and C11 keywords
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "asm",
    "typeof",
    // OpenCL C qualifiers and keywords
    "global",
    "local",
    "constant",
    "private",
    "generic",
    "kernel",
    "read_only",
    "write_only",
    "read_write",
    "uniform",
    "pipe",
    "vec_step",
    "complex",
    "imaginary",
    // OpenCL C scalar and opaque types, and reserved type names
    "bool",
    "half",
    "quad",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "sampler_t",
    "event_t",
    "queue_t",
    "ndrange_t",
    "clk_event_t",
    "reserve_id_t",
    "cl_mem_fence_flags",
    "memory_scope",
    "memory_order",
    "kernel_enqueue_flags_t",
    "clk_profiling_info",
    "image1d_t",
    "image1d_array_t",
    "image1d_buffer_t",
    "image2d_t",
    "image2d_array_t",
    "image2d_depth_t",
    "image2d_array_depth_t",
    "image2d_msaa_t",
    "image2d_array_msaa_t",
    "image2d_msaa_depth_t",
    "image2d_array_msaa_depth_t",
    "image3d_t",
    "atomic_int",
    "atomic_uint",
    "atomic_long",
    "atomic_ulong",
    "atomic_float",
    "atomic_double",
    "atomic_half",
    "atomic_intptr_t",
    "atomic_uintptr_t",
    "atomic_size_t",
    "atomic_ptrdiff_t",
    "atomic_flag",
    "true",
    "false",
    "NULL",
    // what femquad's kernels define, and functions the generated code calls
    "real",
    "fmod",
    "pown",
    "fabs",
    "fmin",
    "fmax",
    "fma",
    "convert_int_sat",
    "convert_ulong_sat",
    "printf",
    "get_global_id",
    "get_local_id",
    "get_group_id",
    "barrier",
];

/// Scalar types that have vector (`float4`) and matrix (`float4x4`,
/// reserved) forms.
const VECTOR_BASES: &[&str] = &[
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half",
    "bool", "quad",
];

/// `2, 3, 4, 8, 16` (vector lengths; OpenCL reserves all of them for
/// `booln`, `halfn`, `quadn` and the matrix forms `nxm`).
fn vector_suffix(rest: &str) -> bool {
    let n = |s: &str| matches!(s, "2" | "3" | "4" | "8" | "16");
    match rest.split_once('x') {
        Some((a, b)) => n(a) && n(b),
        None => n(rest),
    }
}

fn is_reserved(name: &str) -> bool {
    if C_RESERVED.contains(&name) || crate::math::FUNCTIONS.iter().any(|f| f.c == name) {
        return true;
    }
    // float2, int16, double2x3, …; also the `convert_…` and `as_…`
    // conversion built-ins.
    VECTOR_BASES
        .iter()
        .any(|b| name.strip_prefix(b).is_some_and(vector_suffix))
        || conversion(name)
}

/// The conversion built-ins `convert_…` and `as_…`.
fn conversion(name: &str) -> bool {
    name.starts_with("convert_") || name.starts_with("as_")
}

/// A C identifier for a Rust one: ASCII kept, other characters as `_uXXXX`.
pub fn ascii(rust: &str) -> String {
    let mut out = String::new();
    for c in rust.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push_str(&format!("_u{:04x}", c as u32));
        }
    }
    out
}

/// Hands out the C names of one function's identifiers.
#[derive(Default)]
pub struct CNames {
    used: HashSet<String>,
}

impl CNames {
    /// Marks `name` as taken (parameters of the fixed signature).
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// A fresh C name for the Rust identifier `rust`: the same text where
    /// possible. Upper-case names get a `pw_` prefix (the kernel's macros are
    /// upper case); reserved or already used names get a numeric suffix.
    pub fn fresh(&mut self, rust: &str) -> String {
        let mut base = ascii(rust);
        if base.is_empty() || base.starts_with('_') {
            base = format!("v{base}");
        } else if base.starts_with("pw_") || conversion(&base) {
            // `pw_` is the prefix of generated names; `convert_…` and `as_…`
            // are OpenCL built-ins.
            base = format!("v_{base}");
        }
        if !base.chars().any(|c| c.is_ascii_lowercase()) {
            base = format!("pw_{base}");
        }
        let mut name = base.clone();
        let mut k = 1;
        while is_reserved(&name) || self.used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel() {
        assert_eq!(camel_case("lame_elasticity"), "LameElasticity");
        assert_eq!(camel_case("_p2_flux"), "P2Flux");
        assert_eq!(camel_case("laplacian"), "Laplacian");
    }

    /// Every CamelCase name that `femquad/src/prelude.rs` re-exports is in
    /// [`FEMQUAD_PRELUDE`], and nothing else is.
    #[test]
    fn the_femquad_prelude_list_matches_the_prelude() {
        let src = include_str!("../../femquad/src/prelude.rs");
        let mut names: Vec<&str> = src
            .lines()
            .filter_map(|l| l.strip_prefix("pub use "))
            .flat_map(|l| {
                let l = l.trim_end_matches(';');
                let items = match l.split_once('{') {
                    Some((_, rest)) => rest.trim_end_matches('}'),
                    None => l.rsplit("::").next().unwrap_or(l),
                };
                items.split(',').map(str::trim)
            })
            .map(|item| item.rsplit(" as ").next().unwrap_or(item))
            .filter(|n| n.starts_with(|c: char| c.is_ascii_uppercase()))
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names, FEMQUAD_PRELUDE);
    }

    #[test]
    fn c_names_are_unique_and_safe() {
        let mut n = CNames::default();
        n.reserve("u");
        assert_eq!(n.fresh("mu"), "mu");
        assert_eq!(n.fresh("mu"), "mu_1");
        assert_eq!(n.fresh("u"), "u_1");
        assert_eq!(n.fresh("float"), "float_1");
        assert_eq!(n.fresh("float2"), "float2_1");
        assert_eq!(n.fresh("image1d_array_t"), "image1d_array_t_1");
        assert_eq!(n.fresh("image2d_depth_t"), "image2d_depth_t_1");
        assert_eq!(n.fresh("double2x3"), "double2x3_1");
        assert_eq!(n.fresh("as_float"), "v_as_float");
        assert_eq!(n.fresh("typeof"), "typeof_1");
        assert_eq!(n.fresh("sqrt"), "sqrt_1");
        assert_eq!(n.fresh("N"), "pw_N");
        assert_eq!(n.fresh("N"), "pw_N_1");
        assert_eq!(n.fresh("λ"), "v_u03bb");
        assert_eq!(n.fresh("_t"), "v_t");
        assert_eq!(n.fresh("pw_x"), "v_pw_x");
    }
}
