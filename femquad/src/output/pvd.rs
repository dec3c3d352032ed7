//! ParaView time series: a `.pvd` collection of `.vtu` files, one per
//! recorded time ([`TimeSeries`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::vtu::{Vtu, VtuFormat};
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// A ParaView time series of one field: `NAME_000012.vtu` files in a
/// directory and the collection `NAME.pvd` that lists them with their
/// times (open the `.pvd` in ParaView for the animation).
///
/// [`TimeSeries::record`] writes every `every`-th step given to it (and
/// [`TimeSeries::record_always`] any step, e.g. the last), and rewrites the
/// `.pvd` each time, so the collection on disk is complete after each
/// record.
///
/// ```
/// use femquad::output::TimeSeries;
/// use femquad::prelude::*;
/// # fn main() -> femquad::Result<()> {
/// let mesh = unit_square(2, &MeshOptions::default())?;
/// let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1)?, 1)?;
/// let dir = std::env::temp_dir().join("femquad_doc_series");
/// let mut series = TimeSeries::new(&dir, "u", &space, 2)?;
/// for step in 0..5 {
///     let u = space.interpolate(|x, u| u[0] = x[0] * step as f64);
///     series.record(step, 0.1 * step as f64, &u)?;
/// }
/// assert_eq!(series.times(), &[0.0, 0.2, 0.4]); // steps 0, 2, 4
/// assert!(dir.join("u.pvd").exists() && dir.join("u_000004.vtu").exists());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TimeSeries {
    dir: PathBuf,
    name: String,
    space: FunctionSpace,
    every: usize,
    format: VtuFormat,
    /// `(time, file name)` of each record.
    records: Vec<(f64, String)>,
}

impl TimeSeries {
    /// A series of the field `name` on `space`, written into `dir`
    /// (created if missing) every `every` steps, in base64 VTU ([`VtuFormat::default`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `every` if it is 0, `name` if it
    /// is empty or not a plain file name (letters, digits, `_`, `-`);
    /// [`Error::Io`] if `dir` cannot be created; those of [`Vtu::new`].
    pub fn new(
        dir: impl AsRef<Path>,
        name: &str,
        space: &FunctionSpace,
        every: usize,
    ) -> Result<Self> {
        if every == 0 {
            return Err(Error::arg(
                "every",
                "must be at least 1 (1: every step)".to_string(),
            ));
        }
        check_name(name)?;
        Vtu::new(space)?;
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(TimeSeries {
            dir,
            name: name.to_string(),
            space: space.clone(),
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

    /// Writes `values` (the field's dofs, `f64`) as step `step` at time
    /// `t` if `step` is a multiple of `every`; returns whether it wrote.
    ///
    /// # Errors
    /// Those of [`TimeSeries::record_always`].
    pub fn record(&mut self, step: usize, t: f64, values: &[f64]) -> Result<bool> {
        if !step.is_multiple_of(self.every) {
            return Ok(false);
        }
        self.record_always(step, t, values)?;
        Ok(true)
    }

    /// Writes `values` as step `step` at time `t` (`NAME_{step:06}.vtu`)
    /// and rewrites the `.pvd`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `t` if it is not after the last
    /// recorded time (ParaView orders by time); those of
    /// [`Vtu::add_point_field`] (a wrong length, NaN) and [`Vtu::write`].
    pub fn record_always(&mut self, step: usize, t: f64, values: &[f64]) -> Result<()> {
        if let Some(&(last, _)) = self.records.last()
            && (t.is_nan() || t <= last)
        {
            return Err(Error::arg(
                "t",
                format!("{t} is not after the last recorded time {last}"),
            ));
        }
        let file = format!("{}_{step:06}.vtu", self.name);
        let mut vtu = Vtu::new(&self.space)?;
        vtu.add_point_field(&self.name, self.space.n_comp(), values)?;
        vtu.write(self.dir.join(&file), self.format)?;
        self.records.push((t, file));
        self.write_pvd()
    }

    /// The recorded times.
    pub fn times(&self) -> Vec<f64> {
        self.records.iter().map(|(t, _)| *t).collect()
    }

    /// The path of the `.pvd` collection.
    pub fn pvd_path(&self) -> PathBuf {
        self.dir.join(format!("{}.pvd", self.name))
    }

    fn write_pvd(&self) -> Result<()> {
        write_collection(&self.pvd_path(), &self.records)
    }
}

/// Checks that `name`, a series' name, is a plain file name (letters,
/// digits, `_`, `-`; not empty): its files are `NAME.pvd` and
/// `NAME_000012.…`.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `name`.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(Error::arg(
            "name",
            format!("{name:?} is not a plain file name (letters, digits, `_`, `-`)"),
        ));
    }
    Ok(())
}

/// Writes the ParaView collection (`.pvd`) at `path` listing `records`:
/// `(time, file name relative to the collection)`, in order — the
/// collection of [`TimeSeries`], and of femquad-mpi's series of `.pvtu`
/// files.
///
/// # Errors
/// [`Error::Io`] naming `path` if it cannot be written.
pub fn write_collection(path: &Path, records: &[(f64, String)]) -> Result<()> {
    let mut xml = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n",
    );
    for (t, file) in records {
        // `{:e}` keeps every digit of the time (ParaView parses it).
        let _ = writeln!(
            xml,
            "    <DataSet timestep=\"{t:e}\" group=\"\" part=\"0\" file=\"{file}\"/>"
        );
    }
    xml.push_str("  </Collection>\n</VTKFile>\n");
    std::fs::write(path, xml).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::mesh::generate::{MeshOptions, unit_square};

    #[test]
    fn the_collection_lists_every_record_with_its_time_and_refuses_bad_input() {
        let mesh = unit_square(1, &MeshOptions::default()).unwrap();
        let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let dir = std::env::temp_dir().join(format!("femquad_pvd_{}", std::process::id()));
        let mut s = TimeSeries::new(&dir, "heat", &space, 3).unwrap();
        let u = vec![1.0; space.n_dofs()];
        for step in 0..7 {
            s.record(step, 0.5 * step as f64, &u).unwrap();
        }
        assert_eq!(s.times(), vec![0.0, 1.5, 3.0]);
        let pvd = std::fs::read_to_string(s.pvd_path()).unwrap();
        assert_eq!(pvd.matches("<DataSet").count(), 3, "{pvd}");
        assert!(
            pvd.contains("timestep=\"1.5e0\" group=\"\" part=\"0\" file=\"heat_000003.vtu\""),
            "{pvd}"
        );
        assert!(dir.join("heat_000006.vtu").exists());
        let e = s.record_always(7, 3.0, &u).unwrap_err().to_string();
        assert!(e.contains("3 is not after the last recorded time 3"), "{e}");
        let e = TimeSeries::new(&dir, "heat", &space, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("every") && e.contains("at least 1"), "{e}");
        let e = TimeSeries::new(&dir, "a/b", &space, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a plain file name"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
