#!/usr/bin/env bash
# The GPU suite (tests/gpu/run.sh) in steps, for GPU time that comes in commands shorter than a
# whole suite (one GPU, a 10-minute limit): each step runs the sections that have not yet passed
# with this build, one at a time, and stops before its time (GPUMATS_STEP_SECONDS, default 570) is
# up. The sections whose units resume (kernels, memcheck, suite: tests/resume.sh) continue where
# the last step stopped; the others (memory, copies, placement, shadows, bind) start only with
# the time they need left and otherwise wait for a later step. A section that passed leaves a mark
# with the build's fingerprint beside its log, build/test-logs/section-<name>.log. The build is
# reproducible (makefile, tests/gpu/link_kernels.sh), so a later step may run on another machine
# given the same sources at the same path, CUDA, PETSc and build/test-logs.
# Prints each section's count as it ends; once every section has passed with this build, "suite
# complete:" and the sum of the sections' counts. Exit 0 when complete, 2 when sections remain,
# 1 when a section failed (run the step again to rerun what failed).
# GPUMATS_STEP_SECTIONS: the sections to run, of the eight below (default all). For a change that
# leaves the kernel objects as they were (no .cu or .cuh file, nor a header they include, changed:
# test_kernels is then the same binary), "memory copies placement shadows bind suite" is what the
# change can affect; the step then ends with "sections complete (...):" rather than "suite complete:".
set -u
cd "$(dirname "$0")/../.."
t0=$(date +%s)
end=$((t0 + ${GPUMATS_STEP_SECONDS:-570}))
# (GPUMATS_STEP_RUN: what runs a section, for tests/gpu/selftest_steps.sh; it builds nothing)
[ -n "${GPUMATS_STEP_RUN:-}" ] || source tests/gpu/suite_build.sh
run_section=${GPUMATS_STEP_RUN:-bash tests/gpu/run.sh}
mkdir -p build/test-logs
source tests/resume.sh
# exported: the sections' own units (kernel shards, memcheck parts, PETSc-level runs) resume too
export GPUMATS_RESUME=1
build_fingerprint
echo "# build $GPUMATS_FINGERPRINT, ready after $(($(date +%s) - t0)) s"

ALL="kernels memcheck memory copies placement shadows bind suite"
RUN=${GPUMATS_STEP_SECTIONS:-$ALL}
for s in $RUN; do
  case " $ALL " in *" $s "*) ;; *) echo "# GPUMATS_STEP_SECTIONS: no section '$s' (sections: $ALL)"; exit 1 ;; esac
done
# the least time a section that cannot resume is started with (memory, copies, placement, shadows
# and bind each took under half of it on one H200: docs/results/gpu-suite-h200-2026-11-29.txt)
need() { case $1 in memory) echo 60 ;; copies | placement | shadows) echo 120 ;; bind) echo 200 ;; *) echo 30 ;; esac; }
failed=0
for s in $RUN; do
  log=build/test-logs/section-$s.log
  resumed "$log" && continue
  left=$((end - $(date +%s)))
  if [ "$left" -lt "$(need "$s")" ]; then
    echo "# $s: left for a later step ($left s left, needs $(need "$s"))"
    continue
  fi
  ts=$(date +%s)
  GPUMATS_GPU_SKIP="${ALL/$s/}" timeout "$left" $run_section >"$log" 2>&1
  rc=$?
  grep '^not ok' "$log" | head -20
  echo "# $s: $(tail -1 "$log") (exit $rc, $(($(date +%s) - ts)) s)"
  case $rc in
    0) record_unit "$log" 1 ;;
    124 | 137) record_unit "$log" 0 ;; # stopped at the step's time: continues in the next step
    *) record_unit "$log" 0; failed=1 ;;
  esac
done
[ "$failed" = 0 ] || exit 1
pass=0 fail=0
for s in $RUN; do
  log=build/test-logs/section-$s.log
  resumed "$log" || { echo "# sections remain: run this step again"; exit 2; }
  add_last_counts "$log"
done
if [ "$RUN" = "$ALL" ]; then echo "suite complete: $pass passed, $fail failed"; else echo "sections complete ($RUN): $pass passed, $fail failed"; fi
[ "$fail" = 0 ]
