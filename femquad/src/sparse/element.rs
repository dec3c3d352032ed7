//! Element matrices from pointwise Jacobians, natively.

use rayon::prelude::*;

use crate::discretization::{CellInputs, Discretization};
use crate::error::check_len;
use crate::layout::{self, elem_mat};
use crate::native::{Execution, PointValues};
use crate::physics::PointArgs;
use crate::real::check_finite;
use crate::{Error, Real, Result};

/// Cells per rayon task.
const CELLS_PER_TASK: usize = 256;

/// Element matrices `K_c` (the Jacobian of the element vectors of
/// [`crate::discretization`] with respect to the cell's coefficients) for
/// every cell, from a pointwise Jacobian in PETSc's form:
///
/// ```text
/// K_c[i][j] = Σ_q w_q det J_c ( φ_a g0[fc][gc] φ_b + φ_a g1[fc][gc][:]·∇φ_b
///                             + ∇φ_a·g2[fc][:][gc] φ_b + ∇φ_a·g3[fc][:][gc][:]·∇φ_b ),
/// i = a·N_comp + fc,   j = b·N_comp + gc,
/// ```
///
/// with `∇φ = J⁻ᵀ ∇̂φ` the physical gradients and `g0…g3` evaluated at the
/// quadrature point `x_q` at `u, ∇u, a, ∇a, x` computed exactly as the native
/// element-vector integrator computes them ([`crate::native`]), in the
/// discretization's precision `R`. The rest is `f64`: `g0…g3` widened, the
/// `f64` tabulation and quadrature weights, the geometry widened from `R`.
/// So the matrix of an `f64` discretization is computed entirely in `f64`,
/// and that of an `f32` one rounds only its pointwise Jacobians (and its
/// point values and geometry) to `f32`: it is symmetric to `f64` rounding
/// wherever they are (a contraction in `f32` would not be, and Cholesky
/// refuses it).
///
/// `jacobian(dim, args, g0, g1, g2, g3)` receives the point's arguments and
/// zeroed outputs, and writes (with `Nc = N_comp`)
/// * `g0[fc·Nc + gc] = ∂f0_fc/∂u_gc`,
/// * `g1[(fc·Nc + gc)·dim + dg] = ∂f0_fc/∂(∇u)_gc,dg`,
/// * `g2[(fc·Nc + gc)·dim + df] = ∂f1_fc,df/∂u_gc`,
/// * `g3[((fc·Nc + gc)·dim + df)·dim + dg] = ∂f1_fc,df/∂(∇u)_gc,dg`;
///
/// terms it leaves at zero contribute nothing. This is the layout of the
/// pointwise Jacobian of [`crate::physics::PointwiseEval`] physics: pass
/// `|dim, args, g0, g1, g2, g3| Ok(physics.eval_jacobian(dim, args, g0, g1, g2, g3)?)`.
///
/// A closure passed directly gets its argument types from this bound; one
/// bound to a variable first needs them written out,
/// `|dim: usize, args: &PointArgs<'_, f64>, g0: &mut [f64], …| -> Result<()>`.
///
/// `out` receives `[cell][i][j]` ([`crate::layout::elem_mat`]),
/// `n_cells·N_bt²` entries with `N_bt = N_b·N_comp`; assemble it with
/// [`super::CsrMatrix::assemble`].
///
/// Parallel over cells (or serial); each cell is computed by the same
/// operations either way, so the result does not depend on `execution` or
/// the thread count.
///
/// # Errors
/// * [`Error::InvalidArgument`] naming `u`, `aux` or `element_matrices` for a
///   wrong length (`n_cells·N_bt`, `n_cells·aux_per_cell`, `n_cells·N_bt²`),
///   or naming `jacobian` with the cell, quadrature point and entry of the
///   first non-finite value it returns.
/// * [`Error::NonFinite`] for NaN or ±∞ in `u`, `aux` or `constants`.
/// * The errors `jacobian` returns.
pub fn element_matrices<R: Real, J>(
    disc: &Discretization<R>,
    inputs: &CellInputs<'_, R>,
    jacobian: J,
    out: &mut [f64],
    execution: Execution,
) -> Result<()>
where
    J: Fn(usize, &PointArgs<'_, R>, &mut [R], &mut [R], &mut [R], &mut [R]) -> Result<()> + Sync,
{
    let (n_cells, n_bt) = (disc.n_cells(), disc.n_bt());
    check_len("u", inputs.u, n_cells * n_bt)?;
    check_len("aux", inputs.aux, n_cells * disc.aux_per_cell())?;
    check_len("element_matrices", out, n_cells * n_bt * n_bt)?;
    check_finite("u", inputs.u)?;
    check_finite("aux", inputs.aux)?;
    check_finite("constants", inputs.constants)?;
    crate::discretization::check_time(inputs.time.as_ref(), n_cells * n_bt)?;
    let kernel = MatrixKernel {
        disc,
        inputs,
        jacobian: &jacobian,
    };
    let run_chunk = |(k, chunk): (usize, &mut [f64])| -> Result<()> {
        let mut scratch = kernel.scratch();
        for (j, ke) in chunk.chunks_mut(n_bt * n_bt).enumerate() {
            kernel.cell(k * CELLS_PER_TASK + j, ke, &mut scratch)?;
        }
        Ok(())
    };
    let chunk = CELLS_PER_TASK * n_bt * n_bt;
    match execution {
        Execution::Serial => out.chunks_mut(chunk).enumerate().try_for_each(run_chunk),
        Execution::Parallel => out
            .par_chunks_mut(chunk)
            .enumerate()
            .try_for_each(run_chunk),
    }
}

/// One cell's element matrix, with everything borrowed.
struct MatrixKernel<'a, R: Real, J> {
    disc: &'a Discretization<R>,
    inputs: &'a CellInputs<'a, R>,
    jacobian: &'a J,
}

