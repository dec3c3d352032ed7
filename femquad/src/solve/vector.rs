//! The few vector operations the Krylov solvers need, serial and in a fixed
//! order (results do not depend on the thread count).

/// Euclidean inner product `Σ a_i b_i`.
///
/// # Panics
/// Never; if the lengths differ, the shorter length is used (the solvers
/// check lengths before calling).
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Euclidean norm `‖a‖₂`.
pub fn norm2(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// `y += alpha x`.
pub(crate) fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// Largest absolute value, `‖a‖_∞` (0 for an empty slice).
pub(crate) fn norm_inf(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_operations() {
        assert_eq!(dot(&[1.0, 2.0, 3.0], &[4.0, -5.0, 6.0]), 12.0);
        assert_eq!(norm2(&[3.0, 4.0]), 5.0);
        let mut y = [1.0, 1.0];
        axpy(2.0, &[0.5, -1.0], &mut y);
        assert_eq!(y, [2.0, -1.0]);
        assert_eq!(norm_inf(&[1.0, -7.0, 3.0]), 7.0);
        assert_eq!(norm_inf(&[]), 0.0);
    }
}
