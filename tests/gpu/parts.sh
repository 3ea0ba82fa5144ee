#!/usr/bin/env bash
# The GPU suite (tests/gpu/run.sh) on a machine with four or more GPUs, its sections as parts in
# four lanes side by side, each on a GPU of its own (CUDA_VISIBLE_DEVICES), for a whole suite in
# about the time of its longest lane:
#   GPU 0  the kernel unit tests, then the out-of-memory section (each of its tests fills its GPU,
#          so nothing may share it)
#   GPU 1  copies placement shadows bind, then memcheck
#   GPU 2  the tutorials and solver paths, then the PETSc-level unit tests, for cmrscuda sellpcuda
#   GPU 3  the same for bellpackcuda autocuda
# With fewer than four GPUs this runs tests/gpu/run.sh itself, one section after another. Each
# part's output: build/test-logs/part-<name>.log, its PETSc-level logs in build/test-logs/<name>/.
# Prints each part's failures and "N passed, M failed" over all parts last; exits nonzero on any
# failure. A whole suite takes longer than a 10-minute command: GPUMATS_RESUME=1 in a second
# command on the same machine continues it (tests/resume.sh), running only what has not passed.
# Environment: as tests/gpu/run.sh (PETSC_DIR/PETSC_ARCH, GPUMATS_JOBS for the PETSc-level parts,
# GPUMATS_RESUME).
set -u
cd "$(dirname "$0")/../.."
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 4 ] || exec bash tests/gpu/run.sh
source tests/gpu/suite_build.sh
source tests/resume.sh # the build's fingerprint, shared by the parts (GPUMATS_RESUME=1 continues a stopped suite)
build_fingerprint

ALL="kernels memcheck suite copies memory placement shadows bind"
HALF1="cmrscuda sellpcuda" HALF2="bellpackcuda autocuda"
part() { # name gpus sections run-skip types
  local name=$1 gpu=$2 skip=$ALL s
  for s in $3; do skip=${skip/$s/}; done
  # (each part's PETSc-level logs in a folder of its own: the halves run the same cases' references)
  CUDA_VISIBLE_DEVICES=$gpu GPUMATS_GPU_SKIP="$skip" GPUMATS_SKIP="$4" GPUMATS_GPU_TYPES="$5" GPUMATS_LOGS=build/test-logs/$name bash tests/gpu/run.sh \
    >"build/test-logs/part-$name.log" 2>&1
}
pass=0 fail=0
# four lanes, each a sequence of parts on a GPU no other lane uses: a GPU time-sliced between a
# kernel sweep's processes and PETSc's ranks slows both several times over
lane() { # "name@gpus:sections:run-skip:types" ...
  local spec name gpus sections rskip types
  for spec in "$@"; do
    IFS=: read -r name sections rskip types <<<"$spec"
    gpus=${name#*@} name=${name%@*}
    part "$name" "$gpus" "$sections" "$rskip" "$types"
  done
}
# (in each lane the part GPUMATS_RESUME cannot continue first: copies..bind keep no units)
lane "tutorials-1@2:suite:petsc:$HALF1" "petsc-1@2:suite:tutorials solvers options:$HALF1" &
lanes=($!)
lane "tutorials-2@3:suite:petsc:$HALF2" "petsc-2@3:suite:tutorials solvers options:$HALF2" &
lanes+=($!)
lane "copies-placement-shadows-bind@1:copies placement shadows bind::" "memcheck@1:memcheck::" &
lanes+=($!)
lane "kernels@0:kernels::" "memory@0:memory::" &
lanes+=($!)
wait "${lanes[@]}"
for name in kernels memcheck copies-placement-shadows-bind memory petsc-1 tutorials-1 petsc-2 tutorials-2; do
  log=build/test-logs/part-$name.log
  grep '^not ok' "$log" | head -20
  echo "# part $name: $(tail -1 "$log" 2>/dev/null)"
  add_last_counts "$log"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
