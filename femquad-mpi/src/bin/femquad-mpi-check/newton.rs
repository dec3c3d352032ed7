//! Check 6: Newton–Krylov over ranks. Nonlinear diffusion
//! `−∇·((1 + u²)∇u) = 0` with `u = x₀ + x₁/2` on the boundary of the box,
//! solved from `u = 0` inside by femquad's `newton_krylov` (exact Jacobian
//! products, unpreconditioned GMRES, line search) on [`DistVector`]s and
//! serially on rank 0 with the same options: the solutions within 1e-8
//! (relative, max norm), the same number of Newton steps.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use femquad::backend::{Backend, IndexSet, Vector};
use femquad::mesh::Mesh;
use femquad::physics::builtin::NonlinearDiffusion;
use femquad::prelude::*;
use femquad::solve::{GmresOptions, Jacobian, NewtonOptions, newton_krylov};
use femquad_mpi::{DistMesh, DistOperator, DistVector};

use crate::{rel_diff, verdict};

fn on_boundary(x: &[f64]) -> bool {
    x.iter().any(|&c| c == 0.0 || c == 1.0)
}

fn g(x: &[f64]) -> f64 {
    x[0] + 0.5 * x[1]
}

fn options() -> NewtonOptions {
    NewtonOptions {
        rtol: 1e-10,
        linear: GmresOptions {
            tol: 1e-8,
            max_iter: 1000,
            restart: 100,
        },
        ..NewtonOptions::default()
    }
}

/// Check 6 on every rank (rank 0 compares and prints).
pub fn check(
    dist: &Rc<DistMesh>,
    serial_mesh: Option<&Arc<Mesh>>,
    backend: &Backend,
) -> Result<bool> {
    let form = |s: FunctionSpace| Form::new(s, NonlinearDiffusion);
    let dim = dist.layout().dim;
    let fixed = dist.mask_where(1, on_boundary);
    let op = RefCell::new(DistOperator::new(dist, 1, 1, form, backend)?);
    let mut u = op.borrow().vector()?;
    let values: Vec<f64> = dist
        .layout()
        .coordinates
        .chunks_exact(dim)
        .zip(&fixed)
        .map(|(x, &f)| if f { g(x) } else { 0.0 })
        .collect();
    u.set_local_from_host(&values)?;
    let entries: Vec<u32> = (0..fixed.len() as u32)
        .filter(|&i| fixed[i as usize])
        .collect();
    let fixed_set = u.index_set(&entries)?;
    let ranks = femquad_mpi::comm::Ranks::world();
    let mut free = u.zeros_like()?;
    let residual = |u: &DistVector<f64>, r: &mut DistVector<f64>| -> Result<()> {
        op.borrow_mut().apply(u, r)?;
        ranks.agree(r.local_mut().set_at(&fixed_set, 0.0))
    };
    let mut action = |u: &DistVector<f64>, v: &DistVector<f64>, jv: &mut DistVector<f64>| {
        free.copy_from(v)?;
        ranks.agree(free.local_mut().set_at(&fixed_set, 0.0))?;
        op.borrow_mut().jacobian_action(u, &free, jv)?;
        ranks.agree(jv.local_mut().copy_at(&fixed_set, v.local()))
    };
    let stats = newton_krylov(
        residual,
        Jacobian::Exact(&mut action),
        None,
        &mut u,
        &options(),
    )?;
    // rank 0 compares; an error there ends every rank
    let compared = match (serial_mesh, u.gather_to_root()?) {
        (Some(mesh), Some(solution)) => serial_newton(mesh).map(|(serial, serial_steps)| {
            let err = rel_diff(&solution, &serial);
            let pass = err <= 1e-8 && stats.iterations == serial_steps;
            println!(
                "Newton–Krylov: {} Newton steps (serial {serial_steps}), relative difference \
                 {err:.3e} {}",
                stats.iterations,
                verdict(pass)
            );
            pass
        }),
        _ => Ok(true),
    };
    dist.ranks().agree(compared)
}

/// The serial Newton–Krylov solve: the solution and the Newton steps.
fn serial_newton(mesh: &Arc<Mesh>) -> Result<(Vec<f64>, usize)> {
    let dim = mesh.dim();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1)?, 1)?;
    let op = RefCell::new(Operator::<f64>::new(
        Form::new(space, NonlinearDiffusion)?,
        &Backend::native(),
    )?);
    let n = mesh.n_vertices();
    let fixed: Vec<u32> = (0..n as u32)
        .filter(|&v| on_boundary(mesh.vertex(v as usize)))
        .collect();
    let fixed_set = IndexSet::Host(fixed.clone());
    let mut u0 = vec![0.0; n];
    for &v in &fixed {
        u0[v as usize] = g(mesh.vertex(v as usize));
    }
    let mut u = Vector::from(u0);
    let mut free = u.zeros_like()?;
    let residual = |u: &Vector<f64>, r: &mut Vector<f64>| -> Result<()> {
        op.borrow_mut().apply(u, r)?;
        r.set_at(&fixed_set, 0.0)
    };
    let mut action = |u: &Vector<f64>, v: &Vector<f64>, jv: &mut Vector<f64>| {
        free.copy_from(v)?;
        free.set_at(&fixed_set, 0.0)?;
        op.borrow_mut().jacobian_action(u, &free, jv)?;
        jv.copy_at(&fixed_set, v)
    };
    let stats = newton_krylov(
        residual,
        Jacobian::Exact(&mut action),
        None,
        &mut u,
        &options(),
    )?;
    Ok((u.to_host()?, stats.iterations))
}
