//! Rows of benchmark results: the printed table, CSV and JSON (written by
//! hand), and reading the CSV back for figures.
//!
//! # Fields
//! CSV columns and JSON keys are the same, in this order ([`COLUMNS`]):
//!
//! | field | meaning |
//! |---|---|
//! | `mode` | `single`, `suite` or `sweep` |
//! | `case` | case name, e.g. `2d-p1-laplacian-field-f32` |
//! | `device`, `driver` | OpenCL device name and driver version |
//! | `dim`, `order` | dimension, Lagrange order |
//! | `physics`, `coefficient`, `precision` | `laplacian`/`elasticity`, `none`/`field`/`cell`, `f32`/`f64` |
//! | `qdegree`, `n_q` | quadrature degree and points |
//! | `cells` | cells of the mesh |
//! | `cells_device` | cells in full chunks, integrated by the kernel (the rest natively) |
//! | `n_b`, `n_comp`, `n_bt` | basis functions, components, element dofs |
//! | `n_tc`, `n_bs`, `n_bl`, `n_cb`, `n_t`, `chunk` | threads per cell, cells per block, blocks per batch, batches per chunk, threads per work-group, cells per work-group |
//! | `config` | where `(N_bl, N_cb)` came from: `default`, `fixed`, `tuned`, `cached`, `sweep` |
//! | `local_mem_bytes` | local memory per work-group |
//! | `prefetch`, `vector_loads` | kernel switches (`FEMQUAD_PREFETCH`, `FEMQUAD_VECTOR_LOADS`) |
//! | `status` | `ok`, `invalid` (exceeds a device limit or the mesh), `check-failed`, `error` |
//! | `note` | the reason for a status other than `ok` |
//! | `build_info` | the OpenCL compiler's resource report of the kernel (NVIDIA: registers, stack frame, spills) |
//! | `reps` | timed launches |
//! | `time_ms`, `time_ms_min`, `time_ms_max` | kernel time: median, min, max (profiling events) |
//! | `gflops` | model flops / median time, 10⁹/s |
//! | `gb_per_s` | model bytes / median time, 10⁹ B/s (effective bandwidth) |
//! | `copy_gb_per_s` | copy-kernel bandwidth on the same device, same process |
//! | `pct_copy` | `100 · gb_per_s / copy_gb_per_s` |
//! | `beta` | model flops / model bytes |
//! | `model_bytes`, `model_flops` | per launch, for `cells_device` cells |
//! | `predicted_ms` | model bytes / copy bandwidth |
//! | `model_error` | measured / predicted − 1 |
//! | `check_rel_diff`, `check_tol` | max-norm relative difference to the native integrator on the checked cells, and the tolerance |
//! | `check_passed` | `true`/`false` (empty when not checked) |
//!
//! Unmeasured numbers are empty in CSV and `null` in JSON.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use super::BenchError;

/// One measured (or rejected) configuration of one case.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// `single`, `suite` or `sweep`.
    pub mode: String,
    /// Case name.
    pub case: String,
    /// Device name.
    pub device: String,
    /// Driver version.
    pub driver: String,
    /// Dimension.
    pub dim: usize,
    /// Lagrange order.
    pub order: usize,
    /// `laplacian` or `elasticity`.
    pub physics: String,
    /// `none`, `field` or `cell`.
    pub coefficient: String,
    /// `f32` or `f64`.
    pub precision: String,
    /// Quadrature degree.
    pub qdegree: usize,
    /// Quadrature points.
    pub n_q: usize,
    /// Cells of the mesh.
    pub cells: usize,
    /// Cells integrated on the device.
    pub cells_device: usize,
    /// Basis functions.
    pub n_b: usize,
    /// Components.
    pub n_comp: usize,
    /// Element dofs.
    pub n_bt: usize,
    /// Threads per cell.
    pub n_tc: usize,
    /// Cells per block.
    pub n_bs: usize,
    /// Blocks per batch.
    pub n_bl: usize,
    /// Batches per chunk.
    pub n_cb: usize,
    /// Threads per work-group.
    pub n_t: usize,
    /// Cells per chunk.
    pub chunk: usize,
    /// Origin of the configuration.
    pub config: String,
    /// Local memory per work-group, bytes.
    pub local_mem_bytes: usize,
    /// Register prefetch of the next batch (kernel switch), if known.
    pub prefetch: Option<bool>,
    /// 16-byte vector loads (kernel switch), if known.
    pub vector_loads: Option<bool>,
    /// `ok`, `invalid`, `check-failed`, `error`.
    pub status: String,
    /// Reason for a status other than `ok`.
    pub note: String,
    /// The compiler's resource report (NVIDIA: registers, spills), if any.
    pub build_info: String,
    /// Timed launches.
    pub reps: usize,
    /// Measurements (`None` unless the kernel was timed).
    pub m: Option<Measured>,
    /// Correctness check (`None` unless checked).
    pub check: Option<Check>,
}

