//! [`VectorOps`] for host vectors `Vec<R>`: rayon-parallel for long
//! vectors, reductions over fixed blocks in a fixed order.

use std::ops::Range;

use rayon::prelude::*;

use super::blocks::{HOST_BLOCK, PARALLEL_MIN};
use super::fused::{CgFusion, cg_update_host};
use super::{VectorOps, check_len, check_len_of};
use crate::{Error, Precision, Real, Result};

/// The entries of block `b` of a vector of `len`.
fn block(b: usize, len: usize) -> Range<usize> {
    b * HOST_BLOCK..((b + 1) * HOST_BLOCK).min(len)
}

/// Reduces a vector of `len` entries to `m` values: `partial(range, out)`
/// accumulates one block into `out` (starting from `init`), and the block
/// results are combined in block order by `combine`.
fn blocked(
    len: usize,
    m: usize,
    init: f64,
    partial: impl Fn(Range<usize>, &mut [f64]) + Sync,
    combine: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    let blocks = len.div_ceil(HOST_BLOCK);
    let one = |b: usize| {
        let mut out = vec![init; m];
        partial(block(b, len), &mut out);
        out
    };
    let per_block: Vec<Vec<f64>> = if len >= PARALLEL_MIN {
        (0..blocks).into_par_iter().map(one).collect()
    } else {
        (0..blocks).map(one).collect()
    };
    let mut total = vec![init; m];
    for p in per_block {
        for (t, v) in total.iter_mut().zip(p) {
            *t = combine(*t, v);
        }
    }
    total
}

/// Applies `f(offset, chunk)` to chunks of `y` (in parallel when long).
fn for_chunks<R: Real>(y: &mut [R], f: impl Fn(usize, &mut [R]) + Sync) {
    if y.len() >= PARALLEL_MIN {
        y.par_chunks_mut(HOST_BLOCK)
            .enumerate()
            .for_each(|(b, c)| f(b * HOST_BLOCK, c));
    } else {
        f(0, y);
    }
}

/// `y_i ← round_R(x_i)`: the host vector `x` of precision `S` converted to
/// the precision `R` of `y` — from `f64` to `f32` rounded to nearest, ties
/// to even (Rust's `as`; beyond `f32::MAX` ±∞, below the smallest
/// subnormal ±0), from `f32` to `f64` exact, within one precision a copy.
/// Bitwise what a backend's device conversion computes
/// ([`Vector::convert_from`](crate::backend::Vector::convert_from) on either);
/// rayon-parallel for long vectors.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `x` if its length is not `y`'s.
pub fn convert<S: Real, R: Real>(x: &[S], y: &mut [R]) -> Result<()> {
    check_len("x", x.len(), y.len())?;
    for_chunks(y, |o, c| {
        for (y, &x) in c.iter_mut().zip(&x[o..]) {
            *y = R::from_f64(x.to_f64());
        }
    });
    Ok(())
}

/// `max` that propagates NaN, as the device kernels do.
pub(crate) fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || a > b { a } else { b }
}

fn check_all<R>(name: &'static str, xs: &[&Vec<R>], len: usize) -> Result<()> {
    for (j, x) in xs.iter().enumerate() {
        if x.len() != len {
            return Err(Error::arg(
                name,
                format!("{name}[{j}]: expected {len} entries, got {}", x.len()),
            ));
        }
    }
    Ok(())
}

