//! Command-line options shared by the solver examples (`laplacian`,
//! `elasticity`, `custom_physics`), and their checks: everything a command
//! line can get wrong is reported before the first solve, naming the
//! option and its value.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use femquad::backend::Backend;
use femquad::mesh::size::{
    FieldSize, Footprint, MeshSize, largest, physical_memory, refinements_too_many,
};
use femquad::mesh::{GmshMesh, GmshOptions, Mesh, read_gmsh_with};
use femquad::multigrid::MeshHierarchy;
use femquad::opencl::{Device, DeviceSelector, KernelOptions};
use femquad::output::VtuFormat;
use femquad::physics::EvalPrecision;
use femquad::solve::Preconditioner;
use femquad::{Error, Precision, Result};

use crate::convergence::{
    Level, Manufactured, SolveOptions, level, solve_on, study, table_header, table_row, write_vtu,
};

/// Printing into a closed pipe (`cargo run --example laplacian | head -1`)
/// ends the program silently, as it does other Unix tools (`yes | head`),
/// instead of a panic "failed printing to stdout: Broken pipe": the Rust
/// runtime ignores `SIGPIPE`, this restores its default action, which ends
/// the process (the shell reports the pipeline's status from `head`).
/// Call it first in `main`. Does nothing on other systems.
pub fn end_quietly_on_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any other thread exists;
    // setting a signal's action to its default installs no handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `--precision`: the values of [`Precision`] (listed by `--help`), parsed
/// by its `FromStr`.
pub fn precision_parser() -> impl TypedValueParser<Value = Precision> {
    PossibleValuesParser::new(Precision::ALL.map(Precision::name))
        .try_map(|s| s.parse::<Precision>())
}

/// The default relative tolerance of an example's solver, per precision,
/// and the stopping test it enters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Default with residuals in double precision.
    pub f64: f64,
    /// Default with residuals in single precision (whose rounding stops
    /// the residual from falling much further).
    pub f32: f64,
    /// What the tolerance is relative to.
    pub test: &'static str,
}

/// Conjugate gradients of the linear examples (`laplacian`, `elasticity`).
pub const CG_TOLERANCE: Tolerance = Tolerance {
    f64: 1e-12,
    f32: 1e-5,
    test: "conjugate gradients stop when |r_k| <= tol * |b| (2-norms; b: the right-hand side \
           of the system for the interior dofs, r_k: its residual)",
};

/// Newton–Krylov of the nonlinear example (`custom_physics`).
pub const NEWTON_TOLERANCE: Tolerance = Tolerance {
    f64: 1e-10,
    f32: 1e-4,
    test: "Newton stops when |F(u_k)| <= tol * |F(u_0)| (2-norms of the residual at the \
           interior dofs; u_0: the boundary values, zero inside)",
};

impl Tolerance {
    /// The default for `precision`.
    pub fn default_for(&self, precision: Precision) -> f64 {
        match precision {
            Precision::F64 => self.f64,
            Precision::F32 => self.f32,
        }
    }

    /// The help text of `--tol` for a program with this default.
    pub fn help(&self) -> String {
        format!(
            "Relative tolerance of the solver [default: {:e} in f64, {:e} in f32]: {}",
            self.f64, self.f32, self.test
        )
    }
}

