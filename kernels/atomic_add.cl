/*
 * femquad: atomic addition of a real into global memory, for the kernels
 * that sum into global vectors (kernels/integrate.cl with OUTPUT_ATOMIC,
 * kernels/jacobian_diagonal.cl). Needs `real`, REAL_IS_DOUBLE and
 * ATOMIC_PTX (NVIDIA: `red.global.add` through inline PTX, since NVIDIA's
 * OpenCL has no floating-point atomics; elsewhere a compare-and-swap loop
 * on the value's bits, with cl_khr_int64_base_atomics for double).
 */
/* out[k] += v, atomically. */
void atomic_add_real(__global real *p, real v) {
#if ATOMIC_PTX && REAL_IS_DOUBLE
  asm volatile("red.global.add.f64 [%0], %1;" :: "l"(p), "d"(v) : "memory");
#elif ATOMIC_PTX
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(p), "f"(v) : "memory");
#elif REAL_IS_DOUBLE
  volatile __global long *q = (volatile __global long *)p;
  long seen = *q, expected;
  do {
    expected = seen;
    seen = atom_cmpxchg(q, expected, as_long(as_double(expected) + v));
  } while (seen != expected);
#else
  volatile __global int *q = (volatile __global int *)p;
  int seen = *q, expected;
  do {
    expected = seen;
    seen = atomic_cmpxchg(q, expected, as_int(as_float(expected) + v));
  } while (seen != expected);
#endif
}
