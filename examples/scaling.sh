#!/usr/bin/env bash
# Weak and strong scaling of PETSc's ksp tutorial ex45 (3D 7-point Laplacian on a DMDA, compiled
# unmodified as build/bin/tutorial-ex45, this library loaded with -dll_append), CG + Jacobi for a
# fixed number of iterations, for a list of Mat types on 1, 2, 4, ... GPUs (one MPI rank per GPU):
#
#   bash examples/scaling.sh 2            # 1 and 2 ranks
#   bash examples/scaling.sh 8            # 1, 2, 4 and 8 ranks
#
# Cases (n = GPUMATS_SCALING_WEAK, s = GPUMATS_SCALING_STRONG, l = GPUMATS_SCALING_LARGE):
#   weak    n x n x (n*N) on N ranks (n^3 rows per rank)
#   strong  s^3 on every N, for each size s of the list (default 256 and 400)
#   large   l^3 on every N (the largest problem of the study, see README)
# Each run: -ksp_type cg -pc_type jacobi -ksp_norm_type unpreconditioned -ksp_max_it ITS with a
# relative tolerance nothing reaches (so every run does ITS iterations), -log_view (and
# -log_view_gpu_time when GPUMATS_SCALING_GPU_TIME=1, the default with CUDA vectors: PETSc 3.25
# prints event times of GPU runs only then; it synchronises after each timed GPU operation, for
# every type alike). One CSV line per run: KSPSolve and MatMult maxima over ranks, the ghost
# exchange and block product events of the MPI types, VecScatter, iterations and residual norm.
# Then examples/scaling_report.py writes the markdown tables (OUT/scaling.md).
#
# Environment (all optional):
#   GPUMATS_SCALING_RANKS   rank counts, e.g. "1 2 4" (default: 1 and powers of two up to the argument,
#                           and the argument itself)
#   GPUMATS_SCALING_TYPES   Mat types (default: sellpcuda autocuda aijcusparse, and sellcuda when this
#                           PETSc has it). Host types run on the CPU: "sellp aij" with GPUMATS_SCALING_VEC=
#   GPUMATS_SCALING_CASES   default "weak strong large"
#   GPUMATS_SCALING_WEAK / _STRONG / _LARGE   sizes n, s, l (default 200, "256 400", 512; _STRONG is a list)
#   GPUMATS_SCALING_SMALL=1 sizes 20, "24 28", 32 (a check of the script on a laptop or CI)
#   GPUMATS_SCALING_ITS     iterations (default 300)
#   GPUMATS_SCALING_VEC     -dm_vec_type (default cuda with a CUDA PETSc, none otherwise)
#   GPUMATS_SCALING_EXTRA   more options for every run, e.g. "-mat_gpumats_overlap 0"; recorded in the CSV
#   GPUMATS_SCALING_GPU_TIME  1: add -log_view_gpu_time (default: 1 with CUDA vectors)
#   GPUMATS_SCALING_OUT     output folder (default build/scaling): scaling.csv (appended), logs/, scaling.md
#   GPUMATS_SCALING_TIMEOUT seconds per run (default 900)
#   GPUMATS_SCALING_DRYRUN=1  print the commands only
#   MPIEXEC                 launcher (default: mpiexec, with --allow-run-as-root as root, --oversubscribe)
set -uo pipefail
cd "$(dirname "$0")/.."

maxranks=${1:-${GPUMATS_SCALING_MAXRANKS:-1}}
case $maxranks in '' | *[!0-9]* | 0) echo "usage: bash examples/scaling.sh <ranks, e.g. 2 or 8>" >&2; exit 2 ;; esac
if [ -n "${GPUMATS_SCALING_RANKS:-}" ]; then
  ranks=$GPUMATS_SCALING_RANKS
else
  ranks="" r=1
  while [ $r -lt "$maxranks" ]; do ranks="$ranks $r"; r=$((r * 2)); done
  ranks="$ranks $maxranks"
