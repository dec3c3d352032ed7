/*
 * femquad: the update of one node in a Chebyshev step of the multigrid
 * smoother (femquad/src/multigrid/chebyshev.rs), shared by
 * mg_chebyshev_step (kernels/multigrid.cl) and spmv_chebyshev_step
 * (kernels/spmv.cl), so that the step fused with its SpMV is bitwise the
 * unfused one. For node n with nc components, its residual rn[0..nc) and
 * its inverse point block inv[n], per component fc (i = n·nc + fc):
 *
 *   d_out[i] = a·d_in[i] + c·Σ_j inv[(n·nc + fc)·nc + j]·rn[j]
 *   x[i]     = d_out[i]              when x starts from zero
 *            = x[i] + 1·d_out[i]     otherwise
 *
 * d_in and d_out may be the same array (the unfused step updates d in
 * place; the fused one writes the next direction apart, since other
 * work-items still read d). FP contraction off, like the host's twin. The
 * includer defines `real`.
 */
void chebyshev_node_update(const size_t n, const uint nc, const real *rn,
                           __global const real *restrict inv,
                           __global const real *d_in, __global real *d_out,
                           __global real *restrict x, const real a,
                           const real c, const uint x_from_zero)
{
#pragma OPENCL FP_CONTRACT OFF
  for (uint fc = 0; fc < nc; ++fc) {
    real s = (real)0;
    for (uint j = 0; j < nc; ++j) s = s + inv[(n * nc + fc) * nc + j] * rn[j];
    const size_t i = n * nc + fc;
    const real di = a * d_in[i] + c * s;
    d_out[i] = di;
    x[i] = x_from_zero ? di : x[i] + (real)1 * di;
  }
}
