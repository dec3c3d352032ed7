//! CG's residual update fused with the reductions it feeds
//! ([`crate::vector::VectorOps::cg_update`]) for [`DeviceVector`]: the
//! kernel `vec_cg_update` (`kernels/vector.cl`).

use super::DeviceVector;
use super::program::{Launch, reduction_groups};
use crate::vector::CgFusion;
use crate::{Real, Result};

impl<R: Real> DeviceVector<R> {
    /// `x ← x + α p; r ← r − α q` and what `then` asks (this vector is
    /// `r`; see [`CgFusion`]): one launch of `vec_cg_update`, then, when it
    /// reduces, the second pass of the reduction and one scalar read. The
    /// values are bitwise those of the unfused device sequence.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `p`, `q`, `x`,
    /// `inverse_diagonal` or `z` if its length or device differ.
    pub fn cg_update(
        &mut self,
        alpha: f64,
        p: &Self,
        q: &Self,
        x: &mut Self,
        then: CgFusion<'_, Self>,
    ) -> Result<Option<(f64, f64)>> {
        self.check_operand("p", p)?;
        self.check_operand("q", q)?;
        self.check_operand("x", x)?;
        let (mode, scaling) = match then {
            CgFusion::Update => (0u32, None),
            CgFusion::Norm => (1, None),
            CgFusion::Jacobi {
                inverse_diagonal,
                z,
            } => {
                self.check_operand("inverse_diagonal", inverse_diagonal)?;
                self.check_operand("z", z)?;
                (2, Some((inverse_diagonal, z)))
            }
        };
        if self.len == 0 {
            return Ok((mode > 0).then_some((0.0, 0.0)));
        }
        let device = self.device().clone();
        let n = self.len as u64;
        let (a, na) = (R::from_f64(alpha), R::from_f64(-alpha));
        // G as the multi-dot's first pass, so the partials are its partials
        let groups = reduction_groups(self.len, R::PRECISION);
        let m = mode as usize;
        let acc = self.program.acc_size();
        let mut state = self.program.lock();
        state.reserve(&device, groups * 2 * acc, 2 * acc)?;
        let (k, partials, results) = state.parts()?;
        // Unused d and z (modes 0 and 1) are any valid buffer: never read
        // or written.
        let (d, z) = match &scaling {
            Some((d, z)) => (&d.buffer, &z.buffer),
            None => (&p.buffer, &q.buffer),
        };
        // Argument order of vec_cg_update (kernels/vector.cl).
        Launch::new(&k.cg_update)
            .mem(&self.buffer)?
            .mem(&x.buffer)?
            .mem(&p.buffer)?
            .mem(&q.buffer)?
            .mem(d)?
            .mem(z)?
            .value(n)?
            .value(a)?
            .value(na)?
            .value(mode)?
            .mem(partials)?
            .run(&device, groups, "CG update (fused)")?;
        if m == 0 {
            return Ok(None);
        }
        Launch::new(&k.sum_final)
            .mem(partials)?
            .value(groups as u32)?
            .mem(results)?
            .run(&device, m, "CG update (reduction pass 2)")?;
        let mut bytes = vec![0u8; m * acc];
        device.read_scalars(results, 0, &mut bytes, "CG update results")?;
        let sums = self.program.decode_acc(&bytes);
        Ok(Some((sums[0], sums[m - 1])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opencl::testing;
    use crate::vector::assert_fused_is_unfused;

    /// On the tests' device (PoCL), f64 and f32: the fused kernel gives
    /// bitwise the unfused kernels' values.
    #[test]
    fn device_fused_update_is_the_unfused_sequence() {
        let device = testing::device();
        assert_fused_is_unfused::<DeviceVector<f64>>(
            &|v| DeviceVector::from_host(&device, v).unwrap(),
            &|v| v.to_host().unwrap(),
        );
        assert_fused_is_unfused::<DeviceVector<f32>>(
            &|v| {
                let v: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                DeviceVector::from_host(&device, &v).unwrap()
            },
            &|v| v.to_host().unwrap().iter().map(|&x| f64::from(x)).collect(),
        );
    }
}