/// Timings and model quantities of a row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    /// Median kernel time, ms.
    pub time_ms: f64,
    /// Fastest launch, ms.
    pub time_ms_min: f64,
    /// Slowest launch, ms.
    pub time_ms_max: f64,
    /// Model flop rate, GF/s.
    pub gflops: f64,
    /// Effective bandwidth, GB/s.
    pub gb_per_s: f64,
    /// Copy bandwidth, GB/s.
    pub copy_gb_per_s: f64,
    /// Percent of copy bandwidth.
    pub pct_copy: f64,
    /// Algorithmic balance, flop/byte.
    pub beta: f64,
    /// Model bytes of the launch.
    pub model_bytes: f64,
    /// Model flops of the launch.
    pub model_flops: f64,
    /// Predicted time, ms.
    pub predicted_ms: f64,
    /// Measured / predicted − 1.
    pub model_error: f64,
}

/// Result of the comparison with the native integrator.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Check {
    /// Max-norm relative difference.
    pub rel_diff: f64,
    /// Tolerance.
    pub tol: f64,
    /// `rel_diff <= tol` and everything finite.
    pub passed: bool,
}

/// Column names of CSV and keys of JSON, in order.
pub const COLUMNS: [&str; 45] = [
    "mode",
    "case",
    "device",
    "driver",
    "dim",
    "order",
    "physics",
    "coefficient",
    "precision",
    "qdegree",
    "n_q",
    "cells",
    "cells_device",
    "n_b",
    "n_comp",
    "n_bt",
    "n_tc",
    "n_bs",
    "n_bl",
    "n_cb",
    "n_t",
    "chunk",
    "config",
    "local_mem_bytes",
    "prefetch",
    "vector_loads",
    "status",
    "note",
    "reps",
    "time_ms",
    "time_ms_min",
    "time_ms_max",
    "gflops",
    "gb_per_s",
    "copy_gb_per_s",
    "pct_copy",
    "beta",
    "model_bytes",
    "model_flops",
    "predicted_ms",
    "model_error",
    "check_rel_diff",
    "check_tol",
    "check_passed",
    "build_info",
];

/// A field value: text, integer, real or boolean; `None` when missing.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text.
    Text(String),
    /// Integer.
    Int(usize),
    /// Real number.
    Num(f64),
    /// Boolean.
    Bool(bool),
}

fn num(v: f64) -> Option<Value> {
    v.is_finite().then_some(Value::Num(v))
}

