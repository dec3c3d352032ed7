//! Smoke test of the benchmark program's logic on the default OpenCL device
//! (PoCL in CI) at a tiny size: the output fields, not the speed.
//!
//! Runs two cases (2D P1 Poisson in f64, 3D P1 Lamé in f32) and a 2×1
//! sweep with one configuration beyond the work-group limit, and checks
//! every row: present and finite, positive times and bandwidths, sizes
//! consistent with the kernel shape and the mesh, the model quantities
//! consistent with `LaunchModel`, the correctness check passed; the CSV
//! (header, row count, read back) and the JSON (parsed by a small
//! hand-written parser here: an array of objects with every field).

use std::path::{Path, PathBuf};

use femquad::opencl::{KernelShape, LaunchConfig};
use femquad::perf_model::LaunchModel;
use femquad_examples::bench::report::{COLUMNS, Row, read_csv};
use femquad_examples::bench::{CaseSpec, Options, run};

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
    let all = std::iter::once("benchmark").chain(args.iter().copied());
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

fn finite_positive(name: &str, v: f64) {
    assert!(
        v.is_finite() && v > 0.0,
        "{name} = {v} must be finite and positive"
    );
}

/// Checks one measured row against the shape and model of its case.
fn check_measured_row(row: &Row, spec: &CaseSpec, expected_cells: usize) {
    assert_eq!(row.status, "ok", "{row:?}");
    assert_eq!(row.case, spec.name());
    assert!(!row.device.is_empty());
    assert_eq!((row.dim, row.order), (spec.dim, spec.order));
    assert_eq!(row.physics, spec.physics.name());
    assert_eq!(row.precision, spec.precision.name());
    assert_eq!(row.cells, expected_cells);
    assert_eq!(row.n_q, 1, "P1 default: one quadrature point");
    assert_eq!(row.n_b, spec.dim + 1);
    assert_eq!(row.n_comp, spec.n_comp());
    assert_eq!(row.n_bt, row.n_b * row.n_comp);

    let physics = spec.pointwise();
    let real_size = if spec.precision.name() == "f32" { 4 } else { 8 };
    let config = LaunchConfig::new(row.n_bl, row.n_cb).with_threads_per_cell(row.n_tc);
    let shape = KernelShape::new(
        spec.dim,
        row.n_b,
        row.n_comp,
        row.n_q,
        spec.aux(),
        physics.info(),
        real_size,
        config,
    )
    .unwrap();
    assert_eq!(row.n_bs, shape.n_bs);
    assert_eq!(row.n_bs % row.n_bt, 0, "a block holds whole cells' dofs");
    assert_eq!(row.n_t, row.n_bl * row.n_bs);
    assert_eq!(row.chunk, row.n_cb * row.n_t);
    assert_eq!(row.local_mem_bytes, shape.local_mem_bytes());
    assert_eq!(row.cells_device, (row.cells / row.chunk) * row.chunk);
    assert!(row.cells_device > 0 && row.cells_device <= row.cells);
    assert_eq!(row.reps, 3);

    let m = row.m.expect("measured");
    for (name, v) in [
        ("time_ms", m.time_ms),
        ("time_ms_min", m.time_ms_min),
        ("time_ms_max", m.time_ms_max),
        ("gflops", m.gflops),
        ("gb_per_s", m.gb_per_s),
        ("copy_gb_per_s", m.copy_gb_per_s),
        ("pct_copy", m.pct_copy),
        ("beta", m.beta),
        ("model_bytes", m.model_bytes),
        ("model_flops", m.model_flops),
        ("predicted_ms", m.predicted_ms),
    ] {
        finite_positive(name, v);
    }
    assert!(m.model_error.is_finite());
    assert!(m.time_ms_min <= m.time_ms && m.time_ms <= m.time_ms_max);
    let model = LaunchModel::new(&shape, spec.aux(), physics.info(), row.cells_device);
    let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
    assert!(rel(m.model_bytes, model.bytes) < 1e-12);
    assert!(rel(m.model_flops, model.flops) < 1e-12);
    assert!(rel(m.beta, model.beta()) < 1e-12);
    assert!(rel(m.gflops, model.flops / (m.time_ms * 1e-3) * 1e-9) < 1e-9);
    assert!(rel(m.gb_per_s, model.bytes / (m.time_ms * 1e-3) * 1e-9) < 1e-9);
    assert!(rel(m.pct_copy, 100.0 * m.gb_per_s / m.copy_gb_per_s) < 1e-9);
    assert!(rel(m.predicted_ms, model.bytes / (m.copy_gb_per_s * 1e9) * 1e3) < 1e-9);
    assert!((m.model_error - (m.time_ms / m.predicted_ms - 1.0)).abs() < 1e-9);

    let check = row.check.expect("checked");
    let tol = if real_size == 4 { 1e-5 } else { 1e-12 };
    assert!(check.passed, "correctness check: {check:?}");
    assert_eq!(check.tol, tol);
    assert!(check.rel_diff <= tol && check.rel_diff.is_finite());
}

