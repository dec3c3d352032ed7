//! Boundary terms of a form (`Form::with_boundary`), natively: the facet
//! integrals are exact for polynomial data up to the rule's degree, their
//! AD Jacobian (`J·v`, the diagonal, the assembled CSR) agrees with central
//! differences and with itself, and misuse is a clear error.

use std::sync::Arc;

use femquad::facet::{BoundaryTerm, FacetQuadrature, FacetSet};
use femquad::physics::builtin::{Laplacian, Poisson};
use femquad::prelude::*;

/// `f0 = g(x)·n` with `g = (x₀ + 2x₁², x₀x₁ − 1)` (degree 2): the flux of `g`.
#[pointwise]
fn flux_of_g(x: &[f64; 2], n: &[f64; 2], f0: &mut [f64; 1]) {
    f0[0] = (x[0] + 2.0 * x[1] * x[1]) * n[0] + (x[0] * x[1] - 1.0) * n[1];
}

/// `f0 = g(x)·n` with `g = (x₀ + x₂², x₀x₁, 3 − x₂)` (degree 2).
#[pointwise]
fn flux_of_g3(x: &[f64; 3], n: &[f64; 3], f0: &mut [f64; 1]) {
    f0[0] = (x[0] + x[2] * x[2]) * n[0] + x[0] * x[1] * n[1] + (3.0 - x[2]) * n[2];
}

/// The flux term of `g` on `set`, in the set's dimension.
fn flux_term(set: FacetSet) -> BoundaryTerm<f64> {
    if set.dim() == 2 {
        BoundaryTerm::new(set, FluxOfG).unwrap()
    } else {
        BoundaryTerm::new(set, FluxOfG3).unwrap()
    }
}

fn mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions::default();
    Arc::new(if dim == 2 {
        unit_square(n, &opts).unwrap()
    } else {
        unit_cube(n, &opts).unwrap()
    })
}

/// `F(0)` of `Poisson` with source 0 plus the boundary term `physics` on the
/// whole boundary: the boundary integral alone.
fn boundary_residual(space: &FunctionSpace, term: BoundaryTerm<f64>) -> femquad::Result<Vec<f64>> {
    let form = Form::new(space.clone(), Poisson)?
        .with_constants(&[0.0])?
        .with_boundary(term)?;
    let mut op = Operator::<f64>::new(form, &Backend::native())?;
    let u = op.vector()?;
    let mut r = op.vector()?;
    op.apply(&u, &mut r)?;
    r.to_host()
}

/// `∫_∂Ω φ_i g·n ds` for `g` of degree 2. With P1 (rule of degree 2)
/// and P2 (degree 4), `Σ_i F_i = ∫_∂Ω g·n = ∫_Ω div g` (the divergence
/// theorem, in closed form: `div g = 1 + x₀` in 2D, `div g = x₀` in 3D,
/// so `∫ div g = 3/2` and `1/2`). With P2 the integrand `φ_i g·n` has
/// the rule's degree 4: every entry is exact — equal to the integral with a
/// rule of degree 8 — and so is the moment `Σ_i F_i x_{i,0} =
/// ∫_∂Ω x₀ g·n = ∫_Ω div(x₀ g) = ∫ g₀ + x₀ div g` (`Σ_i φ_i x_i = x`;
/// `7/6 + 5/6 = 2` in 2D, `5/6 + 1/3 = 7/6` in 3D).
#[test]
fn boundary_flux_is_exact_for_polynomial_data_up_to_the_rules_degree() {
    for (dim, order, n) in [(2, 1, 4), (2, 2, 3), (3, 1, 2), (3, 2, 2)] {
        let mesh = mesh(dim, n);
        let space =
            FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order).unwrap(), 1).unwrap();
        let whole = FacetSet::boundary(&mesh).unwrap();
        let f = boundary_residual(&space, flux_term(whole.clone())).unwrap();

        let sum: f64 = f.iter().sum();
        let (div, x0_div) = if dim == 2 {
            (1.5, 2.0)
        } else {
            (0.5, 7.0 / 6.0)
        };
        assert!(
            (sum - div).abs() < 1e-13,
            "{dim}D P{order}: Σ F_i = {sum}, ∫ div g = {div}"
        );
        if order == 2 {
            let x = space.node_coordinates();
            let moment: f64 = f.iter().enumerate().map(|(i, fi)| fi * x[i * dim]).sum();
            assert!(
                (moment - x0_div).abs() < 1e-13,
                "{dim}D P{order}: Σ F_i x_i0 = {moment}, ∫ div(x₀ g) = {x0_div}"
            );
            // φ_i g·n has degree 4 = the default rule's: every entry exact
            let degree_8 = flux_term(whole)
                .with_quadrature(FacetQuadrature::new(dim, 8).unwrap())
                .unwrap();
            let exact = boundary_residual(&space, degree_8).unwrap();
            for (i, (a, b)) in f.iter().zip(&exact).enumerate() {
                assert!((a - b).abs() < 1e-14, "{dim}D P2 dof {i}: {a} vs {b}");
            }
        }
    }
}