/// Options of a manufactured-solution study.
#[derive(Args, Clone, Debug)]
pub struct SolveArgs {
    /// Spatial dimension: 2 (unit square) or 3 (unit cube).
    #[arg(long, default_value_t = 2, conflicts_with = "mesh")]
    pub dim: usize,
    /// Polynomial order of the Lagrange elements: 1 or 2.
    #[arg(long, default_value_t = 1)]
    pub order: usize,
    /// Number of refinement levels (default depends on dim and order), at
    /// most as many as make a finest mesh whose cells a mesh can number
    /// (u32) and that fits this machine's memory; more is an error that
    /// states the bound.
    #[arg(long, conflicts_with = "mesh")]
    pub levels: Option<usize>,
    /// Intervals per side of the coarsest mesh; level k has n0·2^k
    /// (default depends on dim and order).
    #[arg(long, conflicts_with = "mesh")]
    pub n0: Option<usize>,
    /// Evaluate residuals with the native (CPU, Rust) integrator instead of OpenCL.
    #[arg(long)]
    pub native: bool,
    /// OpenCL device: gpu, cpu, an index or part of a name (default: the
    /// FEMQUAD_DEVICE environment variable, else a GPU, else any device).
    #[arg(long)]
    pub device: Option<String>,
    /// Precision of the residual evaluations (f32: errors stop falling at
    /// about 1e-6 relative, expect the rates to break down on fine meshes;
    /// f64: the device needs cl_khr_fp64).
    #[arg(long, default_value = "f64", value_parser = precision_parser())]
    pub precision: Precision,
    /// A Gmsh mesh to solve on once instead of a convergence study (not
    /// with --dim, --levels, --n0).
    #[command(flatten)]
    pub gmsh: MeshArgs,
    /// Write the finest solution and its error to this VTU file (ParaView);
    /// its directory must exist and be writable (checked before solving).
    #[arg(long, value_name = "FILE")]
    pub vtu: Option<PathBuf>,
    /// Write the VTU file as text instead of base64 binary.
    #[arg(long)]
    pub ascii: bool,
    /// Relative tolerance of the solver (each program states its default
    /// and stopping test in its --help).
    #[arg(long)]
    pub tol: Option<f64>,
    /// Largest number of Krylov iterations of one solve.
    #[arg(long, default_value_t = 20_000)]
    pub max_iter: usize,
    /// Preconditioner of the Krylov solves: mg (geometric multigrid on the
    /// refinement hierarchy: iterations bounded under refinement), jacobi
    /// (point-block Jacobi) or none.
    #[arg(long, default_value = "mg", value_parser = ["mg", "jacobi", "none"])]
    pub preconditioner: String,
}

impl SolveArgs {
    /// Checks the values clap cannot (dimension, order, counts, tolerance,
    /// that the `--vtu` file can be written). The sizes are checked by
    /// [`SolveArgs::sizes`].
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
        if let Some(t) = self.tol
            && !(t > 0.0 && t < 1.0)
        {
            return Err(Error::arg("--tol", format!("must lie in (0, 1), got {t}")));
        }
        if let Some(path) = &self.vtu {
            check_writable("--vtu", path)?;
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
        Ok(Backend::opencl_with(
            Device::open(&selector)?,
            KernelOptions::from_env()?,
        ))
    }

    /// The preconditioner `--preconditioner` names (multigrid with its
    /// default options for `mg`).
    pub fn preconditioner(&self) -> Result<Preconditioner> {
        match self.preconditioner.as_str() {
            "mg" => Ok(Preconditioner::default()),
            "jacobi" => Ok(Preconditioner::Jacobi),
            "none" => Ok(Preconditioner::None),
            other => Err(Error::arg(
                "--preconditioner",
                format!("`{other}` is not mg, jacobi or none"),
            )),
        }
    }

    /// The solver tolerance: `--tol`, else the program's default for the
    /// precision.
    pub fn tolerance(&self, default: &Tolerance) -> f64 {
        self.tol
            .unwrap_or_else(|| default.default_for(self.precision))
    }

    /// Mesh sizes `n0·2^k`, `k = 0..levels`, with `defaults = (n0, levels)`
    /// for the options not given, for a solution of `n_comp` components;
    /// checked by [`study_sizes`] against this machine's memory.
    pub fn sizes(&self, defaults: (usize, usize), n_comp: usize) -> Result<Vec<usize>> {
        let size = StudySize {
            dim: self.dim,
            order: self.order,
            n_comp,
        };
        let n0 = self.n0.unwrap_or(defaults.0);
        let levels = self.levels.unwrap_or(defaults.1);
        study_sizes(&size, n0, levels, physical_memory())
    }
}

