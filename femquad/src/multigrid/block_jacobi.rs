//! [`PointBlockJacobi`]: the inverse of an operator's point-block diagonal,
//! on host or device vectors; and the random start vectors of the
//! eigenvalue estimates.

use std::sync::Arc;

use rayon::prelude::*;

use crate::backend::{IndexSet, Vector};
use crate::opencl::multigrid::{MultigridKernels, block_tolerance};
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// Nodes per rayon task.
const BLOCK: usize = 1 << 12;

/// Point-block Jacobi: for a field of `N_comp` components (dofs interleaved
/// node-major), `D` is the block-diagonal part of an operator `A` with one
/// `N_comp × N_comp` block per node,
///
/// ```text
/// D_n[fc][gc] = A[n·N_comp + fc][n·N_comp + gc],
/// ```
///
/// (for a scalar field, the diagonal), with the rows and columns of fixed
/// (Dirichlet) dofs replaced by the identity's — the diagonal blocks of the
/// constrained operator, whose fixed rows are the identity. Each block is
/// inverted once, at construction (Gauss–Jordan with partial pivoting), and
/// [`PointBlockJacobi::update`] applies `D⁻¹` blockwise: one pass over the
/// vector, no assembly. Point-block (rather than pointwise) Jacobi keeps
/// the coupling of the components at a node, which for elasticity is as
/// strong as the diagonal.
///
/// On device vectors inversion and application are device kernels
/// ([`MultigridKernels::block_invert`], [`MultigridKernels::block_update`]);
/// on host vectors their native twins do the same operations in the same
/// order.
///
/// # Example
/// ```
/// use femquad::multigrid::PointBlockJacobi;
/// use femquad::backend::{IndexSet, Vector};
///
/// // one node, two components: D = [[2, 1], [1, 2]], nothing fixed
/// let blocks = Vector::from(vec![2.0, 1.0, 1.0, 2.0]);
/// let fixed = IndexSet::Host(vec![]);
/// let jacobi = PointBlockJacobi::new(blocks, 2, &fixed)?;
/// let mut z = Vector::from(vec![0.0; 2]);
/// jacobi.apply(&Vector::from(vec![3.0, 3.0]), &mut z)?; // z = D⁻¹ r
/// assert_eq!(z.to_host()?, vec![1.0, 1.0]);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Debug)]
pub struct PointBlockJacobi<R: Real> {
    n_comp: usize,
    inverse: Vector<R>,
    kernels: Option<Arc<MultigridKernels<R>>>,
}

impl<R: Real> PointBlockJacobi<R> {
    /// Inverts the diagonal blocks `blocks` (`n_nodes·N_comp²` entries,
    /// `[node][fc][gc]`, where the vectors live; consumed: it becomes the
    /// inverse) after fixing the rows of the dofs `fixed`.
    ///
    /// On a device this builds the multigrid kernels for `n_comp`; use
    /// [`PointBlockJacobi::with_kernels`] to share them.
    ///
    /// # Errors
    /// As [`PointBlockJacobi::with_kernels`].
    pub fn new(blocks: Vector<R>, n_comp: usize, fixed: &IndexSet) -> Result<Self> {
        let kernels = match &blocks {
            Vector::Host(_) => None,
            Vector::Device(d) => Some(MultigridKernels::new(d.device(), n_comp)?),
        };
        Self::with_kernels(blocks, n_comp, fixed, kernels)
    }