impl Row {
    /// The values in [`COLUMNS`] order.
    pub fn values(&self) -> Vec<Option<Value>> {
        let t = |s: &str| Some(Value::Text(s.to_string()));
        let i = |n: usize| Some(Value::Int(n));
        let m = self.m;
        let mf = |f: fn(&Measured) -> f64| m.as_ref().and_then(|m| num(f(m)));
        vec![
            t(&self.mode),
            t(&self.case),
            t(&self.device),
            t(&self.driver),
            i(self.dim),
            i(self.order),
            t(&self.physics),
            t(&self.coefficient),
            t(&self.precision),
            i(self.qdegree),
            i(self.n_q),
            i(self.cells),
            i(self.cells_device),
            i(self.n_b),
            i(self.n_comp),
            i(self.n_bt),
            i(self.n_tc),
            i(self.n_bs),
            i(self.n_bl),
            i(self.n_cb),
            i(self.n_t),
            i(self.chunk),
            t(&self.config),
            i(self.local_mem_bytes),
            self.prefetch.map(Value::Bool),
            self.vector_loads.map(Value::Bool),
            t(&self.status),
            t(&self.note),
            i(self.reps),
            mf(|m| m.time_ms),
            mf(|m| m.time_ms_min),
            mf(|m| m.time_ms_max),
            mf(|m| m.gflops),
            mf(|m| m.gb_per_s),
            mf(|m| m.copy_gb_per_s),
            mf(|m| m.pct_copy),
            mf(|m| m.beta),
            mf(|m| m.model_bytes),
            mf(|m| m.model_flops),
            mf(|m| m.predicted_ms),
            mf(|m| m.model_error),
            self.check.and_then(|c| num(c.rel_diff)),
            self.check.and_then(|c| num(c.tol)),
            self.check.map(|c| Value::Bool(c.passed)),
            t(&self.build_info),
        ]
    }

    /// Rebuilds a row from named text fields (a CSV record). Missing or
    /// empty numbers become 0 / `None`.
    pub fn from_fields(f: &HashMap<String, String>) -> Result<Row, String> {
        let s = |k: &str| f.get(k).cloned().unwrap_or_default();
        let u = |k: &str| -> Result<usize, String> {
            match f.get(k).map(|v| v.trim()) {
                None | Some("") => Ok(0),
                Some(v) => v
                    .parse()
                    .map_err(|_| format!("field `{k}` = `{v}` is not an integer")),
            }
        };
        let x = |k: &str| -> Result<Option<f64>, String> {
            match f.get(k).map(|v| v.trim()) {
                None | Some("") => Ok(None),
                Some(v) => v
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("field `{k}` = `{v}` is not a number")),
            }
        };
        let b = |k: &str| match f.get(k).map(|v| v.trim()) {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        };
        let m = match x("time_ms")? {
            None => None,
            Some(time_ms) => Some(Measured {
                time_ms,
                time_ms_min: x("time_ms_min")?.unwrap_or(f64::NAN),
                time_ms_max: x("time_ms_max")?.unwrap_or(f64::NAN),
                gflops: x("gflops")?.unwrap_or(f64::NAN),
                gb_per_s: x("gb_per_s")?.unwrap_or(f64::NAN),
                copy_gb_per_s: x("copy_gb_per_s")?.unwrap_or(f64::NAN),
                pct_copy: x("pct_copy")?.unwrap_or(f64::NAN),
                beta: x("beta")?.unwrap_or(f64::NAN),
                model_bytes: x("model_bytes")?.unwrap_or(f64::NAN),
                model_flops: x("model_flops")?.unwrap_or(f64::NAN),
                predicted_ms: x("predicted_ms")?.unwrap_or(f64::NAN),
                model_error: x("model_error")?.unwrap_or(f64::NAN),
            }),
        };
        let check = match s("check_passed").trim() {
            "" => None,
            p => Some(Check {
                rel_diff: x("check_rel_diff")?.unwrap_or(f64::NAN),
                tol: x("check_tol")?.unwrap_or(f64::NAN),
                passed: p == "true",
            }),
        };
        Ok(Row {
            mode: s("mode"),
            case: s("case"),
            device: s("device"),
            driver: s("driver"),
            dim: u("dim")?,
            order: u("order")?,
            physics: s("physics"),
            coefficient: s("coefficient"),
            precision: s("precision"),
            qdegree: u("qdegree")?,
            n_q: u("n_q")?,
            cells: u("cells")?,
            cells_device: u("cells_device")?,
            n_b: u("n_b")?,
            n_comp: u("n_comp")?,
            n_bt: u("n_bt")?,
            n_tc: u("n_tc")?.max(1),
            n_bs: u("n_bs")?,
            n_bl: u("n_bl")?,
            n_cb: u("n_cb")?,
            n_t: u("n_t")?,
            chunk: u("chunk")?,
            config: s("config"),
            local_mem_bytes: u("local_mem_bytes")?,
            prefetch: b("prefetch"),
            vector_loads: b("vector_loads"),
            status: s("status"),
            note: s("note"),
            build_info: s("build_info"),
            reps: u("reps")?,
            m,
            check,
        })
    }
}

