#!/usr/bin/env bash
# The test suite of petsc-gpumats (what `make test` runs after building):
#   1. format core unit tests (every conversion and host SpMV against a CSR reference);
#   2. PETSc-level tests on 1, 2 and 4 ranks (products, conversions, updates, KSP, I/O, MatBindToCPU), and on 2
#      and 3 ranks with each ghost exchange of the MPI types, overlapped and not;
#   3. PETSc's own tutorials ex2 and ex45, compiled unmodified, loaded with -dll_append, against
#      the reference type on 1 and 2 ranks (iterations equal, residual/error equal to 3 digits);
#      examples/coo_newton (a Newton solve assembling its Jacobian with COO) the same way;
#      then the solver paths through ex2, ex45, ex56 and snes ex19 the same way: GAMG, ML, PCMG on
#      DMDAs (and the types of its levels, tests/petsc/test_mg.c), MUMPS, UMFPACK, SuperLU, ICC;
#   4. options, -help and -mat_view, and bad input that must end in a clear PETSc error; the
#      scaling script (examples/scaling.sh) with host types on 1, 2 and 4 ranks;
#   5. the plug-in built against Debian's 64-bit-index PETSc (tests 2 again) and complex PETSc
#      (refused with a clear error): tests/variants.sh;
#   6. PETSc's own test suite (its harness, the tutorials of ksp/ksp, snes and ts) with each host type
#      swapped in for aij: tests/conformance/run.sh --ci.
# It prints "N passed, M failed" last and exits nonzero if anything failed. Full logs: build/test-logs (GPUMATS_LOGS).
#
# Environment (the GPU suite, tests/gpu/run.sh, sets these):
#   GPUMATS_TYPES  types under test        (default: the registry's host types)
#   GPUMATS_REF    reference type          (default: aij)
#   GPUMATS_VEC    -dm_vec_type for ex45   (default: none)
#   GPUMATS_SKIP   sections to skip (core petsc tutorials solvers options scaling download conformance variants), e.g. "core"
#                  when the caller runs it itself; "solvers" skips only the solver paths of 3
#   GPUMATS_BUILD, GPUMATS_LIBDIR   where the build lives (default build, lib)
#   GPUMATS_LOGS   where the logs go (default build/test-logs; one per run side by side)
#   GPUMATS_RESUME=1  the PETSc-level test runs that passed with this very build are not run again
#                  (a suite stopped by a time limit, continued: tests/resume.sh)
#   GPUMATS_JOBS   MPI ranks sections 2 and 3 run at once, tests side by side (default: the cores; below 4,
#                  one test at a time)
set -u
cd "$(dirname "$0")/.."

BIN=${GPUMATS_BUILD:-build}/bin
LIB=$PWD/${GPUMATS_LIBDIR:-lib}/libpetscgpumats.so
# the default types under test: the host types of the library's registry
TYPES=${GPUMATS_TYPES:-$("$BIN/test_types" -list_host_types 2>/dev/null)}
TYPES=${TYPES:-cmrs sellp bellpack} # (when test_types could not run; its own checks then fail)
REF=${GPUMATS_REF:-aij}
VEC=${GPUMATS_VEC:-}
SKIP=${GPUMATS_SKIP:-}
LOGS=${GPUMATS_LOGS:-build/test-logs}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$LOGS"
MPIEXEC=(mpiexec --oversubscribe)
[ "$(id -u)" = 0 ] && MPIEXEC+=(--allow-run-as-root)
export OMPI_MCA_rmaps_base_oversubscribe=1
TYPES_CSV=$(echo $TYPES | tr ' ' ',')

pass=0
fail=0
ok() {
  pass=$((pass + 1))
  echo "ok $1"
}
notok() {
  fail=$((fail + 1))
  echo "not ok $1: $2"
}
skipped() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }
logname() { echo "$LOGS/$(echo "$1" | tr ' /=,' '____').log"; }
source tests/resume.sh
build_fingerprint

# Counts the "ok ..." / "not ok ..." lines of a finished program's log and shows the failures. A
# nonzero exit without a "not ok" line, or no checks at all, is a failure of its own. Returns 0
# when the program passed.
count_checks() { # name log exit-code
  local name=$1 log=$2 rc=$3 nok nbad
  nok=$(grep -c '^ok ' "$log")
  nbad=$(grep -c '^not ok ' "$log")
  pass=$((pass + nok))
  fail=$((fail + nbad))
  grep '^not ok ' "$log"
  if [ "$rc" != 0 ] && [ "$nbad" = 0 ]; then notok "$name" "exit code $rc: $(grep -m3 -E 'ERROR|rror' "$log" | tr '\n' ' ')"; fi
  if [ $((nok + nbad)) = 0 ]; then notok "$name" "no checks ran (see $log)"; fi
  echo "# $name: $nok passed, $nbad failed"
  [ "$rc" = 0 ] && [ "$nbad" = 0 ] && [ "$nok" -gt 0 ]
}
# Runs a program that prints "ok ..." / "not ok ..." and counts them (with GPUMATS_RESUME=1, a run
# that passed with this build is counted from its log: tests/resume.sh).
run_checks() {
  local name=$1 log rc=0
  shift
  log=$(logname "$name")
  resumed "$log" || { "$@" >"$log" 2>&1; rc=$?; }
  if count_checks "$name" "$log" $rc; then record_unit "$log" 1; else record_unit "$log" 0; fi
}
# Test units side by side. Most of the suite is many short runs (each with MPI and, in the GPU
# suite, CUDA start-up): one at a time, its PETSc-level tests took about 7 minutes and its solver
# paths about 3 on the 16-core H200 machine. `in_bg RANKS COMMAND...` runs a command of this script
# (run_checks, tutorial, ...) in the background with counters of its own, with at most
# GPUMATS_JOBS MPI ranks at once (default: the cores); not more, because an MPI rank that waits
# spins, and ranks of several runs sharing cores slow each other down (on the 2-core CI machine,
# side by side took 118 s against 68 s one after another). Below 4, it runs the command in place,
# one at a time. collect_bg waits for the units and prints and counts them in the order they
# started, so the output reads as if they had run one after another. Runs that write files (-dir)
# take a folder of their own (jobdir).
SLOTS=${GPUMATS_JOBS:-$(nproc 2>/dev/null || echo 1)}
# (wait -n -p, which tells which unit ended, is bash 5.1 or newer)
((BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1))) || SLOTS=1
nskip=0
units=()
declare -A ranks_of=()
ranks_used=0
# A unit that passed is kept (its output and counts under $LOGS/units, marked with the build's
# fingerprint), so that GPUMATS_RESUME=1 replays it instead of running it again (tests/resume.sh).
# Its key: the command and what else decides what it runs (the types, the reference, the vectors
# and the type options, which the sections redefine).
unit_record() { echo "$LOGS/units/$(printf '%s\n' "$*" "$TYPES" "$REF" "${VEC:-}" "$(declare -f type_opt)" | md5sum | cut -c1-20)"; }
keep_unit() { # record out counts-line
  local rec=$1 p f k
  mkdir -p "${rec%/*}"
  read -r p f k <<<"$3"
  if [ "$f" = 0 ] && [ "$p" -gt 0 ]; then cp "$2" "$rec.out" && echo "$3" >"$rec.counts" && record_unit "$rec" 1
  else record_unit "$rec" 0; fi
}
# as_unit command...: runs a command of this script in place as a unit (kept, or replayed)
as_unit() {
  local rec unit p0 f0 k0
  rec=$(unit_record "$@")
  if resumed "$rec" && read -r p0 f0 k0 <"$rec.counts"; then
    cat "$rec.out"
    pass=$((pass + p0)) fail=$((fail + f0)) nskip=$((nskip + k0))
    return
  fi
  p0=$pass f0=$fail k0=$nskip
  unit=$(mktemp -p "$TMP" unit.XXXXXX)
  "$@" >"$unit.out" 2>&1
  cat "$unit.out"
  keep_unit "$rec" "$unit.out" "$((pass - p0)) $((fail - f0)) $((nskip - k0))"
}
in_bg() { # ranks command...
  local np=$1 unit pid rec
  shift
  if [ "$SLOTS" -lt 4 ]; then as_unit "$@"; return; fi
  rec=$(unit_record "$@")
  unit=$(mktemp -p "$TMP" unit.XXXXXX)
  if resumed "$rec" && cp "$rec.out" "$unit.out" && cp "$rec.counts" "$unit.counts"; then
    units+=("$unit")
    return
  fi
  [ "$np" -le "$SLOTS" ] || np=$SLOTS
  while [ $((ranks_used + np)) -gt "$SLOTS" ]; do
    wait -n -p pid
    ranks_used=$((ranks_used - ${ranks_of[$pid]:-0}))
    unset "ranks_of[$pid]"
  done
  (
    pass=0 fail=0 nskip=0 SLOTS=1 # (an in_bg inside runs in place)
    "$@" >"$unit.out" 2>&1
    echo "$pass $fail $nskip" >"$unit.counts"
    keep_unit "$rec" "$unit.out" "$pass $fail $nskip"
  ) &
  ranks_of[$!]=$np
  ranks_used=$((ranks_used + np))
  units+=("$unit")
}
collect_bg() {
  local unit p f k
  wait
  ranks_of=()
  ranks_used=0
  for unit in "${units[@]}"; do
    cat "$unit.out"
    if read -r p f k <"$unit.counts"; then
      pass=$((pass + p)) fail=$((fail + f)) nskip=$((nskip + k))
    else
      notok "test unit" "ended without its counts (output: $unit.out)"
    fi
  done
  units=()
}
jobdir() { mktemp -d -p "$TMP"; }

