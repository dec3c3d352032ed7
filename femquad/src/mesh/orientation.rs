//! Orientation: repairing a mesh written clockwise, and refusing a tangled
//! one.
//!
//! A cell with `det J < 0` is either **flipped** — its vertices listed in
//! the other rotational sense, as a whole mesh or a region of it is when a
//! generator writes it clockwise (a Gmsh surface whose normal is `−z`) —
//! or **inverted**: a vertex moved across the opposite facet, so that the
//! cell folds over its neighbours (a tangled mesh). Both have `det J < 0`;
//! what tells them apart is the neighbours. Two cells that share a facet
//! lie on opposite sides of it in a valid mesh, whatever their vertex
//! order; a flipped cell does too, an inverted one lies on the same side as
//! a neighbour, overlapping it.
//!
//! [`Mesh::reorient`] flips the cells with `det J < 0` (swapping local
//! vertices 1 and 2 negates `det J`) only after checking every facet of
//! every such cell: if the cell across it lies on the same side, the mesh
//! is tangled and reorientation would hide a broken mesh behind a count —
//! it is refused, naming the cells. It is the one place where femquad
//! changes the orientation of cells it was given; the generators and
//! [`super::refine`] make positively oriented cells by construction. The
//! Gmsh reader calls it only when asked ([`super::gmsh::GmshOptions`]).

use rayon::prelude::*;

use super::boundary::sorted_facet;
use super::{BLOCK, Mesh, simplex_geometry};
use crate::{Error, Result};

/// A cell with `det J < 0` that lies on the same side of a facet as the
/// cell across it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Overlap {
    /// The cell with `det J < 0`.
    cell: usize,
    /// The cell across the facet.
    neighbour: usize,
    /// The facet's vertices, sorted (the third unused in 2D).
    facet: [u32; 3],
}

/// How an error names cells and vertices: by index for a [`Mesh`], by
/// element and node tag for a Gmsh file.
pub(super) struct Names<'a> {
    /// Singular and plural noun of a cell: `("cell", "cells")`.
    pub cell: (&'a str, &'a str),
    /// The number shown for a cell.
    pub cell_id: &'a dyn Fn(usize) -> u64,
    /// Plural noun of vertices: `"vertices"`.
    pub vertices: &'a str,
    /// The number shown for a vertex.
    pub vertex_id: &'a dyn Fn(u32) -> u64,
}

impl Names<'_> {
    /// Cells and vertices by their indices.
    fn indices() -> Names<'static> {
        Names {
            cell: ("cell", "cells"),
            cell_id: &|c| c as u64,
            vertices: "vertices",
            vertex_id: &|v| u64::from(v),
        }
    }
}

