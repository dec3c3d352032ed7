//! [`NativeMultigrid`]: the multigrid kernels on host vectors (rayon), the
//! reference the device kernels (`kernels/multigrid.cl`) are twins of: every
//! output entry computed by the same operations in the same order.

use std::marker::PhantomData;
use std::sync::Arc;

use rayon::prelude::*;

use crate::seam::{
    ChebyshevCoefficients, ChebyshevOperands, DENSE_LANES, MultigridOps, ResidualUpdate,
    TransferGraph, block_tolerance,
};
use crate::{Error, Real, Result};

/// Nodes per rayon task of the block kernels.
const NODES: usize = 1 << 12;

/// Entries per rayon task of the transfers and the random fill.
const ENTRIES: usize = 1 << 14;

/// The multigrid kernels on host vectors `Vec<R>` for fields of `n_comp`
/// components per node.
#[derive(Clone, Copy, Debug)]
pub struct NativeMultigrid<R: Real> {
    n_comp: usize,
    _real: PhantomData<R>,
}

impl<R: Real> NativeMultigrid<R> {
    /// The kernels for fields of `n_comp` components.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_comp` if it is 0.
    pub fn new(n_comp: usize) -> Result<Self> {
        if n_comp == 0 {
            return Err(Error::arg("n_comp", "a field has at least one component"));
        }
        Ok(NativeMultigrid {
            n_comp,
            _real: PhantomData,
        })
    }

    /// Number of nodes of a block array (`n_nodes·N_comp²` entries).
    fn block_nodes(&self, name: &'static str, len: usize) -> Result<usize> {
        let nc2 = self.n_comp * self.n_comp;
        if !len.is_multiple_of(nc2) {
            return Err(Error::arg(
                name,
                format!(
                    "{len} entries are not whole {nc}×{nc} blocks",
                    nc = self.n_comp
                ),
            ));
        }
        Ok(len / nc2)
    }
}

fn check(name: &'static str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::arg(
            name,
            format!("expected {want} entries, got {got}"),
        ))
    }
}

impl<R: Real> MultigridOps<R> for NativeMultigrid<R> {
    type Vector = Vec<R>;
    type Indices = Vec<u32>;
    type Transfer = Arc<TransferGraph>;

    fn n_comp(&self) -> usize {
        self.n_comp
    }

    /// Twin of `mg_block_fix`.
    fn block_fix(&self, blocks: &mut Vec<R>, fixed: &Vec<u32>, diagonal: f64) -> Result<()> {
        let n_comp = self.n_comp;
        let n_nodes = self.block_nodes("blocks", blocks.len())?;
        if let Some(&d) = fixed.iter().find(|&&d| d as usize >= n_nodes * n_comp) {
            return Err(Error::arg(
                "fixed",
                format!("dof {d} is out of range for {n_nodes} nodes of {n_comp} components"),
            ));
        }
        let diagonal = R::from_f64(diagonal);
        for &d in fixed {
            let d = d as usize;
            let (node, c) = (d / n_comp, d % n_comp);
            let b = &mut blocks[node * n_comp * n_comp..(node + 1) * n_comp * n_comp];
            for j in 0..n_comp {
                let v = if j == c { diagonal } else { R::ZERO };
                b[c * n_comp + j] = v;
                b[j * n_comp + c] = v;
            }
        }
        Ok(())
    }

    /// Twin of `mg_block_invert`: the same elimination, the same order.
    fn block_invert(&self, inv: &mut Vec<R>, blocks: &Vec<R>) -> Result<()> {
        let n_comp = self.n_comp;
        self.block_nodes("blocks", blocks.len())?;
        check("inv", inv.len(), blocks.len())?;
        let nc2 = n_comp * n_comp;
        let tol = R::from_f64(block_tolerance(R::PRECISION, n_comp));
        inv.par_chunks_mut(nc2 * NODES)
            .zip(blocks.par_chunks(nc2 * NODES))
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
        Ok(())
    }

