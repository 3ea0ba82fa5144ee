#!/usr/bin/env bash
# What `make run` executes after building: the example driver build/bin/solve on its default
# problem (7-point Poisson, 48^3) with the host types aij,cmrs,sellp,bellpack and, when the PETSc at
# PETSC_DIR/PETSC_ARCH has CUDA or an NVIDIA GPU is visible, also with
# aijcusparse,cmrscuda,sellpcuda,bellpackcuda (the driver reports a type it cannot use as skipped).
# Extra arguments go to the driver, e.g.
#   bash examples/run.sh -n 64 -ksp_type gmres
#   bash examples/run.sh -f matrix.mtx -csv results.csv
# One rank, no mpiexec; for more: mpiexec -n 4 build/bin/solve -types aij,cmrs,sellp,bellpack
set -euo pipefail
cd "$(dirname "$0")/.."

PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}
PETSC_ARCH=${PETSC_ARCH:-}
conf=$PETSC_DIR/${PETSC_ARCH:+$PETSC_ARCH/}include/petscconf.h
driver=build/bin/solve

if [ ! -x "$driver" ]; then
  echo "examples/run.sh: $driver is missing; build it with 'make examples'" >&2
  exit 1
fi

types=aij,cmrs,sellp,bellpack
gpu_types=aijcusparse,cmrscuda,sellpcuda,bellpackcuda

# Does PETSc have CUDA?
if [ ! -f "$conf" ]; then
  petsc_why="no petscconf.h at $conf"
elif grep -Eq '^#define PETSC_HAVE_CUDA( |$)' "$conf"; then
  petsc_why=""
else
  petsc_why="PETSc at $PETSC_DIR${PETSC_ARCH:+ (PETSC_ARCH=$PETSC_ARCH)} built without CUDA"
fi

# Is a GPU visible?
if ! command -v nvidia-smi >/dev/null 2>&1; then
  gpu_why="no NVIDIA GPU visible (nvidia-smi not found)"
elif ! smi=$(nvidia-smi -L 2>&1); then
  gpu_why="no NVIDIA GPU visible (nvidia-smi -L: $(head -n 1 <<<"$smi"))"
elif ! grep -q '^GPU ' <<<"$smi"; then
  gpu_why="no NVIDIA GPU visible (nvidia-smi -L lists none)"
else
  gpu_why=""
fi

if [ -z "$petsc_why" ] || [ -z "$gpu_why" ]; then
  types=$types,$gpu_types
else
  echo "GPU types skipped: $gpu_why; $petsc_why"
fi

exec "$driver" -types "$types" "$@"
