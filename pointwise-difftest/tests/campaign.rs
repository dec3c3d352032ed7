//! A small fixed-seed campaign, part of `cargo test --workspace` (CI: two
//! cores, PoCL, no GPU; see the README for its time). Any finding fails the
//! test; reproduce and reduce it with
//! `cargo run --release -p pointwise-difftest -- --bodies 100 --seed 20260501`.
//!
//! Beyond "no finding", the test pins what the campaign proves, so that a
//! check that stops producing results, or starts explaining more away, is
//! noticed: every check gives one line per evaluation it applies to; the
//! explained outcomes are exactly the pinned ones — those of the native
//! checks (AD against differences, the native Jacobian) on any device,
//! those of the comparisons with OpenCL on PoCL (another device's math
//! library rounds otherwise: there, each of those checks must pass
//! outright for at least 90 % of its evaluations) — so every other
//! evaluation is a pass; every program built affine in `(u, ∇u)` is
//! claimed linear by the macro and its Jacobian is seen not to depend on
//! `u`; no program with an index computed from `u` is claimed linear.

use pointwise_difftest::generate::Gen;
use pointwise_difftest::program::{Linearity, Program};
use pointwise_difftest::{Config, Outcome, campaign};
use std::collections::BTreeSet;

const SEED: u64 = 20260501;
const BODIES: usize = 100;

