//! Differential testing of `#[pointwise]`: random physics inside the
//! accepted subset, compiled once in a generated crate, evaluated natively
//! and on an OpenCL device (femquad's probe), compared.
//!
//! A campaign ([`campaign`]) generates `bodies` programs from a seed
//! ([`generate`]), writes and builds one crate with all of them ([`project`]),
//! runs it (the crate's `runtime`: random points, native and OpenCL
//! evaluation, in 2D and 3D where the physics is defined, `f64` and `f32`)
//! and classifies every program ([`verdict`]: agree, within the reach of
//! the math libraries, disagreement). Every finding — a disagreement, an
//! OpenCL build failure, a native evaluation that differs from the plain
//! copy, a program the macro or rustc rejects, a macro panic — is reduced
//! to a small reproducer ([`minimize`]) and printed. See `README.md`.

pub mod derivatives;
pub mod differences;
pub mod driver;
pub mod freeze;
pub mod generate;
pub mod jacobians;
pub mod linearity;
pub mod minimize;
pub mod paths;
pub mod program;
pub mod project;
pub mod pt;
pub mod residuals;
pub mod runtime;
pub mod tangents;
pub mod verdict;

#[cfg(test)]
mod broken_variants;

use program::Program;
use project::Project;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Number of programs.
    pub bodies: usize,
    pub seed: u64,
    /// Random points per program, dimension and precision.
    pub points: usize,
    /// Programs per OpenCL build.
    pub batch: usize,
    /// Programs per generated crate: a campaign builds and runs its
    /// programs in chunks of this many (one crate of thousands of modules
    /// compiles slowly, and a rejected program rebuilds only its chunk).
    pub chunk: usize,
    /// Seconds an OpenCL evaluation may run before its programs are
    /// suspected of hanging the device (see [`run_guarded`]).
    pub device_limit: u64,
    /// Reduce findings to small reproducers.
    pub minimize: bool,
    /// Name of the generated crate's directory under `target/difftest`.
    pub name: String,
    /// Print progress to stderr.
    pub verbose: bool,
    /// Only these programs of the seed's sequence (to reproduce findings);
    /// `None`: programs `0..bodies`.
    pub only: Option<Vec<usize>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bodies: 100,
            seed: 1,
            points: 16,
            batch: 40,
            chunk: 500,
            device_limit: 300,
            minimize: true,
            name: "campaign".into(),
            verbose: false,
            only: None,
        }
    }
}

/// One line of the runtime's output: a program in one dimension and
/// precision.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub id: usize,
    pub dim: usize,
    pub precision: String,
    /// `agree`, `ulp`, `disagree`, `build-failure`, `native-panic`,
    /// `native-mismatch`.
    pub verdict: String,
    pub worst: f64,
    pub detail: String,
}

impl Outcome {
    /// Parses `result <id> <dim> <prec> <verdict> <worst> <detail>`.
    pub fn parse(line: &str) -> Option<Outcome> {
        let mut it = line.splitn(7, ' ');
        if it.next()? != "result" {
            return None;
        }
        Some(Outcome {
            id: it.next()?.parse().ok()?,
            dim: it.next()?.parse().ok()?,
            precision: it.next()?.to_string(),
            verdict: it.next()?.to_string(),
            worst: it.next()?.parse().unwrap_or(f64::NAN),
            detail: it.next().unwrap_or("").to_string(),
        })
    }

    /// Whether this is a finding (not an agreement, a classified ulp
    /// difference or a skipped check).
    pub fn is_finding(&self) -> bool {
        !matches!(
            self.verdict.as_str(),
            "agree"
                | "ulp"
                | "tangent-agree"
                | "tangent-ulp"
                | "ad-ok"
                | "ad-nonfinite"
                | "ad-partial"
                | "ad-skipped"
                | "linear-ok"
                | "jacobian-ok"
                | "jacobian-device-ok"
                | "jacobian-explained"
                | "jacobian-device-explained"
                | "ad-explained"
        )
    }

    /// Whether this is an explained difference (by the math libraries, by
    /// rounding, by a non-finite intermediate) or a check that compared too
    /// little to pass (`ad-partial`): listed with its kind, see
    /// [`Outcome::kind`].
    pub fn is_explained(&self) -> bool {
        matches!(
            self.verdict.as_str(),
            "ulp"
                | "tangent-ulp"
                | "jacobian-explained"
                | "jacobian-device-explained"
                | "ad-explained"
                | "ad-nonfinite"
                | "ad-partial"
        )
    }

