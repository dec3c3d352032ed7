//! Check 5: multigrid over ranks. Poisson (`−Δu = 1`, `u = x₀ + x₁/2` on
//! the boundary of the box) on a [`DistHierarchy`] of the distributed mesh,
//! solved by CG preconditioned with [`DistMultigrid`] to 1e-10, against
//! femquad's serial multigrid (femquad's `Multigrid` on the serial
//! `MeshHierarchy`, the same options and the same coordinate-hashed start
//! vectors through `Multigrid::setup_with_starts`) on rank 0:
//!
//! * the solution within 1e-8 (relative, max norm) of the serial one, the
//!   iteration count within 1 of the serial count (printed, so that
//!   `tests/mpirun.rs` compares it across numbers of ranks);
//! * once more with one refinement more: the iterations grow by at most 1;
//! * one V-cycle of a coordinate-hashed vector equals the serial V-cycle's
//!   to 1e-12 (relative, max norm);
//!
//! these with only level 0 on rank 0 (its direct solve); then with one
//! refinement more and the default agglomeration (`L_a` the level below
//! the finest on these small meshes: levels `0..=L_a` cycled on rank 0 by
//! femquad's serial multigrid):
//!
//! * the solution within 1e-8 of the serial one, the iterations within 1
//!   of the serial count and of the same hierarchy's count without
//!   agglomeration;
//! * the vertex map of the agglomerated level: rank 0's serial mesh 0 is
//!   the distributed coarse mesh (the same cells in the same vertex order,
//!   the same coordinates) and every distributed vertex of level `L_a` maps
//!   to the serial vertex with its coordinates (bits); the report lists
//!   every level (the serial ones too) with its dofs and, above level 0,
//!   its eigenvalue estimate, the same on every rank;
//! * a serial option (the coarse factorization) given to the distributed
//!   levels is refused on every rank;
//! * a failure of rank 0's serial levels — options the serial multigrid
//!   refuses at construction (`max_coarse_dofs` below the coarsest level)
//!   and at setup (the `f32` cycle with matrix-free levels) — is every
//!   rank's error.
//!
//! Vertices are matched by their coordinates (the same bits on both sides:
//! the distributed levels number their midpoints differently).

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use femquad::backend::{Backend, Vector};
use femquad::linalg::FixedDofs;
use femquad::mesh::Mesh;
use femquad::multigrid::CyclePrecision;
use femquad::multigrid::{JacobianLevels, MeshHierarchy, Multigrid, MultigridOptions, Transfer};
use femquad::physics::builtin::Poisson;
use femquad::prelude::*;
use femquad::solve::cg;
use femquad_mpi::agglomerate::{AgglomeratedLevel, Agglomeration};
use femquad_mpi::multigrid::coordinate_random;
use femquad_mpi::solve::{Krylov, solve_linear_preconditioned};
use femquad_mpi::{DistHierarchy, DistMesh, DistMultigrid, DistOperator, DistVector};

use crate::{rel_diff, serial_constrained_action, serial_rhs, verdict};

/// CG's relative tolerance.
const TOL: f64 = 1e-10;
/// The seed of the vector the V-cycle is applied to.
const SEED_B: u64 = 12345;

fn poisson(s: FunctionSpace) -> Result<Form<f64>> {
    Form::new(s, Poisson)?.with_constants(&[1.0])
}

/// The Dirichlet boundary: the faces of the unit box.
fn on_boundary(x: &[f64]) -> bool {
    x.iter().any(|&c| c == 0.0 || c == 1.0)
}

/// The Dirichlet data.
fn g(x: &[f64]) -> f64 {
    x[0] + 0.5 * x[1]
}

/// What rank 0 gathered of a distributed solve.
struct Gathered {
    /// Coordinates of the finest vertices (distributed numbering).
    coordinates: Vec<f64>,
    solution: Vec<f64>,
    /// One V-cycle applied to the coordinate-hashed vector.
    vcycle: Vec<f64>,
    /// The agglomerated level.
    level: usize,
    /// What is wrong with the agglomerated level's vertex map or the
    /// levels' report, if anything.
    map_error: Option<String>,
}

