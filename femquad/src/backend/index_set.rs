//! [`IndexSet`]: a set of vector indices (e.g. the Dirichlet dofs) kept
//! where the vectors it indexes live, and the operations on them.

use super::{Location, Vector};
use crate::opencl::DeviceIndices;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// Indices into vectors of one location: on the host, or on a device (a
/// [`DeviceIndices`] buffer, uploaded once).
#[derive(Debug)]
pub enum IndexSet {
    /// Host indices.
    Host(Vec<u32>),
    /// Device indices.
    Device(DeviceIndices),
}

impl IndexSet {
    /// `indices`, placed where `like` lives (uploaded for a device vector).
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn located_like<R: Real>(like: &Vector<R>, indices: &[u32]) -> Result<Self> {
        Ok(match like {
            Vector::Host(_) => IndexSet::Host(indices.to_vec()),
            Vector::Device(d) => IndexSet::Device(DeviceIndices::from_host(d.device(), indices)?),
        })
    }

    /// Number of indices.
    pub fn len(&self) -> usize {
        match self {
            IndexSet::Host(v) => v.len(),
            IndexSet::Device(d) => d.len(),
        }
    }

    /// True if there are no indices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the indices live.
    pub fn location(&self) -> Location {
        match self {
            IndexSet::Host(_) => Location::Host,
            IndexSet::Device(d) => Location::of_device(d.device()),
        }
    }
}

/// The error for indices and a vector in different places.
fn misplaced(indices: &IndexSet, location: Location) -> Error {
    Error::arg(
        "indices",
        format!(
            "the indices are on {} but the vector on {location}",
            indices.location()
        ),
    )
}

/// Checks that every host index is below `len`.
fn check_bound(indices: &[u32], len: usize) -> Result<()> {
    match indices.iter().find(|&&i| i as usize >= len) {
        None => Ok(()),
        Some(i) => Err(Error::arg(
            "indices",
            format!("index {i} is out of range for a vector of {len} entries"),
        )),
    }
}

impl<R: Real> Vector<R> {
    /// `v[i] ← value` for every `i` in `indices` (this vector is `v`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `indices` if one is out of range or
    /// they live elsewhere than this vector.
    pub fn set_at(&mut self, indices: &IndexSet, value: f64) -> Result<()> {
        match (self, indices) {
            (Vector::Host(v), IndexSet::Host(idx)) => {
                check_bound(idx, v.len())?;
                for &i in idx {
                    v[i as usize] = R::from_f64(value);
                }
                Ok(())
            }
            (Vector::Device(d), IndexSet::Device(idx)) => d.set_at(idx, value),
            (v, idx) => Err(misplaced(idx, v.location())),
        }
    }

    /// `v[i] ← src[i]` for every `i` in `indices` (this vector is `v`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `src` (length or location) or
    /// `indices` (range or location).
    pub fn copy_at(&mut self, indices: &IndexSet, src: &Vector<R>) -> Result<()> {
        self.check_compatible("v", "src", src)?;
        match (self, indices, src) {
            (Vector::Host(v), IndexSet::Host(idx), Vector::Host(s)) => {
                check_bound(idx, v.len())?;
                for &i in idx {
                    v[i as usize] = s[i as usize];
                }
                Ok(())
            }
            (Vector::Device(d), IndexSet::Device(idx), Vector::Device(s)) => d.copy_at(idx, s),
            (v, idx, _) => Err(misplaced(idx, v.location())),
        }
    }
}

impl<R: Real> Vector<R> {
    /// Gather: `v[k] ← src[indices[k]]` (this vector is `v`, as long as
    /// `indices`), e.g. a vector put into another numbering.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `indices` for another length than
    /// this vector's, an index out of range for `src`, or indices living
    /// elsewhere than the vectors; `src` on another place or device.
    pub fn gather(&mut self, src: &Vector<R>, indices: &IndexSet) -> Result<()> {
        match (self, indices, src) {
            (Vector::Host(v), IndexSet::Host(idx), Vector::Host(s)) => {
                if idx.len() != v.len() {
                    return Err(Error::arg(
                        "indices",
                        format!("{} indices for a vector of {} entries", idx.len(), v.len()),
                    ));
                }
                check_bound(idx, s.len())?;
                for (x, &i) in v.iter_mut().zip(idx) {
                    *x = s[i as usize];
                }
                Ok(())
            }
            (Vector::Device(d), IndexSet::Device(idx), Vector::Device(s)) => d.gather(s, idx),
            (v, idx, _) if idx.location() != v.location() => Err(misplaced(idx, v.location())),
            (v, _, s) => Err(Error::arg(
                "src",
                format!("is on {} but the vector on {}", s.location(), v.location()),
            )),
        }
    }

