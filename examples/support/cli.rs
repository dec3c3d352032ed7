//! Command-line options shared by the solver examples (`laplacian`,
//! `elasticity`, `custom_physics`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use femquad::backend::Backend;
use femquad::mesh::gmsh::read_gmsh;
use femquad::opencl::DeviceSelector;
use femquad::output::VtuFormat;
use femquad::{Error, Real, Result};

use crate::convergence::{
    Level, Manufactured, SolveOptions, level, solve, study, table_header, table_row, write_vtu,
};

/// Floating-point precision of the residual evaluations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    /// Single precision (`float` on the device). Errors stop falling at
    /// about 1e-6 relative: expect the rates to break down on fine meshes.
    F32,
    /// Double precision (`double`; the device needs `cl_khr_fp64`).
    F64,
}

/// Options of a manufactured-solution study.
#[derive(Args, Clone, Debug)]
pub struct SolveArgs {
    /// Spatial dimension: 2 (unit square) or 3 (unit cube).
    #[arg(long, default_value_t = 2)]
    pub dim: usize,
    /// Polynomial order of the Lagrange elements: 1 or 2.
    #[arg(long, default_value_t = 1)]
    pub order: usize,
    /// Number of refinement levels (default depends on dim and order).
    #[arg(long)]
    pub levels: Option<usize>,
    /// Intervals per side of the coarsest mesh; level k has n0·2^k
    /// (default depends on dim and order).
    #[arg(long)]
    pub n0: Option<usize>,
    /// Evaluate residuals with the native (CPU, Rust) integrator instead of OpenCL.
    #[arg(long)]
    pub native: bool,
    /// OpenCL device: gpu, cpu, an index or part of a name (default: the
    /// FEMQUAD_DEVICE environment variable, else a GPU, else any device).
    #[arg(long)]
    pub device: Option<String>,
    /// Precision of the residual evaluations.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,
    /// Solve once on this Gmsh (.msh 4.1) mesh instead of a convergence
    /// study: Dirichlet conditions on all boundary nodes.
    #[arg(long, value_name = "FILE")]
    pub mesh: Option<PathBuf>,
    /// Write the finest solution and its error to this VTU file (ParaView).
    #[arg(long, value_name = "FILE")]
    pub vtu: Option<PathBuf>,
    /// Write the VTU file as text instead of base64 binary.
    #[arg(long)]
    pub ascii: bool,
    /// Relative tolerance of the solver (default 1e-12 in f64, 1e-5 in f32).
    #[arg(long)]
    pub tol: Option<f64>,
    /// Largest number of Krylov iterations of one solve.
    #[arg(long, default_value_t = 20_000)]
    pub max_iter: usize,
}

impl SolveArgs {
    /// Checks the values clap cannot (dimension, order, counts).
    pub fn validate(&self) -> Result<()> {
        if !(self.dim == 2 || self.dim == 3) {
            return Err(Error::arg(
                "--dim",
                format!("must be 2 or 3, got {}", self.dim),
            ));
        }
        if !(self.order == 1 || self.order == 2) {
            return Err(Error::arg(
                "--order",
                format!("must be 1 or 2, got {}", self.order),
            ));
        }
        if self.levels == Some(0) {
            return Err(Error::arg("--levels", "must be at least 1"));
        }
        if self.n0 == Some(0) {
            return Err(Error::arg("--n0", "must be at least 1"));
        }
        if let Some(t) = self.tol
            && !(t > 0.0 && t < 1.0)
        {
            return Err(Error::arg("--tol", format!("must lie in (0, 1), got {t}")));
        }
        Ok(())
    }

    /// The integrator backend the options ask for: native, or OpenCL on the
    /// selected device.
    pub fn backend(&self) -> Result<Backend> {
        if self.native {
            return Ok(Backend::native());
        }
        let selector = match &self.device {
            Some(d) => DeviceSelector::parse(d),
            None => DeviceSelector::from_env(),
        };
        Backend::opencl(&selector)
    }

    /// The solver tolerance: `--tol`, else 1e-12 (f64) or 1e-5 (f32).
    pub fn tolerance(&self) -> f64 {
        self.tol.unwrap_or(match self.precision {
            Precision::F64 => 1e-12,
            Precision::F32 => 1e-5,
        })
    }