/// A number as CSV/JSON text: integers exactly, reals with up to 6
/// significant digits (no exponent unless needed).
fn fmt_num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 1e-4 && v.abs() < 1e15 {
        let digits = (5 - v.abs().log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.digits$}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{v:e}")
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The rows as CSV text: a header of [`COLUMNS`] and one line per row.
pub fn to_csv(rows: &[Row]) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for r in rows {
        let line: Vec<String> = r
            .values()
            .into_iter()
            .map(|v| match v {
                None => String::new(),
                Some(Value::Text(s)) => csv_field(&s),
                Some(Value::Int(n)) => n.to_string(),
                Some(Value::Num(x)) => fmt_num(x),
                Some(Value::Bool(b)) => b.to_string(),
            })
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The rows as a JSON array of objects with the keys [`COLUMNS`].
pub fn to_json(rows: &[Row]) -> String {
    let mut out = String::from("[\n");
    for (k, r) in rows.iter().enumerate() {
        out.push_str("  {");
        for (i, (name, v)) in COLUMNS.iter().zip(r.values()).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&json_string(name));
            out.push_str(": ");
            match v {
                None => out.push_str("null"),
                Some(Value::Text(s)) => out.push_str(&json_string(&s)),
                Some(Value::Int(n)) => out.push_str(&n.to_string()),
                Some(Value::Num(x)) => out.push_str(&fmt_num(x)),
                Some(Value::Bool(b)) => out.push_str(if b { "true" } else { "false" }),
            }
        }
        out.push('}');
        if k + 1 < rows.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str("]\n");
    out
}

/// Writes `text` to `path`, creating its directory.
pub fn write_file(path: &Path, text: &str) -> Result<(), BenchError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    }
    std::fs::write(path, text).map_err(|e| BenchError::io(path, e))
}

/// Splits CSV text into records (RFC 4180 quoting).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                c => field.push(c),
            }
        } else {
            match c {
                '"' => quoted = true,
                ',' => record.push(std::mem::take(&mut field)),
                '\r' => {}
                '\n' => {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                    any = false;
                }
                c => field.push(c),
            }
        }
    }
    if any {
        record.push(field);
        records.push(record);
    }
    records.retain(|r| !(r.len() == 1 && r[0].is_empty()));
    records
}

/// Reads rows from a CSV file written by [`to_csv`].
pub fn read_csv(path: &Path) -> Result<Vec<Row>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, e))?;
    let records = parse_csv(&text);
    let Some((header, body)) = records.split_first() else {
        return Err(BenchError::Csv {
            path: path.to_path_buf(),
            line: 1,
            reason: "empty file".into(),
        });
    };
    if !header.iter().any(|h| h == "case") {
        return Err(BenchError::Csv {
            path: path.to_path_buf(),
            line: 1,
            reason: "no `case` column: not a benchmark CSV".into(),
        });
    }
    body.iter()
        .enumerate()
        .map(|(k, rec)| {
            if rec.len() != header.len() {
                return Err(BenchError::Csv {
                    path: path.to_path_buf(),
                    line: k + 2,
                    reason: format!("{} fields, header has {}", rec.len(), header.len()),
                });
            }
            let fields: HashMap<String, String> =
                header.iter().cloned().zip(rec.iter().cloned()).collect();
            Row::from_fields(&fields).map_err(|reason| BenchError::Csv {
                path: path.to_path_buf(),
                line: k + 2,
                reason,
            })
        })
        .collect()
}

