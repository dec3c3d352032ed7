//! The OpenCL C of a `#[pointwise]` physics, assembled at compile time
//! from its own template and those of the helpers it calls.
//!
//! The macro cannot write a physics' source itself: the helpers it calls
//! are expanded elsewhere (another module, another crate), and the name of
//! each helper carries a hash of its definition. What it emits instead is a
//! constant evaluated by rustc: [`source_len`], then [`source_bytes`] of
//! that length (a constant array), read as a `&'static str` by [`as_str`]. Everything here is
//! a `const fn` for that reason (loops are `while`, no allocation).

use super::{ClFunction, Piece, acyclic, str_eq};
use crate::physics::Fnv1a;

/// The first line of every physics source: floating-point contraction is
/// off (no `a*b + c` fused into `fma`, which Rust never does), wherever the
/// source is included.
pub const FP_CONTRACT_OFF: &str = "#pragma OPENCL FP_CONTRACT OFF\n";

/// What a helper's own name contributes to the hash that names it (its
/// definition is hashed before it has a name).
const OWN_MARKER: &[u8] = b"@@self@@";

/// Most distinct helper definitions (helpers and their tangent variants)
/// in the source of one physics.
pub const MAX_DEFINITIONS: usize = 512;

/// The length in bytes of the complete OpenCL C of a physics with the
/// template `own` calling `helpers` (see [`source_bytes`]).
pub const fn source_len(helpers: &[&ClFunction], own: &[Piece]) -> usize {
    let mut out = Sink::counting();
    write_source(helpers, own, &mut out);
    out.len
}

/// The complete OpenCL C of a physics, `N` bytes long (`N` from
/// [`source_len`]): [`FP_CONTRACT_OFF`], the definitions of its helpers
/// (each once, callees before callers, each named
/// `pw_<rust name>_<FNV-1a of its definition, 16 hex digits>` and guarded
/// by `#ifndef PW_DEFINED_<name>`, so that sources of several physics can be
/// concatenated into one program), then `own` with each
/// [`Piece::Helper`] replaced by the name of that helper.
///
/// When a helper calls itself through the helpers it calls (which its own
/// compile-time check reports), the source stops after the first line.
pub const fn source_bytes<const N: usize>(helpers: &[&ClFunction], own: &[Piece]) -> [u8; N] {
    let mut buf = [0u8; N];
    let mut out = Sink::writing(&mut buf);
    write_source(helpers, own, &mut out);
    assert!(
        out.len == N,
        "#[pointwise]: source_bytes::<N> with N not source_len"
    );
    buf
}

/// `bytes` as text (they are: every piece of a source is a `&str`).
pub const fn as_str(bytes: &[u8]) -> &str {
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("#[pointwise]: an OpenCL source that is not UTF-8"),
    }
}

/// Where a source goes: written into `buf` (when it is long enough: an
/// empty `buf` only counts), its length counted, and, for naming a helper,
/// hashed.
struct Sink<'b> {
    buf: &'b mut [u8],
    len: usize,
    hashing: bool,
    hash: Fnv1a,
}

impl<'b> Sink<'b> {
    const fn counting() -> Sink<'static> {
        Sink {
            buf: &mut [],
            len: 0,
            hashing: false,
            hash: Fnv1a::new(),
        }
    }

    const fn hashing() -> Sink<'static> {
        Sink {
            hashing: true,
            ..Sink::counting()
        }
    }

    const fn writing(buf: &'b mut [u8]) -> Sink<'b> {
        Sink {
            buf,
            len: 0,
            hashing: false,
            hash: Fnv1a::new(),
        }
    }

    const fn push(&mut self, s: &[u8]) {
        let end = self.len + s.len();
        if end <= self.buf.len() {
            let (_, rest) = self.buf.split_at_mut(self.len);
            let (dst, _) = rest.split_at_mut(s.len());
            dst.copy_from_slice(s);
        }
        self.len = end;
        if self.hashing {
            self.hash.write(s);
        }
    }

    /// `pw_<rust_name>_<hash as 16 hex digits>`.
    const fn name(&mut self, rust_name: &str, hash: u64) {
        self.push(b"pw_");
        self.push(rust_name.as_bytes());
        self.push(b"_");
        self.push(&hex(hash));
    }
}

/// `v` as 16 lower-case hex digits.
const fn hex(v: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let d = ((v >> (60 - 4 * i)) & 0xf) as u8;
        out[i] = if d < 10 { b'0' + d } else { b'a' + d - 10 };
        i += 1;
    }
    out
}

