#!/usr/bin/env bash
# The GPU suite (tests/gpu/run.sh) on a machine with several GPUs, its sections as parts side by
# side over the GPUs (CUDA_VISIBLE_DEVICES), for a whole suite in about the time of its longest part:
#   kernels                      the kernel unit tests, their processes taking every GPU in turn
#   memcheck                     compute-sanitizer memcheck (GPU 1)
#   petsc (two halves by type)   the PETSc-level unit tests on 1, 2 and 4 ranks (GPUs 2 and 3)
#   tutorials solvers options    tutorials and solver paths, by the same halves (GPUs 0 and 1)
#   copies placement shadows bind  (GPU 2)
# then the out-of-memory section alone: each of its tests fills its GPU, so nothing may share it.
# With fewer than four GPUs this runs tests/gpu/run.sh itself, one section after another. Each
# part's output: build/test-logs/part-<name>.log. Prints each part's failures and "N passed, M
# failed" over all parts last; exits nonzero on any failure.
# Environment: as tests/gpu/run.sh (PETSC_DIR/PETSC_ARCH, GPUMATS_JOBS for the PETSc-level parts).
set -u
cd "$(dirname "$0")/../.."
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 4 ] || exec bash tests/gpu/run.sh
source tests/gpu/cuda_petsc.sh
make -j"$(nproc)" lib tests >build-gpu.log 2>&1 || { tail -30 build-gpu.log; echo "0 passed, 1 failed (build)"; exit 1; }
mkdir -p build/test-logs
source tests/gpu/link_kernels.sh # once, before the parts that run it
link_test_kernels || { echo "0 passed, 1 failed (test_kernels)"; exit 1; }

ALL="kernels memcheck suite copies memory placement shadows bind"
HALF1="cmrscuda sellpcuda" HALF2="bellpackcuda autocuda"
names=() pids=()
part() { # name gpus sections run-skip types
  local name=$1 gpu=$2 skip=$ALL s
  for s in $3; do skip=${skip/$s/}; done
  (CUDA_VISIBLE_DEVICES=$gpu GPUMATS_GPU_SKIP="$skip" GPUMATS_SKIP="$4" GPUMATS_GPU_TYPES="$5" bash tests/gpu/run.sh \
    >"build/test-logs/part-$name.log" 2>&1) &
  names+=("$name") pids+=($!)
}
tally_parts() {
  local i log last p f
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
  names=() pids=()
}
pass=0 fail=0
part kernels "$(seq -s, 0 $((ngpu - 1)))" "kernels" "" ""
part memcheck 1 "memcheck" "" ""
part petsc-1 2 "suite" "tutorials solvers options" "$HALF1"
part petsc-2 3 "suite" "tutorials solvers options" "$HALF2"
part tutorials-1 0 "suite" "petsc" "$HALF1"
part tutorials-2 1 "suite" "petsc" "$HALF2"
part copies-placement-shadows-bind 2 "copies placement shadows bind" "" ""
tally_parts
part memory 0 "memory" "" ""
tally_parts
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
