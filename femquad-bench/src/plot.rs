//! Figures in the manner of the paper's Figs. 5–6 and Table 2, as SVG
//! (plotters, SVG backend only; text is measured without font files, so
//! label widths are estimates).
//!
//! - `gflops.svg`: model GF/s per case, four panels (2D/3D × f32/f64), one
//!   bar per case and configuration source (`default`, `tuned`, …);
//! - `pct_copy.svg`: the same bars as a percentage of the copy bandwidth,
//!   with the targets (90 % for Poisson, 85 % for Lamé) drawn as lines;
//! - `sweep_<case>_<cells>.svg`: for sweep rows, a heat map of `% of copy`
//!   over `N_bl × N_cb` with GF/s written in each cell (invalid
//!   combinations grey).
//!
//! The figures show the element kernel (BK rows); rows of another mesh
//! numbering than `random` go to files with the numbering appended
//! (`gflops_renumbered.svg`, `sweep_<case>_<cells>_renumbered.svg`). BP
//! rows are reported in the table, CSV and JSON only (BENCHMARKS.md's
//! tables are made from those).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use femquad::Precision;

use crate::BenchError;
use crate::measure::Measure;
use crate::numbering::Numbering;
use crate::row::{Mode, Row, Status};
use crate::spec::{Coefficient, PhysicsKind};

const FONT: &str = "sans-serif";

/// Bar colours per series.
const SERIES_COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
];

/// A category axis: values `0, 1, …, n−1` at the centres of `n` equal
/// slots (the range is `−0.5 .. n−0.5`), with a key point (label) at each.
#[derive(Clone, Copy, Debug)]
struct Categories(usize);

impl Ranged for Categories {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value + 0.5) / self.0.max(1) as f64;
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        (0..self.0).map(|i| i as f64).collect()
    }

    fn range(&self) -> Range<f64> {
        -0.5..self.0 as f64 - 0.5
    }
}

/// Decimals that show about three significant digits of values up to `max`.
fn decimals(max: f64) -> usize {
    if !(max.is_finite() && max > 0.0) {
        return 0;
    }
    (2 - max.log10().floor() as i64).clamp(0, 3) as usize
}

fn plot_err<E: std::fmt::Display>(e: E) -> BenchError {
    BenchError::Plot(e.to_string())
}

