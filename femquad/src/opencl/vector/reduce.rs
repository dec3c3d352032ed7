//! Reductions of [`DeviceVector`]: two fixed-order passes on the device,
//! one read of the result (see the [module documentation](super)).

use super::program::{BATCH, Launch, reduction_groups};
use super::{DeviceVector, check_len, prefix_position};
use crate::{Real, Result};

impl<R: Real> DeviceVector<R> {
    /// Inner product `Σ_i x_i y_i` (this vector is `x`), accumulated on the
    /// device in a fixed order (bitwise reproducible).
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `y` if its length or device
    /// differ.
    pub fn dot(&self, y: &Self) -> Result<f64> {
        self.check_device("y", y.device())?;
        check_len("y", y.len(), self.len())?;
        Ok(self.dots(&[y])?[0])
    }

    /// Euclidean norm `‖x‖₂ = √(x·x)`.
    pub fn norm2(&self) -> Result<f64> {
        Ok(self.dots(&[self])?[0].sqrt())
    }

    /// Multi-dot: `[x·v_0, x·v_1, …]` (this vector is `x`): the first passes
    /// read `x` once per [`BATCH`] vectors, one second pass reduces all
    /// results, one read returns them. Each value is bitwise the single
    /// [`DeviceVector::dot`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `vs` (and the position) if a
    /// vector's length or device differ.
    pub fn dots(&self, vs: &[&Self]) -> Result<Vec<f64>> {
        self.dots_prefix(vs, self.len)
    }

    /// Multi-dot over the first `n` entries only: `[Σ_{i<n} x_i v_{0,i}, …]`
    /// (this vector is `x`; the vectors `vs` as long as `x`), in the fixed
    /// order of [`DeviceVector::dots`] — e.g. the owned entries of a
    /// distributed vector whose ghost entries follow them.
    ///
    /// # Errors
    /// Those of [`DeviceVector::dots`]; [`crate::Error::InvalidArgument`]
    /// naming `n` if it exceeds the vector's length.
    pub fn dots_prefix(&self, vs: &[&Self], n: usize) -> Result<Vec<f64>> {
        for (j, v) in vs.iter().enumerate() {
            self.check_operand("vs", v)
                .map_err(|e| prefix_position(e, "vs", j))?;
        }
        self.check_prefix(n)?;
        let m = vs.len();
        if m == 0 || n == 0 {
            return Ok(vec![0.0; m]);
        }
        let device = self.device();
        let groups = reduction_groups(n, R::PRECISION);
        let n = n as u64;
        let acc = self.program.acc_size();
        let mut state = self.program.lock();
        state.reserve(device, groups * m * acc, m * acc)?;
        let (k, partials, results) = state.parts()?;
        for (b, batch) in vs.chunks(BATCH).enumerate() {
            let mut l = Launch::new(&k.mdot_partials)
                .mem(&self.buffer)?
                .value(n)?
                .value(batch.len() as u32)?;
            for j in 0..BATCH {
                l = l.mem(&batch.get(j).unwrap_or(&batch[0]).buffer)?;
            }
            l.mem(partials)?.value((b * BATCH) as u32)?.run(
                device,
                groups,
                "multi-dot (pass 1)",
            )?;
        }
        Launch::new(&k.sum_final)
            .mem(partials)?
            .value(groups as u32)?
            .mem(results)?
            .run(device, m, "multi-dot (pass 2)")?;
        let mut bytes = vec![0u8; m * acc];
        device.read_scalars(results, 0, &mut bytes, "multi-dot results")?;
        Ok(self.program.decode_acc(&bytes))
    }

    /// Largest absolute value `‖x‖_∞ = max_i |x_i|` (0 for an empty vector;
    /// NaN if an entry is NaN).
    pub fn norm_inf(&self) -> Result<f64> {
        self.norm_inf_prefix(self.len)
    }

