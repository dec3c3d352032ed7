//! The ASCII sections of every MSH file: `$MeshFormat` (version, encoding,
//! byte order) and `$PhysicalNames`.

use super::PhysicalGroup;
use super::ascii::Ascii;
use super::reader::{Reader, Records};
use super::source::{Section, Source, line_end, show};
use crate::Result;

/// What `$MeshFormat` says.
#[derive(Clone, Copy, Debug)]
pub(super) struct Format {
    /// Binary (file type 1) rather than ASCII (0).
    pub binary: bool,
    /// Byte order of a binary file (from the integer 1 that follows the
    /// version line).
    pub little_endian: bool,
    /// Bytes of a `size_t`: 8 (or 4).
    pub size_t: usize,
}

/// Reads `$MeshFormat`, which must open the file: version 4.1, file type,
/// data size and, in a binary file, the byte order.
pub(super) fn mesh_format(src: &Source) -> Result<Format> {
    let bytes = src.bytes;
    if !bytes.starts_with(b"$MeshFormat") {
        let first = &bytes[..line_end(bytes, 0)];
        return Err(src.err(
            0,
            if bytes.is_empty() {
                "empty file: not a Gmsh MSH file".to_string()
            } else {
                format!(
                    "not a Gmsh MSH file: the first line must be $MeshFormat, found '{}'",
                    show(first)
                )
            },
        ));
    }
    let start = (line_end(bytes, 0) + 1).min(bytes.len());
    let eol = line_end(bytes, start);
    let line = &bytes[start..eol];
    let toks: Vec<&[u8]> = line
        .split(u8::is_ascii_whitespace)
        .filter(|t| !t.is_empty())
        .collect();
    let bad = || {
        src.err(
            start,
            format!(
                "invalid $MeshFormat line '{}': expected 'version file-type data-size', e.g. '4.1 0 8'",
                show(line)
            ),
        )
    };
    let [version, file_type, data_size] = toks[..] else {
        return Err(bad());
    };
    let version = String::from_utf8_lossy(version);
    if version.parse::<f64>().is_err() {
        return Err(bad());
    }
    if version != "4.1" {
        return Err(src.err(
            start,
            format!(
                "MSH version {version} is not supported; re-export as 4.1 (gmsh -format msh41, \
                 or Mesh.MshFileVersion = 4.1)"
            ),
        ));
    }
    let binary = match file_type {
        b"0" => false,
        b"1" => true,
        t => {
            return Err(src.err(
                start,
                format!(
                    "file type '{}' is invalid: 0 for ASCII, 1 for binary",
                    show(t)
                ),
            ));
        }
    };
    let size_t = match data_size {
        b"8" => 8,
        b"4" => 4,
        t => {
            return Err(src.err(
                start,
                format!(
                    "data size '{}' is not supported: size_t must be 8 bytes (or 4)",
                    show(t)
                ),
            ));
        }
    };
    let mut little_endian = true;
    if binary {
        little_endian = match bytes.get(eol + 1..).and_then(<[u8]>::first_chunk::<4>) {
            Some(&b) if u32::from_le_bytes(b) == 1 => true,
            Some(&b) if u32::from_be_bytes(b) == 1 => false,
            _ => {
                return Err(src.err(
                    eol + 1,
                    "binary $MeshFormat: the integer 1 that gives the byte order is missing",
                ));
            }
        };
    }
    Ok(Format {
        binary,
        little_endian,
        size_t,
    })
}

/// Reads `$PhysicalNames` (ASCII in binary files too): the number of names,
/// then lines `dim tag "name"`.
pub(super) fn physical_names(src: &Source, s: &Section) -> Result<Vec<PhysicalGroup>> {
    let mut rec = Records::new(src, s, Ascii::new(src.bytes, s));
    let (_, count) = rec.record(
        || "the number of names in $PhysicalNames".to_string(),
        |r| r.size(),
    )?;
    let mut groups = Vec::with_capacity(rec.capacity(count, 7));
    for _ in 0..count {
        let Ok(at) = rec.r.begin() else {
            return Err(src.err(
                s.end,
                format!(
                    "$PhysicalNames announces {count} names but holds {}",
                    groups.len()
                ),
            ));
        };
        let line = rec.r.line().unwrap_or_default();
        let group = physical_name(&String::from_utf8_lossy(line));
        groups.push(group.ok_or_else(|| {
            src.err(
                at,
                format!(
                    "$PhysicalNames: expected 'dimension tag \"name\"', found '{}'",
                    show(line)
                ),
            )
        })?);
    }
    if let Some(at) = rec.r.rest() {
        return Err(src.err(
            at,
            format!("$PhysicalNames holds more than the {count} names it announces"),
        ));
    }
    Ok(groups)
}

/// A line `dim tag "name"` of `$PhysicalNames`.
fn physical_name(text: &str) -> Option<PhysicalGroup> {
    let (head, quoted) = text.split_once('"')?;
    let (name, tail) = quoted.rsplit_once('"')?;
    let [dim, tag] = head.split_whitespace().collect::<Vec<_>>()[..] else {
        return None;
    };
    let dim: usize = dim.parse().ok().filter(|&d| d <= 3)?;
    tail.trim().is_empty().then_some(PhysicalGroup {
        dim,
        tag: tag.parse().ok()?,
        name: name.to_string(),
    })
}