/// Header of the printed table.
pub fn table_header() -> String {
    format!(
        "{:<16} {:>3} {:>2} {:<10} {:<5} {:<4} {:>3} {:>10} {:>4} {:>4} {:>4} {:>5} {:>6} {:>8} {:>8} {:>8} {:>8} {:>6} {:>5} {:>8} {:>7} {:<7} {}",
        "device",
        "dim",
        "P",
        "physics",
        "coef",
        "prec",
        "N_q",
        "cells_dev",
        "N_bs",
        "N_bl",
        "N_cb",
        "N_t",
        "lmem",
        "ms",
        "GF/s",
        "GB/s",
        "copyGB/s",
        "%copy",
        "beta",
        "pred_ms",
        "err%",
        "config",
        "status"
    )
}

/// One printed line per row (columns as [`table_header`]).
pub fn table_line(r: &Row) -> String {
    let dev: String = r.device.chars().take(16).collect();
    let head = format!(
        "{:<16} {:>3} {:>2} {:<10} {:<5} {:<4} {:>3} {:>10} {:>4} {:>4} {:>4} {:>5} {:>6}",
        dev,
        r.dim,
        r.order,
        r.physics,
        r.coefficient,
        r.precision,
        r.n_q,
        r.cells_device,
        r.n_bs,
        r.n_bl,
        r.n_cb,
        r.n_t,
        r.local_mem_bytes
    );
    let status = if r.status == "ok" {
        match r.check {
            Some(c) => format!("ok (check {:.1e})", c.rel_diff),
            None => "ok".to_string(),
        }
    } else {
        format!("{}: {}", r.status, r.note)
    };
    match &r.m {
        Some(m) => format!(
            "{head} {:>8.4} {:>8.1} {:>8.1} {:>8.1} {:>6.1} {:>5.2} {:>8.4} {:>+7.1} {:<7} {status}",
            m.time_ms,
            m.gflops,
            m.gb_per_s,
            m.copy_gb_per_s,
            m.pct_copy,
            m.beta,
            m.predicted_ms,
            100.0 * m.model_error,
            r.config
        ),
        None => format!(
            "{head} {:>8} {:>8} {:>8} {:>8} {:>6} {:>5} {:>8} {:>7} {:<7} {status}",
            "-", "-", "-", "-", "-", "-", "-", "-", r.config
        ),
    }
}

