//! Rows to and from files: CSV with the `csv` crate, JSON with
//! `serde_json`, both through [`Row`]'s serde implementation (the CSV
//! header and the JSON keys are its field names, in order).

use std::path::Path;

use crate::BenchError;
use crate::row::Row;

/// The rows as CSV text: a header of the field names and one record per row
/// (no header when there are no rows: the header comes from the first row).
pub fn to_csv(rows: &[Row]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    // The writer only writes what serde gives it: strings of UTF-8.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The rows as a JSON array of objects, one object per line.
pub fn to_json(rows: &[Row]) -> Result<String, serde_json::Error> {
    let mut out = String::from("[\n");
    for (k, r) in rows.iter().enumerate() {
        out.push_str("  ");
        out.push_str(&serde_json::to_string(r)?);
        if k + 1 < rows.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str("]\n");
    Ok(out)
}

/// Writes the rows as CSV to `path`, creating its directory.
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<(), BenchError> {
    let text = to_csv(rows).map_err(|e| BenchError::csv(path, e))?;
    write_file(path, &text)
}

/// Writes the rows as JSON to `path`, creating its directory.
pub fn write_json(path: &Path, rows: &[Row]) -> Result<(), BenchError> {
    let text = to_json(rows).map_err(|source| BenchError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    write_file(path, &text)
}

/// Writes `text` to `path`, creating its directory.
pub fn write_file(path: &Path, text: &str) -> Result<(), BenchError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    }
    std::fs::write(path, text).map_err(|e| BenchError::io(path, e))
}

/// Reads the rows of a CSV file written by `--csv` (columns by their
/// header names). Errors name the file, the record and line (from the
/// `csv` crate) and the column of a value that does not fit; a file
/// without rows is an error.
pub fn read_csv(path: &Path) -> Result<Vec<Row>, BenchError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| BenchError::csv(path, e))?;
    let header = reader
        .headers()
        .map_err(|e| BenchError::csv(path, e))?
        .clone();
    let rows = reader
        .deserialize()
        .collect::<Result<Vec<Row>, csv::Error>>()
        .map_err(|e| {
            let column = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => err
                    .field()
                    .and_then(|i| header.get(i as usize))
                    .map(String::from),
                _ => None,
            };
            BenchError::Csv {
                path: path.to_path_buf(),
                column,
                source: e,
            }
        })?;
    if rows.is_empty() {
        return Err(BenchError::Usage(format!(
            "{}: no rows (not a CSV written by --csv?)",
            path.display()
        )));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{AssemblyKind, GeometryKind, Measure};
    use crate::numbering::Numbering;
    use crate::row::{ConfigSource, Mode, Status};
    use crate::spec::suite_cases;

    fn row() -> Row {
        let mut r = Row::new(&suite_cases()[0], Mode::Single, "Dev, \"quoted\"", "1.0");
        r.n_bl = 32;
        r.config = Some(ConfigSource::Default);
        r.time_ms = Some(0.25);
        r.gflops = Some(123.456789);
        r.pct_copy = Some(91.5);
        r.check_rel_diff = Some(1.5e-16);
        r.check_tol = Some(1e-12);
        r.check_passed = Some(true);
        r.build_info = "ptxas: 40 registers;\n0 spills".into();
        r
    }

    /// A BP row: the columns BK leaves empty are set.
    fn bp() -> Row {
        let mut r = row();
        r.measure = Measure::Bp;
        r.numbering = Numbering::Renumbered;
        r.assembly = Some(AssemblyKind::Deterministic);
        r.geometry = GeometryKind::Computed;
        r.geometry_pick = Some(false);
        r.dofs = 1681;
        r.gdof_per_s = Some(3.5);
        r.cg_iteration_ms = Some(0.75);
        r.cg_iterations = 20;
        r
    }

    fn unmeasured() -> Row {
        let mut r = row();
        r.time_ms = None;
        r.gflops = None;
        r.pct_copy = None;
        r.check_rel_diff = None;
        r.check_tol = None;
        r.check_passed = None;
        r.status = Status::Invalid;
        r.note = "a,b".into();
        r.config = None;
        r
    }

    #[test]
    fn csv_round_trip() {
        let rows = vec![row(), unmeasured(), bp()];
        let text = to_csv(&rows).unwrap();
        let header = text.lines().next().unwrap();
        assert!(header.starts_with(
            "mode,measure,case,numbering,assembly,geometry,geometry_pick,device,driver,dim,order,physics,"
        ));
        assert!(header.ends_with(
            ",model_error,cg_iteration_ms,cg_iterations,facets,facet_ms,facet_share,facet_bytes,facet_bytes_share,check_rel_diff,check_tol,check_passed,build_info"
        ));
        assert_eq!(header.split(',').count(), 60);
        // BK rows leave the BP columns empty; a BP row names them.
        assert!(
            text.contains("single,bk,2d-p1-laplacian-none-f32,random,,stored,,"),
            "{text}"
        );
        assert!(
            text.contains(
                "single,bp,2d-p1-laplacian-none-f32,renumbered,deterministic,computed,false,"
            ),
            "{text}"
        );
        let back: Vec<Row> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, rows);
        // Unmeasured numbers and a missing configuration are empty fields.
        assert!(text.contains("invalid,\"a,b\",0,,,,"), "{text}");
    }

    #[test]
    fn json_round_trip() {
        let rows = vec![row(), unmeasured(), bp()];
        let text = to_json(&rows).unwrap();
        assert!(text.starts_with(
            "[\n  {\"mode\":\"single\",\"measure\":\"bk\",\"case\":\"2d-p1-laplacian-none-f32\""
        ));
        assert_eq!(text.lines().count(), 5, "one object per line");
        let back: Vec<Row> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, rows);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v[1]["gflops"], serde_json::Value::Null);
        assert_eq!(v[1]["config"], serde_json::Value::Null);
        assert_eq!(v[0]["precision"], "f32");
        assert_eq!(v[0]["check_passed"], true);
        assert_eq!(v[0]["assembly"], serde_json::Value::Null);
        assert_eq!(v[2]["assembly"], "deterministic");
        assert_eq!(v[2]["geometry_pick"], false);
        assert_eq!(v[2]["cg_iteration_ms"], 0.75);
        assert_eq!(to_json(&[]).unwrap(), "[\n]\n");
    }

    #[test]
    fn reads_the_committed_h200_results() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks/h200-2026-11-22");
        let rows = read_csv(&dir.join("suite.csv")).unwrap();
        assert_eq!(rows.len(), 24);
        assert!(
            rows.iter()
                .all(|r| r.status == Status::Ok && r.is_measured())
        );
        // written before the BP columns: BK rows on the random mesh
        assert!(rows.iter().all(|r| r.measure == Measure::Bk
            && r.numbering == Numbering::Random
            && r.assembly.is_none()
            && r.geometry == GeometryKind::Stored
            && r.gdof_per_s.is_none()
            && r.cg_iterations == 0));
        let sweep = read_csv(&dir.join("sweep-3d.csv")).unwrap();
        assert!(
            sweep
                .iter()
                .any(|r| r.status == Status::Invalid && !r.is_measured())
        );
    }

    #[test]
    fn bad_csv_names_file_line_and_field() {
        let dir = std::env::temp_dir().join(format!("femquad-bench-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.csv");
        let mut text = to_csv(&[row()]).unwrap();
        text = text.replacen(",2,1,laplacian,", ",two,1,laplacian,", 1);
        std::fs::write(&f, &text).unwrap();
        let e = read_csv(&f).unwrap_err().to_string();
        assert!(e.contains("bad.csv") && e.contains("line: 2"), "{e}");
        assert!(e.contains("column `dim`"), "{e}");
        std::fs::write(&f, "").unwrap();
        let e = read_csv(&f).unwrap_err().to_string();
        assert!(e.contains("no rows"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
