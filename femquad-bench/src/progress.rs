//! Progress on stderr: an indicatif bar on a terminal, plain log lines
//! otherwise (logs of batch runs), nothing with `--quiet`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress reporting of one benchmark run.
pub struct Progress {
    bar: Option<ProgressBar>,
    log: bool,
    start: Instant,
}

impl Progress {
    /// A bar on a terminal, log lines when stderr is not a terminal, nothing if `quiet`.
    pub fn new(quiet: bool) -> Self {
        let start = Instant::now();
        if quiet {
            return Progress {
                bar: None,
                log: false,
                start,
            };
        }
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            Progress {
                bar: Some(bar),
                log: false,
                start,
            }
        } else {
            Progress {
                bar: None,
                log: true,
                start,
            }
        }
    }

    /// Sets the number of steps (cases or configurations).
    pub fn set_length(&self, n: usize) {
        if let Some(b) = &self.bar {
            b.set_length(n as u64);
        }
    }

    /// One step done.
    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// What is being done now.
    pub fn stage(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        } else if self.log {
            eprintln!("[{:>7.1} s] {msg}", self.start.elapsed().as_secs_f64());
        }
    }

    /// Prints a result line to stdout without breaking the bar.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| println!("{line}")),
            None => println!("{line}"),
        }
    }

    /// A note on stderr (shown unless quiet).
    pub fn note(&self, line: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None if self.log => eprintln!("{line}"),
            None => {}
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    /// Seconds since the start.
    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
