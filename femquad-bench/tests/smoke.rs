//! Smoke test of the benchmark's logic on the default OpenCL device
//! (PoCL in CI) at a tiny size: the output fields, not the speed.
//!
//! Runs two cases (2D P1 Poisson in f64, 3D P1 Lamé in f32) and a 2×1
//! sweep with one configuration beyond the work-group limit, and checks
//! every row: present and finite, positive times and bandwidths, sizes
//! consistent with the kernel shape and the mesh, the model quantities
//! consistent with `LaunchModel`, the correctness check passed; the CSV
//! (header, one record per row, read back with `csv` + serde equal to the
//! rows) and the JSON (read with `serde_json`: an array of objects with
//! every field, equal to the rows, `null` where nothing was measured).
//! Then BK and BP together on the random and the renumbered mesh (2D P1
//! Poisson with a P1 coefficient in f64, 3D P1 Lamé in f32): every BP row
//! (both assemblies, both geometries, both numberings) checked, timed, with
//! its GDOF/s, bandwidth from the minimal bytes (recomputed here from the
//! mesh sizes) and CG iteration time; one geometry picked per numbering and
//! assembly.

use std::path::{Path, PathBuf};

use femquad::Precision;
use femquad::opencl::{KernelCase, KernelOptions, KernelShape, KernelVariant, LaunchConfig};
use femquad_bench::measure::{AssemblyKind, GeometryKind, Measure};
use femquad_bench::numbering::Numbering;
use femquad_bench::output::read_csv;
use femquad_bench::perf_model::LaunchModel;
use femquad_bench::row::{ConfigSource, Mode, Status};
use femquad_bench::spec::{Coefficient, check_tolerance};
use femquad_bench::{CaseSpec, Options, Row, run};

