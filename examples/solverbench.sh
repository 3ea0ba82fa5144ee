#!/usr/bin/env bash
# The solver benchmark (`make solver-bench`): PETSc's own tutorials, compiled unmodified and loaded
# with -dll_append, and examples/coo_newton.c (plain PETSc, loaded the same way), each solved once
# with every Mat type; their -log_view is parsed into a CSV and markdown tables by
# examples/solverbench_report.py. One MPI rank; *cuda/*cusparse types with CUDA vectors. The cases,
# at the default size (SOLVERBENCH_SIZE below for the others):
#
#   ex56-cg-gamg     ksp ex56 -ne 39: 3D elasticity, 192,000 rows in 3x3 blocks; CG + GAMG (smoothed
#                    aggregation, near null space), Chebyshev/Jacobi smoothers
#   ex45-cg-mg       ksp ex45 129^3: 3D Laplacian, 2.1M rows; CG + PCMG through the DMDA, 5 levels,
#                    Chebyshev/Jacobi smoothers
#   ex45-cg-jacobi   ksp ex45 200^3: 8M rows; CG + Jacobi, 300 iterations (-ksp_max_it 300, rtol 1e-12)
#   ex19-newton-mg   snes ex19 513^2: driven cavity, 4 dof, 1.05M unknowns; Newton (3 steps), GMRES + PCMG
#                    through the DMDA, 6 levels, Chebyshev/Jacobi smoothers, Jacobian by colored
#                    finite differences
#   coo-newton       examples/coo_newton 2048^2: 2D Bratu (snes ex5's problem), 4.2M unknowns; Newton
#                    (3 steps on the CPU from 65^2 to 1025^2), CG + Jacobi; the Jacobian assembled
#                    with MatSetPreallocationCOO once and MatSetValuesCOO at every step, from a device
#                    array (VECCUDA) for aijcusparse and the *cuda types, a host array for the others
#   ex2-bicg-jacobi  ksp ex2 2000x2000: 2D Laplacian, 4M rows; BiCG + Jacobi, 300 iterations (MatMult and
#                    MatMultTranspose in every iteration)
#   ex45-gmres-bjacobi  ksp ex45 200^3 with PETSc's default solver: GMRES + block Jacobi/ILU(0) on
#                    several ranks (ILU on one), rtol 1e-6
#   ex45-gmres-asm   the same with ASM (overlap 1, ILU(0) on each subdomain)
#   ex45-cg-gamg     ksp ex45 200^3: CG + GAMG, Chebyshev/Jacobi smoothers, rtol 1e-8
#
# With SOLVERBENCH_RANKS="1 2 4" every case runs on each count of MPI ranks (mpiexec; one GPU per
# rank where there are enough, shared round robin where not), its rows named <case>-np<N>.
#
# Each run records KSPSolve, PCSetUp, a total (PCSetUp + KSPSolve; SNESSolve for the SNES cases),
# MatMult, iterations, the final residual norm, the host<->GPU copies inside KSPSolve and the
# conversion time, and the report gives the speedups of KSPSolve and PCSetUp over aijcusparse. The
# SNES cases (ex19-newton-mg, coo-newton) have a table of their own: Newton steps, linear iterations,
# and the assembly (coo_newton's CooAssembly event around MatSetValuesCOO; ex19: MatAssemblyEnd), the
# format build or update (our <FORMAT>Convert and GpuMatsValues events; aijcusparse's
# MatCUSPARSCopyTo), KSPSolve and SNESSolve, each with its ratio to aijcusparse, and the Jacobian
# evaluations. A run that fails or passes SOLVERBENCH_TIMEOUT is a row with its error, not the end.
#
# Runtime, measured on an H200 node with PETSc and the library built: ex56 -ne 59 and ex45 MG 257^3
# (the large size) with five types, 117 s; ex45 Jacobi, ex2, ex19 and coo-newton with six types, 126 s.
# Most of it is host work the tutorials do whatever the type (DMDA and matrix assembly, FD Jacobians)
# and ~1.5 s of CUDA start-up per run. Building a CUDA PETSc (when needed, ~150 s there) and the
# library come on top.
#
#   bash examples/solverbench.sh                       # on a GPU machine: everything as above
#   SOLVERBENCH_TYPES="aij sellp cmrs" SOLVERBENCH_SIZE=small bash examples/solverbench.sh   # a CPU check
#
# Environment:
#   SOLVERBENCH_TYPES    Mat types, space- or comma-separated, each optionally TYPE+VARIANT (see
#                        type_opts) (default with a CUDA PETSc: aijcusparse
#                        sellcuda cmrscuda sellpcuda bellpackcuda autocuda, sellcuda only where PETSc's
#                        own sellcuda solves a tiny ex2 problem; without: aij cmrs sellp bellpack)
#   SOLVERBENCH_SIZE     small (seconds, for CPU checks) | default | large (ex56 -ne 59, ex45 MG 257^3, 6 levels)
#   SOLVERBENCH_CASES    cases to run (default: the first six above)
#   SOLVERBENCH_RANKS    MPI rank counts to run each case on (default 1)
#   SOLVERBENCH_TIMEOUT  seconds per run before it is killed (default 120)
#   SOLVERBENCH_REPEAT   runs of each case with each type (default 1), the types taking turns (all types
#                        once, then again) so that a drift of the machine falls on every type alike; the
#                        report takes each type's run with the median KSPSolve and gives the range
#   SOLVERBENCH_OUT      folder of the logs, the CSV and the markdown (default build/solverbench)
#   SOLVERBENCH_README   1: also copy the CSV and the markdown to docs/results/solverbench-<gpu>[-<size>]-<date>.*
#                        (the markdown ending with the command and the commit) and replace the block between
#                        <!-- solverbench:begin --> and <!-- solverbench:end --> of README.md where it has one;
#                        0 (default): write nothing outside SOLVERBENCH_OUT
#   SOLVERBENCH_BUILD    0: do not run make (default: make lib tutorials build/bin/coo_newton first)
#   PETSC_DIR, PETSC_ARCH  the PETSc to build against; with an NVIDIA GPU visible and no CUDA in that
#                        PETSc, config/build-petsc-cuda.sh's (built when missing), as the GPU suite does
set -u
cd "$(dirname "$0")/.." || exit 1
trap 'echo "solverbench: interrupted"; exit 130' INT