// ---- a tiny JSON parser (values of the benchmark's output only) ----

#[derive(Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }
    fn lit(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(format!("bad literal at byte {}", self.i))
        }
    }
    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let c = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("bad escape")?;
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hex = std::str::from_utf8(&self.s[self.i..self.i + 4])
                                .map_err(|e| e.to_string())?;
                            let cp = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                            out.push(char::from_u32(cp).ok_or("bad code point")?);
                            self.i += 4;
                        }
                        _ => return Err(format!("bad escape at byte {}", self.i)),
                    }
                }
                c if c < 0x20 => return Err("control character in string".into()),
                _ => {
                    // copy one UTF-8 character
                    let start = self.i - 1;
                    let mut end = self.i;
                    while end < self.s.len() && (self.s[end] & 0xc0) == 0x80 {
                        end += 1;
                    }
                    out.push_str(
                        std::str::from_utf8(&self.s[start..end]).map_err(|e| e.to_string())?,
                    );
                    self.i = end;
                }
            }
        }
    }
    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        match self.s.get(self.i).copied().ok_or("unexpected end")? {
            b'n' => self.lit("null", Json::Null),
            b't' => self.lit("true", Json::Bool(true)),
            b'f' => self.lit("false", Json::Bool(false)),
            b'"' => Ok(Json::Str(self.string()?)),
            b'[' => {
                self.i += 1;
                let mut v = Vec::new();
                if self.eat(b']') {
                    return Ok(Json::Arr(v));
                }
                loop {
                    v.push(self.value()?);
                    if self.eat(b']') {
                        return Ok(Json::Arr(v));
                    }
                    self.expect(b',')?;
                }
            }
            b'{' => {
                self.i += 1;
                let mut v = Vec::new();
                if self.eat(b'}') {
                    return Ok(Json::Obj(v));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.expect(b':')?;
                    v.push((k, self.value()?));
                    if self.eat(b'}') {
                        return Ok(Json::Obj(v));
                    }
                    self.expect(b',')?;
                }
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && b"+-0123456789.eE".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
                t.parse()
                    .map(Json::Num)
                    .map_err(|_| format!("bad number `{t}` at byte {start}"))
            }
        }
    }
}

fn parse_json(text: &str) -> Result<Json, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("trailing text at byte {}", p.i));
    }
    Ok(v)
}

/// Checks the CSV and JSON files against the rows.
fn check_files(csv: &str, json: &str, rows: &[Row]) {
    let text = std::fs::read_to_string(csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], COLUMNS.join(","), "CSV header");
    assert_eq!(
        lines.len(),
        rows.len() + 1,
        "CSV: header + one line per row"
    );
    let back = read_csv(Path::new(csv)).unwrap();
    assert_eq!(back.len(), rows.len());
    for (a, b) in back.iter().zip(rows) {
        assert_eq!(
            (a.case.as_str(), a.n_bl, a.n_cb, a.cells_device),
            (b.case.as_str(), b.n_bl, b.n_cb, b.cells_device)
        );
        assert_eq!(a.status, b.status);
        if let (Some(ma), Some(mb)) = (a.m, b.m) {
            assert!((ma.gflops - mb.gflops).abs() <= 1e-5 * mb.gflops);
        }
    }

    let Json::Arr(items) = parse_json(&std::fs::read_to_string(json).unwrap()).unwrap() else {
        panic!("JSON is not an array");
    };
    assert_eq!(items.len(), rows.len());
    for (item, row) in items.iter().zip(rows) {
        let Json::Obj(fields) = item else {
            panic!("JSON item is not an object")
        };
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, COLUMNS.to_vec());
        let get = |k: &str| &fields.iter().find(|(kk, _)| kk == k).unwrap().1;
        assert_eq!(get("case"), &Json::Str(row.case.clone()));
        assert_eq!(get("device"), &Json::Str(row.device.clone()));
        assert_eq!(get("cells_device"), &Json::Num(row.cells_device as f64));
        assert_eq!(get("n_t"), &Json::Num(row.n_t as f64));
        match row.m {
            Some(m) => {
                let Json::Num(t) = get("time_ms") else {
                    panic!("time_ms is not a number")
                };
                assert!((t - m.time_ms).abs() <= 1e-5 * m.time_ms);
                assert!(matches!(get("copy_gb_per_s"), Json::Num(v) if *v > 0.0));
                assert_eq!(get("check_passed"), &Json::Bool(true));
            }
            None => {
                assert_eq!(get("time_ms"), &Json::Null);
                assert_eq!(get("gflops"), &Json::Null);
            }
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
        assert_eq!(rows[0].mode, "single");
        assert_eq!(rows[0].config, "default");
        check_files(&csv, &json, &rows);
        println!("{}", femquad_examples::bench::report::table_line(&rows[0]));
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
            .all(|r| r.mode == "sweep" && r.config == "sweep")
    );
    check_measured_row(&rows[0], &spec, 3200);
    assert_eq!((rows[0].n_bl, rows[0].n_cb, rows[0].n_t), (16, 2, 48));
    let bad = &rows[1];
    assert_eq!(bad.status, "invalid");
    assert!(bad.note.contains("work-group size"), "{}", bad.note);
    assert_eq!(bad.n_t, 300_000);
    assert!(bad.m.is_none() && bad.check.is_none());
    check_files(&csv, &json, &rows);

    // Figures from the CSV written above.
    let plot = options(&["--plot", &figs, "--from-csv", &csv]);
    let read = run(&plot).unwrap();
    assert_eq!(read.len(), 2);
    let svg =
        std::fs::read_to_string(Path::new(&figs).join("sweep_2d-p1-laplacian-none-f32_3200.svg"))
            .unwrap();
    assert!(svg.contains("<svg") && svg.contains("invalid") && svg.contains("GF/s"));
}

