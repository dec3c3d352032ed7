//! Shared code of the femquad examples, benchmark and integration tests.

pub mod bench;
pub mod cli;
pub mod convergence;
pub mod mms;
