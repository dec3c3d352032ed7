/*
 * femquad: atomic addition of a real into global memory, for the kernels
 * that sum into global vectors (kernels/integrate.cl with OUTPUT_ATOMIC,
 * kernels/jacobian_diagonal.cl), and into local memory (the patches of
 * kernels/integrate.cl). Needs `real`, REAL_IS_DOUBLE and ATOMIC_PTX
 * (NVIDIA: `red.global.add` / `red.shared.add` through inline PTX, since
 * NVIDIA's OpenCL has no floating-point atomics; elsewhere a
 * compare-and-swap loop on the value's bits, with
 * cl_khr_int64_base_atomics for double).
 */
/* *P += V by compare-and-swap on the value's bits, P in address space
 * SPACE: OpenCL C 1.2 has no generic address space, so the one loop serves
 * global memory here and local memory in kernels/integrate.cl
 * (local_add_real). */
#if REAL_IS_DOUBLE
#define CAS_ADD_REAL(SPACE, P, V)                                              \
  {                                                                            \
    volatile SPACE long *q_ = (volatile SPACE long *)(P);                      \
    long seen_ = *q_, expected_;                                               \
    do {                                                                       \
      expected_ = seen_;                                                       \
      seen_ = atom_cmpxchg(q_, expected_, as_long(as_double(expected_) + (V))); \
    } while (seen_ != expected_);                                              \
  }
#else
#define CAS_ADD_REAL(SPACE, P, V)                                              \
  {                                                                            \
    volatile SPACE int *q_ = (volatile SPACE int *)(P);                        \
    int seen_ = *q_, expected_;                                                \
    do {                                                                       \
      expected_ = seen_;                                                       \
      seen_ = atomic_cmpxchg(q_, expected_, as_int(as_float(expected_) + (V))); \
    } while (seen_ != expected_);                                              \
  }
#endif

/* *p += v in global memory, atomically. */
void atomic_add_real(__global real *p, real v) {
#if ATOMIC_PTX && REAL_IS_DOUBLE
  asm volatile("red.global.add.f64 [%0], %1;" :: "l"(p), "d"(v) : "memory");
#elif ATOMIC_PTX
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(p), "f"(v) : "memory");
#else
  CAS_ADD_REAL(__global, p, v)
#endif
}

/* *p += v in local memory, atomically. With PTX the pointer's integer
 * value is its offset in the shared state space, which PTX zero-extends to
 * the address width. */
void local_add_real(__local real *p, real v) {
#if ATOMIC_PTX && REAL_IS_DOUBLE
  asm volatile("red.shared.add.f64 [%0], %1;" :: "l"((ulong)p), "d"(v) : "memory");
#elif ATOMIC_PTX
  asm volatile("red.shared.add.f32 [%0], %1;" :: "l"((ulong)p), "f"(v) : "memory");
#else
  CAS_ADD_REAL(__local, p, v)
#endif
}