/// A fresh directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p =
            std::env::temp_dir().join(format!("femquad-bench-smoke-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Serializes the tests that open the device: concurrent first calls into the
/// OpenCL ICD loader / PoCL from two threads were seen to find no platform.
fn device_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn options(args: &[&str]) -> Options {
    let all = std::iter::once("femquad-bench").chain(args.iter().copied());
    Options::parse_from_args(all).unwrap_or_else(|e| panic!("bad options {args:?}: {e}"))
}

/// Common tiny-size options: few launches, small copy buffers, quiet.
const TINY: [&str; 10] = [
    "--reps",
    "3",
    "--warmup",
    "1",
    "--copy-mib",
    "8",
    "--check-cells",
    "300",
    "--seed",
    "5",
];

/// A measured number of a row: present, finite and positive.
fn positive(name: &str, v: Option<f64>) -> f64 {
    let v = v.unwrap_or_else(|| panic!("{name} not measured"));
    assert!(
        v.is_finite() && v > 0.0,
        "{name} = {v} must be finite and positive"
    );
    v
}

/// Checks one measured row against the shape and model of its case.
fn check_measured_row(row: &Row, spec: &CaseSpec, expected_cells: usize) {
    assert_eq!(row.status, Status::Ok, "{row:?}");
    assert_eq!(row.case, spec.name());
    assert!(!row.device.is_empty());
    assert_eq!((row.dim, row.order), (spec.dim, spec.order));
    assert_eq!(row.physics, spec.physics);
    assert_eq!(row.precision, spec.precision);
    assert_eq!(row.cells, expected_cells);
    assert_eq!(row.n_q, 1, "P1 default: one quadrature point");
    assert_eq!(row.n_b, spec.dim + 1);
    assert_eq!(row.n_comp, spec.n_comp());
    assert_eq!(row.n_bt, row.n_b * row.n_comp);

    let physics = spec.pointwise();
    let config = LaunchConfig::new(row.n_bl, row.n_cb).with_threads_per_cell(row.n_tc);
    let case = KernelCase {
        dim: spec.dim,
        n_b: row.n_b,
        n_comp: row.n_comp,
        n_q: row.n_q,
        aux: spec.aux(),
        physics: physics.info(),
        precision: spec.precision,
    };
    let shape = KernelShape::new(
        &case,
        KernelVariant::Element,
        config,
        &KernelOptions::default(),
    )
    .unwrap();
    assert_eq!(row.n_bs, shape.n_bs);
    assert_eq!(row.n_bs % row.n_bt, 0, "a block holds whole cells' dofs");
    assert_eq!(row.n_t, row.n_bl * row.n_bs);
    assert_eq!(row.chunk, row.n_cb * row.n_t);
    assert_eq!(row.local_mem_bytes, shape.local_mem_bytes());
    assert_eq!(row.cells_device, row.cells, "every cell runs on the device");
    assert_eq!(row.reps, 3);

    let time_ms = positive("time_ms", row.time_ms);
    let time_ms_min = positive("time_ms_min", row.time_ms_min);
    let time_ms_max = positive("time_ms_max", row.time_ms_max);
    let gflops = positive("gflops", row.gflops);
    let gb_per_s = positive("gb_per_s", row.gb_per_s);
    let copy_gb_per_s = positive("copy_gb_per_s", row.copy_gb_per_s);
    let pct_copy = positive("pct_copy", row.pct_copy);
    let beta = positive("beta", row.beta);
    let model_bytes = positive("model_bytes", row.model_bytes);
    let model_flops = positive("model_flops", row.model_flops);
    let predicted_ms = positive("predicted_ms", row.predicted_ms);
    let model_error = row.model_error.expect("model_error");
    assert!(model_error.is_finite());
    assert!(time_ms_min <= time_ms && time_ms <= time_ms_max);
    let model = LaunchModel::new(&shape, spec.aux(), physics.info(), row.cells_device);
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    assert!(rel(model_bytes, model.bytes) < 1e-12);
    assert!(rel(model_flops, model.flops) < 1e-12);
    assert!(rel(beta, model.beta()) < 1e-12);
    assert!(rel(gflops, model.flops / (time_ms * 1e-3) * 1e-9) < 1e-9);
    assert!(rel(gb_per_s, model.bytes / (time_ms * 1e-3) * 1e-9) < 1e-9);
    assert!(rel(pct_copy, 100.0 * gb_per_s / copy_gb_per_s) < 1e-9);
    assert!(rel(predicted_ms, model.bytes / (copy_gb_per_s * 1e9) * 1e3) < 1e-9);
    assert!((model_error - (time_ms / predicted_ms - 1.0)).abs() < 1e-9);

    let tol = if spec.precision == Precision::F32 {
        1e-5
    } else {
        1e-12
    };
    assert_eq!(check_tolerance(spec.precision), tol);
    assert_eq!(row.check_passed, Some(true), "correctness check: {row:?}");
    assert_eq!(row.check_tol, Some(tol));
    let rel_diff = row.check_rel_diff.expect("check_rel_diff");
    assert!(rel_diff <= tol && rel_diff.is_finite());
}

/// The CSV header: the row type's fields in order, the same columns as
/// before the move to serde (BENCHMARKS.md's raw files and
/// `scripts/gpu-bench.sh` look columns up by these names).
const HEADER: &str = "mode,measure,case,numbering,assembly,geometry,geometry_pick,device,driver,\
    dim,order,physics,coefficient,precision,qdegree,\
    n_q,cells,cells_device,dofs,n_b,n_comp,n_bt,n_tc,n_bs,n_bl,n_cb,n_t,chunk,config,local_mem_bytes,\
    prefetch,vector_loads,cell_parallel,status,note,reps,time_ms,time_ms_min,time_ms_max,gdof_per_s,gflops,gb_per_s,\
    copy_gb_per_s,pct_copy,beta,model_bytes,model_flops,predicted_ms,model_error,cg_iteration_ms,\
    cg_iterations,facets,facet_ms,facet_share,facet_bytes,facet_bytes_share,check_rel_diff,check_tol,\
    check_passed,build_info";

/// Checks the CSV and JSON files against the rows.
fn check_files(csv: &str, json: &str, rows: &[Row]) {
    // CSV: the header, one record per row, and the rows read back (with
    // the `csv` crate, as --from-csv reads them).
    let mut reader = csv::Reader::from_path(csv).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header.join(","), HEADER, "CSV header");
    assert_eq!(reader.records().count(), rows.len(), "one record per row");
    assert_eq!(read_csv(Path::new(csv)).unwrap(), rows, "CSV read back");

    // JSON: typed, equal to the rows (serde_json with float_roundtrip) …
    let text = std::fs::read_to_string(json).unwrap();
    let back: Vec<Row> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, rows, "JSON read back");
    // … and untyped: the CSV's columns are the keys, unmeasured values null.
    let items: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_str(&text).unwrap();
    assert_eq!(items.len(), rows.len());
    let mut columns: Vec<&str> = HEADER.split(',').collect();
    columns.sort_unstable();
    for (item, row) in items.iter().zip(rows) {
        let mut keys: Vec<&str> = item.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, columns);
        assert_eq!(item["case"], row.case.as_str());
        assert_eq!(item["device"], row.device.as_str());
        assert_eq!(item["precision"], row.precision.name());
        assert_eq!(item["cells_device"], row.cells_device);
        assert_eq!(item["n_t"], row.n_t);
        assert_eq!(item["measure"], row.measure.name());
        assert_eq!(item["numbering"], row.numbering.name());
        assert_eq!(item["geometry"], row.geometry.name());
        match row.assembly {
            Some(a) => assert_eq!(item["assembly"], a.name()),
            None => assert!(item["assembly"].is_null()),
        }
        if row.is_measured() {
            assert!(item["time_ms"].as_f64().is_some_and(|t| t > 0.0));
            assert!(item["copy_gb_per_s"].as_f64().is_some_and(|v| v > 0.0));
            assert_eq!(item["check_passed"], true);
        } else {
            assert!(item["time_ms"].is_null());
            assert!(item["gflops"].is_null());
        }
    }
}