/// Collective: what is wrong with `mg`'s report after a setup, if anything
/// (rank 0's; `None` elsewhere): one level per level of `hierarchy` with its
/// global dofs, an eigenvalue estimate on every level but 0, the same
/// estimates on every rank.
fn report_error(hierarchy: &DistHierarchy, mg: &DistMultigrid<f64>) -> Option<String> {
    let report = mg.report();
    let maxima: Vec<f64> = report
        .iter()
        .map(|r| r.eigen.map_or(-1.0, |e| e.max))
        .collect();
    let all = hierarchy.finest().ranks().all_gather_f64s(&maxima);
    if hierarchy.finest().ranks().rank() != 0 {
        return None;
    }
    if report.len() != hierarchy.n_levels() {
        return Some(format!(
            "the report has {} levels of {}",
            report.len(),
            hierarchy.n_levels()
        ));
    }
    let wrong = report.iter().enumerate().position(|(l, r)| {
        let dofs = hierarchy.mesh(l).map(|m| m.layout().n_global_vertices);
        Some(r.dofs) != dofs || (l == 0) != r.eigen.is_none()
    });
    if let Some(l) = wrong {
        return Some(format!("the report's level {l}: {:?}", report[l]));
    }
    (all.chunks_exact(maxima.len()).any(|m| m != maxima))
        .then(|| format!("the ranks report other estimates: {all:?}"))
}

/// Rank 0: what is wrong with the serial hierarchy `serial` of the
/// agglomerated levels `0..=level` and the vertex map `map` (distributed
/// global vertex → serial vertex of level `level`), given the coordinates
/// of the distributed level `level` by global number and the `global` mesh
/// rank 0 distributed; `None` if nothing. Checks that the serial mesh 0 is
/// `global` (cells in their vertex order, coordinates) and every mapped
/// vertex's coordinates, bit for bit.
fn map_error(
    serial: &MeshHierarchy,
    map: &[u32],
    level: usize,
    level_xs: &[f64],
    global: &Mesh,
) -> Option<String> {
    let dim = global.dim();
    let (Some(coarse), Some(mesh)) = (serial.mesh(0), serial.mesh(level)) else {
        return Some(format!("the serial hierarchy has no level {level}"));
    };
    if coarse.vertices() != global.vertices() || coarse.cells() != global.cells() {
        return Some("the serial mesh 0 is not the distributed mesh".into());
    }
    if map.len() * dim != level_xs.len() {
        return Some(format!(
            "{} vertices mapped of {}",
            map.len(),
            level_xs.len() / dim
        ));
    }
    let wrong = map
        .iter()
        .zip(level_xs.chunks_exact(dim))
        .position(|(&s, x)| {
            let y = mesh.vertex(s as usize);
            x.iter().zip(y).any(|(a, b)| a.to_bits() != b.to_bits())
        });
    wrong.map(|g| {
        format!(
            "the distributed vertex {g} at {:?} mapped to the serial vertex {} at {:?}",
            &level_xs[g * dim..(g + 1) * dim],
            map[g],
            mesh.vertex(map[g] as usize)
        )
    })
}

/// Check 5 on every rank (rank 0 compares and prints); `true` if it passed
/// (on the other ranks: `true`).
pub fn check(
    dist: &Rc<DistMesh>,
    serial_mesh: Option<&Arc<Mesh>>,
    backend: &Backend,
    refinements: usize,
) -> Result<bool> {
    let mut ok = true;
    let mut previous: Option<usize> = None;
    let direct = Agglomeration {
        level: AgglomeratedLevel::Level(0),
        ..Agglomeration::default()
    };
    for refs in [refinements, refinements + 1] {
        let hierarchy = DistHierarchy::new(dist, refs)?;
        let (iterations, gathered) = distributed(&hierarchy, serial_mesh, backend, direct)?;
        // rank 0 compares; an error there ends every rank
        let compared = match (serial_mesh, gathered) {
            (Some(mesh), Some(gathered)) => compare(mesh, refs, &gathered, iterations, previous, 0),
            _ => Ok(true),
        };
        ok &= dist.ranks().agree(compared)?;
        previous = Some(iterations);
    }
    // the default agglomeration on the same hierarchy
    let refs = refinements + 1;
    let hierarchy = DistHierarchy::new(dist, refs)?;
    let default = Agglomeration::default();
    let (iterations, gathered) = distributed(&hierarchy, serial_mesh, backend, default)?;
    let compared = match (serial_mesh, gathered, previous) {
        (Some(mesh), Some(gathered), Some(direct)) => {
            compare_agglomerated(mesh, refs, &gathered, iterations, direct)
        }
        _ => Ok(true),
    };
    ok &= dist.ranks().agree(compared)?;
    ok &= rank_0_failures(&hierarchy, backend)?;
    Ok(ok)
}

