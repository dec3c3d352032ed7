//! The file being read: its `$Name … $EndName` sections, byte offsets turned
//! into lines, and the errors located in it.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Sections femquad reads; a file may hold each of them once.
const READ_SECTIONS: [&str; 5] = [
    "MeshFormat",
    "PhysicalNames",
    "Entities",
    "Nodes",
    "Elements",
];

/// A `$Name … $EndName` section: offsets into the file.
#[derive(Clone, Debug)]
pub(super) struct Section {
    /// `Name`, without the `$`.
    pub name: String,
    /// Offset of the `$Name` line.
    pub header: usize,
    /// Offset of the first content byte (after the `$Name` line).
    pub start: usize,
    /// Offset one past the content: the newline before `$EndName` is the
    /// last content byte (so `end > start` unless the section is empty).
    pub end: usize,
}

/// The file being read, for finding sections and locating errors.
pub(super) struct Source<'a> {
    /// The file's name, for messages.
    pub path: PathBuf,
    /// The whole file.
    pub bytes: &'a [u8],
    /// `true` once [`Source::scan`] has seen a binary file.
    binary: bool,
    /// In a binary file, the offset where binary data begins (line numbers
    /// after it are meaningless).
    binary_from: usize,
    /// The sections, in file order (after [`Source::scan`]).
    sections: Vec<Section>,
}

impl<'a> Source<'a> {
    /// A source not yet split into sections.
    pub fn new(path: &Path, bytes: &'a [u8]) -> Self {
        Source {
            path: path.to_path_buf(),
            bytes,
            binary: false,
            binary_from: usize::MAX,
            sections: Vec::new(),
        }
    }

    /// The section called `name`, if the file has one.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The section called `name`, or an error saying the file has none.
    pub fn require(&self, name: &str) -> Result<&Section> {
        self.section(name)
            .ok_or_else(|| self.err(self.bytes.len(), format!("the file has no ${name} section")))
    }

    /// 1-based line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.bytes.len());
        self.bytes[..end].iter().filter(|&&b| b == b'\n').count() + 1
    }

    /// Where byte `offset` is, for a message: `line N`, or `byte offset N`
    /// in binary data.
    pub fn place(&self, offset: usize) -> String {
        if self.binary && offset >= self.binary_from {
            format!("byte offset {offset}")
        } else {
            format!("line {}", self.line_of(offset))
        }
    }

    /// An [`Error::MeshFile`] located at byte `offset`: its line, or in
    /// binary data (where lines mean nothing) line 0 with the section and
    /// offset added to the reason.
    pub fn err(&self, offset: usize, reason: impl Into<String>) -> Error {
        let reason = reason.into();
        if self.binary && offset >= self.binary_from {
            let section = self
                .sections
                .iter()
                .find(|s| (s.start..s.end).contains(&offset))
                .map_or(String::new(), |s| format!("section ${}, ", s.name));
            Error::MeshFile {
                path: self.path.clone(),
                line: 0,
                reason: format!("{reason} (binary file: {section}byte offset {offset})"),
            }
        } else {
            Error::MeshFile {
                path: self.path.clone(),
                line: self.line_of(offset),
                reason,
            }
        }
    }

    /// Splits the file into its `$Name … $EndName` sections; `binary` is
    /// what `$MeshFormat` says. Every section must be closed, nothing but
    /// white space may stand between sections, and a section femquad reads
    /// may appear only once.
    pub fn scan(&mut self, binary: bool) -> Result<()> {
        self.binary = binary;
        let bytes = self.bytes;
        let mut pos = 0;
        loop {
            while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
                pos += 1;
            }
            if pos == bytes.len() {
                return Ok(());
            }
            let eol = line_end(bytes, pos);
            let line = show(&bytes[pos..eol]);
            let name = line.strip_prefix('$').unwrap_or("");
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(self.err(
                    pos,
                    format!("expected a section header such as $Nodes, found '{line}'"),
                ));
            }
            if let Some(opened) = name.strip_prefix("End") {
                return Err(self.err(pos, format!("${name} without a matching ${opened}")));
            }
            let end_tag = format!("\n$End{name}");
            let Some(nl) = find(bytes, end_tag.as_bytes(), eol) else {
                return Err(self.err(
                    pos,
                    format!("truncated file: section ${name} has no $End{name}"),
                ));
            };
            if let Some(first) = self.section(name)
                && READ_SECTIONS.contains(&name)
            {
                return Err(self.err(
                    pos,
                    format!(
                        "a second ${name} section (the first is at line {}); femquad reads one",
                        self.line_of(first.header)
                    ),
                ));
            }
            // `nl >= eol`, so the content is empty when the $End line
            // follows the header at once
            let start = (eol + 1).min(nl + 1);
            if binary && !matches!(name, "MeshFormat" | "PhysicalNames") {
                self.binary_from = self.binary_from.min(start);
            }
            self.sections.push(Section {
                name: name.to_string(),
                header: pos,
                start,
                end: nl + 1,
            });
            pos = nl + end_tag.len();
            let rest_end = line_end(bytes, pos);
            if !bytes[pos..rest_end].iter().all(u8::is_ascii_whitespace) {
                return Err(self.err(pos, format!("unexpected text after $End{name}")));
            }
            pos = rest_end;
        }
    }
}

/// Shows at most 40 characters of a line in a message.
pub(super) fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Offset of the first `needle` (not empty) at or after `from`.
///
/// Looks for the needle's `$` if it has one (section tags are the only `$`
/// of an ASCII file, and binary data holds few), skipping 64-byte blocks
/// without it in a loop the compiler vectorizes: the scan of a 50 MB binary
/// file then costs a few milliseconds.
pub(super) fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    const BLOCK: usize = 64;
    let anchor = needle.iter().position(|&b| b == b'$').unwrap_or(0);
    let &byte = needle.get(anchor)?;
    let last = haystack.len().checked_sub(needle.len())?;
    // candidate positions of the anchor byte: from + anchor ..= last + anchor
    let mut i = from.checked_add(anchor)?;
    let stop = last + anchor;
    while i <= stop {
        while i + BLOCK <= stop
            && !haystack[i..i + BLOCK]
                .iter()
                .fold(false, |seen, &b| seen | (b == byte))
        {
            i += BLOCK;
        }
        i += haystack[i..=stop].iter().position(|&b| b == byte)?;
        if haystack[i - anchor..].starts_with(needle) {
            return Some(i - anchor);
        }
        i += 1;
    }
    None
}

/// Offset of the newline that ends the line holding `from` (or the end of
/// `bytes`); `from <= bytes.len()`.
pub(super) fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| from + i)
}
