#!/usr/bin/env bash
# The GPU suite (tests/gpu/run.sh) on a machine with several GPUs, its parts side by side, each on
# a GPU of its own (CUDA_VISIBLE_DEVICES), for a whole suite in about the time of its longest part:
#   kernels                            the kernel unit tests (host references on many cores)
#   memcheck memory                    compute-sanitizer memcheck, then the out-of-memory test (which
#                                      takes its GPU whole: nothing else runs there)
#   suite, petsc section               the PETSc-level unit tests on 1, 2 and 4 ranks
#   suite, tutorials solvers options   tutorials and solver paths
#   copies placement shadows bind      (on the same GPU as the one before)
# Two parts fill their GPU's memory on purpose (test_kernels --only oom at the end of the kernel
# tests, test_oom), so each part needs a GPU that no such part shares: with fewer than four GPUs
# this runs tests/gpu/run.sh itself, one part after another. Each part's output:
# build/test-logs/part-<name>.log. Prints each part's failures and "N passed, M failed" over all
# parts last; exits nonzero on any failure.
# Environment: as tests/gpu/run.sh (PETSC_DIR/PETSC_ARCH, GPUMATS_JOBS for the petsc section).
set -u
cd "$(dirname "$0")/../.."
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 4 ] || exec bash tests/gpu/run.sh
source tests/gpu/cuda_petsc.sh
make -j"$(nproc)" lib tests >build-gpu.log 2>&1 || { tail -30 build-gpu.log; echo "0 passed, 1 failed (build)"; exit 1; }
mkdir -p build/test-logs
# test_kernels linked once, before the parts (run.sh leaves it when it is newer than its objects)
kobjs=$(for f in src/mat/impls/*/*.cu src/mat/impls/common/cuda/*.cu; do o=${f#src/}; echo "build/obj/${o%.cu}.o"; done)
"${CUDA_DIR:-/usr/local/cuda}/bin/nvcc" -std=c++17 -O2 -arch=sm_${CUDA_ARCH:-90} -o build/bin/test_kernels tests/gpu/test_kernels.cu $kobjs -lcusparse \
  >build/test-logs/kernels-build.log 2>&1 || { tail -20 build/test-logs/kernels-build.log; echo "0 passed, 1 failed (test_kernels)"; exit 1; }

ALL="kernels memcheck suite copies memory placement shadows bind"
names=() pids=()
part() { # name gpu gpu-sections run-skip
  local name=$1 gpu=$2 skip=$ALL s
  for s in $3; do skip=${skip/$s/}; done
  (CUDA_VISIBLE_DEVICES=$gpu GPUMATS_GPU_SKIP="$skip" GPUMATS_SKIP="$4" bash tests/gpu/run.sh >"build/test-logs/part-$name.log" 2>&1) &
  names+=("$name") pids+=($!)
}
part kernels 0 "kernels" ""
part memcheck-memory 1 "memcheck memory" ""
part petsc 2 "suite" "tutorials solvers options"
part tutorials-solvers-options 3 "suite" "petsc"
part copies-placement-shadows-bind 3 "copies placement shadows bind" ""
pass=0 fail=0
for i in "${!names[@]}"; do
  wait "${pids[$i]}"
  log=build/test-logs/part-${names[$i]}.log
  grep '^not ok' "$log" | head -20
  last=$(tail -1 "$log")
  echo "# part ${names[$i]}: $last"
  p=$(grep -oE '^[0-9]+ passed' <<<"$last" | grep -oE '^[0-9]+')
  f=$(grep -oE '[0-9]+ failed' <<<"$last" | grep -oE '^[0-9]+')
  pass=$((pass + ${p:-0})) fail=$((fail + ${f:-1}))
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
