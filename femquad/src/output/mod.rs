//! Output for visualization: VTK XML unstructured grids ([`vtu`]), which
//! ParaView and VisIt open directly, and time series of them ([`pvd`]).

pub mod pvd;
pub mod vtu;

pub use pvd::TimeSeries;
pub use vtu::{Vtu, VtuFormat};
