//! The numbering of the mesh's vertices and cells ([`Numbering`]): what
//! the global operator's gathers and scatters meet in memory.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// How the mesh is numbered (`--numbering`, column `numbering`).
///
/// The element kernel (BK) reads cell-local arrays in cell order, so the
/// numbering hardly matters to it; the global operator (BP) gathers `u` and
/// scatters `F` through the cell → node map, and a randomly numbered mesh
/// is its worst case (almost every access misses the caches), a
/// locality-renumbered one its best.
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
pub enum Numbering {
    /// Vertices and cells permuted at random (`MeshOptions::shuffle`), as
    /// meshes from unstructured generators are: the default.
    #[default]
    Random,
    /// The random mesh renumbered for locality
    /// (`Mesh::renumbered_for_locality`: cells in the Hilbert order of
    /// their centroids, vertices by first touch).
    Renumbered,
    /// The generator's structured order (no shuffle), for comparison.
    Structured,
}

impl Numbering {
    /// `random`, `renumbered` or `structured`.
    pub fn name(self) -> &'static str {
        match self {
            Numbering::Random => "random",
            Numbering::Renumbered => "renumbered",
            Numbering::Structured => "structured",
        }
    }

    /// Whether the mesh generator shuffles (random, and renumbered, which
    /// starts from the random mesh).
    pub fn shuffled(self) -> bool {
        self != Numbering::Structured
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_parsing() {
        for n in [
            Numbering::Random,
            Numbering::Renumbered,
            Numbering::Structured,
        ] {
            assert_eq!(Numbering::from_str(n.name(), false).unwrap(), n);
        }
        assert!(Numbering::Renumbered.shuffled());
        assert!(!Numbering::Structured.shuffled());
        assert_eq!(Numbering::default(), Numbering::Random);
    }
}
