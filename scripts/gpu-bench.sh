#!/usr/bin/env bash
# The GPU benchmark run (issue #5): what the lead runs on the device machine
# (H100/H200, no network) with the binary built here by scripts/build-gpu.sh.
#
#   device run, carry [".gpu"], timeout 600:
#     bash scripts/gpu-bench.sh .gpu/femquad-bench
#
# Stages (each under `timeout`, within a total budget so that the whole run
# ends well inside the 10-minute limit; every stage writes its rows as they
# come, so a stage cut short still leaves what it measured):
#   1. suite   --suite at 2^24 cells, default configuration (24 cases:
#              P1 Poisson none/field/cell, P1 Lamé, P2 Poisson, P2 Lamé;
#              2D/3D; f32/f64)                               -> suite.csv, suite.json
#   2. sweep   N_bl × N_cb (the paper's Table 2) for 2D P1 Poisson f32
#              and 3D P1 Poisson f64                         -> sweep-2d.csv, sweep-3d.csv
#   3. big     2D P1 f32 cases at 2^25 cells                 -> suite-2e25.csv
#   4. tune    --suite --n-bl auto --retune at 2^24: autotune every case,
#              store, time the tuned configuration           -> tuned.csv, autotune.txt
#   5. bp      --suite --measure bk,bp --numbering random,renumbered at 2^24:
#              per case and numbering the BK row and the BP rows (global
#              F(u) on the device: atomic/deterministic × stored/computed
#              geometry, the faster geometry marked) with the time of one
#              CG iteration; 30 timed launches after 3 warm-up (BENCHMARKS.md,
#              "BP: the global residual on the device")      -> bp.csv, bp.json
#   0. tests   (first) the OpenCL test binaries build-gpu.sh staged in
#              .gpu/t_*, run on the GPU                      -> tests-gpu.log
# plus gpu-bench.log (everything printed) — 8 files in $OUT (10 with bp),
# none in a sub-folder. A summary table is printed at the end.
#
# BK + BP for the whole suite, alone (one command; estimated 4–6 minutes on the
# H200, not yet measured there; the stage stops at 450 s and keeps the rows
# measured so far):
#   GPU_BENCH_STAGES=bp bash scripts/gpu-bench.sh .gpu/femquad-bench
#
# Environment: OUT (output folder; default ./gpu-out), GPU_BENCH_BUDGET
# (seconds for all stages, default 480), GPU_BENCH_CELLS (default 2^24),
# GPU_BENCH_BIG_CELLS (default 2^25), GPU_BENCH_DEVICE (default gpu),
# GPU_BENCH_STAGES (default "tests,suite,sweep,tune"; "big" adds 2^25 cells, "bp" the BK+BP
# suite). A dry run here on PoCL: GPU_BENCH_DEVICE=cpu GPU_BENCH_CELLS=3000 GPU_BENCH_BIG_CELLS=6000
# OUT=/tmp/gb bash scripts/gpu-bench.sh target/debug/femquad-bench
# (after `cargo build -p femquad-bench`). The summary looks the CSV columns up
# by name (the fields of femquad_bench::row::Row).
set -uo pipefail

BIN=${1:-.gpu/femquad-bench}
OUT=${OUT:-$PWD/gpu-out}
BUDGET=${GPU_BENCH_BUDGET:-480}
CELLS=${GPU_BENCH_CELLS:-2^24}
BIG_CELLS=${GPU_BENCH_BIG_CELLS:-2^25}
DEVICE=${GPU_BENCH_DEVICE:-gpu}
STAGES=${GPU_BENCH_STAGES:-tests,suite,sweep,tune}
mkdir -p "$OUT"
LOG="$OUT/gpu-bench.log"
: >"$LOG"
exec > >(tee -a "$LOG") 2>&1
TEE_PID=$!

echo "== gpu-bench: $(date -u +%Y-%m-%dT%H:%M:%SZ), binary $BIN, budget ${BUDGET}s, cells $CELLS, stages $STAGES"
[ -f "$(dirname "$BIN")/BUILD_INFO" ] && sed 's/^/   /' "$(dirname "$BIN")/BUILD_INFO"
if [ ! -x "$BIN" ]; then
  echo "gpu-bench: no executable at $BIN (run scripts/build-gpu.sh here and carry .gpu)"
  exit 2
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv 2>/dev/null || echo "(nvidia-smi not available)"
echo "cores: $(nproc)"