#[test]
fn two_cases_with_csv_and_json() {
    let _lock = device_lock();
    let dir = TempDir::new("cases");
    for (args, cells) in [
        // 2·40² = 3200 triangles
        (
            [
                "--dim",
                "2",
                "--order",
                "1",
                "--physics",
                "laplacian",
                "--precision",
                "f64",
                "--refine",
                "40",
            ],
            3200,
        ),
        // 6·8³ = 3072 tetrahedra
        (
            [
                "--dim",
                "3",
                "--order",
                "1",
                "--physics",
                "elasticity",
                "--precision",
                "f32",
                "--refine",
                "8",
            ],
            3072,
        ),
    ] {
        let (csv, json) = (dir.file("rows.csv"), dir.file("rows.json"));
        let mut all: Vec<&str> = args.to_vec();
        all.extend(TINY);
        all.extend(["--quiet", "--csv", &csv, "--json", &json]);
        let opts = options(&all);
        let spec = opts.case().unwrap();
        let rows = run(&opts).unwrap();
        assert_eq!(rows.len(), 1);
        check_measured_row(&rows[0], &spec, cells);
        assert_eq!(rows[0].mode, Mode::Single);
        assert_eq!(rows[0].config, Some(ConfigSource::Default));
        check_files(&csv, &json, &rows);
        println!("{}", femquad_bench::table::table_line(&rows[0]));
    }
}

