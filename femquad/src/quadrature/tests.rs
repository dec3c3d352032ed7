//! Tests of [`super`].

use super::symmetric::monomial_integral;
use super::*;

/// All exponent tuples of `dim` entries with total degree ≤ `degree`.
fn exponents(dim: usize, degree: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut alpha = vec![0; dim];
    fn rec(k: usize, left: usize, alpha: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if k == alpha.len() {
            out.push(alpha.clone());
            return;
        }
        for a in 0..=left {
            alpha[k] = a;
            rec(k + 1, left - a, alpha, out);
        }
        alpha[k] = 0;
    }
    rec(0, degree, &mut alpha, &mut out);
    out
}

/// Checks weights, points and exactness for all monomials of degree ≤
/// `degree`, to `1e-14` relative (`3e-14` above degree 12, where the
/// plain sum runs over up to 1331 points).
fn check_rule(rule: &Quadrature, dim: usize, degree: usize) {
    let tol = if degree <= 12 { 1e-14 } else { 3e-14 };
    assert_eq!(rule.dim(), dim);
    assert_eq!(rule.degree(), degree);
    assert_eq!(rule.points().len(), rule.n_points() * dim);
    let sum: f64 = rule.weights().iter().sum();
    assert!((sum - reference_volume(dim)).abs() < 1e-15, "sum {sum}");
    for q in 0..rule.n_points() {
        assert!(
            rule.weights()[q] > 0.0,
            "weight {q} of dim {dim} degree {degree}"
        );
        let x = rule.point(q);
        assert!(x.iter().all(|&v| v > 0.0), "point {x:?} outside");
        assert!(x.iter().sum::<f64>() < 1.0, "point {x:?} outside");
    }
    for alpha in exponents(dim, degree) {
        let exact = monomial_integral(&alpha);
        let approx = rule.integrate(|x| {
            x.iter()
                .zip(&alpha)
                .map(|(&xi, &a)| xi.powi(a as i32))
                .product()
        });
        let rel = (approx - exact).abs() / exact;
        assert!(
            rel < tol,
            "dim {dim} degree {degree} alpha {alpha:?}: {approx} vs {exact} (rel {rel:e})"
        );
    }
}

#[test]
fn monomial_integrals_closed_form() {
    assert_eq!(monomial_integral(&[0, 0]), 0.5);
    assert_eq!(monomial_integral(&[1, 0]), 1.0 / 6.0);
    assert_eq!(monomial_integral(&[0, 0, 0]), 1.0 / 6.0);
    assert!((monomial_integral(&[1, 1, 1]) - 1.0 / 720.0).abs() < 1e-18);
}

#[test]
fn default_rules_are_exact_to_their_degree() {
    for dim in [2, 3] {
        for degree in 0..=8 {
            check_rule(&Quadrature::simplex(dim, degree).unwrap(), dim, degree);
        }
    }
}

#[test]
fn collapsed_rules_are_exact_to_their_degree() {
    for dim in [2, 3] {
        for degree in 0..=MAX_DEGREE {
            let rule = Quadrature::collapsed(dim, degree).unwrap();
            let n = degree / 2 + 1;
            assert_eq!(rule.n_points(), n.pow(dim as u32));
            check_rule(&rule, dim, degree);
        }
    }
}

#[test]
fn collapsed_rules_integrate_high_degree_products() {
    // (ξ1 ξ2 (1 − ξ1 − ξ2))^6 has degree 18: ∫ = (6!)^3 / 20!.
    let rule = Quadrature::collapsed(2, 18).unwrap();
    let f = |x: &[f64]| (x[0] * x[1] * (1.0 - x[0] - x[1])).powi(6);
    let exact = 720f64.powi(3) / (1..=20).map(|i| i as f64).product::<f64>();
    assert!((rule.integrate(f) - exact).abs() / exact < 1e-13);
}

#[test]
fn point_counts_per_degree() {
    let counts = |dim| -> Vec<usize> {
        (0..=6)
            .map(|d| Quadrature::simplex(dim, d).unwrap().n_points())
            .collect()
    };
    assert_eq!(counts(2), vec![1, 1, 3, 4, 6, 7, 16]);
    assert_eq!(counts(3), vec![1, 1, 4, 8, 14, 14, 64]);
}

#[test]
fn degree_one_is_the_centroid() {
    for dim in [2, 3] {
        for rule in [
            Quadrature::simplex(dim, 1).unwrap(),
            Quadrature::collapsed(dim, 1).unwrap(),
            Quadrature::simplex(dim, 0).unwrap(),
        ] {
            assert_eq!(rule.n_points(), 1);
            for &x in rule.point(0) {
                assert!((x - 1.0 / (dim + 1) as f64).abs() < 1e-16);
            }
            assert!((rule.weights()[0] - reference_volume(dim)).abs() < 1e-17);
        }
    }
}

#[test]
fn gauss_legendre_two_points() {
    let (t, w) = gauss_jacobi_01(2, 0);
    let d = 0.5 / 3f64.sqrt();
    assert!((t[0] - (0.5 - d)).abs() < 1e-16 && (t[1] - (0.5 + d)).abs() < 1e-16);
    assert!((w[0] - 0.5).abs() < 1e-16 && (w[1] - 0.5).abs() < 1e-16);
}

#[test]
fn symmetric_rule_parameters() {
    // Dunavant's published (15-digit) values are reproduced.
    let r = Quadrature::simplex(2, 4).unwrap();
    assert!((r.point(0)[0] - 0.445_948_490_915_965).abs() < 1e-14);
    assert!((r.weights()[0] - 0.111_690_794_839_005_5).abs() < 1e-14);
    // Keast/Walkington 14-point rule.
    let r = Quadrature::simplex(3, 5).unwrap();
    assert!((r.point(0)[0] - 0.092_735_250_310_891_2).abs() < 1e-14);
    assert!((r.weights()[13] - 0.007_091_003_462_846_911).abs() < 1e-14);
}

#[test]
fn rejects_bad_arguments() {
    for (dim, degree, name) in [
        (1, 2, "dim"),
        (4, 2, "dim"),
        (2, 21, "degree"),
        (3, 99, "degree"),
    ] {
        match Quadrature::simplex(dim, degree) {
            Err(Error::InvalidArgument { name: n, .. }) => assert_eq!(n, name),
            other => panic!("expected error, got {other:?}"),
        }
        assert!(Quadrature::collapsed(dim, degree).is_err());
    }
    assert!(Quadrature::from_parts(2, 1, vec![0.3], vec![0.5]).is_err());
    assert!(Quadrature::from_parts(2, 1, vec![0.3, f64::NAN], vec![0.5]).is_err());
    assert!(Quadrature::from_parts(2, 1, vec![], vec![]).is_err());
    let r = Quadrature::from_parts(2, 1, vec![1.0 / 3.0; 2], vec![0.5]).unwrap();
    assert_eq!(r.n_points(), 1);
}

#[test]
fn default_degree_is_twice_the_order() {
    assert_eq!(default_degree(1), 2);
    assert_eq!(default_degree(2), 4);
}