# --- OpenCL: an ICD loader and the NVIDIA platform ---------------------------
# The binary dlopens libOpenCL.so.1. Use the machine's loader if there is one
# (system, or CUDA's), else the one carried in .gpu/lib. Register NVIDIA's
# OpenCL library through environment variables if no vendor file names it.
if ! ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1'; then
  cudalib=$(ls -d /usr/local/cuda*/targets/x86_64-linux/lib /usr/local/cuda*/lib64 2>/dev/null | while read -r d; do [ -e "$d/libOpenCL.so.1" ] && echo "$d" && break; done)
  if [ -n "$cudalib" ]; then
    export LD_LIBRARY_PATH="$cudalib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "OpenCL ICD loader: $cudalib/libOpenCL.so.1"
  elif [ -e "$(dirname "$BIN")/lib/libOpenCL.so.1" ]; then
    export LD_LIBRARY_PATH="$(cd "$(dirname "$BIN")/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "OpenCL ICD loader: carried $(dirname "$BIN")/lib/libOpenCL.so.1"
  else
    echo "gpu-bench: warning: no libOpenCL.so.1 found"
  fi
fi
if [ "$DEVICE" = gpu ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  nvcl=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
  [ -z "$nvcl" ] && nvcl=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/local/cuda* -name 'libnvidia-opencl.so.1' 2>/dev/null | head -n 1)
  if [ -n "$nvcl" ]; then
    vend=$(mktemp -d)
    echo "$nvcl" >"$vend/nvidia.icd"
    export OCL_ICD_VENDORS="$vend" OCL_ICD_FILENAMES="$nvcl"
    echo "OpenCL vendor library: $nvcl (via OCL_ICD_VENDORS/OCL_ICD_FILENAMES)"
  else
    echo "gpu-bench: warning: no libnvidia-opencl.so.1 found"
  fi
fi
"$BIN" --list-devices || { echo "gpu-bench: no OpenCL device: stopping"; exit 3; }

export FEMQUAD_CACHE_DIR="$OUT" # autotune.txt lands in $OUT
COMMON=(--device "$DEVICE" --cells "$CELLS")

# stage NAME LIMIT_S ARGS...: runs the benchmark with ARGS under a time limit
# clipped to what is left of the budget.
stage() {
  local name=$1 limit=$2
  shift 2
  case ",$STAGES," in *",$name,"*) ;; *) echo "== $name: not selected"; return 0 ;; esac
  local left=$((BUDGET - SECONDS))
  if [ "$left" -lt 25 ]; then
    echo "== $name: skipped, budget spent (${SECONDS}s elapsed)"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo
  echo "== $name: start at ${SECONDS}s, limit ${limit}s: $BIN $*"
  timeout -k 10 "$limit" "$BIN" "$@"
  local rc=$?
  [ "$rc" -eq 124 ] && echo "== $name: stopped at its time limit (rows so far are in the CSV)"
  echo "== $name: exit $rc at ${SECONDS}s"
}

# tests: the OpenCL test binaries staged by build-gpu.sh (.gpu/t_*), on the GPU
case ",$STAGES," in *",tests,"*)
  for t in "$(dirname "$BIN")"/t_*; do
    [ -x "$t" ] || continue
    echo "== tests: $(basename "$t")"
    # the library's unit tests take ~200 s on an H100 with 12 threads
    FEMQUAD_DEVICE=$DEVICE timeout 400 "$t" --test-threads 12 --nocapture >"$OUT/tests-gpu.log.part" 2>&1
    echo "   rc=$? $(grep 'test result' "$OUT/tests-gpu.log.part")"
    cat "$OUT/tests-gpu.log.part" >>"$OUT/tests-gpu.log"
  done
  rm -f "$OUT/tests-gpu.log.part"
  [ -f "$OUT/tests-gpu.log" ] && awk '/rel diff/ {print $NF}' "$OUT/tests-gpu.log" | sort -g | tail -n 1 | sed 's/^/   largest OpenCL-vs-native relative difference: /'
  ;;
esac

stage suite 180 --suite "${COMMON[@]}" --csv "$OUT/suite.csv" --json "$OUT/suite.json"
stage sweep 80 --sweep "${COMMON[@]}" --dim 2 --order 1 --physics laplacian --precision f32 --reps 20 --csv "$OUT/sweep-2d.csv"
stage sweep 80 --sweep "${COMMON[@]}" --dim 3 --order 1 --physics laplacian --precision f64 --reps 20 --csv "$OUT/sweep-3d.csv"
stage big 60 --suite --device "$DEVICE" --cells "$BIG_CELLS" --filter 2d,p1,f32 --csv "$OUT/suite-2e25.csv"
stage tune 240 --suite "${COMMON[@]}" --n-bl auto --retune --csv "$OUT/tuned.csv"
stage bp 450 --suite "${COMMON[@]}" --measure bk,bp --numbering random,renumbered \
  --reps 30 --warmup 3 --csv "$OUT/bp.csv" --json "$OUT/bp.json"