/// Writes the figures of the BK rows of `rows` into `dir` (created if
/// needed), one set per mesh numbering, and returns the files written.
/// Rows that are not `ok` are left out of the bar charts.
///
/// # Errors
/// [`BenchError::Plot`] if there is no BK row to plot (naming how many
/// BP rows there were), or drawing fails.
pub fn plot_rows(rows: &[Row], dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
    let mut files = Vec::new();
    let bk = |r: &&Row| r.measure == Measure::Bk;
    let mut numberings: Vec<Numbering> = rows.iter().filter(bk).map(|r| r.numbering).collect();
    numberings.sort_unstable();
    numberings.dedup();
    for numbering in numberings {
        let suffix = match numbering {
            Numbering::Random => String::new(),
            n => format!("_{}", n.name()),
        };
        let of: Vec<&Row> = rows
            .iter()
            .filter(bk)
            .filter(|r| r.numbering == numbering)
            .collect();
        let bars: Vec<&Row> = of
            .iter()
            .copied()
            .filter(|r| r.mode != Mode::Sweep && r.status == Status::Ok && r.is_measured())
            .collect();
        if !bars.is_empty() {
            let f = dir.join(format!("gflops{suffix}.svg"));
            bar_figure(&bars, &f, Metric::Gflops)?;
            files.push(f);
            let f = dir.join(format!("pct_copy{suffix}.svg"));
            bar_figure(&bars, &f, Metric::PctCopy)?;
            files.push(f);
        }
        let mut sweeps: BTreeMap<(String, usize), Vec<&Row>> = BTreeMap::new();
        for r in of.iter().filter(|r| r.mode == Mode::Sweep) {
            sweeps.entry((r.case.clone(), r.cells)).or_default().push(r);
        }
        for ((case, cells), rs) in sweeps {
            let f = dir.join(format!("sweep_{}_{cells}{suffix}.svg", sanitize(&case)));
            sweep_figure(&rs, &f)?;
            files.push(f);
        }
    }
    if files.is_empty() {
        let bp = rows.iter().filter(|r| r.measure == Measure::Bp).count();
        return Err(BenchError::Plot(format!(
            "no measured BK rows to plot ({} rows, {bp} of them BP, which are not plotted)",
            rows.len()
        )));
    }
    Ok(files)
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Metric {
    Gflops,
    PctCopy,
}

/// Category of a row within a panel: sort key and label.
/// Poisson before Lamé, no coefficient before field before cell (the
/// enums' order).
fn category(r: &Row) -> ((usize, PhysicsKind, Coefficient), String) {
    let physics = match r.physics {
        PhysicsKind::Laplacian => "Poisson",
        PhysicsKind::Elasticity => "Lamé",
        PhysicsKind::Heat => "heat",
    };
    let coef = match r.coefficient {
        Coefficient::None => "",
        Coefficient::Field => " a(x)",
        Coefficient::Cell => " a_K",
    };
    (
        (r.order, r.physics, r.coefficient),
        format!("P{} {physics}{coef}", r.order),
    )
}

fn bar_figure(rows: &[&Row], path: &Path, metric: Metric) -> Result<(), BenchError> {
    let device = rows.first().map(|r| r.device.clone()).unwrap_or_default();
    let value = |r: &Row| match metric {
        Metric::Gflops => r.gflops.unwrap_or(0.0),
        Metric::PctCopy => r.pct_copy.unwrap_or(0.0),
    };

    let root = SVGBackend::new(path, (1400, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let title = match metric {
        Metric::Gflops => format!("Residual evaluation: model GF/s on {device}"),
        Metric::PctCopy => format!("Effective bandwidth as % of copy bandwidth on {device}"),
    };
    let root = root.titled(&title, (FONT, 24)).map_err(plot_err)?;
    let panels = root.split_evenly((2, 2));
    for (panel, (dim, prec)) in panels.iter().zip([
        (2, Precision::F32),
        (2, Precision::F64),
        (3, Precision::F32),
        (3, Precision::F64),
    ]) {
        let mine: Vec<&&Row> = rows
            .iter()
            .filter(|r| r.dim == dim && r.precision == prec)
            .collect();
        // One series per configuration source; per cell count too if the
        // panel holds several (e.g. 2^24 and 2^25 cells).
        let many_sizes = {
            let mut c: Vec<usize> = mine.iter().map(|r| r.cells).collect();
            c.sort_unstable();
            c.dedup();
            c.len() > 1
        };
        let series_of = |r: &Row| {
            if many_sizes {
                format!("{} ({} cells)", r.config_name(), r.cells)
            } else {
                r.config_name().to_string()
            }
        };
        let mut series: Vec<String> = mine.iter().map(|r| series_of(r)).collect();
        series.sort();
        series.dedup();
        // categories in order
        let mut cats: Vec<((usize, PhysicsKind, Coefficient), String)> =
            mine.iter().map(|r| category(r)).collect();
        cats.sort();
        cats.dedup();
        let n = cats.len().max(1);
        let ymax_data = mine.iter().map(|r| value(r)).fold(0.0f64, f64::max);
        // Head room above the tallest bar for the legend.
        let ymax = match metric {
            Metric::Gflops => (ymax_data * 1.35).max(1.0),
            Metric::PctCopy => (ymax_data * 1.3).max(130.0),
        };
        let caption = format!(
            "{dim}D, {}",
            if prec == Precision::F32 {
                "single precision"
            } else {
                "double precision"
            }
        );
        let mut chart = ChartBuilder::on(panel)
            .caption(&caption, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(Categories(n), 0f64..ymax)
            .map_err(plot_err)?;
        let labels: Vec<String> = cats.iter().map(|c| c.1.clone()).collect();
        let fmt = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&fmt)
            .y_label_formatter(&|v: &f64| format!("{v:.prec$}", prec = decimals(ymax)))
            .y_desc(match metric {
                Metric::Gflops => "GF/s (model flops / kernel time)",
                Metric::PctCopy => "% of copy bandwidth",
            })
            .label_style((FONT, 13))
            .draw()
            .map_err(plot_err)?;
        if mine.is_empty() {
            chart
                .draw_series(std::iter::once(Text::new(
                    "no data",
                    (0.0, ymax / 2.0),
                    (FONT, 16),
                )))
                .map_err(plot_err)?;
            continue;
        }
        if metric == Metric::PctCopy {
            for (level, color, label) in [
                (90.0, RED, "90 % (Poisson target)"),
                (85.0, RGBColor(230, 140, 0), "85 % (Lamé target)"),
            ] {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(-0.5, level), (n as f64 - 0.5, level)],
                        color.stroke_width(1),
                    )))
                    .map_err(plot_err)?
                    .label(label)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                    });
            }
        }
        let width = 0.8 / series.len().max(1) as f64;
        for (s_idx, s) in series.iter().enumerate() {
            let color = SERIES_COLORS[s_idx % SERIES_COLORS.len()];
            let mut bars = Vec::new();
            let mut texts = Vec::new();
            for (c_idx, c) in cats.iter().enumerate() {
                // the last row of this category and series
                if let Some(r) = mine
                    .iter()
                    .rev()
                    .find(|r| category(r) == *c && series_of(r) == *s)
                {
                    let v = value(r);
                    let x0 = c_idx as f64 - 0.4 + s_idx as f64 * width;
                    bars.push(Rectangle::new(
                        [(x0, 0.0), (x0 + width * 0.92, v)],
                        color.filled(),
                    ));
                    let label = match metric {
                        Metric::Gflops => format!("{v:.prec$}", prec = decimals(ymax_data)),
                        Metric::PctCopy => format!("{v:.0}%"),
                    };
                    texts.push((label, (x0 + width * 0.46, v)));
                }
            }
            chart
                .draw_series(bars)
                .map_err(plot_err)?
                .label(s.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 12, y + 6)], color.filled())
                });
            let style =
                TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
            chart
                .draw_series(
                    texts
                        .into_iter()
                        .map(|(t, p)| Text::new(t, p, style.clone())),
                )
                .map_err(plot_err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .label_font((FONT, 12))
            .draw()
            .map_err(plot_err)?;
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

/// Colour of a fraction in `[0, 1]`: from pale yellow to dark blue.
fn heat(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let stops = [
        (255.0, 255.0, 204.0),
        (161.0, 218.0, 180.0),
        (65.0, 182.0, 196.0),
        (44.0, 127.0, 184.0),
        (37.0, 52.0, 148.0),
    ];
    let x = t * (stops.len() - 1) as f64;
    let i = (x.floor() as usize).min(stops.len() - 2);
    let f = x - i as f64;
    let (a, b) = (stops[i], stops[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn sweep_figure(rows: &[&Row], path: &Path) -> Result<(), BenchError> {
    let mut n_bl: Vec<usize> = rows.iter().map(|r| r.n_bl).collect();
    let mut n_cb: Vec<usize> = rows.iter().map(|r| r.n_cb).collect();
    n_bl.sort_unstable();
    n_bl.dedup();
    n_cb.sort_unstable();
    n_cb.dedup();
    let first = rows[0];
    let (nx, ny) = (n_cb.len(), n_bl.len());
    let w = (240 + 110 * nx).max(900) as u32;
    let h = (200 + 42 * ny).max(420) as u32;
    let root = SVGBackend::new(path, (w, h)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let title = format!(
        "{} ({} cells) on {}: % of copy bandwidth, GF/s",
        first.case, first.cells, first.device
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(&title, (FONT, 16))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(110)
        .build_cartesian_2d(Categories(nx), Categories(ny))
        .map_err(plot_err)?;
    let xfmt = |x: &f64| {
        n_cb.get(x.round() as usize)
            .map_or(String::new(), |v| v.to_string())
    };
    let yfmt = |y: &f64| {
        let bl = n_bl.get(y.round() as usize).copied();
        bl.map_or(String::new(), |bl| {
            let n_t = rows.iter().find(|r| r.n_bl == bl).map_or(0, |r| r.n_t);
            format!("{bl} ({n_t})")
        })
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("N_cb (batches per chunk)")
        .y_desc("N_bl (N_t threads)")
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .label_style((FONT, 13))
        .draw()
        .map_err(plot_err)?;
    let best = rows
        .iter()
        .filter_map(|r| r.gflops)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut cells = Vec::new();
    let mut texts = Vec::new();
    let center = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    for (yi, &bl) in n_bl.iter().enumerate() {
        for (xi, &cb) in n_cb.iter().enumerate() {
            let (x, y) = (xi as f64, yi as f64);
            let r = rows.iter().rev().find(|r| r.n_bl == bl && r.n_cb == cb);
            let (color, line1, line2) = match r {
                Some(Row {
                    gflops: Some(g),
                    pct_copy: Some(p),
                    ..
                }) => (
                    heat(p / 100.0),
                    format!("{}{p:.0}%", if *g == best { "★ " } else { "" }),
                    format!("{g:.prec$} GF/s", prec = decimals(best)),
                ),
                Some(r) => (
                    RGBColor(200, 200, 200),
                    r.status.name().to_string(),
                    String::new(),
                ),
                None => (RGBColor(240, 240, 240), String::new(), String::new()),
            };
            cells.push(Rectangle::new(
                [(x - 0.48, y - 0.46), (x + 0.48, y + 0.46)],
                color.filled(),
            ));
            let dark = r.and_then(|r| r.pct_copy).is_some_and(|p| p > 55.0);
            let style = center.color(if dark { &WHITE } else { &BLACK });
            texts.push(Text::new(line1, (x, y + 0.14), style.clone()));
            texts.push(Text::new(line2, (x, y - 0.18), style));
        }
    }
    chart.draw_series(cells).map_err(plot_err)?;
    chart.draw_series(texts).map_err(plot_err)?;
    root.present().map_err(plot_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::ConfigSource;
    use crate::spec::CaseSpec;

    /// A row of `mode` for the case `(dim, precision, physics,
    /// coefficient)` with `(N_bl, N_cb)` and `pct` % of the copy bandwidth.
    fn row(
        mode: Mode,
        (dim, precision, physics, coefficient): (usize, Precision, PhysicsKind, Coefficient),
        (n_bl, n_cb): (usize, usize),
        pct: f64,
    ) -> Row {
        let spec = CaseSpec {
            dim,
            order: 1,
            physics,
            coefficient,
            precision,
            qdegree: 1,
        };
        let mut r = Row::new(&spec, mode, "Test GPU", "1.0");
        r.cells = 1000;
        (r.n_bl, r.n_cb, r.n_t) = (n_bl, n_cb, 3 * n_bl);
        r.config = Some(ConfigSource::Default);
        r.time_ms = Some(1.0);
        r.gflops = Some(pct * 3.0);
        r.pct_copy = Some(pct);
        r
    }

    #[test]
    fn figures_are_written() {
        use Coefficient::{Field, None};
        use PhysicsKind::{Elasticity, Laplacian};
        use Precision::{F32, F64};
        let dir = std::env::temp_dir().join(format!("femquad-plot-test-{}", std::process::id()));
        let mut tuned = row(Mode::Suite, (2, F32, Laplacian, None), (64, 2), 95.0);
        tuned.config = Some(ConfigSource::Tuned);
        let mut rows = vec![
            row(Mode::Suite, (2, F32, Laplacian, None), (32, 4), 93.0),
            row(Mode::Suite, (2, F32, Laplacian, Field), (32, 4), 91.0),
            row(Mode::Suite, (3, F64, Elasticity, None), (16, 4), 80.0),
            tuned,
        ];
        for bl in [16, 32] {
            for cb in [1, 4] {
                let pct = 70.0 + bl as f64 / 2.0 + cb as f64;
                rows.push(row(Mode::Sweep, (2, F32, Laplacian, None), (bl, cb), pct));
            }
        }
        let mut invalid = row(Mode::Sweep, (2, F32, Laplacian, None), (400, 4), 0.0);
        invalid.status = Status::Invalid;
        (invalid.time_ms, invalid.gflops, invalid.pct_copy) =
            (Option::None, Option::None, Option::None);
        rows.push(invalid);
        // BP rows are not plotted; BK rows of the renumbered mesh get files of their own
        let mut bp = rows[0].clone();
        bp.measure = Measure::Bp;
        rows.push(bp.clone());
        let mut renumbered = rows[0].clone();
        renumbered.numbering = Numbering::Renumbered;
        rows.push(renumbered);
        let files = plot_rows(&rows, &dir).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "gflops.svg",
                "pct_copy.svg",
                "sweep_2d-p1-laplacian-none-f32_1000.svg",
                "gflops_renumbered.svg",
                "pct_copy_renumbered.svg"
            ]
        );
        for f in &files {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(svg.contains("<svg"), "{}", f.display());
            assert!(svg.contains("Test GPU"));
        }
        let bars = std::fs::read_to_string(&files[0]).unwrap();
        assert!(bars.contains("P1 Poisson a(x)") && bars.contains("tuned"));
        let sweep = std::fs::read_to_string(&files[2]).unwrap();
        assert!(sweep.contains("invalid") && sweep.contains("GF/s"));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(plot_rows(&[], &dir).is_err());
        let e = plot_rows(&[bp], &dir).unwrap_err().to_string();
        assert!(e.contains("1 of them BP"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