fi

BIN=build/bin/tutorial-ex45
LIB=$PWD/lib/libpetscgpumats.so
[ -x "$BIN" ] && [ -f "$LIB" ] || { echo "examples/scaling.sh: build first: make tests (needs $BIN and $LIB)" >&2; exit 1; }

# the PETSc the library links (its petscconf.h and petscmat.h), as tests/run.sh finds it
petsc_lib=$(ldd "$LIB" 2>/dev/null | awk '$1 ~ /^libpetsc/ {print $3; exit}')
inc=${petsc_lib:+$(dirname "$petsc_lib")/../include}
[ -f "${inc:-}/petscconf.h" ] || inc=${PETSC_DIR:-/usr/lib/petsc}/${PETSC_ARCH:+$PETSC_ARCH/}include
have_cuda=0
grep -Eq '^#define PETSC_HAVE_CUDA( |$)' "$inc/petscconf.h" 2>/dev/null && have_cuda=1
have_sellcuda=0
# petscmat.h sits beside petscconf.h in an installed PETSc, in PETSC_DIR/include in a build tree
[ $have_cuda = 1 ] && cat "$inc/petscmat.h" "$inc/../../include/petscmat.h" 2>/dev/null | grep -q 'MATSELLCUDA' && have_sellcuda=1

if [ -n "${GPUMATS_SCALING_TYPES:-}" ]; then types=$GPUMATS_SCALING_TYPES
else
  types="sellpcuda autocuda aijcusparse"
  [ $have_sellcuda = 1 ] && types="$types sellcuda"
fi
vec=${GPUMATS_SCALING_VEC-$([ $have_cuda = 1 ] && echo cuda)}
gpu_time=${GPUMATS_SCALING_GPU_TIME:-$([ "$vec" = cuda ] && echo 1 || echo 0)}
its=${GPUMATS_SCALING_ITS:-300}
if [ "${GPUMATS_SCALING_SMALL:-0}" = 1 ]; then dw=20 ds="24 28" dl=32; else dw=200 ds="256 400" dl=512; fi
weak=${GPUMATS_SCALING_WEAK:-$dw}
strong=${GPUMATS_SCALING_STRONG:-$ds}
large=${GPUMATS_SCALING_LARGE:-$dl}
cases=${GPUMATS_SCALING_CASES:-weak strong large}
extra=${GPUMATS_SCALING_EXTRA:-}
out=${GPUMATS_SCALING_OUT:-build/scaling}
timeout_s=${GPUMATS_SCALING_TIMEOUT:-900}
dry=${GPUMATS_SCALING_DRYRUN:-0}
if [ -n "${MPIEXEC:-}" ]; then read -r -a mpiexec <<<"$MPIEXEC"
else
  mpiexec=(mpiexec)
  [ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)
  mpiexec+=(--oversubscribe)
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu=${gpu:-none}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
date=$(date -u +%Y-%m-%dT%H:%MZ)
host=$(hostname -s 2>/dev/null || echo unknown)
mkdir -p "$out/logs"
csv=$out/scaling.csv
header="date,host,gpu,petsc,case,grid,rows,ranks,type,options,status,iterations,residual,ksp_solve_s,mat_mult_s,mat_mult_count,halo_begin_s,halo_end_s,diag_mult_s,offd_mult_s,scatter_begin_s,scatter_end_s"
[ -s "$csv" ] || echo "$header" >"$csv"
for t in $types; do
  case $t in *cuda | *cusparse) [ "$vec" = cuda ] || echo "# note: $t with -dm_vec_type ${vec:-standard} (host vectors staged through the GPU)" ;; esac
done
[ "$vec" = cuda ] && [ "${ngpu:-0}" -gt 0 ] && for n in $ranks; do
  [ "$n" -le "$ngpu" ] || echo "# note: $n ranks on $ngpu GPUs: ranks share GPUs (each rank's GPU is PETSc's choice, rank modulo GPUs)"