/// Two terms on two sets add up, and a term on part of the boundary
/// integrates there only: `g·n` on the side `x₀ = 1` plus on the rest is
/// the whole boundary's.
#[test]
fn terms_on_several_sets_add_up() {
    let mesh = mesh(2, 4);
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    let right = FacetSet::boundary_where(&mesh, |x| x[0] == 1.0).unwrap();
    let rest = FacetSet::boundary_where(&mesh, |x| x[0] != 1.0).unwrap();
    let whole = boundary_residual(
        &space,
        BoundaryTerm::new(FacetSet::boundary(&mesh).unwrap(), FluxOfG).unwrap(),
    )
    .unwrap();
    let form = Form::new(space.clone(), Poisson)
        .unwrap()
        .with_constants(&[0.0])
        .unwrap()
        .with_boundary(BoundaryTerm::new(right.clone(), FluxOfG).unwrap())
        .unwrap()
        .with_boundary(BoundaryTerm::new(rest, FluxOfG).unwrap())
        .unwrap();
    let mut op = Operator::<f64>::new(form, &Backend::native()).unwrap();
    let (u, mut r) = (op.vector().unwrap(), op.vector().unwrap());
    op.apply(&u, &mut r).unwrap();
    let r = r.to_host().unwrap();
    for (i, (a, b)) in r.iter().zip(&whole).enumerate() {
        assert!((a - b).abs() < 1e-14, "dof {i}: {a} vs {b}");
    }
    // on x₀ = 1 alone: ∫_{x₀=1} g·n = ∫_0^1 (1 + 2y²) dy = 5/3
    let side: f64 = boundary_residual(&space, BoundaryTerm::new(right, FluxOfG).unwrap())
        .unwrap()
        .iter()
        .sum();
    assert!((side - 5.0 / 3.0).abs() < 1e-14, "{side}");
}

/// A nonlinear boundary physics reading `u`, `grad_u`, `x` and `n`:
/// `f0 = c₀ u³ + u (∇u·n) + sin(x₀) u − c₁`.
#[pointwise]
fn nonlinear_boundary<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    n: &[f64; D],
    constants: &[f64; 2],
    f0: &mut [f64; 1],
) {
    let mut dn = 0.0;
    for d in 0..D {
        dn += grad_u[0][d] * n[d];
    }
    f0[0] = constants[0] * u[0] * u[0] * u[0] + u[0] * dn + x[0].sin() * u[0] - constants[1];
}

/// The Laplacian plus the nonlinear boundary term on the side `x₀ = 0`
/// and `x₁ = 1` (several facets of the same cells at the corner).
fn nonlinear_operator(dim: usize, order: usize) -> Operator<f64> {
    let mesh = mesh(dim, if dim == 2 { 4 } else { 2 });
    let space =
        FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order).unwrap(), 1).unwrap();
    let set = FacetSet::boundary_where(&mesh, |x| x[0] == 0.0 || x[1] == 1.0).unwrap();
    let term = BoundaryTerm::new(set, NonlinearBoundary)
        .unwrap()
        .with_constants(&[0.7, 0.2])
        .unwrap();
    let form = Form::new(space, Laplacian)
        .unwrap()
        .with_boundary(term)
        .unwrap();
    Operator::new(form, &Backend::native()).unwrap()
}

fn smooth(n: usize, phase: f64) -> Vec<f64> {
    (0..n)
        .map(|i| 0.5 + 0.4 * (1.3 * i as f64 + phase).sin())
        .collect()
}

