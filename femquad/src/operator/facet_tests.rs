//! Tests of the facet module: the divergence theorem per dof, measures and
//! normals, Gmsh groups, refined sets, errors. The boundary integrals are
//! `F(u)` of forms with a boundary term, bound on the native operator
//! ([`boundary_integral`]).

use std::path::Path;
use std::sync::Arc;

mod closure_term;

use crate::element::Element;
use crate::facet::*;
use crate::mesh::{
    GmshElement, GmshMesh, Mesh, MeshOptions, TETRAHEDRON_FACETS, TRIANGLE_FACETS, read_gmsh,
    unit_box,
};
use crate::quadrature::{Quadrature, reference_volume};
use crate::space::FunctionSpace;
use crate::{Error, layout};
use closure_term::boundary_integral;

fn jittered(dim: usize, n: usize, seed: u64) -> Mesh {
    let opts = MeshOptions {
        jitter: 0.15,
        shuffle: true,
        seed,
    };
    unit_box(dim, n, &opts).unwrap()
}

fn test_mesh(name: &str) -> GmshMesh {
    read_gmsh(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

/// `∫_Ω ∇φ_i·G + φ_i D dx` for every dof `i` of a scalar space, with the
/// cell rule of degree `degree`: by the divergence theorem, with `G = g`
/// and `D = div g`, this is `∫_∂Ω φ_i g·n ds`.
fn volume_side(
    space: &FunctionSpace,
    degree: usize,
    g: &dyn Fn(&[f64]) -> Vec<f64>,
    div: &dyn Fn(&[f64]) -> f64,
) -> Vec<f64> {
    let (mesh, dim, e) = (space.mesh(), space.dim(), space.element());
    let quad = Quadrature::simplex(dim, degree).unwrap();
    let nb = e.n_basis();
    let (mut phi, mut dphi) = (vec![0.0; nb], vec![0.0; nb * dim]);
    let mut out = vec![0.0; space.n_dofs()];
    for c in 0..mesh.n_cells() {
        let cell = mesh.cell(c);
        let x0 = mesh.vertex(cell[0] as usize);
        let mut jac = [0.0; 9];
        for i in 0..dim {
            for d in 0..dim {
                jac[d * dim + i] = mesh.vertex(cell[i + 1] as usize)[d] - x0[d];
            }
        }
        let mut inv = [0.0; 9];
        let det = crate::geometry::det_inverse(dim, &jac[..dim * dim], &mut inv[..dim * dim]);
        for q in 0..quad.n_points() {
            let xi = quad.point(q);
            let x: Vec<f64> = (0..dim)
                .map(|d| x0[d] + (0..dim).map(|i| jac[d * dim + i] * xi[i]).sum::<f64>())
                .collect();
            e.eval(xi, &mut phi).unwrap();
            e.grad(xi, &mut dphi).unwrap();
            let (gx, dx) = (g(&x), div(&x));
            for (b, &node) in space.cell_nodes(c).iter().enumerate() {
                let mut v = phi[b] * dx;
                for d in 0..dim {
                    let grad_d: f64 = (0..dim).map(|k| dphi[b * dim + k] * inv[k * dim + d]).sum();
                    v += grad_d * gx[d];
                }
                out[node as usize] += quad.weights()[q] * det * v;
            }
        }
    }
    out
}

type Field = (
    Box<dyn Fn(&[f64]) -> Vec<f64> + Send + Sync>,
    Box<dyn Fn(&[f64]) -> f64 + Send + Sync>,
);

/// A polynomial field of total degree `p` and its divergence.
fn field(dim: usize, p: usize) -> Field {
    let pw = |t: f64, k: usize| t.powi(k as i32);
    let dpw = |t: f64, k: usize| {
        if k == 0 {
            0.0
        } else {
            k as f64 * t.powi(k as i32 - 1)
        }
    };
    // each component mixes two coordinates
    let g = Box::new(move |x: &[f64]| -> Vec<f64> {
        (0..dim)
            .map(|d| {
                let (a, b) = (x[d], x[(d + 1) % dim]);
                pw(a, p) + 0.5 * pw(b, p) + pw(a, p / 2) * pw(b, p - p / 2) + 0.25
            })
            .collect()
    });
    let div = Box::new(move |x: &[f64]| -> f64 {
        (0..dim)
            .map(|d| {
                let (a, b) = (x[d], x[(d + 1) % dim]);
                dpw(a, p) + dpw(a, p / 2) * pw(b, p - p / 2)
            })
            .sum()
    });
    (g, div)
}

/// `∫_∂Ω φ_i g·n ds = ∫_Ω ∇φ_i·g + φ_i div g dx` for every dof `i`, to
/// 1e-13, for polynomial `g` of every degree the facet rule integrates
/// exactly against `φ_i` (rule degree `k + p` for `Pk`), on jittered,
/// shuffled meshes (every local facet on the boundary somewhere); summed
/// over `i`, `∫_∂Ω g·n = ∫_Ω div g`.
#[test]
fn divergence_theorem_per_dof() {
    for dim in [2, 3] {
        let mesh = Arc::new(jittered(dim, if dim == 2 { 5 } else { 3 }, 7));
        let set = FacetSet::boundary(&mesh).unwrap();
        for k in [1, 2] {
            let space =
                FunctionSpace::new(mesh.clone(), Element::lagrange(dim, k).unwrap(), 1).unwrap();
            for p in 1..=3 {
                let quad = FacetQuadrature::new(dim, k + p).unwrap();
                let (g, div) = field(dim, p);
                let volume = volume_side(&space, k + p, &g, &div);
                let u = vec![0.0; space.n_dofs()];
                let surface =
                    boundary_integral(&space, set.clone(), quad, &u, move |x, n, _, _, out| {
                        out[0] = g(x).iter().zip(n).map(|(a, b)| a * b).sum();
                    })
                    .unwrap();
                for (i, (s, v)) in surface.iter().zip(&volume).enumerate() {
                    assert!(
                        (s - v).abs() < 1e-13,
                        "dim {dim} P{k} degree {p}: dof {i}: {s} vs {v}"
                    );
                }
                let total: f64 = surface.iter().sum();
                let want: f64 = volume.iter().sum();
                assert!((total - want).abs() < 1e-13, "{total} vs {want}");
                assert!(want.abs() > 0.1, "a test of nothing: {want}");
            }
        }
    }
}

/// The gathered `u` and `∇u`: with `f0 = (∇u + u c)·n` for `u` in the space,
/// `∫_∂Ω φ_i f0 = ∫_Ω ∇φ_i·(∇u + u c) + φ_i (Δu + c·∇u)`, for a vector
/// space (component 1 of 2 or 3, the others zero) too.
#[test]
fn gathered_u_and_gradient() {
    let c = [0.3, -0.7, 0.5];
    for dim in [2, 3] {
        let mesh = Arc::new(jittered(dim, if dim == 2 { 4 } else { 2 }, 3));
        for k in [1, 2] {
            // u = x_0^k + x_0 x_1 (k = 2) / x_0 + 2 x_1 (k = 1), in the space
            let u_of = move |x: &[f64]| {
                if k == 1 {
                    x[0] + 2.0 * x[1]
                } else {
                    x[0] * x[0] + x[0] * x[1]
                }
            };
            let grad_of = move |x: &[f64]| -> Vec<f64> {
                let mut g = vec![0.0; dim];
                if k == 1 {
                    g[0] = 1.0;
                    g[1] = 2.0;
                } else {
                    g[0] = 2.0 * x[0] + x[1];
                    g[1] = x[0];
                }
                g
            };
            let lap = if k == 1 { 0.0 } else { 2.0 };
            let g = |x: &[f64]| -> Vec<f64> {
                let gr = grad_of(x);
                (0..dim).map(|d| gr[d] + u_of(x) * c[d]).collect()
            };
            let div = |x: &[f64]| -> f64 {
                let gr = grad_of(x);
                lap + (0..dim).map(|d| c[d] * gr[d]).sum::<f64>()
            };
            let scalar =
                FunctionSpace::new(mesh.clone(), Element::lagrange(dim, k).unwrap(), 1).unwrap();
            let volume = volume_side(&scalar, 2 * k + 1, &g, &div);
            let space = scalar.with_n_comp(dim).unwrap();
            let u = space.interpolate(|x, out| out[1] = u_of(x));
            let set = FacetSet::boundary(&mesh).unwrap();
            let quad = FacetQuadrature::new(dim, 2 * k).unwrap();
            let surface = boundary_integral(&space, set, quad, &u, move |_, n, u, grad_u, out| {
                for comp in 0..dim {
                    out[comp] = (0..dim)
                        .map(|d| (grad_u[layout::point_grad(comp, d, dim)] + u[comp] * c[d]) * n[d])
                        .sum();
                }
            })
            .unwrap();
            for (node, v) in volume.iter().enumerate() {
                for comp in 0..dim {
                    let s = surface[layout::global_dof(node, comp, dim)];
                    let want = if comp == 1 { *v } else { 0.0 };
                    assert!(
                        (s - want).abs() < 1e-13,
                        "dim {dim} P{k} node {node} comp {comp}: {s} vs {want}"
                    );
                }
            }
        }
    }
}

/// A part of the boundary: `Σ_i ∫_{x_0 = 1} φ_i g·n = ∫_{x_0 = 1} g_0`,
/// exact values: 2D `g_0 = x² y³ + x` gives `∫_0^1 y³ + 1 dy = 5/4`, 3D
/// `g_0 = x² y z³ + y` gives `1/8 + 1/2 = 5/8`.
#[test]
fn part_of_the_boundary() {
    for (dim, want) in [(2, 1.25), (3, 0.625)] {
        let mesh = Arc::new(jittered(dim, 3, 11));
        let right = FacetSet::boundary_where(&mesh, |x| x[0] == 1.0).unwrap();
        assert_eq!(right.len(), if dim == 2 { 3 } else { 18 });
        for k in [1, 2] {
            let space =
                FunctionSpace::new(mesh.clone(), Element::lagrange(dim, k).unwrap(), 1).unwrap();
            let quad = FacetQuadrature::new(dim, 5 + k).unwrap();
            let u = vec![0.0; space.n_dofs()];
            let f = boundary_integral(&space, right.clone(), quad, &u, move |x, n, _, _, out| {
                let g0 = if dim == 2 {
                    x[0] * x[0] * x[1].powi(3) + x[0]
                } else {
                    x[0] * x[0] * x[1] * x[2].powi(3) + x[1]
                };
                out[0] = g0 * n[0];
            })
            .unwrap();
            let total: f64 = f.iter().sum();
            assert!((total - want).abs() < 1e-13, "dim {dim} P{k}: {total}");
        }
    }
}

/// Measures sum to the perimeter / surface area of the unit box; normals
/// are unit, outward (away from the cell's opposite vertex) and the side's
/// axis vector.
#[test]
fn measures_and_normals() {
    for dim in [2, 3] {
        let mesh = jittered(dim, 4, 5);
        let set = FacetSet::boundary(&mesh).unwrap();
        let quad = FacetQuadrature::new(dim, 2).unwrap();
        let g = FacetGeometry::<f64>::new(&mesh, &set, &quad).unwrap();
        let area: f64 = g.measure().iter().sum::<f64>() * reference_facet_volume(dim);
        assert!((area - 2.0 * dim as f64).abs() < 1e-13, "dim {dim}: {area}");
        for (k, f) in set.facets().iter().enumerate() {
            let n = &g.normals()[k * dim..(k + 1) * dim];
            let a = mesh.vertex(f.vertices[0] as usize);
            let opposite = mesh.vertex(mesh.cell(f.cell as usize)[f.local as usize] as usize);
            let into: f64 = (0..dim).map(|d| n[d] * (opposite[d] - a[d])).sum();
            assert!(into < 0.0, "facet {k}: normal {n:?} points into its cell");
            // the side: the coordinate all vertices share, 0 or 1
            let side = (0..dim)
                .find(|&d| {
                    f.vertex_slice()
                        .iter()
                        .all(|&v| mesh.vertex(v as usize)[d] == a[d])
                })
                .unwrap();
            for d in 0..dim {
                let want = if d != side {
                    0.0
                } else if a[d] == 1.0 {
                    1.0
                } else {
                    -1.0
                };
                assert!((n[d] - want).abs() < 1e-15, "facet {k}: {n:?}");
            }
            // the quadrature points lie on the facet's side
            for q in 0..quad.n_points() {
                let x = g.points()[(k * quad.n_points() + q) * dim + side];
                assert!((x - a[side]).abs() < 1e-15);
            }
        }
    }
}

/// The facet rule is exact on the reference facet up to its degree, and
/// its points on local facet `i` have barycentric coordinate `λ_i = 0`;
/// the tabulation is the element at those points.
#[test]
fn facet_rule_and_tabulation() {
    let fact = |n: usize| (1..=n).map(|i| i as f64).product::<f64>();
    for dim in [2, 3] {
        for degree in 0..=8 {
            let q = FacetQuadrature::new(dim, degree).unwrap();
            let s = q.facet_points();
            for a in 0..=degree {
                for b in 0..=(degree - a) {
                    if dim == 2 && b > 0 {
                        continue;
                    }
                    let (got, want) = if dim == 2 {
                        let g: f64 = (0..q.n_points())
                            .map(|i| q.weights()[i] * s[i].powi(a as i32))
                            .sum();
                        (g, 1.0 / (a + 1) as f64)
                    } else {
                        let g: f64 = (0..q.n_points())
                            .map(|i| {
                                q.weights()[i]
                                    * s[2 * i].powi(a as i32)
                                    * s[2 * i + 1].powi(b as i32)
                            })
                            .sum();
                        (g, fact(a) * fact(b) / fact(a + b + 2))
                    };
                    assert!(
                        (got - want).abs() < 1e-15,
                        "dim {dim} degree {degree}: {a},{b}"
                    );
                }
            }
            for i in 0..=dim {
                let corners: &[usize] = if dim == 2 {
                    &TRIANGLE_FACETS[i]
                } else {
                    &TETRAHEDRON_FACETS[i]
                };
                for p in 0..q.n_points() {
                    let xi = q.point(i, p);
                    let lambda = |v: usize| {
                        if v == 0 {
                            1.0 - xi.iter().sum::<f64>()
                        } else {
                            xi[v - 1]
                        }
                    };
                    assert!(lambda(i).abs() < 1e-15, "dim {dim} facet {i}: {xi:?}");
                    // the facet's first corner is reached as s → 0
                    let s0: f64 = q.facet_points()[p * (dim - 1)..(p + 1) * (dim - 1)]
                        .iter()
                        .sum();
                    assert!((lambda(corners[0]) - (1.0 - s0)).abs() < 1e-15);
                }
            }
        }
        for k in [1, 2] {
            let e = Element::lagrange(dim, k).unwrap();
            let q = FacetQuadrature::default_for(&e).unwrap();
            assert_eq!(q.degree(), 2 * k);
            let t = FacetTabulation::new(&e, &q).unwrap();
            let nb = e.n_basis();
            let (mut phi, mut dphi) = (vec![0.0; nb], vec![0.0; nb * dim]);
            for i in 0..=dim {
                for p in 0..q.n_points() {
                    e.eval(q.point(i, p), &mut phi).unwrap();
                    e.grad(q.point(i, p), &mut dphi).unwrap();
                    assert_eq!(&t.phi(i)[p * nb..(p + 1) * nb], &phi[..]);
                    assert_eq!(&t.dphi(i)[p * nb * dim..(p + 1) * nb * dim], &dphi[..]);
                }
            }
        }
    }
    let e = FacetTabulation::new(
        &Element::lagrange(3, 1).unwrap(),
        &FacetQuadrature::new(2, 2).unwrap(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument `quadrature`: facet rule is for cells of dimension 2 but the element \
         P1 (tetrahedron) is for dimension 3"
    );
    assert!(reference_volume(2) == reference_facet_volume(3));
}

/// The set of a group, as coordinates say it is.
fn set_is(g: &GmshMesh, names: &[&str], want: &FacetSet, measure: f64) {
    let set = g.facet_set(names).unwrap();
    assert_eq!(&set, want, "{names:?}");
    let quad = FacetQuadrature::new(g.mesh.dim(), 1).unwrap();
    let geo = FacetGeometry::<f64>::new(&g.mesh, &set, &quad).unwrap();
    let total = geo.measure().iter().sum::<f64>() * reference_facet_volume(g.mesh.dim());
    assert!((total - measure).abs() < 1e-12, "{names:?}: {total}");
}

/// Gmsh groups resolve to the facets their coordinates say: the square's
/// `bottom` is `y = 0`, `rest` the other three sides; the cube's `bottom`
/// is `z = 0`, `sides and top` the other five.
#[test]
fn gmsh_groups_resolve_to_their_facets() {
    let sq = test_mesh("mesh_square.msh");
    let on = |m: &Mesh, d: usize| FacetSet::boundary_where(m, move |x| x[d].abs() < 1e-12).unwrap();
    let not_on =
        |m: &Mesh, d: usize| FacetSet::boundary_where(m, move |x| x[d].abs() >= 1e-12).unwrap();
    set_is(&sq, &["bottom"], &on(&sq.mesh, 1), 1.0);
    set_is(&sq, &["rest"], &not_on(&sq.mesh, 1), 3.0);
    set_is(
        &sq,
        &["bottom", "rest"],
        &FacetSet::boundary(&sq.mesh).unwrap(),
        4.0,
    );
    let cube = test_mesh("mesh_cube.msh");
    set_is(&cube, &["bottom"], &on(&cube.mesh, 2), 1.0);
    set_is(&cube, &["sides and top"], &not_on(&cube.mesh, 2), 5.0);
    set_is(
        &cube,
        &["sides and top", "bottom"],
        &FacetSet::boundary(&cube.mesh).unwrap(),
        6.0,
    );
    assert!(!on(&cube.mesh, 2).is_empty());
}

#[test]
fn gmsh_misuse_is_a_clear_error() {
    let mut g = test_mesh("mesh_square.msh");
    assert_eq!(
        g.facet_set(&["top"]).unwrap_err().to_string(),
        "invalid argument `names`: no physical group `top` in this mesh; its groups: `origin` \
         (0D, tag 5), `bottom` (1D, tag 1), `rest` (1D, tag 2), `domain` (2D, tag 3)"
    );
    assert_eq!(
        g.facet_set(&["domain"]).unwrap_err().to_string(),
        "invalid argument `names`: physical group `domain` is 2D: the facets of a 2D mesh are \
         a 1D group; its groups: `origin` (0D, tag 5), `bottom` (1D, tag 1), `rest` (1D, tag \
         2), `domain` (2D, tag 3)"
    );
    assert_eq!(
        g.facet_set(&[]).unwrap_err().to_string(),
        "invalid argument `names`: lists no physical group: name at least one"
    );
    // an interior edge put into `bottom`
    let boundary = g.mesh.boundary_facets().unwrap();
    let (c, l) = (0..g.mesh.n_cells())
        .flat_map(|c| (0..3).map(move |l| (c, l)))
        .find(|&(c, l)| {
            !boundary
                .iter()
                .any(|f| (f.cell as usize, f.local as usize) == (c, l))
        })
        .unwrap();
    let v = g.mesh.facet_vertices(c, l);
    let group = g.physical_group("bottom").unwrap().clone();
    let entity = g.group_elements(&group)[0].entity;
    g.elements.push(GmshElement {
        tag: 999,
        dim: 1,
        entity,
        vertices: vec![v[1], v[0]],
    });
    assert_eq!(
        g.facet_set(&["bottom"]).unwrap_err().to_string(),
        format!(
            "invalid argument `names`: element 999 of physical group `bottom` (vertices [{}, \
             {}]) is not a boundary facet of the mesh: a boundary term needs facets of exactly \
             one cell",
            v[1], v[0]
        )
    );
}

/// Whether point `p` lies in the facet with vertices `vs` (barycentric
/// coordinates ≥ −1e-12 and the point on its line / plane).
fn inside(mesh: &Mesh, vs: &[u32], p: &[f64]) -> bool {
    let x = |i: usize| mesh.vertex(vs[i] as usize);
    let dim = mesh.dim();
    let sub = |a: &[f64], b: &[f64]| -> Vec<f64> { (0..dim).map(|d| a[d] - b[d]).collect() };
    let dot = |a: &[f64], b: &[f64]| -> f64 { (0..dim).map(|d| a[d] * b[d]).sum() };
    let r = sub(p, x(0));
    if dim == 2 {
        let t = sub(x(1), x(0));
        let s = dot(&r, &t) / dot(&t, &t);
        let off: Vec<f64> = (0..2).map(|d| r[d] - s * t[d]).collect();
        s > -1e-12 && s < 1.0 + 1e-12 && dot(&off, &off).sqrt() < 1e-12
    } else {
        let (t1, t2) = (sub(x(1), x(0)), sub(x(2), x(0)));
        let (a, b, c) = (dot(&t1, &t1), dot(&t1, &t2), dot(&t2, &t2));
        let (r1, r2) = (dot(&r, &t1), dot(&r, &t2));
        let det = a * c - b * b;
        let s1 = (c * r1 - b * r2) / det;
        let s2 = (a * r2 - b * r1) / det;
        let off: Vec<f64> = (0..3).map(|d| r[d] - s1 * t1[d] - s2 * t2[d]).collect();
        s1 > -1e-12 && s2 > -1e-12 && s1 + s2 < 1.0 + 1e-12 && dot(&off, &off).sqrt() < 1e-12
    }
}

/// A refined set covers its parent's surface: `2^(dim−1)` children per
/// facet, each inside its parent, outward like it, the measures equal;
/// the refined whole boundary is the fine mesh's boundary; a Gmsh group
/// refined is the group of the refined Gmsh mesh.
#[test]
fn refined_sets_cover_the_same_surface() {
    for dim in [2, 3] {
        let h = Levels::new(&jittered(dim, 2, 1), 2);
        let m0 = h.mesh(0).unwrap();
        let side = FacetSet::boundary_where(m0, |x| x[0] == 0.0 || x[1] == 1.0).unwrap();
        for coarse in [side, FacetSet::boundary(m0).unwrap()] {
            let sets = h.facet_sets(&coarse).unwrap();
            let measure = |l: usize| {
                let q = FacetQuadrature::new(dim, 1).unwrap();
                let g = FacetGeometry::<f64>::new(h.mesh(l).unwrap(), &sets[l], &q).unwrap();
                let n = g.normals().to_vec();
                (g.measure().iter().sum::<f64>(), n)
            };
            let (m_coarse, _) = measure(0);
            for l in 1..h.n_levels() {
                let (coarse_mesh, fine_mesh) = (h.mesh(l - 1).unwrap(), h.mesh(l).unwrap());
                let (parents, children) = (&sets[l - 1], &sets[l]);
                assert_eq!(children.len(), parents.len() << (dim - 1));
                let (m, n_fine) = measure(l);
                assert!((m - m_coarse).abs() < 1e-12, "dim {dim} level {l}");
                let (_, n_coarse) = measure(l - 1);
                for (k, f) in children.facets().iter().enumerate() {
                    let parent = (f.cell as usize) >> dim;
                    let pk = parents
                        .facets()
                        .iter()
                        .position(|p| p.cell as usize == parent)
                        .unwrap();
                    // the parent's facet among those of its cell that hold the child
                    let holds = parents.facets()[pk..]
                        .iter()
                        .take_while(|p| p.cell as usize == parent)
                        .enumerate()
                        .find(|(_, p)| {
                            f.vertex_slice().iter().all(|&v| {
                                inside(coarse_mesh, p.vertex_slice(), fine_mesh.vertex(v as usize))
                            })
                        });
                    let (j, _) = holds.unwrap_or_else(|| panic!("child {f:?} in no parent facet"));
                    for d in 0..dim {
                        let (a, b) = (n_fine[k * dim + d], n_coarse[(pk + j) * dim + d]);
                        assert!((a - b).abs() < 1e-12, "normal of child {f:?}");
                    }
                }
            }
            if coarse.len() == FacetSet::boundary(m0).unwrap().len() {
                for (l, set) in sets.iter().enumerate() {
                    assert_eq!(set, &FacetSet::boundary(h.mesh(l).unwrap()).unwrap());
                }
            }
        }
    }
    let mut g = test_mesh("mesh_cube.msh");
    g.mesh = Arc::new(crate::mesh::prepare_for_refinement(&g.mesh).unwrap());
    let fine = crate::mesh::refine_gmsh(&g).unwrap();
    let coarse = g.facet_set(&["bottom"]).unwrap();
    let refined = coarse.refine(&g.mesh, &fine.mesh).unwrap();
    assert_eq!(refined, fine.facet_set(&["bottom"]).unwrap());
}

#[test]
fn a_set_of_another_mesh_is_refused() {
    let cube = crate::mesh::unit_cube(2, &MeshOptions::default()).unwrap();
    let prepared = crate::mesh::prepare_for_refinement(&cube).unwrap();
    let set = FacetSet::boundary(&cube).unwrap();
    let e = set.check_mesh(&prepared).unwrap_err().to_string();
    assert!(
        e.starts_with("invalid argument `facets`: facet ")
            && e.contains("in the facet set but")
            && e.ends_with("(its cells were changed or their vertices permuted since the set was made): make the set on this mesh"),
        "{e}"
    );
    let square = crate::mesh::unit_square(2, &MeshOptions::default()).unwrap();
    let e = FacetSet::boundary(&square)
        .unwrap()
        .check_mesh(&cube)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument `facets`: the facet set was made on a 2D mesh of 9 vertices and 8 \
         cells, not on this 3D mesh of 27 vertices and 48 cells: make it on this mesh"
    );
    // a mesh that is not the refinement
    let e = set.refine(&cube, &cube).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument `fine`: a 3D mesh of 48 cells is not the uniform refinement of a 3D \
         mesh of 48 cells (384 cells)"
    );
}

/// The bad input of a boundary integral, refused where it is now taken:
/// `u` of another length by the operator's vector, a NaN in `u` by
/// `Operator::apply`, a non-finite `f0` by the native boundary integral
/// (naming the term, the point, facet and cell), a set of another mesh by
/// `Form::with_boundary`.
#[test]
fn a_boundary_integral_refuses_bad_input() {
    let mesh = Arc::new(crate::mesh::unit_square(2, &MeshOptions::default()).unwrap());
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let bottom = || FacetSet::boundary_where(&mesh, |x| x[1] == 0.0).unwrap();
    let quad = || FacetQuadrature::new(2, 2).unwrap();
    let e = boundary_integral(&space, bottom(), quad(), &[0.0; 3], |_, _, _, _, _| {}).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument `values`: expected 9 entries, got 3"
    );
    let mut u = [0.0; 9];
    u[4] = f64::NAN;
    let e = boundary_integral(&space, bottom(), quad(), &u, |_, _, _, _, _| {}).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NonFinite {
                name: "u",
                index: 4,
                ..
            }
        ),
        "{e}"
    );
    // a division by zero at every point: the first point is named
    let e = boundary_integral(&space, bottom(), quad(), &[0.0; 9], |x, _, _, _, out| {
        out[0] = 1.0 / (x[0] - x[0])
    })
    .unwrap_err();
    let first = bottom().facets()[0];
    let want = "invalid argument `physics`: the boundary physics `closure_f0` returned f0 = \
                inf at point 0 (x = [";
    let msg = e.to_string();
    assert!(
        msg.starts_with(want)
            && msg.contains(&format!(
                "], n = [0.0, -1.0], u = [0.0], u_t = [], t = 0) of facet {} of cell {}: its f0 \
                 must be finite there",
                first.local, first.cell
            )),
        "{msg}"
    );
    let other = crate::mesh::unit_square(3, &MeshOptions::default()).unwrap();
    let e = boundary_integral(
        &space,
        FacetSet::boundary(&other).unwrap(),
        quad(),
        &[0.0; 9],
        |_, _, _, _, _| {},
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("not on this 2D mesh of 9 vertices"),
        "{e}"
    );
}

/// A mesh prepared for refinement and its uniform refinements, as
/// `MeshHierarchy` makes them (without naming `multigrid` here).
struct Levels(Vec<Mesh>);

impl Levels {
    fn new(coarse: &Mesh, refinements: usize) -> Levels {
        let mut meshes = vec![crate::mesh::prepare_for_refinement(coarse).unwrap()];
        for _ in 0..refinements {
            let next = crate::mesh::refine(&meshes[meshes.len() - 1])
                .unwrap()
                .into_mesh();
            meshes.push(next);
        }
        Levels(meshes)
    }
    fn mesh(&self, l: usize) -> Option<&Mesh> {
        self.0.get(l)
    }
    fn n_levels(&self) -> usize {
        self.0.len()
    }
    fn facet_sets(&self, coarse: &FacetSet) -> crate::Result<Vec<FacetSet>> {
        let mut sets = vec![coarse.clone()];
        for pair in self.0.windows(2) {
            let next = sets[sets.len() - 1].refine(&pair[0], &pair[1])?;
            sets.push(next);
        }
        Ok(sets)
    }
}
