//! The device probe: evaluates [`Pointwise`] physics on an OpenCL device at
//! a batch of points, one work-item per point, and returns the outputs —
//! the device side of every native-versus-OpenCL comparison (the
//! `pointwise_*` tests and the differential tester `pointwise-difftest`).
//!
//! Inputs and outputs are flat arrays of points, each point in the layouts
//! of [`PointArgs`] ([`crate::layout`]): point `p`'s `u` is
//! `u[p·N_comp .. (p+1)·N_comp]`, its `grad_u` is
//! `grad_u[p·N_comp·dim .. (p+1)·N_comp·dim]` with `grad_u[c·dim + d]`
//! within the point, and so on for `a`, `grad_a`, `x`, `constants`, `n`
//! (`dim` entries), `u_t` (as `u`), `t` (one entry per point) and the
//! outputs `f0`, `f1`. Every input is passed to the device whatever the
//! physics reads.
//!
//! The probe evaluates the residual (`f0`, `f1`), the tangent (`df0`,
//! `df1` along a direction `du`, `dgrad_u`, `du_t` given with the inputs,
//! in the layouts of `u`, `grad_u`, `u_t`), the Jacobian (`g0` … `g3`, in
//! the layouts of [`crate::layout::jac_g0`] …) and the Jacobian with
//! respect to `u_t` (`g0_t`, `g2_t`, laid out as `g0`, `g2`), through the
//! functions the physics' OpenCL source defines.
//!
//! Several physics can be evaluated together ([`Probe::residuals`]): their
//! sources are concatenated into one program (helpers they share are
//! defined once, see `__private::source_bytes`) with one kernel that
//! switches on the physics, so a batch costs one OpenCL build. The program
//! is built through [`Device::kernel`] (OpenCL C 1.2, what femquad's
//! kernels use; cached by source); where the device also compiles OpenCL C
//! 3.0, the same source is compiled with `-cl-std=CL3.0` too (a compile
//! check: the generated code must be valid in both).

use std::sync::Arc;

use super::launch::Launch;
use opencl3::context::Context;
use opencl3::device::Device as ClDevice;
use opencl3::memory::Buffer;
use opencl3::program::Program;

use super::context::{Device, Transfer};
use super::device::{DeviceSelector, cl_error};
use super::source::numbered;
use crate::physics::{PointArgs, Pointwise};
use crate::rng::Rng;
use crate::{Error, Real, Result};

/// Sizes of one point of a physics in dimension `dim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointSizes {
    /// Spatial dimension.
    pub dim: usize,
    /// Components of `u` (and `f0`).
    pub n_comp: usize,
    /// Components of `a`.
    pub n_aux: usize,
    /// Number of constants.
    pub n_constants: usize,
}

impl PointSizes {
    /// The sizes of `physics` in dimension `dim`.
    pub fn of(physics: &dyn Pointwise, dim: usize) -> PointSizes {
        let info = physics.info();
        PointSizes {
            dim,
            n_comp: info.n_comp.resolve(dim),
            n_aux: info.n_aux.resolve(dim),
            n_constants: info.n_constants,
        }
    }

    /// Entries per point of `u`, `grad_u`, `a`, `grad_a`, `x`, `constants`,
    /// `n`, `u_t`, `t`.
    pub fn inputs(&self) -> [usize; 9] {
        let (d, nc, na) = (self.dim, self.n_comp, self.n_aux);
        [nc, nc * d, na, na * d, d, self.n_constants, d, nc, 1]
    }

    /// Entries per point of `f0` and `f1` (and of `df0`, `df1`).
    pub fn outputs(&self) -> [usize; 2] {
        [self.n_comp, self.n_comp * self.dim]
    }

    /// Entries per point of `g0`, `g1`, `g2`, `g3`.
    pub fn jacobians(&self) -> [usize; 4] {
        let (nc, d) = (self.n_comp, self.dim);
        [nc * nc, nc * nc * d, nc * nc * d, nc * nc * d * d]
    }

