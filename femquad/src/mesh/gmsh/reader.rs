//! One interface for reading the records of a section, ASCII or binary, and
//! the errors that say which record is wrong and why.
//!
//! The sections `$Entities`, `$Nodes` and `$Elements` hold the same values
//! in both encodings: a record is a line of whitespace-separated numbers in
//! an ASCII file, and the same numbers as raw `int`, `size_t` and `double`
//! in a binary one. The parsers of these sections ([`super::entities`],
//! [`super::nodes`], [`super::elements`]) are written once against the
//! [`Reader`] trait, implemented by [`super::ascii::Ascii`] and
//! [`super::binary::Binary`]; [`Records`] turns what a reader reports
//! ([`Fault`]) into an [`Error::MeshFile`] naming the record.

use std::fmt::Display;

use super::source::{Section, Source, show};
use crate::{Error, Result};

/// Why a record could not be read.
#[derive(Clone, Copy, Debug)]
pub(super) enum FaultKind {
    /// ASCII: the section has no more records.
    NoRecord,
    /// Binary: the data needs `needed` bytes but the section has `left`.
    Truncated { needed: usize, left: usize },
    /// ASCII: the line has too few or too many values.
    Count,
    /// ASCII: the token at `start..end` is not `expected` (e.g. "a number").
    Token {
        start: usize,
        end: usize,
        expected: &'static str,
    },
}

/// A [`FaultKind`] at byte offset `at` (the line's start in ASCII).
#[derive(Clone, Copy, Debug)]
pub(super) struct Fault {
    pub at: usize,
    pub kind: FaultKind,
}

/// Reads the values of one section's records.
pub(super) trait Reader {
    /// Starts the next record and returns its offset (ASCII: moves to the
    /// next non-blank line; binary: the current position).
    fn begin(&mut self) -> std::result::Result<usize, Fault>;
    /// Reads a `size_t` (ASCII: a non-negative integer).
    fn size(&mut self) -> std::result::Result<u64, Fault>;
    /// Reads an `int` (32 bits).
    fn int(&mut self) -> std::result::Result<i32, Fault>;
    /// Reads a `double`.
    fn float(&mut self) -> std::result::Result<f64, Fault>;
    /// Ends the record (ASCII: nothing may remain on the line).
    fn end(&mut self) -> std::result::Result<(), Fault>;
    /// Checks, in binary, that the section holds `sizes` more `size_t` and
    /// `doubles` more `double` values; nothing in ASCII.
    fn reserve(&self, sizes: usize, doubles: usize) -> std::result::Result<(), Fault>;
    /// The current record's line (ASCII), for messages.
    fn line(&self) -> Option<&[u8]>;
    /// After the last record: the offset of anything but white space left
    /// in the section.
    fn rest(&mut self) -> Option<usize>;
    /// Bytes left in the section (every record takes at least one), to
    /// bound what counts read from the file may allocate.
    fn left(&self) -> usize;
}

/// A section read through a [`Reader`], with errors located in the file.
pub(super) struct Records<'s, 'a, R> {
    pub src: &'s Source<'a>,
    pub sec: &'s Section,
    pub r: R,
}

/// The [`Records`] result type: the record's offset and its values.
pub(super) type Record<T> = Result<(usize, T)>;

impl<'s, 'a, R: Reader> Records<'s, 'a, R> {
    /// Reads section `sec` of `src` with `r`.
    pub fn new(src: &'s Source<'a>, sec: &'s Section, r: R) -> Self {
        Records { src, sec, r }
    }

    /// Reads one record with `read`. On failure the error describes the
    /// record by `what`, a phrase that follows "expected", e.g. `3
    /// coordinates 'x y z' for node 7 of node block 1 of 4`.
    pub fn record<T>(
        &mut self,
        what: impl FnOnce() -> String,
        read: impl FnOnce(&mut R) -> std::result::Result<T, Fault>,
    ) -> Record<T> {
        self.try_record(read).map_err(|f| self.fault(f, what))
    }

    /// [`Records::record`] leaving the fault to the caller.
    pub fn try_record<T>(
        &mut self,
        read: impl FnOnce(&mut R) -> std::result::Result<T, Fault>,
    ) -> std::result::Result<(usize, T), Fault> {
        let at = self.r.begin()?;
        let value = read(&mut self.r)?;
        self.r.end()?;
        Ok((at, value))
    }