/// Checks that `path`, given by `option`, can be written: it is not a
/// directory, its directory exists, and a file can be created there (or the
/// existing file opened for writing; its contents are left alone).
pub fn check_writable(option: &'static str, path: &Path) -> Result<()> {
    let fail =
        |why: String| Error::arg(option, format!("cannot write `{}`: {why}", path.display()));
    if path.is_dir() {
        return Err(fail("it is a directory".into()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(fail(format!(
            "the directory `{}` does not exist",
            dir.display()
        )));
    }
    if path.exists() {
        OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| fail(e.to_string()))?;
    } else {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| fail(e.to_string()))?;
        std::fs::remove_file(path).map_err(|e| fail(e.to_string()))?;
    }
    Ok(())
}

/// The Gmsh mesh options shared by the examples (`--mesh`, `--refine`,
/// `--reorient`); each example makes its own size options conflict with
/// `--mesh`.
#[derive(Args, Clone, Debug, Default)]
pub struct MeshArgs {
    /// Solve on this Gmsh (.msh 4.1, ASCII or binary) mesh instead of the
    /// unit square or cube, with Dirichlet conditions on all boundary nodes;
    /// the mesh fixes the dimension and the size.
    #[arg(long, value_name = "FILE")]
    pub mesh: Option<PathBuf>,
    /// With --mesh: refine the mesh this many times (boundary groups kept)
    /// and solve on the finest, the multigrid using every level; at most as
    /// many as make a finest mesh that u32 indices number and that fits this
    /// machine's memory (more is an error that states the bound).
    #[arg(long, default_value_t = 0, requires = "mesh")]
    pub refine: usize,
    /// With --mesh: flip the cells the file lists clockwise (a mesh, or a
    /// region of it, written so); without it such a cell is an error. A
    /// tangled mesh (cells overlapping their neighbours) is refused either
    /// way.
    #[arg(long, requires = "mesh")]
    pub reorient: bool,
}

/// A Gmsh mesh read as [`MeshArgs`] ask, and its refinement hierarchy.
#[derive(Clone, Debug)]
pub struct MeshFile {
    /// The file.
    pub path: PathBuf,
    /// The mesh as read (the coarsest level).
    pub gmsh: GmshMesh,
    /// The mesh and its `--refine` refinements.
    pub hierarchy: MeshHierarchy,
}

impl MeshArgs {
    /// Reads `--mesh` (flipping clockwise cells with `--reorient`), checks
    /// `--refine` for a solve of `field(dim)` on it ([`check_refine`],
    /// before any refinement; `dim` the mesh's) and refines; `None` without
    /// `--mesh`.
    pub fn load(&self, field: impl Fn(usize) -> FieldSize) -> Result<Option<MeshFile>> {
        let Some(path) = &self.mesh else {
            return Ok(None);
        };
        let options = GmshOptions {
            reorient: self.reorient,
            ..GmshOptions::default()
        };
        let gmsh = read_gmsh_with(path, &options)?;
        let field = field(gmsh.mesh.dim());
        check_refine(&gmsh.mesh, self.refine, field, physical_memory())?;
        let hierarchy = MeshHierarchy::from_gmsh(&gmsh, self.refine)?;
        Ok(Some(MeshFile {
            path: path.clone(),
            gmsh,
            hierarchy,
        }))
    }
}

impl MeshFile {
    /// What was read and refined, one line each: `mesh FILE: 2D, 384
    /// cells, 225 vertices` (with the cells flipped by `--reorient` and
    /// whether second-order cells were read by their vertices), then
    /// `refined R times: …` if it was.
    pub fn describe(&self) -> String {
        let (coarse, fine) = (&self.gmsh.mesh, self.hierarchy.finest());
        let mut s = format!(
            "mesh {}: {}D, {} cells, {} vertices",
            self.path.display(),
            coarse.dim(),
            coarse.n_cells(),
            coarse.n_vertices()
        );
        if self.gmsh.reoriented > 0 {
            s += &format!(", {} cells flipped (--reorient)", self.gmsh.reoriented);
        }
        if self.gmsh.second_order {
            s += ", second-order cells read by their vertices";
        }
        let refinements = self.hierarchy.n_levels() - 1;
        if refinements > 0 {
            s += &format!(
                "\nrefined {refinements} times: {} cells, {} vertices",
                fine.n_cells(),
                fine.n_vertices()
            );
        }
        s
    }
}