/// The paper's Table 2 for sweep rows of one case: rows `N_bl` (with
/// `N_t`), columns `N_cb`, entries `GF/s (% of copy)`.
pub fn sweep_table(rows: &[Row]) -> String {
    let mut n_bl: Vec<usize> = rows.iter().map(|r| r.n_bl).collect();
    let mut n_cb: Vec<usize> = rows.iter().map(|r| r.n_cb).collect();
    n_bl.sort_unstable();
    n_bl.dedup();
    n_cb.sort_unstable();
    n_cb.dedup();
    let mut out = String::new();
    if let Some(r) = rows.first() {
        let _ = writeln!(
            out,
            "Sweep {} on {} ({} cells): GF/s (% of copy bandwidth); N_t = N_bl·N_bs, N_bs = {}",
            r.case, r.device, r.cells, r.n_bs
        );
    }
    let _ = write!(out, "{:>12} |", "N_bl (N_t)");
    for c in &n_cb {
        let _ = write!(out, " {:>14}", format!("N_cb={c}"));
    }
    out.push('\n');
    let _ = writeln!(out, "{}", "-".repeat(14 + 15 * n_cb.len()));
    let best = rows
        .iter()
        .filter_map(|r| r.m.map(|m| m.gflops))
        .fold(f64::NEG_INFINITY, f64::max);
    for &bl in &n_bl {
        let n_t = rows.iter().find(|r| r.n_bl == bl).map_or(0, |r| r.n_t);
        let _ = write!(out, "{:>12} |", format!("{bl} ({n_t})"));
        for &cb in &n_cb {
            let cell = match rows.iter().find(|r| r.n_bl == bl && r.n_cb == cb) {
                Some(Row { m: Some(m), .. }) => {
                    let star = if m.gflops == best { "*" } else { "" };
                    let prec = if best > 0.0 && best.is_finite() {
                        (2 - best.log10().floor() as i64).clamp(0, 3) as usize
                    } else {
                        0
                    };
                    format!("{star}{:.prec$} ({:.0}%)", m.gflops, m.pct_copy)
                }
                Some(r) if r.status == "invalid" => "invalid".to_string(),
                Some(r) => r.status.clone(),
                None => "".to_string(),
            };
            let _ = write!(out, " {cell:>14}");
        }
        out.push('\n');
    }
    out.push_str("(* fastest; invalid: exceeds the device's work-group or local-memory limit, or a chunk exceeds the mesh)\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        Row {
            mode: "single".into(),
            case: "2d-p1-laplacian-none-f32".into(),
            device: "Dev, \"quoted\"".into(),
            status: "ok".into(),
            dim: 2,
            n_bl: 32,
            m: Some(Measured {
                time_ms: 0.25,
                gflops: 123.456789,
                pct_copy: 91.5,
                ..Measured::default()
            }),
            check: Some(Check {
                rel_diff: 1.5e-16,
                tol: 1e-12,
                passed: true,
            }),
            ..Row::default()
        }
    }

    #[test]
    fn csv_round_trip() {
        let rows = vec![
            row(),
            Row {
                m: None,
                check: None,
                status: "invalid".into(),
                note: "a,b".into(),
                ..row()
            },
        ];
        let text = to_csv(&rows);
        let recs = parse_csv(&text);
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].len(), COLUMNS.len());
        assert_eq!(recs[1][2], "Dev, \"quoted\"");
        let header = &recs[0];
        let f: HashMap<String, String> = header
            .iter()
            .cloned()
            .zip(recs[1].iter().cloned())
            .collect();
        let back = Row::from_fields(&f).unwrap();
        assert_eq!(back.device, rows[0].device);
        assert_eq!(back.n_bl, 32);
        let m = back.m.unwrap();
        assert!((m.gflops - 123.457).abs() < 1e-9, "{}", m.gflops);
        assert!(back.check.unwrap().passed);
        let f2: HashMap<String, String> = header
            .iter()
            .cloned()
            .zip(recs[2].iter().cloned())
            .collect();
        let back2 = Row::from_fields(&f2).unwrap();
        assert!(back2.m.is_none() && back2.check.is_none());
        assert_eq!(back2.note, "a,b");
    }

    #[test]
    fn json_shape() {
        let j = to_json(&[row()]);
        assert!(j.starts_with("[\n  {\"mode\": \"single\""));
        assert!(j.contains("\"device\": \"Dev, \\\"quoted\\\"\""));
        assert!(j.contains("\"time_ms_min\": 0"));
        assert!(j.contains("\"check_passed\": true"));
        assert!(
            j.trim_end().ends_with("}\n]")
                || j.trim_end().ends_with('}')
                || j.trim_end().ends_with(']')
        );
        let none = to_json(&[Row {
            m: None,
            check: None,
            ..row()
        }]);
        assert!(none.contains("\"gflops\": null"));
        assert_eq!(to_json(&[]), "[\n]\n");
    }

    #[test]
    fn numbers() {
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(123.456789), "123.457");
        assert_eq!(fmt_num(1.5e-16), "1.5e-16");
        assert_eq!(fmt_num(-0.0123456), "-0.0123456");
    }
}
