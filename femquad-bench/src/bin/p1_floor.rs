//! The floor of the P1 Laplacian residual on this device: what the
//! simplest kernel — one work-item per cell, the geometry computed from the
//! vertex coordinates, the element vector added into `F` — reaches on the
//! benchmark's renumbered mesh, what each of its stages costs, and how that
//! compares with femquad's `J(u)·v` (= `F(v)` for the Laplacian) and with
//! femquad's CSR SpMV of the assembled matrix, all in the same process.
//! Issue #22 asks `F(u)` and `J·v` for ≤ 0.5× the SpMV; this tool measures
//! whether the formulation can reach that at all, and what stands in the way.
//!
//! ```sh
//! cargo run --release -p femquad-bench --bin p1_floor -- [--cells 2^24] [--reps 30]
//! ```
//!
//! The floor kernels are this tool's own (below), not femquad's; each is
//! timed by its profiling events (median of `--reps` after 3 warm-up
//! launches). Variants:
//!
//! * `atomic` — node indices `u32` per cell, `u` and the coordinates
//!   gathered, `F` by global atomic adds: the formulation's whole cost;
//!   checked against femquad's `J(u)·u` (relative max difference printed).
//! * `local16` — the same with the cell's node indices as `u16` positions
//!   in its chunk's node list (chunks of 256 cells, the list `u32`): 2 bytes
//!   a cell corner instead of 4, one more indirection; checked the same way.
//! * `plain` — `atomic` with a non-atomic `F[i] += r` (races: a wrong
//!   result, for timing the atomics only).
//! * `cellwise` — the element vectors written per cell (`out[c][a]`, no
//!   scatter): the gathers and the arithmetic alone.
//! * `shared` — `local16` whose work-group (one chunk) sums its element
//!   vectors in local memory (atomic adds there) and then adds each node of
//!   its list once into `F` (global atomics: one per list entry instead of
//!   one per cell corner); checked the same way.
//!
//! Bytes are the minimal ones of each variant (each array read or written
//! once: connectivity, coordinates, `u`, `F`; `cellwise` writes its element
//! vectors instead of `F`); `% copy` is that traffic per second against
//! femquad-bench's float4 copy measured in the same process. femquad's
//! `J(u)·v` and SpMV are timed on the host clock over batches of 20 calls
//! ended by a finish (their launch cost included, a few µs a call).

use std::sync::Arc;

use femquad::opencl::{Device, DeviceIndices, DeviceVector, KernelOptions};
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;
use femquad_bench::bandwidth::measure_copy;
use femquad_bench::host_timing::{host_timed, median};
use opencl3::kernel::ExecuteKernel;

/// Cells a chunk of the `local16` variant.
const CHUNK: usize = 256;

