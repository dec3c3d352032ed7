//! CG's residual update fused with the reductions it feeds
//! ([`crate::vector::VectorOps::cg_update`]): what it does ([`CgFusion`]) and its host
//! twin for `Vec<R>`.

use rayon::prelude::*;

use super::blocks::{HOST_BLOCK, PARALLEL_MIN};
use super::check_len;
use crate::{Real, Result};

/// What [`crate::vector::VectorOps::cg_update`] does after `x ← x + α p; r ← r − α q` in
/// the same pass over the vectors.
///
/// | variant | also | returns | the unfused sequence it equals |
/// |---|---|---|---|
/// | `Update` | — | `None` | `x.axpy(α, p); r.axpy(−α, q)` |
/// | `Norm` | `r·r` | `Some((r·r, r·r))` | then `r.dots(&[r])` |
/// | `Jacobi` | `z ← d ∘ r`, `r·r`, `r·z` | `Some((r·r, r·z))` | then `z.pointwise_mult(d, r); r.dots(&[r, z])` |
///
/// `Update` serves a general preconditioner (its output is reduced after
/// it is applied), `Norm` no preconditioner, `Jacobi` the diagonal scaling
/// `z = D⁻¹ r` ([`crate::linalg::Jacobi`], `d` its inverse diagonal).
pub enum CgFusion<'a, V> {
    /// The updates only.
    Update,
    /// The updates and `r·r`.
    Norm,
    /// The updates, `z ← d ∘ r`, `r·r` and `r·z`.
    Jacobi {
        /// `d = D⁻¹`, the inverse diagonal.
        inverse_diagonal: &'a V,
        /// The preconditioned residual, overwritten.
        z: &'a mut V,
    },
}

/// One block of the host pass: its first entry and its parts of `r`, `x`
/// (and `z`).
struct Block<'a, R> {
    offset: usize,
    r: &'a mut [R],
    x: &'a mut [R],
    z: Option<&'a mut [R]>,
}

/// [`crate::vector::VectorOps::cg_update`] for host vectors: one pass over blocks of
/// [`HOST_BLOCK`] entries (in parallel from 2¹⁵ entries), each block
/// updated entry by entry and its sums accumulated in `f64` in entry order,
/// the block sums added in block order — the roundings and the order of
/// the unfused host sequence, so the results are bitwise its results.
pub(super) fn cg_update_host<R: Real>(
    r: &mut [R],
    alpha: f64,
    p: &[R],
    q: &[R],
    x: &mut [R],
    then: CgFusion<'_, Vec<R>>,
) -> Result<Option<(f64, f64)>> {
    let n = r.len();
    check_len("p", p.len(), n)?;
    check_len("q", q.len(), n)?;
    check_len("x", x.len(), n)?;
    let (a, na) = (R::from_f64(alpha), R::from_f64(-alpha));
    let (reduce, jacobi) = match then {
        CgFusion::Update => (false, None),
        CgFusion::Norm => (true, None),
        CgFusion::Jacobi {
            inverse_diagonal,
            z,
        } => {
            check_len("inverse_diagonal", inverse_diagonal.len(), n)?;
            check_len("z", z.len(), n)?;
            (true, Some((inverse_diagonal.as_slice(), z.as_mut_slice())))
        }
    };
    let blocks = n.div_ceil(HOST_BLOCK);
    let scaled = jacobi.is_some();
    let (d, zs): (&[R], Vec<Option<&mut [R]>>) = match jacobi {
        Some((d, z)) => (d, z.chunks_mut(HOST_BLOCK).map(Some).collect()),
        None => (&[], (0..blocks).map(|_| None).collect()),
    };
    let work: Vec<Block<'_, R>> = r
        .chunks_mut(HOST_BLOCK)
        .zip(x.chunks_mut(HOST_BLOCK))
        .zip(zs)
        .enumerate()
        .map(|(b, ((r, x), z))| Block {
            offset: b * HOST_BLOCK,
            r,
            x,
            z,
        })
        .collect();
    let block = |Block { offset: o, r, x, z }: Block<'_, R>| {
        let (mut rr, mut rz) = (0.0, 0.0);
        for (k, (r, x)) in r.iter_mut().zip(x.iter_mut()).enumerate() {
            *x += a * p[o + k];
            *r += na * q[o + k];
            if reduce {
                rr += r.to_f64() * r.to_f64();
            }
        }
        if let Some(z) = z {
            for (k, (z, r)) in z.iter_mut().zip(r.iter()).enumerate() {
                *z = d[o + k] * *r;
                rz += r.to_f64() * z.to_f64();
            }
        }
        (rr, rz)
    };
    let sums: Vec<(f64, f64)> = if n >= PARALLEL_MIN {
        work.into_par_iter().map(block).collect()
    } else {
        work.into_iter().map(block).collect()
    };
    if !reduce {
        return Ok(None);
    }
    let (mut rr, mut rz) = (0.0, 0.0);
    for (a, b) in sums {
        rr += a;
        rz += b;
    }
    Ok(Some(if scaled { (rr, rz) } else { (rr, rr) }))
}

