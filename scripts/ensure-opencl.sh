#!/usr/bin/env bash
# Makes sure an OpenCL device answers: asks the ICD loader for the devices of
# every platform (`clinfo -l`, installed from Debian/Ubuntu packages if
# missing). If no device answers, installs the ICD loader and the PoCL CPU
# platform (ocl-icd-libopencl1, pocl-opencl-icd) and asks again. A machine
# whose GPU driver registers its own ICD (e.g. NVIDIA's) and answers is left
# as it is. An ICD file that is registered but whose library finds no device
# (a driver without its GPU, a broken install) does not count as an answer.
set -euo pipefail

# The device lines of `clinfo -l` ("`-- Device #0: NAME"), nothing if none.
devices() {
  clinfo -l 2>/dev/null | grep -- '-- Device #' || true
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-opencl: apt-get not available; install an OpenCL ICD loader, a platform" \
      "(e.g. PoCL) and clinfo by hand, then check that 'clinfo -l' lists a device" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v clinfo >/dev/null 2>&1; then
  echo "ensure-opencl: installing clinfo to ask OpenCL for its devices" >&2
  apt_install clinfo
fi

found="$(devices)"
if [ -z "$found" ]; then
  echo "ensure-opencl: no OpenCL device answers; installing ocl-icd-libopencl1 and pocl-opencl-icd" >&2
  apt_install ocl-icd-libopencl1 pocl-opencl-icd
  found="$(devices)"
  if [ -z "$found" ]; then
    echo "ensure-opencl: PoCL installed, but still no OpenCL device answers; clinfo says:" >&2
    clinfo >&2 || true
    exit 1
  fi
fi
echo "ensure-opencl: OpenCL devices:" >&2
echo "$found" >&2
