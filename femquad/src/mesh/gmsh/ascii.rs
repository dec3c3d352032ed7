//! Reading the records of an ASCII section: one record per line, as Gmsh
//! writes them, values separated by white space.

use std::str::FromStr;

use super::reader::{Fault, FaultKind, Reader};
use super::source::Section;

/// A [`Reader`] over the lines of an ASCII section.
pub(super) struct Ascii<'a> {
    bytes: &'a [u8],
    /// Start of the next line.
    next: usize,
    /// End of the section's content.
    end: usize,
    /// The current line (without its newline).
    line: (usize, usize),
    /// Position in the current line.
    pos: usize,
}

impl<'a> Ascii<'a> {
    /// A reader of section `s` of the file `bytes`.
    pub fn new(bytes: &'a [u8], s: &Section) -> Self {
        Ascii {
            bytes,
            next: s.start,
            end: s.end,
            line: (s.start, s.start),
            pos: s.start,
        }
    }

    /// The next whitespace-separated token of the line, as an offset range.
    fn token(&mut self) -> Result<(usize, usize), Fault> {
        let (line_start, line_end) = self.line;
        let line = &self.bytes[..line_end];
        while self.pos < line_end && line[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        let start = self.pos;
        while self.pos < line_end && !line[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(Fault {
                at: line_start,
                kind: FaultKind::Count,
            });
        }
        Ok((start, self.pos))
    }

    /// The next token parsed as a `T`, or a fault saying it is not
    /// `expected`.
    fn parse<T: FromStr>(&mut self, expected: &'static str) -> Result<T, Fault> {
        let (start, end) = self.token()?;
        std::str::from_utf8(&self.bytes[start..end])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or(Fault {
                at: self.line.0,
                kind: FaultKind::Token {
                    start,
                    end,
                    expected,
                },
            })
    }
}

impl Reader for Ascii<'_> {
    fn begin(&mut self) -> Result<usize, Fault> {
        while self.next < self.end {
            let start = self.next;
            let content = &self.bytes[start..self.end];
            let len = content
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(content.len());
            self.next = start + len + 1;
            if !content[..len].iter().all(u8::is_ascii_whitespace) {
                self.line = (start, start + len);
                self.pos = start;
                return Ok(start);
            }
        }
        Err(Fault {
            at: self.end,
            kind: FaultKind::NoRecord,
        })
    }

    fn size(&mut self) -> Result<u64, Fault> {
        self.parse("a non-negative integer")
    }

    fn int(&mut self) -> Result<i32, Fault> {
        self.parse("a 32-bit integer")
    }

    fn float(&mut self) -> Result<f64, Fault> {
        self.parse("a number")
    }

    fn end(&mut self) -> Result<(), Fault> {
        match self.token() {
            Ok(_) => Err(Fault {
                at: self.line.0,
                kind: FaultKind::Count,
            }),
            Err(_) => Ok(()),
        }
    }

    fn reserve(&self, _sizes: usize, _doubles: usize) -> Result<(), Fault> {
        Ok(())
    }

    fn line(&self) -> Option<&[u8]> {
        Some(&self.bytes[self.line.0..self.line.1])
    }

    fn rest(&mut self) -> Option<usize> {
        self.begin().ok()
    }

    fn left(&self) -> usize {
        self.end.saturating_sub(self.next)
    }
}