    /// Twin of `mg_block_update`.
    fn block_update(&self, y: &mut Vec<R>, a: f64, inv: &Vec<R>, r: &Vec<R>, b: f64) -> Result<()> {
        let n_comp = self.n_comp;
        let n = self.block_nodes("inv", inv.len())? * n_comp;
        check("r", r.len(), n)?;
        check("y", y.len(), n)?;
        let (a, b) = (R::from_f64(a), R::from_f64(b));
        let nc2 = n_comp * n_comp;
        y.par_chunks_mut(n_comp * NODES)
            .enumerate()
            .for_each(|(t, chunk)| {
                for (j, yi) in chunk.iter_mut().enumerate() {
                    let i = t * n_comp * NODES + j;
                    let (n, fc) = (i / n_comp, i % n_comp);
                    let mut s = R::ZERO;
                    for g in 0..n_comp {
                        s += inv[n * nc2 + fc * n_comp + g] * r[n * n_comp + g];
                    }
                    *yi = a * *yi + b * s;
                }
            });
        Ok(())
    }

    /// Twin of `mg_dense_apply`: per row, [`DENSE_LANES`] strided partial
    /// sums, then their tree.
    fn dense_apply(&self, y: &mut Vec<R>, a: &Vec<R>, x: &Vec<R>) -> Result<()> {
        let n = x.len();
        check("a", a.len(), n * n)?;
        check("y", y.len(), n)?;
        y.par_iter_mut().enumerate().for_each(|(i, yi)| {
            let row = &a[i * n..(i + 1) * n];
            let mut p = [R::ZERO; DENSE_LANES];
            for (l, pl) in p.iter_mut().enumerate() {
                for j in (l..n).step_by(DENSE_LANES) {
                    *pl += row[j] * x[j];
                }
            }
            let mut h = DENSE_LANES / 2;
            while h > 0 {
                for l in 0..h {
                    p[l] += p[l + h];
                }
                h /= 2;
            }
            *yi = p[0];
        });
        Ok(())
    }

    /// The fused Chebyshev step; twin of `mg_chebyshev_step`.
    fn chebyshev_step(
        &self,
        o: ChebyshevOperands<'_, Vec<R>>,
        k: ChebyshevCoefficients,
    ) -> Result<()> {
        let nc = self.n_comp;
        let n = self.block_nodes("inv", o.inv.len())? * nc;
        for (name, len) in [
            ("x", o.x.len()),
            ("d", o.d.len()),
            ("r", o.r.len()),
            ("b", o.b.len()),
            ("w", o.w.len()),
        ] {
            check(name, len, n)?;
        }
        let (a, c) = (R::from_f64(k.a), R::from_f64(k.c));
        let (minus_one, one) = (R::from_f64(-1.0), R::from_f64(1.0));
        let (b, w, inv) = (o.b, o.w, o.inv);
        let chunk = nc * NODES;
        o.x.par_chunks_mut(chunk)
            .zip(o.d.par_chunks_mut(chunk))
            .zip(o.r.par_chunks_mut(chunk))
            .enumerate()
            .for_each(|(t, ((x, d), r))| {
                let base = t * chunk;
                for (j, rj) in r.iter_mut().enumerate() {
                    let i = base + j;
                    *rj = match k.residual {
                        ResidualUpdate::FromRhs => b[i],
                        ResidualUpdate::RhsMinusW => b[i] + minus_one * w[i],
                        ResidualUpdate::MinusW => *rj + minus_one * w[i],
                    };
                }
                for start in (0..r.len()).step_by(nc) {
                    let node = (base + start) / nc;
                    for fc in 0..nc {
                        let mut s = R::ZERO;
                        for g in 0..nc {
                            s += inv[(node * nc + fc) * nc + g] * r[start + g];
                        }
                        let i = start + fc;
                        d[i] = a * d[i] + c * s;
                        x[i] = if k.x_from_zero {
                            d[i]
                        } else {
                            x[i] + one * d[i]
                        };
                    }
                }
            });
        Ok(())
    }

    /// `x[i]`: 24 bits of SplitMix64's output for `seed + (i + 1)·φ`
    /// (φ = `0x9e3779b97f4a7c15`), exact in `f32` and `f64`; twin of
    /// `mg_fill_random`.
    fn fill_random(&self, x: &mut Vec<R>, seed: u64) -> Result<()> {
        x.par_iter_mut()
            .with_min_len(ENTRIES)
            .enumerate()
            .for_each(|(i, xi)| *xi = random_at(seed, i as u64));
        Ok(())
    }

    fn transfer(&self, graph: &Arc<TransferGraph>) -> Result<Arc<TransferGraph>> {
        check_graph(self.n_comp, graph)?;
        Ok(graph.clone())
    }