# The command must fail with a PETSc error mentioning $2, not crash and not succeed.
expect_error() { as_unit expect_error_now "$@"; }
expect_error_now() {
  local name=$1 pattern=$2 log rc
  shift 2
  log=$(logname "$name")
  "$@" >"$log" 2>&1
  rc=$?
  if [ "$rc" = 0 ]; then notok "$name" "succeeded, expected an error mentioning '$pattern'"
  elif [ "$rc" -ge 128 ] || grep -q -E 'Caught signal|Segmentation|SIGSEGV|signal 11' "$log"; then notok "$name" "crashed (exit $rc)"
  elif ! grep -q -e "$pattern" "$log"; then notok "$name" "error lacks '$pattern': $(grep -m2 'ERROR' "$log" | tail -1)"
  else ok "$name"; fi
}

# The command must succeed and print a line matching $2.
expect_output() { as_unit expect_output_now "$@"; }
expect_output_now() {
  local name=$1 pattern=$2 log rc
  shift 2
  log=$(logname "$name")
  "$@" >"$log" 2>&1
  rc=$?
  if [ "$rc" != 0 ]; then notok "$name" "exit code $rc"
  elif ! grep -q -e "$pattern" "$log"; then notok "$name" "no line matching '$pattern'"
  else ok "$name"; fi
}

# --- 1. core -------------------------------------------------------------------------------
if ! skipped core; then
  echo "# format core"
  run_checks "core" "$BIN/test_formats"
  run_checks "core transforms" "$BIN/test_transforms"
  run_checks "core calibration" "$BIN/test_calibration"
  # autocuda's model is what config/tuning/fit.py makes of the calibrations measured
  if python3 config/tuning/fit.py config/tuning/autocuda-*.csv | cmp -s - src/mat/impls/auto/model.hpp; then ok "model.hpp is fit.py's output from config/tuning/autocuda-*.csv"; else notok "model.hpp" "differs from python3 config/tuning/fit.py config/tuning/autocuda-*.csv (regenerate it)"; fi
  # build costs (fit.py's build_ns_per_nnz): measured against autocuda restricted to CSR (rows
  # autocuda:csr, here made from the CSR baseline's with a conversion of 0 ms), never below 0, CSR's 0;
  # without such rows, 0 for every format
  fitcsv=$(mktemp -p "$TMP" fit-XXXX.csv)
  grep -v 'autocuda:csr' config/tuning/autocuda-h200.csv |
    awk -F, -v OFS=, 'NR == 1 { print; next } { print } $10 == "\"cusparse-csr-alg1\"" || $10 == "cusparse-csr-alg1" { $10 = "autocuda:csr"; $17 = "0"; print }' >"$fitcsv"
  fitted=$(python3 config/tuning/fit.py "$fitcsv" 2>&1 | grep -E '^ +\{"(csr|cmrs|sellp|bellpack)"' | tr -d ' {}"' | cut -d, -f1,5 | paste -sd' ')
  if [[ $fitted =~ ^csr,0\.000\ cmrs,[1-9][0-9]*\.[0-9]+\ sellp,[1-9][0-9]*\.[0-9]+\ bellpack,[1-9][0-9]*\.[0-9]+$ ]]; then ok "fit.py: build costs against autocuda:csr ($fitted)"; else notok "fit.py build costs" "with autocuda:csr rows of 0 ms: '$fitted'"; fi
  grep -v 'autocuda:csr' config/tuning/autocuda-h200.csv >"$fitcsv"
  fitted=$(python3 config/tuning/fit.py "$fitcsv" | grep -cE '^ +\{"(csr|cmrs|sellp|bellpack)", [0-9.]+, [0-9.]+, [0-9.]+, 0\.000\},$')
  if [ "$fitted" = 4 ]; then ok "fit.py: no autocuda:csr rows, no build costs"; else notok "fit.py without autocuda:csr" "$fitted of 4 build costs 0"; fi
  # BELLPACK's execution-time model is what config/tuning/bellpack_fit.py makes of the benchmarks measured
  if python3 config/tuning/bellpack_fit.py config/tuning/bellpack-model-*.csv | cmp -s - src/mat/impls/bellpack/model.hpp; then ok "bellpack/model.hpp is bellpack_fit.py's output from config/tuning/bellpack-model-*.csv"; else notok "bellpack/model.hpp" "differs from python3 config/tuning/bellpack_fit.py config/tuning/bellpack-model-*.csv (regenerate it)"; fi
  # CMRS's kernels for even rows are what config/tuning/cmrs_fit.py makes of the sweeps measured
  sweeps=(config/tuning/cmrs-kernels-*.csv)
  [ -e "${sweeps[0]}" ] || sweeps=()
  if python3 config/tuning/cmrs_fit.py "${sweeps[@]}" | cmp -s - src/mat/impls/cmrs/tuned.hpp; then ok "tuned.hpp is cmrs_fit.py's output from config/tuning/cmrs-kernels-*.csv"; else notok "tuned.hpp" "differs from python3 config/tuning/cmrs_fit.py config/tuning/cmrs-kernels-*.csv (regenerate it)"; fi
  # cmrs_fit.py on made-up rows: the fastest variant of each even-row family (the rule's default
  # not segmented, or chosen by a sweep), none of a segmented family, none of a padded layout
  sweepcsv=$(mktemp -p "$TMP" sweep-XXXX.csv)
  {
    echo 'date,gpu,matrix,nnz_per_row,type,status,time_us,check,params'
    echo '2026-01-01T00:00:00Z,G1,even7,7.0,cmrscuda,ok,100,ok,"CMRS: strip height 8, entries sorted by column, basic layout (no padding), GPU kernel subwarp (8 lanes per strip)"'
    echo '2026-01-01T00:00:00Z,G1,even7,7.0,cmrscuda:seg_h16,ok,90,ok,"CMRS: strip height 16, entries in row order, basic layout (no padding), GPU kernel segmented"'
    echo '2026-01-01T00:00:00Z,G1,even7,7.0,cmrscuda:mod,ok,50,ok,"CMRS: strip height 16, entries sorted by column, modified layout (strips padded to 32 entries), GPU kernel warp"'
    echo '2026-01-01T00:00:00Z,G1,even27,27.0,cmrscuda,ok,80,ok,"CMRS: strip height 16, entries in row order, basic layout (no padding), GPU kernel segmented, kernel and height from the kernel sweep of G1"'
    echo '2026-01-01T00:00:00Z,G1,even27,27.0,cmrscuda:sub16_h4,ok,70,ok,"CMRS: strip height 4, entries sorted by column, basic layout (no padding), GPU kernel subwarp (16 lanes per strip)"'
    echo '2026-01-01T00:00:00Z,G1,ragged,4.6,cmrscuda,ok,60,ok,"CMRS: strip height 16, entries in row order, basic layout (no padding), GPU kernel segmented"'
    echo '2026-01-01T00:00:00Z,G1,ragged,4.6,cmrscuda:shared_h8,ok,40,ok,"CMRS: strip height 8, entries sorted by column, basic layout (no padding), GPU kernel shared"'
  } >"$sweepcsv"
  fitted=$(python3 config/tuning/cmrs_fit.py "$sweepcsv" 2>&1 | grep -E '^ +\{[0-9]' | tr -d ' {}' | cut -d/ -f1 | paste -sd' ')
  if [ "$fitted" = "7.0000,Kernel::kSegmented,16,0, 27.0000,Kernel::kSubwarp,4,16," ]; then ok "cmrs_fit.py: the fastest variant of each even-row family"; else notok "cmrs_fit.py" "on made-up rows: '$fitted'"; fi
  # the benchmark report's autocuda table (examples/bench_report.py), from a CSV a GPU run wrote:
  # one row per matrix, autocuda's pick read from its parameters
  expect_output "bench_report autocuda table" '^| ex56.bin | autocuda | bellpack | 1.000 | 1.85 | 1.25 |$' \
    python3 examples/bench_report.py docs/results/h200-2026-11-27-autocuda.csv
  # the CUDA objects are the same bytes on every build (makefile: --objdir-as-tempdir, -frandom-seed),
  # which the GPU suite's resume marks on another machine rely on: a source with kernels in an
  # anonymous namespace, whose names nvcc otherwise draws at random, compiled twice
  if [ -x "${CUDA_DIR:-/usr/local/cuda}/bin/nvcc" ]; then
    o=obj/mat/impls/auto/cuda.o
    if make -s BUILD="$TMP/repro-a" "$TMP/repro-a/$o" >"$LOGS/repro.log" 2>&1 && make -s BUILD="$TMP/repro-b" "$TMP/repro-b/$o" >>"$LOGS/repro.log" 2>&1; then
      if cmp -s "$TMP/repro-a/$o" "$TMP/repro-b/$o"; then ok "reproducible CUDA build: src/mat/impls/auto/cuda.cu compiled twice, the same bytes"
      else notok "reproducible CUDA build" "src/mat/impls/auto/cuda.cu compiled twice gave different objects (nvcc flags of the makefile)"; fi
    else notok "reproducible CUDA build" "compiling src/mat/impls/auto/cuda.cu failed (see $LOGS/repro.log)"; fi
  fi
  # the GPU suite in steps (tests/gpu/steps.sh): its rules, with a made-up section runner
  run_checks "gpu-steps" bash tests/gpu/selftest_steps.sh
