//! Shared code of the femquad examples, benchmark and integration tests.
