//! Evaluates a Laplacian residual on a generated mesh with the OpenCL
//! integrator (or natively, `--native`), checks it against the native
//! integrator and prints its norm.
//!
//! ```text
//! cargo run --release --example laplacian -- [--dim 2|3] [--n 64] [--order 1|2] [--native]
//! ```

use clap::Parser;
use femquad::assembly::Residual;
use femquad::aux::AuxSpace;
use femquad::element::Element;
use femquad::integrate::backend::Backend;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::opencl::DeviceSelector;
use femquad::physics::builtin::Laplacian;
use femquad::quadrature::Quadrature;
use femquad::space::FunctionSpace;

#[derive(Parser)]
struct Args {
    /// Spatial dimension.
    #[arg(long, default_value_t = 2)]
    dim: usize,
    /// Subdivisions per side of the unit square or cube.
    #[arg(long, default_value_t = 64)]
    n: usize,
    /// Polynomial order (1 or 2).
    #[arg(long, default_value_t = 1)]
    order: usize,
    /// Use the native integrator instead of OpenCL.
    #[arg(long)]
    native: bool,
    /// OpenCL device (gpu, cpu, index or name); default FEMQUAD_DEVICE or a GPU.
    #[arg(long)]
    device: Option<String>,
}

fn main() -> femquad::Result<()> {
    let args = Args::parse();
    let mesh = unit_box(args.dim, args.n, &MeshOptions { jitter: 0.1, shuffle: true, seed: 1 })?;
    let space = FunctionSpace::new(&mesh, Element::lagrange(args.dim, args.order)?, 1)?;
    let quadrature = Quadrature::simplex(args.dim, 2 * args.order)?;
    let backend = if args.native {
        Backend::native()
    } else {
        let selector = args.device.as_deref().map(DeviceSelector::parse).unwrap_or_else(DeviceSelector::from_env);
        Backend::opencl(&selector)?
    };
    println!("{} cells, {} dofs, {}", mesh.n_cells(), space.n_dofs(), backend.describe());
    let u = space.interpolate(&mesh, |x, out| out[0] = x.iter().map(|v| v * v).sum())?;
    let mut residual = Residual::<f64>::new(&mesh, space.clone(), quadrature.clone(), AuxSpace::None, &backend)?;
    let mut r = vec![0.0; u.len()];
    residual.evaluate(&Laplacian, &u, &[], &mut r)?;
    let mut reference = Residual::<f64>::new(&mesh, space, quadrature, AuxSpace::None, &Backend::native())?;
    let mut r_ref = vec![0.0; u.len()];
    reference.evaluate(&Laplacian, &u, &[], &mut r_ref)?;
    let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
    let diff = r.iter().zip(&r_ref).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt();
    println!("|F(u)| = {norm:.12e}   (|F - F_native| = {diff:.2e})");
    Ok(())
}
