//! The OpenCL index macros of `femquad::layout::opencl_macros` compute what
//! the Rust layout functions compute: a kernel evaluates every macro on the
//! device (PoCL in CI) over a grid of arguments, and each value is compared
//! with the function of the same name. Every macro the kernels get is
//! covered (a new one without a function here fails), and each argument is
//! passed as an unparenthesized sum, so a macro that does not parenthesize
//! its parameters computes another number and fails too.

use std::collections::BTreeMap;

use femquad::layout;
use femquad::opencl::DeviceVector;
use femquad::opencl::testing::device;
use opencl3::kernel::ExecuteKernel;

/// The most arguments of a macro (`JAC_G3`).
const MAX_ARGS: usize = 6;

/// A layout function by the name of its macro, with its arity.
struct Function {
    arity: usize,
    eval: fn(&[usize]) -> usize,
}

/// The Rust layout functions, keyed by the name of their OpenCL macro.
fn functions() -> BTreeMap<&'static str, Function> {
    let f = |arity, eval| Function { arity, eval };
    BTreeMap::from([
        (
            "CELL_DOF",
            f(5, |a| layout::cell_dof(a[0], a[1], a[2], a[3], a[4])),
        ),
        ("TAB_PHI", f(3, |a| layout::tab_phi(a[0], a[1], a[2]))),
        (
            "TAB_DPHI",
            f(5, |a| layout::tab_dphi(a[0], a[1], a[2], a[3], a[4])),
        ),
        ("INV_J", f(4, |a| layout::inv_j(a[0], a[1], a[2], a[3]))),
        (
            "CELL_COORD",
            f(4, |a| layout::cell_coord(a[0], a[1], a[2], a[3])),
        ),
        ("GLOBAL_DOF", f(3, |a| layout::global_dof(a[0], a[1], a[2]))),
        (
            "VERTEX_COORD",
            f(3, |a| layout::vertex_coord(a[0], a[1], a[2])),
        ),
        ("CELL_NODE", f(3, |a| layout::cell_node(a[0], a[1], a[2]))),
        (
            "ELEM_MAT",
            f(4, |a| layout::elem_mat(a[0], a[1], a[2], a[3])),
        ),
        ("JAC_G0", f(3, |a| layout::jac_g0(a[0], a[1], a[2]))),
        (
            "JAC_G1",
            f(5, |a| layout::jac_g1(a[0], a[1], a[2], a[3], a[4])),
        ),
        (
            "JAC_G2",
            f(5, |a| layout::jac_g2(a[0], a[1], a[2], a[3], a[4])),
        ),
        (
            "JAC_G3",
            f(6, |a| layout::jac_g3(a[0], a[1], a[2], a[3], a[4], a[5])),
        ),
    ])
}

/// The macros `opencl_macros` defines: name → number of parameters.
fn defined_macros() -> BTreeMap<String, usize> {
    layout::opencl_macros()
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("#define ")?;
            let (name, params) = rest.split_once('(')?;
            let params = &params[..params.find(')')?];
            Some((name.to_string(), params.split(',').count()))
        })
        .collect()
}

/// Every tuple of `arity` arguments: the first (the cell, node, point or
/// output component) from `first`, the others from `rest`.
fn grid(arity: usize, first: &[usize], rest: &[usize]) -> Vec<Vec<usize>> {
    let mut tuples = vec![vec![]];
    for j in 0..arity {
        let values = if j == 0 { first } else { rest };
        tuples = tuples
            .into_iter()
            .flat_map(|t| {
                values.iter().map(move |&v| {
                    let mut t = t.clone();
                    t.push(v);
                    t
                })
            })
            .collect();
    }
    tuples
}

/// A kernel that evaluates macro `which[i]` on the arguments
/// `args[i·MAX_ARGS ..]` into `out[i]`, each argument passed as the
/// unparenthesized `1 + a - 1` (reals carry the integers: exact below 2^53).
fn kernel_source(names: &[&str], functions: &BTreeMap<&str, Function>) -> String {
    let mut cases = String::new();
    for (k, name) in names.iter().enumerate() {
        let args: Vec<String> = (0..functions[name].arity)
            .map(|j| format!("1 + a[{j}] - 1"))
            .collect();
        cases.push_str(&format!(
            "    case {k}: out[i] = (double)({name}({})); break;\n",
            args.join(", ")
        ));
    }
    format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{}\n\
         __kernel void layout(__global const double *args, __global const double *which,\n\
                              __global double *out, const int n)\n\
         {{\n\
           const int i = get_global_id(0);\n\
           if (i >= n) return;\n\
           long a[{MAX_ARGS}];\n\
           for (int j = 0; j < {MAX_ARGS}; ++j) a[j] = (long)args[i * {MAX_ARGS} + j];\n\
           switch ((int)which[i]) {{\n{cases}    default: out[i] = -1.0;\n  }}\n\
         }}\n",
        layout::opencl_macros()
    )
}

#[test]
fn opencl_macros_equal_the_layout_functions() {
    let functions = functions();
    let defined = defined_macros();
    let expected: BTreeMap<String, usize> = functions
        .iter()
        .map(|(name, f)| (name.to_string(), f.arity))
        .collect();
    assert_eq!(
        defined, expected,
        "the macros of opencl_macros (name → parameters) and the layout functions tested here"
    );

    // Small indices and sizes, and a first index beyond 16 bits.
    let rest = [0, 1, 2, 3, 7];
    let first = [0, 1, 2, 3, 7, 70_001];
    let names: Vec<&str> = functions.keys().copied().collect();
    let (mut args, mut which, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for (k, name) in names.iter().enumerate() {
        for tuple in grid(functions[name].arity, &first, &rest) {
            let mut padded = tuple.iter().map(|&v| v as f64).collect::<Vec<_>>();
            padded.resize(MAX_ARGS, 0.0);
            args.extend(padded);
            which.push(k as f64);
            rows.push((*name, tuple));
        }
    }

    let device = device();
    let kernel = device
        .kernel(&kernel_source(&names, &functions), "layout")
        .unwrap();
    let n = rows.len();
    let args = DeviceVector::from_host(&device, &args).unwrap();
    let which = DeviceVector::from_host(&device, &which).unwrap();
    let mut out = DeviceVector::<f64>::zeros(&device, n).unwrap();
    let n_arg = n as i32;
    // SAFETY: the arguments match the kernel's signature; `args` holds
    // n·MAX_ARGS values, `which` and `out` n.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(args.buffer())
            .set_arg(which.buffer())
            .set_arg(out.buffer_mut())
            .set_arg(&n_arg)
            .set_global_work_size(n.div_ceil(64) * 64)
            .set_local_work_size(64)
            .enqueue_nd_range(device.queue())
            .unwrap();
    }
    let out = out.to_host().unwrap();
    let mut checked = BTreeMap::<&str, usize>::new();
    for ((name, tuple), value) in rows.iter().zip(&out) {
        let rust = (functions[name].eval)(tuple);
        assert!(
            rust < 1 << 53,
            "{name}{tuple:?} = {rust} is not exact in a double"
        );
        assert_eq!(
            *value,
            rust as f64,
            "{name}{tuple:?}: the OpenCL macro gives {value}, layout::{} gives {rust}",
            name.to_lowercase()
        );
        *checked.entry(name).or_default() += 1;
    }
    println!("checked on {}: {checked:?}", device.info().name);
}
