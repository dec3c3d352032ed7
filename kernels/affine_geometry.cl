/*
 * femquad: the geometry of an affine cell, shared by the cell kernels
 * (kernels/integrate.cl, kernels/integrate_cell.cl through
 * kernels/tangent_point.cl): the formulas of femquad/src/geometry.rs.
 *
 * AFFINE_GEOMETRY(m, inv, det): from m[d*DIM + e] = J[d][e] =
 * X_{e+1}[d] - X_0[d] (the vertex coordinates' differences), det = det J
 * and inv[INV_J(0, e, d, DIM)] = J^{-1}[e][d]; `inv` may be private or
 * local memory, `det` an lvalue of type real.
 */
#if DIM == 2
#define AFFINE_GEOMETRY(m, inv, det)                 \
  do {                                               \
    (det) = (m)[0] * (m)[3] - (m)[1] * (m)[2];       \
    const real s_ = (real)1 / (det);                 \
    (inv)[0] = (m)[3] * s_;                          \
    (inv)[1] = -(m)[1] * s_;                         \
    (inv)[2] = -(m)[2] * s_;                         \
    (inv)[3] = (m)[0] * s_;                          \
  } while (0)
#else
#define AFFINE_GEOMETRY(m, inv, det)                                   \
  do {                                                                 \
    const real c00_ = (m)[4] * (m)[8] - (m)[5] * (m)[7];               \
    const real c01_ = (m)[5] * (m)[6] - (m)[3] * (m)[8];               \
    const real c02_ = (m)[3] * (m)[7] - (m)[4] * (m)[6];               \
    (det) = (m)[0] * c00_ + (m)[1] * c01_ + (m)[2] * c02_;             \
    const real s_ = (real)1 / (det);                                   \
    (inv)[0] = c00_ * s_;                                              \
    (inv)[1] = ((m)[2] * (m)[7] - (m)[1] * (m)[8]) * s_;               \
    (inv)[2] = ((m)[1] * (m)[5] - (m)[2] * (m)[4]) * s_;               \
    (inv)[3] = c01_ * s_;                                              \
    (inv)[4] = ((m)[0] * (m)[8] - (m)[2] * (m)[6]) * s_;               \
    (inv)[5] = ((m)[2] * (m)[3] - (m)[0] * (m)[5]) * s_;               \
    (inv)[6] = c02_ * s_;                                              \
    (inv)[7] = ((m)[1] * (m)[6] - (m)[0] * (m)[7]) * s_;               \
    (inv)[8] = ((m)[0] * (m)[4] - (m)[1] * (m)[3]) * s_;               \
  } while (0)
#endif
