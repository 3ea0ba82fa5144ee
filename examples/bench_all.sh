#!/usr/bin/env bash
# The README's MatMult results in one command, on a machine with an NVIDIA GPU: build/bin/bench on
# the generated families (the README's list, with its option variants) and on three matrices
# written by PETSc's own tutorials, then examples/bench_report.py's tables and plot from the one CSV.
#
#   bash examples/bench_all.sh
#   BENCH_ALL_SMALL=1 bash examples/bench_all.sh      (tiny sizes: checks the script, not a benchmark)
#
# The tutorial matrices (PETSc binary, written once into $OUT/matrices and reused while there):
#   ex45   ksp ex45 200^3: 3D 7-point Laplacian, 8M rows (-ksp_view_mat after one CG iteration)
#   ex19   snes ex19 512^2: driven cavity, 4 dof per node, the Jacobian of the first Newton step
#          (colored finite differences)
#   ex56   ksp ex56 -ne 79: 3D elasticity, 1.5M rows in 3x3 blocks, 121M nonzeros
# written with the tutorials as `make tests` builds them (build/bin/tutorial-*), in plain AIJ.
#
# Environment (all optional):
#   BENCH_ALL_OUT       output folder (default build/bench-all): bench.csv, results.md, speedup.png,
#                       one log per bench run, matrices/
#   BENCH_ALL_TYPES     the types of every run (default aijcusparse,sellcuda,cmrscuda,sellpcuda,
#                       bellpackcuda,autocuda; sellcuda is skipped by the bench where PETSc lacks it)
#   BENCH_ALL_FAMILIES  generated families (default: poisson7 poisson27 block3 random4 random16
#                       powerlaw shuffled7)
#   BENCH_ALL_CONSTANT  generated families run again with -constant_values (every off-diagonal
#                       entry -1, as a constant-coefficient stencil), with the value dictionary
#                       variants (default: poisson7 block3)
#   BENCH_ALL_FILES     tutorial matrices (default: ex45 ex19 ex56)
#   BENCH_ALL_BUILD=0   use build/bin/bench and the tutorials as they are (default: make them first)
#   BENCH_ALL_SMALL=1   tiny sizes for the generated families and the tutorials
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

OUT=${BENCH_ALL_OUT:-build/bench-all}
TYPES=${BENCH_ALL_TYPES:-aijcusparse,sellcuda,cmrscuda,sellpcuda,bellpackcuda,autocuda}
FAMILIES=${BENCH_ALL_FAMILIES:-poisson7 poisson27 block3 random4 random16 powerlaw shuffled7}
CONSTANT=${BENCH_ALL_CONSTANT:-poisson7 block3}
FILES=${BENCH_ALL_FILES:-ex45 ex19 ex56}
SMALL=${BENCH_ALL_SMALL:-0}
mkdir -p "$OUT/matrices"

if [ "${BENCH_ALL_BUILD:-1}" != 0 ]; then
  CUDA_PETSC_FAIL="bench_all: no CUDA PETSc" source tests/gpu/cuda_petsc.sh # (also sets PETSC_OPTIONS)
  echo "# building lib, build/bin/bench and the tutorials against $PETSC_DIR/$PETSC_ARCH (log: $OUT/build.log)"
  make -j"$(nproc)" lib build/bin/bench tutorials >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
case " ${PETSC_OPTIONS:-} " in *" -use_gpu_aware_mpi "*) ;; *) export PETSC_OPTIONS="-use_gpu_aware_mpi 0 ${PETSC_OPTIONS:-}" ;; esac

# --- the tutorial matrices ---------------------------------------------------------------------
# name -> the tutorial's command (one linear solve, the operator viewed in binary at its end)
tutorial_command() {
  local f=$1
  if [ "$SMALL" = 1 ]; then
    case $f in
      ex45) echo "build/bin/tutorial-ex45 -da_grid_x 12 -da_grid_y 12 -da_grid_z 12 -ksp_max_it 1" ;;
      ex19) echo "build/bin/tutorial-ex19 -da_grid_x 16 -da_grid_y 16 -snes_max_it 1 -ksp_max_it 1" ;;
      ex56) echo "build/bin/tutorial-ex56 -ne 5 -ksp_max_it 1 -pc_type jacobi" ;;
    esac
  else
    case $f in
      ex45) echo "build/bin/tutorial-ex45 -da_grid_x 200 -da_grid_y 200 -da_grid_z 200 -ksp_max_it 1" ;;
      ex19) echo "build/bin/tutorial-ex19 -da_grid_x 512 -da_grid_y 512 -snes_max_it 1 -ksp_max_it 1" ;;
      ex56) echo "build/bin/tutorial-ex56 -ne 79 -ksp_max_it 1 -pc_type jacobi" ;;
    esac
  fi
}