    /// The kind of an explained difference: the `[kind]` its detail starts
    /// with (see `verdict`'s *Kinds*), or `unclassified`.
    pub fn kind(&self) -> &str {
        self.detail
            .strip_prefix('[')
            .and_then(|d| d.split_once(']'))
            .map(|(k, _)| k)
            .unwrap_or("unclassified")
    }
}

/// Findings of one kind reduced at most (the first ones; the others are
/// printed as generated): a systematic fault gives hundreds, and each
/// reduction builds and runs dozens of crates.
pub const MINIMIZED_PER_KIND: usize = 3;

/// A program that must be looked at, with its reproducer.
#[derive(Clone, Debug)]
pub struct Finding {
    pub id: usize,
    /// Its verdict: `disagree`, `build-failure`, `native-mismatch`,
    /// `native-panic`, `macro-panic`, `macro-rejected`, `rustc-rejected`,
    /// `linear-mismatch`, … (see the README).
    pub kind: String,
    pub detail: String,
    /// The `#[pointwise]` source, minimized (for the first
    /// [`MINIMIZED_PER_KIND`] of its kind).
    pub reproducer: String,
}

/// The result of a campaign.
#[derive(Debug, Default)]
pub struct Report {
    pub programs: usize,
    /// The OpenCL device: `vendor: name (driver)`.
    pub device: String,
    /// (dimension, precision) evaluations per verdict.
    pub counts: BTreeMap<String, usize>,
    /// Every result line of the generated crates.
    pub outcomes: Vec<Outcome>,
    pub findings: Vec<Finding>,
    /// The explained outcomes ([`Outcome::is_explained`]), with the math
    /// functions of the program.
    pub explained: Vec<(Outcome, Vec<&'static str>)>,
    /// Explained differences per (verdict, precision, kind).
    pub kinds: BTreeMap<(String, String, String), usize>,
    /// Seconds spent building the generated crate and running it.
    pub build_seconds: f64,
    pub run_seconds: f64,
}

impl Report {
    /// Whether the campaign found nothing to look at.
    pub fn clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// The printed summary: counts, every finding with its reproducer,
    /// every classified difference.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} programs on {}; build {:.0} s, run {:.0} s",
            self.programs, self.device, self.build_seconds, self.run_seconds
        );
        for (k, n) in &self.counts {
            let _ = writeln!(s, "  {k:16} {n}");
        }
        let _ = writeln!(
            s,
            "{} findings, {} explained (listed below with their kinds)",
            self.findings.len(),
            self.explained.len()
        );
        for ((v, prec, kind), n) in &self.kinds {
            let _ = writeln!(s, "  {v:26} {prec} {kind:16} {n}");
        }
        for f in &self.findings {
            let _ = writeln!(
                s,
                "\n=== program {} — {}: {}\n{}",
                f.id, f.kind, f.detail, f.reproducer
            );
        }
        if !self.explained.is_empty() {
            let _ = writeln!(
                s,
                "\n--- explained: by the math libraries, rounding, non-finite intermediates, or \
                 too few entries compared"
            );
            for (o, fs) in &self.explained {
                let _ = writeln!(
                    s,
                    "program {} {}D {} {} [{}]: {}",
                    o.id,
                    o.dim,
                    o.precision,
                    o.verdict,
                    fs.join(", "),
                    o.detail
                );
            }
        }
        s
    }
}

/// The math functions a program calls.
pub fn math_functions(p: &Program) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let src = p.source();
    for (f, _) in generate::MATH {
        let method = format!(".{f}(");
        let path = format!("f64::{f}(");
        if src.contains(&method) || src.contains(&path) {
            out.push(f);
        }
    }
    out
}

