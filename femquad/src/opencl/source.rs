//! Fills in the kernel template `kernels/integrate.cl`.
//!
//! The generated program is: a prelude of `#define`s (sizes of the
//! [`KernelShape`], aux layout, what the physics uses), the `real` type, the
//! index macros of [`crate::layout`], the tabulation as `__constant` arrays of
//! full-precision literals, the physics' OpenCL source, and the template.

use std::fmt::Write;

use crate::Real;
use crate::aux_space::AuxSpace;
use crate::layout;
use crate::opencl::shape::{AtomicAdd, GeometryMode, KernelShape, Output};
use crate::physics::Pointwise;
use crate::quadrature::Quadrature;
use crate::tabulation::Tabulation;

/// The kernel template (thread transposition), see its header comment.
pub const INTEGRATE_TEMPLATE: &str = include_str!("../../../kernels/integrate.cl");

/// The cell-parallel kernel template (one work-item per cell,
/// [`LaunchConfig::cell_parallel`](super::LaunchConfig::cell_parallel)),
/// see its header comment.
pub const INTEGRATE_CELL_TEMPLATE: &str = include_str!("../../../kernels/integrate_cell.cl");

/// `AFFINE_GEOMETRY` (`kernels/affine_geometry.cl`): `J⁻¹` and `det J` of
/// an affine cell from its vertices, for the kernels that compute the
/// geometry.
pub const AFFINE_GEOMETRY: &str = include_str!("../../../kernels/affine_geometry.cl");

/// A patch's copies of its nodes' values in local memory
/// (`kernels/patch_copy.cl`), for the integration kernels with patches.
const PATCH_COPY: &str = include_str!("../../../kernels/patch_copy.cl");

/// Name of the kernel function in [`INTEGRATE_TEMPLATE`] and in
/// [`INTEGRATE_CELL_TEMPLATE`] (the same parameters).
pub const INTEGRATE_KERNEL: &str = "integrate";

/// The point-block diagonal of the Jacobian, one work-item per cell.
pub const DIAGONAL_TEMPLATE: &str = include_str!("../../../kernels/jacobian_diagonal.cl");

/// Name of the kernel function in [`DIAGONAL_TEMPLATE`].
pub const DIAGONAL_KERNEL: &str = "jacobian_diagonal";

/// The element matrices of the Jacobian summed into a CSR matrix
/// (`kernels/element_matrix.cl`), one work-item per cell.
pub const ELEMENT_MATRIX_TEMPLATE: &str = include_str!("../../../kernels/element_matrix.cl");

/// The cell and point state of the two tangent kernels above
/// (`kernels/tangent_point.cl`: what they read of a cell, `u`, `∇u`, `u_t`,
/// `a`, `∇a`, `x` at a quadrature point, the direction of a column).
pub(crate) const TANGENT_POINT: &str = include_str!("../../../kernels/tangent_point.cl");

/// The kernels of a CSR matrix on the device (`kernels/spmv.cl`).
pub const SPMV_TEMPLATE: &str = include_str!("../../../kernels/spmv.cl");

/// `chebyshev_node_update` (`kernels/chebyshev_update.cl`): a Chebyshev
/// step's update of one node, prepended to the multigrid kernels and to the
/// CSR kernels, whose fused step must be bitwise the unfused one.
pub(crate) const CHEBYSHEV_UPDATE: &str = include_str!("../../../kernels/chebyshev_update.cl");

/// `atomic_add_real`, prepended to the kernels that sum into global vectors.
const ATOMIC_ADD: &str = include_str!("../../../kernels/atomic_add.cl");

/// A literal of type `R` for OpenCL C, round-trip exact in `R`.
pub(crate) fn literal<R: Real>(v: f64) -> String {
    if R::PRECISION.cl_type() == "float" {
        format!("{:e}f", v as f32)
    } else {
        format!("{v:e}")
    }
}