impl<R: Real> VectorOps for Vec<R> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn precision(&self) -> Precision {
        R::PRECISION
    }

    fn zeros_like(&self) -> Result<Self> {
        Ok(vec![R::ZERO; Vec::len(self)])
    }

    fn check_compatible(&self, own: &str, name: &'static str, other: &Self) -> Result<()> {
        check_len_of(own, name, other.len(), self.len())
    }

    fn copy_from(&mut self, x: &Self) -> Result<()> {
        check_len("x", x.len(), self.len())?;
        for_chunks(self, |o, c| c.copy_from_slice(&x[o..o + c.len()]));
        Ok(())
    }

    fn fill(&mut self, value: f64) -> Result<()> {
        let a = R::from_f64(value);
        for_chunks(self, |_, c| c.fill(a));
        Ok(())
    }

    fn scale(&mut self, alpha: f64) -> Result<()> {
        let a = R::from_f64(alpha);
        for_chunks(self, |_, c| c.iter_mut().for_each(|y| *y = a * *y));
        Ok(())
    }

    fn axpy(&mut self, alpha: f64, x: &Self) -> Result<()> {
        check_len("x", x.len(), self.len())?;
        let a = R::from_f64(alpha);
        for_chunks(self, |o, c| {
            for (y, &x) in c.iter_mut().zip(&x[o..]) {
                *y += a * x;
            }
        });
        Ok(())
    }

    fn axpby(&mut self, alpha: f64, x: &Self, beta: f64) -> Result<()> {
        check_len("x", x.len(), self.len())?;
        let (a, b) = (R::from_f64(alpha), R::from_f64(beta));
        for_chunks(self, |o, c| {
            for (y, &x) in c.iter_mut().zip(&x[o..]) {
                *y = a * x + b * *y;
            }
        });
        Ok(())
    }

    fn pointwise_mult(&mut self, x: &Self, z: &Self) -> Result<()> {
        check_len("x", x.len(), self.len())?;
        check_len("y", z.len(), self.len())?;
        for_chunks(self, |o, c| {
            for ((w, &x), &z) in c.iter_mut().zip(&x[o..]).zip(&z[o..]) {
                *w = x * z;
            }
        });
        Ok(())
    }

    fn dot(&self, y: &Self) -> Result<f64> {
        check_len("y", y.len(), self.len())?;
        Ok(self.dots(&[y])?[0])
    }

    fn norm2(&self) -> Result<f64> {
        Ok(self.dots(&[self])?[0].sqrt())
    }

    fn norm_inf(&self) -> Result<f64> {
        let m = blocked(
            self.len(),
            1,
            0.0,
            |r, out| {
                for v in &self[r] {
                    out[0] = nan_max(out[0], v.abs().to_f64());
                }
            },
            nan_max,
        );
        Ok(m[0])
    }

    fn dots(&self, vs: &[&Self]) -> Result<Vec<f64>> {
        check_all("vs", vs, self.len())?;
        Ok(blocked(
            self.len(),
            vs.len(),
            0.0,
            |r, out| {
                for (s, v) in out.iter_mut().zip(vs) {
                    for (x, y) in self[r.clone()].iter().zip(&v[r.clone()]) {
                        *s += x.to_f64() * y.to_f64();
                    }
                }
            },
            |a, b| a + b,
        ))
    }

    fn maxpy(&mut self, alphas: &[f64], xs: &[&Self]) -> Result<()> {
        check_len("alphas", alphas.len(), xs.len())?;
        check_all("xs", xs, self.len())?;
        let a: Vec<R> = alphas.iter().map(|&a| R::from_f64(a)).collect();
        for_chunks(self, |o, c| {
            for (k, y) in c.iter_mut().enumerate() {
                let mut v = *y;
                for (&a, x) in a.iter().zip(xs) {
                    v += a * x[o + k];
                }
                *y = v;
            }
        });
        Ok(())
    }

    fn cg_update(
        &mut self,
        alpha: f64,
        p: &Self,
        q: &Self,
        x: &mut Self,
        then: CgFusion<'_, Self>,
    ) -> Result<Option<(f64, f64)>> {
        cg_update_host(self, alpha, p, q, x, then)
    }

    fn first_non_finite(&self) -> Result<Option<usize>> {
        Ok(if self.len() >= PARALLEL_MIN {
            self.par_iter().position_first(|v| !v.is_finite())
        } else {
            crate::real::first_non_finite(self)
        })
    }

    fn value_at(&self, index: usize) -> Result<f64> {
        self.as_slice()
            .get(index)
            .map(|v| v.to_f64())
            .ok_or_else(|| {
                Error::arg(
                    "index",
                    format!(
                        "{index} is out of range for a vector of {} entries",
                        self.len()
                    ),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_operations() {
        let x = vec![1.0, 2.0, 3.0];
        assert_eq!(x.dot(&vec![4.0, -5.0, 6.0]).unwrap(), 12.0);
        assert_eq!(vec![3.0, 4.0].norm2().unwrap(), 5.0);
        let mut y = vec![1.0, 1.0];
        y.axpy(2.0, &vec![0.5, -1.0]).unwrap();
        assert_eq!(y, [2.0, -1.0]);
        y.axpby(2.0, &vec![1.0, 1.0], -1.0).unwrap();
        assert_eq!(y, [0.0, 3.0]);
        assert_eq!(vec![1.0, -7.0, 3.0].norm_inf().unwrap(), 7.0);
        assert_eq!(Vec::<f64>::new().norm_inf().unwrap(), 0.0);
        assert!(vec![1.0, f64::NAN, 9.0].norm_inf().unwrap().is_nan());
        let mut w = vec![0.0; 2];
        w.pointwise_mult(&vec![2.0, 3.0], &vec![4.0, 5.0]).unwrap();
        assert_eq!(w, [8.0, 15.0]);
        let mut z = vec![1.0, 1.0];
        z.maxpy(&[1.0, -2.0], &[&vec![1.0, 2.0], &vec![0.5, 0.5]])
            .unwrap();
        assert_eq!(z, [1.0, 2.0]);
        assert_eq!(
            vec![1.0, 2.0]
                .dots(&[&vec![1.0, 0.0], &vec![0.0, 1.0]])
                .unwrap(),
            [1.0, 2.0]
        );
        assert_eq!(
            vec![1.0f32, f32::INFINITY].first_non_finite().unwrap(),
            Some(1)
        );
        assert_eq!(vec![2.5f32].value_at(0).unwrap(), 2.5);
    }

    #[test]
    fn reductions_are_blockwise_and_parallel_results_equal_serial_ones() {
        // Long enough for the parallel path; the same blocks summed serially
        // give the bitwise same value.
        let n = 3 * PARALLEL_MIN + 17;
        let x: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 1013) as f64 * 1e-3 - 0.4)
            .collect();
        let y: Vec<f64> = (0..n)
            .map(|i| ((i * 104_729) % 997) as f64 * 1e-2)
            .collect();
        let mut serial = 0.0;
        for b in 0..n.div_ceil(HOST_BLOCK) {
            let mut s = 0.0;
            for i in block(b, n) {
                s += x[i] * y[i];
            }
            serial += s;
        }
        assert_eq!(x.dot(&y).unwrap(), serial);
        assert_eq!(x.dots(&[&y, &x]).unwrap()[0], serial);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| x.dot(&y).unwrap()), serial);
    }

    #[test]
    fn length_mismatch_names_the_operand() {
        let mut y = vec![0.0; 3];
        let e = y.axpy(1.0, &vec![1.0; 2]).unwrap_err().to_string();
        assert!(
            e.contains("`x`") && e.contains("expected 3 entries, got 2"),
            "{e}"
        );
        let e = y
            .dots(&[&y.clone(), &vec![0.0; 4]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`vs`") && e.contains("vs[1]"), "{e}");
        let e = y.maxpy(&[1.0], &[]).unwrap_err().to_string();
        assert!(e.contains("`alphas`"), "{e}");
        assert!(
            y.value_at(3)
                .unwrap_err()
                .to_string()
                .contains("out of range")
        );
    }
}