#[test]
fn json_parser_self_check() {
    let v = parse_json(r#"[{"a": 1.5e-3, "b": "x\"y\u00e9", "c": null, "d": true}, {}]"#).unwrap();
    let Json::Arr(items) = v else { panic!() };
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[0],
        Json::Obj(vec![
            ("a".into(), Json::Num(1.5e-3)),
            ("b".into(), Json::Str("x\"yé".into())),
            ("c".into(), Json::Null),
            ("d".into(), Json::Bool(true)),
        ])
    );
    assert!(parse_json("[1,]").is_err());
    assert!(parse_json("{\"a\" 1}").is_err());
}

#[test]
fn autotune_picks_stores_and_reads_back() {
    use femquad::element::Element;
    use femquad::integrate::{CellInputs, Discretization};
    use femquad::mesh::generate::{MeshOptions, unit_box};
    use femquad::opencl::autotune::{TuneCache, TuneOptions, autotune, cached_config_in, tune_key};
    use femquad::opencl::{Device, DeviceSelector, OpenClIntegrator};
    use femquad::physics::builtin::Laplacian;
    use femquad::quadrature::Quadrature;
    use femquad::rng::Rng;
    use femquad::space::FunctionSpace;

    let _lock = device_lock();
    let dir = TempDir::new("tune");
    let cache = dir.0.join("autotune.txt");
    let device = Device::open(&DeviceSelector::from_env()).unwrap();
    let mesh = unit_box(
        2,
        30,
        &MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed: 2,
        },
    )
    .unwrap();
    let space = FunctionSpace::new(&mesh, Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let disc = Discretization::<f32>::new(
        &mesh,
        &space,
        Quadrature::simplex(2, 1).unwrap(),
        femquad::aux::AuxSpace::None,
    )
    .unwrap();
    let mut integ = OpenClIntegrator::new(device.clone(), disc, None).unwrap();
    let candidates = vec![LaunchConfig::new(8, 2), LaunchConfig::new(32, 1)];
    let opts = TuneOptions {
        warmup: 1,
        reps: 3,
        candidates: candidates.clone(),
        cache_file: Some(cache.clone()),
        ..TuneOptions::default()
    };

    // Before any evaluation there are no inputs on the device: a clear error.
    let e = autotune(&mut integ, &Laplacian, &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("element_vectors"), "{e}");

    let n = mesh.n_cells() * 3;
    let u: Vec<f32> = Rng::new(4)
        .vec(n, -1.0, 1.0)
        .into_iter()
        .map(|x| x as f32)
        .collect();
    let mut out = vec![0.0f32; n];
    integ
        .element_vectors(
            &Laplacian,
            &CellInputs {
                u: &u,
                aux: &[],
                constants: &[],
            },
            &mut out,
        )
        .unwrap();
    let r = autotune(&mut integ, &Laplacian, &opts).unwrap();
    assert_eq!(r.trials.len(), 2);
    assert!(
        r.trials
            .iter()
            .all(|t| t.time_ns.as_ref().is_ok_and(|&ns| ns > 0.0))
    );
    assert!(candidates.contains(&r.best.config));
    let fastest = r
        .trials
        .iter()
        .map(|t| t.ns_per_cell().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(r.best.ns_per_cell().unwrap(), fastest);
    // The integrator now uses the tuned configuration.
    assert_eq!(integ.config_for(&Laplacian).unwrap(), r.best.config);
    // Stored, and found again for this device and key.
    assert_eq!(r.stored.as_deref(), Some(cache.as_path()));
    assert!(r.store_error.is_none());
    let key = tune_key(&integ, &Laplacian);
    assert_eq!(key, r.key);
    assert_eq!(
        TuneCache::load(&cache).unwrap().get(&key).unwrap().config,
        r.best.config
    );
    assert_eq!(
        cached_config_in(&cache, device.info(), &key),
        Some(r.best.config)
    );
}