SIZE=${SOLVERBENCH_SIZE:-default}
TIMEOUT=${SOLVERBENCH_TIMEOUT:-120}
OUT=${SOLVERBENCH_OUT:-build/solverbench}
README_MODE=${SOLVERBENCH_README:-0}
BIN=build/bin
LIB=$PWD/lib/libpetscgpumats.so
REPORT=examples/solverbench_report.py
DEFAULT_CASES="ex56-cg-gamg ex45-cg-mg ex45-cg-jacobi ex19-newton-mg coo-newton ex2-bicg-jacobi"
ALL_CASES="$DEFAULT_CASES ex45-gmres-bjacobi ex45-gmres-asm ex45-cg-gamg"
CASES=$(echo "${SOLVERBENCH_CASES:-$DEFAULT_CASES}" | tr ',' ' ')
RANKS=$(echo "${SOLVERBENCH_RANKS:-1}" | tr ',' ' ')
REPEAT=${SOLVERBENCH_REPEAT:-1}
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "solverbench: SOLVERBENCH_REPEAT=$REPEAT: expected a count >= 1" >&2; exit 2; }
MPIEXEC=(mpiexec --oversubscribe)
[ "$(id -u)" = 0 ] && MPIEXEC+=(--allow-run-as-root)
begin=$(date +%s)

case $SIZE in
  small) NE=11 MG_N=33 MG_L=4 J_N=40 SN_N=33 SN_L=4 COO_N=65 EX2_N=100 ;;
  default) NE=39 MG_N=129 MG_L=5 J_N=200 SN_N=513 SN_L=6 COO_N=2048 EX2_N=2000 ;;
  large) NE=59 MG_N=257 MG_L=6 J_N=200 SN_N=513 SN_L=6 COO_N=2048 EX2_N=2000 ;;
  *) echo "solverbench: SOLVERBENCH_SIZE=$SIZE: expected small, default or large" >&2; exit 2 ;;
esac
for c in $CASES; do
  case " $ALL_CASES " in *" $c "*) ;; *) echo "solverbench: unknown case '$c' (cases: $ALL_CASES)" >&2; exit 2 ;; esac
done

# --- PETSc and the build -------------------------------------------------------------------------
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}
PETSC_ARCH=${PETSC_ARCH:-}
petscconf() { echo "$PETSC_DIR/${PETSC_ARCH:+$PETSC_ARCH/}include/petscconf.h"; }
has_cuda() { grep -q "^#define PETSC_HAVE_CUDA 1" "$(petscconf)" 2>/dev/null; }
if [ -n "$GPU" ] && ! has_cuda; then
  echo "# $GPU, and no CUDA in the PETSc at PETSC_DIR=$PETSC_DIR PETSC_ARCH=$PETSC_ARCH: using config/build-petsc-cuda.sh's"
  eval "$(bash config/build-petsc-cuda.sh | tail -1)" || { echo "solverbench: no CUDA PETSc" >&2; exit 1; }
