//! [`VectorOps`] for [`DeviceVector`]: every operation a device kernel
//! (see [the module](super)).

use std::sync::Arc;

use super::{DeviceVector, device_label};
use crate::vector::{CgFusion, VectorOps, check_len_of};
use crate::{Error, Precision, Real, Result};

impl<R: Real> VectorOps for DeviceVector<R> {
    fn len(&self) -> usize {
        DeviceVector::len(self)
    }

    fn precision(&self) -> Precision {
        R::PRECISION
    }

    fn zeros_like(&self) -> Result<Self> {
        DeviceVector::zeros_like(self)
    }

    fn check_compatible(&self, own: &str, name: &'static str, other: &Self) -> Result<()> {
        if !Arc::ptr_eq(self.device(), other.device()) {
            return Err(Error::arg(
                name,
                format!(
                    "`{name}` is on {} but `{own}` on {} (a different device or context)",
                    device_label(other.device()),
                    device_label(self.device())
                ),
            ));
        }
        check_len_of(own, name, other.len(), self.len())
    }

    fn copy_from(&mut self, x: &Self) -> Result<()> {
        DeviceVector::copy_from(self, x)
    }

    fn fill(&mut self, value: f64) -> Result<()> {
        DeviceVector::fill(self, value)
    }

    fn scale(&mut self, alpha: f64) -> Result<()> {
        DeviceVector::scale(self, alpha)
    }

    fn axpy(&mut self, alpha: f64, x: &Self) -> Result<()> {
        DeviceVector::axpy(self, alpha, x)
    }

    fn axpby(&mut self, alpha: f64, x: &Self, beta: f64) -> Result<()> {
        DeviceVector::axpby(self, alpha, x, beta)
    }

    fn pointwise_mult(&mut self, x: &Self, z: &Self) -> Result<()> {
        DeviceVector::pointwise_mult(self, x, z)
    }

    fn dot(&self, y: &Self) -> Result<f64> {
        DeviceVector::dot(self, y)
    }

    fn norm2(&self) -> Result<f64> {
        DeviceVector::norm2(self)
    }

    fn norm_inf(&self) -> Result<f64> {
        DeviceVector::norm_inf(self)
    }

    fn dots(&self, vs: &[&Self]) -> Result<Vec<f64>> {
        DeviceVector::dots(self, vs)
    }

    fn maxpy(&mut self, alphas: &[f64], xs: &[&Self]) -> Result<()> {
        DeviceVector::maxpy(self, alphas, xs)
    }

    fn cg_update(
        &mut self,
        alpha: f64,
        p: &Self,
        q: &Self,
        x: &mut Self,
        then: CgFusion<'_, Self>,
    ) -> Result<Option<(f64, f64)>> {
        DeviceVector::cg_update(self, alpha, p, q, x, then)
    }

    fn first_non_finite(&self) -> Result<Option<usize>> {
        DeviceVector::first_non_finite(self)
    }

    fn value_at(&self, index: usize) -> Result<f64> {
        Ok(DeviceVector::get(self, index)?.to_f64())
    }
}
