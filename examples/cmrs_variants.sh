#!/usr/bin/env bash
# CMRS's GPU product kernels against each other and against cuSPARSE, on a machine with an NVIDIA
# GPU: build/bin/bench once per matrix, with one tagged cmrscuda type per (kernel, strip height)
# (-types cmrscuda:shared_h8 -shared_h8_mat_cmrs_spmv shared -shared_h8_mat_cmrs_height 8 ...), so
# each matrix is generated once and every variant converts from the same AIJ matrix.
#
#   bash examples/cmrs_variants.sh
#   CMRS_VARIANTS_MATRICES="poisson7 random4" CMRS_VARIANTS_HEIGHTS="6 8" bash examples/cmrs_variants.sh
#
# Prints one line per run:
#   matrix  variant  kernel  height  time(us)  x_aijcusparse  x_alg1  check  what -mat_view said
# where x_aijcusparse = t(aijcusparse) / t (the bench's speedup column) and x_alg1 = t(raw
# cusparseSpMV CSR ALG1) / t; above 1 is faster than cuSPARSE. "cmrscuda" alone is the default
# (-mat_cmrs_spmv auto with its height). Then the fastest CMRS variant of each matrix.
# The bench's full output and its CSV (variants-<time>.csv; examples/bench_report.py reads it) go
# to $OUT (build/cmrs-variants).
#
# Environment (all optional):
#   CMRS_VARIANTS_MATRICES  bench -matrix families (default: poisson7 random4 random16 powerlaw
#                           poisson27 block3, each at the bench's default size: poisson7 n = 160)
#   CMRS_VARIANTS_KERNELS   kernels: warp shared sub8 sub16 seg (subwarp with 8 / 16 lanes per
#                           strip, segmented); default all five
#   CMRS_VARIANTS_HEIGHTS   strip heights (default 4 8 16)
#   CMRS_VARIANTS_ARGS      more bench options for every run (default: -transpose 0)
#   CMRS_VARIANTS_BUILD=0   use build/bin/bench as it is (default: make lib build/bin/bench first,
#                           against PETSC_DIR/PETSC_ARCH if they name a CUDA PETSc, else the one of
#                           config/build-petsc-cuda.sh)
#   CMRS_VARIANTS_OUT       output folder (default build/cmrs-variants)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

MATRICES=${CMRS_VARIANTS_MATRICES:-poisson7 random4 random16 powerlaw poisson27 block3}
KERNELS=${CMRS_VARIANTS_KERNELS:-warp shared sub8 sub16 seg}
HEIGHTS=${CMRS_VARIANTS_HEIGHTS:-4 8 16}
ARGS=${CMRS_VARIANTS_ARGS:--transpose 0}
OUT=${CMRS_VARIANTS_OUT:-build/cmrs-variants}
mkdir -p "$OUT"

if [ "${CMRS_VARIANTS_BUILD:-1}" != 0 ]; then
  CUDA_PETSC_FAIL="cmrs_variants: no CUDA PETSc" source tests/gpu/cuda_petsc.sh # (also sets PETSC_OPTIONS)
  echo "# building lib and build/bin/bench against $PETSC_DIR/$PETSC_ARCH (log: $OUT/build.log)"
  make -j"$(nproc)" lib build/bin/bench >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
[ -x build/bin/bench ] || { echo "cmrs_variants: no build/bin/bench (make bench, or CMRS_VARIANTS_BUILD=1)" >&2; exit 1; }
case " ${PETSC_OPTIONS:-} " in *" -use_gpu_aware_mpi "*) ;; *) export PETSC_OPTIONS="-use_gpu_aware_mpi 0 ${PETSC_OPTIONS:-}" ;; esac

# the tagged types and their options
types=aijcusparse,cmrscuda
opts=()
for k in $KERNELS; do
  case $k in
    warp) o=(-mat_cmrs_spmv warp) ;;
    shared) o=(-mat_cmrs_spmv shared) ;;
    sub8) o=(-mat_cmrs_spmv subwarp -mat_cmrs_lanes 8) ;;
    sub16) o=(-mat_cmrs_spmv subwarp -mat_cmrs_lanes 16) ;;
    seg) o=(-mat_cmrs_spmv segmented) ;;
    *) echo "cmrs_variants: unknown kernel '$k' (warp shared sub8 sub16 seg)" >&2; exit 2 ;;
  esac
  for h in $HEIGHTS; do
    tag=${k}_h$h
    types=$types,cmrscuda:$tag
    opts+=("-${tag}_mat_cmrs_height" "$h")
    for ((i = 0; i < ${#o[@]}; i += 2)); do opts+=("-${tag}_${o[i]#-}" "${o[i + 1]}"); done
  done
done

start=$SECONDS
csv=$OUT/variants-$(date -u +%Y%m%dT%H%M%SZ).csv
: >"$OUT/lines.txt"
printf '%-10s %-18s %-7s %6s %9s %13s %6s %-5s %s\n' matrix variant kernel height "time(us)" x_aijcusparse x_alg1 check "-mat_view"
for m in $MATRICES; do
  log=$OUT/$m.log
  # shellcheck disable=SC2086 # ARGS is a list of options
  build/bin/bench -matrix "$m" -types "$types" "${opts[@]}" $ARGS -csv "$csv" >"$log" 2>&1
  rc=$?
  # the bench's table: type time GB/s eta+ GFlop/s speedup conv(ms) MB fill check reldiff | ... | parameters
  awk -v m="$m" '
    NR == FNR { if ($1 == "cusparse-csr-alg1" && $2 + 0 > 0) alg1 = $2; next } # first pass: the ALG1 row
    $1 ~ /^(aijcusparse|cmrscuda)/ {
      if ($2 == "skipped:" || $2 == "FAILED:") { printf "%-10s %s\n", m, $0; next }
      v = $1; k = "-"; h = "auto"
      if (split(v, a, ":") == 2) { split(a[2], b, "_h"); k = b[1]; h = b[2] }
      p = $0; sub(/^[^|]*\|[^|]*\| */, "", p)
      printf "%-10s %-18s %-7s %6s %9.1f %13s %6.2f %-5s %s\n", m, v, k, h, $2, $6, (alg1 > 0 ? alg1 / $2 : 0), $10, p
    }' "$log" "$log" | tee -a "$OUT/lines.txt"
  [ "$rc" = 0 ] || echo "# $m: bench exit $rc (see $log)"
done
echo
echo "# fastest CMRS variant per matrix (time, x_aijcusparse, x_alg1)"
awk '$2 ~ /^cmrscuda/ && $5 + 0 > 0 { if (!($1 in best) || $5 < best[$1]) { best[$1] = $5; line[$1] = sprintf("%-10s %-18s %9.1f us %6s %6s", $1, $2, $5, $6, $7) } }
     END { for (m in line) print line[m] }' "$OUT/lines.txt" | sort
echo "# $((SECONDS - start)) s; logs in $OUT, the bench rows in $csv"
