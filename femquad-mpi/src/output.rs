//! Parallel VTU output: a `.pvtu` file naming one `.vtu` piece per rank,
//! each piece written by its rank with femquad's [`Vtu`] writer
//! ([`write_pvtu`]); and a time series of them ([`PvtuSeries`]: a `.pvd`
//! collection listing the `.pvtu` of each recorded step).
//!
//! # Pieces
//! Rank `r` writes `{name}_{r}.vtu` next to `{name}.pvtu`: its **own cells**
//! (each cell of the mesh is in exactly one piece) over its local vertices
//! (owned and ghosts, so a vertex on a partition boundary appears in every
//! piece that has a cell at it, with the same value: ghosts are updated
//! before writing). Point fields are [`DistVector`]s; two cell fields are
//! added to every piece: `cell`, the global (serial) cell number, and
//! `rank`, the rank that wrote it (to see the partition). A rank without
//! cells writes no piece and the `.pvtu` does not name it.
//!
//! # The `.pvtu`
//! Written by rank 0: a `PUnstructuredGrid` (`GhostLevel="0"`) declaring
//! the pieces' arrays (`PPointData`, `PCellData`, `PPoints`, with the
//! pieces' types and component counts) and one `<Piece Source="…"/>` per
//! rank with cells, in rank order, by file name (relative to the `.pvtu`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mpi::datatype::Equivalence;

use femquad::output::pvd::{check_name, write_collection};
use femquad::output::{Vtu, VtuFormat};
use femquad::{Error, Real, Result};

use crate::comm::Ranks;

use crate::operator::DistOperator;
use crate::vector::DistVector;

/// Collective: writes `{dir}/{name}.pvtu` and this rank's piece
/// `{dir}/{name}_{rank}.vtu` of the fields `fields` (name, vector on `op`'s
/// mesh) over `op`'s cells (see the [module documentation](self)); returns
/// the `.pvtu`'s path (on every rank).
///
/// # Errors
/// On every rank: [`Error::InvalidArgument`] naming `fields` for a vector
/// on another mesh than `op`'s or a repeated or reserved name (`cell`,
/// `rank`); [`Error::Io`] naming a file that cannot be written; those of
/// femquad's [`Vtu`] (a non-finite value).
pub fn write_pvtu<R: Real + Equivalence>(
    dir: &Path,
    name: &str,
    op: &DistOperator<R>,
    fields: &[(&str, &DistVector<R>)],
    format: VtuFormat,
) -> Result<PathBuf> {
    let mesh = op.mesh();
    let ranks = mesh.ranks();
    let layout = mesh.layout();
    let checked = fields.iter().try_for_each(|(field, v)| {
        if !std::rc::Rc::ptr_eq(v.mesh(), mesh) {
            return Err(Error::arg(
                "fields",
                format!("`{field}` is distributed over another DistMesh than the operator"),
            ));
        }
        if ["cell", "rank"].contains(field) {
            return Err(Error::arg(
                "fields",
                format!("`{field}` is the name of a cell field every piece holds: rename it"),
            ));
        }
        Ok(())
    });
    ranks.agree(checked)?;
    // ghosts current: a vertex has its owner's value in every piece
    let mut values = Vec::with_capacity(fields.len());
    for (_, v) in fields {
        let mut current = v.try_clone()?;
        current.ghost_update()?;
        values.push(ranks.agree(current.local_to_host())?);
    }
    let piece = |r: usize| format!("{name}_{r}.vtu");
    let written = (|| {
        let Some(space) = op.space() else {
            return Ok(());
        };
        let mut vtu = Vtu::new(space)?;
        for ((field, v), host) in fields.iter().zip(&values) {
            let host: Vec<f64> = host.iter().map(|x| x.to_f64()).collect();
            vtu.add_point_field(field, v.per_node(), &host)?;
        }
        let cells: Vec<f64> = layout.cells.iter().map(|&c| c as f64).collect();
        vtu.add_cell_field("cell", 1, &cells)?;
        vtu.add_cell_field("rank", 1, &vec![layout.rank as f64; cells.len()])?;
        vtu.write(dir.join(piece(layout.rank)), format)
    })();
    ranks.agree(written)?;
    let with_cells = ranks.all_gather_u64(layout.cells.len() as u64);
    let path = dir.join(format!("{name}.pvtu"));
    if layout.rank == 0 {
        let mut text = String::new();
        let result = write_header(&mut text, fields, &with_cells, &piece)
            .map_err(|_| Error::internal("formatting the .pvtu text failed"))
            .and_then(|()| {
                std::fs::write(&path, text).map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })
            });
        ranks.agree(result)?;
    } else {
        ranks.agree(Ok(()))?;
    }
    Ok(path)
}

/// A ParaView time series over the ranks, of one field: for each recorded
/// step `{name}_{step:06}.pvtu` with its pieces ([`write_pvtu`], the field
/// named `name`), and on rank 0 the collection `{name}.pvd` listing every
/// recorded `.pvtu` with its time (open it in ParaView for the animation),
/// rewritten at each record so that it is complete on disk after each.
/// [`PvtuSeries::record`] writes every `every`-th step given to it,
/// [`PvtuSeries::record_always`] any step. The output series of a
/// [`DistProblem`](crate::DistProblem) (femquad's
/// `TimeIntegrator::with_output`), as femquad's
/// [`TimeSeries`](femquad::output::TimeSeries) is a serial problem's.
#[derive(Debug)]
pub struct PvtuSeries {
    dir: PathBuf,
    name: String,
    every: usize,
    format: VtuFormat,
    /// `(time, .pvtu file name)` of each record.
    records: Vec<(f64, String)>,
}

