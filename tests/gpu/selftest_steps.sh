#!/usr/bin/env bash
# tests/gpu/steps.sh's rules on the CPU, in a copy of the scripts it needs, with a made-up section
# runner in place of tests/gpu/run.sh: a section stopped at the step's time continues in the next
# step, a section that cannot resume waits for a step with its time, a failed section is the only
# one a later step runs again, the counts of a complete suite are summed, and a new build starts
# every section anew. Prints "ok"/"not ok" per rule and "N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/gpu"
cp tests/gpu/steps.sh "$tmp/tests/gpu/"
cp tests/resume.sh "$tmp/tests/"
# the runner: its section is the one of steps.sh's eight that GPUMATS_GPU_SKIP leaves out; each run
# is logged with the resume settings it was handed; FAKE_SLEEP=SECTION:SECONDS and FAKE_FAIL=SECTION make one section slow or failing
cat >"$tmp/fake.sh" <<'EOF'
for s in kernels memcheck memory copies placement shadows bind suite; do
  case " $GPUMATS_GPU_SKIP " in *" $s "*) ;; *) me=$s ;; esac
done
echo "$me" >>"$FAKE_RUNS"
echo "${GPUMATS_RESUME:-unset} ${GPUMATS_FINGERPRINT:-unset}" >>"$FAKE_ENV"
[ "${FAKE_SLEEP%%:*}" = "$me" ] && sleep "${FAKE_SLEEP#*:}"
if [ "${FAKE_FAIL:-}" = "$me" ]; then echo "not ok $me/made-up"; echo "2 passed, 1 failed"; exit 1; fi
echo "3 passed, 0 failed"
EOF
pass=0 fail=0
check() { # name condition-result(0 = true) detail
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok steps/$1"; else fail=$((fail + 1)); echo "not ok steps/$1: $3"; fi
}
step() { # seconds [VAR=value...]: one step, its output in $tmp/out, its runs in $tmp/runs
  local secs=$1
  shift
  : >"$tmp/runs"
  : >"$tmp/env"
  env GPUMATS_STEP_SECONDS="$secs" GPUMATS_STEP_RUN="bash $tmp/fake.sh" GPUMATS_FINGERPRINT="${FP:-build-1}" \
    FAKE_RUNS="$tmp/runs" FAKE_ENV="$tmp/env" FAKE_SLEEP=none:0 "$@" bash "$tmp/tests/gpu/steps.sh" >"$tmp/out" 2>&1
}
runs() { paste -sd' ' "$tmp/runs"; }

# 1. a 35-second step: the kernels (resumable, started with 30 s left) run until stopped; no other
# section has its time left
step 35 FAKE_SLEEP=kernels:60
rc=$?
check "stopped-section-left" "$([ "$rc" = 2 ] && [ "$(runs)" = "kernels" ] && grep -q '^# memory: left for a later step' "$tmp/out" && echo 0)" "exit $rc, ran '$(runs)' (want 2, 'kernels')"
# the section's own units (kernel shards, memcheck parts, PETSc-level runs) resume too: the runner
# is handed GPUMATS_RESUME=1 and the step's fingerprint
check "units-resume" "$([ "$(cat "$tmp/env")" = "1 build-1" ] && echo 0)" "the runner saw '$(cat "$tmp/env")' (want '1 build-1')"
# 2. a long step with the memory section failing: everything runs; exit 1, the failure shown
step 1000 FAKE_FAIL=memory
rc=$?
check "failure-reported" "$([ "$rc" = 1 ] && [ "$(runs)" = "kernels memcheck memory copies placement shadows bind suite" ] && grep -q '^not ok memory/made-up' "$tmp/out" && echo 0)" "exit $rc, ran '$(runs)'"
# 3. the next step runs the failed section only and sums the counts: 8 sections of 3 checks
step 1000
rc=$?
check "complete-sum" "$([ "$rc" = 0 ] && [ "$(runs)" = "memory" ] && [ "$(tail -1 "$tmp/out")" = "suite complete: 24 passed, 0 failed" ] && echo 0)" "exit $rc, ran '$(runs)', last line '$(tail -1 "$tmp/out")'"
# 4. another build: every section runs again
FP=build-2 step 1000
rc=$?
check "new-build-anew" "$([ "$rc" = 0 ] && [ "$(wc -l <"$tmp/runs")" = 8 ] && echo 0)" "exit $rc, ran '$(runs)'"
# 5. a third build, two sections chosen: only they run, and the sum is theirs, not a whole suite's
FP=build-3 step 1000 GPUMATS_STEP_SECTIONS="copies suite"
rc=$?
check "chosen-sections" "$([ "$rc" = 0 ] && [ "$(runs)" = "copies suite" ] && [ "$(tail -1 "$tmp/out")" = "sections complete (copies suite): 6 passed, 0 failed" ] && echo 0)" "exit $rc, ran '$(runs)', last line '$(tail -1 "$tmp/out")'"
# 6. a section name steps.sh does not have stops the step before anything runs
FP=build-3 step 1000 GPUMATS_STEP_SECTIONS="copies kernel"
rc=$?
check "unknown-section" "$([ "$rc" = 1 ] && [ ! -s "$tmp/runs" ] && grep -q "no section 'kernel'" "$tmp/out" && echo 0)" "exit $rc, ran '$(runs)'"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
