# Sourced by the GPU scripts (tests/gpu/run.sh, tests/gpu/build_check.sh, examples/cmrs_variants.sh,
# examples/bench_all.sh): a CUDA-enabled PETSc, PETSC_DIR/PETSC_ARCH if they name one, else
# config/build-petsc-cuda.sh's (built when missing; offline it needs .carry/petsc-<version>.tar.gz);
# otherwise exits the caller, printing CUDA_PETSC_FAIL (default: a failed count, for the test scripts).
conf="${PETSC_DIR:-/nonexistent}/${PETSC_ARCH:-}/include/petscconf.h"
if ! grep -q "define PETSC_HAVE_CUDA 1" "$conf" 2>/dev/null; then
  eval "$(bash config/build-petsc-cuda.sh | tail -1)" || { echo "${CUDA_PETSC_FAIL:-0 passed, 1 failed (no CUDA PETSc)}"; exit 1; }
fi
export PETSC_DIR PETSC_ARCH
# OpenMPI builds are often not CUDA-aware; PETSc then refuses device buffers unless told
export PETSC_OPTIONS="-use_gpu_aware_mpi 0 ${PETSC_OPTIONS:-}"
echo "# PETSc: $PETSC_DIR/$PETSC_ARCH"
nvidia-smi -L || true
