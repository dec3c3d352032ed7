//! Boundary facets: named sets of them, quadrature and basis tabulation on
//! them, their geometry, and the boundary term of a form.
//!
//! The weak form of a problem with boundary terms is (see the design notes'
//! "Conventions")
//!
//! ```text
//! F_i(u) = Σ_cells ∫_K φ_i f0 + ∇φ_i·f1 dx  +  Σ_{F ∈ S} ∫_F φ_i f0^bd(x, n, u, ∇u) ds
//! ```
//!
//! with `n` the outward unit normal of the facet `F` and `S` a set of
//! boundary facets. This module is the ground of the boundary term:
//!
//! * [`FacetSet`]: sorted, distinct `(cell, local facet)` pairs of boundary
//!   facets of one mesh — the whole boundary, the facets whose midpoints a
//!   predicate selects, or Gmsh physical groups
//!   ([`GmshMesh::facet_set`](crate::mesh::GmshMesh::facet_set)); refined
//!   with its mesh ([`FacetSet::refine`],
//!   `MeshHierarchy::facet_sets` (multigrid)).
//! * [`FacetQuadrature`]: a rule on the reference facet mapped onto each
//!   local facet of the reference cell; [`FacetTabulation`]: the cell basis
//!   and its reference gradients at those points.
//! * [`FacetGeometry`]: per facet of a set, the physical quadrature points,
//!   the outward unit normal, the surface measure factor and the cell's `J⁻¹`.
//! * [`BoundaryTerm`]: a boundary physics on a facet set, with its
//!   constants and rule: a term of a [`Form`](crate::form::Form)
//!   ([`Form::with_boundary`](crate::form::Form::with_boundary)).
//!
//! A form's boundary terms are integrated by its operator
//! ([`Operator::apply`](crate::operator::Operator::apply) and the
//! Jacobians): natively by [`crate::native::BoundaryIntegrals`], on a
//! device by `kernels/facet_integrate.cl`. A boundary integral
//! `∫_S φ_i f0 ds` alone is the residual `F(u)` of a form whose cell
//! physics is zero and whose one boundary term has `f0` on `S`.

mod geometry;
mod gmsh;
mod quadrature;
mod set;
mod term;

pub use geometry::FacetGeometry;
pub use quadrature::{FacetQuadrature, FacetTabulation, reference_facet_volume};
pub use set::FacetSet;
pub use term::BoundaryTerm;
