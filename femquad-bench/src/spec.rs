//! What a benchmark case is: discretization, physics, coefficient and
//! precision ([`CaseSpec`]), and the suite of cases BENCHMARKS.md reports.

use clap::ValueEnum;
use femquad::Precision;
use femquad::aux_space::AuxSpace;
use femquad::physics::PointwiseEvalBoth;
use femquad::physics::builtin::{Lame, Laplacian, LaplacianCoefficient};
use serde::{Deserialize, Serialize};

use crate::BenchError;

/// The physics of a case (`laplacian`, `elasticity` or `heat` in options
/// and files).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PhysicsKind {
    /// Poisson: `f1 = ∇u` (with a coefficient `f1 = a ∇u`).
    #[value(alias = "poisson")]
    Laplacian,
    /// Lamé (linear elasticity): `f1 = μ(∇u + ∇uᵀ) + λ (∇·u) I`, `u` a vector field.
    #[value(alias = "lame")]
    Elasticity,
    /// The transient `heat` physics (`f0 = u_t + t·u`, `f1 = ∇u`,
    /// [`crate::physics::Heat`]), evaluated at a bound time state: the
    /// kernels' time path.
    Heat,
}

impl PhysicsKind {
    /// `laplacian` or `elasticity`.
    pub fn name(self) -> &'static str {
        match self {
            PhysicsKind::Laplacian => "laplacian",
            PhysicsKind::Elasticity => "elasticity",
            PhysicsKind::Heat => "heat",
        }
    }
}

/// Where the variable coefficient of the Laplacian lives (`none`, `field`
/// or `cell` in options and files).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Coefficient {
    /// Constant coefficient 1.
    None,
    /// A P1/P2 field in the solution's space (`a` interpolated at the points).
    Field,
    /// One value per cell (P0).
    Cell,
}

impl Coefficient {
    /// `none`, `field` or `cell`.
    pub fn name(self) -> &'static str {
        match self {
            Coefficient::None => "none",
            Coefficient::Field => "field",
            Coefficient::Cell => "cell",
        }
    }
}

/// Relative tolerance of the check against the native integrator
/// (max-norm relative difference of the element vectors).
pub fn check_tolerance(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => 1e-5,
        Precision::F64 => 1e-12,
    }
}

/// Default quadrature degree for Lagrange order `order`: 1 (one point, the
/// paper's P1 setting, exact for the constant-coefficient P1 stiffness) for
/// P1; `2(order−1)` for higher orders, the lowest degree that integrates
/// the constant-coefficient stiffness `∫∇φ_a·∇φ_b` (and the Lamé operator)
/// exactly on affine cells — degree 2 for P2: 3 points in 2D, 4 in 3D.
pub fn default_qdegree(order: usize) -> usize {
    if order <= 1 { 1 } else { 2 * (order - 1) }
}

/// Lamé constants `[μ, λ]` of the elasticity cases.
pub const LAME_CONSTANTS: [f64; 2] =
    femquad::physics::builtin::LameParameters::new(1.0, 0.5).constants();

/// One benchmark case: discretization, physics and precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CaseSpec {
    /// Spatial dimension (2 or 3).
    pub dim: usize,
    /// Lagrange order (1 or 2).
    pub order: usize,
    /// Physics.
    pub physics: PhysicsKind,
    /// Coefficient (Laplacian only).
    pub coefficient: Coefficient,
    /// Precision.
    pub precision: Precision,
    /// Quadrature degree.
    pub qdegree: usize,
}

impl CaseSpec {
    /// Checks the combination.
    pub fn validate(&self) -> Result<(), BenchError> {
        if !(2..=3).contains(&self.dim) || !(1..=2).contains(&self.order) {
            return Err(BenchError::Usage(format!(
                "dimension {} / order {} not supported (2|3, 1|2)",
                self.dim, self.order
            )));
        }
        if self.physics != PhysicsKind::Laplacian && self.coefficient != Coefficient::None {
            return Err(BenchError::Usage(format!(
                "--coefficient {} applies to the Laplacian only; use `none` with {}",
                self.coefficient.name(),
                self.physics.name()
            )));
        }
        if self.qdegree == 0 {
            return Err(BenchError::Usage("--qdegree must be at least 1".into()));
        }
        Ok(())
    }

    /// Name used in reports and for `--filter`: `2d-p1-laplacian-field-f32`.
    pub fn name(&self) -> String {
        format!(
            "{}d-p{}-{}-{}-{}",
            self.dim,
            self.order,
            self.physics.name(),
            self.coefficient.name(),
            self.precision.name()
        )
    }