fi

# --- 2. PETSc-level tests -------------------------------------------------------------------
if ! skipped petsc; then
  for np in 1 2 4; do
    for prog in test_types test_mult test_product test_convert test_update test_coo test_ksp test_io test_bind; do
      in_bg $np run_checks "$prog np=$np" "${MPIEXEC[@]}" -n $np "$BIN/$prog" -types "$TYPES_CSV" -ref "$REF" -dir "$(jobdir)"
    done
  done
  # in-place factorizations and matrices without values (SeqAIJ's, so one rank)
  in_bg 1 run_checks "test_inplace np=1" "${MPIEXEC[@]}" -n 1 "$BIN/test_inplace" -types "$TYPES_CSV"
  with_option() { # "rank counts" "options": test_mult, test_update and test_ksp with the options
    local np prog
    for np in $1; do
      for prog in test_mult test_update test_ksp; do
        in_bg $np run_checks "$prog $2 np=$np" "${MPIEXEC[@]}" -n $np "$BIN/$prog" -types "$TYPES_CSV" -ref "$REF" -dir "$(jobdir)" $2
      done
    done
  }
  # the MPI types' ghost exchanges (ours, staged; PETSc's VecScatter), each also completed before
  # the diagonal block (-mat_gpumats_overlap 0), on 2 ranks and on 3 (a middle rank talking to
  # two); test_update changes patterns, so the exchange is set up again
  # (ipc: GPU to GPU through CUDA IPC for the *cuda types; the host types take the staged one)
  for opt in "-mat_gpumats_exchange staged" "-mat_gpumats_exchange petsc" "-mat_gpumats_exchange staged -mat_gpumats_overlap 0" \
    "-mat_gpumats_exchange petsc -mat_gpumats_overlap 0" "-mat_gpumats_exchange ipc" "-mat_gpumats_exchange ipc -mat_gpumats_overlap 0"; do
    with_option "2 3" "$opt"
  done
  # the same products and solves with the glue's options: copies in RCM order, rows longer than 3
  # split into the warp-per-row tail, and both; SELL-P's and BELLPACK's value dictionaries (forced:
  # the test matrices' values are random, so they get 2-byte codes or, past 65536, plain values),
  # with SELL-P's 16-bit column deltas where they fit (test_update changes values: the dictionary
  # is rebuilt);
  # copies built at the first use after an assembly rather than inside MatAssemblyEnd (-mat_gpumats_build_at);
  # GPU types also with their copies converted on the host (-mat_gpumats_build host, the
  # reference path of the device builds)
  glue_opts=("-mat_gpumats_reorder rcm" "-mat_gpumats_long_rows 3" "-mat_gpumats_reorder rcm -mat_gpumats_long_rows 3"
    "-mat_sellp_values dictionary -mat_sellp_index auto -mat_bellpack_values dictionary" "-mat_gpumats_build_at use")
  case " $TYPES " in *cuda\ *) glue_opts+=("-mat_gpumats_build host") ;; esac
  for opt in "${glue_opts[@]}"; do
    with_option "1 2" "$opt"
  done
  # CMRS's product kernels (the GPU's; on the host, segmented's row order), through the CMRS types only
  cmrs_types=$(for t in $TYPES; do case $t in cmrs*) printf '%s,' "$t" ;; esac; done)
  if [ -n "$cmrs_types" ]; then
    for opt in "-mat_cmrs_spmv shared" "-mat_cmrs_spmv subwarp" "-mat_cmrs_spmv segmented" "-mat_cmrs_spmv auto -mat_cmrs_height 4"; do
      for np in 1 2; do
        for prog in test_mult test_update; do
          in_bg $np run_checks "$prog $opt np=$np" "${MPIEXEC[@]}" -n $np "$BIN/$prog" -types "${cmrs_types%,}" -ref "$REF" -dir "$(jobdir)" $opt
        done
      done
    done
  fi
  # MatSetValuesCOO with the values in device memory (a VECCUDA's array): the GPU types take them
  # on the GPU (through their aijcusparse shadow, seq.cxx) and bring the host CSR up to date only
  # when the host reads it; test_coo then also compares the host values (MatConvert to AIJ)
  case " $TYPES " in *cuda\ *)
    for np in 1 2; do
      in_bg $np run_checks "test_coo -coo_device np=$np" "${MPIEXEC[@]}" -n $np "$BIN/test_coo" -types "$TYPES_CSV" -ref "$REF" -dir "$(jobdir)" -coo_device
    done
    # and into value dictionaries, which are refilled and encoded anew on the GPU
    in_bg 1 run_checks "test_coo -coo_device dictionaries np=1" "${MPIEXEC[@]}" -n 1 "$BIN/test_coo" -types "$TYPES_CSV" -ref "$REF" -dir "$(jobdir)" -coo_device \
      -mat_sellp_values dictionary -mat_bellpack_values dictionary ;;
  esac
  # a copy with a value dictionary whose values then outgrow any dictionary (test_update's
  # ManyValuesAfterFew): the dictionary there before and plain values after (-mat_view), products
  # equal to AIJ's; on the GPU a values-only update (the copy keeps its layout), on the host a
  # conversion. autocuda weighs dictionaries from 2^20 nonzeros: a 1100^2 grid, 6M nonzeros, and
  # runs on its own with -mat_autocuda_values auto, its default, which test_update otherwise sets to
  # plain (-mat_view names its pick's dictionary)
  dict_types=$(for t in $TYPES; do case $t in sellp* | bellpack*) printf '%s,' "$t" ;; esac; done)
  for np in 1 2; do
    if [ -n "$dict_types" ]; then
      in_bg $np run_checks "test_update dictionary outgrown np=$np" "${MPIEXEC[@]}" -n $np "$BIN/test_update" -types "${dict_types%,}" -ref "$REF" -dir "$(jobdir)" \
        -many_values_only -many_values_expect_dictionary -many_values_grid 1100 -mat_sellp_values dictionary -mat_bellpack_values dictionary
    fi
    case " $TYPES " in *\ autocuda\ *)
      in_bg $np run_checks "test_update dictionary outgrown autocuda np=$np" "${MPIEXEC[@]}" -n $np "$BIN/test_update" -types autocuda -ref "$REF" -dir "$(jobdir)" \
        -many_values_only -many_values_expect_dictionary -many_values_grid 1100 -mat_autocuda_values auto ;;
    esac
  done
  # every change converted in full: test_update then checks that no copy took the values-only path
  for np in 1 2; do
    in_bg $np run_checks "test_update -mat_gpumats_values_update rebuild np=$np" "${MPIEXEC[@]}" -n $np "$BIN/test_update" -types "$TYPES_CSV" -ref "$REF" -dir "$(jobdir)" \
      -mat_gpumats_values_update rebuild
  done
  collect_bg
fi

