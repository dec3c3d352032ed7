//! One V-cycle of a multigrid whose smoothed levels are all assembled, on
//! the device: the kernels it launches per smoothed level
//! ([`DeviceStats::launches`](femquad::opencl::DeviceStats)), and its output
//! against the textbook V-cycle written here on host vectors (explicit
//! Dirichlet rows after every operator product, explicit zeroing after the
//! transfers) with the level matrices assembled on the host.
//!
//! Runs on the tests' device and options ([`femquad::opencl::testing`]; PoCL in CI).

use femquad::backend::Backend;
use femquad::element::Element;
use femquad::form::Form;
use femquad::linalg::FixedDofs;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::multigrid::{MeshHierarchy, MultigridOptions, OperatorLevels};
use femquad::opencl::testing;
use femquad::operator::Operator;
use femquad::physics::builtin::{Lame, LameParameters, Poisson};
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use femquad::quadrature::Quadrature;
use femquad::rng::Rng;
use femquad::space::FunctionSpace;
use femquad::sparse::CsrMatrix;

/// Kernels one smoothed level of a degree-2 V-cycle launches when its
/// operator is one SpMV: 2 SpMVs (the residual's, the post-smoothing's
/// `A x`), 2 Chebyshev steps, 2 Chebyshev steps fused with their SpMV
/// `A d`, the fused residual restriction and the prolongation.
const LAUNCHES_PER_LEVEL: u64 = 8;

/// The same with the steps and their SpMVs apart (a level above
/// `MultigridOptions::fused_step_max_dofs`): 2 more SpMVs.
const LAUNCHES_PER_UNFUSED_LEVEL: u64 = 10;

#[derive(Clone, Copy, Debug)]
enum Physics {
    Poisson,
    Lame,
}

impl Physics {
    fn n_comp(self, dim: usize) -> usize {
        match self {
            Physics::Poisson => 1,
            Physics::Lame => dim,
        }
    }
    fn pointwise(self) -> &'static dyn PointwiseEvalBoth {
        match self {
            Physics::Poisson => &Poisson,
            Physics::Lame => &Lame,
        }
    }
    fn constants(self) -> Vec<f64> {
        match self {
            Physics::Poisson => vec![1.0],
            Physics::Lame => LameParameters::from_young_poisson(1.0, 0.3)
                .unwrap()
                .constants()
                .to_vec(),
        }
    }
}

/// The P1 operator of `physics` on `space`, the default quadrature.
fn operator(space: FunctionSpace, physics: Physics, backend: &Backend) -> Operator<f64> {
    let element = Element::lagrange(space.dim(), 1).unwrap();
    let q = Quadrature::default_for(&element).unwrap();
    let form = Form::new(space, f64::physics(physics.pointwise()))
        .and_then(|f| f.with_quadrature(q))
        .and_then(|f| f.with_constants(&physics.constants()))
        .unwrap();
    Operator::new(form, backend).unwrap()
}

/// What one V-cycle on the device gave, and what the reference needs.
struct Cycle {
    /// Kernels the cycle launched.
    launches: u64,
    b: Vec<f64>,
    x: Vec<f64>,
    /// Per level (coarsest first): the host-assembled matrix, the fixed
    /// dofs, the smoother's interval (none for the coarsest) and the edges
    /// to the next finer level.
    levels: Vec<HostLevel>,
    n_comp: usize,
}

struct HostLevel {
    a: CsrMatrix,
    fixed: Vec<bool>,
    interval: Option<(f64, f64)>,
    edges: Vec<[u32; 2]>,
}

