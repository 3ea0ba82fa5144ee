#!/usr/bin/env bash
# The GPU suite (tests/gpu/run.sh) on a machine with four or more GPUs, its sections as parts in
# three lanes side by side, each lane on GPUs of its own (CUDA_VISIBLE_DEVICES), for a whole suite
# in about the time of its longest lane:
#   GPUs 0,1  the kernel unit tests (their processes taking both GPUs in turn), memcheck, copies
#             placement shadows bind, then the out-of-memory section alone (each of its tests
#             fills its GPU, so nothing may share it)
#   GPU 2     the PETSc-level unit tests, then the tutorials and solver paths, for cmrscuda sellpcuda
#   GPU 3     the same for bellpackcuda autocuda
# With fewer than four GPUs this runs tests/gpu/run.sh itself, one section after another. Each
# part's output: build/test-logs/part-<name>.log, its PETSc-level logs in build/test-logs/<name>/.
# Prints each part's failures and "N passed, M failed" over all parts last; exits nonzero on any
# failure.
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
pids=()
part() { # name gpus sections run-skip types
  local name=$1 gpu=$2 skip=$ALL s
  for s in $3; do skip=${skip/$s/}; done
  # (each part's PETSc-level logs in a folder of its own: the halves run the same cases' references)
  (CUDA_VISIBLE_DEVICES=$gpu GPUMATS_GPU_SKIP="$skip" GPUMATS_SKIP="$4" GPUMATS_GPU_TYPES="$5" GPUMATS_LOGS=build/test-logs/$name bash tests/gpu/run.sh \
    >"build/test-logs/part-$name.log" 2>&1) &
  pids+=($!)
}
pass=0 fail=0
# three lanes, each a sequence of parts on GPUs no other lane uses: a GPU time-sliced between a
# kernel sweep's processes and PETSc's ranks slows both several times over
lane() { # "name@gpus:sections:run-skip:types" ...
  local spec name gpus sections rskip types
  for spec in "$@"; do
    IFS=: read -r name sections rskip types <<<"$spec"
    gpus=${name#*@} name=${name%@*}
    part "$name" "$gpus" "$sections" "$rskip" "$types"
    wait "${pids[-1]}"
  done
}
(
  lane "kernels@0,1:kernels::" "memcheck@1:memcheck::" "copies-placement-shadows-bind@1:copies placement shadows bind::" "memory@0:memory::"
) &
lanes=($!)
(lane "petsc-1@2:suite:tutorials solvers options:$HALF1" "tutorials-1@2:suite:petsc:$HALF1") &
lanes+=($!)
(lane "petsc-2@3:suite:tutorials solvers options:$HALF2" "tutorials-2@3:suite:petsc:$HALF2") &
lanes+=($!)
wait "${lanes[@]}"
for name in kernels memcheck copies-placement-shadows-bind memory petsc-1 tutorials-1 petsc-2 tutorials-2; do
  log=build/test-logs/part-$name.log
  grep '^not ok' "$log" | head -20
  last=$(tail -1 "$log" 2>/dev/null)
  echo "# part $name: $last"
  p=$(grep -oE '^[0-9]+ passed' <<<"$last" | grep -oE '^[0-9]+')
  f=$(grep -oE '[0-9]+ failed' <<<"$last" | grep -oE '^[0-9]+')
  pass=$((pass + ${p:-0})) fail=$((fail + ${f:-1}))
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
