//! Multigrid on the device and on the host: the device transfers, block
//! Jacobi and random fill equal their native twins; a V-cycle on device
//! vectors equals one on host vectors to round-off; CG preconditioned by the
//! V-cycle needs a bounded number of iterations as the mesh is refined.
//!
//! Runs on the device chosen by `FEMQUAD_DEVICE` (PoCL in CI).

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use femquad::aux_space::AuxSpace;
use femquad::backend::Backend;
use femquad::discretization::{CellInputs, Discretization};
use femquad::element::Element;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::multigrid::{
    LevelOperators, LevelSpaces, MeshHierarchy, Multigrid, MultigridOptions, PointBlockJacobi,
    Transfer, fill_random,
};
use femquad::native::Execution;
use femquad::opencl::multigrid::MultigridKernels;
use femquad::opencl::{Device, DeviceSelector, DeviceVector};
use femquad::physics::builtin::{Lame, LameParameters, Laplacian};
use femquad::physics::{PointArgs, Pointwise};
use femquad::quadrature::Quadrature;
use femquad::residual::Residual;
use femquad::rng::Rng;
use femquad::solve::cg;
use femquad::space::FunctionSpace;
use femquad::sparse::{CsrMatrix, SparsityPattern, element_matrices};
use femquad::vector::{IndexSet, Vector, VectorOps};
use femquad::{Real, Result};

fn device() -> Arc<Device> {
    static DEVICE: OnceLock<Arc<Device>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            Device::open(&DeviceSelector::from_env()).unwrap_or_else(|e| {
                panic!("these tests need an OpenCL device ({e}); on Debian/Ubuntu install pocl-opencl-icd and ocl-icd-libopencl1")
            })
        })
        .clone()
}

fn backend() -> Backend {
    let selector = match std::env::var(femquad::opencl::DEVICE_ENV) {
        Ok(s) if !s.is_empty() => DeviceSelector::parse(&s),
        _ => DeviceSelector::parse("cpu"),
    };
    Backend::opencl(&selector).unwrap()
}

fn random<R: Real>(n: usize, seed: u64) -> Vec<R> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| R::from_f64(rng.range(-1.0, 1.0))).collect()
}

fn bits<R: Real>(v: &[R]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

fn jittered(seed: u64) -> MeshOptions {
    MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed,
    }
}

fn transfers_agree<R: Real>() {
    let dev = device();
    let h = MeshHierarchy::new(&unit_box(3, 2, &jittered(1)).unwrap(), 2).unwrap();
    for nc in 1..=3 {
        let kernels = MultigridKernels::<R>::new(&dev, nc).unwrap();
        for l in 0..2 {
            let n_c = h.mesh(l).unwrap().n_vertices();
            let t = Transfer::<R>::new(n_c, h.edges(l).unwrap().to_vec(), nc)
                .unwrap()
                .with_device(&kernels)
                .unwrap();
            let (nc_d, nf_d) = (t.n_coarse_dofs(), t.n_fine_dofs());
            let coarse: Vec<R> = random(nc_d, 1);
            let fine: Vec<R> = random(nf_d, 2);
            let on_dev = |v: &[R]| Vector::Device(DeviceVector::from_host(&dev, v).unwrap());
            // prolong_add
            let mut fh = Vector::from(fine.clone());
            t.prolong_add(&mut fh, &Vector::from(coarse.clone()))
                .unwrap();
            let mut fd = on_dev(&fine);
            t.prolong_add(&mut fd, &on_dev(&coarse)).unwrap();
            assert_eq!(bits(&fd.to_host().unwrap()), bits(&fh.to_host().unwrap()));
            // restrict
            let mut ch = Vector::from(coarse.clone());
            t.restrict(&mut ch, &Vector::from(fine.clone())).unwrap();
            let mut cd = on_dev(&coarse);
            t.restrict(&mut cd, &on_dev(&fine)).unwrap();
            assert_eq!(bits(&cd.to_host().unwrap()), bits(&ch.to_host().unwrap()));
            // inject
            let mut id = on_dev(&coarse);
            t.inject(&mut id, &on_dev(&fine)).unwrap();
            assert_eq!(bits(&id.to_host().unwrap()), bits(&fine[..nc_d]));
            // mixing host and device is an error, not a transfer
            let e = t
                .prolong_add(&mut Vector::from(fine.clone()), &on_dev(&coarse))
                .unwrap_err();
            assert!(e.to_string().contains("never transfers"), "{e}");
        }
    }
    // a device vector with a host-only transfer is refused, naming the cause
    let t = Transfer::<R>::new(2, vec![[0, 1]], 1).unwrap();
    let mut f = Vector::Device(DeviceVector::<R>::zeros(&dev, 3).unwrap());
    let c = Vector::Device(DeviceVector::<R>::zeros(&dev, 2).unwrap());
    let e = t.prolong_add(&mut f, &c).unwrap_err();
    assert!(e.to_string().contains("with_device"), "{e}");
}