/// One V-cycle of the all-assembled multigrid of `physics` on a hierarchy
/// of `refinements` over the unit square/cube of `n0` intervals, the
/// Chebyshev steps fused on levels of at most `fused_step_max_dofs` dofs.
fn device_cycle(
    dim: usize,
    n0: usize,
    refinements: usize,
    physics: Physics,
    fused_step_max_dofs: usize,
) -> Cycle {
    let device = testing::device();
    let backend = Backend::opencl_with(device.clone(), testing::options());
    let mesh = unit_box(
        dim,
        n0,
        &MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed: 3,
        },
    )
    .unwrap();
    let h = MeshHierarchy::new(&mesh, refinements).unwrap();
    let element = Element::lagrange(dim, 1).unwrap();
    let space = FunctionSpace::new(h.finest().clone(), element, physics.n_comp(dim)).unwrap();
    let mut r = operator(space, physics, &backend);
    let n = r.space().n_dofs();
    let fixed = FixedDofs::new(n, &r.space().boundary_dofs().unwrap()).unwrap();
    let options = MultigridOptions {
        assembled_max_dofs: usize::MAX,
        fused_step_max_dofs,
        ..MultigridOptions::default()
    };
    let mut levels = OperatorLevels::new(&h, &r, &backend, &fixed, options).unwrap();
    let u = r.vector().unwrap();
    levels.setup(&mut r, &u).unwrap();
    assert_eq!(
        levels.assembled_levels().len(),
        refinements,
        "every smoothed level assembled"
    );
    let mut rng = Rng::new(17);
    let mut b: Vec<f64> = (0..n).map(|_| rng.range(-1.0, 1.0)).collect();
    for &d in fixed.dofs() {
        b[d as usize] = 0.25;
    }
    let bv = r.vector_from(&b).unwrap();
    let mut x = r.vector().unwrap();
    levels.apply(&mut r, &u, &bv, &mut x).unwrap();
    let before = device.stats().launches;
    levels.apply(&mut r, &u, &bv, &mut x).unwrap();
    let launches = device.stats().launches - before;
    // the reference's levels, assembled on the host
    let spaces = levels.spaces();
    let all_fixed = spaces.fixed_dofs(&fixed).unwrap();
    let report = levels.multigrid().report().unwrap();
    let host_levels = (0..spaces.n_levels())
        .map(|l| {
            let space = spaces.space(l).unwrap().clone();
            let n_l = space.n_dofs();
            let mut op = operator(space, physics, &Backend::native());
            let zero = op.vector().unwrap();
            let mut is_fixed = vec![false; n_l];
            for &d in all_fixed[l].dofs() {
                is_fixed[d as usize] = true;
            }
            HostLevel {
                a: op.assemble_jacobian(&zero).unwrap(),
                fixed: is_fixed,
                interval: report.levels[l].interval,
                edges: spaces.edges(l).map(<[_]>::to_vec).unwrap_or_default(),
            }
        })
        .collect();
    Cycle {
        launches,
        b,
        x: x.to_host().unwrap(),
        levels: host_levels,
        n_comp: physics.n_comp(dim),
    }
}

// ---------------------------------------------------------------------------
// The textbook V-cycle on host vectors.
// ---------------------------------------------------------------------------

/// `y = A v` with the fixed rows the identity's (`y_d = v_d`).
fn constrained(level: &HostLevel, v: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; v.len()];
    level.a.spmv(v, &mut y).unwrap();
    for (i, &f) in level.fixed.iter().enumerate() {
        if f {
            y[i] = v[i];
        }
    }
    y
}

/// The inverse of the point-block diagonal of the constrained operator
/// (fixed rows and columns of each block the identity's), `[node][fc][gc]`.
fn block_inverse(level: &HostLevel, nc: usize) -> Vec<f64> {
    let n_nodes = level.fixed.len() / nc;
    let mut inv = vec![0.0; n_nodes * nc * nc];
    for node in 0..n_nodes {
        let mut a = vec![0.0; nc * nc];
        let mut v = vec![0.0; nc * nc];
        for i in 0..nc {
            for j in 0..nc {
                let (gi, gj) = (node * nc + i, node * nc + j);
                a[i * nc + j] = if level.fixed[gi] || level.fixed[gj] {
                    if i == j { 1.0 } else { 0.0 }
                } else {
                    level.a.get(gi, gj).unwrap_or(0.0)
                };
                v[i * nc + j] = if i == j { 1.0 } else { 0.0 };
            }
        }
        gauss_jordan(&mut a, &mut v, nc);
        inv[node * nc * nc..(node + 1) * nc * nc].copy_from_slice(&v);
    }
    inv
}