impl PvtuSeries {
    /// Collective: a series of the field `name` written into `dir`
    /// (created by every rank if missing) every `every` steps, in base64
    /// VTU ([`VtuFormat::default`]).
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `every` if it is 0,
    /// `name` if it is not a plain file name (letters, digits, `_`, `-`);
    /// [`Error::Io`] if a rank cannot create `dir`.
    pub fn new(ranks: &Ranks, dir: impl AsRef<Path>, name: &str, every: usize) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        let made = (|| {
            if every == 0 {
                return Err(Error::arg("every", "must be at least 1 (1: every step)"));
            }
            check_name(name)?;
            std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
                path: dir.clone(),
                source,
            })
        })();
        ranks.agree(made)?;
        Ok(PvtuSeries {
            dir,
            name: name.to_string(),
            every,
            format: VtuFormat::default(),
            records: Vec::new(),
        })
    }

    /// The same series written in `format`.
    pub fn with_format(mut self, format: VtuFormat) -> Self {
        self.format = format;
        self
    }

    /// Collective: writes `u` (on `op`'s mesh) as step `step` at time `t`
    /// if `step` is a multiple of `every`; returns whether it wrote.
    ///
    /// # Errors
    /// Those of [`PvtuSeries::record_always`].
    pub fn record<R: Real + Equivalence>(
        &mut self,
        op: &DistOperator<R>,
        step: usize,
        t: f64,
        u: &DistVector<R>,
    ) -> Result<bool> {
        if !step.is_multiple_of(self.every) {
            return Ok(false);
        }
        self.record_always(op, step, t, u)?;
        Ok(true)
    }

    /// Collective: writes `u` as step `step` at time `t`
    /// (`{name}_{step:06}.pvtu` and its pieces) and rewrites the `.pvd` on
    /// rank 0.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `t` if it is not
    /// after the last recorded time (ParaView orders by time; every rank
    /// records the same times); those of [`write_pvtu`]; [`Error::Io`] if
    /// rank 0 cannot write the `.pvd`.
    pub fn record_always<R: Real + Equivalence>(
        &mut self,
        op: &DistOperator<R>,
        step: usize,
        t: f64,
        u: &DistVector<R>,
    ) -> Result<()> {
        if let Some(&(last, _)) = self.records.last()
            && (t.is_nan() || t <= last)
        {
            return Err(Error::arg(
                "t",
                format!("{t} is not after the last recorded time {last}"),
            ));
        }
        let stem = format!("{}_{step:06}", self.name);
        write_pvtu(&self.dir, &stem, op, &[(&self.name, u)], self.format)?;
        self.records.push((t, format!("{stem}.pvtu")));
        let written = if op.mesh().layout().rank == 0 {
            write_collection(&self.pvd_path(), &self.records)
        } else {
            Ok(())
        };
        op.mesh().ranks().agree(written)
    }

    /// The recorded times.
    pub fn times(&self) -> Vec<f64> {
        self.records.iter().map(|(t, _)| *t).collect()
    }

    /// The path of the `.pvd` collection (written by rank 0).
    pub fn pvd_path(&self) -> PathBuf {
        self.dir.join(format!("{}.pvd", self.name))
    }
}

/// The `.pvtu` text: the arrays' declarations and the pieces of the ranks
/// with cells.
fn write_header<R: Real + Equivalence>(
    text: &mut String,
    fields: &[(&str, &DistVector<R>)],
    with_cells: &[u64],
    piece: &dyn Fn(usize) -> String,
) -> std::fmt::Result {
    let array = |text: &mut String, name: &str, n_comp: usize| {
        // femquad's Vtu pads two components to three
        let n_comp = if n_comp == 2 { 3 } else { n_comp };
        writeln!(
            text,
            r#"      <PDataArray type="Float64" Name="{}" NumberOfComponents="{n_comp}"/>"#,
            escape(name)
        )
    };
    writeln!(text, r#"<?xml version="1.0"?>"#)?;
    writeln!(
        text,
        r#"<VTKFile type="PUnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#
    )?;
    writeln!(text, r#"  <PUnstructuredGrid GhostLevel="0">"#)?;
    writeln!(text, "    <PPointData>")?;
    for (name, v) in fields {
        array(text, name, v.per_node())?;
    }
    writeln!(text, "    </PPointData>")?;
    writeln!(text, "    <PCellData>")?;
    array(text, "cell", 1)?;
    array(text, "rank", 1)?;
    writeln!(text, "    </PCellData>")?;
    writeln!(text, "    <PPoints>")?;
    array(text, "Points", 3)?;
    writeln!(text, "    </PPoints>")?;
    for (r, &n) in with_cells.iter().enumerate() {
        if n > 0 {
            writeln!(text, r#"    <Piece Source="{}"/>"#, escape(&piece(r)))?;
        }
    }
    writeln!(text, "  </PUnstructuredGrid>")?;
    writeln!(text, "</VTKFile>")
}

/// `s` with XML's special characters escaped.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