/// An explained outcome: (program, dimension, precision, verdict, kind).
type Explained = (usize, usize, &'static str, &'static str, &'static str);

/// The explained outcomes of the native checks (any device).
///
/// Program 7's tangent-noise entry (an entry that cancels to 0, AD giving a
/// few ulps) moved from 2D to 3D when the probe's inputs gained `u_t` and
/// the direction `du_t`: their draws shift the random points of the later
/// evaluations, and with them where the cancellation falls.
const EXPLAINED_NATIVE: &[Explained] = &[
    (7, 3, "f64", "ad-explained", "tangent-noise"),
    (9, 3, "f64", "ad-partial", "partial"),
    (17, 2, "f64", "ad-partial", "partial"),
    (17, 3, "f64", "ad-partial", "partial"),
    (34, 2, "f64", "ad-partial", "partial"),
    (34, 3, "f64", "ad-nonfinite", "nonfinite"),
    (49, 2, "f64", "ad-partial", "partial"),
    (49, 3, "f64", "ad-partial", "partial"),
    (56, 3, "f64", "ad-partial", "partial"),
    (65, 2, "f64", "ad-partial", "partial"),
    (75, 3, "f64", "ad-partial", "partial"),
    (75, 3, "f64", "jacobian-explained", "nonfinite"),
    (78, 2, "f64", "ad-partial", "partial"),
    (78, 3, "f64", "ad-partial", "partial"),
    (80, 2, "f64", "ad-partial", "partial"),
    (80, 3, "f64", "ad-partial", "partial"),
    (87, 2, "f64", "ad-partial", "partial"),
    (91, 2, "f64", "ad-partial", "partial"),
    (91, 2, "f64", "jacobian-explained", "nonfinite"),
    (91, 3, "f64", "jacobian-explained", "nonfinite"),
    (95, 2, "f64", "ad-partial", "partial"),
    (95, 3, "f64", "ad-partial", "partial"),
];

/// The explained outcomes of the comparisons with OpenCL on PoCL's CPU
/// device.
const EXPLAINED_ON_POCL: &[Explained] = &[
    (14, 3, "f32", "tangent-ulp", "rounding"),
    (14, 3, "f32", "ulp", "rounding"),
    (34, 3, "f32", "tangent-ulp", "nonfinite"),
    (34, 3, "f64", "tangent-ulp", "nonfinite"),
    (37, 2, "f32", "ulp", "rounding"),
    (37, 3, "f32", "ulp", "rounding"),
    (46, 3, "f32", "tangent-ulp", "rounding"),
    (46, 3, "f32", "ulp", "rounding"),
    (49, 2, "f32", "tangent-ulp", "nonfinite"),
    (49, 2, "f64", "tangent-ulp", "nonfinite"),
    (49, 3, "f32", "tangent-ulp", "nonfinite"),
    (49, 3, "f64", "tangent-ulp", "nonfinite"),
    (66, 2, "f32", "ulp", "rounding"),
    (66, 3, "f32", "ulp", "rounding"),
    (68, 2, "f32", "ulp", "rounding"),
    (75, 3, "f32", "jacobian-device-explained", "nonfinite"),
    (75, 3, "f64", "jacobian-device-explained", "nonfinite"),
    (78, 2, "f32", "tangent-ulp", "rounding"),
    (86, 3, "f32", "ulp", "rounding"),
    (91, 2, "f32", "jacobian-device-explained", "nan-fold"),
    (91, 2, "f64", "jacobian-device-explained", "nan-fold"),
    (91, 3, "f32", "jacobian-device-explained", "nan-fold"),
    (91, 3, "f64", "jacobian-device-explained", "nan-fold"),
];

/// The verdicts of the native checks.
const NATIVE_VERDICTS: &[&str] = &[
    "ad-explained",
    "ad-nonfinite",
    "ad-partial",
    "jacobian-explained",
];

/// Off PoCL, the part of the evaluations of a comparison with OpenCL that
/// must pass outright.
const OK: f64 = 0.9;

#[test]
fn a_hundred_random_programs_agree_native_and_opencl() {
    let cfg = Config {
        bodies: BODIES,
        seed: SEED,
        points: 8,
        batch: 50,
        chunk: 100,
        device_limit: 300,
        minimize: false,
        name: "ci".into(),
        verbose: false,
        only: None,
    };
    let report = campaign(&cfg).expect("campaign");
    let summary = report.summary();
    println!("{summary}");
    assert!(report.clean(), "{summary}");

    // Every check gives one line per (program, dimension, precision) it
    // applies to.
    let mut g = Gen::new(SEED);
    let programs: Vec<Program> = (0..BODIES).map(|i| g.program(i)).collect();
    let evaluations: usize = programs
        .iter()
        .map(|p| p.physics.supported_dims().len())
        .sum();
    let lines = |verdicts: &[&str]| {
        report
            .outcomes
            .iter()
            .filter(|o| verdicts.contains(&o.verdict.as_str()))
            .count()
    };
    let checks: [(&str, &[&str], usize); 5] = [
        ("residual", &["agree", "ulp"], 2 * evaluations),
        (
            "tangent",
            &["tangent-agree", "tangent-ulp"],
            2 * evaluations,
        ),
        (
            "AD against differences (f64)",
            &["ad-ok", "ad-explained", "ad-nonfinite", "ad-partial"],
            evaluations,
        ),
        (
            "native Jacobian (f64)",
            &["jacobian-ok", "jacobian-explained"],
            evaluations,
        ),
        (
            "device Jacobian",
            &["jacobian-device-ok", "jacobian-device-explained"],
            2 * evaluations,
        ),
    ];
    for (check, verdicts, n) in checks {
        assert_eq!(lines(verdicts), n, "{check}: lines {verdicts:?}\n{summary}");
    }

    // Linearity: every affine program is claimed linear and checked in
    // each of its dimensions; no program indexed by `u` is claimed.
    let claimed = |p: &Program, d: usize| -> Vec<&Outcome> {
        report
            .outcomes
            .iter()
            .filter(|o| o.id == p.id && o.dim == d && o.verdict.starts_with("linear-"))
            .collect()
    };
    let (mut affine, mut indexed) = (0, 0);
    for p in &programs {
        for d in p.physics.supported_dims() {
            let lines = claimed(p, d);
            match p.linearity {
                Linearity::Affine => {
                    affine += 1;
                    assert!(
                        lines.iter().any(|o| o.verdict == "linear-ok"),
                        "program {} ({d}D), affine by construction, was not claimed linear \
                         (or its Jacobian depends on u): {lines:?}\n{}",
                        p.id,
                        p.source()
                    );
                }
                Linearity::UIndexed => {
                    indexed += 1;
                    assert!(
                        lines.is_empty(),
                        "program {} ({d}D) indexes by u, yet was claimed linear: {lines:?}\n{}",
                        p.id,
                        p.source()
                    );
                }
                Linearity::Random => {}
            }
        }
    }
    assert!(
        affine > 0 && indexed > 0,
        "affine {affine}, indexed by u {indexed}"
    );

    // The explained outcomes.
    let set = |native: bool| -> BTreeSet<(usize, usize, String, String, String)> {
        report
            .outcomes
            .iter()
            .filter(|o| o.is_explained() && NATIVE_VERDICTS.contains(&o.verdict.as_str()) == native)
            .map(|o| {
                let kind = o.kind().to_string();
                (o.id, o.dim, o.precision.clone(), o.verdict.clone(), kind)
            })
            .collect()
    };
    let pinned = |p: &[Explained]| -> BTreeSet<(usize, usize, String, String, String)> {
        p.iter()
            .map(|(i, d, p, v, k)| (*i, *d, p.to_string(), v.to_string(), k.to_string()))
            .collect()
    };
    let listed = |s: &BTreeSet<(usize, usize, String, String, String)>| {
        s.iter()
            .map(|(i, d, p, v, k)| format!("    ({i}, {d}, \"{p}\", \"{v}\", \"{k}\"),"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let native = set(true);
    assert!(
        native == pinned(EXPLAINED_NATIVE),
        "the explained outcomes of the native checks changed; now:\n{}\n{summary}",
        listed(&native)
    );
    let device = set(false);
    if report.device.starts_with("The pocl project") {
        assert!(
            device == pinned(EXPLAINED_ON_POCL),
            "the explained outcomes of the comparisons with OpenCL changed; now:\n{}\n{summary}",
            listed(&device)
        );
    } else {
        println!(
            "explained outcomes of the comparisons with OpenCL not compared with the pinned \
             set: it is PoCL's, this device is {}",
            report.device
        );
        for (check, verdicts, n) in [checks[0], checks[1], checks[4]] {
            let passed = lines(&verdicts[..1]);
            assert!(
                passed as f64 >= OK * n as f64,
                "{check}: {passed} of {n} evaluations `{}`, fewer than {OK}\n{summary}",
                verdicts[0]
            );
        }
    }
}
