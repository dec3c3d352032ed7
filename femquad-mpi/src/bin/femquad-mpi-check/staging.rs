//! Checks of the halo staging (`femquad_mpi::timeline`): the device
//! commands of one `F(u)` come in the expected order, each on its queue and
//! waiting for exactly the commands it needs, with overlap and without; the
//! ranks agree on failure as few times as promised; and a failure found
//! between two agreements (`--nan-rank`) still ends every rank.

use std::rc::Rc;

use femquad::backend::Backend;
use femquad::physics::builtin::NonlinearDiffusion;
use femquad::prelude::*;
use femquad_mpi::layout::RankLayout;
use femquad_mpi::timeline::{Command, Queue, Step};
use femquad_mpi::{DistMesh, DistOperator, DistVector};

use crate::verdict;

/// The device commands one `F(u)` must record on a rank of `layout` with
/// one entry per vertex, in order: for each, its step, queue and the steps
/// its wait list must name. With `updated` the state's ghosts are updated
/// (a state the operator has not seen); without, the state is current and
/// only the accumulate remains.
fn expected(layout: &RankLayout, overlap: bool, updated: bool) -> Vec<(Step, Queue, Vec<Step>)> {
    use Queue::{Compute, Transfer};
    use Step::*;
    let shared = layout.neighbours.iter().any(|n| !n.shared_owned.is_empty());
    let ghosts = layout.n_local() > layout.n_owned;
    let mut steps = Vec::new();
    let has_halo = !layout.neighbours.is_empty();
    if !updated {
        steps.push((Interior, Compute, vec![]));
    } else {
        if has_halo {
            steps.push((SharedStaged, Compute, vec![]));
        }
        if overlap {
            steps.push((Interior, Compute, vec![]));
        }
        if shared {
            steps.push((SharedDownload, Transfer, vec![SharedStaged]));
        }
        if ghosts {
            steps.push((GhostUpload, Transfer, vec![SharedStaged]));
            steps.push((GhostsIn, Compute, vec![GhostUpload]));
        }
        if !overlap {
            steps.push((Interior, Compute, vec![]));
        }
    }
    steps.push((Boundary, Compute, vec![]));
    if has_halo {
        steps.push((ResultStaged, Compute, vec![]));
    }
    if ghosts {
        steps.push((GhostDownload, Transfer, vec![ResultStaged]));
    }
    if shared {
        steps.push((SumUpload, Transfer, vec![ResultStaged]));
        steps.push((SumsIn, Compute, vec![SumUpload]));
    }
    steps
}

/// The first difference between the recorded `commands` and `expected`.
fn difference(commands: &[Command], expected: &[(Step, Queue, Vec<Step>)]) -> Option<String> {
    for (i, e) in expected.iter().enumerate() {
        let Some(c) = commands.get(i) else {
            return Some(format!("command {i}: none recorded, expected {e:?}"));
        };
        if (c.step, c.queue, &c.waits) != (e.0, e.1, &e.2) {
            return Some(format!(
                "command {i}: {:?} on {:?} waiting for {:?}, expected {e:?}",
                c.step, c.queue, c.waits
            ));
        }
    }
    (commands.len() > expected.len()).then(|| {
        format!(
            "{} commands recorded, {} expected",
            commands.len(),
            expected.len()
        )
    })
}

/// On a device: the commands of `F(u)` with and without overlap, at a
/// changed state (`u` rescaled by 1: a new version) and again at the same
/// state, are the [`expected`] ones on every rank (the first difference
/// printed).
pub(crate) fn order(
    op: &mut DistOperator<f64>,
    u: &mut DistVector<f64>,
    r: &mut DistVector<f64>,
) -> Result<bool> {
    let mesh = op.mesh().clone();
    let ranks = mesh.ranks();
    let mut differences = Vec::new();
    for overlap in [true, false] {
        op.set_overlap(overlap);
        u.scale(1.0)?;
        for updated in [true, false] {
            op.apply(u, r)?;
            let expected = expected(mesh.layout(), overlap, updated);
            if let Some(d) = difference(op.timeline().commands(), &expected) {
                differences.push(format!(
                    "rank {}, overlap {overlap}, state updated {updated}: {d}",
                    ranks.rank()
                ));
            }
        }
    }
    op.set_overlap(true);
    for d in &differences {
        eprintln!("{d}");
    }
    let pass = ranks
        .all_gather_u64(u64::from(differences.is_empty()))
        .iter()
        .all(|&p| p == 1);
    if ranks.rank() == 0 {
        println!(
            "halo staging of F(u): every device command on its queue, in order, waiting for \
             what it needs, on every rank {}",
            verdict(pass)
        );
    }
    Ok(pass)
}

