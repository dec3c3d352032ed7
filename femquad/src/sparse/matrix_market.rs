//! Matrix Market files (coordinate format): export and import of [`CsrMatrix`].
//!
//! The format (NIST's Matrix Market exchange format): a banner
//! `%%MatrixMarket matrix coordinate real general`, comment lines starting
//! with `%`, a size line `n_rows n_cols nnz`, then one line `i j a_ij` per
//! stored entry with **1-based** indices.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use super::csr::CsrMatrix;
use crate::{Error, Result};

/// The error for an I/O failure on `path`.
fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The error for a malformed file: the (1-based) line and the reason.
fn malformed(path: &Path, line: usize, reason: impl std::fmt::Display) -> Error {
    io_error(
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("line {line}: {reason} (Matrix Market coordinate format)"),
        ),
    )
}

impl CsrMatrix {
    /// Writes the matrix to `path` in Matrix Market coordinate format
    /// (`real general`, every stored entry, explicit zeros included, in row
    /// order, 1-based indices). Values are written with Rust's `{:e}`, the
    /// shortest decimal form that reads back to the same `f64`, so
    /// [`CsrMatrix::read_matrix_market`] restores the matrix bit for bit.
    ///
    /// # Errors
    /// [`Error::Io`] naming `path` if it cannot be created or written.
    pub fn write_matrix_market(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|e| io_error(path, e))?;
        let mut w = BufWriter::new(file);
        let mut write = || -> std::io::Result<()> {
            writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
            writeln!(w, "% written by femquad")?;
            writeln!(w, "{} {} {}", self.n_rows(), self.n_cols(), self.nnz())?;
            for i in 0..self.n_rows() {
                let (cols, vals) = self.row(i).expect("row in range");
                for (&j, &v) in cols.iter().zip(vals) {
                    writeln!(w, "{} {} {v:e}", i + 1, j + 1)?;
                }
            }
            w.flush()
        };
        write().map_err(|e| io_error(path, e))
    }

    /// Reads a matrix from a Matrix Market coordinate file with `real` or
    /// `integer` values, `general` or `symmetric` (the lower triangle given,
    /// mirrored on reading). Repeated entries are summed.
    ///
    /// # Errors
    /// [`Error::Io`] naming `path` if it cannot be read, or is malformed
    /// (with the line and the reason: a banner other than the supported
    /// ones, a bad size line, an index out of range, a value that does not
    /// parse or is not finite, fewer or more entries than declared).
    pub fn read_matrix_market(path: impl AsRef<Path>) -> Result<CsrMatrix> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| io_error(path, e))?;
        let mut lines = BufReader::new(file).lines().enumerate();
        let mut next = |what: &str| -> Result<Option<(usize, String)>> {
            match lines.next() {
                None => Ok(None),
                Some((k, Ok(l))) => Ok(Some((k + 1, l))),
                Some((k, Err(e))) => Err(malformed(path, k + 1, format!("reading {what}: {e}"))),
            }
        };

        let (_, banner) =
            next("the banner")?.ok_or_else(|| malformed(path, 1, "the file is empty"))?;
        let tokens: Vec<String> = banner.split_whitespace().map(str::to_lowercase).collect();
        let symmetric = match tokens.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            [
                "%%matrixmarket",
                "matrix",
                "coordinate",
                "real" | "integer",
                sym,
            ] => match sym {
                "general" => false,
                "symmetric" => true,
                other => {
                    return Err(malformed(
                        path,
                        1,
                        format!("symmetry `{other}` is not supported (general or symmetric)"),
                    ));
                }
            },
            _ => {
                return Err(malformed(
                    path,
                    1,
                    format!(
                        "expected the banner `%%MatrixMarket matrix coordinate real general` \
                         (or integer, or symmetric), got `{banner}`"
                    ),
                ));
            }
        };

        // Size line, after comments and blank lines.
        let (line_no, size) = loop {
            match next("the size line")? {
                None => return Err(malformed(path, 2, "the size line is missing")),
                Some((_, l)) if l.trim().is_empty() || l.starts_with('%') => continue,
                Some(found) => break found,
            }
        };
        let nums: Vec<usize> = size
            .split_whitespace()
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| malformed(path, line_no, format!("size line `{size}`: {e}")))?;
        let [n_rows, n_cols, nnz] = nums[..] else {
            return Err(malformed(
                path,
                line_no,
                format!("size line `{size}`: expected `n_rows n_cols nnz`"),
            ));
        };
        if symmetric && n_rows != n_cols {
            return Err(malformed(
                path,
                line_no,
                format!("a symmetric matrix must be square, got {n_rows} × {n_cols}"),
            ));
        }

        let mut entries = Vec::with_capacity(nnz.min(1 << 24) * if symmetric { 2 } else { 1 });
        let mut read = 0;
        while let Some((k, line)) = next("an entry")? {
            let t = line.trim();
            if t.is_empty() || t.starts_with('%') {
                continue;
            }
            if read == nnz {
                return Err(malformed(
                    path,
                    k,
                    format!("more entries than the {nnz} declared"),
                ));
            }
            let (i, j, v) = parse_entry(t).map_err(|reason| malformed(path, k, reason))?;
            if i == 0 || j == 0 || i > n_rows || j > n_cols {
                return Err(malformed(
                    path,
                    k,
                    format!("entry ({i}, {j}) outside the {n_rows} × {n_cols} matrix (1-based)"),
                ));
            }
            if symmetric && j > i {
                return Err(malformed(
                    path,
                    k,
                    format!("entry ({i}, {j}) above the diagonal in a symmetric file"),
                ));
            }
            entries.push((i - 1, j - 1, v));
            if symmetric && i != j {
                entries.push((j - 1, i - 1, v));
            }
            read += 1;
        }
        if read < nnz {
            return Err(malformed(
                path,
                line_no,
                format!("{nnz} entries declared, {read} found"),
            ));
        }
        CsrMatrix::from_triplets(n_rows, n_cols, &entries)
    }
}

