//! The printed results: one line per row as it is measured, and the
//! paper's Table 2 for a sweep.

use std::fmt::Write as _;

use crate::measure::AssemblyKind;
use crate::row::{Row, Status};

/// Header of the printed table.
pub fn table_header() -> String {
    format!(
        "{:<16} {:>3} {:>2} {:<10} {:<5} {:<4} {:>3} {:<4} {:<10} {:<6} {:<9} {:>10} {:>4} {:>4} {:>4} {:>5} {:>6} {:>8} {:>7} {:>8} {:>8} {:>8} {:>6} {:>5} {:>8} {:>7} {:>8} {:<7} {}",
        "device",
        "dim",
        "P",
        "physics",
        "coef",
        "prec",
        "N_q",
        "meas",
        "numbering",
        "asm",
        "geom",
        "cells_dev",
        "N_bs",
        "N_bl",
        "N_cb",
        "N_t",
        "lmem",
        "ms",
        "GDOF/s",
        "GF/s",
        "GB/s",
        "copyGB/s",
        "%copy",
        "beta",
        "pred_ms",
        "err%",
        "cg_ms",
        "config",
        "status"
    )
}

/// A number of the table, or `-` if not measured.
fn cell(v: Option<f64>, width: usize, decimals: usize) -> String {
    match v {
        Some(x) => format!("{x:>width$.decimals$}"),
        None => format!("{:>width$}", "-"),
    }
}

/// One printed line per row (columns as [`table_header`]); the geometry
/// the autotuner keeps (BP) is starred.
pub fn table_line(r: &Row) -> String {
    let dev: String = r.device.chars().take(16).collect();
    let facets = match (r.facet_share, r.facet_bytes_share) {
        (Some(t), Some(b)) => format!(
            "; {} facets: {:.1} % of time, {:.1} % of bytes",
            r.facets,
            100.0 * t,
            100.0 * b
        ),
        _ => String::new(),
    };
    let status = match (r.status, r.check_rel_diff) {
        (Status::Ok, Some(d)) => format!("ok (check {d:.1e}{facets})"),
        (Status::Ok, None) => "ok".to_string(),
        (s, _) => format!("{}: {}", s.name(), r.note),
    };
    let err_pct = r.model_error.map(|e| 100.0 * e);
    let assembly = match r.assembly {
        Some(AssemblyKind::Atomic) => "atomic",
        Some(AssemblyKind::Deterministic) => "determ",
        None => "-",
    };
    let pick = if r.geometry_pick == Some(true) {
        "*"
    } else {
        ""
    };
    let geometry = format!("{}{pick}", r.geometry.name());
    format!(
        "{:<16} {:>3} {:>2} {:<10} {:<5} {:<4} {:>3} {:<4} {:<10} {:<6} {:<9} {:>10} {:>4} {:>4} {:>4} {:>5} {:>6} {} {} {} {} {} {} {} {} {} {} {:<7} {status}",
        dev,
        r.dim,
        r.order,
        r.physics.name(),
        r.coefficient.name(),
        r.precision.name(),
        r.n_q,
        r.measure.name(),
        r.numbering.name(),
        assembly,
        geometry,
        r.cells_device,
        r.n_bs,
        r.n_bl,
        r.n_cb,
        r.n_t,
        r.local_mem_bytes,
        cell(r.time_ms, 8, 4),
        cell(r.gdof_per_s, 7, 2),
        cell(r.gflops, 8, 1),
        cell(r.gb_per_s, 8, 1),
        cell(r.copy_gb_per_s, 8, 1),
        cell(r.pct_copy, 6, 1),
        cell(r.beta, 5, 2),
        cell(r.predicted_ms, 8, 4),
        match err_pct {
            Some(e) => format!("{e:>+7.1}"),
            None => format!("{:>7}", "-"),
        },
        cell(r.cg_iteration_ms, 8, 4),
        r.config_name(),
    )
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
            "Sweep {} on {} ({} cells, {} numbering): GF/s (% of copy bandwidth); N_t = N_bl·N_bs, N_bs = {}",
            r.case,
            r.device,
            r.cells,
            r.numbering.name(),
            r.n_bs
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
        .filter_map(|r| r.gflops)
        .fold(f64::NEG_INFINITY, f64::max);
    let prec = if best > 0.0 && best.is_finite() {
        (2 - best.log10().floor() as i64).clamp(0, 3) as usize
    } else {
        0
    };
    for &bl in &n_bl {
        let n_t = rows.iter().find(|r| r.n_bl == bl).map_or(0, |r| r.n_t);
        let _ = write!(out, "{:>12} |", format!("{bl} ({n_t})"));
        for &cb in &n_cb {
            let entry = match rows.iter().find(|r| r.n_bl == bl && r.n_cb == cb) {
                Some(r) => match (r.gflops, r.pct_copy) {
                    (Some(g), Some(p)) => {
                        let star = if g == best { "*" } else { "" };
                        format!("{star}{g:.prec$} ({p:.0}%)")
                    }
                    _ => r.status.name().to_string(),
                },
                None => String::new(),
            };
            let _ = write!(out, " {entry:>14}");
        }
        out.push('\n');
    }
    out.push_str("(* fastest; invalid: exceeds the device's work-group or local-memory limit, or a chunk exceeds the mesh)\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::{ConfigSource, Mode};
    use crate::spec::suite_cases;

    #[test]
    fn lines_and_sweep_table() {
        let mut a = Row::new(&suite_cases()[0], Mode::Sweep, "GPU", "1");
        a.config = Some(ConfigSource::Sweep);
        (a.n_bl, a.n_cb, a.n_t) = (16, 2, 48);
        a.time_ms = Some(0.5);
        a.gflops = Some(100.0);
        a.pct_copy = Some(90.0);
        a.model_error = Some(0.012);
        a.check_rel_diff = Some(2e-7);
        let mut b = Row::new(&suite_cases()[0], Mode::Sweep, "GPU", "1");
        (b.n_bl, b.n_cb, b.n_t) = (4096, 2, 12288);
        b.status = Status::Invalid;
        b.note = "work-group size 12288 > 1024".into();
        let la = table_line(&a);
        assert!(
            la.contains("  0.5000") && la.contains("+1.2") && la.contains("ok (check 2.0e-7)"),
            "{la}"
        );
        let lb = table_line(&b);
        assert!(
            lb.contains("invalid: work-group size") && lb.contains(" - "),
            "{lb}"
        );
        assert_eq!(table_header().split_whitespace().count(), 29);
        let mut c = a.clone();
        c.measure = crate::measure::Measure::Bp;
        c.numbering = crate::numbering::Numbering::Renumbered;
        c.assembly = Some(AssemblyKind::Deterministic);
        c.geometry = crate::measure::GeometryKind::Computed;
        c.geometry_pick = Some(true);
        c.cg_iteration_ms = Some(1.25);
        let lc = table_line(&c);
        assert!(
            lc.contains(" bp   renumbered determ computed* ") && lc.contains("  1.2500 sweep"),
            "{lc}"
        );
        assert_eq!(lc.split_whitespace().count(), 31, "{lc}");
        let t = sweep_table(&[a, b]);
        assert!(t.contains("*100 (90%)") && t.contains("invalid"), "{t}");
    }
}