/// The helper functions defined so far: who (Rust name, module) and the
/// hash that names each.
struct Defined {
    entries: [(&'static str, &'static str, u64); MAX_DEFINITIONS],
    len: usize,
}

impl Defined {
    const fn new() -> Self {
        Defined {
            entries: [("", "", 0); MAX_DEFINITIONS],
            len: 0,
        }
    }

    /// The hash naming `f`, if it is defined.
    const fn hash_of(&self, f: &ClFunction) -> Option<u64> {
        let mut i = 0;
        while i < self.len {
            let (name, module, hash) = self.entries[i];
            if str_eq(name, f.rust_name) && str_eq(module, f.module) {
                return Some(hash);
            }
            i += 1;
        }
        None
    }

    /// Whether a function of this name and hash (so of the same
    /// definition) is defined, perhaps from another module.
    const fn has_name(&self, rust_name: &str, hash: u64) -> bool {
        let mut i = 0;
        while i < self.len {
            if str_eq(self.entries[i].0, rust_name) && self.entries[i].2 == hash {
                return true;
            }
            i += 1;
        }
        false
    }

    const fn add(&mut self, f: &ClFunction, hash: u64) {
        assert!(
            self.len < MAX_DEFINITIONS,
            "#[pointwise]: this physics calls more than 512 distinct helper functions (tangent \
             variants included), the most that one OpenCL source is assembled from: call \
             fewer helpers (merge small ones into their callers)"
        );
        self.entries[self.len] = (f.rust_name, f.module, hash);
        self.len += 1;
    }
}

const fn write_source(helpers: &[&ClFunction], own: &[Piece], out: &mut Sink) {
    out.push(FP_CONTRACT_OFF.as_bytes());
    let mut i = 0;
    while i < helpers.len() {
        if !acyclic(helpers[i]) {
            return;
        }
        i += 1;
    }
    let mut defined = Defined::new();
    i = 0;
    while i < helpers.len() {
        define(helpers[i], out, &mut defined);
        i += 1;
    }
    write_template(own, helpers, &defined, None, out);
}

/// Writes the definition of `f` (after those of the helpers it calls)
/// unless it is defined already.
const fn define(f: &ClFunction, out: &mut Sink, defined: &mut Defined) {
    if defined.hash_of(f).is_some() {
        return;
    }
    let mut i = 0;
    while i < f.helpers.len() {
        define(f.helpers[i], out, defined);
        i += 1;
    }
    let mut h = Sink::hashing();
    write_template(f.template, f.helpers, defined, None, &mut h);
    let hash = h.hash.finish();
    let twin = defined.has_name(f.rust_name, hash);
    defined.add(f, hash);
    if twin {
        return;
    }
    out.push(b"#ifndef PW_DEFINED_");
    out.name(f.rust_name, hash);
    out.push(b"\n#define PW_DEFINED_");
    out.name(f.rust_name, hash);
    out.push(b"\n");
    write_template(
        f.template,
        f.helpers,
        defined,
        Some((f.rust_name, hash)),
        out,
    );
    out.push(b"#endif\n\n");
}