#[test]
fn sweep_reports_invalid_configurations_and_plots() {
    let _lock = device_lock();
    let dir = TempDir::new("sweep");
    let (csv, json, figs) = (
        dir.file("sweep.csv"),
        dir.file("sweep.json"),
        dir.file("figs"),
    );
    let mut all = vec![
        "--dim",
        "2",
        "--precision",
        "f32",
        "--refine",
        "40",
        "--sweep",
    ];
    // 100000 blocks of 3 cells = 300000 threads: beyond any work-group limit.
    all.extend(["--sweep-n-bl", "16,100000", "--sweep-n-cb", "2"]);
    all.extend(TINY);
    all.extend(["--quiet", "--csv", &csv, "--json", &json]);
    let opts = options(&all);
    let spec = opts.case().unwrap();
    let rows = run(&opts).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r.mode == Mode::Sweep && r.config == Some(ConfigSource::Sweep))
    );
    check_measured_row(&rows[0], &spec, 3200);
    assert_eq!((rows[0].n_bl, rows[0].n_cb, rows[0].n_t), (16, 2, 48));
    let bad = &rows[1];
    assert_eq!(bad.status, Status::Invalid);
    assert!(bad.note.contains("work-group size"), "{}", bad.note);
    assert_eq!(bad.n_t, 300_000);
    assert!(!bad.is_measured() && bad.check_passed.is_none());
    check_files(&csv, &json, &rows);

    // Figures from the CSV written above.
    let plot = options(&["--plot", &figs, "--from-csv", &csv]);
    let read = run(&plot).unwrap();
    assert_eq!(read, rows);
    let svg =
        std::fs::read_to_string(Path::new(&figs).join("sweep_2d-p1-laplacian-none-f32_3200.svg"))
            .unwrap();
    assert!(svg.contains("<svg") && svg.contains("invalid") && svg.contains("GF/s"));
}

/// Checks a BP row: checked against the host assembly, timed, its
/// quantities consistent with each other and with the minimal bytes of
/// `perf_model::ResidualModel` recomputed from the mesh sizes (`vertices`
/// vertices = P1 nodes, `cells` cells).
fn check_bp_row(row: &Row, spec: &CaseSpec, cells: usize, vertices: usize, cg_iterations: usize) {
    assert_eq!(row.measure, Measure::Bp);
    assert_eq!(row.status, Status::Ok, "{row:?}");
    assert_eq!(row.case, spec.name());
    assert!(row.assembly.is_some());
    assert_eq!((row.cells, row.cells_device), (cells, cells));
    assert_eq!(row.dofs, vertices * spec.n_comp());
    assert_eq!(row.config, Some(ConfigSource::Fixed));
    assert_eq!((row.n_bl, row.n_cb), (3, 2));
    assert_eq!(row.reps, 3);
    let time_ms = positive("time_ms", row.time_ms);
    assert!(positive("time_ms_min", row.time_ms_min) <= time_ms);
    assert!(time_ms <= positive("time_ms_max", row.time_ms_max));
    let gdof = positive("gdof_per_s", row.gdof_per_s);
    let gb = positive("gb_per_s", row.gb_per_s);
    let copy = positive("copy_gb_per_s", row.copy_gb_per_s);
    let pct = positive("pct_copy", row.pct_copy);
    let bytes = positive("model_bytes", row.model_bytes);
    let flops = positive("model_flops", row.model_flops);
    positive("gflops", row.gflops);
    positive("predicted_ms", row.predicted_ms);
    assert!(row.model_error.is_some_and(f64::is_finite));
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    assert!(rel(gdof, row.dofs as f64 / (time_ms * 1e-3) * 1e-9) < 1e-9);
    assert!(rel(gb, bytes / (time_ms * 1e-3) * 1e-9) < 1e-9);
    assert!(rel(pct, 100.0 * gb / copy) < 1e-9);
    assert!(rel(positive("beta", row.beta), flops / bytes) < 1e-12);
    // minimal bytes: u and F once, the cell → node map (u32) once, the
    // geometry once (J⁻¹ and det J per cell, or the vertex coordinates),
    // the aux field once (P1 nodal values)
    let s = spec.precision.size() as f64;
    let d = spec.dim as f64;
    let (c, v) = (cells as f64, vertices as f64);
    let geometry = match row.geometry {
        GeometryKind::Stored => s * (d * d + 1.0) * c,
        GeometryKind::Computed => s * d * v,
    };
    let aux = match spec.coefficient {
        Coefficient::Field => s * v,
        Coefficient::Cell => s * c,
        Coefficient::None => 0.0,
    };
    let expected = 2.0 * s * row.dofs as f64 + 4.0 * (d + 1.0) * c + geometry + aux;
    assert!(rel(bytes, expected) < 1e-12, "{bytes} vs {expected}");
    assert_eq!(row.check_passed, Some(true), "{row:?}");
    let tol = row.check_tol.expect("check_tol");
    let diff = row.check_rel_diff.expect("check_rel_diff");
    assert!(diff.is_finite() && diff <= tol);
    assert_eq!(row.cg_iterations, cg_iterations);
    let cg = positive("cg_iteration_ms", row.cg_iteration_ms);
    assert!(cg < 1e4, "one CG iteration of a tiny problem: {cg} ms");
    assert!(row.geometry_pick.is_some());
}