/// `J(u)·v` of the boundary terms (AD tangent) equals the central
/// difference `(F(u + hv) − F(u − hv))/2h` to 1e-7, the assembled CSR's
/// `A·v` to 1e-12, and the point diagonal the CSR's diagonal.
#[test]
fn boundary_jacobian_matches_differences_and_the_assembled_matrix() {
    for (dim, order) in [(2, 1), (2, 2), (3, 1), (3, 2)] {
        let mut op = nonlinear_operator(dim, order);
        let n = op.space().n_dofs();
        let (u_h, v_h) = (smooth(n, 0.0), smooth(n, 2.0));
        let u = op.vector_from(&u_h).unwrap();
        let v = op.vector_from(&v_h).unwrap();
        let mut jv = op.vector().unwrap();
        op.jacobian_action(&u, &v, &mut jv).unwrap();
        let jv = jv.to_host().unwrap();

        let h = 1e-6;
        let f_at = |op: &mut Operator<f64>, s: f64| {
            let w: Vec<f64> = u_h.iter().zip(&v_h).map(|(a, b)| a + s * b).collect();
            let w = op.vector_from(&w).unwrap();
            let mut r = op.vector().unwrap();
            op.apply(&w, &mut r).unwrap();
            r.to_host().unwrap()
        };
        let (fp, fm) = (f_at(&mut op, h), f_at(&mut op, -h));
        let scale = jv.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            assert!(
                (jv[i] - fd).abs() <= 1e-7 * scale.max(1.0),
                "{dim}D P{order} dof {i}: J·v {} vs difference {fd}",
                jv[i]
            );
        }

        let a = op.assemble_jacobian(&u).unwrap();
        let mut av = vec![0.0; n];
        a.spmv(&v_h, &mut av).unwrap();
        for i in 0..n {
            assert!(
                (jv[i] - av[i]).abs() <= 1e-12 * scale.max(1.0),
                "{dim}D P{order} dof {i}: J·v {} vs CSR·v {}",
                jv[i],
                av[i]
            );
        }
        let mut diag = op.vector().unwrap();
        op.jacobian_diagonal(&u, &mut diag).unwrap();
        let diag = diag.to_host().unwrap();
        for (i, (d, c)) in diag.iter().zip(a.diagonal()).enumerate() {
            assert!(
                (d - c).abs() <= 1e-12 * scale.max(1.0),
                "{dim}D P{order} node {i}: diagonal {d} vs CSR {c}"
            );
        }
    }
}

