//! The names a program needs, in one `use`:
//!
//! ```
//! use femquad::prelude::*;
//! ```
//!
//! Meshes ([`Mesh`], [`MeshOptions`], the generators [`unit_square`],
//! [`unit_cube`], [`unit_box`], and [`read_gmsh`] / [`read_gmsh_with`] with
//! [`GmshOptions`]), where conditions are imposed ([`MeshPart`] and the
//! [`Components`] a condition fixes), the discretization
//! ([`Element`], [`FunctionSpace`], [`Quadrature`], [`AuxSpace`]), where it
//! runs ([`Backend`], [`DeviceSelector`]), the form, its operator and its
//! solve ([`Form`], [`Operator`], [`DirichletProblem`], its [`MeshHierarchy`] for
//! multigrid, [`Preconditioner`] and the [`JacobianProducts`] of its Newton
//! solves), output ([`Vtu`], [`VtuFormat`]),
//! physics ([`macro@pointwise`], [`Pointwise`], [`PointwiseEval`]),
//! precision ([`Real`], [`Precision`]) and errors ([`Error`], [`Result`]).

pub use crate::aux_space::AuxSpace;
pub use crate::backend::{Backend, Vector};
pub use crate::element::Element;
pub use crate::form::Form;
pub use crate::mesh::gmsh::{GmshMesh, GmshOptions, read_gmsh, read_gmsh_with};
pub use crate::mesh::{Mesh, MeshOptions, MeshPart, unit_box, unit_cube, unit_square};
pub use crate::multigrid::MeshHierarchy;
pub use crate::opencl::DeviceSelector;
pub use crate::operator::Operator;
pub use crate::output::{Vtu, VtuFormat};
pub use crate::quadrature::Quadrature;
pub use crate::solve::{DirichletProblem, JacobianProducts, Preconditioner};
pub use crate::space::{Components, FunctionSpace};
pub use crate::vector::VectorOps;
pub use crate::{Error, Precision, Real, Result};
pub use crate::{Pointwise, PointwiseEval, pointwise};