# --- 3. PETSc's tutorials as unmodified clients ---------------------------------------------
# A run's summary: every "iterations N" (and "iterations = N") it printed, in order, joined by
# commas (one linear solve: "20"; snes ex19: each Newton step's linear solve, then the SNES count),
# and the first number after the last occurrence of $2 (a fixed string). Prints nothing unless
# it found both, so a run that printed neither can never pass.
summary() { # file pattern
  awk -v pat="$2" '
    { s = $0
      while (match(s, /iterations( =)? [0-9]+/)) {
        n = substr(s, RSTART, RLENGTH); gsub(/[^0-9]/, "", n); its = its (its == "" ? "" : ",") n
        s = substr(s, RSTART + RLENGTH) } }
    (i = index($0, pat)) && match(s = substr($0, i + length(pat)), /[-+]?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?/) { val = substr(s, RSTART, RLENGTH) }
    END { if (its != "" && val != "") print its, val }' "$1"
}
compare_runs() { # name reflog log pattern
  local r t
  r=($(summary "$2" "$4"))
  t=($(summary "$3" "$4"))
  if [ ${#r[@]} -lt 2 ]; then notok "$1" "missing iterations or '$4' in the $REF run's output (see $2)"; return; fi
  # equal answers from a solve that failed prove nothing
  if grep -q -E 'did not converge|DIVERGED' "$2"; then notok "$1" "the $REF run did not converge (see $2)"; return; fi
  if grep -q -E 'did not converge|DIVERGED' "$3"; then notok "$1" "did not converge (see $3)"; return; fi
  if [ ${#t[@]} -lt 2 ]; then notok "$1" "missing iterations or '$4' in output (see $3)"; return; fi
  if [ "${r[0]}" != "${t[0]}" ]; then notok "$1" "iterations ${t[0]}, $REF took ${r[0]}"; return; fi
  if awk -v a="${r[1]}" -v b="${t[1]}" 'BEGIN { d = a - b; if (d < 0) d = -d; s = a < 0 ? -a : a; exit !(d <= 1e-3 * s + 1e-12) }'; then ok "$1"
  else notok "$1" "'$4' ${t[1]}, $REF gave ${r[1]}"; fi
}
# The first PETSc error message of a failed run (up to two lines, no links), for the "not ok" line.
petsc_error() {
  awk '/-- Error Message --/ { on = 1; next }
       on && /See https:\/\/petsc.org\/release\/faq|Petsc Release|WARNING!/ { exit }
       on && !/See https/ { sub(/.*PETSC ERROR: /, ""); printf "%s%s", n++ ? "; " : "", $0; if (n == 2) exit }' "$1"
}
# A run that hangs is a failure of its own, not the end of the suite: each tutorial run gets
# GPUMATS_TIMEOUT seconds (default 120; exit code 124 then).
TUTORIAL_RUN=(timeout -k 10 "${GPUMATS_TIMEOUT:-120}" "${MPIEXEC[@]}")
tutorial() { # name np pattern args... (the type option is appended per type)
  local name=$1 np=$2 pattern=$3 ref t code why
  shift 3
  ref=$(logname "$name-$REF")
  "${TUTORIAL_RUN[@]}" -n $np "$@" -dll_append "$LIB" $(type_opt "$REF") >"$ref" 2>&1
  code=$?
  if [ "$code" != 0 ]; then
    why=$(petsc_error "$ref")
    # PETSc's own GPU type failing (PETSc 3.25's aijcusparse stops in MatPtAP with GAMG's coarse
    # grids pinned to the CPU on 2 ranks: "Cannot copy to GPU") leaves aij, whose iterations ours
    # must take just the same, as the reference; the note keeps the fallback in sight
    if [ "$REF" = aij ] || ! "${TUTORIAL_RUN[@]}" -n $np "$@" -dll_append "$LIB" $(type_opt aij) >"$ref" 2>&1; then
      notok "$name/$REF" "reference run failed, exit code $code: $why (see $ref)"
      return
    fi
    echo "# note: $name: $REF failed ($why), aij is the reference"
  fi
  for t in $TYPES; do
    local log
    log=$(logname "$name-$t")
    if "${TUTORIAL_RUN[@]}" -n $np "$@" -dll_append "$LIB" $(type_opt "$t") >"$log" 2>&1; then compare_runs "$name/$t" "$ref" "$log" "$pattern"
    else notok "$name/$t" "exit code $?: $(petsc_error "$log") (see $log)"; fi
  done
}
if ! skipped tutorials; then
  echo "# PETSc tutorials ex2 and ex45 with -dll_append"
  for np in 1 2; do
    # (aijcusparse with ex2's default host vectors gives wrong answers in PETSc 3.25, so the GPU
    # suite passes CUDA vectors, as PETSc's own tests of ex2 do; our types stage host vectors)
    type_opt() { echo "-mat_type $1 ${VEC:+-vec_type $VEC}"; }
    in_bg $np tutorial "ex2-gmres-default-pc np=$np" $np 'Norm of error' "$BIN/tutorial-ex2" -m 40 -n 40
    in_bg $np tutorial "ex2-cg-jacobi np=$np" $np 'Norm of error' "$BIN/tutorial-ex2" -m 40 -n 40 -ksp_type cg -pc_type jacobi
    type_opt() { echo "-dm_mat_type $1 ${VEC:+-dm_vec_type $VEC}"; }
    in_bg $np tutorial "ex45-cg-jacobi np=$np" $np 'Residual norm' "$BIN/tutorial-ex45" -da_grid_x 21 -da_grid_y 21 -da_grid_z 21 -ksp_type cg -pc_type jacobi \
      -ksp_converged_reason
    in_bg $np tutorial "ex45-gmres-default-pc np=$np" $np 'Residual norm' "$BIN/tutorial-ex45" -da_grid_x 21 -da_grid_y 21 -da_grid_z 21 -ksp_converged_reason
  done
  # CG's iterations and residual with either exchange and with the overlap off (the reference
  # type ignores these options)
  type_opt() { echo "-dm_mat_type $1 ${VEC:+-dm_vec_type $VEC}"; }
  for opt in "-mat_gpumats_exchange staged" "-mat_gpumats_exchange petsc" "-mat_gpumats_overlap 0"; do
    in_bg 3 tutorial "ex45-cg-jacobi $opt np=3" 3 'Residual norm' "$BIN/tutorial-ex45" -da_grid_x 21 -da_grid_y 21 -da_grid_z 21 -ksp_type cg -pc_type jacobi \
      -ksp_converged_reason $opt
  done
  collect_bg
fi

# --- 3a. examples/coo_newton: a Newton solve whose Jacobian is assembled with COO -------------
# Plain PETSc like the tutorials (build/bin/coo_newton): MatSetPreallocationCOO once, then
# MatSetValuesCOO at every Newton step, with device arrays for GPU types where PETSc has CUDA (its
# -coo_values auto; -coo_values host as well for them). Against the reference type on 1 and 2 ranks:
# SNES converged (exit status and no DIVERGED), the same linear iterations at every Newton step and
# the same number of steps, the final ||F|| equal to 3 digits.
if ! skipped tutorials; then
  echo "# examples/coo_newton (Jacobian by MatSetValuesCOO) with -dll_append"
  type_opt() { echo "-dm_mat_type $1 ${VEC:+-dm_vec_type $VEC}"; }
  coo_values=("")
  case " $TYPES " in *cuda\ *) coo_values+=("-coo_values host") ;; esac
  for np in 1 2; do
    for cv in "${coo_values[@]}"; do
      in_bg $np tutorial "coo-newton${cv:+ $cv} np=$np" $np '||F||' "$BIN/coo_newton" -n 33 -ksp_type cg -pc_type jacobi -snes_converged_reason \
        -ksp_converged_reason $cv
    done
  done
  collect_bg
fi

# --- 3b. solver paths through the same clients: AMG, geometric MG on DMDAs, direct solvers ---
# Each case runs the reference type and every type under test with the same options and compares
# them as above. GAMG, ML and the factorizations of MUMPS, UMFPACK and SuperLU take (MPI)AIJ and
# its subclasses only; PCMG on a DMDA builds every level from the DM's matrix type. Packages the
# PETSc at hand lacks are reported as skipped. Direct solves print errors at rounding level, which
# the comparison's absolute floor (1e-12) absorbs: it checks there that the solve is exact. Every
# case prints its converged reason, so a reference that did not converge fails the case.
# petscconf.h of the PETSc the library links (through the loader, so variant builds find theirs)
PETSCCONF=$(ldd "$LIB" 2>/dev/null | awk '$1 ~ /^libpetsc/ {print $3; exit}')
PETSCCONF=${PETSCCONF:+$(dirname "$PETSCCONF")/../include/petscconf.h}
[ -f "${PETSCCONF:-}" ] || PETSCCONF=${PETSC_DIR:-/usr/lib/petsc}/${PETSC_ARCH:-}/include/petscconf.h
have() { grep -q "^#define PETSC_HAVE_$1 1" "$PETSCCONF" 2>/dev/null; }
with() { # PACKAGE tutorial case np args...: the case if this PETSc has PACKAGE, else a skipped line
  local pkg=$1
  shift
  if have "$pkg"; then "$@"
  else in_bg 0 skip_case "$pkg" "$@"; fi # (a unit of its own, so that the line keeps its place)
}
skip_case() { # PACKAGE tutorial case np ...
  nskip=$((nskip + 1))
  echo "# skipped $2-$3 np=$4 (no $1 in this PETSc)"
}
G17="-da_grid_x 17 -da_grid_y 17 -da_grid_z 17" # 17, 9, 5 points a side on three MG levels
G21="-da_grid_x 21 -da_grid_y 21 -da_grid_z 21"
ex2() { # case np options...
  local c=$1 np=$2
  shift 2
  type_opt() { echo "-mat_type $1 ${VEC:+-vec_type $VEC}"; }
  in_bg $np tutorial "ex2-$c np=$np" $np 'Norm of error' "$BIN/tutorial-ex2" -m 40 -n 40 -ksp_converged_reason "$@"
}
ex45() { # case np options... (grid included)
  local c=$1 np=$2
  shift 2
  type_opt() { echo "-dm_mat_type $1 ${VEC:+-dm_vec_type $VEC}"; }
  in_bg $np tutorial "ex45-$c np=$np" $np 'Residual norm' "$BIN/tutorial-ex45" -ksp_converged_reason "$@"
}
# ex56 (3D elasticity, GAMG's own test): MatSetType(MATAIJ) then MatSetFromOptions (3.18 and 3.25),
# so -mat_type picks the type; vectors come from MatCreateVecs. -two_solves prints |b-Ax|/|b| after
# solving, rescaling the matrix by 1e5 (new PC setup) and solving twice more. On 2 ranks ex56 puts
# every row on rank 0, as its own 2-rank tests do.
ex56() { # case np options...
  local c=$1 np=$2
  shift 2
  type_opt() { echo "-mat_type $1"; }
  in_bg $np tutorial "ex56-$c np=$np" $np '|b-Ax|/|b|=' "$BIN/tutorial-ex56" -ne 9 -two_solves -ksp_converged_reason "$@"
}
# A tutorial case whose runs must also leave nothing allocated at PetscFinalize: -malloc_dump's
# lines ("[r] N bytes ...", as PETSc's harness sees them through -petsc_ci) fail it, per type.
leak_lines() { grep -E '^\[ *[0-9]+\] *[0-9]+ bytes ' "$1"; }
tutorial_no_leaks() { # name np pattern args... (as tutorial)
  local name=$1 t log
  tutorial "$@" -malloc_debug -malloc_dump
  for t in $REF $TYPES; do
    log=$(logname "$name-$t")
    [ -f "$log" ] || continue
    if leak_lines "$log" >/dev/null; then notok "$name/$t leaks" "memory still allocated at PetscFinalize: $(leak_lines "$log" | head -2 | tr '\n' ' ')(see $log)"
    else ok "$name/$t no leaks"; fi
  done
}
# snes ex19 (driven cavity, 4 dof DMDA, Jacobian by colored finite differences on the DM's matrix
# type): the iterations compared are each Newton step's linear iterations, the SNES count twice
# (converged reason and the example's "Number of SNES iterations = N"), the norm the last SNES one.
ex19() { # case np options...
  local c=$1 np=$2
  shift 2
  type_opt() { echo "-dm_mat_type $1 ${VEC:+-dm_vec_type $VEC}"; }
  in_bg $np tutorial "ex19-$c np=$np" $np 'SNES Function norm' "$BIN/tutorial-ex19" -da_refine 2 -snes_monitor -snes_converged_reason -ksp_converged_reason "$@"
}
# The operator of each level of PCMG in ex45's -ksp_view: the last "linear system matrix" of each
# level's section (the level's own KSP; the coarse solver's redundant copy and LU factor come first).
mg_level_types() { # log -> "level:type ..."
  awk '/(level|on level) [0-9]+ -+$/ { if (lvl != "") printf "%s:%s ", lvl, last; match($0, /level [0-9]+/); lvl = substr($0, RSTART + 6, RLENGTH - 6); last = "none" }
       /^  linear system matrix/ { if (lvl != "") printf "%s:%s ", lvl, last; lvl = "" }
       /linear system matrix/ { want = 1; next }
       want && /^ *type:/ { last = $2; want = 0 }
       END { if (lvl != "") printf "%s:%s ", lvl, last }' "$1"
}
# ex45 -pc_type mg -ksp_view for a GPU type: every level's operator is a GPU type, not plain AIJ.
# (-ksp_view never shows PCMG's interpolation, in PETSc 3.18 to 3.25: test_mg checks that.)
mg_view() { # np
  local np=$1 t log lv
  for t in $TYPES; do
    case $t in *cuda) ;; *) continue ;; esac
    log=$(logname "ex45-mg-ksp-view np=$np-$t")
    "${TUTORIAL_RUN[@]}" -n $np "$BIN/tutorial-ex45" $G17 -pc_type mg -pc_mg_levels 3 -ksp_view -dll_append "$LIB" -dm_mat_type "$t" ${VEC:+-dm_vec_type $VEC} >"$log" 2>&1 ||
      { notok "ex45-mg-level-types np=$np/$t" "exit code $?: $(petsc_error "$log") (see $log)"; continue; }
    lv=$(mg_level_types "$log" | xargs)
    if [ "$(echo $lv | wc -w)" != 3 ]; then notok "ex45-mg-level-types np=$np/$t" "expected 3 levels in -ksp_view, found '$lv' (see $log)"
    elif echo " $lv" | grep -q -E ':(seqaij|mpiaij|none)( |$)'; then notok "ex45-mg-level-types np=$np/$t" "a level's operator is plain AIJ or missing: $lv (see $log)"
    else ok "ex45-mg-level-types np=$np/$t: $lv"; fi
  done
}
# With a CUDA PETSc, *cuda types factor as aijcusparse does: MATSOLVERCUSPARSE by default for
# PCILU/PCICC/PCLU and for block Jacobi's sub-solvers (on 2 ranks the diagonal block becomes an
# aijcusparse matrix in place); host types keep PETSc's own factorization.
factor_package() {
  local t c np opts
  have CUDA || return 0
  for t in $TYPES; do
    case $t in *cuda) ;; *) continue ;; esac
    for c in "ilu 1 -pc_type ilu" "icc 1 -ksp_type cg -pc_type icc" "lu 1 -ksp_type preonly -pc_type lu"; do
      set -- $c
      np=$2
      opts=${c#* * }
      expect_output "factor-package-$1 np=$np/$t" "package used to perform factorization: cusparse" \
        "${TUTORIAL_RUN[@]}" -n $np "$BIN/tutorial-ex2" -m 20 -n 20 -dll_append "$LIB" -mat_type "$t" ${VEC:+-vec_type $VEC} $opts -ksp_view
    done
    # products (GAMG, Galerkin PCMG) on the host when asked; a bad choice is named
    run_checks "test_product -mat_gpumats_products host np=1/$t" "${TUTORIAL_RUN[@]}" -n 1 "$BIN/test_product" -types "$t" -mat_gpumats_products host
    expect_error "bad-option/$t -mat_gpumats_products" "mat_gpumats_products" "${TUTORIAL_RUN[@]}" -n 1 "$BIN/test_product" -types "$t" -mat_gpumats_products cpu
  done
}
if ! skipped tutorials && ! skipped solvers; then
  echo "# solver paths: GAMG, ML, PCMG on DMDAs, MUMPS, UMFPACK, SuperLU, ICC (ex2, ex45, ex56, snes ex19)"
  start=$SECONDS
  [ -f "$PETSCCONF" ] || notok "petscconf.h" "not found at $PETSCCONF: every package is reported missing"
  for np in 1 2; do
    # BiCG: products with the transpose (MatMultTranspose) in every iteration, by auto's path and by
    # each path named (the reference type ignores the option)
    ex2 bicg-jacobi $np -ksp_type bicg -pc_type jacobi
    ex2 bicg-jacobi-explicit-transpose $np -ksp_type bicg -pc_type jacobi -mat_gpumats_transpose explicit
    ex2 bicg-jacobi-implicit-transpose $np -ksp_type bicg -pc_type jacobi -mat_gpumats_transpose implicit
    # algebraic multigrid: GAMG smoothed aggregation (default) and classical, ML
    ex2 cg-gamg $np -ksp_type cg -pc_type gamg
    ex45 cg-gamg $np $G21 -ksp_type cg -pc_type gamg
    ex56 cg-gamg $np -ksp_type cg -pc_type gamg
    ex2 cg-gamg-classical $np -ksp_type cg -pc_type gamg -pc_gamg_type classical
    with ML ex2 cg-ml $np -ksp_type cg -pc_type ml
    # geometric multigrid: PCMG takes levels, interpolation and coarse operators from the DMDA
    ex45 mg $np $G17 -pc_type mg -pc_mg_levels 3
    ex45 mg-galerkin $np $G17 -pc_type mg -pc_mg_levels 3 -pc_mg_galerkin both # coarse operators by MatPtAP
    ex19 mg $np -pc_type mg
    # levels bound to the CPU: every DMDA matrix of fewer local rows than -dm_bind_below (here all
    # of them), and GAMG's coarse grids where it reduces the ranks. (PETSc without devices, as
    # Debian's, makes MatBindToCPU a no-op: here these check that the options change no answer; the
    # binding itself is test_bind's, and the GPU suite's with a CUDA PETSc)
    ex19 mg-dm-bind-below $np -pc_type mg -dm_bind_below 10000
    ex56 cg-gamg-cpu-pin-coarse-grids $np -ksp_type cg -pc_type gamg -pc_gamg_cpu_pin_coarse_grids
    # (unsmoothed aggregation: smoothed GAMG needs 83 to 110 GMRES(30) iterations per Newton step
    # here on one rank, counts that rounding differences could shift)
    ex19 gamg $np -pc_type gamg -pc_gamg_agg_nsmooths 0
    # direct solvers
    with MUMPS ex2 lu-mumps $np -ksp_type preonly -pc_type lu -pc_factor_mat_solver_type mumps
    with MUMPS ex2 cholesky-mumps $np -ksp_type preonly -pc_type cholesky -pc_factor_mat_solver_type mumps
    # (ex45's matrix is not symmetric, its boundary rows being diagonal only: Cholesky, which
    # reads one triangle, leaves a residual of 2.4 there, so ex45 takes LU)
    with MUMPS ex45 lu-mumps $np $G21 -ksp_type preonly -pc_type lu -pc_factor_mat_solver_type mumps
    # the levels of PCMG: their types (*cuda types: every level's operator in -ksp_view; every
    # type: interpolation and level operators through PCMGGetInterpolation, in test_mg)
    in_bg $np mg_view $np
    for t in $TYPES; do
      in_bg $np run_checks "test_mg np=$np/$t" "${TUTORIAL_RUN[@]}" -n $np "$BIN/test_mg" -types "$t" ${VEC:+-dm_vec_type $VEC}
      # 3 dof per point: DMDA's MAIJ interpolation, expanded into the type
      in_bg $np run_checks "test_mg -dof 3 np=$np/$t" "${TUTORIAL_RUN[@]}" -n $np "$BIN/test_mg" -types "$t" -dof 3 -da_grid_x 9 -da_grid_y 9 -da_grid_z 9 ${VEC:+-dm_vec_type $VEC}
    done
  done
  # sequential only: GAMG inside block Jacobi needs 2 ranks to mean anything; UMFPACK, SuperLU
  # (not SuperLU_DIST) and ICC are sequential; ILU, the default PC on one rank, is the
  # gmres-default-pc cases above
  ex2 cg-bjacobi-gamg 2 -ksp_type cg -pc_type bjacobi -sub_pc_type gamg
  # 4 ranks, GAMG's coarse levels on fewer of them, and -log_sync, which PETSc's test harness
  # turns on through -petsc_ci: each collective event is then a barrier, and an event a rank skips
  # (an empty off-diagonal block's product) deadlocked the run
  ex45 cg-gamg-eq-limit-log-sync 4 $G21 -ksp_type cg -pc_type gamg -pc_gamg_process_eq_limit 200 -log_view -log_sync
  # the same GAMG with -malloc_dump: nothing left allocated. GAMG's MIS-k coarsening (PETSc 3.19 and
  # newer) transposes its graph, of our type, in place: MatHeaderMerge, whose destroy of the old
  # matrix once put AIJ's composed functions back into a function list PETSc then dropped (16
  # bytes per matrix in PETSc 3.25's -malloc_dump, snes ex56 -petsc_ci; PETSc 3.18, without MIS-k
  # and with linked function lists, shows nothing either way)
  type_opt() { echo "-dm_mat_type $1 ${VEC:+-dm_vec_type $VEC}"; }
  in_bg 4 tutorial_no_leaks "ex45-cg-gamg-eq-limit-malloc-dump np=4" 4 'Residual norm' "$BIN/tutorial-ex45" -ksp_converged_reason $G21 -ksp_type cg -pc_type gamg -pc_gamg_process_eq_limit 200
  # block Jacobi and ASM on 4 ranks, one and several blocks per rank, with their sub-solvers
  ex45 bjacobi-ilu 4 $G21 -pc_type bjacobi
  ex45 bjacobi-3-blocks-per-rank-icc 4 $G21 -pc_type bjacobi -pc_bjacobi_blocks 12 -sub_pc_type icc
  ex45 asm-overlap-2-lu 4 $G21 -pc_type asm -pc_asm_overlap 2 -sub_pc_type lu
  # the other sub-solvers users pick, and PETSc's own LU named (*cuda types: host factors of the
  # aijcusparse blocks the sub-solvers get, as for mpiaijcusparse)
  ex45 bjacobi-2-blocks-per-rank-sor 2 $G21 -pc_type bjacobi -pc_bjacobi_blocks 4 -sub_pc_type sor
  ex45 bjacobi-jacobi 2 $G21 -pc_type bjacobi -sub_pc_type jacobi
  ex45 bjacobi-lu-petsc 2 $G21 -pc_type bjacobi -sub_pc_type lu -sub_pc_factor_mat_solver_type petsc
  ex45 asm-ilu1 2 $G21 -pc_type asm -sub_pc_type ilu -sub_pc_factor_levels 1
  # (classical GAMG on ex45 with 2 ranks never returns from the coarsening in PETSc 3.18.5, AIJ
  # and without this library alike; 2D ex2 covers classical GAMG on 2 ranks)
  ex45 cg-gamg-classical 1 $G21 -ksp_type cg -pc_type gamg -pc_gamg_type classical
  with SUITESPARSE ex2 lu-umfpack 1 -ksp_type preonly -pc_type lu -pc_factor_mat_solver_type umfpack
  with SUPERLU ex2 lu-superlu 1 -ksp_type preonly -pc_type lu -pc_factor_mat_solver_type superlu
  # (host types factor on the host, as aij does; *cuda types with cuSPARSE, as aijcusparse does,
  # whose ICC takes other iteration counts than PETSc's (ex45: 17 against 18))
  in_bg 1 factor_package
  ex2 cg-icc 1 -ksp_type cg -pc_type icc
  ex45 gmres-icc 1 $G21 -pc_type icc # (not CG: ex45's matrix is not symmetric; CG with ICC never converges)
  for t in $TYPES; do
    in_bg 1 run_checks "test_mg -galerkin np=1/$t" "${TUTORIAL_RUN[@]}" -n 1 "$BIN/test_mg" -types "$t" -galerkin ${VEC:+-dm_vec_type $VEC}
  done
  collect_bg
  echo "# solver paths: $((SECONDS - start)) s, $nskip skipped"