/// Per-thread work arrays of [`MatrixKernel::cell`].
struct Scratch<R> {
    point: PointValues<R>,
    /// `g0…g3` at the point, layouts of [`element_matrices`].
    g: [Vec<R>; 4],
    /// The same, widened.
    wide: [Vec<f64>; 4],
    /// The cell's `J⁻¹`, widened.
    inv_j: Vec<f64>,
    /// Physical basis gradients at the point, `[b][d]`.
    grad_phi: Vec<f64>,
    /// Test-side contraction for one `(a, fc, gc)`: `[v0, v1[0..dim]]`.
    v: Vec<f64>,
}

impl<R: Real, J> MatrixKernel<'_, R, J>
where
    J: Fn(usize, &PointArgs<'_, R>, &mut [R], &mut [R], &mut [R], &mut [R]) -> Result<()>,
{
    fn scratch(&self) -> Scratch<R> {
        let disc = self.disc;
        let (dim, nc) = (disc.dim(), disc.n_comp());
        let sizes = [nc * nc, nc * nc * dim, nc * nc * dim, nc * nc * dim * dim];
        Scratch {
            point: PointValues::new(dim, nc, disc.aux().n_comp()),
            g: sizes.map(|n| vec![R::ZERO; n]),
            wide: sizes.map(|n| vec![0.0; n]),
            inv_j: vec![0.0; dim * dim],
            grad_phi: vec![0.0; disc.n_b() * dim],
            v: vec![0.0; 1 + dim],
        }
    }

    /// Integrates cell `cell` into `ke` (`N_bt²` entries, `[i][j]`).
    fn cell(&self, cell: usize, ke: &mut [f64], s: &mut Scratch<R>) -> Result<()> {
        let disc = self.disc;
        let (dim, n_b, nc) = (disc.dim(), disc.n_b(), disc.n_comp());
        let n_bt = n_b * nc;
        let geom = disc.geometry();
        let cell_inv_j = &geom.inv_j()[cell * dim * dim..(cell + 1) * dim * dim];
        for (w, x) in s.inv_j.iter_mut().zip(cell_inv_j) {
            *w = x.to_f64();
        }
        let det_j = geom.det_j()[cell].to_f64();
        let (tab_phi, tab_dphi) = (disc.tabulation().phi(), disc.tabulation().dphi());
        let weights = disc.quadrature().weights();
        let u_cell = &self.inputs.u[cell * n_bt..(cell + 1) * n_bt];
        let aux_per_cell = disc.aux_per_cell();
        let aux_cell = &self.inputs.aux[cell * aux_per_cell..(cell + 1) * aux_per_cell];
        ke.fill(0.0);

        for q in 0..disc.n_q() {
            s.point.evaluate(disc, cell, u_cell, aux_cell, q);
            // u_t and t, for the physics that reads u_t (the closure adds
            // σ·g0_t, σ·g2_t: `jacobian` knows the physics, this does not).
            s.point
                .evaluate_time(disc, self.inputs.time.as_ref(), true, cell, q);
            for g in &mut s.g {
                g.fill(R::ZERO);
            }
            {
                let [g0, g1, g2, g3] = &mut s.g;
                let args = s.point.args(self.inputs.constants);
                (self.jacobian)(dim, &args, g0, g1, g2, g3)?;
            }
            check_point(&s.g, cell, q)?;
            for (wide, g) in s.wide.iter_mut().zip(&s.g) {
                for (w, x) in wide.iter_mut().zip(g) {
                    *w = x.to_f64();
                }
            }

            // ∇φ_b = J⁻ᵀ ∇̂φ_b: ∂φ_b/∂x_d = Σ_e ∂φ_b/∂ξ_e J⁻¹[e][d].
            let phi = &tab_phi[layout::tab_phi(q, 0, n_b)..layout::tab_phi(q + 1, 0, n_b)];
            let dphi = &tab_dphi
                [layout::tab_dphi(q, 0, 0, n_b, dim)..layout::tab_dphi(q + 1, 0, 0, n_b, dim)];
            for b in 0..n_b {
                for d in 0..dim {
                    let mut g = 0.0;
                    for e in 0..dim {
                        g += dphi[b * dim + e] * s.inv_j[e * dim + d];
                    }
                    s.grad_phi[b * dim + d] = g;
                }
            }

            let wdet = weights[q] * det_j;
            let [g0, g1, g2, g3] = &s.wide;
            for a in 0..n_b {
                let grad_a = &s.grad_phi[a * dim..(a + 1) * dim];
                for fc in 0..nc {
                    for gc in 0..nc {
                        let fg = fc * nc + gc;
                        // v0 = φ_a g0 + ∇φ_a·g2,  v1[dg] = φ_a g1[dg] + Σ_df ∇φ_a[df] g3[df][dg]
                        let mut v0 = phi[a] * g0[fg];
                        for df in 0..dim {
                            v0 += grad_a[df] * g2[fg * dim + df];
                        }
                        s.v[0] = v0 * wdet;
                        for dg in 0..dim {
                            let mut v1 = phi[a] * g1[fg * dim + dg];
                            for df in 0..dim {
                                v1 += grad_a[df] * g3[(fg * dim + df) * dim + dg];
                            }
                            s.v[1 + dg] = v1 * wdet;
                        }
                        // K[a·Nc + fc][b·Nc + gc] += v0 φ_b + v1·∇φ_b
                        for b in 0..n_b {
                            let mut k = s.v[0] * phi[b];
                            for dg in 0..dim {
                                k += s.v[1 + dg] * s.grad_phi[b * dim + dg];
                            }
                            ke[elem_mat(0, a * nc + fc, b * nc + gc, n_bt)] += k;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// The error for a non-finite value among the pointwise Jacobians `g`.
fn check_point<R: Real>(g: &[Vec<R>; 4], cell: usize, q: usize) -> Result<()> {
    for (k, gk) in g.iter().enumerate() {
        if let Some(i) = gk.iter().position(|v| !v.is_finite()) {
            return Err(Error::arg(
                "jacobian",
                format!(
                    "returned g{k}[{i}] = {} at quadrature point {q} of cell {cell}",
                    gk[i]
                ),
            ));
        }
    }
    Ok(())
}
