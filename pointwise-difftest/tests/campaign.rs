//! A small fixed-seed campaign, part of `cargo test --workspace` (CI: two
//! cores, PoCL, no GPU; under three minutes with a cold generated-crate
//! target directory, see the README). Any finding fails the test; reproduce
//! and reduce it with
//! `cargo run --release -p pointwise-difftest -- --bodies 100 --seed 20260501`.

use pointwise_difftest::{Config, campaign};

#[test]
fn a_hundred_random_programs_agree_native_and_opencl() {
    let cfg = Config {
        bodies: 100,
        seed: 20260501,
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
    // Every program was built and evaluated in each dimension it supports.
    let evaluated: usize = report.counts.values().sum();
    assert!(evaluated >= 2 * 100, "{summary}");
    assert!(
        report.counts.get("agree").copied().unwrap_or(0) > 200,
        "{summary}"
    );
}