    /// Twin of `mg_prolong_add`.
    fn prolong_add(
        &self,
        t: &Arc<TransferGraph>,
        fine: &mut Vec<R>,
        coarse: &Vec<R>,
    ) -> Result<()> {
        check("fine", fine.len(), t.n_fine_dofs())?;
        check("coarse", coarse.len(), t.n_coarse_dofs())?;
        let (nc, n_comp) = (t.n_coarse_dofs(), t.n_comp);
        let half = R::from_f64(0.5);
        let value = |i: usize| {
            if t.coarse_fixed[i] != 0 {
                R::ZERO
            } else {
                coarse[i]
            }
        };
        fine.par_chunks_mut(ENTRIES)
            .enumerate()
            .for_each(|(b, chunk)| {
                for (j, f) in chunk.iter_mut().enumerate() {
                    let i = b * ENTRIES + j;
                    if t.fine_fixed[i] != 0 {
                        continue;
                    }
                    if i < nc {
                        *f += value(i);
                    } else {
                        let (k, c) = ((i - nc) / n_comp, (i - nc) % n_comp);
                        let [a, e] = t.edges[k];
                        let (a, e) = (a as usize * n_comp + c, e as usize * n_comp + c);
                        *f += half * (value(a) + value(e));
                    }
                }
            });
        Ok(())
    }

    /// Twin of `mg_restrict`.
    fn restrict(
        &self,
        t: &Arc<TransferGraph>,
        coarse: &mut Vec<R>,
        b: &Vec<R>,
        w: Option<&Vec<R>>,
    ) -> Result<()> {
        check("coarse", coarse.len(), t.n_coarse_dofs())?;
        check("fine", b.len(), t.n_fine_dofs())?;
        if let Some(w) = w {
            check("w", w.len(), t.n_fine_dofs())?;
        }
        let (nc, n_comp) = (t.n_coarse_dofs(), t.n_comp);
        let (half, minus_one) = (R::from_f64(0.5), R::from_f64(-1.0));
        let value = |j: usize| match w {
            _ if t.fine_fixed[j] != 0 => R::ZERO,
            Some(w) => b[j] + minus_one * w[j],
            None => b[j],
        };
        coarse
            .par_chunks_mut(ENTRIES)
            .enumerate()
            .for_each(|(blk, chunk)| {
                for (j, out) in chunk.iter_mut().enumerate() {
                    let i = blk * ENTRIES + j;
                    if t.coarse_fixed[i] != 0 {
                        *out = R::ZERO;
                        continue;
                    }
                    let (v, c) = (i / n_comp, i % n_comp);
                    let mut s = value(i);
                    for &k in &t.incident[t.offsets[v] as usize..t.offsets[v + 1] as usize] {
                        s += half * value(nc + k as usize * n_comp + c);
                    }
                    *out = s;
                }
            });
        Ok(())
    }

    /// Twin of `mg_inject`.
    fn inject(&self, t: &Arc<TransferGraph>, coarse: &mut Vec<R>, fine: &Vec<R>) -> Result<()> {
        check("coarse", coarse.len(), t.n_coarse_dofs())?;
        check("fine", fine.len(), t.n_fine_dofs())?;
        let n = coarse.len();
        coarse.copy_from_slice(&fine[..n]);
        Ok(())
    }
}

/// Checks that `graph` is for fields of `n_comp` components and its CSR
/// arrays fit its nodes and edges.
fn check_graph(n_comp: usize, graph: &TransferGraph) -> Result<()> {
    if graph.n_comp != n_comp {
        return Err(Error::arg(
            "kernels",
            format!(
                "built for {n_comp} components, the transfer has {}",
                graph.n_comp
            ),
        ));
    }
    check("offsets", graph.offsets.len(), graph.n_coarse + 1)?;
    check("incident", graph.incident.len(), 2 * graph.edges.len())?;
    check(
        "coarse_fixed",
        graph.coarse_fixed.len(),
        graph.n_coarse_dofs(),
    )?;
    check("fine_fixed", graph.fine_fixed.len(), graph.n_fine_dofs())
}

fn random_at<R: Real>(seed: u64, i: u64) -> R {
    let mut z = seed.wrapping_add((i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let k = (z >> 40) as i64;
    R::from_f64((2 * k - (1 << 24)) as f64) * R::from_f64(1.0 / 16_777_216.0)
}