/// Asserts that [`crate::vector::VectorOps::cg_update`] on vectors made by
/// `make` (from `f64` values) and read back by `read` gives bitwise the
/// values of the unfused sequence of [`CgFusion`]'s table, for every
/// variant and lengths 0, 1, 5 (a partial block), 1000 and 70 001 (several
/// host blocks, in parallel, and a partial device vector).
#[cfg(test)]
pub(crate) fn assert_fused_is_unfused<V: super::VectorOps>(
    make: &dyn Fn(&[f64]) -> V,
    read: &dyn Fn(&V) -> Vec<f64>,
) {
    let bits = |v: &V| read(v).iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for n in [0usize, 1, 5, 1000, 70_001] {
        let values = |seed: f64| -> Vec<f64> {
            (0..n)
                .map(|i| (0.37 * i as f64 + seed).sin() * (1.0 + seed))
                .collect()
        };
        let d: Vec<f64> = values(5.0).iter().map(|v| 1.0 / (2.5 + v / 6.0)).collect();
        let (p, q, d) = (make(&values(3.0)), make(&values(4.0)), make(&d));
        let alpha = 0.371_3;
        for mode in 0..3 {
            let (mut x, mut r, mut z) =
                (make(&values(1.0)), make(&values(2.0)), make(&vec![0.0; n]));
            let (mut x2, mut r2, mut z2) =
                (make(&values(1.0)), make(&values(2.0)), make(&vec![0.0; n]));
            x.axpy(alpha, &p).unwrap();
            r.axpy(-alpha, &q).unwrap();
            let unfused = match mode {
                0 => None,
                1 => Some(r.dots(&[&r]).unwrap()[0]).map(|rr| (rr, rr)),
                _ => {
                    z.pointwise_mult(&d, &r).unwrap();
                    let s = r.dots(&[&r, &z]).unwrap();
                    Some((s[0], s[1]))
                }
            };
            let then = match mode {
                0 => CgFusion::Update,
                1 => CgFusion::Norm,
                _ => CgFusion::Jacobi {
                    inverse_diagonal: &d,
                    z: &mut z2,
                },
            };
            let fused = r2.cg_update(alpha, &p, &q, &mut x2, then).unwrap();
            let pair = |s: Option<(f64, f64)>| s.map(|(a, b)| (a.to_bits(), b.to_bits()));
            assert_eq!(pair(fused), pair(unfused), "n = {n}, mode {mode}: sums");
            assert_eq!(bits(&x2), bits(&x), "n = {n}, mode {mode}: x");
            assert_eq!(bits(&r2), bits(&r), "n = {n}, mode {mode}: r");
            assert_eq!(bits(&z2), bits(&z), "n = {n}, mode {mode}: z");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::vector::VectorOps;

    #[test]
    fn host_fused_update_is_the_unfused_sequence() {
        assert_fused_is_unfused::<Vec<f64>>(&|v| v.to_vec(), &|v| v.clone());
        assert_fused_is_unfused::<Vec<f32>>(&|v| v.iter().map(|&x| x as f32).collect(), &|v| {
            v.iter().map(|&x| f64::from(x)).collect()
        });
    }

    #[test]
    fn wrong_lengths_are_named() {
        let (p, q) = (vec![1.0f64; 3], vec![1.0; 3]);
        let (mut r, mut x) = (vec![1.0; 3], vec![1.0; 2]);
        let e = r
            .cg_update(0.5, &p, &q, &mut x, CgFusion::Norm)
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { name, .. } if *name == "x"),
            "{e}"
        );
        let mut x = vec![1.0; 3];
        let mut z = vec![0.0; 4];
        let d = vec![1.0; 3];
        let then = CgFusion::Jacobi {
            inverse_diagonal: &d,
            z: &mut z,
        };
        let e = r.cg_update(0.5, &p, &q, &mut x, then).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { name, .. } if *name == "z"),
            "{e}"
        );
    }
}