fi
export PETSC_DIR PETSC_ARCH
rm -rf "$OUT/logs" "$OUT/solverbench.csv" "$OUT/solverbench.md"
mkdir -p "$OUT/logs"
if [ "${SOLVERBENCH_BUILD:-1}" != 0 ]; then
  echo "# building the library, the tutorials and coo_newton against $PETSC_DIR${PETSC_ARCH:+ ($PETSC_ARCH)} ($OUT/build.log)"
  make -j"$(nproc)" lib tutorials "$BIN/coo_newton" >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; echo "solverbench: build failed (see $OUT/build.log)" >&2; exit 1; }
fi

# per-run options: a CUDA PETSc times every event on the GPU (-log_view_gpu_time: without it, events
# that launch kernels print n/a) and refuses to start with an MPI that is not CUDA-aware unless told
RUN_OPTS="-log_view"
if has_cuda; then RUN_OPTS="$RUN_OPTS -log_view_gpu_time -use_gpu_aware_mpi 0"; fi

# --- the types -------------------------------------------------------------------------------------
CSV=$OUT/solverbench.csv
HOST=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
HOST=${HOST:-$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)}
CUDA=
if has_cuda; then CUDA=$("${CUDA_DIR:-/usr/local/cuda}/bin/nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p'); fi
META=(--meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" --meta "gpu=${GPU:-none}" --meta "host=${HOST:-unknown} ($(nproc) cores)" --meta "cuda=$CUDA" --meta "size=$SIZE")
if [ -n "${SOLVERBENCH_TYPES:-}" ]; then
  TYPES=$(echo "$SOLVERBENCH_TYPES" | tr ',' ' ')
elif has_cuda; then
  TYPES="aijcusparse sellcuda cmrscuda sellpcuda bellpackcuda autocuda"
  # PETSc's own SELL on the GPU (MATSELLCUDA) where this PETSc has it and it solves a tiny problem
  probe=$OUT/logs/probe-sellcuda.log
  # shellcheck disable=SC2086 # RUN_OPTS splits into options on purpose
  if ! timeout -k 10 60 "$BIN/tutorial-ex2" -m 8 -n 8 -mat_type sellcuda -vec_type cuda -ksp_type cg -pc_type jacobi $RUN_OPTS >"$probe" 2>&1; then
    why=$(grep -m1 -E 'PETSC ERROR: [A-Z]' "$probe" | sed 's/.*PETSC ERROR: //; s/: https.*//' | grep -v 'Error Message' || true)
    TYPES=${TYPES/sellcuda /}
    python3 "$REPORT" skip "$CSV" --case all --type sellcuda --note "PETSc's sellcuda did not solve a tiny ex2 problem here (${why:-see $probe})" "${META[@]}"
  fi
else
  TYPES="aij cmrs sellp bellpack"
  echo "# no CUDA PETSc: the host types $TYPES"
fi
echo "# ${GPU:-no GPU}; size $SIZE; types: $TYPES; cases: $CASES; $TIMEOUT s per run at most"

# --- the cases -------------------------------------------------------------------------------------
case_def() { # sets PROG (the program, under $BIN), TYPEOPT (mat: -mat_type, ex2 also -vec_type; matonly: vectors from MatCreateVecs; dm: -dm_mat_type/-dm_vec_type), TOTAL, FIXED, ARGS, TITLE
  FIXED=
  TOTAL=ksp
  case $1 in
    ex56-cg-gamg)
      PROG=tutorial-ex56 TYPEOPT=matonly
      ARGS="-ne $NE -ksp_type cg -pc_type gamg -pc_gamg_type agg -pc_gamg_agg_nsmooths 1 -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -use_mat_nearnullspace -ksp_converged_reason -ksp_view_final_residual"
      TITLE="ksp ex56 -ne $NE: 3D elasticity, $((3 * (NE + 1) ** 3)) rows in 3x3 blocks; CG + GAMG (smoothed aggregation, near null space), Chebyshev/Jacobi smoothers" ;;
    ex45-cg-mg)
      PROG=tutorial-ex45 TYPEOPT=dm
      ARGS="-da_grid_x $MG_N -da_grid_y $MG_N -da_grid_z $MG_N -ksp_type cg -pc_type mg -pc_mg_levels $MG_L -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -ksp_converged_reason -ksp_view_final_residual"
      TITLE="ksp ex45 ${MG_N}^3: 3D Laplacian, $((MG_N ** 3)) rows; CG + PCMG through the DMDA, $MG_L levels, Chebyshev/Jacobi smoothers" ;;
    ex45-cg-jacobi)
      PROG=tutorial-ex45 TYPEOPT=dm FIXED=1
      ARGS="-da_grid_x $J_N -da_grid_y $J_N -da_grid_z $J_N -ksp_type cg -pc_type jacobi -ksp_max_it 300 -ksp_rtol 1e-12 -ksp_converged_reason -ksp_view_final_residual"
      TITLE="ksp ex45 ${J_N}^3: 3D Laplacian, $((J_N ** 3)) rows; CG + Jacobi, 300 iterations at most (-ksp_max_it 300, rtol 1e-12)" ;;
    ex19-newton-mg)
      PROG=tutorial-ex19 TYPEOPT=dm TOTAL=snes
      # (513 points, 512 intervals a side: PCMG coarsens the DMDA by halving the intervals)
      ARGS="-da_grid_x $SN_N -da_grid_y $SN_N -ksp_type gmres -pc_type mg -pc_mg_levels $SN_L -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -snes_monitor -snes_converged_reason -ksp_converged_reason"
      TITLE="snes ex19 ${SN_N}^2: driven cavity, 4 dof, $((4 * SN_N ** 2)) unknowns; Newton, GMRES + PCMG through the DMDA, $SN_L levels, Chebyshev/Jacobi smoothers, Jacobian by colored finite differences" ;;
    coo-newton)
      # (coo_newton hands MatSetValuesCOO a device array for the GPU types, host arrays otherwise:
      # its -coo_values auto)
      PROG=coo_newton TYPEOPT=dm TOTAL=snes
      ARGS="-n $COO_N -snes_type newtonls -ksp_type cg -pc_type jacobi -snes_monitor -snes_converged_reason -ksp_converged_reason"
      TITLE="examples/coo_newton ${COO_N}^2: 2D Bratu (lambda 6), $((COO_N ** 2)) unknowns; Newton, CG + Jacobi, Jacobian assembled by MatSetValuesCOO at every step (device values for GPU types)" ;;
    ex2-bicg-jacobi)
      PROG=tutorial-ex2 TYPEOPT=mat FIXED=1
      ARGS="-m $EX2_N -n $EX2_N -ksp_type bicg -pc_type jacobi -ksp_max_it 300 -ksp_converged_reason -ksp_view_final_residual"
      TITLE="ksp ex2 ${EX2_N}x${EX2_N}: 2D Laplacian, $((EX2_N ** 2)) rows; BiCG + Jacobi, 300 iterations at most (ex2's rtol is 1e-2/((m+1)(n+1)))" ;;
    ex45-gmres-bjacobi)
      PROG=tutorial-ex45 TYPEOPT=dm
      ARGS="-da_grid_x $J_N -da_grid_y $J_N -da_grid_z $J_N -ksp_rtol 1e-6 -ksp_converged_reason -ksp_view_final_residual"
      TITLE="ksp ex45 ${J_N}^3: 3D Laplacian, $((J_N ** 3)) rows; PETSc's default solver: GMRES + block Jacobi with ILU(0) (ILU on one rank), rtol 1e-6" ;;
    ex45-gmres-asm)
      PROG=tutorial-ex45 TYPEOPT=dm
      ARGS="-da_grid_x $J_N -da_grid_y $J_N -da_grid_z $J_N -pc_type asm -ksp_rtol 1e-6 -ksp_converged_reason -ksp_view_final_residual"
      TITLE="ksp ex45 ${J_N}^3: 3D Laplacian, $((J_N ** 3)) rows; GMRES + ASM (overlap 1, ILU(0) per subdomain), rtol 1e-6" ;;
    ex45-cg-gamg)
      PROG=tutorial-ex45 TYPEOPT=dm
      ARGS="-da_grid_x $J_N -da_grid_y $J_N -da_grid_z $J_N -ksp_type cg -pc_type gamg -mg_levels_ksp_type chebyshev -mg_levels_pc_type jacobi -ksp_rtol 1e-8 -ksp_converged_reason -ksp_view_final_residual"
      TITLE="ksp ex45 ${J_N}^3: 3D Laplacian, $((J_N ** 3)) rows; CG + GAMG, Chebyshev/Jacobi smoothers, rtol 1e-8" ;;
  esac
}
# A type may name a variant of itself after a '+', a row of its own: +ipc, +staged, +petsc (its
# -mat_gpumats_exchange), e.g. SOLVERBENCH_TYPES="aijcusparse sellpcuda sellpcuda+ipc"
variant_opts() {
  case $1 in
    ipc | staged | petsc) echo "-mat_gpumats_exchange $1" ;;
    *) echo "solverbench: unknown type variant '+$1' (ipc, staged, petsc)" >&2; exit 2 ;;
  esac
}
type_opts() { # TYPEOPT type[+variant]
  local vec= t=${2%%+*} extra=
  [ "$t" = "$2" ] || extra=" $(variant_opts "${2#*+}")" || exit 2
  case $t in *cuda | *cusparse) vec=cuda ;; esac
  case $1 in
    matonly) echo "-mat_type $t$extra" ;;
    mat) echo "-mat_type $t${vec:+ -vec_type $vec}$extra" ;;
    dm) echo "-dm_mat_type $t${vec:+ -dm_vec_type $vec}$extra" ;;
  esac
}