    /// Scatter: `v[indices[k]] ← src[k]` (this vector is `v`; `src` as long
    /// as `indices`, which must be distinct: checked on a device; on the
    /// host the last write of a repeated index wins).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `src` for another length than the
    /// indices' or another place; `indices` for an index out of range, a
    /// repeated one (on a device), or indices living elsewhere.
    pub fn scatter(&mut self, indices: &IndexSet, src: &Vector<R>) -> Result<()> {
        match (self, indices, src) {
            (Vector::Host(v), IndexSet::Host(idx), Vector::Host(s)) => {
                if idx.len() != s.len() {
                    return Err(Error::arg(
                        "src",
                        format!("{} entries for {} indices", s.len(), idx.len()),
                    ));
                }
                check_bound(idx, v.len())?;
                for (&i, &x) in idx.iter().zip(s) {
                    v[i as usize] = x;
                }
                Ok(())
            }
            (Vector::Device(d), IndexSet::Device(idx), Vector::Device(s)) => d.scatter(idx, s),
            (v, idx, _) if idx.location() != v.location() => Err(misplaced(idx, v.location())),
            (v, _, s) => Err(Error::arg(
                "src",
                format!("is on {} but the vector on {}", s.location(), v.location()),
            )),
        }
    }

    /// Scatter-add: `v[indices[k]] ← v[indices[k]] + src[from + k]` (this
    /// vector is `v`; the indices distinct: checked on a device; on the
    /// host a repeated index adds twice), one addition per entry.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `src` if it is shorter than
    /// `from + indices.len()` or on another place; `indices` for an index
    /// out of range, a repeated one (on a device), or indices living
    /// elsewhere.
    pub fn scatter_add(&mut self, indices: &IndexSet, src: &Vector<R>, from: usize) -> Result<()> {
        match (self, indices, src) {
            (Vector::Host(v), IndexSet::Host(idx), Vector::Host(s)) => {
                let Some(part) = from.checked_add(idx.len()).and_then(|end| s.get(from..end))
                else {
                    return Err(Error::arg(
                        "src",
                        format!(
                            "entries {from}..{from}+{} pass the end of a vector of {} entries",
                            idx.len(),
                            s.len()
                        ),
                    ));
                };
                check_bound(idx, v.len())?;
                for (&i, &x) in idx.iter().zip(part) {
                    v[i as usize] += x;
                }
                Ok(())
            }
            (Vector::Device(d), IndexSet::Device(idx), Vector::Device(s)) => {
                d.scatter_add(idx, s, from)
            }
            (v, idx, _) if idx.location() != v.location() => Err(misplaced(idx, v.location())),
            (v, _, s) => Err(Error::arg(
                "src",
                format!("is on {} but the vector on {}", s.location(), v.location()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_index_operations() {
        let mut v = Vector::from(vec![1.0f64, 2.0, 3.0, 4.0]);
        let idx = IndexSet::located_like(&v, &[0, 2]).unwrap();
        assert_eq!(idx.len(), 2);
        v.set_at(&idx, -1.0).unwrap();
        assert_eq!(v.to_host().unwrap(), vec![-1.0, 2.0, -1.0, 4.0]);
        let src = Vector::from(vec![10.0, 20.0, 30.0, 40.0]);
        v.copy_at(&idx, &src).unwrap();
        assert_eq!(v.to_host().unwrap(), vec![10.0, 2.0, 30.0, 4.0]);
        let far = IndexSet::Host(vec![7]);
        let e = v.set_at(&far, 0.0).unwrap_err().to_string();
        assert!(e.contains("`indices`") && e.contains("index 7"), "{e}");
        let short = Vector::from(vec![1.0]);
        let e = v.copy_at(&idx, &short).unwrap_err().to_string();
        assert!(e.contains("`src`"), "{e}");
    }

    /// Gather and scatter move entries by index, scatter inverting gather
    /// for a permutation; wrong lengths and indices are named.
    #[test]
    fn host_gather_and_scatter() {
        let src = Vector::from(vec![10.0f64, 20.0, 30.0, 40.0]);
        let perm = IndexSet::Host(vec![2, 0, 3, 1]);
        let mut g = Vector::from(vec![0.0; 4]);
        g.gather(&src, &perm).unwrap();
        assert_eq!(g.to_host().unwrap(), vec![30.0, 10.0, 40.0, 20.0]);
        let mut back = Vector::from(vec![0.0; 4]);
        back.scatter(&perm, &g).unwrap();
        assert_eq!(back.to_host().unwrap(), src.to_host().unwrap());
        let mut short = Vector::from(vec![0.0; 3]);
        let e = short.gather(&src, &perm).unwrap_err().to_string();
        assert!(
            e.contains("`indices`") && e.contains("4 indices for a vector of 3"),
            "{e}"
        );
        let e = back.scatter(&perm, &short).unwrap_err().to_string();
        assert!(
            e.contains("`src`") && e.contains("3 entries for 4 indices"),
            "{e}"
        );
        let far = IndexSet::Host(vec![0, 9, 1, 2]);
        let e = g.gather(&src, &far).unwrap_err().to_string();
        assert!(e.contains("index 9"), "{e}");
        // scatter-add from an offset: v[perm[k]] += src[1 + k], k < 3
        let three = IndexSet::Host(vec![3, 0, 2]);
        back.scatter_add(&three, &src, 1).unwrap();
        assert_eq!(back.to_host().unwrap(), vec![40.0, 20.0, 70.0, 60.0]);
        let e = back.scatter_add(&three, &src, 2).unwrap_err().to_string();
        assert!(
            e.contains("`src`") && e.contains("entries 2..2+3 pass the end of a vector of 4"),
            "{e}"
        );
    }
}