#[test]
fn device_transfers_equal_native_bitwise() {
    transfers_agree::<f64>();
    transfers_agree::<f32>();
}

fn blocks_agree<R: Real>(rel: f64) {
    let dev = device();
    for nc in 1..=3 {
        let n_nodes = 1000;
        let mut blocks: Vec<R> = random(n_nodes * nc * nc, 5 + nc as u64);
        // diagonally dominant
        for n in 0..n_nodes {
            for c in 0..nc {
                let k = n * nc * nc + c * nc + c;
                blocks[k] += R::from_f64(4.0);
            }
        }
        let fixed: Vec<u32> = (0..(n_nodes * nc) as u32).step_by(7).collect();
        let host = PointBlockJacobi::new(
            Vector::from(blocks.clone()),
            nc,
            &IndexSet::Host(fixed.clone()),
        )
        .unwrap();
        let db = Vector::Device(DeviceVector::from_host(&dev, &blocks).unwrap());
        let set = IndexSet::located_like(&db, &fixed).unwrap();
        let on_dev = PointBlockJacobi::new(db, nc, &set).unwrap();
        let (hi, di) = (
            host.inverse().to_host().unwrap(),
            on_dev.inverse().to_host().unwrap(),
        );
        for (a, b) in hi.iter().zip(&di) {
            assert!(
                (a.to_f64() - b.to_f64()).abs() <= rel * a.to_f64().abs().max(1.0),
                "nc {nc}: {a} {b}"
            );
        }
        // the update on the same inverse is bitwise the host's
        let r: Vec<R> = random(n_nodes * nc, 9);
        let y: Vec<R> = random(n_nodes * nc, 10);
        // the update with the same inverse on both sides
        let kernels = MultigridKernels::<R>::new(&dev, nc).unwrap();
        let inv_d = DeviceVector::from_host(&dev, &hi).unwrap();
        let r_d = DeviceVector::from_host(&dev, &r).unwrap();
        let mut y_d = DeviceVector::from_host(&dev, &y).unwrap();
        kernels
            .block_update(&mut y_d, 0.5, &inv_d, &r_d, -3.0)
            .unwrap();
        let mut y_h = Vector::from(y.clone());
        host.update(&mut y_h, 0.5, &Vector::from(r.clone()), -3.0)
            .unwrap();
        assert_eq!(bits(&y_d.to_host().unwrap()), bits(&y_h.to_host().unwrap()));
    }
    // a singular block on the device is named like on the host
    let mut blocks: Vec<R> = vec![R::ONE; 8];
    blocks[4..].iter_mut().for_each(|v| *v = R::ZERO);
    let db = Vector::Device(DeviceVector::from_host(&dev, &blocks).unwrap());
    let set = IndexSet::located_like(&db, &[]).unwrap();
    let e = PointBlockJacobi::new(db, 2, &set).unwrap_err().to_string();
    assert!(e.contains("node 0 (of 2)") && e.contains("singular"), "{e}");
}

#[test]
fn device_block_jacobi_equals_native() {
    blocks_agree::<f64>(1e-14);
    blocks_agree::<f32>(1e-5);
}

#[test]
fn device_random_fill_equals_native() {
    let dev = device();
    for n in [1, 255, 1000, 70_001] {
        let mut h = Vector::<f64>::host_zeros(n);
        fill_random(&mut h, 42, None).unwrap();
        let mut d = Vector::<f64>::device_zeros(&dev, n).unwrap();
        fill_random(&mut d, 42, None).unwrap();
        assert_eq!(bits(&d.to_host().unwrap()), bits(&h.to_host().unwrap()));
        let mut d = Vector::<f32>::device_zeros(&dev, n).unwrap();
        fill_random(&mut d, 42, None).unwrap();
        let d = d.to_host().unwrap();
        for (a, b) in d.iter().zip(h.to_host().unwrap()) {
            assert_eq!(f64::from(*a), b);
        }
    }
}