/// Parses `i j value` with a finite value.
fn parse_entry(line: &str) -> std::result::Result<(usize, usize, f64), String> {
    let mut it = line.split_whitespace();
    let (Some(i), Some(j), Some(v), None) = (it.next(), it.next(), it.next(), it.next()) else {
        return Err(format!("expected `i j value`, got `{line}`"));
    };
    let index = |s: &str| {
        s.parse::<usize>()
            .map_err(|e| format!("index `{s}` in `{line}`: {e}"))
    };
    let value: f64 = v
        .parse()
        .map_err(|e| format!("value `{v}` in `{line}`: {e}"))?;
    if !value.is_finite() {
        return Err(format!("value `{v}` is not finite"));
    }
    Ok((index(i)?, index(j)?, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("femquad-mm-{}-{name}.mtx", std::process::id()))
    }

    #[test]
    fn round_trip_is_exact() {
        let values = [
            std::f64::consts::PI,
            -1.0 / 3.0,
            1e-300,
            -0.0,
            f64::MAX,
            f64::MIN_POSITIVE / 4.0, // subnormal
            123456789.125,
        ];
        let entries: Vec<_> = values
            .iter()
            .enumerate()
            .map(|(k, &v)| (k % 3, (5 * k) % 4, v))
            .collect();
        let a = CsrMatrix::from_triplets(3, 4, &entries).unwrap();
        let path = temp("round-trip");
        a.write_matrix_market(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("%%MatrixMarket matrix coordinate real general\n"));
        assert!(text.contains("\n3 4 7\n"), "{text}");
        assert!(text.contains("\n1 1 3.141592653589793e0\n"), "{text}");
        let b = CsrMatrix::read_matrix_market(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(a.pattern().same_structure(b.pattern()));
        let bits = |m: &CsrMatrix| m.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
    }

    #[test]
    fn symmetric_files_are_mirrored() {
        let path = temp("symmetric");
        std::fs::write(
            &path,
            "%%MatrixMarket matrix coordinate real symmetric\n% c\n\n2 2 2\n1 1 4\n2 1 -1.5\n",
        )
        .unwrap();
        let a = CsrMatrix::read_matrix_market(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(a.to_dense().unwrap(), vec![4.0, -1.5, -1.5, 0.0]);
    }

    #[test]
    fn malformed_files_name_line_and_reason() {
        let cases = [
            ("", "line 1: the file is empty"),
            (
                "%%MatrixMarket matrix array real general\n",
                "line 1: expected the banner",
            ),
            (
                "%%MatrixMarket matrix coordinate real hermitian\n",
                "symmetry `hermitian`",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2\n",
                "line 2: size line",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n",
                "line 3: entry (3, 1) outside",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n",
                "line 3: value `x`",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 NaN\n",
                "not finite",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n",
                "2 entries declared, 1 found",
            ),
            (
                "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n",
                "line 4: more entries",
            ),
            (
                "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n",
                "above the diagonal",
            ),
        ];
        for (k, (text, want)) in cases.iter().enumerate() {
            let path = temp(&format!("bad{k}"));
            std::fs::write(&path, text).unwrap();
            let msg = CsrMatrix::read_matrix_market(&path)
                .unwrap_err()
                .to_string();
            std::fs::remove_file(&path).unwrap();
            assert!(msg.contains(want), "case {k}: {msg}");
            assert!(msg.contains(path.to_str().unwrap()), "case {k}: {msg}");
        }
        let missing = temp("missing");
        assert!(matches!(
            CsrMatrix::read_matrix_market(&missing),
            Err(Error::Io { .. })
        ));
    }
}
