#!/usr/bin/env bash
# Installs what petsc-gpumats needs on Debian/Ubuntu, and nothing that is already there.
# Idempotent: `make run` and `make test` call it every time.
#
# With PETSC_DIR pointing at a PETSc of your own (not Debian's /usr/lib/petsc), only the tools are
# checked. Debian's PETSc 3.18 comes with OpenMPI and HDF5 and carries PETSc's tutorial sources
# (libpetsc3.18-dev-examples), which the test suite compiles as real clients.
set -euo pipefail

PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

if [ "$PETSC_DIR" = /usr/lib/petsc ]; then
  # the default (real, 32-bit indices) PETSc, its tutorial sources, and the 64-bit-index and
  # complex builds the test suite also builds against (tests/variants.sh)
  for p in petsc-dev libpetsc3.18-dev-examples libpetsc64-real3.18-dev libpetsc-complex3.18-dev; do have_pkg "$p" || need+=("$p"); done
fi
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v mpiexec >/dev/null || need+=(openmpi-bin)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "petsc-gpumats: missing packages: ${need[*]}; run as root, or: sudo apt-get install ${need[*]}" >&2
  exit 1
fi
echo "petsc-gpumats: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
