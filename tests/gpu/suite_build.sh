# Sourced by the drivers that run tests/gpu/run.sh in parts (tests/gpu/parts.sh, tests/gpu/steps.sh):
# the CUDA PETSc (tests/gpu/cuda_petsc.sh), the library and test programs, and test_kernels linked
# once before any part runs (so that parts side by side do not link it at the same time); on a
# failure prints a failed count and exits the caller.
source tests/gpu/cuda_petsc.sh
make -j"$(nproc)" lib tests >build-gpu.log 2>&1 || { tail -30 build-gpu.log; echo "0 passed, 1 failed (build)"; exit 1; }
mkdir -p build/test-logs
source tests/gpu/link_kernels.sh
link_test_kernels || { echo "0 passed, 1 failed (test_kernels)"; exit 1; }