fi

# --- 4. options, viewers, bad input ---------------------------------------------------------
if ! skipped options; then
  echo "# options, viewers and bad input"
  # docs/options.md against -help of the types under test and the options named in src/
  run_checks "options-doc" bash tests/options_doc.sh $TYPES
  EX2=("$BIN/tutorial-ex2" -dll_append "$LIB" -m 12 -n 12)
  for t in $TYPES; do
    base=${t%cuda}
    opts="-mat_${base}_"
    case $base in
      auto) good="-mat_autocuda_trial"; info="AUTO.*picked"; opts="-mat_autocuda_trial" ;;
      cmrs) good="-mat_cmrs_height 4"; info="CMRS.*strip height 4" ;;
      sellp) good="-mat_sellp_slice_height 16 -mat_sellp_threads_per_row 2 -mat_sellp_index 32"; info="SELL-P.*slice height 16, 2 threads per row.*32-bit" ;;
      bellpack) good="-mat_bellpack_block_size 2,3"; info="BELLPACK.*block size 2x3" ;;
    esac
    expect_output "mat-view-info/$t" "$info" "${EX2[@]}" -mat_type "$t" $good -mat_view ::ascii_info
    expect_output "help-lists-options/$t" "$opts" "${EX2[@]}" -mat_type "$t" -help
    expect_output "reorder-view/$t" "in RCM order" "${EX2[@]}" -mat_type "$t" -mat_gpumats_reorder rcm -mat_view ::ascii_info
    if [ "$base" = cmrs ]; then # the SpMV kernel in -mat_view; segmented takes row order; auto (the default) on ex2's 5-point Laplacian (at most 96 entries per strip): subwarp, 8 lanes, strips of 8 rows
      expect_output "spmv-view/$t default" "CMRS.*strip height 8, entries sorted by column.*GPU kernel subwarp (8 lanes per strip)" "${EX2[@]}" -mat_type "$t" -mat_view ::ascii_info
      expect_output "spmv-view/$t shared" "CMRS.*entries sorted by column.*GPU kernel shared" "${EX2[@]}" -mat_type "$t" -mat_cmrs_spmv shared -mat_view ::ascii_info
      expect_output "spmv-view/$t segmented" "CMRS.*entries in row order.*GPU kernel segmented" "${EX2[@]}" -mat_type "$t" -mat_cmrs_spmv segmented -mat_view ::ascii_info
      expect_output "spmv-view/$t subwarp" "CMRS.*GPU kernel subwarp (16 lanes per strip)" "${EX2[@]}" -mat_type "$t" -mat_cmrs_spmv subwarp -mat_cmrs_lanes 16 -mat_view ::ascii_info
      expect_output "spmv-view/$t auto" "CMRS.*strip height 4.*GPU kernel subwarp (8 lanes per strip)" "${EX2[@]}" -mat_type "$t" -mat_cmrs_spmv auto -mat_cmrs_height 4 -mat_view ::ascii_info
      expect_output "help-lists-spmv/$t" "mat_cmrs_spmv" "${EX2[@]}" -mat_type "$t" -help
    fi
    if [ "$base" = auto ]; then # the candidates (-mat_autocuda_formats): one alone is the pick; a bad name, or only BELLPACK for ex2's block size 1, is refused
      expect_output "formats-view/$t cmrs" "AUTO.*picked cmrs" "${EX2[@]}" -mat_type "$t" -mat_autocuda_formats cmrs -mat_view ::ascii_info
      expect_output "formats-view/$t csr" "AUTO.*picked csr" "${EX2[@]}" -mat_type "$t" -mat_autocuda_formats csr -mat_view ::ascii_info
      expect_error "bad-option/$t -mat_autocuda_formats" "mat_autocuda_formats: no format 'gzip'" "${EX2[@]}" -mat_type "$t" -mat_autocuda_formats sellp,gzip
      expect_error "formats-none-fits/$t" "no format of -mat_autocuda_formats fits this block" "${EX2[@]}" -mat_type "$t" -mat_autocuda_formats bellpack
    fi
    if [ "$base" = sellp ]; then # ex2's 5-point Laplacian holds two values (4 and -1): a dictionary of 1-byte codes
      expect_output "values-view/$t" "1-byte codes into a dictionary of 2 values" "${EX2[@]}" -mat_type "$t" -mat_sellp_values dictionary -mat_view ::ascii_info
      expect_output "values-auto-view/$t" "1-byte codes into a dictionary" "${EX2[@]}" -mat_type "$t" -mat_sellp_values auto -mat_view ::ascii_info
      expect_error "bad-option/$t -mat_sellp_values" "mat_sellp_values" "${EX2[@]}" -mat_type "$t" -mat_sellp_values gzip
    fi
    if [ "$base" = bellpack ]; then # ex2's two values and the +0.0 that BELLPACK's padding stores: a dictionary of 3
      expect_output "values-view/$t" "BELLPACK.*1-byte codes into a dictionary of 3 values" "${EX2[@]}" -mat_type "$t" -mat_bellpack_values dictionary -mat_view ::ascii_info
      expect_output "values-auto-view/$t" "BELLPACK.*1-byte codes into a dictionary" "${EX2[@]}" -mat_type "$t" -mat_bellpack_values auto -mat_view ::ascii_info
      expect_output "values-plain-view/$t" "BELLPACK.*values plain" "${EX2[@]}" -mat_type "$t" -mat_view ::ascii_info
      expect_error "bad-option/$t -mat_bellpack_values" "mat_bellpack_values" "${EX2[@]}" -mat_type "$t" -mat_bellpack_values gzip
    fi
    expect_error "bad-option/$t -mat_gpumats_reorder" "mat_gpumats_reorder" "${EX2[@]}" -mat_type "$t" -mat_gpumats_reorder amd
    expect_output "long-rows-view/$t" "rows longer than 3 split" "${EX2[@]}" -mat_type "$t" -mat_gpumats_long_rows 3 -mat_view ::ascii_info
    expect_error "bad-option/$t -mat_gpumats_long_rows" "mat_gpumats_long_rows" "${EX2[@]}" -mat_type "$t" -mat_gpumats_long_rows -2
    # MatMultTranspose's path (-mat_gpumats_transpose): in -help, in -mat_view on one and two ranks,
    # and a bad value names the choices
    expect_output "help-lists-transpose/$t" "mat_gpumats_transpose" "${EX2[@]}" -mat_type "$t" -help
    # (cusparse: cuSPARSE's transpose of the shadow on the GPU types, the implicit path on the host ones)
    for mode in explicit implicit cusparse; do
      way=$mode
      case $mode/$t in cusparse/*cuda) ;; cusparse/*) way=implicit ;; esac
      expect_output "transpose-view/$t $mode" "transpose products: $way.*(-mat_gpumats_transpose $mode)" "${EX2[@]}" -mat_type "$t" -mat_gpumats_transpose $mode -mat_view ::ascii_info
      expect_output "transpose-view/$t $mode np=2" "transpose products: $way.*(-mat_gpumats_transpose $mode)" "${MPIEXEC[@]}" -n 2 "${EX2[@]}" -mat_type "$t" \
        -mat_gpumats_transpose $mode -mat_view ::ascii_info
    done
    expect_output "transpose-view/$t auto" "transpose products: implicit.*(-mat_gpumats_transpose auto)" "${EX2[@]}" -mat_type "$t" -mat_view ::ascii_info
    expect_error "bad-option/$t -mat_gpumats_transpose" "mat_gpumats_transpose.*auto.*explicit.*implicit.*cusparse" "${EX2[@]}" -mat_type "$t" -mat_gpumats_transpose copy
    # same-pattern changes (-mat_gpumats_values_update): in -help, in -mat_view on one and two
    # ranks (ex2 assembles once: one conversion per copy), and a bad value names the choices
    expect_output "help-lists-values-update/$t" "mat_gpumats_values_update" "${EX2[@]}" -mat_type "$t" -help
    vu_default="values only (-mat_gpumats_values_update auto)" # the default of every type (kDefaultValuesUpdate)
    expect_output "values-update-view/$t" "same-pattern changes: $vu_default; so far 1 full conversion, 0 values-only" \
      "${EX2[@]}" -mat_type "$t" -mat_view ::ascii_info
    expect_output "values-update-view/$t rebuild np=2" "same-pattern changes: converted in full (-mat_gpumats_values_update rebuild); so far 4 full conversions" \
      "${MPIEXEC[@]}" -n 2 "${EX2[@]}" -mat_type "$t" -mat_gpumats_values_update rebuild -mat_view ::ascii_info
    expect_error "bad-option/$t -mat_gpumats_values_update" "mat_gpumats_values_update.*auto.*rebuild" "${EX2[@]}" -mat_type "$t" -mat_gpumats_values_update never
    # when a copy is built (-mat_gpumats_build_at): in -help; a bad value names the choices
    expect_output "help-lists-build-at/$t" "mat_gpumats_build_at" "${EX2[@]}" -mat_type "$t" -help
    expect_error "bad-option/$t -mat_gpumats_build_at" "mat_gpumats_build_at.*use.*assembly" "${EX2[@]}" -mat_type "$t" -mat_gpumats_build_at never
    # where a GPU copy is converted (-mat_gpumats_build): in -help, in -mat_view, a bad value names the choices
    case $t in
      *cuda)
        expect_output "help-lists-build/$t" "mat_gpumats_build" "${EX2[@]}" -mat_type "$t" -help
        expect_output "build-view/$t host" "converted on the host (-mat_gpumats_build host)" "${EX2[@]}" -mat_type "$t" -mat_gpumats_build host -mat_view ::ascii_info
        expect_error "bad-option/$t -mat_gpumats_build" "mat_gpumats_build.*device.*host" "${EX2[@]}" -mat_type "$t" -mat_gpumats_build cpu
        ;;
    esac
  done
  # the MPI types: the exchange, each rank's place and GPU, and the compressed off-diagonal block
  # (ex2's 12x12 grid on 2 ranks: 12 of each rank's 72 rows reach the other rank)
  EX2MPI=("${MPIEXEC[@]}" -n 2 "$BIN/tutorial-ex2" -dll_append "$LIB" -m 12 -n 12)
  # an MPI command's output from rank 0 alone (Open MPI's --output-filename: a file per rank), for
  # output that PETSc does not gather: each rank prints its own blocks' -help, and the two ranks'
  # lines interleave on one stream, at times one cut into another's middle
  rank0_output() { # mpiexec-command... (its options first, as in EX2MPI)
    local dir rc
    dir=$(mktemp -d -p "$TMP" ranks.XXXXXX)
    "$1" --output-filename "$dir" "${@:2}" >/dev/null 2>&1
    rc=$?
    cat "$dir"/*/rank.0/stdout "$dir"/*/rank.0/stderr 2>/dev/null
    return $rc
  }
  for t in $TYPES; do
    expect_output "exchange-view/$t staged" "ghost exchange: staged by petsc-gpumats.*, overlapped with the diagonal block" "${EX2MPI[@]}" -mat_type "$t" \
      -mat_gpumats_exchange staged -mat_view ::ascii_info
    expect_output "exchange-view/$t petsc, no overlap" "ghost exchange: PETSc's VecScatter.*completed before the diagonal block" "${EX2MPI[@]}" -mat_type "$t" \
      -mat_gpumats_exchange petsc -mat_gpumats_overlap 0 -mat_view ::ascii_info
    expect_output "rank-view/$t" "rank 1 (node-local rank 1 of 2): .*sends 12 values to 1 rank, receives 12 from 1" "${EX2MPI[@]}" -mat_type "$t" \
      -mat_gpumats_exchange staged -mat_view ::ascii_info
    # ipc: GPU to GPU for the *cuda types (both ranks on this node); the host types' values are
    # on the host, so they take the staged exchange
    case $t in
      *cuda) ipc_view="ghost exchange: GPU to GPU by petsc-gpumats through CUDA IPC" ;;
      *) ipc_view="ghost exchange: staged by petsc-gpumats, overlapped" ;;
    esac
    expect_output "exchange-view/$t ipc" "$ipc_view" "${EX2MPI[@]}" -mat_type "$t" -mat_gpumats_exchange ipc -mat_view ::ascii_info
    expect_output "compressed-offd-view/$t" "off-diagonal blocks: .*rows with entries only: 12 of 72, added through a row map" "${EX2MPI[@]}" -mat_type "$t" \
      -mat_view ::ascii_info
    # (rank 0's output alone: PETSc 3.18 prints "-opt <now ...", later releases "-opt: <now ...")
    expect_output "help-lists-mpi-options/$t" "-mat_gpumats_exchange:* <now" rank0_output "${EX2MPI[@]}" -mat_type "$t" -help
    expect_error "bad-option/$t -mat_gpumats_exchange" "mat_gpumats_exchange" "${EX2MPI[@]}" -mat_type "$t" -mat_gpumats_exchange nccl
  done
  bad() { # name pattern options...
    local name=$1 pattern=$2 t
    shift 2
    for t in $TYPES; do case $t in "$name"*) expect_error "bad-option/$t $*" "$pattern" "${EX2[@]}" -mat_type "$t" "$@" ;; esac; done
  }
  bad cmrs "-mat_cmrs_height" -mat_cmrs_height -1
  bad cmrs "-mat_cmrs_height" -mat_cmrs_height 17
  bad cmrs "-mat_cmrs_kernel modified" -mat_cmrs_kernel modified -mat_cmrs_height 8
  bad cmrs "mat_cmrs_kernel" -mat_cmrs_kernel fast
  bad cmrs "mat_cmrs_spmv.*warp.*shared.*subwarp.*segmented.*auto" -mat_cmrs_spmv bogus
  bad cmrs "-mat_cmrs_spmv segmented.*row order" -mat_cmrs_spmv segmented -mat_cmrs_sort true
  bad cmrs "-mat_cmrs_lanes 12 is out of range" -mat_cmrs_spmv subwarp -mat_cmrs_lanes 12
  bad cmrs "-mat_cmrs_lanes sets the lanes per strip of -mat_cmrs_spmv subwarp" -mat_cmrs_spmv warp -mat_cmrs_lanes 8
  bad sellp "-mat_sellp_slice_height" -mat_sellp_slice_height 3
  bad sellp "-mat_sellp_slice_height" -mat_sellp_slice_height 2048
  bad sellp "-mat_sellp_threads_per_row" -mat_sellp_threads_per_row 64
  bad sellp "1024 threads" -mat_sellp_slice_height 128 -mat_sellp_threads_per_row 16
  bad sellp "-mat_sellp_sigma" -mat_sellp_sigma 12
  bad sellp "-mat_sellp_sigma" -mat_sellp_sigma -1
  bad sellp "-mat_sellp_index" -mat_sellp_index 8
  bad bellpack "-mat_bellpack_block_size" -mat_bellpack_block_size 9
  bad bellpack "-mat_bellpack_block_size" -mat_bellpack_block_size 0,2
  bad bellpack "-mat_bellpack_partition_rows" -mat_bellpack_partition_rows 48
  bad bellpack "-mat_bellpack_row_threads" -mat_bellpack_row_threads 3
  bad bellpack "-mat_bellpack_row_threads" -mat_bellpack_row_threads 64
  # (process-wide, read when the first GPU matrix is made: the GPU types only)
  for t in $TYPES; do
    case $t in *cuda) expect_error "bad-option/$t -mat_gpumats_upload_threads" "-mat_gpumats_upload_threads 9 is out of range" "${EX2[@]}" -mat_type "$t" \
      -mat_gpumats_upload_threads 9 ;; esac
  done

  # bad matrix files through the example driver
  if [ -x "$BIN/solve" ]; then
    printf '' >"$TMP/empty.mtx"
    printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 2.0\n' >"$TMP/range.mtx"
    printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 2 2.0\n' >"$TMP/short.mtx"
    printf '%%%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 0.0\n' >"$TMP/complex.mtx"
    printf 'hello world\n' >"$TMP/header.mtx"
    printf 'not hdf5 at all\n' >"$TMP/fake.h5"
    head -c 100 "$TMP/io-poisson2d.bin" >"$TMP/truncated.bin" 2>/dev/null || printf '\x00\x12\x7b\x50\x00' >"$TMP/truncated.bin"
    expect_error "bad-file/missing" "no-such-file" "$BIN/solve" -f "$TMP/no-such-file.mtx" -types aij
    expect_error "bad-file/empty" "empty.mtx" "$BIN/solve" -f "$TMP/empty.mtx" -types aij
    expect_error "bad-file/mtx-header" "header.mtx" "$BIN/solve" -f "$TMP/header.mtx" -types aij
    expect_error "bad-file/mtx-out-of-range" "range.mtx" "$BIN/solve" -f "$TMP/range.mtx" -types aij
    expect_error "bad-file/mtx-too-few-entries" "short.mtx" "$BIN/solve" -f "$TMP/short.mtx" -types aij
    expect_error "bad-file/mtx-complex" "complex matrices are not supported" "$BIN/solve" -f "$TMP/complex.mtx" -types aij
    expect_error "bad-file/not-hdf5" "fake.h5" "$BIN/solve" -f "$TMP/fake.h5" -types aij
    expect_error "bad-file/truncated-binary" "ERROR" "$BIN/solve" -f "$TMP/truncated.bin" -types aij
  else
    notok "bad-file" "the example driver $BIN/solve was not built"
  fi

  # *cuda types where no GPU can serve them: a clear error, never a crash
  if ! nvidia-smi -L >/dev/null 2>&1; then
    for t in cmrscuda sellpcuda bellpackcuda autocuda; do
      if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then expect_error "no-gpu/$t" "needs an NVIDIA GPU" "${EX2[@]}" -mat_type "$t"
      else expect_error "no-gpu/$t" "no NVIDIA driver found" "${EX2[@]}" -mat_type "$t"; fi
    done
  fi
fi

# --- examples/scaling.sh with host types on 1, 2 and 4 ranks, tiny sizes -------------------------
# every run completes its iterations, each case's runs reach the same residual whatever the type,
# and the report has its four tables (weak, two strong sizes, large)
if ! skipped scaling; then
  echo "# examples/scaling.sh (sellp, aij; 1, 2, 4 ranks; small sizes)"
  sc=$TMP/scaling
  if GPUMATS_SCALING_OUT=$sc GPUMATS_SCALING_SMALL=1 GPUMATS_SCALING_ITS=20 GPUMATS_SCALING_TYPES="sellp aij" GPUMATS_SCALING_VEC= \
    bash examples/scaling.sh 4 >"$LOGS/scaling.log" 2>&1; then
    why=$(python3 - "$sc/scaling.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
if len(rows) != 4 * 3 * 2: bad.append("%d runs, expected 24" % len(rows))
bad += ["%s %s np=%s %s: %s, %s iterations" % (r["case"], r["grid"], r["ranks"], r["type"], r["status"], r["iterations"]) for r in rows if r["status"] != "ok" or r["iterations"] != "20"]
res = {}
for r in rows: res.setdefault((r["case"], r["grid"], r["ranks"]), []).append(float(r["residual"] or "nan"))
bad += ["%s: residuals %s differ" % (k, v) for k, v in res.items() if not max(v) - min(v) <= 1e-6 * max(v)]
print("; ".join(bad))
PY
)
    if [ -n "$why" ]; then notok "scaling-script" "$why"
    elif [ "$(grep -c '^#### ' "$sc/scaling.md")" != 4 ]; then notok "scaling-script" "expected 4 tables in $sc/scaling.md"
    else ok "scaling-script: 24 runs, residuals equal per case"; fi
  else notok "scaling-script" "exit code $? (see $LOGS/scaling.log)"; fi
fi

# --- the CUDA PETSc's download path (config/build-petsc-cuda.sh --download-only; no build) ------
if ! skipped download; then run_checks "download" bash tests/download.sh; fi

# --- 6. PETSc's own test suite with each host type swapped in (tests/conformance/run.sh --ci) ----
# the tutorials of ksp/ksp, snes and ts, each case run with aij and with each host type, the outputs
# compared (iteration counts and every integer exact); listed known failures counted apart
# (tests/conformance/known-failures). About 18 minutes on the 2-core CI machine; GPUMATS_SKIP=conformance
# leaves it out.
if ! skipped conformance; then
  run_checks "conformance-rules" bash tests/conformance/selftest.sh
  run_checks "conformance-rerun" bash tests/conformance/selftest_rerun.sh
  echo "# PETSc's test suite (ksp/ksp, snes, ts tutorials) with each host type against aij"
  bash tests/conformance/run.sh --ci >"$LOGS/conformance.log" 2>&1
  grep -E '^not ok|^# ' "$LOGS/conformance.log"
  read -r p f < <(tail -1 "$LOGS/conformance.log" | awk '/passed/ {print $1, $3}')
  pass=$((pass + ${p:-0}))
  fail=$((fail + ${f:-1}))
fi

# --- 5. the other PETSc builds of Debian: 64-bit indices, complex scalars ---------------------
if ! skipped variants; then
  bash tests/variants.sh >"$LOGS/variants.log" 2>&1
  grep -E '^not ok|^ok complex|^# ' "$LOGS/variants.log"
  read -r p f < <(tail -1 "$LOGS/variants.log" | awk '/passed/ {print $1, $3}')
  pass=$((pass + ${p:-0}))
  fail=$((fail + ${f:-1}))
fi

echo "$pass passed, $fail failed${nskip:+, $nskip skipped}"
[ "$fail" = 0 ]