/// The agreements on failure of each application, on every rank: `J(u)·v`
/// 3 (before the ghost update's messages, before the accumulate's, at the
/// end); `F(u)` at the same state 3 (its check of `u` for NaN, the
/// accumulate's two: the state's ghosts are current, no update), at a
/// state changed since (`u` rescaled by 1: the same values, a new
/// version) 4, and again at that state 3; `J(u)·v` again 3 (`v` is always
/// exchanged). The results at the same state agree to 1e-12 (relative: the
/// assembly may be atomic, whose order of additions varies).
pub(crate) fn agreements(
    op: &mut DistOperator<f64>,
    u: &mut DistVector<f64>,
    v: &DistVector<f64>,
    out: &mut DistVector<f64>,
) -> Result<bool> {
    let mesh = op.mesh().clone();
    let ranks = mesh.ranks();
    let mut counts = Vec::new();
    let mut results = Vec::new();
    let mut count = |op: &mut DistOperator<f64>, u: &DistVector<f64>, jv: bool| -> Result<()> {
        let before = ranks.agreements();
        if jv {
            op.jacobian_action(u, v, out)?;
        } else {
            op.apply(u, out)?;
        }
        counts.push(ranks.agreements() - before);
        results.push(out.local_to_host()?);
        Ok(())
    };
    count(op, u, true)?;
    count(op, u, false)?;
    u.scale(1.0)?;
    count(op, u, false)?;
    count(op, u, false)?;
    count(op, u, true)?;
    let expected = [3, 3, 4, 3, 3];
    let all = ranks.all_gather_f64s(&counts.iter().map(|&c| c as f64).collect::<Vec<_>>());
    let same = [(1, 2), (1, 3), (0, 4)]
        .iter()
        .all(|&(i, j)| crate::rel_diff(&results[j], &results[i]) <= 1e-12);
    let pass = ranks.all(same && counts.iter().zip(expected).all(|(&c, e)| c == e))
        && all
            .chunks(5)
            .all(|c| c.iter().zip(expected).all(|(&c, e)| c == e as f64));
    if ranks.rank() == 0 {
        println!(
            "agreements on failure per rank (J(u)v, F(u), F(u) after u changed, F(u), J(u)v): \
             {all:?} (expected {expected:?} on every rank), the same results (1e-12) at the same \
             state {}",
            verdict(pass)
        );
    }
    Ok(pass)
}

/// `--nan-rank k`: `F(u)` of nonlinear diffusion (`κ = 1 + u²`) with
/// `u = 1/2` but `10²⁰⁰` at an owned vertex of rank `k` that no other rank
/// holds (its global index printed): only rank `k`'s residual is not
/// finite, found by its check after the ghost update's messages. Returns
/// the error (every rank: rank `k`'s own, `RankFailed` elsewhere); `false`
/// if `F(u)` succeeded.
pub(crate) fn non_finite_on_rank(mesh: &Rc<DistMesh>, k: usize, backend: &Backend) -> Result<bool> {
    let layout = mesh.layout();
    let ranks = mesh.ranks();
    let mut values = vec![0.5; layout.n_local()];
    let mut vertex = u64::MAX;
    if layout.rank == k {
        let shared = |l: usize| {
            layout
                .neighbours
                .iter()
                .any(|n| n.shared_owned.contains(&(l as u32)))
        };
        if let Some(l) = (0..layout.n_owned).find(|&l| !shared(l)) {
            values[l] = 1e200;
            vertex = u64::from(layout.global_vertices[l]);
        }
    }
    let vertex = ranks
        .all_gather_u64(vertex)
        .get(k)
        .copied()
        .ok_or_else(|| Error::arg("--nan-rank", format!("there is no rank {k}")))?;
    if vertex == u64::MAX {
        return Err(Error::arg(
            "--nan-rank",
            format!("rank {k} owns no vertex that only it holds"),
        ));
    }
    if ranks.rank() == 0 {
        println!("u = 1e200 at vertex {vertex}, held by rank {k} alone");
    }
    let mut op = DistOperator::new(mesh, 1, 1, |s| Form::new(s, NonlinearDiffusion), backend)?;
    let mut u = op.vector()?;
    u.set_local_from_host(&values)?;
    let mut r = op.vector()?;
    op.apply(&u, &mut r)?;
    Ok(false)
}