done

# The maximum time over ranks of an event in -log_view ("n/a" when PETSc did not time it).
event_time() { awk -v e="$2" '$1 == e && $2 ~ /^[0-9]+$/ { print $4; exit }' "$1"; }
event_count() { awk -v e="$2" '$1 == e && $2 ~ /^[0-9]+$/ { print $2; exit }' "$1"; }

run() { # case nx ny nz ranks type
  local c=$1 nx=$2 ny=$3 nz=$4 n=$5 t=$6 log status
  local tag
  tag=$(echo "$c-${nx}x${ny}x${nz}-np$n-$t${extra:+-$extra}" | tr ' /' '__')
  log=$out/logs/$tag.log
  local cmd=("${mpiexec[@]}" -n "$n" "$BIN" -dll_append "$LIB" -da_grid_x "$nx" -da_grid_y "$ny" -da_grid_z "$nz" -dm_mat_type "$t"
    ${vec:+-dm_vec_type "$vec"} -ksp_type cg -pc_type jacobi -ksp_norm_type unpreconditioned -ksp_max_it "$its" -ksp_rtol 1e-50 -ksp_atol 0
    -ksp_converged_reason -log_view)
  [ "$gpu_time" = 1 ] && cmd+=(-log_view_gpu_time)
  # shellcheck disable=SC2206
  [ -n "$extra" ] && cmd+=($extra)
  if [ "$dry" = 1 ]; then echo "${cmd[*]}"; return; fi
  echo "# $c ${nx}x${ny}x${nz}, $n rank(s), $t ${extra}"
  timeout -k 10 "$timeout_s" "${cmd[@]}" >"$log" 2>&1
  local rc=$?
  if [ $rc = 0 ]; then status=ok
  elif [ $rc = 124 ] || [ $rc = 137 ]; then status=timeout
  elif grep -q -i -E 'out of memory|PETSC_ERR_MEM|Out of memory' "$log"; then status=oom
  else status=failed; fi
  local petsc itsdone res
  petsc=$(grep -oi -m1 'petsc release version [0-9.]*' "$log" | awk '{print $4}')
  itsdone=$(grep -o 'iterations [0-9]*' "$log" | tail -1 | awk '{print $2}')
  res=$(awk '/^Residual norm/ {print $3}' "$log" | tail -1)
  [ $status = ok ] && [ -z "$itsdone" ] && status=failed
  local row="$date,$host,\"$gpu\",${petsc:-?},$c,${nx}x${ny}x${nz},$((nx * ny * nz)),$n,$t,\"$extra\",$status,$itsdone,$res"
  for e in KSPSolve MatMult; do row="$row,$(event_time "$log" $e)"; done
  row="$row,$(event_count "$log" MatMult)"
  for e in GpuMatsHaloBegin GpuMatsHaloEnd GpuMatsDiagMult GpuMatsOffdMult VecScatterBegin VecScatterEnd; do row="$row,$(event_time "$log" $e)"; done
  echo "$row" >>"$csv"
  [ $status = ok ] || echo "#   $status (exit $rc): $(grep -m2 -E 'ERROR|rror' "$log" | tail -1) (see $log)"
}

for c in $cases; do
  for n in $ranks; do
    for t in $types; do
      case $c in
        weak) run weak "$weak" "$weak" $((weak * n)) "$n" "$t" ;;
        strong) for s in $strong; do run strong "$s" "$s" "$s" "$n" "$t"; done ;;
        large) run large "$large" "$large" "$large" "$n" "$t" ;;
        *) echo "examples/scaling.sh: unknown case $c (weak, strong, large)" >&2; exit 2 ;;
      esac
    done
  done
done
[ "$dry" = 1 ] && exit 0
python3 examples/scaling_report.py "$csv" --md "$out/scaling.md" && echo "# tables: $out/scaling.md (CSV: $csv)"