/// Builds `programs` in the crate `project`, leaving out the ones that do
/// not compile (returned as findings).
pub fn build(
    project: &Project,
    programs: &[Program],
    verbose: bool,
) -> std::io::Result<(Vec<Program>, Vec<Finding>)> {
    let mut kept: Vec<Program> = programs.to_vec();
    let mut findings = Vec::new();
    loop {
        let refs: Vec<&Program> = kept.iter().collect();
        project.write(&refs)?;
        if verbose {
            eprintln!(
                "building {} programs in {}",
                kept.len(),
                project.dir.display()
            );
        }
        let rejected = project.build()?;
        if rejected.is_empty() {
            return Ok((kept, findings));
        }
        for (id, (kind, msg)) in &rejected {
            if let Some(p) = kept.iter().find(|p| p.id == *id) {
                findings.push(Finding {
                    id: *id,
                    kind: kind.clone(),
                    detail: msg.lines().next().unwrap_or("").to_string(),
                    reproducer: format!("{}\n{msg}", p.source()),
                });
            }
        }
        kept.retain(|p| !rejected.contains_key(&p.id));
    }
}

/// Runs a campaign.
pub fn campaign(cfg: &Config) -> std::io::Result<Report> {
    let mut g = generate::Gen::new(cfg.seed);
    let programs: Vec<Program> = match &cfg.only {
        None => (0..cfg.bodies).map(|i| g.program(i)).collect(),
        Some(ids) => {
            // The generator is sequential: program n follows programs 0..n.
            let last = ids.iter().copied().max().unwrap_or(0);
            (0..=last)
                .map(|i| g.program(i))
                .filter(|p| ids.contains(&p.id))
                .collect()
        }
    };
    let project = Project::new(&project::base(), &cfg.name);
    let (mut build_seconds, mut run_seconds) = (0.0, 0.0);
    let (mut kept, mut findings, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    for chunk in programs.chunks(cfg.chunk.max(1)) {
        let t0 = std::time::Instant::now();
        let (k, f) = build(&project, chunk, cfg.verbose)?;
        build_seconds += t0.elapsed().as_secs_f64();
        let t1 = std::time::Instant::now();
        let ids: Vec<usize> = k.iter().map(|p| p.id).collect();
        lines.extend(run_guarded(&project, cfg, &k, &ids, false, &mut findings)?);
        run_seconds += t1.elapsed().as_secs_f64();
        kept.extend(k);
        findings.extend(f);
    }
    let mut report = Report {
        programs: programs.len(),
        build_seconds,
        run_seconds,
        ..Report::default()
    };
    if let Some(d) = lines.iter().find_map(|l| l.strip_prefix("opencl ")) {
        report.device = d.to_string();
    }
    let mut seen: Vec<(usize, String)> = Vec::new();
    for o in lines.iter().filter_map(|l| Outcome::parse(l)) {
        *report.counts.entry(o.verdict.clone()).or_default() += 1;
        report.outcomes.push(o.clone());
        let Some(program) = kept.iter().find(|p: &&Program| p.id == o.id) else {
            return Err(std::io::Error::other(format!(
                "the generated crate reported program {}, which it does not hold",
                o.id
            )));
        };
        if o.is_explained() {
            let key = (o.verdict.clone(), o.precision.clone(), o.kind().to_string());
            *report.kinds.entry(key).or_default() += 1;
            report.explained.push((o.clone(), math_functions(program)));
        }
        if o.is_finding() && !seen.contains(&(o.id, o.verdict.clone())) {
            seen.push((o.id, o.verdict.clone()));
            let reduced = seen.iter().filter(|(_, v)| *v == o.verdict).count();
            let reproducer = if cfg.minimize && reduced <= MINIMIZED_PER_KIND {
                let small = minimize::minimize(program, &o, cfg)?;
                small.source()
            } else {
                program.source()
            };
            findings.push(Finding {
                id: o.id,
                kind: o.verdict.clone(),
                detail: format!("{}D {}: {}", o.dim, o.precision, o.detail),
                reproducer,
            });
        }
    }
    for kind in ["macro-panic", "macro-rejected", "rustc-rejected"] {
        let n = findings.iter().filter(|f| f.kind == kind).count();
        if n > 0 {
            report.counts.insert(kind.into(), n);
        }
    }
    report.findings = findings;
    Ok(report)
}

/// Runs the programs `ids` (of `programs`, built in `project`); returns
/// the output lines. When an OpenCL evaluation hangs, the programs it
/// evaluated are split until the ones that hang are alone (each a
/// `device-timeout` finding) and the others are run again. While
/// `bisecting` (a run of suspects only, at most one batch), the limit is a
/// fifth of `cfg.device_limit`, at least a minute.
fn run_guarded(
    project: &Project,
    cfg: &Config,
    programs: &[Program],
    ids: &[usize],
    bisecting: bool,
    findings: &mut Vec<Finding>,
) -> std::io::Result<Vec<String>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let verbose = cfg.verbose;
    let limit = std::time::Duration::from_secs(if bisecting {
        (cfg.device_limit / 5).max(60)
    } else {
        cfg.device_limit
    });
    let run = project.run(&run_args(cfg, Some(ids)), limit, |l| {
        if verbose && l.starts_with("result") && !l.contains(" agree ") {
            eprintln!("{l}");
        }
    })?;
    let (what, suspects, seconds) = match run {
        project::Run::Done(lines) => return Ok(lines),
        project::Run::Hung {
            what,
            suspects,
            seconds,
        } => (what, suspects, seconds),
    };
    let suspects: Vec<usize> = suspects.into_iter().filter(|i| ids.contains(i)).collect();
    if verbose {
        eprintln!("OpenCL evaluation {what} of {suspects:?} ran over {seconds} s: splitting");
    }
    if suspects.is_empty() {
        return Err(std::io::Error::other(format!(
            "the generated crate stopped for {seconds} s outside an OpenCL evaluation"
        )));
    }
    if let [id] = suspects[..] {
        let source = programs
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.source())
            .unwrap_or_default();
        findings.push(Finding {
            id,
            kind: "device-timeout".into(),
            detail: format!("the OpenCL evaluation ({what}) did not return within {seconds} s"),
            reproducer: source,
        });
    }
    let rest: Vec<usize> = ids
        .iter()
        .copied()
        .filter(|i| !suspects.contains(i))
        .collect();
    let mut lines = run_guarded(project, cfg, programs, &rest, bisecting, findings)?;
    if suspects.len() > 1 {
        let (a, b) = suspects.split_at(suspects.len() / 2);
        lines.extend(run_guarded(project, cfg, programs, a, true, findings)?);
        lines.extend(run_guarded(project, cfg, programs, b, true, findings)?);
    }
    Ok(lines)
}

