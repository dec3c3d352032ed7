//! A small fixed-seed campaign, part of `cargo test --workspace` (CI: two
//! cores, PoCL, no GPU; under three minutes with a cold generated-crate
//! target directory, see the README). Any finding fails the test; reproduce
//! and reduce it with
//! `cargo run --release -p pointwise-difftest -- --bodies 100 --seed 20260501`.
//!
//! Beyond "no finding", the test pins what the campaign proves, so that a
//! check that stops producing results, or starts explaining more away, is
//! noticed: each check passes outright ("ok") for at least 90 % of the
//! evaluations it applies to; every program built affine in `(u, ∇u)` is
//! claimed linear by the macro and its Jacobian is seen not to depend on
//! `u`, and no program with an index computed from `u` is claimed linear;
//! and on PoCL the explained outcomes are exactly the pinned set.

use pointwise_difftest::generate::Gen;
use pointwise_difftest::program::{Linearity, Program};
use pointwise_difftest::{Config, Outcome, campaign};
use std::collections::BTreeSet;

const SEED: u64 = 20260501;
const BODIES: usize = 100;

/// The explained outcomes of this campaign on PoCL's CPU device:
/// (program, dimension, precision, verdict, kind).
const EXPLAINED_ON_POCL: &[(usize, usize, &str, &str, &str)] = &[];

/// The part of a check's evaluations that must pass outright.
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

    let mut g = Gen::new(SEED);
    let programs: Vec<Program> = (0..BODIES).map(|i| g.program(i)).collect();
    // Every program was evaluated in each dimension it supports, in both
    // precisions.
    let evaluations: usize = programs
        .iter()
        .map(|p| p.physics.supported_dims().len())
        .sum();
    let count = |verdict: &str, precision: Option<&str>| {
        report
            .outcomes
            .iter()
            .filter(|o| o.verdict == verdict && precision.is_none_or(|p| o.precision == p))
            .count()
    };
    let residuals: usize = ["agree", "ulp"].iter().map(|v| count(v, None)).sum();
    assert_eq!(residuals, 2 * evaluations, "{summary}");

    // Each check passes outright for at least 90 % of what it applies to.
    for (check, ok, n) in [
        ("residual", "agree", 2 * evaluations),
        ("tangent", "tangent-agree", 2 * evaluations),
        ("AD against differences (f64)", "ad-ok", evaluations),
        ("native Jacobian (f64)", "jacobian-ok", evaluations),
        ("device Jacobian", "jacobian-device-ok", 2 * evaluations),
    ] {
        let passed = count(ok, None);
        assert!(
            passed as f64 >= OK * n as f64,
            "{check}: {passed} of {n} evaluations `{ok}`, fewer than {OK}\n{summary}"
        );
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

    // The explained outcomes, pinned on PoCL (other devices' math libraries
    // round otherwise).
    let explained: BTreeSet<(usize, usize, String, String, String)> = report
        .outcomes
        .iter()
        .filter(|o| o.is_explained())
        .map(|o| {
            let kind = o.kind().to_string();
            (o.id, o.dim, o.precision.clone(), o.verdict.clone(), kind)
        })
        .collect();
    let pinned: BTreeSet<(usize, usize, String, String, String)> = EXPLAINED_ON_POCL
        .iter()
        .map(|(i, d, p, v, k)| (*i, *d, p.to_string(), v.to_string(), k.to_string()))
        .collect();
    if report.device.starts_with("The pocl project") {
        let listed: Vec<String> = explained
            .iter()
            .map(|(i, d, p, v, k)| format!("    ({i}, {d}, \"{p}\", \"{v}\", \"{k}\"),"))
            .collect();
        assert!(
            explained == pinned,
            "the explained outcomes changed; now:\n{}\n{summary}",
            listed.join("\n")
        );
    } else {
        println!(
            "explained outcomes not compared with the pinned set: it is PoCL's, this device \
             is {}",
            report.device
        );
    }
}