fn constant_array<R: Real>(out: &mut String, name: &str, values: &[f64]) {
    let body: Vec<String> = values.iter().map(|&v| literal::<R>(v)).collect();
    let _ = writeln!(
        out,
        "__constant real {name}[{}] = {{{}}};",
        values.len().max(1),
        if body.is_empty() {
            "0".to_string()
        } else {
            body.join(", ")
        }
    );
}

/// The `typedef` of `real` (with the fp64 pragma for `double`), the flag
/// `REAL_IS_DOUBLE`, and `FP_CONTRACT OFF`: femquad's kernels never fuse
/// `a*b + c` into one rounding, exactly as Rust computes natively, so that
/// the device and the native reference compute the same numbers (the same
/// quadrature point `x`, the same nearly singular determinants).
pub(crate) fn real_typedef<R: Real>() -> String {
    let mut s = String::from("#pragma OPENCL FP_CONTRACT OFF\n");
    if R::PRECISION.cl_type() == "double" {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ntypedef double real;\n");
        s.push_str("#define REAL_IS_DOUBLE 1\n");
    } else {
        s.push_str("typedef float real;\n#define REAL_IS_DOUBLE 0\n");
    }
    s
}

/// The complete source of the integration kernel of `shape`: the
/// thread-transposition template (`kernels/integrate.cl`), or with
/// [`KernelShape::cell_parallel`] the cell-parallel one
/// (`kernels/integrate_cell.cl`, after `kernels/tangent_point.cl`), on the
/// same prelude.
pub(crate) fn integrate_source<R: Real, P: Pointwise + ?Sized>(
    shape: &KernelShape,
    aux: AuxSpace,
    tabulation: &Tabulation,
    quadrature: &Quadrature,
    physics: &P,
) -> String {
    let info = physics.info();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/* femquad: generated by femquad {} */",
        env!("CARGO_PKG_VERSION")
    );
    s.push_str(&real_typedef::<R>());
    let sizes = [shape.dim, shape.n_b, shape.n_comp, shape.n_q];
    define_physics_sizes(&mut s, sizes, aux, physics);
    define_time_state(&mut s, physics);
    let defines: [(&str, usize); 6] = [
        ("N_BS", shape.n_bs),
        ("N_TC", shape.n_tc),
        ("N_BL", shape.n_bl),
        ("N_CB", shape.n_cb),
        ("HAS_F0", usize::from(shape.has_f0)),
        ("HAS_F1", usize::from(shape.has_f1)),
    ];
    for (name, value) in defines {
        let _ = writeln!(s, "#define {name} {value}");
    }
    let reads = shape.reads;
    let atomic = match shape.variant.output() {
        Output::Atomic(a) => Some(a),
        Output::ElementVectors => None,
    };
    for (name, flag) in [
        ("READS_U", reads.u),
        ("READS_GRAD_U", reads.grad_u),
        ("READS_A", reads.a),
        ("READS_GRAD_A", reads.grad_a),
        ("READS_X", shape.reads_x),
        ("GATHER", shape.variant.gathers()),
        ("TANGENT", shape.variant.is_tangent()),
        ("LOADS_U", shape.loads_u()),
        (
            "GEOMETRY_COMPUTED",
            shape.geometry == GeometryMode::Computed,
        ),
        ("OUTPUT_ATOMIC", atomic.is_some()),
    ] {
        let _ = writeln!(s, "#define {name} {}", usize::from(flag));
    }
    let _ = writeln!(s, "#define PREFETCH {}", usize::from(shape.prefetch));
    let (p_a, p_b) = shape.patch;
    let _ = writeln!(
        s,
        "#define PATCH {}\n#define P_A {p_a}\n#define P_B {p_b}",
        usize::from(p_a + p_b > 0)
    );
    let _ = writeln!(
        s,
        "#define TAB_REGISTERS {}",
        usize::from(shape.tab_registers)
    );
    let width = if shape.vector_loads {
        16 / shape.precision.size()
    } else {
        1
    };
    let _ = writeln!(s, "#define VEC_WIDTH {width}");
    if width > 1 {
        let _ = writeln!(s, "typedef {}{width} realv;", R::PRECISION.cl_type());
    } else {
        s.push_str("typedef real realv;\n");
    }
    let uint_width = if shape.vector_loads { 4 } else { 1 };
    let _ = writeln!(s, "#define UINT_VEC_WIDTH {uint_width}");
    if uint_width > 1 {
        s.push_str("typedef uint4 uintv;\ntypedef ushort4 ushortv;\n");
    } else {
        s.push_str("typedef uint uintv;\ntypedef ushort ushortv;\n");
    }
    if let Some(atomic) = atomic {
        push_atomic_add::<R>(&mut s, atomic);
    }
    push_tabulation_and_physics::<R, P>(&mut s, tabulation, quadrature, physics);
    s.push_str(&physics_call(info.opencl_name));
    if shape.variant.is_tangent() {
        s.push_str(&tangent_physics_call(info.opencl_tangent_name));
    }
    s.push_str("\n/* ---- kernels/affine_geometry.cl ---- */\n");
    s.push_str(AFFINE_GEOMETRY);
    if shape.patch != (0, 0) {
        s.push_str("\n/* ---- kernels/patch_copy.cl ---- */\n");
        s.push_str(PATCH_COPY);
    }
    if shape.cell_parallel {
        // the cell's state as the tangent kernels read it; u is not read
        // for the Jacobian action of an affine physics
        let _ = writeln!(s, "#define AFFINE {}", usize::from(!shape.loads_u()));
        s.push_str("\n/* ---- kernels/tangent_point.cl ---- */\n");
        s.push_str(TANGENT_POINT);
        s.push_str("\n/* ---- kernel template: kernels/integrate_cell.cl ---- */\n");
        s.push_str(INTEGRATE_CELL_TEMPLATE);
    } else {
        s.push_str("\n/* ---- kernel template: kernels/integrate.cl ---- */\n");
        s.push_str(INTEGRATE_TEMPLATE);
    }
    s
}