impl Mesh {
    /// Makes a mesh written clockwise (wholly or in regions) positively
    /// oriented: swaps local vertices 1 and 2 of every cell with
    /// `det J < 0`, which negates `det J`, and returns how many cells it
    /// flipped (0 for a positively oriented mesh, which it leaves alone).
    ///
    /// Only *consistently* flipped cells are flipped: before changing
    /// anything it checks, for every facet of every cell with `det J < 0`,
    /// that the cell across the facet lies on the other side of it, as
    /// neighbours do in a valid mesh whatever their vertex order. A cell
    /// written clockwise passes; an inverted one (a vertex moved across the
    /// opposite facet) lies on the same side as a neighbour, overlapping
    /// it: the mesh is tangled, and flipping would hide that — it is an
    /// error, and the mesh is left unchanged.
    ///
    /// ```
    /// use femquad::prelude::*;
    ///
    /// // the unit square as two clockwise triangles: consistently flipped
    /// let v = vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    /// let mut mesh = Mesh::from_raw(2, v.clone(), vec![0, 2, 1, 0, 3, 2])?;
    /// assert!(mesh.validate().is_err());
    /// assert_eq!(mesh.reorient()?, 2);
    /// mesh.validate()?;
    /// // a vertex moved across its neighbours: the centre of four triangles
    /// // pushed out through the edge (1, 2) inverts the triangle (1, 2, 4)
    /// let v = vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.5, 0.5];
    /// let cells = vec![0, 1, 4, 1, 2, 4, 2, 3, 4, 3, 0, 4];
    /// let mut tangled = Mesh::from_raw(2, v, cells)?;
    /// let e = tangled.reorient().unwrap_err().to_string();
    /// assert!(e.starts_with("invalid mesh: cell 1: negatively oriented"), "{e}");
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidCell`] for the first cell (smallest index) that
    /// [`Mesh::validate`] would refuse for another reason than its
    /// orientation (an index out of range, a repeated vertex, a non-finite
    /// coordinate, a degenerate cell); else, for a tangled mesh, for the
    /// smallest cell with `det J < 0` that overlaps a neighbour, naming the
    /// neighbour, their shared facet and every such cell (the first 10).
    pub fn reorient(&mut self) -> Result<usize> {
        self.reorient_naming(&Names::indices())
    }

    /// [`Mesh::reorient`], naming cells and vertices in errors by `names`.
    pub(super) fn reorient_naming(&mut self, names: &Names) -> Result<usize> {
        let flipped = self.negative_cells()?;
        if flipped.is_empty() {
            return Ok(0);
        }
        let overlaps = self.overlaps(&flipped);
        if let Some(first) = overlaps.first() {
            return Err(Error::InvalidCell {
                cell: first.cell,
                reason: self.tangled(&overlaps, names),
            });
        }
        let k = self.vertices_per_cell();
        for &c in &flipped {
            self.cells[c as usize * k..][..k].swap(1, 2);
        }
        Ok(flipped.len())
    }

    /// The cells with `det J < 0`, increasing, after checking that no cell
    /// has another defect (the first is the error).
    fn negative_cells(&self) -> Result<Vec<u32>> {
        if let Some((cell, defect)) = self.first_defect(false) {
            return Err(Error::InvalidCell {
                cell,
                reason: defect.reason(self.dim, self.n_vertices()),
            });
        }
        let k = self.vertices_per_cell();
        Ok(self
            .cells
            .par_chunks(k)
            .with_min_len(BLOCK)
            .enumerate()
            .filter(|(_, cell)| simplex_geometry(self.dim, &self.vertices, cell).0 < 0.0)
            .map(|(c, _)| c as u32)
            .collect())
    }

    /// The cells of `negative` that lie on the same side of a facet as the
    /// cell across it, sorted by cell: found by sorting the facets of
    /// `negative` and looking every cell's facets up among them
    /// (`O(n_cells·log n_negative)`).
    fn overlaps(&self, negative: &[u32]) -> Vec<Overlap> {
        let (dim, k) = (self.dim, self.vertices_per_cell());
        let mut facets: Vec<([u32; 3], u32, u8)> = negative
            .par_iter()
            .flat_map_iter(|&c| {
                let cell = self.cell(c as usize);
                (0..k).map(move |i| (sorted_facet(dim, cell, i), c, i as u8))
            })
            .collect();
        facets.par_sort_unstable();
        let side = |facet: &[u32; 3], apex: u32| self.side(facet, apex);
        let mut found: Vec<Overlap> = self
            .cells
            .par_chunks(k)
            .with_min_len(BLOCK)
            .enumerate()
            .flat_map_iter(|(d, cell)| {
                let facets = &facets;
                (0..k).flat_map(move |j| {
                    let key = sorted_facet(dim, cell, j);
                    let start = facets.partition_point(|f| f.0 < key);
                    facets[start..]
                        .iter()
                        .take_while(move |f| f.0 == key)
                        .filter(move |&&(_, c, i)| {
                            let apex = self.cell(c as usize)[i as usize];
                            c as usize != d && side(&key, apex) * side(&key, cell[j]) >= 0.0
                        })
                        .map(move |&(facet, c, _)| Overlap {
                            cell: c as usize,
                            neighbour: d,
                            facet,
                        })
                })
            })
            .collect();
        found.sort_unstable();
        found
    }

    /// The signed volume of the simplex of the sorted `facet` and `apex`:
    /// its sign tells the side of the facet `apex` lies on.
    fn side(&self, facet: &[u32; 3], apex: u32) -> f64 {
        let mut s = [facet[0], facet[1], facet[2], apex];
        if self.dim == 2 {
            s[2] = apex;
        }
        simplex_geometry(self.dim, &self.vertices, &s[..=self.dim]).0
    }

    /// The reason of the error for a tangled mesh with `overlaps` (sorted
    /// by cell, not empty).
    fn tangled(&self, overlaps: &[Overlap], names: &Names) -> String {
        let first = overlaps[0];
        let mut cells: Vec<usize> = overlaps.iter().map(|o| o.cell).collect();
        cells.dedup();
        let shown: Vec<String> = cells
            .iter()
            .take(10)
            .map(|&c| (names.cell_id)(c).to_string())
            .collect();
        let more = if cells.len() > 10 { ", …" } else { "" };
        let facet: Vec<String> = first.facet[..self.dim]
            .iter()
            .map(|&v| (names.vertex_id)(v).to_string())
            .collect();
        let (cell, cells_noun) = names.cell;
        let count = match cells.len() {
            1 => format!("1 negatively oriented {cell} overlaps its neighbours: {cell}"),
            n => format!(
                "{n} negatively oriented {cells_noun} overlap their neighbours: {cells_noun}"
            ),
        };
        format!(
            "negatively oriented (det J = {}) and overlapping its neighbour, {cell} {}: the two \
             lie on the same side of their shared {} ({} {}), so the mesh is tangled ({count} \
             {}{more}) and reorientation cannot repair it (it flips only cells whose neighbours \
             agree: a mesh, or a region of it, written clockwise); move the misplaced {}",
            super::num(self.det_j(first.cell)),
            (names.cell_id)(first.neighbour),
            if self.dim == 2 { "edge" } else { "face" },
            names.vertices,
            facet.join(", "),
            shown.join(", "),
            names.vertices
        )
    }
}

#[cfg(test)]
mod tests;
