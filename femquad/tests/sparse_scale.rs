//! Timings of the sparse path at 2^20 cells (2D P1 Laplacian), with value
//! checks. Ignored by default; run in release:
//!
//! ```text
//! cargo test --release -p femquad --test sparse_scale -- --ignored --nocapture
//! ```
//! (`FEMQUAD_SCALE_CELLS` overrides the target cell count.)

use std::sync::Arc;
use std::time::Instant;

use femquad::aux_space::AuxSpace;
use femquad::discretization::{CellInputs, Discretization};
use femquad::element::Element;
use femquad::linalg::FixedDofs;
use femquad::mesh::generate::{MeshOptions, mesh_for_cells};
use femquad::native::Execution;
use femquad::quadrature::Quadrature;
use femquad::space::FunctionSpace;
use femquad::sparse::{CsrMatrix, DirectSolver, SparsityPattern, element_matrices};

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    println!("{what:<44} {:>9.1} ms", t.elapsed().as_secs_f64() * 1e3);
    out
}

#[test]
#[ignore = "timing at 2^20 cells; run in release with --ignored --nocapture"]
fn p1_laplacian_at_2_to_the_20_cells() {
    let target: usize = std::env::var("FEMQUAD_SCALE_CELLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 20);
    println!("rayon threads: {}", rayon::current_num_threads());
    for shuffle in [false, true] {
        let opts = MeshOptions {
            shuffle,
            ..MeshOptions::default()
        };
        let m = mesh_for_cells(2, target, &opts).unwrap();
        let m = Arc::new(m);
        let s = FunctionSpace::new(m.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        println!(
            "\n2D P1, {} cells, {} dofs, shuffled numbering: {shuffle}",
            s.n_cells(),
            s.n_dofs()
        );
        let p = timed("pattern (incl. node → cell incidence)", || {
            SparsityPattern::of_space(&s).unwrap()
        });
        let p2 = timed("pattern again (incidence cached)", || {
            SparsityPattern::of_space(&s).unwrap()
        });
        assert!(p.same_structure(&p2));
        println!(
            "nnz {} ({:.2} per row)",
            p.nnz(),
            p.nnz() as f64 / p.n_rows() as f64
        );

        let q = Quadrature::default_for(&s.element()).unwrap();
        let disc = Discretization::<f64>::new(&s, q, AuxSpace::None).unwrap();
        let u = vec![0.0; s.n_cell_dofs()];
        let inputs = CellInputs {
            u: &u,
            aux: &[],
            constants: &[],
            time: None,
        };
        let mut ke = vec![0.0; s.n_cells() * 9];
        timed("element matrices (Laplacian, closure)", || {
            element_matrices(
                &disc,
                &inputs,
                |dim, _, _, _, _, g3| {
                    for d in 0..dim {
                        g3[d * dim + d] = 1.0;
                    }
                    Ok(())
                },
                &mut ke,
                Execution::Parallel,
            )
            .unwrap()
        });
        let mut a = timed("assemble (zeros + fill)", || {
            CsrMatrix::assemble(&p, &ke).unwrap()
        });
        timed("fill (re-assemble values)", || a.fill(&ke).unwrap());
        let n = s.n_dofs();
        let mut y = vec![0.0; n];
        let ones = vec![1.0; n];
        timed("spmv", || a.spmv(&ones, &mut y).unwrap());
        assert!(y.iter().all(|v| v.abs() < 1e-10));

        if shuffle {
            continue;
        }
        // Dirichlet Laplacian, exact linear solution.
        let g = s.interpolate(|x, o| o[0] = 1.0 + x[0] - 2.0 * x[1]);
        let mut b = vec![0.0; n];
        let fixed = FixedDofs::new(n, &s.boundary_dofs().unwrap()).unwrap();
        timed("Dirichlet elimination", || {
            fixed.eliminate(&mut a, &mut b, &g).unwrap()
        });
        let mut solver = timed("Cholesky: symbolic + numeric (+ probe)", || {
            DirectSolver::cholesky(&a).unwrap()
        });
        timed("Cholesky: refactor (numeric + probe)", || {
            solver.refactor(&a).unwrap()
        });
        let mut x = vec![0.0; n];
        timed("Cholesky: solve", || solver.solve(&b, &mut x).unwrap());
        let err = x
            .iter()
            .zip(&g)
            .fold(0.0f64, |e, (a, b)| e.max((a - b).abs()));
        println!("max error vs the linear solution: {err:.2e}");
        assert!(err < 1e-8);
    }
}
