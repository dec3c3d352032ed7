//! What the program does for its options: a single case, the suite, the
//! `N_bl × N_cb` sweep (each on every selected mesh numbering), or figures
//! from earlier CSV files.

use crate::BenchError;
use crate::host::Host;
use crate::numbering::Numbering;
use crate::options::{Options, Plan};
use crate::output::{read_csv, write_csv, write_json};
use crate::plot::plot_rows;
use crate::row::{Mode, Row};
use crate::runner::{Runner, device_list};
use crate::spec::{CaseSpec, select_suite};
use crate::table::sweep_table;

/// Runs what `opts` asks for and returns the rows (measured, or read for
/// `--plot --from-csv`). Writes `--csv`/`--json`/`--plot` outputs even when
/// some configurations failed, then returns [`BenchError::Failed`].
/// Options are checked (`--filter`, the plan, the case, the measures and
/// numberings) before the device is opened.
pub fn run(opts: &Options) -> Result<Vec<Row>, BenchError> {
    if opts.list_devices {
        for d in device_list()? {
            println!("{d}");
        }
        return Ok(Vec::new());
    }
    if let Some(dir) = &opts.plot
        && !opts.from_csv.is_empty()
    {
        let mut rows = Vec::new();
        for f in &opts.from_csv {
            rows.extend(read_csv(f)?);
        }
        for f in plot_rows(&rows, dir)? {
            println!("wrote {}", f.display());
        }
        return Ok(rows);
    }

    let selection = opts.selection()?;
    let (plan, suite, single) = if opts.suite {
        (
            suite_plan(opts)?,
            select_suite(opts.filter.as_deref())?,
            None,
        )
    } else {
        (opts.plan()?, Vec::new(), Some(opts.case()?))
    };
    let mut runner = Runner::new(opts)?;
    runner.print_header();
    match single {
        None => run_suite(&mut runner, &suite, &plan, &selection.numberings)?,
        Some(spec) => {
            let mode = if opts.sweep {
                Mode::Sweep
            } else {
                Mode::Single
            };
            let mut host = None;
            for &numbering in &selection.numberings {
                let mut h = Host::next(host.take(), spec.dim, numbering, opts, &runner.progress)?;
                runner.run_case(&mut h, &spec, &plan, mode)?;
                host = Some(h);
            }
        }
    }
    runner.progress.finish();

    let rows = std::mem::take(&mut runner.rows);
    if opts.sweep {
        for &numbering in &selection.numberings {
            let of: Vec<Row> = rows
                .iter()
                .filter(|r| r.numbering == numbering)
                .cloned()
                .collect();
            println!();
            print!("{}", sweep_table(&of));
        }
    }
    if let Some(p) = &opts.csv {
        write_csv(p, &rows)?;
    }
    if let Some(p) = &opts.json {
        write_json(p, &rows)?;
    }
    if let Some(dir) = &opts.plot {
        for f in plot_rows(&rows, dir)? {
            println!("wrote {}", f.display());
        }
    }
    if !runner.failures.is_empty() {
        return Err(BenchError::Failed(std::mem::take(&mut runner.failures)));
    }
    Ok(rows)
}

/// Runs the suite cases `specs`, one mesh per dimension and numbering (the
/// renumbered mesh made from the random one); a case's error becomes an
/// `error` row and the suite goes on.
fn run_suite(
    runner: &mut Runner<'_>,
    specs: &[CaseSpec],
    plan: &Plan,
    numberings: &[Numbering],
) -> Result<(), BenchError> {
    runner.progress.set_length(specs.len() * numberings.len());
    for dim in [2, 3] {
        let of_dim: Vec<&CaseSpec> = specs.iter().filter(|c| c.dim == dim).collect();
        if of_dim.is_empty() {
            continue;
        }
        let mut previous = None;
        for &numbering in numberings {
            let mut host = match Host::next(
                previous.take(),
                dim,
                numbering,
                runner.opts,
                &runner.progress,
            ) {
                Ok(h) => h,
                Err(e) => {
                    for &spec in &of_dim {
                        runner.push_error(spec, Mode::Suite, numbering, 0, &e);
                        runner.progress.inc();
                    }
                    continue;
                }
            };
            for &spec in &of_dim {
                if let Err(e) = runner.run_case(&mut host, spec, plan, Mode::Suite) {
                    let n = host.mesh.n_cells();
                    runner.push_error(spec, Mode::Suite, numbering, n, &e);
                }
                runner.progress.inc();
            }
            previous = Some(host);
        }
    }
    Ok(())
}

/// The plan of the suite: `--n-bl`/`--n-cb` as for one case (no sweep).
fn suite_plan(opts: &Options) -> Result<Plan, BenchError> {
    let mut o = opts.clone();
    o.sweep = false;
    o.plan()
}