/// `v ← a⁻¹ v` (both `n × n`, row-major) by Gauss–Jordan with partial pivoting.
fn gauss_jordan(a: &mut [f64], v: &mut [f64], n: usize) {
    let m = v.len() / n;
    for col in 0..n {
        let p = (col..n)
            .max_by(|&r, &s| a[r * n + col].abs().total_cmp(&a[s * n + col].abs()))
            .unwrap();
        for j in 0..n {
            a.swap(p * n + j, col * n + j);
        }
        for j in 0..m {
            v.swap(p * m + j, col * m + j);
        }
        let piv = a[col * n + col];
        assert!(piv.abs() > 1e-300, "singular");
        for j in 0..n {
            a[col * n + j] /= piv;
        }
        for j in 0..m {
            v[col * m + j] /= piv;
        }
        for r in 0..n {
            if r != col {
                let f = a[r * n + col];
                for j in 0..n {
                    a[r * n + j] -= f * a[col * n + j];
                }
                for j in 0..m {
                    v[r * m + j] -= f * v[col * m + j];
                }
            }
        }
    }
}

/// `out = D⁻¹ r` blockwise.
fn block_apply(inv: &[f64], r: &[f64], nc: usize) -> Vec<f64> {
    (0..r.len())
        .map(|i| {
            let (node, fc) = (i / nc, i % nc);
            (0..nc)
                .map(|g| inv[(node * nc + fc) * nc + g] * r[node * nc + g])
                .sum()
        })
        .collect()
}

/// Degree-2 (`degree`) Chebyshev smoothing of `A x = b` on `[lo, hi]`
/// (Saad, Alg. 12.1, preconditioned), from `x` or from 0.
fn smooth(level: &HostLevel, nc: usize, degree: usize, b: &[f64], x: &mut [f64], zero: bool) {
    let (lo, hi) = level.interval.unwrap();
    let inv = block_inverse(level, nc);
    let (theta, delta) = (0.5 * (hi + lo), 0.5 * (hi - lo));
    let sigma = theta / delta;
    if zero {
        x.fill(0.0);
    }
    let ax = constrained(level, x);
    let mut r: Vec<f64> = b.iter().zip(&ax).map(|(b, a)| b - a).collect();
    let mut d: Vec<f64> = block_apply(&inv, &r, nc)
        .iter()
        .map(|z| z / theta)
        .collect();
    let mut rho = 1.0 / sigma;
    for k in 1..=degree {
        for (xi, di) in x.iter_mut().zip(&d) {
            *xi += di;
        }
        if k == degree {
            break;
        }
        let ad = constrained(level, &d);
        for (ri, a) in r.iter_mut().zip(&ad) {
            *ri -= a;
        }
        let rho_next = 1.0 / (2.0 * sigma - rho);
        let z = block_apply(&inv, &r, nc);
        for (di, zi) in d.iter_mut().zip(&z) {
            *di = rho_next * rho * *di + 2.0 * rho_next / delta * zi;
        }
        rho = rho_next;
    }
}

/// `x = A_0⁻¹ b` with the fixed rows and columns the identity's (dense).
fn coarse_solve(level: &HostLevel, b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut a = level.a.to_dense().unwrap();
    for i in 0..n {
        for j in 0..n {
            if level.fixed[i] || level.fixed[j] {
                a[i * n + j] = if i == j { 1.0 } else { 0.0 };
            }
        }
    }
    let mut x = b.to_vec();
    gauss_jordan(&mut a, &mut x, n);
    x
}

