#!/usr/bin/env bash
# Builds the release benchmark (the femquad-bench crate) here and stages it in
# .gpu/ (git-ignored) for the device machine, which has no network and no Rust
# toolchain.
#
#   scripts/build-gpu.sh            # then carry ".gpu" and run scripts/gpu-bench.sh there
#                                   # (GPU_BENCH_STAGES=bp: BK + BP, the same binary)
#
# .gpu/ afterwards holds:
#   femquad-bench          the stripped release binary (dlopens libOpenCL.so.1 at run time)
#   apply_overhead         host µs per operator call (femquad-bench/src/bin/apply_overhead.rs)
#   p1_floor               the floor of the P1 residual beside femquad's J·v and SpMV
#                          (femquad-bench/src/bin/p1_floor.rs)
#   ncu_capture            femquad's P1 kernels captured for scripts/ncu-replay.py (Nsight
#                          Compute through CUDA; femquad-bench/src/bin/ncu_capture.rs)
#   solve_bench            the solve benchmark (examples/solve_bench.rs: CG + multigrid to 1e-8)
#   t_*                    release test binaries that use OpenCL (run on the GPU too)
#   lib/libOpenCL.so.1     an OpenCL ICD loader (Debian's ocl-icd-libopencl1), used by
#                          gpu-bench.sh only if the device machine has none
#   BUILD_INFO             commit, date, rustc version
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p femquad-bench --bins
mkdir -p .gpu/lib
cp target/release/apply_overhead .gpu/apply_overhead
strip .gpu/apply_overhead 2>/dev/null || true
cp target/release/p1_floor .gpu/p1_floor
strip .gpu/p1_floor 2>/dev/null || true
cp target/release/ncu_capture .gpu/ncu_capture
strip .gpu/ncu_capture 2>/dev/null || true
rm -f .gpu/benchmark # the binary's name before it became its own crate
cp target/release/femquad-bench .gpu/femquad-bench
strip .gpu/femquad-bench 2>/dev/null || true
cargo build --release --example solve_bench
cp target/release/examples/solve_bench .gpu/solve_bench
strip .gpu/solve_bench 2>/dev/null || true

# The OpenCL test binaries, run on the GPU by gpu-bench.sh's `tests` stage: the
# library's unit tests and every integration test of femquad and of the examples
# except those that need the source tree, cargo or the example binaries at run time
# (the macro UI tests, the module graph, the devtools gate, solve_bench_heat, which
# builds its example, and cli, which runs the examples cargo built beside it).
rm -f .gpu/t_*
{
  cargo test --release --no-run -p femquad --lib --tests 2>&1
  cargo test --release --no-run -p femquad-examples --tests 2>&1
} | sed -n -e 's/.*Executable unittests src\/lib\.rs (\(.*\))/lib \1/p' \
    -e 's/.*Executable \(femquad\/\)\{0,1\}tests\/\([a-z_0-9]*\)\.rs (\(.*\))/\2 \3/p' |
  grep -v -E '^(pointwise_ui|module_graph|devtools_gate|solve_bench_heat|cli) ' |
  while read -r name exe; do cp "$exe" ".gpu/t_$name"; strip ".gpu/t_$name" 2>/dev/null || true; done

# A fallback ICD loader (best effort: needs apt's package lists; run
# `apt-get update` once if this says it cannot find the package).
if [ ! -e .gpu/lib/libOpenCL.so.1 ]; then
  tmp=$(mktemp -d)
  if (cd "$tmp" && apt-get download -qq ocl-icd-libopencl1 >/dev/null 2>&1); then
    dpkg -x "$tmp"/ocl-icd-libopencl1_*.deb "$tmp/x"
    lib=$(find "$tmp/x" -name 'libOpenCL.so.1*' -type f | head -n 1)
    [ -n "$lib" ] && cp "$lib" .gpu/lib/libOpenCL.so.1
  else
    echo "build-gpu: could not download ocl-icd-libopencl1 (no fallback ICD loader; fine if the device machine has one)" >&2
  fi
  rm -rf "$tmp"
fi

{
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "rustc: $(rustc --version)"
} > .gpu/BUILD_INFO
ls -la .gpu .gpu/lib
du -sh .gpu
