//! The errors of the benchmark program.

use std::fmt;
use std::path::{Path, PathBuf};

/// Errors of the benchmark program.
#[derive(Debug)]
pub enum BenchError {
    /// An error of femquad (device, mesh, kernel build, …).
    Femquad(femquad::Error),
    /// Bad options.
    Usage(String),
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A CSV file could not be read or written (the cause names the record
    /// and line).
    Csv {
        /// The file.
        path: PathBuf,
        /// The column of the value that does not fit, if known.
        column: Option<String>,
        /// The cause.
        source: csv::Error,
    },
    /// The JSON output could not be made.
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// A figure could not be drawn.
    Plot(String),
    /// A result differs from its reference (the message says which and by
    /// how much).
    Check(String),
    /// Some cases failed their correctness check or hit an error.
    Failed(Vec<String>),
}

impl BenchError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        BenchError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A CSV error on `path`.
    pub fn csv(path: &Path, source: csv::Error) -> Self {
        BenchError::Csv {
            path: path.to_path_buf(),
            column: None,
            source,
        }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Femquad(e) => write!(f, "{e}"),
            BenchError::Usage(s) => write!(f, "{s}"),
            BenchError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BenchError::Csv {
                path,
                column,
                source,
            } => {
                write!(f, "{}: {source}", path.display())?;
                match column {
                    Some(c) => write!(f, " (column `{c}`)"),
                    None => Ok(()),
                }
            }
            BenchError::Json { path, source } => write!(f, "{}: {source}", path.display()),
            BenchError::Plot(s) => write!(f, "drawing a figure: {s}"),
            BenchError::Check(s) => write!(f, "{s}"),
            BenchError::Failed(list) => {
                write!(f, "{} configuration(s) failed:", list.len())?;
                for l in list {
                    write!(f, "\n  {l}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for BenchError {}

impl From<femquad::Error> for BenchError {
    fn from(e: femquad::Error) -> Self {
        BenchError::Femquad(e)
    }
}