for t in $TYPES; do [ "${t%%+*}" = "$t" ] || variant_opts "${t#*+}" >/dev/null || exit 2; done
nrun=0
nok=0
for np in $RANKS; do
launch=()
[ "$np" -gt 1 ] && launch=("${MPIEXEC[@]}" -n "$np")
for c0 in $CASES; do
  case_def "$c0"
  c=$c0
  [ "$np" -gt 1 ] && c=$c0-np$np TITLE="$TITLE; $np MPI ranks"
  echo "# $c: $TITLE"
  for r in $(seq "$REPEAT"); do
  for t in $TYPES; do
    log=$OUT/logs/$c-$t.log
    [ "$REPEAT" -gt 1 ] && log=$OUT/logs/$c-$t-$r.log
    opts=$(type_opts "$TYPEOPT" "$t")
    start=$(date +%s.%N)
    # shellcheck disable=SC2086 # the option strings split into words on purpose
    timeout -k 10 "$TIMEOUT" "${launch[@]}" "$BIN/$PROG" $ARGS -dll_append "$LIB" $opts $RUN_OPTS >"$log" 2>&1
    rc=$?
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    line=$(python3 "$REPORT" add "$CSV" --log "$log" --case "$c" --type "$t" --rc "$rc" --wall "$wall" --timeout "$TIMEOUT" --title "$TITLE" \
      --total "$TOTAL" ${FIXED:+--fixed-its} --rep "$r" --command "${launch[*]}${launch:+ }$BIN/$PROG $ARGS -dll_append lib/libpetscgpumats.so $opts $RUN_OPTS" "${META[@]}")
    echo "$line"
    nrun=$((nrun + 1))
    case $line in "$c $t: ok"*) nok=$((nok + 1)) ;; esac
  done
  done