    /// Entries per point of `g0_t`, `g2_t`.
    pub fn jacobians_u_t(&self) -> [usize; 2] {
        let (nc, d) = (self.n_comp, self.dim);
        [nc * nc, nc * nc * d]
    }
}

/// The inputs of one physics at `points` points (see the module
/// documentation for the layout).
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs<R> {
    /// Sizes of one point.
    pub sizes: PointSizes,
    /// Number of points.
    pub points: usize,
    /// Field values.
    pub u: Vec<R>,
    /// Field gradients.
    pub grad_u: Vec<R>,
    /// Auxiliary field values.
    pub a: Vec<R>,
    /// Auxiliary field gradients.
    pub grad_a: Vec<R>,
    /// Coordinates.
    pub x: Vec<R>,
    /// Constants (per point, so that each point may have its own).
    pub constants: Vec<R>,
    /// The normal (`dim` entries per point; the probe does not normalize it).
    pub n: Vec<R>,
    /// The time derivative of the field values (as `u`).
    pub u_t: Vec<R>,
    /// The time (one entry per point).
    pub t: Vec<R>,
    /// The direction of a tangent, `du` (as `u`; empty if none).
    pub du: Vec<R>,
    /// The direction of a tangent, `dgrad_u` (as `grad_u`; empty if none).
    pub dgrad_u: Vec<R>,
    /// The direction of a tangent, `du_t` (as `u_t`; empty if none).
    pub du_t: Vec<R>,
}

impl<R: Real> Inputs<R> {
    /// Inputs drawn uniformly from `[lo, hi)`.
    pub fn random(sizes: PointSizes, points: usize, rng: &mut Rng, lo: f64, hi: f64) -> Self {
        let mut draw = |n: usize| -> Vec<R> {
            (0..n * points)
                .map(|_| R::from_f64(rng.range(lo, hi)))
                .collect()
        };
        let [nu, ngu, na, nga, nx, nk, nn, nut, nt] = sizes.inputs();
        Inputs {
            sizes,
            points,
            u: draw(nu),
            grad_u: draw(ngu),
            a: draw(na),
            grad_a: draw(nga),
            x: draw(nx),
            constants: draw(nk),
            n: draw(nn),
            u_t: draw(nut),
            t: draw(nt),
            du: Vec::new(),
            dgrad_u: Vec::new(),
            du_t: Vec::new(),
        }
    }

    /// These inputs with a direction drawn uniformly from `[lo, hi)`.
    pub fn with_direction(mut self, rng: &mut Rng, lo: f64, hi: f64) -> Self {
        let [nu, ngu, ..] = self.sizes.inputs();
        let mut draw = |n: usize| -> Vec<R> {
            (0..n * self.points)
                .map(|_| R::from_f64(rng.range(lo, hi)))
                .collect()
        };
        self.du = draw(nu);
        self.dgrad_u = draw(ngu);
        self.du_t = draw(nu);
        self
    }

    /// The direction at point `p`: `(du, dgrad_u, du_t)`.
    pub fn direction(&self, p: usize) -> (&[R], &[R], &[R]) {
        let [nu, ngu, ..] = self.sizes.inputs();
        (
            &self.du[p * nu..(p + 1) * nu],
            &self.dgrad_u[p * ngu..(p + 1) * ngu],
            &self.du_t[p * nu..(p + 1) * nu],
        )
    }

    /// The same points in another precision (rounded to nearest).
    pub fn convert<S: Real>(&self) -> Inputs<S> {
        let c = |v: &Vec<R>| v.iter().map(|x| S::from_f64(x.to_f64())).collect();
        Inputs {
            sizes: self.sizes,
            points: self.points,
            u: c(&self.u),
            grad_u: c(&self.grad_u),
            a: c(&self.a),
            grad_a: c(&self.grad_a),
            x: c(&self.x),
            constants: c(&self.constants),
            n: c(&self.n),
            u_t: c(&self.u_t),
            t: c(&self.t),
            du: c(&self.du),
            dgrad_u: c(&self.dgrad_u),
            du_t: c(&self.du_t),
        }
    }