    /// `max_{i<n} |x_i|` over the first `n` entries only (0 for `n = 0`;
    /// NaN if one of them is NaN).
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `n` if it exceeds the
    /// vector's length.
    pub fn norm_inf_prefix(&self, n: usize) -> Result<f64> {
        self.check_prefix(n)?;
        if n == 0 {
            return Ok(0.0);
        }
        let device = self.device();
        let groups = reduction_groups(n, R::PRECISION);
        let acc = self.program.acc_size();
        let mut state = self.program.lock();
        state.reserve(device, groups * acc, acc)?;
        let (k, partials, results) = state.parts()?;
        Launch::new(&k.absmax_partials)
            .mem(&self.buffer)?
            .value(n as u64)?
            .mem(partials)?
            .run(device, groups, "max norm (pass 1)")?;
        Launch::new(&k.max_final)
            .mem(partials)?
            .value(groups as u32)?
            .mem(results)?
            .run(device, 1, "max norm (pass 2)")?;
        let mut bytes = vec![0u8; acc];
        device.read_scalars(results, 0, &mut bytes, "max norm result")?;
        Ok(self.program.decode_acc(&bytes)[0])
    }

    /// The first index whose entry is NaN or ±∞, if any, found on the
    /// device (one read of one index).
    pub fn first_non_finite(&self) -> Result<Option<usize>> {
        self.first_non_finite_prefix(self.len)
    }

    /// The first index below `n` whose entry is NaN or ±∞, if any (the
    /// search of [`DeviceVector::first_non_finite`] over the first `n`
    /// entries only).
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `n` if it exceeds the
    /// vector's length.
    pub fn first_non_finite_prefix(&self, n: usize) -> Result<Option<usize>> {
        self.check_prefix(n)?;
        if n == 0 {
            return Ok(None);
        }
        let device = self.device();
        let groups = reduction_groups(n, R::PRECISION);
        let n = n as u64;
        let mut state = self.program.lock();
        state.reserve(device, groups * 8, 8)?;
        let (k, partials, results) = state.parts()?;
        Launch::new(&k.nonfinite_partials)
            .mem(&self.buffer)?
            .value(n)?
            .mem(partials)?
            .run(device, groups, "non-finite search (pass 1)")?;
        Launch::new(&k.min_final)
            .mem(partials)?
            .value(groups as u32)?
            .value(n)?
            .mem(results)?
            .run(device, 1, "non-finite search (pass 2)")?;
        let mut bytes = [0u8; 8];
        device.read_scalars(results, 0, &mut bytes, "non-finite search result")?;
        let first = u64::from_ne_bytes(bytes);
        Ok((first < n).then_some(first as usize))
    }

    /// Checks that a prefix of `n` entries lies within the vector.
    fn check_prefix(&self, n: usize) -> Result<()> {
        if n <= self.len {
            Ok(())
        } else {
            Err(crate::Error::arg(
                "n",
                format!(
                    "a prefix of {n} entries exceeds the vector's {} entries",
                    self.len
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::opencl::testing;

    #[test]
    fn prefix_reductions_read_only_the_prefix() -> Result<()> {
        let device = testing::device();
        // a huge and a NaN entry after the prefix of 5 (like stale ghosts)
        let x = DeviceVector::from_host(&device, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 1e6, f64::NAN])?;
        let y = DeviceVector::from_host(&device, &[1.0f64, -1.0, 2.0, 0.5, 1.0, 1.0, 1.0])?;
        assert_eq!(x.dots_prefix(&[&y, &x], 5)?, vec![12.0, 55.0]);
        assert_eq!(x.dots_prefix(&[&y], 0)?, vec![0.0]);
        assert!(x.dots_prefix(&[&y], 7)?[0].is_nan());
        assert_eq!(x.norm_inf_prefix(5)?, 5.0);
        assert_eq!(x.norm_inf_prefix(6)?, 1e6);
        assert_eq!(x.first_non_finite_prefix(6)?, None);
        assert_eq!(x.first_non_finite_prefix(7)?, Some(6));
        for e in [
            x.dots_prefix(&[&y], 8).unwrap_err(),
            x.norm_inf_prefix(8).unwrap_err(),
            x.first_non_finite_prefix(8).unwrap_err(),
        ] {
            assert!(
                matches!(&e, Error::InvalidArgument { name, .. } if *name == "n"),
                "{e:?}"
            );
            assert!(
                e.to_string()
                    .contains("a prefix of 8 entries exceeds the vector's 7 entries"),
                "{e}"
            );
        }
        Ok(())
    }
}