/// Verdicts of the checks that need no device (see
/// `derivatives::native_checks`): their findings are reduced without
/// compiling OpenCL.
pub const NATIVE_FINDINGS: &[&str] = &["ad-mismatch", "jacobian-mismatch", "linear-mismatch"];

/// The runtime's command line.
pub fn run_args(cfg: &Config, only: Option<&[usize]>) -> Vec<String> {
    let mut a = vec![
        "--seed".into(),
        cfg.seed.to_string(),
        "--points".into(),
        cfg.points.to_string(),
        "--batch".into(),
        cfg.batch.to_string(),
    ];
    if let Some(ids) = only {
        a.push("--only".into());
        a.push(
            ids.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    a
}

#[cfg(test)]
mod tests {
    use super::Outcome;

    #[test]
    fn explained_differences_carry_their_kind() {
        let o = Outcome::parse(
            "result 7 2 f32 ulp 3e-1 [decision] point 3 f1[0]: native 1e-1 OpenCL 1e0 (reach 1e0)",
        )
        .expect("a result line");
        assert!(o.is_explained() && !o.is_finding());
        assert_eq!(o.kind(), "decision");
        let o = Outcome::parse("result 7 3 f64 jacobian-device-explained 2e-10 [tangent-noise] x")
            .expect("a result line");
        assert!(o.is_explained() && !o.is_finding());
        assert_eq!(o.kind(), "tangent-noise");
        let o = Outcome::parse("result 7 3 f64 tangent-disagree inf entry df1[0]: native 0e0")
            .expect("a result line");
        assert!(o.is_finding() && !o.is_explained());
        assert_eq!(o.kind(), "unclassified");
        // Checks that compared too little, or a non-finite tangent with a
        // reason, are listed; a false linearity claim is a finding.
        for line in [
            "result 7 2 f64 ad-partial 0e0 [partial] 3 of 16 entries compared",
            "result 7 2 f64 ad-nonfinite 0e0 [nonfinite] 16 of 16 entries compared",
        ] {
            let o = Outcome::parse(line).expect("a result line");
            assert!(o.is_explained() && !o.is_finding(), "{line}");
        }
        let o = Outcome::parse("result 7 2 f64 linear-mismatch 1e0 point 0 g0[0]: …")
            .expect("a result line");
        assert!(o.is_finding() && !o.is_explained());
        let o = Outcome::parse("result 7 2 f64 linear-ok 0 …").expect("a result line");
        assert!(!o.is_finding() && !o.is_explained());
    }
}