    fn arrays(&self) -> [&[R]; 9] {
        [
            &self.u,
            &self.grad_u,
            &self.a,
            &self.grad_a,
            &self.x,
            &self.constants,
            &self.n,
            &self.u_t,
            &self.t,
        ]
    }

    /// The twelve device inputs: the nine arrays and the direction (zeros
    /// when there is none).
    fn device_arrays(&self) -> [Vec<R>; INPUT_BUFFERS] {
        let [nu, ngu, ..] = self.sizes.inputs();
        let or_zero = |v: &Vec<R>, n: usize| {
            if v.is_empty() {
                vec![R::ZERO; n * self.points]
            } else {
                v.clone()
            }
        };
        let a = self.arrays();
        [
            a[0].to_vec(),
            a[1].to_vec(),
            a[2].to_vec(),
            a[3].to_vec(),
            a[4].to_vec(),
            a[5].to_vec(),
            a[6].to_vec(),
            a[7].to_vec(),
            a[8].to_vec(),
            or_zero(&self.du, nu),
            or_zero(&self.dgrad_u, ngu),
            or_zero(&self.du_t, nu),
        ]
    }

    /// The arguments of point `p`.
    pub fn point(&self, p: usize) -> PointArgs<'_, R> {
        let n = self.sizes.inputs();
        let [u, grad_u, a, grad_a, x, constants, normal, u_t, t] = self.arrays();
        PointArgs {
            u: &u[p * n[0]..(p + 1) * n[0]],
            grad_u: &grad_u[p * n[1]..(p + 1) * n[1]],
            a: &a[p * n[2]..(p + 1) * n[2]],
            grad_a: &grad_a[p * n[3]..(p + 1) * n[3]],
            x: &x[p * n[4]..(p + 1) * n[4]],
            constants: &constants[p * n[5]..(p + 1) * n[5]],
            n: &normal[p * n[6]..(p + 1) * n[6]],
            u_t: &u_t[p * n[7]..(p + 1) * n[7]],
            t: t[p],
        }
    }

    /// Checks the lengths of the arrays against the sizes.
    fn check(&self, name: &str) -> Result<()> {
        let names = [
            "u",
            "grad_u",
            "a",
            "grad_a",
            "x",
            "constants",
            "n",
            "u_t",
            "t",
        ];
        for ((v, n), arg) in self.arrays().iter().zip(self.sizes.inputs()).zip(names) {
            if v.len() != n * self.points {
                return Err(Error::arg(
                    "inputs",
                    format!(
                        "`{name}`: `{arg}` has {} entries, expected {} ({} points × {n})",
                        v.len(),
                        n * self.points,
                        self.points
                    ),
                ));
            }
        }
        let [nu, ngu, ..] = self.sizes.inputs();
        for (v, n, arg) in [
            (&self.du, nu, "du"),
            (&self.dgrad_u, ngu, "dgrad_u"),
            (&self.du_t, nu, "du_t"),
        ] {
            if !v.is_empty() && v.len() != n * self.points {
                return Err(Error::arg(
                    "inputs",
                    format!(
                        "`{name}`: `{arg}` has {} entries, expected {}",
                        v.len(),
                        n * self.points
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The outputs of one physics at every point.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs<R> {
    /// Entries per point of `f0` and `f1`.
    pub per_point: [usize; 2],
    /// `f0` of every point.
    pub f0: Vec<R>,
    /// `f1` of every point.
    pub f1: Vec<R>,
}

impl<R> Outputs<R> {
    /// `f0` at point `p`.
    pub fn f0(&self, p: usize) -> &[R] {
        let n = self.per_point[0];
        &self.f0[p * n..(p + 1) * n]
    }

    /// `f1` at point `p` (`f1[c·dim + d]`).
    pub fn f1(&self, p: usize) -> &[R] {
        let n = self.per_point[1];
        &self.f1[p * n..(p + 1) * n]
    }
}

/// The Jacobians of one physics at every point.
#[derive(Clone, Debug, PartialEq)]
pub struct Jacobians<R> {
    /// Entries per point of `g0`, `g1`, `g2`, `g3`.
    pub per_point: [usize; 4],
    /// `g0` … `g3` of every point.
    pub g: [Vec<R>; 4],
}

impl<R> Jacobians<R> {
    /// `g_k` at point `p`.
    pub fn g(&self, k: usize, p: usize) -> &[R] {
        let n = self.per_point[k];
        &self.g[k][p * n..(p + 1) * n]
    }
}

/// The Jacobians with respect to `u_t` of one physics at every point.
#[derive(Clone, Debug, PartialEq)]
pub struct JacobiansUT<R> {
    /// Entries per point of `g0_t`, `g2_t`.
    pub per_point: [usize; 2],
    /// `g0_t`, `g2_t` of every point.
    pub g: [Vec<R>; 2],
}

impl<R> JacobiansUT<R> {
    /// `g0_t` (`k = 0`) or `g2_t` (`k = 1`) at point `p`.
    pub fn g(&self, k: usize, p: usize) -> &[R] {
        let n = self.per_point[k];
        &self.g[k][p * n..(p + 1) * n]
    }
}

/// What the probe evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// `f0`, `f1`.
    Residual,
    /// `df0`, `df1` along the inputs' direction.
    Tangent,
    /// `g0`, `g1`, `g2`, `g3`.
    Jacobian,
    /// `g0_t`, `g2_t`.
    JacobianUT,
}

impl Evaluation {
    /// Entries per point of each output array.
    fn outputs(self, s: &PointSizes) -> Vec<usize> {
        match self {
            Evaluation::Jacobian => s.jacobians().to_vec(),
            Evaluation::JacobianUT => s.jacobians_u_t().to_vec(),
            _ => s.outputs().to_vec(),
        }
    }
}

/// Evaluates physics on an OpenCL device (see the module documentation).
#[derive(Debug, Clone)]
pub struct Probe {
    device: Arc<Device>,
}

impl Probe {
    /// A probe on an opened device.
    pub fn new(device: Arc<Device>) -> Probe {
        Probe { device }
    }

    /// A probe on the device chosen by `selector`.
    pub fn open(selector: &DeviceSelector) -> Result<Probe> {
        Ok(Probe::new(Device::open(selector)?))
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Whether the device compiles OpenCL C 3.0 (then every probe program
    /// is also compiled with `-cl-std=CL3.0`).
    pub fn compiles_cl3(&self) -> bool {
        ClDevice::new(self.device.info().id)
            .opencl_c_version()
            .unwrap_or_default()
            .contains("3.0")
    }

    /// `f0` and `f1` of `physics` at every point of `inputs`.
    pub fn residual<R: Real>(
        &self,
        physics: &dyn Pointwise,
        dim: usize,
        inputs: &Inputs<R>,
    ) -> Result<Outputs<R>> {
        let mut out = self.residuals(dim, &[(physics, inputs)])?;
        Ok(out.pop().expect("one result per physics"))
    }

    /// `f0` and `f1` of several physics, each at its own points, with one
    /// program (built once per distinct set of sources).
    pub fn residuals<R: Real>(
        &self,
        dim: usize,
        items: &[(&dyn Pointwise, &Inputs<R>)],
    ) -> Result<Vec<Outputs<R>>> {
        let out = self.evaluate(dim, items, Evaluation::Residual)?;
        Ok(out.into_iter().map(outputs).collect())
    }

    /// `df0`, `df1` of several physics along the direction of their inputs
    /// ([`Inputs::with_direction`]).
    pub fn tangents<R: Real>(
        &self,
        dim: usize,
        items: &[(&dyn Pointwise, &Inputs<R>)],
    ) -> Result<Vec<Outputs<R>>> {
        for (p, i) in items {
            if i.du.is_empty() && i.points > 0 {
                return Err(Error::arg(
                    "inputs",
                    format!(
                        "`{}`: a tangent needs a direction (`du`, `dgrad_u`, `du_t`)",
                        p.info().name
                    ),
                ));
            }
        }
        let out = self.evaluate(dim, items, Evaluation::Tangent)?;
        Ok(out.into_iter().map(outputs).collect())
    }

    /// `g0` … `g3` of several physics.
    pub fn jacobians<R: Real>(
        &self,
        dim: usize,
        items: &[(&dyn Pointwise, &Inputs<R>)],
    ) -> Result<Vec<Jacobians<R>>> {
        let out = self.evaluate(dim, items, Evaluation::Jacobian)?;
        Ok(out
            .into_iter()
            .map(|(per_point, g)| {
                let mut g = g.into_iter();
                let mut next = || g.next().unwrap_or_default();
                Jacobians {
                    per_point: [per_point[0], per_point[1], per_point[2], per_point[3]],
                    g: [next(), next(), next(), next()],
                }
            })
            .collect())
    }

    /// `g0_t`, `g2_t` of several physics.
    pub fn jacobians_u_t<R: Real>(
        &self,
        dim: usize,
        items: &[(&dyn Pointwise, &Inputs<R>)],
    ) -> Result<Vec<JacobiansUT<R>>> {
        let out = self.evaluate(dim, items, Evaluation::JacobianUT)?;
        Ok(out
            .into_iter()
            .map(|(per_point, g)| {
                let mut g = g.into_iter();
                let mut next = || g.next().unwrap_or_default();
                JacobiansUT {
                    per_point: [per_point[0], per_point[1]],
                    g: [next(), next()],
                }
            })
            .collect())
    }

    /// Evaluates `eval` for every item; per item, the entries per point of
    /// each output array and the arrays.
    #[allow(clippy::type_complexity)]
    pub fn evaluate<R: Real>(
        &self,
        dim: usize,
        items: &[(&dyn Pointwise, &Inputs<R>)],
        eval: Evaluation,
    ) -> Result<Vec<(Vec<usize>, Vec<Vec<R>>)>> {
        self.device.check_precision::<R>()?;
        let physics: Vec<&dyn Pointwise> = items.iter().map(|(p, _)| *p).collect();
        for (p, inputs) in items {
            let info = p.info();
            if !info.supports_dim(dim) {
                return Err(crate::physics::PointwiseError::Dimension {
                    physics: info.name,
                    dim,
                }
                .into());
            }
            if eval != Evaluation::Residual && info.opencl_tangent_name.is_empty() {
                return Err(
                    crate::physics::PointwiseError::NoDerivatives { physics: info.name }.into(),
                );
            }
            if inputs.sizes != PointSizes::of(*p, dim) {
                return Err(Error::arg(
                    "inputs",
                    format!(
                        "`{}`: inputs sized {:?}, the physics needs {:?}",
                        info.name,
                        inputs.sizes,
                        PointSizes::of(*p, dim)
                    ),
                ));
            }
            inputs.check(info.name)?;
        }
        let source = program_source::<R>(dim, &physics, eval)?;
        let kernel = self.device.kernel(&source, "pw_probe")?;
        if self.compiles_cl3() {
            self.compile_check(&source, "-cl-std=CL3.0")?;
        }
        // Twelve inputs, four outputs (unused ones empty), in one buffer
        // each, physics after physics.
        let mut offsets = Vec::new();
        let mut totals = [0usize; BUFFERS];
        for (p, inputs) in items {
            let sizes = PointSizes::of(*p, dim);
            let mut per_point = sizes.inputs().to_vec();
            let [nu, ngu, ..] = sizes.inputs();
            per_point.extend([nu, ngu, nu]);
            let mut outs = eval.outputs(&sizes);
            outs.resize(4, 0);
            per_point.extend(outs);
            let mut o = [0u64; BUFFERS];
            for k in 0..BUFFERS {
                o[k] = totals[k] as u64;
                totals[k] += per_point[k] * inputs.points;
            }
            offsets.push(o);
        }
        let names = [
            "u",
            "grad_u",
            "a",
            "grad_a",
            "x",
            "constants",
            "n",
            "u_t",
            "t",
            "du",
            "dgrad_u",
            "du_t",
            "out0",
            "out1",
            "out2",
            "out3",
        ];
        let mut buffers: Vec<Buffer<R>> = Vec::new();
        for (k, total) in totals.iter().enumerate() {
            buffers.push(self.device.alloc::<R>(*total, names[k])?);
        }
        let arrays: Vec<[Vec<R>; INPUT_BUFFERS]> =
            items.iter().map(|(_, i)| i.device_arrays()).collect();
        for k in 0..BUFFERS {
            let data: Vec<R> = if k < INPUT_BUFFERS {
                arrays.iter().flat_map(|a| a[k].iter().copied()).collect()
            } else {
                vec![R::ZERO; totals[k]]
            };
            self.device
                .write(&mut buffers[k], &data, Transfer::Coefficients, names[k])?;
        }
        for (which, ((_, inputs), o)) in items.iter().zip(&offsets).enumerate() {
            if inputs.points == 0 {
                continue;
            }
            let which = which as i32;
            // The arguments match `pw_probe` of `program_source`; every
            // buffer holds the offsets plus the points' entries.
            let mut launch = Launch::new(&kernel).value(which)?;
            for b in &buffers {
                launch = launch.mem(b)?;
            }
            for &off in o {
                launch = launch.value(off)?;
            }
            launch.submit(&self.device, inputs.points, None, "the probe kernel")?;
        }
        let mut results: Vec<Vec<R>> = (INPUT_BUFFERS..BUFFERS)
            .map(|k| vec![R::ZERO; totals[k]])
            .collect();
        for (k, r) in results.iter_mut().enumerate() {
            self.device
                .read(&buffers[INPUT_BUFFERS + k], r, "probe outputs")?;
        }
        let mut out = Vec::new();
        for ((p, inputs), o) in items.iter().zip(&offsets) {
            let per_point = eval.outputs(&PointSizes::of(*p, dim));
            let arrays = per_point
                .iter()
                .enumerate()
                .map(|(k, n)| {
                    let start = o[INPUT_BUFFERS + k] as usize;
                    results[k][start..start + n * inputs.points].to_vec()
                })
                .collect();
            out.push((per_point, arrays));
        }
        Ok(out)
    }

    /// Compiles `source` with `options` (no kernel is created): the
    /// generated code must be valid OpenCL C in every standard the device
    /// compiles.
    fn compile_check(&self, source: &str, options: &str) -> Result<()> {
        let info = self.device.info();
        let device = ClDevice::new(info.id);
        let context = Context::from_device(&device).map_err(cl_error("clCreateContext"))?;
        Program::create_and_build_from_source(&context, source, options).map_err(|log| {
            Error::Build {
                device: format!("{} ({options})", info.name),
                log,
                numbered_source: numbered(source),
            }
        })?;
        Ok(())
    }
}

/// The device inputs of one probe launch: the nine inputs and the three
/// arrays of the direction.
const INPUT_BUFFERS: usize = 12;

/// The probe's buffers: the inputs and four outputs.
const BUFFERS: usize = INPUT_BUFFERS + 4;

/// The residual or tangent outputs of [`Probe::evaluate`].
fn outputs<R>((per_point, arrays): (Vec<usize>, Vec<Vec<R>>)) -> Outputs<R> {
    let mut a = arrays.into_iter();
    Outputs {
        per_point: [per_point[0], per_point[1]],
        f0: a.next().unwrap_or_default(),
        f1: a.next().unwrap_or_default(),
    }
}

/// The probe program for `physics` in precision `R` and dimension `dim`:
/// their sources, then the kernel `pw_probe(which, u, grad_u, a, grad_a, x,
/// constants, n, u_t, t, du, dgrad_u, du_t, out0, out1, out2, out3,
/// offsets…)`, which copies
/// one point's inputs into private arrays, calls the function of `eval` of
/// physics number `which` and writes its outputs.
pub fn program_source<R: Real>(
    dim: usize,
    physics: &[&dyn Pointwise],
    eval: Evaluation,
) -> Result<String> {
    let mut names: Vec<&str> = physics.iter().map(|p| p.info().opencl_name).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::arg(
            "physics",
            format!(
                "two physics define the OpenCL function `{}`: one program cannot hold both",
                w[0]
            ),
        ));
    }
    let real = R::PRECISION.cl_type();
    let mut src = String::new();
    if real == "double" {
        src.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    src.push_str(&format!("typedef {real} real;\n#define DIM {dim}\n\n"));
    for p in physics {
        src.push_str(p.opencl_source());
        src.push('\n');
    }
    src.push_str(
        "__kernel void pw_probe(const int which,\n\
         \x20   __global const real *u, __global const real *grad_u, __global const real *a,\n\
         \x20   __global const real *grad_a, __global const real *x, __global const real *k,\n\
         \x20   __global const real *n, __global const real *u_t, __global const real *t,\n\
         \x20   __global const real *du, __global const real *dgrad_u, __global const real *du_t,\n\
         \x20   __global real *out0, __global real *out1, __global real *out2, __global real *out3,\n\
         \x20   const ulong o_u, const ulong o_grad_u, const ulong o_a, const ulong o_grad_a,\n\
         \x20   const ulong o_x, const ulong o_k, const ulong o_n, const ulong o_u_t, const ulong o_t,\n\
         \x20   const ulong o_du, const ulong o_dgrad_u, const ulong o_du_t,\n\
         \x20   const ulong o_out0, const ulong o_out1, const ulong o_out2, const ulong o_out3)\n\
         {\n    const ulong p = get_global_id(0);\n    switch (which) {\n",
    );
    for (i, p) in physics.iter().enumerate() {
        src.push_str(&case(i, *p, dim, eval));
    }
    src.push_str("    }\n}\n");
    Ok(src)
}

/// The `case` of physics number `i` in `pw_probe`: load the point's inputs
/// (and direction), call the function of `eval`, store its outputs.
fn case(i: usize, physics: &dyn Pointwise, dim: usize, eval: Evaluation) -> String {
    let s = PointSizes::of(physics, dim);
    let (nc, na, nk) = (s.n_comp, s.n_aux, s.n_constants);
    // C arrays cannot be empty.
    let (nca, naa, nka) = (nc.max(1), na.max(1), nk.max(1));
    let info = physics.info();
    let mut body = format!(
        "        real lu[{nca}], lgu[{nca}][DIM], la[{naa}], lga[{naa}][DIM], lx[DIM], lk[{nka}];\n\
         \x20       real ldu[{nca}], ldgu[{nca}][DIM], ln[DIM], lut[{nca}], lddut[{nca}];\n\
         \x20       const real lt = t[o_t + p];\n\
         \x20       for (int c = 0; c < {nc}; ++c) {{\n\
         \x20           lu[c] = u[o_u + p * {nc} + c];\n\
         \x20           ldu[c] = du[o_du + p * {nc} + c];\n\
         \x20           lut[c] = u_t[o_u_t + p * {nc} + c];\n\
         \x20           lddut[c] = du_t[o_du_t + p * {nc} + c];\n\
         \x20           for (int d = 0; d < DIM; ++d) {{\n\
         \x20               lgu[c][d] = grad_u[o_grad_u + (p * {nc} + c) * DIM + d];\n\
         \x20               ldgu[c][d] = dgrad_u[o_dgrad_u + (p * {nc} + c) * DIM + d];\n\
         \x20           }}\n\
         \x20       }}\n\
         \x20       for (int j = 0; j < {na}; ++j) {{\n\
         \x20           la[j] = a[o_a + p * {na} + j];\n\
         \x20           for (int d = 0; d < DIM; ++d) lga[j][d] = grad_a[o_grad_a + (p * {na} + j) * DIM + d];\n\
         \x20       }}\n\
         \x20       for (int d = 0; d < DIM; ++d) lx[d] = x[o_x + p * DIM + d];\n\
         \x20       for (int d = 0; d < DIM; ++d) ln[d] = n[o_n + p * DIM + d];\n\
         \x20       for (int j = 0; j < {nk}; ++j) lk[j] = k[o_k + p * {nk} + j];\n"
    );
    match eval {
        Evaluation::Residual | Evaluation::Tangent => {
            // Outputs start at zero: those the physics does not have stay so.
            body.push_str(&format!(
                "        real lf0[{nca}], lf1[{nca}][DIM];\n\
                 \x20       for (int c = 0; c < {nc}; ++c) {{\n\
                 \x20           lf0[c] = (real)0.0;\n\
                 \x20           for (int d = 0; d < DIM; ++d) lf1[c][d] = (real)0.0;\n\
                 \x20       }}\n"
            ));
            let call = if eval == Evaluation::Residual {
                format!(
                    "{}(lu, lgu, la, lga, lx, lk, ln, lut, lt, lf0, lf1);",
                    info.opencl_name
                )
            } else {
                format!(
                    "{}(lu, lgu, la, lga, lx, lk, ln, lut, lt, ldu, ldgu, lddut, lf0, lf1);",
                    info.opencl_tangent_name
                )
            };
            body.push_str(&format!(
                "        {call}\n\
                 \x20       for (int c = 0; c < {nc}; ++c) {{\n\
                 \x20           out0[o_out0 + p * {nc} + c] = lf0[c];\n\
                 \x20           for (int d = 0; d < DIM; ++d) out1[o_out1 + (p * {nc} + c) * DIM + d] = lf1[c][d];\n\
                 \x20       }}\n"
            ));
        }
        Evaluation::Jacobian => {
            let n = s.jacobians();
            body.push_str(&format!(
                "        real lg0[{}], lg1[{}], lg2[{}], lg3[{}];\n\
                 \x20       {}(lu, lgu, la, lga, lx, lk, ln, lut, lt, lg0, lg1, lg2, lg3);\n",
                n[0].max(1),
                n[1].max(1),
                n[2].max(1),
                n[3].max(1),
                info.opencl_jacobian_name
            ));
            for (k, n) in n.iter().enumerate() {
                body.push_str(&format!(
                    "        for (int e = 0; e < {n}; ++e) out{k}[o_out{k} + p * {n} + e] = lg{k}[e];\n"
                ));
            }
        }
        Evaluation::JacobianUT => {
            let n = s.jacobians_u_t();
            body.push_str(&format!(
                "        real lg0[{}], lg1[{}];\n\
                 \x20       {}(lu, lgu, la, lga, lx, lk, ln, lut, lt, lg0, lg1);\n",
                n[0].max(1),
                n[1].max(1),
                info.opencl_jacobian_u_t_name
            ));
            for (k, n) in n.iter().enumerate() {
                body.push_str(&format!(
                    "        for (int e = 0; e < {n}; ++e) out{k}[o_out{k} + p * {n} + e] = lg{k}[e];\n"
                ));
            }
        }
    }
    format!("    case {i}: {{\n{body}        break;\n    }}\n")
}