/// Rank 0: femquad's serial multigrid of `refs` refinements of `mesh`, the
/// serial vertex of each gathered vertex, the serial solve's CG iterations
/// and the gathered solution's relative difference to the serial one.
fn against_serial(
    mesh: &Arc<Mesh>,
    refs: usize,
    gathered: &Gathered,
) -> Result<(Serial, Vec<usize>, usize, f64)> {
    let serial = Serial::new(mesh, refs)?;
    let order = serial_order(&gathered.coordinates, &serial.coordinates, mesh.dim())?;
    let (solution, serial_its) = serial.solve()?;
    let err = rel_diff(&permuted(&gathered.solution, &order), &solution);
    Ok((serial, order, serial_its, err))
}

/// Rank 0: the agglomerated run of `refs` refinements (level `refs − 1` on
/// rank 0) against the serial solve and the run without agglomeration
/// (`direct` iterations); its vertex map.
fn compare_agglomerated(
    mesh: &Arc<Mesh>,
    refs: usize,
    gathered: &Gathered,
    iterations: usize,
    direct: usize,
) -> Result<bool> {
    let agglomerated = gathered.level;
    let (_, _, serial_its, err) = against_serial(mesh, refs, gathered)?;
    let pass = err <= 1e-8
        && iterations.abs_diff(serial_its) <= 1
        && iterations.abs_diff(direct) <= 1
        && agglomerated + 1 == refs;
    println!(
        "multigrid CG, {refs} refinements: {iterations} iterations (serial {serial_its}, level 0 \
         agglomerated {direct}), level {agglomerated} agglomerated, relative difference \
         {err:.3e} {}",
        verdict(pass)
    );
    let map_pass = gathered.map_error.is_none();
    println!(
        "multigrid agglomerated level {agglomerated}: the serial mesh 0 is the distributed one, \
         every vertex mapped to its coordinates, every level reported{} {}",
        gathered
            .map_error
            .as_ref()
            .map_or(String::new(), |e| format!(" — {e}")),
        verdict(map_pass)
    );
    Ok(pass && map_pass)
}