/// `cycle(l, b)` of the `Multigrid` documentation, textbook form.
fn reference_cycle(levels: &[HostLevel], nc: usize, degree: usize, b: &[f64]) -> Vec<f64> {
    let Some((level, below)) = levels.split_last() else {
        unreachable!()
    };
    if below.is_empty() {
        return coarse_solve(level, b);
    }
    let coarse = &below[below.len() - 1];
    let mut x = vec![0.0; b.len()];
    smooth(level, nc, degree, b, &mut x, true);
    let ax = constrained(level, &x);
    let res: Vec<f64> = b.iter().zip(&ax).map(|(b, a)| b - a).collect();
    // b_c = Pᵀ res, fixed coarse dofs zeroed
    let n_c = coarse.fixed.len();
    let mut bc = res[..n_c].to_vec();
    for (k, e) in coarse.edges.iter().enumerate() {
        for &v in e {
            for c in 0..nc {
                bc[v as usize * nc + c] += 0.5 * res[n_c + k * nc + c];
            }
        }
    }
    for (i, &f) in coarse.fixed.iter().enumerate() {
        if f {
            bc[i] = 0.0;
        }
    }
    let xc = reference_cycle(below, nc, degree, &bc);
    // x += P x_c, fixed dofs zeroed
    for i in 0..n_c {
        x[i] += xc[i];
    }
    for (k, &[a, e]) in coarse.edges.iter().enumerate() {
        for c in 0..nc {
            x[n_c + k * nc + c] += 0.5 * (xc[a as usize * nc + c] + xc[e as usize * nc + c]);
        }
    }
    for (i, &f) in level.fixed.iter().enumerate() {
        if f {
            x[i] = 0.0;
        }
    }
    smooth(level, nc, degree, b, &mut x, false);
    x
}

/// `M⁻¹ b`: the cycle on `b` with its fixed entries zeroed, then `x_D = b_D`.
fn reference(cycle: &Cycle) -> Vec<f64> {
    let finest = cycle.levels.last().unwrap();
    let mut b = cycle.b.clone();
    for (i, &f) in finest.fixed.iter().enumerate() {
        if f {
            b[i] = 0.0;
        }
    }
    let degree = MultigridOptions::default().degree;
    let mut x = reference_cycle(&cycle.levels, cycle.n_comp, degree, &b);
    for (i, &f) in finest.fixed.iter().enumerate() {
        if f {
            x[i] = cycle.b[i];
        }
    }
    x
}

/// Per case: the launches of one V-cycle on hierarchies of `n` and `n + 1`
/// levels differ by exactly [`LAUNCHES_PER_LEVEL`] (what one more smoothed
/// level costs) with the default `fused_step_max_dofs` (these levels are
/// below it) and by [`LAUNCHES_PER_UNFUSED_LEVEL`] with it 0, and every
/// cycle equals the textbook V-cycle to 1e-12 relative (max norm).
#[test]
fn one_vcycle_launches_eight_kernels_per_fused_level_ten_per_unfused_and_equals_the_textbook_cycle()
{
    let fused = MultigridOptions::default().fused_step_max_dofs;
    for ((dim, n0, physics, refinements), (max_dofs, want)) in [
        (2, 2, Physics::Poisson, 2),
        (3, 2, Physics::Poisson, 1),
        (2, 2, Physics::Lame, 2),
    ]
    .into_iter()
    .flat_map(|case| {
        [(fused, LAUNCHES_PER_LEVEL), (0, LAUNCHES_PER_UNFUSED_LEVEL)].map(|f| (case, f))
    }) {
        let cycles =
            [refinements, refinements + 1].map(|r| device_cycle(dim, n0, r, physics, max_dofs));
        for c in &cycles {
            let want = reference(c);
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let diff = want
                .iter()
                .zip(&c.x)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            eprintln!(
                "{physics:?} {dim}D P1, fused up to {max_dofs} dofs, {} levels: {} launches, \
                 |x − x_ref| = {diff:e} (max |x| {scale:e})",
                c.levels.len(),
                c.launches
            );
            assert!(
                diff <= 1e-12 * scale,
                "{physics:?} {dim}D: {diff:e} vs {scale:e}"
            );
        }
        let per_level = cycles[1].launches - cycles[0].launches;
        eprintln!(
            "{physics:?} {dim}D P1, fused up to {max_dofs} dofs: {per_level} launches per \
             smoothed level"
        );
        assert_eq!(
            per_level, want,
            "{physics:?} {dim}D P1, fused up to {max_dofs} dofs: launches of one more smoothed \
             level"
        );
    }
}