/// The source of the point-block diagonal of the Jacobian
/// (`kernels/jacobian_diagonal.cl`) for `physics` on a discretization of
/// `sizes = [dim, N_b, N_comp, N_q]` with `aux`, summing with `atomic`.
/// The physics must have derivatives (its tangent function is called).
pub(crate) fn diagonal_source<R: Real, P: Pointwise + ?Sized>(
    sizes: [usize; 4],
    aux: AuxSpace,
    tabulation: &Tabulation,
    quadrature: &Quadrature,
    physics: &P,
    atomic: AtomicAdd,
) -> String {
    let mut s = String::from("/* femquad: generated point-block diagonal of the Jacobian */\n");
    s.push_str(&real_typedef::<R>());
    define_physics_sizes(&mut s, sizes, aux, physics);
    define_time_state(&mut s, physics);
    push_atomic_add::<R>(&mut s, atomic);
    push_tabulation_and_physics::<R, P>(&mut s, tabulation, quadrature, physics);
    let info = physics.info();
    s.push_str(&tangent_physics_call(info.opencl_tangent_name));
    let _ = writeln!(s, "#define AFFINE {}", usize::from(info.linear));
    s.push_str("\n/* ---- kernels/tangent_point.cl ---- */\n");
    s.push_str(TANGENT_POINT);
    s.push_str("\n/* ---- kernel template: kernels/jacobian_diagonal.cl ---- */\n");
    s.push_str(DIAGONAL_TEMPLATE);
    s
}