done
done

# --- the report ------------------------------------------------------------------------------------
[ -s "$CSV" ] || { echo "solverbench: no results" >&2; exit 1; }
python3 "$REPORT" report "$CSV" --md "$OUT/solverbench.md" || exit 1
echo
cat "$OUT/solverbench.md"
if [ "$README_MODE" = 1 ]; then
  slug=$(echo "${GPU:-cpu}" | tr '[:upper:]' '[:lower:]' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-+|-+$//g')
  base=docs/results/solverbench-${slug:-gpu}$([ "$SIZE" = default ] || echo "-$SIZE")-$(date -u +%Y-%m-%d)
  mkdir -p docs/results
  cp "$CSV" "$base.csv"
  if grep -q '<!-- solverbench:begin -->' README.md; then
    python3 "$REPORT" report "$base.csv" --md "$base.md" --readme README.md --link "$base.md" || exit 1
    echo "# wrote $base.csv, $base.md and README.md's solver benchmark block"
  else
    python3 "$REPORT" report "$base.csv" --md "$base.md" || exit 1
    echo "# wrote $base.csv and $base.md (README.md has no solver benchmark block)"
  fi
  dirty=$(git diff --quiet HEAD -- src include examples 2>/dev/null || echo " plus uncommitted changes")
  printf '\nCommand: %s bash examples/solverbench.sh; library at commit %s%s.\n' \
    "$(env | grep -E '^SOLVERBENCH_' | sort | tr '\n' ' ')" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$dirty" >>"$base.md"
fi
echo "# $nrun runs, $nok ok, $((nrun - nok)) failed; $(($(date +%s) - begin)) s; logs in $OUT/logs, results in $CSV and $OUT/solverbench.md"
