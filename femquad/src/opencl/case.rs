//! A kernel case: everything about a discretization and a physics that
//! fixes the generated kernel's sizes, in one value.

use crate::Precision;
use crate::Real;
use crate::aux_space::AuxSpace;
use crate::discretization::Discretization;
use crate::physics::PointwiseInfo;

/// The sizes a kernel is generated for: dimension, element, components,
/// quadrature points, auxiliary space, physics and precision.
///
/// Launch parameters ([`super::LaunchConfig`]) and kernel switches
/// ([`super::KernelOptions`]) come on top of a case to make a
/// [`super::KernelShape`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelCase {
    /// Spatial dimension.
    pub dim: usize,
    /// Scalar basis functions per cell, `N_b`.
    pub n_b: usize,
    /// Components of the solution, `N_comp`.
    pub n_comp: usize,
    /// Quadrature points per cell, `N_q`.
    pub n_q: usize,
    /// Where the auxiliary field lives.
    pub aux: AuxSpace,
    /// The physics (what it reads and writes, its constants and flops).
    pub physics: &'static PointwiseInfo,
    /// Precision of the kernel's reals.
    pub precision: Precision,
}

impl KernelCase {
    /// The case of `physics` on `disc` in the precision `R`.
    pub fn new<R: Real>(disc: &Discretization<R>, physics: &'static PointwiseInfo) -> Self {
        KernelCase {
            dim: disc.dim(),
            n_b: disc.n_b(),
            n_comp: disc.n_comp(),
            n_q: disc.n_q(),
            aux: disc.aux(),
            physics,
            precision: R::PRECISION,
        }
    }

    /// Element dofs `N_bt = N_b·N_comp`.
    pub fn n_bt(&self) -> usize {
        self.n_b * self.n_comp
    }

    /// `L = LCM(N_q, N_bt)`: threads per block (cells per block with one
    /// thread per cell).
    pub fn lcm(&self) -> usize {
        lcm(self.n_q, self.n_bt())
    }

    /// Auxiliary values per cell in a cell-local aux array.
    pub fn aux_per_cell(&self) -> usize {
        self.aux.values_per_cell(self.n_b)
    }
}

/// Greatest common divisor.
pub(crate) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Least common multiple (0 if either is 0).
pub(crate) fn lcm(a: usize, b: usize) -> usize {
    if a == 0 || b == 0 {
        0
    } else {
        a / gcd(a, b) * b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcm_and_gcd() {
        assert_eq!(lcm(1, 3), 3);
        assert_eq!(lcm(4, 6), 12);
        assert_eq!(lcm(3, 12), 12);
        assert_eq!(lcm(0, 12), 0);
        assert_eq!(gcd(27, 10), 1);
    }
}