/// Writes `template` with the names of `helpers` (defined already) and
/// `own`, the name of the function it defines (`None`: the marker hashed
/// in its place).
const fn write_template(
    template: &[Piece],
    helpers: &[&ClFunction],
    defined: &Defined,
    own: Option<(&str, u64)>,
    out: &mut Sink,
) {
    let mut i = 0;
    while i < template.len() {
        match template[i] {
            Piece::Text(t) => out.push(t.as_bytes()),
            Piece::Helper(k) => {
                let h = helpers[k];
                match defined.hash_of(h) {
                    Some(hash) => out.name(h.rust_name, hash),
                    None => panic!("#[pointwise]: a helper named before it is defined"),
                }
            }
            Piece::Own => match own {
                Some((name, hash)) => out.name(name, hash),
                None => out.push(OWN_MARKER),
            },
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ClFunction, Piece};
    use super::*;
    use Piece::{Helper, Own, Text};

    static LEAF: ClFunction = ClFunction {
        rust_name: "leaf",
        module: "m",
        template: &[Text("real "), Own, Text("(real v) { return v; }\n")],
        helpers: &[],
    };
    /// The same definition in another module: defined once.
    static LEAF_ELSEWHERE: ClFunction = ClFunction {
        module: "n",
        ..LEAF
    };
    static MID: ClFunction = ClFunction {
        rust_name: "mid",
        module: "m",
        template: &[
            Text("real "),
            Own,
            Text("(real v) { return "),
            Helper(0),
            Text("(v) + "),
            Helper(1),
            Text("(v); }\n"),
        ],
        helpers: &[&LEAF, &LEAF_ELSEWHERE],
    };
    static LOOP_A: ClFunction = ClFunction {
        rust_name: "a",
        module: "m",
        template: &[
            Text("real "),
            Own,
            Text("() { return "),
            Helper(0),
            Text("(); }\n"),
        ],
        helpers: &[&LOOP_B],
    };
    static LOOP_B: ClFunction = ClFunction {
        rust_name: "b",
        module: "m",
        template: &[
            Text("real "),
            Own,
            Text("() { return "),
            Helper(0),
            Text("(); }\n"),
        ],
        helpers: &[&LOOP_A],
    };

    const OWN: &[Piece] = &[
        Text("void f() { "),
        Helper(0),
        Text("(1.0); "),
        Helper(1),
        Text("(2.0); }\n"),
    ];
    /// Built by rustc, as `#[pointwise]` has it built.
    const LEN: usize = source_len(&[&MID, &LEAF], OWN);
    const BYTES: [u8; LEN] = source_bytes(&[&MID, &LEAF], OWN);
    const SOURCE: &str = as_str(&BYTES);

    fn fnv(s: &str) -> u64 {
        let mut h = Fnv1a::new();
        h.write(s.as_bytes());
        h.finish()
    }

    #[test]
    fn helpers_are_named_by_their_definition_and_defined_once_callees_first() {
        let leaf = format!(
            "pw_leaf_{:016x}",
            fnv("real @@self@@(real v) { return v; }\n")
        );
        let mid = format!(
            "pw_mid_{:016x}",
            fnv(&format!(
                "real @@self@@(real v) {{ return {leaf}(v) + {leaf}(v); }}\n"
            ))
        );
        let guard = |name: &str, body: &str| {
            format!("#ifndef PW_DEFINED_{name}\n#define PW_DEFINED_{name}\n{body}#endif\n\n")
        };
        let want = format!(
            "{FP_CONTRACT_OFF}{}{}void f() {{ {mid}(1.0); {leaf}(2.0); }}\n",
            guard(&leaf, &format!("real {leaf}(real v) {{ return v; }}\n")),
            guard(
                &mid,
                &format!("real {mid}(real v) {{ return {leaf}(v) + {leaf}(v); }}\n")
            ),
        );
        assert_eq!(SOURCE, want);
        assert_eq!(hex(0x0123_4567_89ab_cdef), *b"0123456789abcdef");
    }

    #[test]
    fn a_helper_calling_itself_gives_no_definitions() {
        // Its own compile-time check reports the recursion; the source
        // only has to stay finite.
        let own = &[Helper(0)];
        assert_eq!(source_len(&[&LOOP_A], own), FP_CONTRACT_OFF.len());
        let bytes = source_bytes::<{ FP_CONTRACT_OFF.len() }>(&[&LOOP_A], own);
        assert_eq!(as_str(&bytes), FP_CONTRACT_OFF);
    }

    #[test]
    fn more_helpers_than_the_limit_stop_the_assembly_with_the_remedy() {
        // Evaluated at run time here; in a physics rustc evaluates it and
        // reports the panic as a compile error.
        let helper = |i: usize| -> &'static ClFunction {
            Box::leak(Box::new(ClFunction {
                rust_name: Box::leak(format!("h{i}").into_boxed_str()),
                ..LEAF
            }))
        };
        let at_limit: Vec<&ClFunction> = (0..MAX_DEFINITIONS).map(helper).collect();
        assert!(source_len(&at_limit, &[]) > FP_CONTRACT_OFF.len());
        let over: Vec<&ClFunction> = (0..=MAX_DEFINITIONS).map(helper).collect();
        let message = std::panic::catch_unwind(|| source_len(&over, &[]))
            .expect_err("513 distinct helpers are assembled")
            .downcast::<&str>()
            .map(|m| m.to_string())
            .unwrap_or_default();
        assert_eq!(
            message,
            "#[pointwise]: this physics calls more than 512 distinct helper functions (tangent \
             variants included), the most that one OpenCL source is assembled from: call \
             fewer helpers (merge small ones into their callers)"
        );
    }
}
