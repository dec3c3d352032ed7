//! Assembled matrices and direct solvers ([`crate::sparse`], which
//! implements [`LinearOperator`](crate::linalg::LinearOperator) for them) as
//! operators of the Krylov solvers: tests.

#[cfg(test)]
mod tests {
    use crate::linalg::LinearOperator;
    use crate::solve::cg;
    use crate::sparse::{CsrMatrix, DirectSolver};

    /// tridiag(−1, 2, −1) of size `n`.
    fn laplace_1d(n: usize) -> CsrMatrix {
        let mut e = Vec::new();
        for i in 0..n {
            e.push((i, i, 2.0));
            if i > 0 {
                e.extend([(i, i - 1, -1.0), (i - 1, i, -1.0)]);
            }
        }
        CsrMatrix::from_triplets(n, n, &e).unwrap()
    }

    #[test]
    fn cg_with_the_matrix_and_its_factorization() {
        let n = 50;
        let mut a = laplace_1d(n);
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
        // Plain CG on the matrix.
        let mut x = vec![0.0; n];
        let plain = cg(&mut a, None, &b, &mut x, 1e-12, 200).unwrap();
        // Preconditioned by the exact inverse: one iteration.
        let mut exact = DirectSolver::cholesky(&a).unwrap();
        let mut y = vec![0.0; n];
        let pre = cg(&mut a, Some(&mut exact), &b, &mut y, 1e-12, 200).unwrap();
        assert!(plain.iterations > 10, "{}", plain.iterations);
        assert_eq!(pre.iterations, 1);
        let diff = x
            .iter()
            .zip(&y)
            .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(diff < 1e-9, "{diff:e}");
        let mut ay = vec![0.0; n];
        a.apply(&y, &mut ay).unwrap();
        let res = ay
            .iter()
            .zip(&b)
            .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(res < 1e-12, "{res:e}");
    }
}
