//! The SpMV of a [`DeviceCsr`] against the host CSR product, on matrices
//! the assembled operators do not make: empty rows, single-entry rows and
//! rows of very unequal length (the operators' matrices are tested in
//! `crate::operator::jacobian::tests`).

use super::DeviceCsr;
use super::lanes::SPMV_LANES;
use crate::opencl::DeviceVector;
use crate::opencl::testing;
use crate::rng::Rng;
use crate::sparse::{CsrMatrix, SparsityPattern};
use crate::{Error, Real};

/// Rows of lengths 0, 1, 2, 3, 5, 31, 32, 33, 100, 300 and 0 again,
/// repeated; columns spread over all rows (strictly increasing), values
/// and `x` uniform in [−1, 1).
fn unequal_rows() -> (CsrMatrix, Vec<f64>) {
    let lengths = [0usize, 1, 2, 3, 5, 31, 32, 33, 100, 300, 0];
    let n = 4 * lengths.len() + 300;
    let mut rng = Rng::new(11);
    let (mut row_ptr, mut col_idx) = (vec![0usize], Vec::new());
    for i in 0..n {
        let len = lengths[i % lengths.len()];
        // `len` distinct columns: every n/len-th, shifted by the row
        let step = n / len.max(1);
        col_idx.extend((0..len).map(|j| ((j * step + i % step.max(1)) % n) as u32));
        let row = &mut col_idx[row_ptr[i]..];
        row.sort_unstable();
        row_ptr.push(col_idx.len());
    }
    let nnz = col_idx.len();
    let pattern = SparsityPattern::from_csr(n, n, row_ptr, col_idx).unwrap();
    let values = (0..nnz).map(|_| 2.0 * rng.uniform() - 1.0).collect();
    let x = (0..n).map(|_| 2.0 * rng.uniform() - 1.0).collect();
    (CsrMatrix::from_parts(pattern, values).unwrap(), x)
}

/// `max |a − b| / max |b|`.
fn relative(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    diff / scale.max(f64::MIN_POSITIVE)
}

/// For every team size: `A x` on the device is the host product (to
/// `tol`, both from the values and `x` rounded to `R`), empty rows give 0,
/// and two applies give the same bits.
fn spmv_is_the_host_product<R: Real>(tol: f64) {
    let device = testing::device();
    let (a, x) = unequal_rows();
    let rounded: Vec<f64> = a
        .values()
        .iter()
        .map(|&v| R::from_f64(v).to_f64())
        .collect();
    let a_r = CsrMatrix::from_parts(a.pattern().clone(), rounded).unwrap();
    let x_r: Vec<R> = x.iter().map(|&v| R::from_f64(v)).collect();
    let mut expected = vec![0.0; a.n_rows()];
    let x_f64: Vec<f64> = x_r.iter().map(|v| v.to_f64()).collect();
    a_r.spmv(&x_f64, &mut expected).unwrap();

    let mut m = DeviceCsr::<R>::from_host(&device, &a).unwrap();
    assert!(m.lanes() >= 1 && SPMV_LANES.contains(&m.lanes()));
    let xd = DeviceVector::from_host(&device, &x_r).unwrap();
    for lanes in SPMV_LANES {
        m.set_lanes(lanes).unwrap();
        let mut y =
            DeviceVector::<R>::from_host(&device, &vec![R::from_f64(7.0); a.n_rows()]).unwrap();
        m.apply(&xd, &mut y).unwrap();
        let first = y.to_host().unwrap();
        let got: Vec<f64> = first.iter().map(|v| v.to_f64()).collect();
        let err = relative(&got, &expected);
        assert!(err <= tol, "{lanes} lanes: |A x − host| = {err:e}");
        for (i, g) in got.iter().enumerate() {
            if a.pattern().row(i).unwrap().is_empty() {
                assert_eq!(*g, 0.0, "{lanes} lanes: empty row {i}");
            }
        }
        m.apply(&xd, &mut y).unwrap();
        let second = y.to_host().unwrap();
        let bits = |v: &[R]| v.iter().map(|r| r.to_f64().to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&first),
            bits(&second),
            "{lanes} lanes: not reproducible"
        );
    }
}

#[test]
fn spmv_of_unequal_rows_is_the_host_product_f64() {
    spmv_is_the_host_product::<f64>(1e-12);
}

#[test]
fn spmv_of_unequal_rows_is_the_host_product_f32() {
    spmv_is_the_host_product::<f32>(1e-5);
}

/// A team size the kernel does not run with and a rectangular host
/// matrix: refused, naming the argument.
#[test]
fn bad_lanes_and_shapes_are_named() {
    let device = testing::device();
    let (a, _) = unequal_rows();
    let mut m = DeviceCsr::<f64>::from_host(&device, &a).unwrap();
    let before = m.lanes();
    for bad in [0, 3, 64] {
        let e = m.set_lanes(bad).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { name, .. } if *name == "lanes"),
            "{e}"
        );
        assert_eq!(m.lanes(), before, "a refused team size is not kept");
    }
    let pattern = SparsityPattern::from_csr(2, 3, vec![0, 1, 2], vec![0, 2]).unwrap();
    let wide = CsrMatrix::from_parts(pattern, vec![1.0, 2.0]).unwrap();
    let e = DeviceCsr::<f64>::from_host(&device, &wide).err().unwrap();
    assert!(
        matches!(&e, Error::InvalidArgument { name, .. } if *name == "a"),
        "{e}"
    );
    assert!(e.to_string().contains("2 × 3"), "{e}");
}
