/*
 * femquad: a patch's copies of its nodes' values in local memory, for the
 * integration kernels with PATCH (kernels/integrate.cl,
 * kernels/integrate_cell.cl). The work-items of the group share the
 * copy: work-item t copies entries t, t + (group size), ... of the
 * group's node list `list` (np nodes, sorted, its vertex nodes first:
 * femquad/src/opencl/mesh_data/patches.rs).
 *
 *   copy_patch_values    `per_node` values a node of a global vector
 *                        src[node][k] -> dst[position][k];
 *   copy_patch_vertices  the coordinates of the list's vertex nodes (those
 *                        below nVertices) coordinates[vertex][d] ->
 *                        xw[position][d].
 *
 * The host prepends the layout macros (GLOBAL_DOF, VERTEX_COORD), `real`
 * and DIM (femquad/src/opencl/source.rs).
 */
void copy_patch_values(__local real *dst, __global const real *restrict src, const int per_node,
                       __global const uint *restrict list, const int np)
{
  for (int k = get_local_id(0); k < np * per_node; k += get_local_size(0))
    dst[k] = src[GLOBAL_DOF(list[k / per_node], k % per_node, per_node)];
}

void copy_patch_vertices(__local real *xw, __global const real *restrict coordinates,
                         __global const uint *restrict list, const int np, const uint nVertices)
{
  for (int k = get_local_id(0); k < np * DIM; k += get_local_size(0)) {
    const uint nd = list[k / DIM];
    if (nd < nVertices) xw[k] = coordinates[VERTEX_COORD(nd, k % DIM, DIM)];
  }
}
