//! The wording of the errors for constructs outside the subset: each names
//! the construct and what to write instead.

use crate::ast::Construct;

/// Message for a type or call naming a heap type.
pub const HEAP: &str = "heap types (`Vec`, `Box`, `String`, …) are not available on the GPU: \
     use fixed-size arrays `[f64; N]`";

/// Types and paths that live on the heap.
pub fn is_heap_name(name: &str) -> bool {
    matches!(
        name,
        "Vec"
            | "Box"
            | "String"
            | "Rc"
            | "Arc"
            | "HashMap"
            | "BTreeMap"
            | "HashSet"
            | "BTreeSet"
            | "VecDeque"
            | "LinkedList"
            | "BinaryHeap"
            | "Cow"
    )
}

pub fn message(c: &Construct) -> String {
    use Construct::*;
    match c {
        Closure => "closures are not supported in #[pointwise] functions: write the computation \
             inline, or move it into a #[pointwise] helper function declared with \
             `#[pointwise(helpers(name))]`"
            .into(),
        While => "`while` loops are not supported: use `for i in 0..N` with a constant bound `N` \
             (the GPU kernel needs a fixed trip count)"
            .into(),
        Loop => "`loop` is not supported: use `for i in 0..N` with a constant bound `N`".into(),
        Match => "`match` is not supported: use `if` / `else if` / `else`".into(),
        Macro(name) => match name.as_str() {
            "vec" | "format" => format!("`{name}!` is not supported: {HEAP}"),
            "println" | "print" | "eprintln" | "eprint" | "dbg" | "assert" | "assert_eq"
            | "assert_ne" | "debug_assert" | "debug_assert_eq" | "debug_assert_ne" | "panic"
            | "todo" | "unimplemented" | "unreachable" => format!(
                "macros (`{name}!`) are not supported in #[pointwise] functions: printing, \
                 assertions and panics are not available in the OpenCL version; remove it"
            ),
            _ => format!(
                "macros (`{name}!`) are not supported in #[pointwise] functions: the macro \
                 translates only plain code; write the expansion out by hand"
            ),
        },
        StructLiteral => "struct literals are not supported: use fixed-size arrays `[f64; N]` \
             and separate variables"
            .into(),
        Tuple => "tuples are not supported: use separate variables or a fixed-size array \
             `[f64; N]`"
            .into(),
        FieldAccess => "field access is not supported (there are no structs or tuples): use \
             arrays and indexing `a[i]`"
            .into(),
        Unsafe => "`unsafe` is not supported (nor needed): remove the `unsafe` block".into(),
        Return => "`return` is not supported: a helper's value is its final expression \
             (written without `;`) and a physics writes its results into `f0`/`f1`; \
             instead of an early return, use `if`/`else`"
            .into(),
        Break => "`break` is not supported: loops run their whole constant range; use `if` \
             inside the loop"
            .into(),
        Continue => "`continue` is not supported: loops run their whole constant range; use \
             `if` inside the loop"
            .into(),
        Async | AsyncFn => "`async` is not supported in #[pointwise] functions".into(),
        Await => "`.await` is not supported in #[pointwise] functions".into(),
        TryOperator => "the `?` operator is not supported: there are no `Result`s or `Option`s \
             in the subset"
            .into(),
        LetCondition => "`if let` / `let` conditions are not supported: use `if` with a `bool` \
             condition"
            .into(),
        Range => "ranges are supported only as the iterator of a loop: `for i in a..b` or \
             `for i in a..=b`, with constant bounds (slicing is not supported)"
            .into(),
        ForIterator => "`for` loops must run over a range with constant bounds, \
             `for i in 0..N`; iterators such as `.iter()` are not supported"
            .into(),
        ForPattern => "the loop variable must be a plain name (`for i in 0..N`) or `_`".into(),
        Deref => "dereferencing (`*x`) is not supported: index the arrays instead, as in \
             `f0[0] = …`"
            .into(),
        BitOp(op) => format!(
            "operator `{op}` is not supported: the subset has `+ - * / %`, comparisons and \
             `&& || !`"
        ),
        Label => "labels (`'a:`) are not supported".into(),
        LetElse => "`let … else` is not supported: use `if`/`else`".into(),
        Pattern => "only `let x`, `let mut x` and `let _` are supported: destructuring \
             patterns are not"
            .into(),
        NestedItem(kind) => match kind.as_str() {
            "fn" => "nested functions are not supported: write a #[pointwise] helper function \
                 at module level and declare it with `#[pointwise(helpers(name))]`"
                .into(),
            "use" => "`use` inside the body is not supported: call math functions as methods \
                 (`x.sqrt()`) or through `f64::` (`f64::sqrt(x)`)"
                .into(),
            _ => format!(
                "`{kind}` items inside the body are not supported: the only items allowed are \
                 local constants, `const NAME: f64 = …;`"
            ),
        },
        Static => "`static` items are not supported (there are no globals on the GPU): use a \
             local `const NAME: f64 = …;`, or pass the value in `constants`"
            .into(),
        Attribute => "attributes inside the body are not supported, except lint attributes \
             (`#[allow(…)]`): others such as `#[cfg]` would make the Rust and OpenCL versions \
             differ"
            .into(),
        OtherType(what) => format!(
            "{what} is not supported: the types of the subset are `f64`, `usize`, `i32`, \
             `bool` and fixed-size arrays `[T; N]`"
        ),
        OtherExpr(what) => format!("{what} is not supported in #[pointwise] functions"),
        ConstFn => "`const fn` is not supported by #[pointwise]: remove `const`".into(),
        UnsafeFn => "`unsafe fn` is not supported by #[pointwise]: remove `unsafe`".into(),
        ExternFn => "`extern` functions are not supported by #[pointwise]".into(),
        Variadic => "variadic functions are not supported by #[pointwise]".into(),
        Receiver => "methods (`self`) are not supported: #[pointwise] applies to free \
             functions"
            .into(),
        WhereClause => "`where` clauses are not supported: the only generic parameter is \
             `const D: usize`"
            .into(),
    }
}
