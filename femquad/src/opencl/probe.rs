//! The device probe: evaluates [`Pointwise`] physics on an OpenCL device at
//! a batch of points, one work-item per point, and returns the outputs —
//! the device side of every native-versus-OpenCL comparison (the
//! `pointwise_*` tests and the differential tester `pointwise-difftest`).
//!
//! Inputs and outputs are flat arrays of points, each point in the layouts
//! of [`PointArgs`] ([`crate::layout`]): point `p`'s `u` is
//! `u[p·N_comp .. (p+1)·N_comp]`, its `grad_u` is
//! `grad_u[p·N_comp·dim .. (p+1)·N_comp·dim]` with `grad_u[c·dim + d]`
//! within the point, and so on for `a`, `grad_a`, `x`, `constants` and the
//! outputs `f0`, `f1`.
//!
//! Several physics can be evaluated together ([`Probe::residuals`]): their
//! sources are concatenated into one program (helpers they share are
//! defined once, see `__private::opencl_source`) with one kernel that
//! switches on the physics, so a batch costs one OpenCL build. The program
//! is built through [`Device::kernel`] (OpenCL C 1.2, what femquad's
//! kernels use; cached by source); where the device also compiles OpenCL C
//! 3.0, the same source is compiled with `-cl-std=CL3.0` too (a compile
//! check: the generated code must be valid in both).

use std::sync::Arc;

use opencl3::context::Context;
use opencl3::device::Device as ClDevice;
use opencl3::kernel::ExecuteKernel;
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

    /// Entries per point of `u`, `grad_u`, `a`, `grad_a`, `x`, `constants`.
    pub fn inputs(&self) -> [usize; 6] {
        let (d, nc, na) = (self.dim, self.n_comp, self.n_aux);
        [nc, nc * d, na, na * d, d, self.n_constants]
    }

    /// Entries per point of `f0` and `f1`.
    pub fn outputs(&self) -> [usize; 2] {
        [self.n_comp, self.n_comp * self.dim]
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
}

