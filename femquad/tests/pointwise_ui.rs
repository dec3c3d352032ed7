//! trybuild suites of `#[pointwise]`: `tests/ui/pass` (accepted code that
//! compiles and runs with the expected values) and `tests/ui/fail` (rejected
//! code, with the reviewed error messages in the `.stderr` files).
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test --test
//! pointwise_ui` and review every change.

#[test]
fn pointwise_ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