// ---------------------------------------------------------------------------
// A test-only LevelOperators, until the residual's Jacobian API is merged:
// the physics here (Laplacian, Lamé) are linear and homogeneous, so the
// residual F(v) is exactly A v; the point-block diagonal and the coarsest
// matrix come from element matrices of a hand-written pointwise Jacobian.
// ---------------------------------------------------------------------------

/// Which operator.
#[derive(Clone, Copy, Debug)]
enum Physics {
    Laplacian,
    Lame(LameParameters),
}

impl Physics {
    fn n_comp(self, dim: usize) -> usize {
        match self {
            Physics::Laplacian => 1,
            Physics::Lame(_) => dim,
        }
    }
    fn pointwise(self) -> &'static dyn Pointwise {
        match self {
            Physics::Laplacian => &Laplacian,
            Physics::Lame(_) => &Lame,
        }
    }
    fn constants(self) -> Vec<f64> {
        match self {
            Physics::Laplacian => vec![],
            Physics::Lame(p) => p.constants().to_vec(),
        }
    }
    /// `g3` of the physics.
    fn g3(self, dim: usize, g3: &mut [f64]) {
        let nc = self.n_comp(dim);
        match self {
            Physics::Laplacian => {
                for d in 0..dim {
                    g3[d * dim + d] = 1.0;
                }
            }
            Physics::Lame(p) => {
                for fc in 0..nc {
                    for gc in 0..nc {
                        for df in 0..dim {
                            for dg in 0..dim {
                                let delta = |a: usize, b: usize| f64::from(u8::from(a == b));
                                g3[((fc * nc + gc) * dim + df) * dim + dg] = p.mu
                                    * (delta(fc, gc) * delta(df, dg)
                                        + delta(df, gc) * delta(fc, dg))
                                    + p.lambda * delta(fc, df) * delta(gc, dg);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The assembled operator of `space` on `mesh`.
fn assembled(mesh: &femquad::mesh::Mesh, space: &FunctionSpace, physics: Physics) -> CsrMatrix {
    let q = Quadrature::default_for(&space.element()).unwrap();
    let disc = Discretization::<f64>::new(mesh, space, q, AuxSpace::None).unwrap();
    let u = vec![0.0; space.n_cell_dofs()];
    let inputs = CellInputs {
        u: &u,
        aux: &[],
        constants: &[],
    };
    let n_bt = space.n_basis() * space.n_comp();
    let mut ke = vec![0.0; space.n_cells() * n_bt * n_bt];
    let jac = |dim: usize,
               _: &PointArgs<'_, f64>,
               _: &mut [f64],
               _: &mut [f64],
               _: &mut [f64],
               g3: &mut [f64]|
     -> Result<()> {
        physics.g3(dim, g3);
        Ok(())
    };
    element_matrices(&disc, &inputs, jac, &mut ke, Execution::Parallel).unwrap();
    CsrMatrix::assemble(&SparsityPattern::of_space(space).unwrap(), &ke).unwrap()
}

/// Every level's operator: the residual on the level's space (`F(v) = A v`).
struct TestLevels<R: Real> {
    physics: Physics,
    residuals: Vec<Residual<R>>,
    matrices: Vec<CsrMatrix>,
    blocks: Vec<Vector<R>>,
    constants: Vec<R>,
}

impl<R: Real> TestLevels<R> {
    fn new(h: &MeshHierarchy, spaces: &LevelSpaces, physics: Physics, backend: &Backend) -> Self {
        let mut residuals = Vec::new();
        let mut matrices = Vec::new();
        let mut blocks = Vec::new();
        for (l, space) in spaces.spaces().iter().enumerate() {
            let mesh = h.mesh(spaces.mesh_level(l).unwrap()).unwrap();
            let q = Quadrature::default_for(&space.element()).unwrap();
            let r = Residual::<R>::new(mesh, space.clone(), q, AuxSpace::None, backend).unwrap();
            let a = assembled(mesh, space, physics);
            let b: Vec<R> = a
                .point_block_diagonal(space.n_comp())
                .unwrap()
                .iter()
                .map(|&v| R::from_f64(v))
                .collect();
            let like = r.vector().unwrap();
            blocks.push(match like {
                Vector::Host(_) => Vector::from(b),
                Vector::Device(d) => {
                    Vector::Device(DeviceVector::from_host(d.device(), &b).unwrap())
                }
            });
            residuals.push(r);
            matrices.push(a);
        }
        TestLevels {
            physics,
            residuals,
            matrices,
            blocks,
            constants: physics
                .constants()
                .iter()
                .map(|&c| R::from_f64(c))
                .collect(),
        }
    }
}

impl<R: Real> LevelOperators<R> for TestLevels<R> {
    fn apply(&mut self, level: usize, x: &Vector<R>, y: &mut Vector<R>) -> Result<()> {
        self.residuals[level].evaluate(self.physics.pointwise(), x, &self.constants, y)
    }
    fn block_diagonal(&mut self, level: usize, out: &mut Vector<R>) -> Result<()> {
        out.copy_from(&self.blocks[level])
    }
    fn assemble(&mut self, level: usize) -> Result<CsrMatrix> {
        Ok(self.matrices[level].clone())
    }
}

/// A hierarchy of `refinements` levels over the unit square/cube of `n0`
/// intervals, the finest space of `order`, the fixed dofs (whole boundary).
fn setup(
    dim: usize,
    n0: usize,
    refinements: usize,
    order: usize,
    physics: Physics,
) -> (MeshHierarchy, LevelSpaces, Vec<u32>) {
    let h = MeshHierarchy::new(&unit_box(dim, n0, &jittered(3)).unwrap(), refinements).unwrap();
    let finest = FunctionSpace::new(
        h.finest(),
        Element::lagrange(dim, order).unwrap(),
        physics.n_comp(dim),
    )
    .unwrap();
    let fixed = finest.boundary_dofs(h.finest()).unwrap();
    let spaces = LevelSpaces::new(&h, &finest).unwrap();
    (h, spaces, fixed)
}

/// One V-cycle on device vectors equals one on host vectors to round-off
/// (the eigenvalue estimates' reductions sum in another order): P1 and P2,
/// scalar and vector fields.
#[test]
fn device_vcycle_equals_host_vcycle() {
    let cl = backend();
    for (dim, order, physics) in [
        (2, 2, Physics::Laplacian),
        (
            3,
            1,
            Physics::Lame(LameParameters::from_young_poisson(1.0, 0.3).unwrap()),
        ),
    ] {
        let (h, spaces, fixed) = setup(dim, 2, 2, order, physics);
        let n = spaces.space(spaces.n_levels() - 1).unwrap().n_dofs();
        let mut b = random::<f64>(n, 17);
        for &d in &fixed {
            b[d as usize] = 0.25;
        }
        let mut out = Vec::new();
        for backend in [Backend::native(), cl.clone()] {
            let mut ops = TestLevels::<f64>::new(&h, &spaces, physics, &backend);
            let like = ops.residuals.last().unwrap().vector().unwrap();
            let mut mg =
                Multigrid::new(&spaces, &fixed, &like, MultigridOptions::default()).unwrap();
            mg.setup(&mut ops).unwrap();
            let bv = ops.residuals.last().unwrap().vector_from(&b).unwrap();
            let mut x = like.zeros_like().unwrap();
            mg.apply(&mut ops, &bv, &mut x).unwrap();
            out.push((x.to_host().unwrap(), mg.report().unwrap().clone()));
        }
        let (host, dev) = (&out[0].0, &out[1].0);
        let scale = host.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = host
            .iter()
            .zip(dev)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        eprintln!("{dim}D P{order}: |x_dev − x_host| = {diff:e} (max |x| {scale:e})");
        assert!(diff <= 1e-11 * scale, "{diff:e} vs {scale:e}");
        // fixed rows: the identity
        for &d in &fixed {
            assert_eq!(host[d as usize], 0.25);
            assert_eq!(dev[d as usize], 0.25);
        }
        for (a, b) in out[0].1.levels.iter().zip(&out[1].1.levels) {
            if let (Some(ea), Some(eb)) = (a.eigen, b.eigen) {
                assert!((ea.max - eb.max).abs() <= 1e-10 * ea.max, "{ea:?} {eb:?}");
            }
        }
    }
}

/// CG preconditioned by one V-cycle to the relative residual 1e-8, from a
/// random right-hand side; returns the iterations.
fn cg_iterations<R: Real>(
    h: &MeshHierarchy,
    spaces: &LevelSpaces,
    fixed: &[u32],
    physics: Physics,
    backend: &Backend,
) -> usize {
    let ops = RefCell::new(TestLevels::<R>::new(h, spaces, physics, backend));
    let like = ops.borrow().residuals.last().unwrap().vector().unwrap();
    let mut mg = Multigrid::new(spaces, fixed, &like, MultigridOptions::default()).unwrap();
    mg.setup(&mut *ops.borrow_mut()).unwrap();
    let finest = spaces.n_levels() - 1;
    let n = like.len();
    let mut b: Vec<R> = random(n, 23);
    for &d in fixed {
        b[d as usize] = R::ZERO;
    }
    let b = ops.borrow().residuals[finest].vector_from(&b).unwrap();
    let fixed_set = IndexSet::located_like(&like, fixed).unwrap();
    let mut a = |x: &Vector<R>, y: &mut Vector<R>| -> Result<()> {
        ops.borrow_mut().apply(finest, x, y)?;
        y.copy_at(&fixed_set, x)
    };
    let mut m =
        |r: &Vector<R>, z: &mut Vector<R>| -> Result<()> { mg.apply(&mut *ops.borrow_mut(), r, z) };
    let mut x = like.zeros_like().unwrap();
    let stats = cg(&mut a, Some(&mut m), &b, &mut x, 1e-8, 200).unwrap();
    stats.iterations
}

/// Iterations to 1e-8 stay bounded over 4 refinements: Poisson P1/P2 in 2D
/// and 3D at most 15, Lamé (ν = 0.3) at most 25. (Host vectors; the device
/// cycle equals the host's, above.)
#[test]
fn iterations_are_bounded_under_refinement() {
    let nu = LameParameters::from_young_poisson(1.0, 0.3).unwrap();
    let mut table = Vec::new();
    for (dim, order, physics, bound, n0, levels) in [
        (2, 1, Physics::Laplacian, 15, 2, 5),
        (2, 2, Physics::Laplacian, 15, 2, 4),
        (3, 1, Physics::Laplacian, 15, 1, 4),
        (3, 2, Physics::Laplacian, 15, 1, 3),
        (2, 1, Physics::Lame(nu), 25, 2, 5),
        (3, 1, Physics::Lame(nu), 25, 1, 4),
        (2, 2, Physics::Lame(nu), 25, 2, 4),
        (3, 2, Physics::Lame(nu), 25, 1, 3),
    ] {
        let mut counts = Vec::new();
        for r in 1..=levels {
            let (h, spaces, fixed) = setup(dim, n0, r, order, physics);
            let its = cg_iterations::<f64>(&h, &spaces, &fixed, physics, &Backend::native());
            counts.push((
                spaces.n_levels(),
                spaces.space(spaces.n_levels() - 1).unwrap().n_dofs(),
                its,
            ));
        }
        let name = format!("{physics:?} {dim}D P{order}");
        eprintln!("{name}: (levels, dofs, iterations) {counts:?}");
        table.push((name.clone(), counts.clone()));
        for &(_, _, its) in &counts {
            assert!(its <= bound, "{name}: {counts:?}");
        }
    }
}

/// A Gmsh hierarchy with Dirichlet conditions on one boundary part only
/// (the cube's `bottom`; traction-free elsewhere): the fixed dofs of every
/// level come from the finest level's group dofs, and the iterations stay
/// bounded.
#[test]
fn gmsh_hierarchy_with_a_partial_dirichlet_boundary() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mesh_cube.msh");
    let gmsh = femquad::mesh::read_gmsh(path).unwrap();
    let bottom = gmsh.physical_group("bottom").unwrap().clone();
    let physics = Physics::Lame(LameParameters::from_young_poisson(1.0, 0.3).unwrap());
    let mut counts = Vec::new();
    for refinements in 1..=3 {
        let h = MeshHierarchy::from_gmsh(&gmsh, refinements).unwrap();
        let finest = FunctionSpace::new(h.finest(), Element::lagrange(3, 1).unwrap(), 3).unwrap();
        let fixed: Vec<u32> = h
            .gmsh(refinements)
            .unwrap()
            .group_vertices(&bottom)
            .iter()
            .flat_map(|&v| (0..3).map(move |c| 3 * v + c))
            .collect();
        let spaces = LevelSpaces::new(&h, &finest).unwrap();
        let its = cg_iterations::<f64>(&h, &spaces, &fixed, physics, &Backend::native());
        counts.push((finest.n_dofs(), its));
    }
    eprintln!("Lamé on the Gmsh cube, bottom fixed: (dofs, iterations) {counts:?}");
    assert!(counts.iter().all(|&(_, its)| its <= 25), "{counts:?}");
}
