//! Shared code of the femquad examples and their integration tests.

pub mod boundary_mms;
pub mod cli;
pub mod convergence;
pub mod mms;
