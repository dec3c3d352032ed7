//! Output for visualization: VTK XML unstructured grids ([`vtu`]), which
//! ParaView and VisIt open directly.

pub mod vtu;

pub use vtu::{Vtu, VtuFormat};
