//! What a row measures ([`Measure`]) and, for the global operator, how it
//! is computed: the assembly of the element contributions ([`AssemblyKind`])
//! and where the kernel takes the cell geometry from ([`GeometryKind`]).
//!
//! # Adding a measure
//! The global measures (today BP, later e.g. the fused Jacobian action
//! `J(u)·v` and the diagonal `diag J(u)`) share one shape: a
//! device-resident input, a device-resident output vector, a host
//! reference, minimal bytes, repeated timed applications, rows per assembly
//! and geometry, the geometry pick, a CG iteration with the operator. A new
//! one is a variant here (its name in `--measure` and in the `measure`
//! column; its place in the row order) and a variant of
//! [`crate::global_op::GlobalOp`] with its arms there (launch, timing,
//! host reference, model bytes); [`crate::bp`] makes its rows unchanged.

use clap::ValueEnum;
use femquad::opencl::{Assembly, GeometryMode};
use serde::{Deserialize, Serialize};

/// The quantity a row measures (`--measure`, column `measure`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    ValueEnum,
    Serialize,
    Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// BK, the element kernel (the paper's measure): cell-local `u` and
    /// aux, `J⁻¹`, `det J` in, element vectors out
    /// (`OpenClIntegrator::integrate_cells`).
    #[default]
    Bk,
    /// BP, what a user gets: `F(u)` from a global `u` into a global `F`,
    /// both on the device (`OpenClIntegrator`'s residual, gather, integrate
    /// and assemble fused), and the time of one conjugate-gradient
    /// iteration with that operator.
    Bp,
}

impl Measure {
    /// `bk` or `bp`.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Bk => "bk",
            Measure::Bp => "bp",
        }
    }
}

/// How element contributions are summed into the global vector (column
/// `assembly`; the names of `femquad::opencl::Assembly`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AssemblyKind {
    /// Atomic additions into `F` by the integration kernel (one launch,
    /// after zeroing `F`).
    Atomic,
    /// Element vectors written, then summed per dof in a fixed order by a
    /// second launch (bitwise reproducible).
    Deterministic,
}

impl AssemblyKind {
    /// Both, in the order the rows are made.
    pub const ALL: [AssemblyKind; 2] = [AssemblyKind::Atomic, AssemblyKind::Deterministic];

    /// The library's value.
    pub fn assembly(self) -> Assembly {
        match self {
            AssemblyKind::Atomic => Assembly::Atomic,
            AssemblyKind::Deterministic => Assembly::Deterministic,
        }
    }

    /// `atomic` or `deterministic`.
    pub fn name(self) -> &'static str {
        self.assembly().name()
    }
}

/// Where the kernel takes the cell geometry from (column `geometry`; the
/// names of `femquad::opencl::GeometryMode`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum GeometryKind {
    /// `J⁻¹` and `det J` stored per cell (the element kernel always).
    #[default]
    Stored,
    /// `J` computed per cell in the kernel from the vertex coordinates.
    Computed,
}

impl GeometryKind {
    /// Both, in the order the rows are made.
    pub const ALL: [GeometryKind; 2] = [GeometryKind::Stored, GeometryKind::Computed];

    /// The library's value.
    pub fn mode(self) -> GeometryMode {
        match self {
            GeometryKind::Stored => GeometryMode::Stored,
            GeometryKind::Computed => GeometryMode::Computed,
        }
    }

    /// `stored` or `computed`.
    pub fn name(self) -> &'static str {
        self.mode().name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_library() {
        assert_eq!(Measure::Bp.name(), "bp");
        assert_eq!(Measure::default(), Measure::Bk);
        assert_eq!(AssemblyKind::Deterministic.name(), "deterministic");
        assert_eq!(AssemblyKind::Atomic.assembly(), Assembly::Atomic);
        assert_eq!(GeometryKind::Computed.name(), "computed");
        assert_eq!(GeometryKind::Stored.mode(), GeometryMode::Stored);
        for m in [Measure::Bk, Measure::Bp] {
            let v = Measure::from_str(m.name(), false).unwrap();
            assert_eq!(v, m);
        }
    }
}
