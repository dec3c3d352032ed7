#!/usr/bin/env bash
# The peers of issue #22, run on the GPU machine in the same session as
# femquad's benchmark (BENCHMARKS.md compares only numbers of one run):
#   bp_peers.py   P1 Laplacian residual: cuSPARSE CSR SpMV of the assembled
#                 matrix, torch eager and torch.compile (2^24 cells, random
#                 and renumbered meshes)                    -> bp_peers.jsonl
#   amg_peer.py   P1 Poisson to 1e-8: PyAMG classical hierarchy + CuPy PCG
#                 with a V(1,1) Chebyshev(2)–Jacobi cycle (2D, 3D)
#                                                          -> amg_peer_2d.jsonl, amg_peer_3d.jsonl
# The scripts are ../shared/peers/*.py (not part of this repository): copy
# them to .gpu/peers here, and the pyamg wheels (one per Python version:
# `pip download pyamg --no-deps --only-binary=:all: --python-version 3.X
# --platform manylinux2014_x86_64 -d .gpu/wheels`) to .gpu/wheels; the GPU
# machine has no package index. Then, on the device (carry .gpu):
#   OUT=$OUT bash scripts/gpu-peers.sh
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
PEERS=${PEERS:-$PWD/.gpu/peers}
WHEELS=${WHEELS:-$PWD/.gpu/wheels}
mkdir -p "$OUT"
py=$(python3 -c 'import sys; print(f"cp{sys.version_info.major}{sys.version_info.minor}")')
if ! python3 -c 'import pyamg' 2>/dev/null; then
  wheel=$(ls "$WHEELS"/pyamg-*-"$py"-*.whl 2>/dev/null | head -1)
  if [ -n "$wheel" ]; then
    # unpacked, not pip-installed: the system Python may be externally managed (PEP 668)
    python3 -m zipfile -e "$wheel" /tmp/pyamg-site && export PYTHONPATH=/tmp/pyamg-site${PYTHONPATH:+:$PYTHONPATH}
  else
    echo "gpu-peers: no pyamg wheel for $py in $WHEELS"
  fi
fi
cd "$PEERS" || exit 2
[ "${SKIP_BP_PEERS:-0}" = 1 ] || timeout "${BP_PEERS_TIMEOUT:-300}" python3 bp_peers.py "${PEERS_LOG2_CELLS:-24}" random,renumbered | tee "$OUT/bp_peers.jsonl"
for dim in 2 3; do
  timeout "${AMG_PEER_TIMEOUT:-240}" python3 amg_peer.py "$dim" rs | tee "$OUT/amg_peer_${dim}d.jsonl"
done
