//! Cell partitions: METIS's k-way partition of the mesh's dual graph, and
//! the distribution of a mesh that rank 0 holds to every rank.

use femquad::mesh::Mesh;
use femquad::{Error, Result};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;

use crate::comm::Ranks;
use crate::layout::{RankLayout, layouts};

/// The rank of each cell of `mesh` for `n_parts` ranks: METIS 5's k-way
/// partition (`METIS_PartGraphKway`, seed 0, so the same partition on every
/// run) of the dual graph, whose vertices are the cells and whose edges join
/// cells sharing a facet (`dim` vertices). One part: every cell on rank 0.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `n_parts` if it is 0;
/// [`Error::InvalidMesh`] if METIS refuses the mesh (its error is quoted).
pub fn metis_partition(mesh: &Mesh, n_parts: usize) -> Result<Vec<u32>> {
    if n_parts == 0 {
        return Err(Error::arg("n_parts", "must be at least 1"));
    }
    let n_cells = mesh.n_cells();
    if n_parts == 1 || n_cells == 0 {
        return Ok(vec![0; n_cells]);
    }
    let too_big = |what: &str| {
        Error::InvalidMesh(format!(
            "{what} do not fit METIS's 32-bit indices (partitioning for MPI)"
        ))
    };
    let nvc = mesh.vertices_per_cell();
    let eptr: Vec<metis::Idx> = (0..=n_cells)
        .map(|c| metis::Idx::try_from(c * nvc))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| too_big("the cells' vertex indices"))?;
    let eind: Vec<metis::Idx> = mesh.cells().iter().map(|&v| v as metis::Idx).collect();
    let metis_error = |e: metis::Error| {
        Error::InvalidMesh(format!(
            "METIS could not partition the mesh's dual graph: {e:?}"
        ))
    };
    let dual = metis::mesh_to_dual(&eptr, &eind, mesh.dim() as metis::Idx).map_err(metis_error)?;
    let mut part = vec![0 as metis::Idx; n_cells];
    metis::Graph::new(1, n_parts as metis::Idx, dual.xadj(), dual.adjncy())
        .map_err(|e| metis_error(e.into()))?
        .set_option(metis::option::Seed(0))
        .part_kway(&mut part)
        .map_err(metis_error)?;
    Ok(part.into_iter().map(|p| p as u32).collect())
}

/// Message tags of the distribution of layouts.
const TAG_WORDS: i32 = 10;
const TAG_COORDINATES: i32 = 11;

/// Collective: distributes a mesh that rank 0 holds. Rank 0 passes the
/// mesh and the rank of each of its cells (e.g. [`metis_partition`], or an
/// explicit one), computes every rank's [`RankLayout`] and sends each rank
/// its own; the other ranks pass `None` and receive theirs. The result is
/// this rank's layout.
///
/// # Errors
/// On every rank, if rank 0's arguments are refused ([`layouts`]: a
/// partition of the wrong length or naming a rank `≥` the number of ranks),
/// or rank 0 got no mesh: [`Error::RankFailed`] on the others.
pub fn distribute(ranks: &Ranks, mesh: Option<(&Mesh, &[u32])>) -> Result<RankLayout> {
    let n = ranks.size();
    let all = if ranks.rank() == 0 {
        match mesh {
            Some((mesh, partition)) => layouts(mesh, partition, n),
            None => Err(Error::arg(
                "mesh",
                "rank 0 must pass the mesh and its partition",
            )),
        }
        .map(Some)
    } else {
        Ok(None)
    };
    let all = ranks.agree(all)?;
    let comm = ranks.comm();
    match all {
        Some(all) => {
            for layout in all.iter().skip(1) {
                let (words, coordinates) = layout.to_words();
                let to = comm.process_at_rank(layout.rank as i32);
                to.send_with_tag(&words[..], TAG_WORDS);
                to.send_with_tag(&coordinates[..], TAG_COORDINATES);
            }
            all.into_iter().next().ok_or_else(|| Error::Internal {
                what: "no layout for rank 0".into(),
            })
        }
        None => {
            let from = comm.process_at_rank(0);
            let (words, _) = from.receive_vec_with_tag::<u64>(TAG_WORDS);
            let (coordinates, _) = from.receive_vec_with_tag::<f64>(TAG_COORDINATES);
            RankLayout::from_words(&words, coordinates)
        }
    }
}