/// The floor kernels (see the module documentation); `DIM`, `NV`, `real`,
/// `VARIANT` and the atomic add (kernels/atomic_add.cl) are defined before.
const FLOOR: &str = r#"
#define ATOMIC 0
#define LOCAL16 1
#define PLAIN 2
#define CELLWISE 3
#define SHARED 4
__kernel void p1_floor(__global const uint *restrict conn,
                       __global const ushort *restrict conn16,
                       __global const uint *restrict list,
                       __global const uint *restrict list_start,
                       __global const real *restrict x,
                       __global const real *restrict u,
                       __global real *restrict out,
                       const uint n_cells) {
  const uint c = get_global_id(0);
#if VARIANT == SHARED
  __local real acc[MAX_LIST];
  const uint l0 = list_start[get_group_id(0)];
  const uint ln = list_start[get_group_id(0) + 1] - l0;
  for (uint i = get_local_id(0); i < ln; i += get_local_size(0)) acc[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (c < n_cells) {
#else
  if (c >= n_cells) return;
  {
#endif
  uint n[NV];
  real X[NV][DIM], U[NV];
  for (int a = 0; a < NV; ++a) {
#if VARIANT == LOCAL16 || VARIANT == SHARED
    n[a] = list[list_start[c / CHUNK] + conn16[c * NV + a]];
#else
    n[a] = conn[c * NV + a];
#endif
    for (int d = 0; d < DIM; ++d) X[a][d] = x[n[a] * DIM + d];
    U[a] = u[n[a]];
  }
  /* J[d][k] = X[k+1][d] - X[0][d]; g_k = U[k+1] - U[0] */
  real J[DIM][DIM], g[DIM];
  for (int k = 0; k < DIM; ++k) {
    g[k] = U[k + 1] - U[0];
    for (int d = 0; d < DIM; ++d) J[d][k] = X[k + 1][d] - X[0][d];
  }
  /* A = adj(J) = det(J) J^{-1} */
  real A[DIM][DIM], det;
#if DIM == 2
  A[0][0] = J[1][1]; A[0][1] = -J[0][1];
  A[1][0] = -J[1][0]; A[1][1] = J[0][0];
  det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  const real vol = fabs(det) / 2;
#else
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int i1 = (j + 1) % 3, i2 = (j + 2) % 3, j1 = (i + 1) % 3, j2 = (i + 2) % 3;
      A[i][j] = J[i1][j1] * J[i2][j2] - J[i1][j2] * J[i2][j1];
    }
  det = J[0][0] * A[0][0] + J[0][1] * A[1][0] + J[0][2] * A[2][0];
  const real vol = fabs(det) / 6;
#endif
  /* grad u = J^{-T} g; r_k = vol (J^{-1} grad u)_k, r_0 = -sum r_k */
  real gu[DIM], r[NV];
  for (int d = 0; d < DIM; ++d) {
    real s = 0;
    for (int k = 0; k < DIM; ++k) s += A[k][d] * g[k];
    gu[d] = s / det;
  }
  r[0] = 0;
  for (int k = 0; k < DIM; ++k) {
    real s = 0;
    for (int d = 0; d < DIM; ++d) s += A[k][d] * gu[d];
    r[k + 1] = vol * s / det;
    r[0] -= r[k + 1];
  }
  for (int a = 0; a < NV; ++a) {
#if VARIANT == CELLWISE
    out[c * NV + a] = r[a];
#elif VARIANT == PLAIN
    out[n[a]] += r[a];
#elif VARIANT == SHARED
    local_add_real(&acc[conn16[c * NV + a]], r[a]);
#else
    atomic_add_real(&out[n[a]], r[a]);
#endif
  }
  }
#if VARIANT == SHARED
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = get_local_id(0); i < ln; i += get_local_size(0))
    atomic_add_real(&out[list[l0 + i]], acc[i]);
#endif
}
"#;

/// The work-items of a group of the floor kernels: one chunk of cells
/// (the `shared` variant sums a chunk's element vectors in its group).
const GROUP: usize = CHUNK;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Variant {
    Atomic,
    Local16,
    Plain,
    Cellwise,
    Shared,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Atomic => "atomic",
            Variant::Local16 => "local16",
            Variant::Plain => "plain",
            Variant::Cellwise => "cellwise",
            Variant::Shared => "shared",
        }
    }

    fn code(self) -> usize {
        self as usize
    }
}

/// The `local16` connectivity: per chunk of [`CHUNK`] cells the sorted
/// list of its nodes, and per cell corner the node's position in its
/// chunk's list (two `u16` packed little-endian in each `u32`).
struct Local16 {
    packed: Vec<u32>,
    list: Vec<u32>,
    /// Where each chunk's list starts in `list`, and its end.
    start: Vec<u32>,
    /// The longest list.
    max_list: usize,
}

fn local16(cells: &[u32], nv: usize) -> Option<Local16> {
    let n_cells = cells.len() / nv;
    let mut list = Vec::new();
    let mut start = Vec::new();
    let mut local: Vec<u16> = Vec::with_capacity(cells.len());
    let mut max_list = 0;
    for chunk in cells.chunks(CHUNK * nv) {
        start.push(list.len() as u32);
        let mut nodes: Vec<u32> = chunk.to_vec();
        nodes.sort_unstable();
        nodes.dedup();
        if nodes.len() > u16::MAX as usize {
            return None;
        }
        max_list = max_list.max(nodes.len());
        for &v in chunk {
            local.push(nodes.binary_search(&v).ok()? as u16);
        }
        list.extend_from_slice(&nodes);
    }
    start.push(list.len() as u32);
    if local.len() % 2 == 1 {
        local.push(0);
    }
    let packed = local
        .chunks_exact(2)
        .map(|p| u32::from(p[0]) | (u32::from(p[1]) << 16))
        .collect();
    debug_assert_eq!(start.len(), n_cells.div_ceil(CHUNK) + 1);
    Some(Local16 {
        packed,
        list,
        start,
        max_list,
    })
}

