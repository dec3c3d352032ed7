//! Check 7: parallel VTU. `F(u)` of nonlinear diffusion at a fixed `u`
//! written by [`write_pvtu`] (ASCII pieces), the serial `F(u)` written by
//! femquad's `Vtu` on rank 0; both read back: the pieces the `.pvtu` names
//! hold every cell of the mesh exactly once (their `cell` numbers), each
//! with the serial cell's vertex coordinates, and every point's value
//! equals the serial file's value at the same coordinates (relative max
//! difference ≤ 1e-12).

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use femquad::backend::Backend;
use femquad::mesh::Mesh;
use femquad::output::{Vtu, VtuFormat};
use femquad::physics::builtin::NonlinearDiffusion;
use femquad::prelude::*;
use femquad_mpi::output::write_pvtu;
use femquad_mpi::{DistMesh, DistOperator, DistVector};

use crate::{place, rel_diff, verdict};

/// Check 7 on every rank (rank 0 reads back, compares and prints).
pub fn check(
    dist: &Rc<DistMesh>,
    serial_mesh: Option<&Arc<Mesh>>,
    backend: &Backend,
) -> Result<bool> {
    let form = |s: FunctionSpace| Form::new(s, NonlinearDiffusion);
    let nv = dist.layout().n_global_vertices;
    let u: Vec<f64> = (0..nv).map(|i| (0.7 * i as f64).sin()).collect();
    let mut op = DistOperator::new(dist, 1, 1, form, backend)?;
    let du = place(DistVector::from_global(dist, 1, &u)?, backend)?;
    let mut f = op.vector()?;
    op.apply(&du, &mut f)?;
    // one directory for all ranks: rank 0's process id
    let mut id = vec![std::process::id()];
    dist.ranks().broadcast_u32s(&mut id);
    let dir = std::env::temp_dir().join(format!("femquad-mpi-pvtu-{}", id[0]));
    let made = std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
        path: dir.clone(),
        source,
    });
    dist.ranks().agree(made)?;
    let pvtu = write_pvtu(&dir, "f", &op, &[("F", &f)], VtuFormat::Ascii)?;
    // rank 0 reads back and compares; an error there ends every rank
    let compared =
        match serial_mesh {
            Some(mesh) => {
                let result = compare(&pvtu, &dir, mesh, &u);
                let removed = std::fs::remove_dir_all(&dir).map_err(|source| Error::Io {
                    path: dir.clone(),
                    source,
                });
                result.and_then(|r| removed.map(|()| r)).map(|(pieces, once, matching, err)| {
                let pass = once && matching && err <= 1e-12;
                println!(
                    "parallel VTU: {pieces} pieces, every cell once {once}, cells' vertices \
                     match {matching}, point values' relative difference to the serial file \
                     {err:.3e} {}",
                    verdict(pass)
                );
                pass
            })
            }
            None => Ok(true),
        };
    dist.ranks().agree(compared)
}

/// Reads the `.pvtu`'s pieces and the serial file back: (pieces, every cell
/// once, cells' coordinates match, relative difference of the values).
fn compare(
    pvtu: &Path,
    dir: &Path,
    mesh: &Arc<Mesh>,
    u: &[f64],
) -> Result<(usize, bool, bool, f64)> {
    // the serial file
    let dim = mesh.dim();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1)?, 1)?;
    let mut sop = Operator::new(
        Form::new(space.clone(), NonlinearDiffusion)?,
        &Backend::native(),
    )?;
    let mut sf = sop.vector()?;
    sop.apply(&sop.vector_from(u)?, &mut sf)?;
    let mut vtu = Vtu::new(&space)?;
    vtu.add_point_field("F", 1, &sf.to_host()?)?;
    let serial_path = dir.join("serial.vtu");
    vtu.write(&serial_path, VtuFormat::Ascii)?;
    let serial = read(&serial_path)?;
    let serial_points = array(&serial, "Points")?;
    let serial_f = array(&serial, "F")?;
    let key = |x: &[f64]| -> Vec<u64> { x.iter().map(|c| c.to_bits()).collect() };
    let at: HashMap<Vec<u64>, usize> = serial_points
        .chunks_exact(3)
        .enumerate()
        .map(|(i, x)| (key(x), i))
        .collect();
    // the pieces
    let text = read(pvtu)?;
    let sources: Vec<&str> = text
        .split("<Piece Source=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    let mut seen = vec![0usize; mesh.n_cells()];
    let mut cells_match = true;
    let (mut piece_f, mut serial_at) = (Vec::new(), Vec::new());
    for source in &sources {
        let piece = read(&dir.join(source))?;
        let points = array(&piece, "Points")?;
        let f = array(&piece, "F")?;
        let cells = array(&piece, "cell")?;
        let connectivity = array(&piece, "connectivity")?;
        let k = dim + 1;
        for (c, nodes) in cells.iter().zip(connectivity.chunks_exact(k)) {
            let c = *c as usize;
            match seen.get_mut(c) {
                Some(s) => *s += 1,
                None => cells_match = false,
            }
            let serial_cell = mesh.cell(c.min(mesh.n_cells() - 1));
            for (&n, &v) in nodes.iter().zip(serial_cell) {
                let x = &points[n as usize * 3..n as usize * 3 + 3];
                let y = &serial_points[v as usize * 3..v as usize * 3 + 3];
                cells_match &= key(x) == key(y);
            }
        }
        for (x, &value) in points.chunks_exact(3).zip(&f) {
            let i = at
                .get(&key(x))
                .ok_or_else(|| Error::arg("pieces", format!("no serial point at {x:?}")))?;
            piece_f.push(value);
            serial_at.push(serial_f[*i]);
        }
    }
    let cells_once = seen.iter().all(|&s| s == 1);
    Ok((
        sources.len(),
        cells_once,
        cells_match,
        rel_diff(&piece_f, &serial_at),
    ))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The numbers of the ASCII `DataArray` named `name`.
fn array(text: &str, name: &str) -> Result<Vec<f64>> {
    let missing = || Error::arg("pieces", format!("no DataArray `{name}` in a VTU file"));
    let start = text.find(&format!("Name=\"{name}\"")).ok_or_else(missing)?;
    let body = &text[start..];
    let open = body.find('>').ok_or_else(missing)? + 1;
    let close = body.find("</DataArray>").ok_or_else(missing)?;
    body[open..close]
        .split_whitespace()
        .map(|s| {
            s.parse::<f64>().map_err(|_| {
                Error::arg(
                    "pieces",
                    format!("`{s}` in DataArray `{name}` is not a number"),
                )
            })
        })
        .collect()
}
