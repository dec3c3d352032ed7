//! Reading the records of a binary section: raw `int` (4 bytes), `size_t`
//! (4 or 8 bytes, as `$MeshFormat` says) and `double` (8 bytes), in the
//! file's byte order.

use super::header::Format;
use super::reader::{Fault, FaultKind, Reader};
use super::source::Section;

/// A [`Reader`] over the data of a binary section.
pub(super) struct Binary<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// End of the data: the newline Gmsh writes before `$EndName` is not
    /// part of it.
    end: usize,
    little_endian: bool,
    size_t: usize,
}

impl<'a> Binary<'a> {
    /// A reader of section `s` of the file `bytes`, whose `$MeshFormat` is
    /// `format`.
    pub fn new(bytes: &'a [u8], s: &Section, format: &Format) -> Self {
        Binary {
            bytes,
            pos: s.start,
            end: s.end.saturating_sub(1).max(s.start),
            little_endian: format.little_endian,
            size_t: format.size_t,
        }
    }

    /// The next `N` bytes.
    #[inline]
    fn take<const N: usize>(&mut self) -> Result<[u8; N], Fault> {
        let Some(&bytes) = self.bytes[self.pos..self.end].first_chunk::<N>() else {
            return Err(Fault {
                at: self.pos,
                kind: FaultKind::Truncated {
                    needed: N,
                    left: self.end - self.pos,
                },
            });
        };
        self.pos += N;
        Ok(bytes)
    }
}

impl Reader for Binary<'_> {
    fn begin(&mut self) -> Result<usize, Fault> {
        Ok(self.pos)
    }

    #[inline]
    fn size(&mut self) -> Result<u64, Fault> {
        Ok(match (self.size_t, self.little_endian) {
            (4, true) => u32::from_le_bytes(self.take()?).into(),
            (4, false) => u32::from_be_bytes(self.take()?).into(),
            (_, true) => u64::from_le_bytes(self.take()?),
            (_, false) => u64::from_be_bytes(self.take()?),
        })
    }

    #[inline]
    fn int(&mut self) -> Result<i32, Fault> {
        let b = self.take()?;
        Ok(if self.little_endian {
            i32::from_le_bytes(b)
        } else {
            i32::from_be_bytes(b)
        })
    }

    #[inline]
    fn float(&mut self) -> Result<f64, Fault> {
        let b = self.take()?;
        Ok(if self.little_endian {
            f64::from_le_bytes(b)
        } else {
            f64::from_be_bytes(b)
        })
    }

    fn end(&mut self) -> Result<(), Fault> {
        Ok(())
    }

    fn reserve(&self, sizes: usize, doubles: usize) -> Result<(), Fault> {
        let needed = sizes
            .saturating_mul(self.size_t)
            .saturating_add(doubles.saturating_mul(8));
        let left = self.end - self.pos;
        if needed > left {
            return Err(Fault {
                at: self.pos,
                kind: FaultKind::Truncated { needed, left },
            });
        }
        Ok(())
    }

    fn line(&self) -> Option<&[u8]> {
        None
    }

    fn rest(&mut self) -> Option<usize> {
        let rest = &self.bytes[self.pos..self.end];
        (!rest.iter().all(u8::is_ascii_whitespace)).then_some(self.pos)
    }

    fn left(&self) -> usize {
        self.end - self.pos
    }
}