/// The source of the element matrices of the Jacobian
/// (`kernels/element_matrix.cl`) for `physics` on a discretization of
/// `sizes = [dim, N_b, N_comp, N_q]` with `aux`: added into the CSR values
/// with `atomic` if given, else written per cell for the deterministic sum
/// (`sum_element_matrices`). The physics must have derivatives.
pub(crate) fn element_matrix_source<R: Real, P: Pointwise + ?Sized>(
    sizes: [usize; 4],
    aux: AuxSpace,
    tabulation: &Tabulation,
    quadrature: &Quadrature,
    physics: &P,
    atomic: Option<AtomicAdd>,
) -> String {
    let mut s = String::from("/* femquad: generated element matrices of the Jacobian */\n");
    s.push_str(&real_typedef::<R>());
    define_physics_sizes(&mut s, sizes, aux, physics);
    define_time_state(&mut s, physics);
    let _ = writeln!(s, "#define OUTPUT_ATOMIC {}", usize::from(atomic.is_some()));
    if let Some(atomic) = atomic {
        push_atomic_add::<R>(&mut s, atomic);
    }
    push_tabulation_and_physics::<R, P>(&mut s, tabulation, quadrature, physics);
    let info = physics.info();
    s.push_str(&tangent_physics_call(info.opencl_tangent_name));
    let _ = writeln!(s, "#define AFFINE {}", usize::from(info.linear));
    s.push_str("\n/* ---- kernels/tangent_point.cl ---- */\n");
    s.push_str(TANGENT_POINT);
    s.push_str("\n/* ---- kernel template: kernels/element_matrix.cl ---- */\n");
    s.push_str(ELEMENT_MATRIX_TEMPLATE);
    s
}

/// The source of the CSR kernels (`kernels/spmv.cl`) for a field of
/// `n_comp` components in precision `R`.
pub(crate) fn spmv_source<R: Real>(n_comp: usize) -> String {
    let mut s = String::from("/* femquad: CSR kernels */\n");
    s.push_str(&real_typedef::<R>());
    let _ = writeln!(s, "#define N_COMP {n_comp}");
    s.push_str(CHEBYSHEV_UPDATE);
    s.push_str(SPMV_TEMPLATE);
    s
}

/// The argument a cell kernel passes for the input it does not have: no
/// normal `n` (a physics that reads it is refused as a cell term, see
/// `form::check_fit`). Declared in the statement that calls the physics,
/// so the unread zeros cost nothing.
const CELL_EXTRAS: &str = "const real pw_no_n[DIM] = {0};";

/// `PHYSICS(u, grad_u, a, grad_a, x, k, u_t, f0, f1)`: the call of the
/// physics `name` in the cell kernels, with the argument of [`CELL_EXTRAS`]
/// and the time `TIME_T` ([`define_time_state`]); the kernels pass `u_t`
/// (zeros for a physics that does not read it). The physics' full
/// signature is in `PointwiseInfo::opencl_name`.
fn physics_call(name: &str) -> String {
    format!(
        "#define PHYSICS(u, gu, a, ga, x, k, ut, f0, f1) do {{ {CELL_EXTRAS} \\\n  \
         {name}(u, gu, a, ga, x, k, pw_no_n, ut, TIME_T, f0, f1); }} while (0)\n"
    )
}

/// `TANGENT_PHYSICS(u, grad_u, a, grad_a, x, k, u_t, du, dgrad_u, du_t,
/// df0, df1)`: the call of the tangent `name` in the cell kernels, with the
/// argument of [`CELL_EXTRAS`] and the time `TIME_T`; the kernels pass the
/// direction `du_t = σ·du` (zeros for a physics that does not read `u_t`).
fn tangent_physics_call(name: &str) -> String {
    format!(
        "#define TANGENT_PHYSICS(u, gu, a, ga, x, k, ut, du, dgu, dut, df0, df1) do {{ \
         {CELL_EXTRAS} \\\n  \
         {name}(u, gu, a, ga, x, k, pw_no_n, ut, TIME_T, du, dgu, dut, df0, df1); }} while (0)\n"
    )
}