files=()
for f in $FILES; do
  cmd=$(tutorial_command "$f")
  [ -n "$cmd" ] || { echo "bench_all: unknown tutorial matrix '$f' (ex45 ex19 ex56)" >&2; exit 2; }
  m=$OUT/matrices/$f$([ "$SMALL" = 1 ] && echo -small).bin
  if [ ! -s "$m" ]; then
    echo "# writing $m: $cmd"
    # shellcheck disable=SC2086 # cmd is a command line
    $cmd -mat_type aij -ksp_view_mat "binary:$m" >"$OUT/write-$f.log" 2>&1 || { tail -5 "$OUT/write-$f.log"; echo "bench_all: $f not written" >&2; exit 1; }
  fi
  files+=("$m")
done

# --- the bench runs: the README's option variants per family, then the files --------------------
V="-i16_mat_sellp_index auto -cached_mat_gpumats_loads cached -R128_mat_bellpack_partition_rows 128 -h8_mat_cmrs_height 8 \
-whole_mat_gpumats_long_rows 0 -rcm_mat_gpumats_reorder rcm -trial_mat_autocuda_trial \
-dict_mat_sellp_values dictionary -dict_mat_bellpack_values dictionary -dict16_mat_sellp_values dictionary -dict16_mat_sellp_index auto"
# the value dictionary (SELL-P with 32- and 16-bit columns, BELLPACK), where values are few: the
# constant-coefficient families and ex45
DICT=",sellpcuda:i16,sellpcuda:dict,sellpcuda:dict16,bellpackcuda:dict"
variants() {
  case $1 in
    poisson7) echo ",sellpcuda:i16,sellpcuda:cached,bellpackcuda:cached,bellpackcuda:R128,cmrscuda:h8,sellpcuda:rcm" ;;
    poisson27) echo ",sellpcuda:i16,cmrscuda:h8" ;;
    block3) echo ",sellpcuda:i16,bellpackcuda:R128,cmrscuda:h8" ;;
    random4) echo ",bellpackcuda:R128,cmrscuda:h8" ;;
    random16) echo ",sellpcuda:cached,cmrscuda:h8" ;;
    powerlaw) echo ",sellpcuda:whole,bellpackcuda:whole,cmrscuda:whole,autocuda:trial" ;;
    shuffled7) echo ",cmrscuda:rcm,sellpcuda:rcm,bellpackcuda:rcm,autocuda:rcm" ;;
  esac
}
# shellcheck source=examples/small_sizes.sh
source examples/small_sizes.sh

csv=$OUT/bench.csv
rm -f "$csv"
start=$SECONDS
fail=0
for fam in $FAMILIES; do
  size=$([ "$SMALL" = 1 ] && small_n "$fam")
  echo "# bench -matrix $fam $size"
  # shellcheck disable=SC2086 # V and size are option lists
  build/bin/bench -matrix "$fam" $size -types "$TYPES$(variants "$fam")" $V -csv "$csv" >"$OUT/bench-$fam.log" 2>&1 || { fail=1; tail -5 "$OUT/bench-$fam.log"; }
done
for fam in $CONSTANT; do
  size=$([ "$SMALL" = 1 ] && small_n "$fam")
  echo "# bench -matrix $fam $size -constant_values"
  # shellcheck disable=SC2086 # V and size are option lists
  build/bin/bench -matrix "$fam" $size -constant_values -types "$TYPES$DICT" $V -csv "$csv" >"$OUT/bench-$fam-constant.log" 2>&1 ||
    { fail=1; tail -5 "$OUT/bench-$fam-constant.log"; }
done
for m in "${files[@]}"; do
  echo "# bench -f $m"
  extra=$(case $(basename "$m") in ex45*) echo "$DICT" ;; esac)
  # shellcheck disable=SC2086 # V is an option list
  build/bin/bench -f "$m" -types "$TYPES$extra" $V -csv "$csv" >"$OUT/bench-$(basename "$m" .bin).log" 2>&1 || { fail=1; tail -5 "$OUT/bench-$(basename "$m" .bin).log"; }
done
python3 examples/bench_report.py "$csv" --md "$OUT/results.md" --png "$OUT/speedup.png" || fail=1
echo "# $((SECONDS - start)) s of bench runs; CSV $csv, tables $OUT/results.md, plot $OUT/speedup.png"
exit $fail