fn reason<T>(r: femquad::Result<T>) -> (String, &'static str) {
    match r {
        Err(Error::InvalidArgument { name, reason }) => (reason, name),
        Err(e) => panic!("not an argument error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

/// `f1 = grad_u`: a boundary physics writing `f1` is refused.
#[pointwise]
fn writes_f1<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0] = grad_u[0];
}

/// `f0 = a₀ u`: reads an auxiliary field.
#[pointwise]
fn reads_aux(u: &[f64; 1], a: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = a[0] * u[0];
}

/// `f0 = u_t`: transient.
#[pointwise]
fn reads_u_t(u_t: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = u_t[0];
}

/// `f0 = u n₀`, 3D only.
#[pointwise]
fn only_3d(u: &[f64; 1], n: &[f64; 3], f0: &mut [f64; 1]) {
    f0[0] = u[0] * n[0];
}

/// `f0 = u` for a 2-component field.
#[pointwise]
fn two_comp(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = u[0];
    f0[1] = u[1];
}

#[test]
fn misuse_of_boundary_terms_is_a_clear_error() {
    let m = mesh(2, 2);
    let whole = || FacetSet::boundary(&m).unwrap();
    let space = FunctionSpace::new(m.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let laplacian = || Form::<f64>::new(space.clone(), Laplacian).unwrap();

    let empty = FacetSet::boundary_where(&m, |x| x[0] > 2.0).unwrap();
    let (e, name) = reason(BoundaryTerm::<f64>::new(empty, FluxOfG));
    assert_eq!(name, "facets");
    assert!(
        e.contains("facet set of the boundary term `flux_of_g` is empty"),
        "{e}"
    );

    let (e, name) = reason(BoundaryTerm::<f64>::new(whole(), WritesF1));
    assert_eq!(name, "physics");
    assert!(
        e.contains("`writes_f1` writes f1: a boundary term integrates f0 only"),
        "{e}"
    );
    let (e, _) = reason(BoundaryTerm::<f64>::new(whole(), ReadsAux));
    assert!(e.contains("`reads_aux` reads an auxiliary field"), "{e}");
    // a transient boundary term is a term; its operator refuses to evaluate
    // it without a time state, as a transient cell physics
    let term = BoundaryTerm::<f64>::new(whole(), ReadsUT).unwrap();
    let mut op =
        Operator::new(laplacian().with_boundary(term).unwrap(), &Backend::native()).unwrap();
    let (u, mut r) = (op.vector().unwrap(), op.vector().unwrap());
    let (e, name) = reason(op.apply(&u, &mut r));
    assert_eq!(name, "physics");
    assert!(
        e.contains("`reads_u_t` reads `u_t`: bind a time state (Operator::set_time"),
        "{e}"
    );
    let (e, _) = reason(BoundaryTerm::<f64>::new(whole(), Only3d));
    assert!(
        e.contains("supports dimension(s) [3], not the facet set's 2"),
        "{e}"
    );

    // the set of another mesh
    let other = mesh(2, 3);
    let term = BoundaryTerm::new(FacetSet::boundary(&other).unwrap(), FluxOfG).unwrap();
    let (e, name) = reason(laplacian().with_boundary(term));
    assert_eq!(name, "facets");
    assert!(e.contains("make it on this mesh"), "{e}");
    // components
    let (e, name) = reason(laplacian().with_boundary(BoundaryTerm::new(whole(), TwoComp).unwrap()));
    assert_eq!(name, "physics");
    assert!(
        e.contains("the boundary physics `two_comp` has 2 component(s) in 2D but the space has 1"),
        "{e}"
    );
    // constants: counted when given, required when the operator is built
    let (e, name) = reason(
        BoundaryTerm::<f64>::new(whole(), NonlinearBoundary)
            .unwrap()
            .with_constants(&[1.0]),
    );
    assert_eq!(name, "constants");
    assert!(
        e.contains("the boundary physics `nonlinear_boundary` takes 2 constant(s), got 1"),
        "{e}"
    );
    let form = laplacian()
        .with_boundary(BoundaryTerm::new(whole(), NonlinearBoundary).unwrap())
        .unwrap();
    let (e, name) = reason(Operator::new(form, &Backend::native()));
    assert_eq!(name, "form");
    assert!(
        e.contains("its term has 0: give them with BoundaryTerm::with_constants"),
        "{e}"
    );
    // a rule of another dimension
    let (e, name) = reason(
        BoundaryTerm::<f64>::new(whole(), FluxOfG)
            .unwrap()
            .with_quadrature(FacetQuadrature::new(3, 2).unwrap()),
    );
    assert_eq!(name, "quadrature");
    assert!(
        e.contains("the facet rule is for 3D cells but the facet set is on a 2D mesh"),
        "{e}"
    );
}

/// `FacetSet::coarsen` inverts `FacetSet::refine` (the sets of every
/// multigrid level), and refuses a set holding part of a coarse facet.
#[test]
fn coarsening_a_facet_set_inverts_its_refinement() {
    for dim in [2, 3] {
        let h = femquad::multigrid::MeshHierarchy::new(&mesh(dim, 2), 2).unwrap();
        let coarse =
            FacetSet::boundary_where(h.mesh(0).unwrap(), |x| x[0] == 1.0 || x[1] == 0.0).unwrap();
        let sets = h.facet_sets(&coarse).unwrap();
        let back = h.coarsened_facet_sets(&sets[2]).unwrap();
        assert_eq!(back, sets, "{dim}D");
        // one child of a coarse facet missing
        let fine = h.finest();
        let part = FacetSet::boundary_where(fine, |x| x[0] == 1.0 || x[1] == 0.0).unwrap();
        assert_eq!(part, sets[2]);
        let first = sets[2].facets()[0];
        let without = FacetSet::boundary_where(fine, |x| {
            (x[0] == 1.0 || x[1] == 0.0) && {
                // not the midpoint of the first facet
                let vs = first.vertex_slice();
                let mid: Vec<f64> = (0..dim)
                    .map(|d| {
                        vs.iter().map(|&v| fine.vertex(v as usize)[d]).sum::<f64>()
                            / vs.len() as f64
                    })
                    .collect();
                mid.iter().zip(x).any(|(a, b)| (a - b).abs() > 1e-12)
            }
        })
        .unwrap();
        assert_eq!(without.len(), sets[2].len() - 1);
        let e = h.coarsened_facet_sets(&without).unwrap_err().to_string();
        assert!(
            e.contains("of the")
                && e.contains("children of facet")
                && e.contains("cannot integrate over part of a facet"),
            "{e}"
        );
    }
}