    /// As [`PointBlockJacobi::new`], with the device kernels given (`None`
    /// for host vectors).
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`] naming `blocks` if its length is not a
    ///   whole number of blocks or it lives elsewhere than `fixed` (or on a
    ///   device without `kernels`), `fixed` for a dof out of range,
    ///   `kernels` if built for another `N_comp`.
    /// * [`Error::InvalidArgument`] naming `blocks` and the node whose block
    ///   is singular (its largest available pivot not above `N_comp·ε` times
    ///   its largest entry) or holds NaN or ±∞.
    pub fn with_kernels(
        mut blocks: Vector<R>,
        n_comp: usize,
        fixed: &IndexSet,
        kernels: Option<Arc<MultigridKernels<R>>>,
    ) -> Result<Self> {
        if n_comp == 0 {
            return Err(Error::arg("n_comp", "a field has at least one component"));
        }
        let nc2 = n_comp * n_comp;
        if !blocks.len().is_multiple_of(nc2) {
            return Err(Error::arg(
                "blocks",
                format!(
                    "{} entries are not whole {n_comp}×{n_comp} blocks",
                    blocks.len()
                ),
            ));
        }
        let n_nodes = blocks.len() / nc2;
        let mut inverse = blocks.zeros_like()?;
        match (&mut blocks, fixed, &mut inverse) {
            (Vector::Host(b), IndexSet::Host(f), Vector::Host(inv)) => {
                fix_host(b, n_comp, f)?;
                invert_host(inv, b, n_comp);
            }
            (Vector::Device(b), IndexSet::Device(f), Vector::Device(inv)) => {
                let k = device_kernels(&kernels, n_comp)?;
                k.block_fix(b, f)?;
                k.block_invert(inv, b)?;
            }
            _ => {
                return Err(Error::arg(
                    "blocks",
                    "the blocks and the fixed dofs live in different places (host and device)",
                ));
            }
        }
        if let Some(i) = inverse.first_non_finite()? {
            let node = i / nc2;
            let original: Vec<f64> = match &blocks {
                Vector::Host(b) => b[node * nc2..(node + 1) * nc2]
                    .iter()
                    .map(|v| v.to_f64())
                    .collect(),
                Vector::Device(_) => (0..nc2)
                    .map(|j| blocks.value_at(node * nc2 + j))
                    .collect::<Result<_>>()?,
            };
            return Err(Error::arg(
                "blocks",
                format!(
                    "the diagonal block of node {node} (of {n_nodes}) is singular or not finite: \
                     {original:?} (row-major, {n_comp}×{n_comp}); point-block Jacobi needs \
                     invertible blocks"
                ),
            ));
        }
        Ok(PointBlockJacobi {
            n_comp,
            inverse,
            kernels,
        })
    }

    /// Components per node.
    pub fn n_comp(&self) -> usize {
        self.n_comp
    }

    /// The inverse blocks `D_n⁻¹`, `[node][fc][gc]`.
    pub fn inverse(&self) -> &Vector<R> {
        &self.inverse
    }

    /// Dofs of the vectors it applies to.
    pub fn n_dofs(&self) -> usize {
        self.inverse.len() / self.n_comp
    }

    /// `y ← a·y + b·D⁻¹r` in one pass (`a = 0`: `y = b·D⁻¹r`, whatever `y`
    /// held if finite).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `r` or `y` for a wrong length or
    /// place.
    pub fn update(&self, y: &mut Vector<R>, a: f64, r: &Vector<R>, b: f64) -> Result<()> {
        let n = self.n_dofs();
        for (name, len) in [("r", r.len()), ("y", y.len())] {
            if len != n {
                return Err(Error::arg(name, format!("expected {n} entries, got {len}")));
            }
        }
        match (y, &self.inverse, r) {
            (Vector::Host(y), Vector::Host(inv), Vector::Host(r)) => {
                update_host(y, R::from_f64(a), inv, r, R::from_f64(b), self.n_comp);
                Ok(())
            }
            (Vector::Device(y), Vector::Device(inv), Vector::Device(r)) => {
                device_kernels(&self.kernels, self.n_comp)?.block_update(y, a, inv, r, b)
            }
            _ => Err(Error::arg(
                "r",
                "`r` and `y` must live where the blocks live (host or device)",
            )),
        }
    }

    /// `z = D⁻¹ r`.
    ///
    /// # Errors
    /// As [`PointBlockJacobi::update`].
    pub fn apply(&self, r: &Vector<R>, z: &mut Vector<R>) -> Result<()> {
        self.update(z, 0.0, r, 1.0)
    }
}

fn device_kernels<R: Real>(
    kernels: &Option<Arc<MultigridKernels<R>>>,
    n_comp: usize,
) -> Result<&Arc<MultigridKernels<R>>> {
    match kernels {
        Some(k) if k.n_comp() == n_comp => Ok(k),
        Some(k) => Err(Error::arg(
            "kernels",
            format!(
                "built for {} components, the field has {n_comp}",
                k.n_comp()
            ),
        )),
        None => Err(Error::arg(
            "kernels",
            "device vectors need the multigrid kernels of their device",
        )),
    }
}

/// Rows and columns of fixed dofs to the identity's (host twin of
/// `mg_block_fix`).
fn fix_host<R: Real>(blocks: &mut [R], n_comp: usize, fixed: &[u32]) -> Result<()> {
    let n = blocks.len() / n_comp;
    for &d in fixed {
        let d = d as usize;
        if d >= n {
            return Err(Error::arg(
                "fixed",
                format!("dof {d} is out of range ({n} dofs)"),
            ));
        }
        let (node, c) = (d / n_comp, d % n_comp);
        let b = &mut blocks[node * n_comp * n_comp..(node + 1) * n_comp * n_comp];
        for j in 0..n_comp {
            let v = if j == c { R::ONE } else { R::ZERO };
            b[c * n_comp + j] = v;
            b[j * n_comp + c] = v;
        }
    }
    Ok(())
}

/// Host twin of `mg_block_invert`: the same elimination, the same order.
fn invert_host<R: Real>(inv: &mut [R], blocks: &[R], n_comp: usize) {
    let nc2 = n_comp * n_comp;
    let tol = R::from_f64(block_tolerance(R::PRECISION, n_comp));
    inv.par_chunks_mut(nc2 * BLOCK)
        .zip(blocks.par_chunks(nc2 * BLOCK))
        .for_each(|(inv, blocks)| {
            let mut a = vec![R::ZERO; nc2];
            let mut v = vec![R::ZERO; nc2];
            for (out, block) in inv.chunks_mut(nc2).zip(blocks.chunks(nc2)) {
                let mut scale = R::ZERO;
                for i in 0..n_comp {
                    for j in 0..n_comp {
                        a[i * n_comp + j] = block[i * n_comp + j];
                        v[i * n_comp + j] = if i == j { R::ONE } else { R::ZERO };
                        // fmax: a NaN entry is skipped (the pivot test catches it)
                        if a[i * n_comp + j].abs() > scale {
                            scale = a[i * n_comp + j].abs();
                        }
                    }
                }
                let mut ok = scale.is_finite();
                for col in 0..n_comp {
                    if !ok {
                        break;
                    }
                    let mut p = col;
                    let mut m = a[col * n_comp + col].abs();
                    for r in col + 1..n_comp {
                        if a[r * n_comp + col].abs() > m {
                            m = a[r * n_comp + col].abs();
                            p = r;
                        }
                    }
                    // NaN compares false: not above the tolerance
                    if m.partial_cmp(&(tol * scale)) != Some(std::cmp::Ordering::Greater) {
                        ok = false;
                        break;
                    }
                    if p != col {
                        for j in 0..n_comp {
                            a.swap(p * n_comp + j, col * n_comp + j);
                            v.swap(p * n_comp + j, col * n_comp + j);
                        }
                    }
                    let piv = a[col * n_comp + col];
                    for j in 0..n_comp {
                        a[col * n_comp + j] = a[col * n_comp + j] / piv;
                        v[col * n_comp + j] = v[col * n_comp + j] / piv;
                    }
                    for r in 0..n_comp {
                        if r == col {
                            continue;
                        }
                        let f = a[r * n_comp + col];
                        for j in 0..n_comp {
                            a[r * n_comp + j] = a[r * n_comp + j] - f * a[col * n_comp + j];
                            v[r * n_comp + j] = v[r * n_comp + j] - f * v[col * n_comp + j];
                        }
                    }
                }
                for (o, &x) in out.iter_mut().zip(&v) {
                    *o = if ok { x } else { R::from_f64(f64::NAN) };
                }
            }
        });
}

/// Host twin of `mg_block_update`.
fn update_host<R: Real>(y: &mut [R], a: R, inv: &[R], r: &[R], b: R, n_comp: usize) {
    let nc2 = n_comp * n_comp;
    y.par_chunks_mut(n_comp * BLOCK)
        .enumerate()
        .for_each(|(t, chunk)| {
            for (j, yi) in chunk.iter_mut().enumerate() {
                let i = t * n_comp * BLOCK + j;
                let (n, fc) = (i / n_comp, i % n_comp);
                let mut s = R::ZERO;
                for g in 0..n_comp {
                    s += inv[n * nc2 + fc * n_comp + g] * r[n * n_comp + g];
                }
                *yi = a * *yi + b * s;
            }
        });
}

/// `x[i]` uniform in `[−1, 1)`: 24 bits of SplitMix64's output for
/// `seed + (i + 1)·φ` (φ = `0x9e3779b97f4a7c15`), exact in `f32` and `f64`
/// — on a device vector by a kernel, so no array is uploaded, and the same
/// numbers on the host and on every device. The start vectors of the
/// eigenvalue estimates.
///
/// # Errors
/// Device errors; on a device this builds the multigrid kernels (one
/// component) if `kernels` is `None`.
pub fn fill_random<R: Real>(
    x: &mut Vector<R>,
    seed: u64,
    kernels: Option<&Arc<MultigridKernels<R>>>,
) -> Result<()> {
    match x {
        Vector::Host(v) => {
            v.par_iter_mut()
                .with_min_len(BLOCK)
                .enumerate()
                .for_each(|(i, xi)| *xi = random_at(seed, i as u64));
            Ok(())
        }
        Vector::Device(d) => match kernels {
            Some(k) => k.fill_random(d, seed),
            None => MultigridKernels::<R>::new(d.device(), 1)?.fill_random(d, seed),
        },
    }
}

fn random_at<R: Real>(seed: u64, i: u64) -> R {
    let mut z = seed.wrapping_add((i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let k = (z >> 40) as i64;
    R::from_f64((2 * k - (1 << 24)) as f64) * R::from_f64(1.0 / 16_777_216.0)
}