    /// Mesh sizes `n0·2^k`, `k = 0..levels`, with `defaults = (n0, levels)`
    /// for the options not given.
    pub fn sizes(&self, defaults: (usize, usize)) -> Vec<usize> {
        let n0 = self.n0.unwrap_or(defaults.0);
        let levels = self.levels.unwrap_or(defaults.1);
        (0..levels).map(|k| n0 << k).collect()
    }
}

/// Runs a manufactured-solution example as its command line asks and
/// prints what it does: a convergence study on the unit square or cube
/// (`defaults(dim, order) = (n0, levels)` for sizes not given), or one
/// solve on a Gmsh mesh (`--mesh`); `--vtu` writes the finest solution.
/// Returns the study's rows.
pub fn run_example(
    problem: &Manufactured,
    args: &SolveArgs,
    defaults: impl Fn(usize, usize) -> (usize, usize),
) -> Result<Vec<Level>> {
    args.validate()?;
    let backend = args.backend()?;
    let mut opts = SolveOptions::new(args.order, backend, args.tolerance());
    opts.max_iter = args.max_iter;
    match args.precision {
        Precision::F64 => run_typed::<f64>(problem, args, &opts, defaults),
        Precision::F32 => run_typed::<f32>(problem, args, &opts, defaults),
    }
}

fn run_typed<R: Real>(
    problem: &Manufactured,
    args: &SolveArgs,
    opts: &SolveOptions,
    defaults: impl Fn(usize, usize) -> (usize, usize),
) -> Result<Vec<Level>> {
    let solver = if problem.linear {
        "conjugate gradients"
    } else {
        "Newton-Krylov (GMRES, finite-difference Jacobian products)"
    };
    println!("femquad {}: {}", problem.name, problem.description);
    println!(
        "P{} elements, residuals in {} by {}",
        args.order,
        R::PRECISION.name(),
        opts.backend.describe()
    );
    println!("solver: {solver}, relative tolerance {:.0e}", opts.tol);
    let format = if args.ascii {
        VtuFormat::Ascii
    } else {
        VtuFormat::Base64
    };
    if let Some(path) = &args.mesh {
        let gmsh = read_gmsh(path)?;
        let mesh = &gmsh.mesh;
        println!(
            "mesh {}: {}D, {} cells, {} vertices{}{}",
            path.display(),
            mesh.dim(),
            mesh.n_cells(),
            mesh.n_vertices(),
            if gmsh.reoriented > 0 {
                format!(", {} cells reoriented", gmsh.reoriented)
            } else {
                String::new()
            },
            if gmsh.second_order {
                ", second-order cells read by their vertices"
            } else {
                ""
            },
        );
        println!("Dirichlet conditions from the exact solution on all boundary nodes\n");
        let s = solve::<R>(problem, mesh, opts)?;
        let row = level(0, mesh, &s, None);
        println!("{}", table_header(!problem.linear));
        println!("{}", table_row(&row));
        if let Some(out) = &args.vtu {
            write_vtu(out, mesh, problem, &s, format)?;
            println!(
                "\nwrote {} ({} points, {} cells)",
                out.display(),
                s.space.n_nodes(),
                mesh.n_cells()
            );
        }
        return Ok(vec![row]);
    }
    let sizes = args.sizes(defaults(args.dim, args.order));
    println!(
        "unit {} with n x n{} {}, n = {:?}, Dirichlet conditions from the exact solution\n",
        if args.dim == 2 { "square" } else { "cube" },
        if args.dim == 2 { "" } else { " x n" },
        if args.dim == 2 {
            "squares of 2 triangles"
        } else {
            "cubes of 6 tetrahedra"
        },
        sizes
    );
    println!("{}", table_header(!problem.linear));
    let study = study::<R>(problem, args.dim, &sizes, opts, |row| {
        println!("{}", table_row(row))
    })?;
    if let Some(r) = study.final_rate() {
        println!(
            "\nL2 rate over the last two refinements: {r:.2} (expected {} for P{})",
            args.order + 1,
            args.order
        );
    }
    if let Some(out) = &args.vtu {
        write_vtu(out, &study.mesh, problem, &study.solution, format)?;
        println!(
            "wrote {} ({} points, {} cells; fields u, u_exact, error, l2_error)",
            out.display(),
            study.solution.space.n_nodes(),
            study.mesh.n_cells()
        );
    }
    Ok(study.levels)
}