#[test]
fn bk_and_bp_on_random_and_renumbered_meshes() {
    let _lock = device_lock();
    let dir = TempDir::new("bp");
    // (2D P1 Poisson with a P1 coefficient, f64, n = 16) and (3D P1 Lamé,
    // f32, n = 4); a small fixed configuration: several work-groups and a
    // partial last chunk on these tiny meshes
    let cases: [(&[&str], usize, usize); 2] = [
        (
            &[
                "--dim",
                "2",
                "--coefficient",
                "field",
                "--precision",
                "f64",
                "--refine",
                "16",
            ],
            2 * 16 * 16,
            17 * 17,
        ),
        (
            &[
                "--dim",
                "3",
                "--physics",
                "elasticity",
                "--precision",
                "f32",
                "--refine",
                "4",
            ],
            6 * 4 * 4 * 4,
            5 * 5 * 5,
        ),
    ];
    for (args, cells, vertices) in cases {
        let (csv, json) = (dir.file("bp.csv"), dir.file("bp.json"));
        let mut all: Vec<&str> = args.to_vec();
        all.extend(TINY);
        all.extend(["--measure", "bk,bp", "--numbering", "random,renumbered"]);
        all.extend(["--n-bl", "3", "--n-cb", "2", "--cg-iterations", "4"]);
        all.extend(["--quiet", "--csv", &csv, "--json", &json]);
        let opts = options(&all);
        let spec = opts.case().unwrap();
        let rows = run(&opts).unwrap();
        // per numbering: one BK row, then BP for 2 assemblies × 2 geometries
        assert_eq!(rows.len(), 10);
        for numbering in [Numbering::Random, Numbering::Renumbered] {
            let of: Vec<&Row> = rows.iter().filter(|r| r.numbering == numbering).collect();
            assert_eq!(of.len(), 5, "{numbering:?}");
            assert_eq!(of[0].measure, Measure::Bk);
            assert_eq!(of[0].status, Status::Ok);
            assert_eq!(of[0].dofs, vertices * spec.n_comp());
            positive("BK gdof_per_s", of[0].gdof_per_s);
            assert!(of[0].assembly.is_none() && of[0].cg_iteration_ms.is_none());
            for assembly in [AssemblyKind::Atomic, AssemblyKind::Deterministic] {
                let bp: Vec<&&Row> = of.iter().filter(|r| r.assembly == Some(assembly)).collect();
                let geometries: Vec<GeometryKind> = bp.iter().map(|r| r.geometry).collect();
                assert_eq!(geometries, [GeometryKind::Stored, GeometryKind::Computed]);
                for r in &bp {
                    check_bp_row(r, &spec, cells, vertices, 4);
                }
                let picked = bp.iter().filter(|r| r.geometry_pick == Some(true)).count();
                assert_eq!(picked, 1, "one geometry picked per assembly");
                let fastest = bp
                    .iter()
                    .min_by(|a, b| a.time_ms.unwrap().total_cmp(&b.time_ms.unwrap()))
                    .unwrap();
                assert_eq!(fastest.geometry_pick, Some(true));
            }
        }
        check_files(&csv, &json, &rows);
    }
}