/// The time state of the cell kernels (`u_t = σ·u + b` and the time `t`,
/// bound by `Integrate::set_time`), generated only for a physics that reads
/// `u_t` or `t`: `READS_U_T`; the kernel parameters `TIME_PARAMS` (`b` as a
/// global vector `timeB[node][comp]`, `sigma`, `time`), inserted after the
/// constants in every cell kernel's signature; and `TIME_T`, the time the
/// physics sees (`(real)0` for a stationary physics, which gets no extra
/// argument).
fn define_time_state<P: Pointwise + ?Sized>(s: &mut String, physics: &P) {
    let reads = physics.info().reads;
    let _ = writeln!(s, "#define READS_U_T {}", usize::from(reads.u_t));
    if reads.u_t || reads.t {
        s.push_str(
            "#define TIME_PARAMS , __global const real *restrict timeB, const real sigma, \
             const real time\n#define TIME_T time\n",
        );
    } else {
        s.push_str("#define TIME_PARAMS\n#define TIME_T (real)0\n");
    }
}

/// `#define`s of the sizes `[dim, N_b, N_comp, N_q]`, the auxiliary field
/// (loaded only if the physics reads it) and the physics' constants.
fn define_physics_sizes<P: Pointwise + ?Sized>(
    s: &mut String,
    [dim, n_b, n_comp, n_q]: [usize; 4],
    aux: AuxSpace,
    physics: &P,
) {
    let info = physics.info();
    let reads_aux = info.reads.a || info.reads.grad_a;
    let defines: [(&str, usize); 10] = [
        ("DIM", dim),
        ("N_B", n_b),
        ("N_COMP", n_comp),
        ("N_Q", n_q),
        ("N_AUX", aux.n_comp()),
        ("N_AUX_ALLOC", aux.n_comp().max(1)),
        (
            "AUX_FIELD",
            usize::from(reads_aux && matches!(aux, AuxSpace::Field { .. })),
        ),
        (
            "AUX_CELL",
            usize::from(reads_aux && matches!(aux, AuxSpace::Cell { .. })),
        ),
        ("N_CONSTANTS", info.n_constants),
        ("N_CONSTANTS_ALLOC", info.n_constants.max(1)),
    ];
    for (name, value) in defines {
        let _ = writeln!(s, "#define {name} {value}");
    }
}

/// `atomic_add_real` of `kernels/atomic_add.cl`, done as `atomic` says.
fn push_atomic_add<R: Real>(s: &mut String, atomic: AtomicAdd) {
    let _ = writeln!(
        s,
        "#define ATOMIC_PTX {}",
        usize::from(atomic == AtomicAdd::Ptx)
    );
    if atomic == AtomicAdd::CompareExchange && R::PRECISION.size() == 8 {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n");
    }
    s.push_str(ATOMIC_ADD);
}

/// The layout macros, the tabulation as `__constant` arrays, and the
/// physics' OpenCL source.
fn push_tabulation_and_physics<R: Real, P: Pointwise + ?Sized>(
    s: &mut String,
    tabulation: &Tabulation,
    quadrature: &Quadrature,
    physics: &P,
) {
    s.push_str(layout::opencl_macros());
    constant_array::<R>(s, "Basis", tabulation.phi());
    constant_array::<R>(s, "BasisDerivatives", tabulation.dphi());
    constant_array::<R>(s, "QuadWeights", quadrature.weights());
    constant_array::<R>(s, "QuadPoints", quadrature.points());
    s.push_str("\n/* ---- physics ---- */\n");
    s.push_str(physics.opencl_source());
}

/// `source` with 1-based line numbers, for build-failure reports.
pub(crate) fn numbered(source: &str) -> String {
    source
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:5} | {l}\n", i + 1))
        .collect()
}

/// The template of the boundary-term kernels (`kernels/facet_integrate.cl`).
pub const FACET_TEMPLATE: &str = include_str!("../../../kernels/facet_integrate.cl");