    /// Reads the header of `$Nodes` or `$Elements`, `numEntityBlocks
    /// num{Item}s min{Item}Tag max{Item}Tag` (`item` is `Node` or
    /// `Element`), and returns the number of blocks and of items, which must
    /// not be 0.
    pub fn section_header(&mut self, item: &str) -> Record<(u64, u64)> {
        let name = &self.sec.name;
        let (at, counts) = self.record(
            || format!("the ${name} header 'numEntityBlocks num{item}s min{item}Tag max{item}Tag'"),
            |r| {
                let counts = (r.size()?, r.size()?);
                r.size()?;
                r.size()?;
                Ok(counts)
            },
        )?;
        if counts.1 == 0 {
            let items = item.to_lowercase();
            return Err(self.err(at, format!("the mesh has no {items}s")));
        }
        Ok((at, counts))
    }

    /// Reads the header of block `b` of `n` of `$Nodes` or `$Elements`,
    /// `entityDim entityTag {third} num{Item}sInBlock`: three `int` and a
    /// `size_t`.
    pub fn block_header(
        &mut self,
        (b, n): (u64, u64),
        item: &str,
        third: &str,
    ) -> Record<(i32, i32, i32, u64)> {
        let items = item.to_lowercase();
        self.record(
            || format!("the header of {items} block {b} of {n} 'entityDim entityTag {third} num{item}sInBlock'"),
            |r| Ok((r.int()?, r.int()?, r.int()?, r.size()?)),
        )
    }

    /// After the last block of `$Nodes` or `$Elements` (header at `at`):
    /// nothing may follow, and the blocks must hold the `announced` number
    /// of items.
    pub fn end_blocks(
        &mut self,
        at: usize,
        (n_blocks, announced): (u64, u64),
        item: &str,
        held: usize,
    ) -> Result<()> {
        let name = &self.sec.name;
        let items = item.to_lowercase();
        self.finish(|| format!("the {n_blocks} {items} blocks the ${name} header announces"))?;
        if held as u64 != announced {
            return Err(self.err(
                at,
                format!(
                    "the ${name} header announces {announced} {items}s but its blocks hold {held}"
                ),
            ));
        }
        Ok(())
    }

    /// The error for fault `f` in the record described by `what`.
    pub fn fault(&self, f: Fault, what: impl FnOnce() -> String) -> Error {
        let name = &self.sec.name;
        let line = || self.r.line().map(show).unwrap_or_default();
        let reason = match f.kind {
            FaultKind::NoRecord => format!("${name} ends early: expected {}", what()),
            FaultKind::Truncated { needed, left } => format!(
                "truncated binary ${name} section: {} is missing ({needed} bytes needed, {left} \
                 left)",
                what()
            ),
            FaultKind::Count => format!("expected {}, found '{}'", what(), line()),
            FaultKind::Token {
                start,
                end,
                expected,
            } => format!(
                "expected {}, found '{}': '{}' is not {expected}",
                what(),
                line(),
                show(&self.src.bytes[start..end])
            ),
        };
        self.src.err(f.at, reason)
    }

    /// Checks that the section can hold `sizes` more `size_t` and `doubles`
    /// more `double` values (binary); `what` names them.
    pub fn reserve(
        &self,
        sizes: usize,
        doubles: usize,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        self.r
            .reserve(sizes, doubles)
            .map_err(|f| self.fault(f, what))
    }

    /// The error for a record at `at` that was read but holds a value that
    /// is not `what`: the line in ASCII, `value` in binary.
    pub fn reject(&self, at: usize, what: &str, value: impl Display) -> Error {
        let found = match self.r.line() {
            Some(line) => format!("'{}'", show(line)),
            None => value.to_string(),
        };
        self.src.err(at, format!("expected {what}, found {found}"))
    }

    /// An error at `at` with `reason`.
    pub fn err(&self, at: usize, reason: impl Into<String>) -> Error {
        self.src.err(at, reason)
    }

    /// After the last record: nothing but white space may follow. `after`
    /// says what came before, e.g. `the 4 node blocks the $Nodes header
    /// announces`.
    pub fn finish(&mut self, after: impl FnOnce() -> String) -> Result<()> {
        let Some(at) = self.r.rest() else {
            return Ok(());
        };
        let what = match self.r.line() {
            Some(line) => format!("line '{}'", show(line)),
            None => "data".to_string(),
        };
        Err(self
            .src
            .err(at, format!("unexpected {what} after {}", after())))
    }

    /// `n` items capped by what the rest of the section can hold if each
    /// takes at least `bytes` bytes, for `Vec::with_capacity`: counts read
    /// from a file must not make it allocate more than a few times its size.
    pub fn capacity(&self, n: u64, bytes: usize) -> usize {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        n.min(self.r.left() / bytes.max(1))
    }
}
