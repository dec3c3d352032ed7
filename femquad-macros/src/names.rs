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

const C_RESERVED: &[&str] = &[
    // C99
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
    "_Bool",
    "_Complex",
    "_Imaginary",
    // OpenCL C qualifiers and types
    "global",
    "local",
    "constant",
    "private",
    "kernel",
    "read_only",
    "write_only",
    "read_write",
    "uniform",
    "pipe",
    "generic",
    "bool",
    "half",
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
    "image1d_t",
    "image2d_t",
    "image3d_t",
    "true",
    "false",
    "NULL",
    // what femquad's kernels define, and functions the generated code calls
    "real",
    "fmod",
    "printf",
];

const VECTOR_BASES: &[&str] = &[
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half",
    "bool",
];

fn is_reserved(name: &str) -> bool {
    if C_RESERVED.contains(&name) || crate::math::FUNCTIONS.iter().any(|f| f.c == name) {
        return true;
    }
    // float2, int16, …
    VECTOR_BASES.iter().any(|b| {
        name.strip_prefix(b)
            .is_some_and(|rest| matches!(rest, "2" | "3" | "4" | "8" | "16"))
    })
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
        } else if base.starts_with("pw_") {
            // `pw_` is the prefix of generated names.
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

    #[test]
    fn c_names_are_unique_and_safe() {
        let mut n = CNames::default();
        n.reserve("u");
        assert_eq!(n.fresh("mu"), "mu");
        assert_eq!(n.fresh("mu"), "mu_1");
        assert_eq!(n.fresh("u"), "u_1");
        assert_eq!(n.fresh("float"), "float_1");
        assert_eq!(n.fresh("float2"), "float2_1");
        assert_eq!(n.fresh("sqrt"), "sqrt_1");
        assert_eq!(n.fresh("N"), "pw_N");
        assert_eq!(n.fresh("N"), "pw_N_1");
        assert_eq!(n.fresh("λ"), "v_u03bb");
        assert_eq!(n.fresh("_t"), "v_t");
        assert_eq!(n.fresh("pw_x"), "v_pw_x");
    }
}