/// The program of a boundary term's kernels (`kernels/facet_integrate.cl`:
/// `facet_points`, `facet_scatter`, `facet_sum`, and `facet_diagonal` when
/// `tangent`) for `physics` on facets of cells of `[dim, n_b, n_comp]`
/// with `n_fq` points per facet and the facet tabulation `tabulation`
/// (`FacetBasis`, `FacetBasisDerivatives`). `tangent`: the points kernel
/// evaluates the physics' tangent along the direction `v` (`J·v`);
/// `output_atomic`: the scatter adds into the global vector with
/// `atomic_add_real` instead of writing facet vectors. The physics is
/// called with the normal `n`, no auxiliary field, and the cells' time
/// state ([`define_time_state`]: `u_t` formed by the points kernel, zeros
/// for a physics that does not read it; the time `TIME_T`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn facet_source<R: Real, P: Pointwise + ?Sized>(
    [dim, n_b, n_comp]: [usize; 3],
    n_fq: usize,
    tabulation: &crate::facet::FacetTabulation,
    physics: &P,
    tangent: bool,
    output_atomic: bool,
    atomic: AtomicAdd,
) -> String {
    let mut s = String::from("/* femquad: generated boundary-term kernels */\n");
    s.push_str(&real_typedef::<R>());
    define_physics_sizes(&mut s, [dim, n_b, n_comp, n_fq], AuxSpace::None, physics);
    define_time_state(&mut s, physics);
    let _ = writeln!(s, "#define N_FQ {n_fq}");
    let _ = writeln!(s, "#define TANGENT {}", usize::from(tangent));
    let _ = writeln!(s, "#define OUTPUT_ATOMIC {}", usize::from(output_atomic));
    push_atomic_add::<R>(&mut s, atomic);
    s.push_str(layout::opencl_macros());
    constant_array::<R>(&mut s, "FacetBasis", tabulation.phi_all());
    constant_array::<R>(&mut s, "FacetBasisDerivatives", tabulation.dphi_all());
    s.push_str("\n/* ---- physics ---- */\n");
    s.push_str(physics.opencl_source());
    let info = physics.info();
    const EXTRAS: &str = "real pw_a[1] = {0}; real pw_ga[1][DIM] = {{0}}; \
                          real pw_f1[N_COMP][DIM];";
    let _ = writeln!(
        s,
        "#define FACET_PHYSICS(u, gu, x, k, n, ut, f0) do {{ {EXTRAS} \\\n  \
         {}(u, gu, pw_a, pw_ga, x, k, n, ut, TIME_T, f0, pw_f1); }} while (0)",
        info.opencl_name
    );
    if tangent {
        let _ = writeln!(
            s,
            "#define FACET_TANGENT(u, gu, x, k, n, ut, du, dgu, dut, df0) do {{ {EXTRAS} \\\n  \
             {}(u, gu, pw_a, pw_ga, x, k, n, ut, TIME_T, du, dgu, dut, df0, pw_f1); }} while (0)",
            info.opencl_tangent_name
        );
    }
    s.push_str("\n/* ---- kernel template: kernels/facet_integrate.cl ---- */\n");
    s.push_str(FACET_TEMPLATE);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_round_trip() {
        let v = 0.1_f64;
        assert_eq!(literal::<f64>(v).parse::<f64>().unwrap(), v);
        let l = literal::<f32>(v);
        assert!(l.ends_with('f'));
        assert_eq!(l.trim_end_matches('f').parse::<f32>().unwrap(), 0.1f32);
        assert_eq!(
            literal::<f64>(-1.0 / 3.0).parse::<f64>().unwrap(),
            -1.0 / 3.0
        );
    }

    #[test]
    fn numbering() {
        assert_eq!(numbered("a\nb"), "    1 | a\n    2 | b\n");
    }
}
