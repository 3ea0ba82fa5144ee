#!/usr/bin/env bash
# Why a MatMult kernel is as fast as it is: Nsight Compute (ncu) counters of the product kernels of
# our *cuda types and of cuSPARSE (aijcusparse's CSR SpMV) on the benchmark's matrices, then
# examples/profile_report.py's table of bytes, instructions and warp efficiency per nonzero.
#
#   bash examples/profile_kernels.sh
#   PROFILE_SMALL=1 bash examples/profile_kernels.sh      (tiny sizes: checks the script)
#
# One build/bin/bench run per matrix and type under ncu, aijcusparse (cuSPARSE's CSR SpMV, as PETSc
# calls it) included. Only the launches inside bench's NVTX range around that type's timed MatMult
# calls are profiled (ncu --nvtx-include "<type>/"), whatever kernels they are: conversions, the
# reference aijcusparse of every bench run, checks and the copy kernel run unprofiled. ncu flushes
# the caches before each profiled launch (--cache-control all) and leaves the clocks as they are
# (--clock-control none), so kernel times are comparable with bench's.
#
# Environment (all optional):
#   PROFILE_OUT       output folder (default build/profile): profile.csv (ncu's raw counters, one
#                     row per launch, with the matrix and type of the run), bench.csv, profile.md,
#                     one log per run
#   PROFILE_MATRICES  generated families (default: poisson7 random4 random16 powerlaw shuffled7)
#   PROFILE_TYPES     types of every run (default: cmrscuda sellpcuda); shuffled7 also
#                     gets cmrscuda:rcm (rows and columns in RCM order)
#   PROFILE_BUILD=0   use build/bin/bench as it is (default: make it first)
#   PROFILE_SMALL=1   tiny sizes
#   NCU               the ncu binary (default: ncu on PATH, else /usr/local/cuda/bin/ncu)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

OUT=${PROFILE_OUT:-build/profile}
MATRICES=${PROFILE_MATRICES:-poisson7 random4 random16 powerlaw shuffled7}
TYPES=${PROFILE_TYPES:-cmrscuda sellpcuda}
SMALL=${PROFILE_SMALL:-0}
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
[ -x "$NCU" ] || { echo "profile_kernels: no Nsight Compute (ncu) found; set NCU" >&2; exit 2; }
mkdir -p "$OUT"

if [ "${PROFILE_BUILD:-1}" != 0 ]; then
  CUDA_PETSC_FAIL="profile_kernels: no CUDA PETSc" source tests/gpu/cuda_petsc.sh
  make -j"$(nproc)" lib build/bin/bench >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
case " ${PETSC_OPTIONS:-} " in *" -use_gpu_aware_mpi "*) ;; *) export PETSC_OPTIONS="-use_gpu_aware_mpi 0 ${PETSC_OPTIONS:-}" ;; esac

# The counters, each with what it tells (profile_report.py turns them into per-nonzero figures).
# A counter this ncu does not know is left out with a note rather than failing the run.
WANT="gpu__time_duration.sum
dram__bytes_read.sum
dram__bytes_write.sum
dram__throughput.avg.pct_of_peak_sustained_elapsed
lts__throughput.avg.pct_of_peak_sustained_elapsed
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sector_hit_rate.pct
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
smsp__inst_executed.sum
smsp__thread_inst_executed.sum
sm__warps_active.avg.pct_of_peak_sustained_active
sm__throughput.avg.pct_of_peak_sustained_elapsed
smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct
smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct"
known=$("$NCU" --query-metrics 2>/dev/null | awk '{print $1}')
metrics=""
for m in $WANT; do
  if [ -z "$known" ] || grep -qx "${m%%.*}" <<<"$known"; then
    metrics="$metrics${metrics:+,}$m"
  else
    echo "# $NCU does not know ${m%%.*}: left out"
  fi
done

# shellcheck source=examples/small_sizes.sh
source examples/small_sizes.sh

csv=$OUT/profile.csv
rm -f "$csv" "$OUT/bench.csv"
fail=0
for m in $MATRICES; do
  types="aijcusparse $TYPES"
  [ "$m" = shuffled7 ] && types="$types cmrscuda:rcm"
  size=$([ "$SMALL" = 1 ] && small_n "$m")
  for t in $types; do
    log=$OUT/$m-${t//:/-}
    echo "# ncu: bench -matrix $m $size -types $t"
    # shellcheck disable=SC2086 # size is an option list
    "$NCU" --csv --page raw --print-units base --cache-control all --clock-control none --kernel-name-base demangled \
      --nvtx --nvtx-include "${t//:/.}/" --metrics "$metrics" --log-file "$log.ncu.csv" \
      build/bin/bench -matrix "$m" $size -types "$t" -rcm_mat_gpumats_reorder rcm -warmup 1 -reps 2 \
      -baselines 0 -transpose 0 -copy_mib 16 -csv "$OUT/bench.csv" >"$log.log" 2>&1 || { fail=1; tail -5 "$log.log"; continue; }
    python3 examples/profile_report.py collect "$log.ncu.csv" --matrix "$m" --type "$t" --append "$csv" || fail=1
  done
done
python3 examples/profile_report.py report "$csv" --bench "$OUT/bench.csv" --md "$OUT/profile.md" || fail=1
cat "$OUT/profile.md"
exit $fail