impl<R: Real> Inputs<R> {
    /// Inputs drawn uniformly from `[lo, hi)`.
    pub fn random(sizes: PointSizes, points: usize, rng: &mut Rng, lo: f64, hi: f64) -> Self {
        let mut draw = |n: usize| -> Vec<R> {
            (0..n * points)
                .map(|_| R::from_f64(rng.range(lo, hi)))
                .collect()
        };
        let [nu, ngu, na, nga, nx, nk] = sizes.inputs();
        Inputs {
            sizes,
            points,
            u: draw(nu),
            grad_u: draw(ngu),
            a: draw(na),
            grad_a: draw(nga),
            x: draw(nx),
            constants: draw(nk),
        }
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
        }
    }

    fn arrays(&self) -> [&[R]; 6] {
        [
            &self.u,
            &self.grad_u,
            &self.a,
            &self.grad_a,
            &self.x,
            &self.constants,
        ]
    }

    /// The arguments of point `p`.
    pub fn point(&self, p: usize) -> PointArgs<'_, R> {
        let n = self.sizes.inputs();
        let [u, grad_u, a, grad_a, x, constants] = self.arrays();
        PointArgs {
            u: &u[p * n[0]..(p + 1) * n[0]],
            grad_u: &grad_u[p * n[1]..(p + 1) * n[1]],
            a: &a[p * n[2]..(p + 1) * n[2]],
            grad_a: &grad_a[p * n[3]..(p + 1) * n[3]],
            x: &x[p * n[4]..(p + 1) * n[4]],
            constants: &constants[p * n[5]..(p + 1) * n[5]],
        }
    }

    /// Checks the lengths of the arrays against the sizes.
    fn check(&self, name: &str) -> Result<()> {
        let names = ["u", "grad_u", "a", "grad_a", "x", "constants"];
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
        let source = program_source::<R>(dim, &physics)?;
        let kernel = self.device.kernel(&source, "pw_probe")?;
        if self.compiles_cl3() {
            self.compile_check(&source, "-cl-std=CL3.0")?;
        }
        // All inputs and outputs in one buffer each, physics after physics.
        let mut offsets = Vec::new();
        let mut totals = [0usize; 8];
        for (p, inputs) in items {
            let sizes = PointSizes::of(*p, dim);
            let counts: Vec<usize> = sizes
                .inputs()
                .into_iter()
                .chain(sizes.outputs())
                .map(|n| n * inputs.points)
                .collect();
            let mut o = [0u64; 8];
            for k in 0..8 {
                o[k] = totals[k] as u64;
                totals[k] += counts[k];
            }
            offsets.push(o);
        }
        let mut buffers: Vec<Buffer<R>> = Vec::new();
        let names = ["u", "grad_u", "a", "grad_a", "x", "constants", "f0", "f1"];
        for (k, total) in totals.iter().enumerate() {
            buffers.push(self.device.alloc::<R>(*total, names[k])?);
        }
        for k in 0..6 {
            let data: Vec<R> = items
                .iter()
                .flat_map(|(_, i)| i.arrays()[k].iter().copied())
                .collect();
            self.device
                .write(&mut buffers[k], &data, Transfer::Coefficients, names[k])?;
        }
        for k in 6..8 {
            let zeros = vec![R::ZERO; totals[k]];
            self.device
                .write(&mut buffers[k], &zeros, Transfer::Coefficients, names[k])?;
        }
        for (which, ((_, inputs), o)) in items.iter().zip(&offsets).enumerate() {
            if inputs.points == 0 {
                continue;
            }
            let which = which as i32;
            // SAFETY: the arguments match `pw_probe` of `program_source`;
            // every buffer holds the offsets plus the points' entries.
            unsafe {
                let mut exec = ExecuteKernel::new(&kernel);
                exec.set_arg(&which);
                for b in &buffers {
                    exec.set_arg(b);
                }
                for off in o {
                    exec.set_arg(off);
                }
                exec.set_global_work_size(inputs.points)
                    .enqueue_nd_range(self.device.queue())
            }
            .map_err(|e| {
                self.device
                    .memory_error("clEnqueueNDRangeKernel", "probe launch", 0, e)
            })?;
        }
        let mut f0 = vec![R::ZERO; totals[6]];
        let mut f1 = vec![R::ZERO; totals[7]];
        // SAFETY: the slices outlive the events, waited for below.
        let events = unsafe {
            [
                self.device.read_async(&buffers[6], &mut f0)?,
                self.device.read_async(&buffers[7], &mut f1)?,
            ]
        };
        for ev in events {
            ev.wait().map_err(cl_error("clWaitForEvents"))?;
        }
        let mut out = Vec::new();
        for ((p, inputs), o) in items.iter().zip(&offsets) {
            let per_point = PointSizes::of(*p, dim).outputs();
            let (n0, n1) = (per_point[0] * inputs.points, per_point[1] * inputs.points);
            let (s0, s1) = (o[6] as usize, o[7] as usize);
            out.push(Outputs {
                per_point,
                f0: f0[s0..s0 + n0].to_vec(),
                f1: f1[s1..s1 + n1].to_vec(),
            });
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

/// The probe program for `physics` in precision `R` and dimension `dim`:
/// their sources, then the kernel `pw_probe(which, u, grad_u, a, grad_a, x,
/// constants, f0, f1, offsets…)`, which copies one point's inputs into
/// private arrays, calls physics number `which` and writes its outputs.
pub fn program_source<R: Real>(dim: usize, physics: &[&dyn Pointwise]) -> Result<String> {
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
        src.push_str(&p.opencl_source());
        src.push('\n');
    }
    src.push_str(
        "__kernel void pw_probe(const int which,\n\
         \x20   __global const real *u, __global const real *grad_u, __global const real *a,\n\
         \x20   __global const real *grad_a, __global const real *x, __global const real *k,\n\
         \x20   __global real *f0, __global real *f1,\n\
         \x20   const ulong o_u, const ulong o_grad_u, const ulong o_a, const ulong o_grad_a,\n\
         \x20   const ulong o_x, const ulong o_k, const ulong o_f0, const ulong o_f1)\n\
         {\n    const ulong p = get_global_id(0);\n    switch (which) {\n",
    );
    for (i, p) in physics.iter().enumerate() {
        src.push_str(&case(i, *p, dim));
    }
    src.push_str("    }\n}\n");
    Ok(src)
}

/// The `case` of physics number `i` in `pw_probe`.
fn case(i: usize, physics: &dyn Pointwise, dim: usize) -> String {
    let s = PointSizes::of(physics, dim);
    let (nc, na, nk) = (s.n_comp, s.n_aux, s.n_constants);
    // C arrays cannot be empty.
    let (nca, naa, nka) = (nc.max(1), na.max(1), nk.max(1));
    format!(
        "    case {i}: {{\n\
         \x20       real lu[{nca}], lgu[{nca}][DIM], la[{naa}], lga[{naa}][DIM], lx[DIM], lk[{nka}];\n\
         \x20       real lf0[{nca}], lf1[{nca}][DIM];\n\
         \x20       for (int c = 0; c < {nc}; ++c) {{\n\
         \x20           lu[c] = u[o_u + p * {nc} + c];\n\
         \x20           lf0[c] = (real)0.0;\n\
         \x20           for (int d = 0; d < DIM; ++d) {{\n\
         \x20               lgu[c][d] = grad_u[o_grad_u + (p * {nc} + c) * DIM + d];\n\
         \x20               lf1[c][d] = (real)0.0;\n\
         \x20           }}\n\
         \x20       }}\n\
         \x20       for (int j = 0; j < {na}; ++j) {{\n\
         \x20           la[j] = a[o_a + p * {na} + j];\n\
         \x20           for (int d = 0; d < DIM; ++d) lga[j][d] = grad_a[o_grad_a + (p * {na} + j) * DIM + d];\n\
         \x20       }}\n\
         \x20       for (int d = 0; d < DIM; ++d) lx[d] = x[o_x + p * DIM + d];\n\
         \x20       for (int j = 0; j < {nk}; ++j) lk[j] = k[o_k + p * {nk} + j];\n\
         \x20       {name}(lu, lgu, la, lga, lx, lk, lf0, lf1);\n\
         \x20       for (int c = 0; c < {nc}; ++c) {{\n\
         \x20           f0[o_f0 + p * {nc} + c] = lf0[c];\n\
         \x20           for (int d = 0; d < DIM; ++d) f1[o_f1 + (p * {nc} + c) * DIM + d] = lf1[c][d];\n\
         \x20       }}\n\
         \x20       break;\n\
         \x20   }}\n",
        name = physics.info().opencl_name,
    )
}