/// Checks `--refine`: `refine` refinements of `mesh`, held together as the
/// multigrid hierarchy holds them, with a solve of `field` on the finest,
/// must fit `u32` indices and `memory` bytes (if known)
/// ([`refinements_too_many`]). The error names `--refine` with the value,
/// the reason and the most refinements that fit.
pub fn check_refine(
    mesh: &Mesh,
    refine: usize,
    field: FieldSize,
    memory: Option<u64>,
) -> Result<()> {
    match refinements_too_many(&MeshSize::of(mesh), refine, Some(field), memory) {
        Some(why) => Err(Error::arg("--refine", format!("--refine {refine}: {why}"))),
        None => Ok(()),
    }
}

/// What the size of a study's meshes depends on besides `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StudySize {
    /// Spatial dimension, 2 or 3.
    pub dim: usize,
    /// Lagrange order, 1 or 2.
    pub order: usize,
    /// Components of the solution.
    pub n_comp: usize,
}

impl StudySize {
    /// Why a study cannot reach the mesh of `n` intervals per side, or
    /// `None` if it can: the unit box's cells, vertices or dofs exceed
    /// `u32` indices, or a lower bound of a solve's memory on it exceeds
    /// `memory` (bytes, if known) — [`Footprint::too_large`].
    pub fn too_large(&self, n: f64, memory: Option<u64>) -> Option<String> {
        Footprint {
            meshes: &[MeshSize::unit_box(self.dim, n)],
            field: Some(self.field()),
        }
        .too_large(memory)
    }

    /// The solution's field.
    pub fn field(&self) -> FieldSize {
        FieldSize {
            order: self.order,
            n_comp: self.n_comp,
        }
    }
}

/// Checks the unit box of `n` intervals per side that `option` asks for
/// (a solve of `size`'s field on it): [`StudySize::too_large`] with
/// `memory` bytes (if known). The error names `option` with the value, the
/// reason and the largest `n` that fits.
pub fn check_box(
    option: &'static str,
    size: &StudySize,
    n: usize,
    memory: Option<u64>,
) -> Result<()> {
    let Some(why) = size.too_large(n as f64, memory) else {
        return Ok(());
    };
    let most = match largest(1, n, |m| size.too_large(m as f64, memory).is_none()) {
        Some(m) => format!("at most {option} {m} in {}D P{}", size.dim, size.order),
        None => "no mesh fits".into(),
    };
    Err(Error::arg(
        option,
        format!("{option} {n}: the mesh of {n} intervals per side has {why}; {most}"),
    ))
}

