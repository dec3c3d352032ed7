#!/usr/bin/env bash
# Makes sure an OpenCL runtime is present: if no OpenCL platform answers,
# installs the ICD loader and the PoCL CPU platform from Debian/Ubuntu
# packages (ocl-icd-libopencl1, pocl-opencl-icd). A machine with a GPU driver
# that registers its own ICD (e.g. NVIDIA's) is left as it is.
set -euo pipefail

have_platform() {
  # An ICD loader plus at least one registered vendor library.
  ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1' &&
    compgen -G '/etc/OpenCL/vendors/*.icd' >/dev/null
}

if have_platform; then
  exit 0
fi

echo "ensure-opencl: no OpenCL platform found; installing ocl-icd-libopencl1 and pocl-opencl-icd" >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-opencl: apt-get not available; install an OpenCL ICD loader and platform (e.g. PoCL) by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends ocl-icd-libopencl1 pocl-opencl-icd >/dev/null
have_platform || { echo "ensure-opencl: installed, but still no OpenCL platform registered" >&2; exit 1; }
echo "ensure-opencl: PoCL installed" >&2