    /// The physics object.
    pub fn pointwise(&self) -> &'static dyn PointwiseEvalBoth {
        match (self.physics, self.coefficient) {
            (PhysicsKind::Elasticity, _) => &Lame,
            (PhysicsKind::Heat, _) => crate::physics::heat_physics(),
            (PhysicsKind::Laplacian, Coefficient::None) => &Laplacian,
            (PhysicsKind::Laplacian, _) => &LaplacianCoefficient,
        }
    }

    /// The auxiliary space of the coefficient.
    pub fn aux(&self) -> AuxSpace {
        match self.coefficient {
            Coefficient::None => AuxSpace::None,
            Coefficient::Field => AuxSpace::Field { n_comp: 1 },
            Coefficient::Cell => AuxSpace::Cell { n_comp: 1 },
        }
    }

    /// The physics' run-time constants.
    pub fn constants(&self) -> Vec<f64> {
        match self.physics {
            PhysicsKind::Elasticity => LAME_CONSTANTS.to_vec(),
            PhysicsKind::Laplacian | PhysicsKind::Heat => Vec::new(),
        }
    }

    /// Components of the solution.
    pub fn n_comp(&self) -> usize {
        match self.physics {
            PhysicsKind::Elasticity => self.dim,
            PhysicsKind::Laplacian | PhysicsKind::Heat => 1,
        }
    }
}

/// The suite: P1 Poisson (no coefficient, field, cell), P1 Lamé, P2
/// Poisson, P2 Lamé; each in 2D and 3D, f32 and f64 (24 cases), ordered by
/// dimension (one mesh per dimension), then order.
pub fn suite_cases() -> Vec<CaseSpec> {
    let mut v = Vec::new();
    for dim in [2, 3] {
        for (order, physics, coefficient) in [
            (1, PhysicsKind::Laplacian, Coefficient::None),
            (1, PhysicsKind::Laplacian, Coefficient::Field),
            (1, PhysicsKind::Laplacian, Coefficient::Cell),
            (1, PhysicsKind::Elasticity, Coefficient::None),
            (2, PhysicsKind::Laplacian, Coefficient::None),
            (2, PhysicsKind::Elasticity, Coefficient::None),
        ] {
            for precision in Precision::ALL {
                v.push(CaseSpec {
                    dim,
                    order,
                    physics,
                    coefficient,
                    precision,
                    qdegree: default_qdegree(order),
                });
            }
        }
    }
    v
}

/// True if `name` contains every comma-separated token of `filter`.
pub fn matches_filter(name: &str, filter: Option<&str>) -> bool {
    filter.is_none_or(|f| {
        f.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .all(|t| name.contains(t))
    })
}

/// The suite cases `filter` selects (all without a filter); an error
/// naming the filter's value if it selects none.
pub fn select_suite(filter: Option<&str>) -> Result<Vec<CaseSpec>, BenchError> {
    if let Some(f) = filter
        && f.split(',').all(|t| t.trim().is_empty())
    {
        return Err(BenchError::Usage(format!(
            "--filter \"{f}\" has no token (give comma-separated parts of case names, \
             like `2d,p1,f32`)"
        )));
    }
    let specs: Vec<CaseSpec> = suite_cases()
        .into_iter()
        .filter(|c| matches_filter(&c.name(), filter))
        .collect();
    match filter {
        Some(f) if specs.is_empty() => Err(BenchError::Usage(format!(
            "--filter \"{f}\" matches no suite case (names look like `2d-p1-laplacian-field-f32`; \
             the filter keeps the names that contain every comma-separated token)"
        ))),
        _ => Ok(specs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_and_names() {
        let s = suite_cases();
        assert_eq!(s.len(), 24);
        assert_eq!(s[0].name(), "2d-p1-laplacian-none-f32");
        assert!(s.iter().all(|c| c.validate().is_ok()));
        assert_eq!(default_qdegree(1), 1);
        assert_eq!(default_qdegree(2), 2);
        let n = s
            .iter()
            .filter(|c| matches_filter(&c.name(), Some("3d,p1,f64")))
            .count();
        assert_eq!(n, 4);
        assert!(matches_filter("x", None));
    }

    #[test]
    fn filter_errors_name_the_value() {
        assert_eq!(select_suite(None).unwrap().len(), 24);
        assert_eq!(select_suite(Some("2d,p2")).unwrap().len(), 4);
        let e = select_suite(Some("xyz")).unwrap_err().to_string();
        assert!(
            e.starts_with("--filter \"xyz\" matches no suite case"),
            "{e}"
        );
        assert!(!e.contains("Some("), "{e}");
        let e = select_suite(Some(" , ")).unwrap_err().to_string();
        assert!(e.starts_with("--filter \" , \" has no token"), "{e}");
    }
}
