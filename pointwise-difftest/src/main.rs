//! `cargo run --release -p pointwise-difftest -- --bodies 5000 --seed 7`:
//! a campaign of random `#[pointwise]` programs, native versus OpenCL (see
//! the crate's README). Exits with status 1 if anything was found.

use clap::Parser;
use pointwise_difftest::{Config, campaign};

/// Differential testing of #[pointwise]: random physics, native versus OpenCL.
#[derive(Parser)]
struct Args {
    /// Number of random programs.
    #[arg(long, alias = "count", default_value_t = 200)]
    bodies: usize,
    /// Seed of the generator (and of the random points).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random points per program, dimension and precision.
    #[arg(long, default_value_t = 16)]
    points: usize,
    /// Programs per OpenCL build.
    #[arg(long, default_value_t = 40)]
    batch: usize,
    /// Programs per generated crate (built and run in turn).
    #[arg(long, default_value_t = 500)]
    chunk: usize,
    /// Seconds an OpenCL evaluation may run before its programs are
    /// suspected of hanging the device.
    #[arg(long, default_value_t = 300)]
    device_limit: u64,
    /// Print findings as generated, without reducing them.
    #[arg(long)]
    no_minimize: bool,
    /// Print the source of program N of this seed and exit.
    #[arg(long)]
    show: Option<usize>,
    /// Run only these programs of the seed (comma-separated ids), to
    /// reproduce findings; `--bodies` is then ignored.
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<usize>>,
}

fn main() {
    let args = Args::parse();
    if let Some(n) = args.show {
        let mut g = pointwise_difftest::generate::Gen::new(args.seed);
        // The generator is sequential: program n follows programs 0..n.
        for i in 0..n {
            g.program(i);
        }
        println!("{}", g.program(n).source());
        return;
    }
    let cfg = Config {
        bodies: args.bodies,
        seed: args.seed,
        points: args.points,
        batch: args.batch,
        chunk: args.chunk,
        device_limit: args.device_limit,
        minimize: !args.no_minimize,
        name: match args.only {
            Some(_) => format!("only-{}", args.seed),
            None => format!("campaign-{}", args.seed),
        },
        verbose: true,
        only: args.only,
    };
    match campaign(&cfg) {
        Ok(report) => {
            println!("{}", report.summary());
            if !report.clean() {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("pointwise-difftest: {e}");
            std::process::exit(2);
        }
    }
}