/// Rank 0's serial levels fail — at construction (`max_coarse_dofs` below
/// the coarsest level) and at setup (the `f32` cycle over matrix-free
/// levels): every rank returns the error (rank 0 its own, the others
/// [`Error::RankFailed`] naming rank 0); printed by rank 0.
fn rank_0_failures(hierarchy: &DistHierarchy, backend: &Backend) -> Result<bool> {
    let fine = hierarchy.finest();
    let ranks = fine.ranks();
    let fixed = fine.mask_where(1, on_boundary);
    let at_level_1 = |options: MultigridOptions| Agglomeration {
        level: AgglomeratedLevel::Level(1),
        options,
    };
    let construction = DistMultigrid::<f64>::new(
        hierarchy,
        1,
        poisson,
        backend,
        &fixed,
        MultigridOptions::default(),
        at_level_1(MultigridOptions {
            max_coarse_dofs: 1,
            ..MultigridOptions::default()
        }),
    )
    .err();
    let setup = (|| -> Result<Option<Error>> {
        let single = MultigridOptions {
            cycle_precision: CyclePrecision::Single,
            ..MultigridOptions::default()
        };
        let mut mg = DistMultigrid::<f64>::new(
            hierarchy,
            1,
            poisson,
            backend,
            &fixed,
            MultigridOptions::default(),
            at_level_1(single),
        )?;
        let u = DistOperator::new(fine, 1, 1, poisson, backend)?.vector()?;
        Ok(mg.setup(&u).err())
    })()?;
    // a serial option given to the distributed levels: refused on every rank
    let misplaced = DistMultigrid::<f64>::new(
        hierarchy,
        1,
        poisson,
        backend,
        &fixed,
        MultigridOptions {
            factorization: femquad::sparse::Factorization::Lu,
            ..MultigridOptions::default()
        },
        Agglomeration::default(),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    let refused = misplaced.contains("`options`") && misplaced.contains("Agglomeration::options");
    let refused = ranks
        .all_gather_u64(u64::from(refused))
        .iter()
        .all(|&r| r == 1);
    let rank = ranks.rank();
    if rank == 0 {
        println!(
            "multigrid: a serial option (LU) for the distributed levels is refused on every rank: \
             `{misplaced}` {}",
            verdict(refused)
        );
    }
    let mut pass = refused;
    for (what, error, names) in [
        ("construction", construction, "max_coarse_dofs"),
        ("setup", setup, "cycle_precision"),
    ] {
        let message = error.as_ref().map(Error::to_string).unwrap_or_default();
        let own = match (rank, &error) {
            (0, Some(Error::InvalidArgument { .. })) => message.contains(names),
            (_, Some(Error::RankFailed { rank: 0, .. })) => message.contains(names),
            _ => false,
        };
        let all = ranks.all_gather_u64(u64::from(own)).iter().all(|&o| o == 1);
        pass &= all;
        if rank == 0 {
            println!(
                "multigrid agglomerated levels failing on rank 0 at {what}: every rank returns \
                 `{message}` {}",
                verdict(all)
            );
        }
    }
    Ok(pass)
}

/// Rank 0: the distributed results of `refs` refinements against the serial
/// ones, printed; `previous` the iterations with one refinement less.
fn compare(
    mesh: &Arc<Mesh>,
    refs: usize,
    gathered: &Gathered,
    iterations: usize,
    previous: Option<usize>,
    agglomerated: usize,
) -> Result<bool> {
    let (serial, order, serial_its, err) = against_serial(mesh, refs, gathered)?;
    let pass = err <= 1e-8
        && iterations.abs_diff(serial_its) <= 1
        && gathered.level == agglomerated
        && gathered.map_error.is_none();
    let mut ok = pass;
    println!(
        "multigrid CG, {refs} refinements: {iterations} iterations (serial {serial_its}), level \
         {} agglomerated, relative difference {err:.3e}{} {}",
        gathered.level,
        gathered
            .map_error
            .as_ref()
            .map_or(String::new(), |e| format!(", {e}")),
        verdict(pass)
    );
    if let Some(before) = previous {
        let pass = iterations <= before + 1;
        ok &= pass;
        println!(
            "multigrid CG iterations under one refinement more: {before} → {iterations} {}",
            verdict(pass)
        );
    } else {
        let vcycle = serial.vcycle()?;
        let err = rel_diff(&permuted(&gathered.vcycle, &order), &vcycle);
        let pass = err <= 1e-12;
        ok &= pass;
        println!(
            "multigrid V-cycle, {refs} refinements: relative difference to the serial \
             V-cycle {err:.3e} {}",
            verdict(pass)
        );
    }
    Ok(ok)
}

/// The multigrid-preconditioned CG solve and one V-cycle on the ranks: the
/// iterations (every rank) and the gathered results (rank 0).
fn distributed(
    hierarchy: &DistHierarchy,
    global: Option<&Arc<Mesh>>,
    backend: &Backend,
    agglomeration: Agglomeration,
) -> Result<(usize, Option<Gathered>)> {
    let fine = hierarchy.finest();
    let dim = fine.layout().dim;
    let fixed = fine.mask_where(1, on_boundary);
    let mut op = DistOperator::new(fine, 1, 1, poisson, backend)?;
    let mut u = op.vector()?;
    let coordinates = &fine.layout().coordinates;
    let values: Vec<f64> = coordinates
        .chunks_exact(dim)
        .zip(&fixed)
        .map(|(x, &f)| if f { g(x) } else { 0.0 })
        .collect();
    u.set_local_from_host(&values)?;
    let options = MultigridOptions::default();
    let mut mg = DistMultigrid::new(
        hierarchy,
        1,
        poisson,
        backend,
        &fixed,
        options,
        agglomeration,
    )?;
    mg.setup(&u)?;
    let report = report_error(hierarchy, &mg);
    let solver = Krylov::Cg {
        tol: TOL,
        max_iter: 200,
    };
    let stats = solve_linear_preconditioned(&mut op, &mut u, &fixed, &solver, &mut mg)?;
    // one V-cycle of a vector the same on every partition
    let mut b = op.vector()?;
    let hashed: Vec<f64> = coordinates
        .chunks_exact(dim)
        .map(|x| coordinate_random(x, 0, SEED_B))
        .collect();
    b.set_local_from_host(&hashed)?;
    let mut x = op.vector()?;
    femquad::linalg::LinearOperator::apply(&mut mg, &b, &mut x)?;
    let mut xs = DistVector::zeros(fine, dim)?;
    xs.set_local_from_host(coordinates)?;
    let level = mg.agglomerated_level();
    let agglomerated = hierarchy
        .mesh(level)
        .ok_or_else(|| Error::internal("no agglomerated level"))?;
    let mut level_xs = DistVector::zeros(agglomerated, dim)?;
    level_xs.set_local_from_host(&agglomerated.layout().coordinates)?;
    let gathered = match (
        xs.gather_to_root()?,
        u.gather_to_root()?,
        x.gather_to_root()?,
        level_xs.gather_to_root()?,
        global,
        mg.agglomerated_vertices(),
    ) {
        (
            Some(coordinates),
            Some(solution),
            Some(vcycle),
            Some(level_xs),
            Some(global),
            Some((serial, map)),
        ) => Some(Gathered {
            coordinates,
            solution,
            vcycle,
            level,
            map_error: report.or_else(|| map_error(serial, map, level, &level_xs, global)),
        }),
        _ => None,
    };
    Ok((stats.iterations, gathered))
}

/// femquad's serial multigrid of the same problem on rank 0.
struct Serial {
    hierarchy: MeshHierarchy,
    /// Coordinates of the finest vertices.
    coordinates: Vec<f64>,
}

impl Serial {
    fn new(mesh: &Arc<Mesh>, refinements: usize) -> Result<Self> {
        let hierarchy = MeshHierarchy::new(mesh, refinements)?;
        let coordinates = hierarchy.finest().vertices().to_vec();
        Ok(Serial {
            hierarchy,
            coordinates,
        })
    }

    /// Runs `f` with femquad's multigrid of the hierarchy set up (the
    /// coordinate-hashed start vectors of the distributed multigrid), its
    /// levels' operators, and a finest operator of its own.
    fn with_multigrid<T>(
        &self,
        f: impl FnOnce(
            &mut Multigrid<f64>,
            &mut JacobianLevels<'_, f64>,
            &mut Operator<f64>,
        ) -> Result<T>,
    ) -> Result<T> {
        let h = &self.hierarchy;
        let n_levels = h.n_levels();
        let meshes: Vec<&Arc<Mesh>> = h.meshes().collect();
        let dim = meshes[0].dim();
        let mut ops = meshes
            .iter()
            .map(|m| {
                let space = FunctionSpace::new((*m).clone(), Element::lagrange(dim, 1)?, 1)?;
                Operator::new(poisson(space)?, &Backend::native())
            })
            .collect::<Result<Vec<_>>>()?;
        let transfers = (0..n_levels - 1)
            .map(|l| {
                Transfer::new(
                    meshes[l].n_vertices(),
                    h.edges(l).unwrap_or(&[]).to_vec(),
                    1,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let fixed = meshes
            .iter()
            .map(|m| FixedDofs::new(m.n_vertices(), &boundary_vertices(m)))
            .collect::<Result<Vec<_>>>()?;
        let n = meshes[n_levels - 1].n_vertices();
        let state = Vector::from(vec![0.0; n]);
        let states: Vec<Vector<f64>> = meshes[..n_levels - 1]
            .iter()
            .map(|m| Vector::from(vec![0.0; m.n_vertices()]))
            .collect();
        let mut mg = Multigrid::from_parts(transfers, &fixed, &state, MultigridOptions::default())?;
        let mut own = ops
            .pop()
            .ok_or_else(|| Error::internal("no finest level"))?;
        let space = own.space().clone();
        let mut finest = Operator::new(poisson(space)?, &Backend::native())?;
        let seed = mg.options().seed;
        let mut levels = JacobianLevels {
            coarse: &mut ops,
            states: &states,
            finest: &mut own,
            state: &state,
            matrices: &[],
        };
        mg.setup_with_starts(&mut levels, &mut |l, x| {
            let m = meshes[l];
            let values = (0..m.n_vertices())
                .map(|v| coordinate_random(m.vertex(v), 0, seed.wrapping_add(l as u64)))
                .collect::<Vec<_>>();
            *x = Vector::from(values);
            Ok(())
        })?;
        f(&mut mg, &mut levels, &mut finest)
    }

    /// The multigrid-preconditioned CG solve (one step from the Dirichlet
    /// data, as `solve_linear` does): the solution and the iterations.
    fn solve(&self) -> Result<(Vec<f64>, usize)> {
        let mesh = self.hierarchy.finest();
        let n = mesh.n_vertices();
        let mut is_fixed = vec![false; n];
        for v in boundary_vertices(mesh) {
            is_fixed[v as usize] = true;
        }
        let u0: Vec<f64> = (0..n)
            .map(|v| if is_fixed[v] { g(mesh.vertex(v)) } else { 0.0 })
            .collect();
        self.with_multigrid(|mg, levels, op| {
            let u = Vector::from(u0.clone());
            let b = serial_rhs(op, &u, &is_fixed)?;
            let mut a = |v: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
                serial_constrained_action(op, &u, &is_fixed, v, y)
            };
            let mut pre =
                |r: &Vector<f64>, z: &mut Vector<f64>| -> Result<()> { mg.apply(levels, r, z) };
            let mut delta = Vector::from(vec![0.0; n]);
            let stats = cg(
                &mut a,
                Some(&mut pre),
                &Vector::from(b),
                &mut delta,
                TOL,
                200,
            )?;
            let solution = u0
                .iter()
                .zip(delta.to_host()?)
                .map(|(a, d)| a + d)
                .collect();
            Ok((solution, stats.iterations))
        })
    }

    /// One V-cycle of the coordinate-hashed vector.
    fn vcycle(&self) -> Result<Vec<f64>> {
        let mesh = self.hierarchy.finest();
        let b: Vec<f64> = (0..mesh.n_vertices())
            .map(|v| coordinate_random(mesh.vertex(v), 0, SEED_B))
            .collect();
        self.with_multigrid(|mg, levels, _| {
            let mut x = Vector::from(vec![0.0; b.len()]);
            mg.apply(levels, &Vector::from(b.clone()), &mut x)?;
            x.to_host()
        })
    }
}

/// The vertices of `mesh` on the box's faces.
fn boundary_vertices(mesh: &Mesh) -> Vec<u32> {
    (0..mesh.n_vertices() as u32)
        .filter(|&v| on_boundary(mesh.vertex(v as usize)))
        .collect()
}

/// For each distributed vertex (coordinates `dist`), the serial vertex with
/// the same coordinates (`serial`).
pub(crate) fn serial_order(dist: &[f64], serial: &[f64], dim: usize) -> Result<Vec<usize>> {
    let key = |x: &[f64]| -> Vec<u64> { x.iter().map(|c| c.to_bits()).collect() };
    let index: HashMap<Vec<u64>, usize> = serial
        .chunks_exact(dim)
        .enumerate()
        .map(|(i, x)| (key(x), i))
        .collect();
    if dist.len() != serial.len() {
        return Err(Error::arg(
            "hierarchy",
            format!(
                "the distributed finest level has {} vertices, the serial one {}",
                dist.len() / dim,
                serial.len() / dim
            ),
        ));
    }
    dist.chunks_exact(dim)
        .map(|x| {
            index
                .get(&key(x))
                .copied()
                .ok_or_else(|| Error::arg("hierarchy", format!("no serial vertex at {x:?}")))
        })
        .collect()
}

/// `values` (distributed numbering) in the serial numbering.
pub(crate) fn permuted(values: &[f64], order: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; values.len()];
    for (&v, &i) in values.iter().zip(order) {
        out[i] = v;
    }
    out
}
