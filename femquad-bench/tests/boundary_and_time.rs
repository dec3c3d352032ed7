//! The benchmark's boundary-term and time paths on the default OpenCL
//! device (PoCL in CI) at a tiny size:
//!
//! * `--neumann`: every BP row's `F(u)` includes the Neumann term on the
//!   side `x₀ = 0`, checked against the host reference (the element
//!   kernel's vectors plus the native facet integrals), with the facet
//!   kernels' time and bytes reported (`facets`, `facet_ms`, `facet_share`,
//!   `facet_bytes`, `facet_bytes_share`);
//! * `--physics heat`: the BK and BP rows of a transient physics (it reads
//!   `u_t` and `t`) run the kernels' time path (`READS_U_T`, `TIME_PARAMS`)
//!   at the bound time state and equal the native reference there;
//! * misuse of both is a usage error.

use femquad_bench::measure::{AssemblyKind, Measure};
use femquad_bench::row::Status;
use femquad_bench::spec::PhysicsKind;
use femquad_bench::{Options, Row, run};

/// Serializes the tests that open the device (see `smoke.rs`).
fn device_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn options(args: &[&str]) -> Options {
    let all = std::iter::once("femquad-bench").chain(args.iter().copied());
    Options::parse_from_args(all).unwrap_or_else(|e| panic!("bad options {args:?}: {e}"))
}

const TINY: [&str; 11] = [
    "--reps",
    "3",
    "--warmup",
    "1",
    "--copy-mib",
    "8",
    "--check-cells",
    "300",
    "--cg-iterations",
    "0",
    "--quiet",
];

fn checked(row: &Row) {
    assert_eq!(row.status, Status::Ok, "{}: {}", row.case, row.note);
    assert_eq!(row.check_passed, Some(true), "{}", row.case);
    assert!(row.time_ms.is_some_and(|t| t > 0.0), "{}", row.case);
}

/// A case of the Neumann test: its options, the facets on `x₀ = 0`, the
/// element's `N_b`, the components, the dimension and the size of a real.
struct NeumannCase {
    args: &'static [&'static str],
    facets: usize,
    n_b: usize,
    n_comp: usize,
    dim: usize,
    real: usize,
}

#[test]
fn neumann_bp_rows_include_and_report_the_facet_kernels() {
    let _lock = device_lock();
    let cases = [
        NeumannCase {
            args: &["--dim", "2", "--precision", "f64", "--refine", "8"],
            facets: 8,
            n_b: 3,
            n_comp: 1,
            dim: 2,
            real: 8,
        },
        NeumannCase {
            args: &[
                "--dim",
                "3",
                "--physics",
                "elasticity",
                "--precision",
                "f32",
                "--refine",
                "3",
            ],
            facets: 2 * 3 * 3,
            n_b: 4,
            n_comp: 3,
            dim: 3,
            real: 4,
        },
    ];
    for case in cases {
        let NeumannCase {
            args,
            facets,
            n_b,
            n_comp: nc,
            dim,
            real,
        } = case;
        let mut all = args.to_vec();
        all.extend(TINY);
        all.extend(["--measure", "bp", "--neumann"]);
        let rows = run(&options(&all)).unwrap();
        assert_eq!(rows.len(), 4, "2 assemblies × 2 geometries");
        for row in &rows {
            checked(row);
            assert_eq!(row.measure, Measure::Bp);
            assert_eq!(row.facets, facets, "{}", row.case);
            let (t, ms) = (row.time_ms.unwrap(), row.facet_ms.unwrap());
            assert!(ms > 0.0 && ms < t, "{}: facets {ms} of {t} ms", row.case);
            let share = row.facet_share.unwrap();
            assert!((share - ms / t).abs() < 1e-9 * share.max(1.0), "{share}");
            // the facet kernels' bytes, counted here from the sizes: the
            // points kernel reads the cell's u, its N_b nodes and local facet,
            // J⁻¹, the normal, the points and weights, and writes the point
            // values; the atomic scatter reads those and the indices and
            // adds N_b·N_comp values (read and write)
            let nq = if dim == 2 { 2 } else { 3 };
            let cell_values = facets * n_b * nc * real;
            let indices = facets * (n_b + 1) * 4;
            let geometry = facets * (dim * dim + dim + nq * dim + nq) * real;
            let points = facets * nq * nc * real;
            let bytes = row.facet_bytes.unwrap();
            if row.assembly == Some(AssemblyKind::Atomic) {
                let want = (cell_values + indices + geometry + points)
                    + (points + indices + 2 * cell_values);
                assert_eq!(bytes, want as f64, "{}", row.case);
            } else {
                assert!(bytes > (2 * points + cell_values) as f64, "{}", row.case);
            }
            let model = row.model_bytes.unwrap();
            let bytes_share = row.facet_bytes_share.unwrap();
            assert!((bytes_share - bytes / (model + bytes)).abs() < 1e-12);
            assert!(bytes_share > 0.0 && bytes_share < 1.0, "{bytes_share}");
        }
    }
}

#[test]
fn heat_rows_run_the_time_path_and_equal_the_native_reference() {
    let _lock = device_lock();
    for args in [
        &[
            "--dim",
            "2",
            "--order",
            "1",
            "--precision",
            "f64",
            "--refine",
            "8",
        ][..],
        &[
            "--dim",
            "3",
            "--order",
            "2",
            "--precision",
            "f32",
            "--refine",
            "2",
        ][..],
    ] {
        let mut all = args.to_vec();
        all.extend(TINY);
        all.extend(["--physics", "heat", "--measure", "bk,bp", "--neumann"]);
        let rows = run(&options(&all)).unwrap();
        assert_eq!(rows.len(), 5, "one BK row, four BP rows");
        for row in &rows {
            checked(row);
            assert_eq!(row.physics, PhysicsKind::Heat);
            assert!(row.case.contains("-heat-"), "{}", row.case);
        }
        // BK: the element kernel reads the cell-local b besides u: the
        // model counts N_b·N_comp more reals per cell than a stationary
        // physics' 2·N_b·N_comp + d² + 1
        let bk = &rows[0];
        assert_eq!(bk.measure, Measure::Bk);
        let (d, s) = (bk.dim, if bk.precision.name() == "f32" { 4 } else { 8 });
        let per_cell = (3 * bk.n_bt + d * d + 1) * s;
        assert_eq!(
            bk.model_bytes.unwrap(),
            (per_cell * bk.cells_device) as f64,
            "{}",
            bk.case
        );
    }
}

#[test]
fn misuse_of_neumann_and_heat_is_a_usage_error() {
    let e = options(&["--neumann"]).selection().unwrap_err().to_string();
    assert!(
        e.contains("--neumann adds a boundary term to F(u), which the BP rows evaluate"),
        "{e}"
    );
    assert!(e.contains("add `bp` to --measure"), "{e}");
    let e = options(&["--physics", "heat", "--coefficient", "field"])
        .case()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--coefficient field applies to the Laplacian only; use `none` with heat"),
        "{e}"
    );
}
