//! femquad over MPI ranks: a mesh partitioned by METIS and distributed from
//! rank 0, vectors with owned and ghost entries, femquad's operators applied
//! on every rank's cells, and femquad's conjugate gradients on them.
//!
//! Without the cargo feature `mpi` this crate holds only [`layout`] and
//! [`cell_split`], the MPI-free bookkeeping of a partition (so `cargo test --workspace` needs no
//! MPI); with it (`cargo build -p femquad-mpi --features mpi`, OpenMPI and
//! libclang installed):
//!
//! * `comm` — the ranks, agreement on failure (every rank returns the
//!   failing rank's error, none waits for it), abort on panic;
//! * `partition` — METIS's partition of the dual graph and the distribution
//!   of each rank's layout from rank 0;
//! * `DistMesh`, `DistVector` (on the host or the rank's device; ghost
//!   update and accumulate moving only the halo, reproducible reductions,
//!   femquad's `VectorOps`), `DistOperator` (`F(u)`, `J·v`, `diag J`, on the
//!   device vectors directly, the interior cells integrated while the halo
//!   travels), `solve_linear` (Dirichlet-constrained,
//!   Jacobi-preconditioned CG or GMRES);
//! * `DistHierarchy` (each rank refining its own cells: every level
//!   partitioned and nested) and `DistMultigrid` (geometric multigrid over
//!   the ranks, its small levels agglomerated onto rank 0 and cycled there
//!   by femquad's serial multigrid, `agglomerate`), the preconditioner of
//!   `solve::solve_linear_preconditioned`;
//! * `DistProblem` — a `DistOperator` with Dirichlet conditions that
//!   femquad's own time integrator (`femquad::time::TimeIntegrator`)
//!   advances over the ranks (the time state bound on every rank and
//!   multigrid level, Newton–Krylov per step);
//! * `output` — parallel VTU (`.pvtu` and one piece per rank);
//! * `device` — one rank per OpenCL device, picked by the node-local rank.
//!
//! Run a program under `mpirun -np N` (see the README's "MPI" section); the
//! program initialises MPI once (`mpi::initialize()`). Two come with the
//! crate: `femquad-mpi-check` (the checks `tests/mpirun.rs` runs) and
//! `femquad-mpi-bench` (weak and strong scaling).

pub mod cell_split;
pub mod layout;

#[cfg(feature = "mpi")]
pub mod agglomerate;
#[cfg(feature = "mpi")]
mod boundary_part;
#[cfg(feature = "mpi")]
pub mod comm;
#[cfg(feature = "mpi")]
pub mod device;
#[cfg(feature = "mpi")]
mod dist_mesh;
#[cfg(feature = "mpi")]
pub mod hierarchy;
#[cfg(feature = "mpi")]
mod host_buffer;
#[cfg(feature = "mpi")]
pub mod multigrid;
#[cfg(feature = "mpi")]
pub mod operator;
#[cfg(feature = "mpi")]
pub mod output;
#[cfg(feature = "mpi")]
pub mod partition;
#[cfg(feature = "mpi")]
pub mod problem;
#[cfg(feature = "mpi")]
pub mod solve;
#[cfg(feature = "mpi")]
pub mod timeline;
#[cfg(feature = "mpi")]
pub mod vector;

#[cfg(feature = "mpi")]
pub use dist_mesh::DistMesh;
#[cfg(feature = "mpi")]
pub use hierarchy::DistHierarchy;
#[cfg(feature = "mpi")]
pub use multigrid::DistMultigrid;
#[cfg(feature = "mpi")]
pub use operator::DistOperator;
#[cfg(feature = "mpi")]
pub use problem::DistProblem;
#[cfg(feature = "mpi")]
pub use vector::DistVector;

/// The MPI crate the distributed types are built on (rsmpi), for programs
/// that initialise MPI.
#[cfg(feature = "mpi")]
pub use mpi;