fn cl(call: &'static str) -> impl Fn(opencl3::error_codes::ClError) -> femquad::Error {
    move |e| femquad::Error::OpenCl {
        call,
        code: e.0,
        name: e.to_string(),
    }
}

struct Case<'a> {
    device: &'a Arc<Device>,
    reps: usize,
    copy_gbs: f64,
}

fn run<R: Real>(case: &Case, dim: usize, cells: usize) -> femquad::Result<()>
where
    Laplacian: PointwiseEval<R>,
{
    let opts = MeshOptions {
        shuffle: true,
        ..MeshOptions::default()
    };
    let (mesh, _) = femquad::mesh::mesh_for_cells(dim, cells, &opts)?.renumbered_for_locality()?;
    let mesh = Arc::new(mesh);
    let nv = dim + 1;
    let n_cells = mesh.n_cells();
    let n = mesh.n_vertices();
    let s = R::PRECISION.size();
    let label = format!("{dim}D {}", R::PRECISION.name());

    // femquad: J(u)·v and the SpMV of the assembled matrix
    let backend = Backend::opencl_with(case.device.clone(), KernelOptions::from_env()?);
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1)?, 1)?;
    let mut op = Operator::<R>::new(Form::new(space, Laplacian)?, &backend)?;
    if op.space().n_dofs() != n {
        return Err(femquad::Error::internal("P1 dofs are not the vertices"));
    }
    let values: Vec<R> = (0..n)
        .map(|i| R::from_f64(0.5 + (i as f64 * 0.37).sin()))
        .collect();
    let u = op.vector_from(&values)?;
    let mut jv = op.vector()?;
    let t_jv = host_timed(case.reps, &mut jv, |jv| op.jacobian_action(&u, &u, jv))?;
    let reference = jv.to_host()?;
    let matrix = op.assemble_matrix(&u)?;
    let mut y = op.vector()?;
    let t_spmv = host_timed(case.reps, &mut y, |y| matrix.apply(&u, y))?;
    let nnz = matrix.pattern().nnz();
    let spmv_bytes = nnz * (s + 4) + (n + 1) * 4 + 2 * n * s;
    println!(
        "{label}: {n_cells} cells, {n} dofs; femquad J(u)v {t_jv:.3} ms; femquad SpMV {t_spmv:.3} ms \
         ({nnz} nonzeros, {:.0} GB/s)",
        spmv_bytes as f64 / t_spmv * 1e-6
    );

    // the floor kernels' data
    let coords: Vec<R> = mesh.vertices().iter().map(|&v| R::from_f64(v)).collect();
    let x = DeviceVector::from_host(case.device, &coords)?;
    let ud = DeviceVector::from_host(case.device, &values)?;
    let conn = DeviceIndices::from_host(case.device, mesh.cells())?;
    let l16 = local16(mesh.cells(), nv);
    let none = [0u32];
    let (packed, list, start) = match &l16 {
        Some(l) => (&l.packed[..], &l.list[..], &l.start[..]),
        None => (&none[..], &none[..], &none[..]),
    };
    let packed = DeviceIndices::from_host(case.device, packed)?;
    let list = DeviceIndices::from_host(case.device, list)?;
    let start = DeviceIndices::from_host(case.device, start)?;
    let mut out = DeviceVector::<R>::zeros(case.device, n_cells * nv)?;
    let atomic_ptx = usize::from(case.device.info().is_nvidia());
    for variant in [
        Variant::Atomic,
        Variant::Local16,
        Variant::Plain,
        Variant::Cellwise,
        Variant::Shared,
    ] {
        let uses_lists = matches!(variant, Variant::Local16 | Variant::Shared);
        if uses_lists && l16.is_none() {
            println!(
                "{label} {:<9} a chunk has more than 65535 nodes",
                variant.name()
            );
            continue;
        }
        let double = usize::from(s == 8);
        let mut source = format!(
            "#define DIM {dim}\n#define NV {nv}\n#define CHUNK {CHUNK}\n#define VARIANT {}\n\
             #define REAL_IS_DOUBLE {double}\n#define ATOMIC_PTX {atomic_ptx}\n\
             #define MAX_LIST {}\n",
            variant.code(),
            l16.as_ref().map_or(1, |l| l.max_list)
        );
        source.push_str(if double == 1 {
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ntypedef double real;\n"
        } else {
            "typedef float real;\n"
        });
        if double == 1 && atomic_ptx == 0 {
            source.push_str("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n");
        }
        source.push_str(include_str!("../../../kernels/atomic_add.cl"));
        source.push_str(FLOOR);
        let kernel = case.device.kernel(&source, "p1_floor")?;
        let mut times = Vec::new();
        for k in 0..case.reps + 3 {
            out.fill(0.0)?;
            // SAFETY: the arguments match p1_floor's signature; the buffers
            // hold what the kernel indexes (n_cells cells of NV corners).
            let ev = unsafe {
                ExecuteKernel::new(&kernel)
                    .set_arg(conn.buffer())
                    .set_arg(packed.buffer())
                    .set_arg(list.buffer())
                    .set_arg(start.buffer())
                    .set_arg(x.buffer())
                    .set_arg(ud.buffer())
                    .set_arg(out.buffer())
                    .set_arg(&(n_cells as u32))
                    .set_global_work_size(n_cells.div_ceil(GROUP) * GROUP)
                    .set_local_work_size(GROUP)
                    .enqueue_nd_range(case.device.queue())
            }
            .map_err(cl("clEnqueueNDRangeKernel"))?;
            ev.wait().map_err(cl("clWaitForEvents"))?;
            if k >= 3 {
                let t0 = ev
                    .profiling_command_start()
                    .map_err(cl("clGetEventProfilingInfo"))?;
                let t1 = ev
                    .profiling_command_end()
                    .map_err(cl("clGetEventProfilingInfo"))?;
                times.push(t1.saturating_sub(t0) as f64 * 1e-6);
            }
        }
        let t = median(times);
        let conn_bytes = match (variant, &l16) {
            (Variant::Local16 | Variant::Shared, Some(l)) => {
                n_cells * nv * 2 + (l.list.len() + l.start.len()) * 4
            }
            _ => n_cells * nv * 4,
        };
        let out_bytes = match variant {
            Variant::Cellwise => n_cells * nv * s,
            _ => n * s,
        };
        let bytes = conn_bytes + n * dim * s + n * s + out_bytes;
        let gbs = bytes as f64 / t * 1e-6;
        let atomics = match (variant, &l16) {
            (Variant::Shared, Some(l)) => l.list.len(),
            (Variant::Atomic | Variant::Local16, _) => n_cells * nv,
            _ => 0,
        };
        let check = match variant {
            Variant::Atomic | Variant::Local16 | Variant::Shared => {
                let got = out.to_host()?;
                let scale = reference
                    .iter()
                    .fold(0.0f64, |m, v| m.max(v.to_f64().abs()));
                let diff = got
                    .iter()
                    .zip(&reference)
                    .fold(0.0f64, |m, (a, b)| m.max((a.to_f64() - b.to_f64()).abs()));
                format!("max |F - femquad J(u)u| / max |F| = {:.1e}", diff / scale)
            }
            _ => "(timing only)".to_string(),
        };
        println!(
            "{label} {:<9} {t:8.3} ms  {:7.1} MB  {gbs:6.0} GB/s  {:5.1} % copy  {:.2}x SpMV  {:.2}x J(u)v  \
             {:6.1} M global atomics  {check}",
            variant.name(),
            bytes as f64 * 1e-6,
            100.0 * gbs / case.copy_gbs,
            t / t_spmv,
            t / t_jv,
            atomics as f64 * 1e-6,
        );
    }
    Ok(())
}

fn main() -> femquad::Result<()> {
    let mut cells = 1usize << 24;
    let mut reps = 30usize;
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let value = args
            .get(i + 1)
            .ok_or_else(|| femquad::Error::arg("args", format!("{} needs a value", args[i])))?;
        let count = femquad::mesh::size::parse_count(value)?;
        match args[i].as_str() {
            "--cells" => cells = count,
            "--reps" => reps = count.max(1),
            a => return Err(femquad::Error::arg("args", format!("unknown argument {a}"))),
        }
        i += 2;
    }
    let device = Device::from_env()?;
    let copy = measure_copy(&device, 1 << 30, 3, 20)?;
    let copy_gbs = copy.gb_per_s();
    println!(
        "# p1_floor on {}, copy bandwidth {copy_gbs:.1} GB/s (femquad-bench float4 copy, same process)",
        device.info().name
    );
    let case = Case {
        device: &device,
        reps,
        copy_gbs,
    };
    run::<f32>(&case, 2, cells)?;
    run::<f64>(&case, 2, cells)?;
    run::<f64>(&case, 3, cells)?;
    Ok(())
}