# --- summary ------------------------------------------------------------------
summary() { # CSV: case, config, N_bl, N_cb, ms, GF/s, GB/s, % copy, model error, status
  [ -s "$1" ] || return 0
  echo
  echo "-- $(basename "$1")"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                     printf "%-28s %-7s %5s %4s %9s %8s %8s %6s %7s  %s\n", "case", "config", "N_bl", "N_cb", "ms", "GF/s", "GB/s", "%copy", "err%", "status"; next }
           { err = ($c["model_error"] == "") ? "-" : sprintf("%+.1f", 100 * $c["model_error"])
             printf "%-28s %-7s %5s %4s %9s %8s %8s %6s %7s  %s\n", $c["case"], $c["config"], $c["n_bl"], $c["n_cb"],
                    ($c["time_ms"] == "" ? "-" : sprintf("%.4f", $c["time_ms"])),
                    ($c["gflops"] == "" ? "-" : sprintf("%.0f", $c["gflops"])),
                    ($c["gb_per_s"] == "" ? "-" : sprintf("%.0f", $c["gb_per_s"])),
                    ($c["pct_copy"] == "" ? "-" : sprintf("%.1f", $c["pct_copy"])), err, $c["status"] }' "$1"
}
summary_bp() { # CSV with BK and BP rows: per case, numbering, assembly, geometry (* = picked)
  [ -s "$1" ] || return 0
  echo
  echo "-- $(basename "$1")"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                     printf "%-28s %-4s %-10s %-13s %-9s %9s %8s %8s %6s %9s  %s\n", "case", "meas", "numbering", "assembly", "geometry", "ms", "GDOF/s", "GB/s", "%copy", "cg_ms", "status"; next }
           { geo = $c["geometry"] ($c["geometry_pick"] == "true" ? "*" : "")
             # the columns after `note` shift when a note holds commas: numbers of ok rows only
             if ($c["status"] != "ok") { printf "%-28s %-4s %-10s %-13s %-9s %9s %8s %8s %6s %9s  %s\n", $c["case"], $c["measure"], $c["numbering"], ($c["assembly"] == "" ? "-" : $c["assembly"]), geo, "-", "-", "-", "-", "-", $c["status"]; next }
             printf "%-28s %-4s %-10s %-13s %-9s %9s %8s %8s %6s %9s  %s\n", $c["case"], $c["measure"], $c["numbering"],
                    ($c["assembly"] == "" ? "-" : $c["assembly"]), geo,
                    ($c["time_ms"] == "" ? "-" : sprintf("%.4f", $c["time_ms"])),
                    ($c["gdof_per_s"] == "" ? "-" : sprintf("%.2f", $c["gdof_per_s"])),
                    ($c["gb_per_s"] == "" ? "-" : sprintf("%.0f", $c["gb_per_s"])),
                    ($c["pct_copy"] == "" ? "-" : sprintf("%.1f", $c["pct_copy"])),
                    ($c["cg_iteration_ms"] == "" ? "-" : sprintf("%.4f", $c["cg_iteration_ms"])), $c["status"] }' "$1"
}
sweep_best() { # the fastest configuration of a sweep CSV
  [ -s "$1" ] || return 0
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           $c["gflops"] != "" && $c["gflops"] + 0 > best { best = $c["gflops"] + 0; line = sprintf("%s: best N_bl=%s N_cb=%s (N_t=%s): %.0f GF/s, %.1f%% of copy", $c["case"], $c["n_bl"], $c["n_cb"], $c["n_t"], $c["gflops"], $c["pct_copy"]) }
           $c["status"] == "invalid" { inv++ }
           END { if (line != "") print line "; " inv + 0 " invalid combinations" }' "$1"
}
echo
echo "================ summary (${SECONDS}s) ================"
grep -h '^# copy bandwidth' "$LOG" | sort -u | head -n 5
summary "$OUT/suite.csv"
summary "$OUT/suite-2e25.csv"
summary "$OUT/tuned.csv"
summary_bp "$OUT/bp.csv"
echo
sweep_best "$OUT/sweep-2d.csv"
sweep_best "$OUT/sweep-3d.csv"
echo
ls -la "$OUT"
echo "== gpu-bench done in ${SECONDS}s"
exec 1>&- 2>&-
wait "$TEE_PID" 2>/dev/null || true