/// The mesh sizes `n0·2^k`, `k = 0..levels`, of a study, checked: the
/// finest mesh must be one a mesh can number and, if `memory` (bytes) is
/// known, fit in it ([`StudySize::too_large`]). The error names `--levels`
/// (or `--n0` if even one level is too large) with the value, the reason,
/// and the most levels that fit.
pub fn study_sizes(
    size: &StudySize,
    n0: usize,
    levels: usize,
    memory: Option<u64>,
) -> Result<Vec<usize>> {
    if levels == 0 {
        return Err(Error::arg("--levels", "must be at least 1"));
    }
    if n0 == 0 {
        return Err(Error::arg("--n0", "must be at least 1"));
    }
    let finest = |levels: usize| n0 as f64 * 2f64.powi(levels as i32 - 1);
    if let Some(why) = size.too_large(n0 as f64, memory) {
        return Err(Error::arg(
            "--n0",
            format!("--n0 {n0}: the coarsest mesh has {why}"),
        ));
    }
    if let Some(why) = size.too_large(finest(levels), memory) {
        let mesh = |l: usize| format!("n = {n0}·2^{} = {:.0} intervals per side", l - 1, finest(l));
        // at least 1 fits (checked above), at most 64 (n0·2^63 exceeds u32 cells)
        let most = (1..=64)
            .take_while(|&l| size.too_large(finest(l), memory).is_none())
            .last()
            .unwrap_or(1);
        let mut reason = format!(
            "--levels {levels} from --n0 {n0}: the finest mesh, {}, has {why}; at most {most} \
             levels from --n0 {n0} in {}D P{}",
            mesh(levels),
            size.dim,
            size.order
        );
        if most + 1 < levels
            && let Some(next) = size.too_large(finest(most + 1), memory)
        {
            reason.push_str(&format!(
                " ({} levels: {}, {next})",
                most + 1,
                mesh(most + 1)
            ));
        }
        return Err(Error::arg("--levels", reason));
    }
    Ok((0..levels).map(|k| n0 << k).collect())
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
    let default_tol = if problem.linear {
        &CG_TOLERANCE
    } else {
        &NEWTON_TOLERANCE
    };
    // sizes (or the mesh) before the backend: a bad --levels or --refine is
    // reported at once
    let field = |dim| FieldSize {
        order: args.order,
        n_comp: problem.n_comp(dim),
    };
    let file = args.gmsh.load(field)?;
    let sizes = match file {
        Some(_) => Vec::new(),
        None => args.sizes(defaults(args.dim, args.order), problem.n_comp(args.dim))?,
    };
    let backend = args.backend()?;
    let mut opts = SolveOptions::new(args.order, backend, args.tolerance(default_tol));
    opts.max_iter = args.max_iter;
    opts.preconditioner = args.preconditioner()?;
    match args.precision {
        Precision::F64 => run_typed::<f64>(problem, args, &opts, file, &sizes),
        Precision::F32 => run_typed::<f32>(problem, args, &opts, file, &sizes),
    }
}

fn run_typed<R: EvalPrecision>(
    problem: &Manufactured,
    args: &SolveArgs,
    opts: &SolveOptions,
    file: Option<MeshFile>,
    sizes: &[usize],
) -> Result<Vec<Level>> {
    let solver = if problem.linear {
        "conjugate gradients"
    } else {
        "Newton-Krylov (GMRES, exact Jacobian products)"
    };
    let preconditioner = match opts.preconditioner {
        Preconditioner::Multigrid(_) => {
            "geometric multigrid (V-cycle, Chebyshev/point-block Jacobi)"
        }
        Preconditioner::Jacobi => "point-block Jacobi",
        Preconditioner::None => "no preconditioner",
    };
    println!("femquad {}: {}", problem.name, problem.description);
    println!(
        "P{} elements, residuals in {} by {}",
        args.order,
        R::PRECISION.name(),
        opts.backend.describe()
    );
    println!(
        "solver: {solver} with {preconditioner}, relative tolerance {:.0e}",
        opts.tol
    );
    let format = if args.ascii {
        VtuFormat::Ascii
    } else {
        VtuFormat::Base64
    };
    if let Some(file) = file {
        println!("{}", file.describe());
        let mesh = &file.hierarchy.finest().clone();
        println!("Dirichlet conditions from the exact solution on all boundary nodes\n");
        let s = solve_on::<R>(problem, file.hierarchy, opts)?;
        let row = level(0, mesh, &s, None);
        println!("{}", table_header(!problem.linear));
        println!("{}", table_row(&row));
        if let Some(out) = &args.vtu {
            write_vtu(out, problem, &s, format)?;
            println!(
                "\nwrote {} ({} points, {} cells)",
                out.display(),
                s.space.n_nodes(),
                mesh.n_cells()
            );
        }
        return Ok(vec![row]);
    }
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
    let study = study::<R>(problem, args.dim, sizes, opts, |row| {
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
        write_vtu(out, problem, &study.solution, format)?;
        println!(
            "wrote {} ({} points, {} cells; fields u, u_exact, error, l2_error)",
            out.display(),
            study.solution.space.n_nodes(),
            study.mesh.n_cells()
        );
    }
    Ok(study.levels)
}
