#!/usr/bin/env bash
# The first build of every GPU format, on a machine with an NVIDIA GPU (issue 13): are the device
# builds right, and where does their time go against aijcusparse's assembly and copy?
#   1. a CUDA-enabled PETSc, as tests/gpu/run.sh finds or builds one (PETSC_DIR/PETSC_ARCH if they
#      name one, else config/build-petsc-cuda.sh, which needs .carry/petsc-<version>.tar.gz offline);
#   2. the plug-in, build/bin/bench and PETSc's ex45 built against it;
#   3. the kernel tests (tests/gpu/test_kernels.cu): every device build against the host's arrays
#      bit for bit (all formats, parameter sweeps, edge cases, 64-bit and offset index forms), the
#      row statistics of the upload, products, out of memory during a build;
#   4. ex45 on an N^3 grid (N = BUILD_CHECK_N, default 200: 8M rows, 56M nonzeros) with -log_view
#      -log_view_gpu_time (PETSc 3.25 prints no event times of GPU runs without it),
#      CG + Jacobi, 10 iterations, for aijcusparse and each GPU type: a table of MatAssemblyEnd,
#      aijcusparse's copy to the GPU (MatCUSPARSCopyTo, at its first MatMult), the format's
#      <FORMAT>Convert (inside MatAssemblyEnd) and its steps GpuMatsUpload / GpuMatsStructure /
#      GpuMatsScatter; "ours" is MatAssemblyEnd, "aijcusparse" its MatAssemblyEnd + MatCUSPARSCopyTo;
#      more runs: sellpcuda:host converts on the host and uploads the format (-mat_gpumats_build
#      host, the reference path), and <type>:use builds at the first use after assembly
#      (-mat_gpumats_build_at use: MatAssemblyEnd + Convert), and sellpcuda:t1 stages its uploads
#      with one host thread (-mat_gpumats_upload_threads 1);
#   4b. examples/values_update on the same matrix: VALUES_UPDATES (5) updates of its values in the
#      same pattern, per update aijcusparse's assembly and values copy against ours (values only, and
#      rebuilt in full), and ||A 1|| the same for every type;
#   5. build/bin/bench -matrix poisson7 -n N: conv(ms) = MatConvert + MatSetFromOptions + the first
#      MatMult for every type (a MatDuplicate on the host included for each, aijcusparse's copy in
#      its first MatMult), without -log_view (no synchronisation between build steps).
# Timings are reported, never asserted. Prints "N passed, M failed" last: the kernel checks, and
# one check per run of 4 and 5 (it ran and converged / passed its product check).
# Logs and the summary go to build/build-check/.
#
#   bash tests/gpu/build_check.sh
#   GPUMATS_BUILD_CHECK_SKIP="kernels" BUILD_CHECK_N=150 bash tests/gpu/build_check.sh
set -u
cd "$(dirname "$0")/../.."
N=${BUILD_CHECK_N:-200}
TYPES="sellpcuda cmrscuda bellpackcuda autocuda"
OUT=build/build-check
mkdir -p "$OUT"
skipped() { case " ${GPUMATS_BUILD_CHECK_SKIP:-} " in *" $1 "*) echo "# skipped: $1 (GPUMATS_BUILD_CHECK_SKIP)"; return 0 ;; esac; return 1; }
pass=0
fail=0

# --- 1. PETSc with CUDA ----------------------------------------------------------------------
source tests/gpu/cuda_petsc.sh

# --- 2. build --------------------------------------------------------------------------------
make -j"$(nproc)" lib build/bin/bench build/bin/tutorial-ex45 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; echo "0 passed, 1 failed (build)"; exit 1; }

# --- 3. kernel tests -------------------------------------------------------------------------
if ! skipped kernels; then
  NVCC=${CUDA_DIR:-/usr/local/cuda}/bin/nvcc
  echo "# kernel tests: device builds against the host's arrays"
  # linked with the kernels' objects that make lib compiled (in parallel), not compiled again
  O=build/obj/mat/impls
  if $NVCC -std=c++17 -O2 -arch=sm_${CUDA_ARCH:-90} -o build/bin/test_kernels tests/gpu/test_kernels.cu $O/common/cuda/device.o $O/common/cuda/csr.o \
    $O/cmrs/cuda.o $O/sellp/cuda.o $O/bellpack/cuda.o $O/bellpack/dictionary_kernels.o $O/auto/cuda.o -lcusparse >"$OUT/kernels-build.log" 2>&1; then
    build/bin/test_kernels >"$OUT/kernels.log" 2>&1
    grep '^not ok' "$OUT/kernels.log" | head -40
    grep -E '^ok gpu/(index-forms|out-of-memory|cusparse-csr-from-upload)' "$OUT/kernels.log" | sed -n '1,3p'
    tail -1 "$OUT/kernels.log"
    p=$(grep -c '^ok ' "$OUT/kernels.log")
    f=$(grep -c '^not ok ' "$OUT/kernels.log")
    pass=$((pass + p))
    fail=$((fail + f))
    [ "$p" -gt 0 ] || { fail=$((fail + 1)); echo "not ok kernels: no checks ran (see $OUT/kernels.log)"; }
  else
    tail -20 "$OUT/kernels-build.log"
    fail=$((fail + 1))
    echo "not ok kernels: build failed (see $OUT/kernels-build.log)"
  fi
fi

# --- 4. ex45 N^3 with -log_view: where the first build's time goes ---------------------------------
# "seconds/count" of event $2 in log $1 (time: max over ranks, all calls), or "-" when it is not there
event() { awk -v e="$2" '$1 == e {printf "%.4f/%d\n", $4, $2; found = 1} END {if (!found) print "-"}' "$1" | tail -1; }
seconds() { echo "${1%/*}" | sed 's/^-$/0/'; }
if ! skipped ex45; then
  echo "# ex45 ${N}^3, CG + Jacobi, 10 iterations, -log_view (seconds)"
  printf "%-14s %12s %12s %12s %12s %12s %12s %9s %9s\n" type AssemblyEnd CopyToGPU Convert Upload Structure Scatter total aijcusp. | tee "$OUT/ex45-summary.txt"
  ref_total=
  # sellpcuda:host is sellpcuda converted on the host and uploaded in its format (-mat_gpumats_build
  # host); <type>:use builds at the first use after an assembly (-mat_gpumats_build_at use) instead
  # of inside each MatAssemblyEnd. -ksp_view_mat shows the format after the solve (a -mat_view
  # would build the copy at each assembly: a view is a use)
  # sellpcuda:t1 stages its uploads with one host thread (-mat_gpumats_upload_threads 1)
  for spec in aijcusparse $TYPES sellpcuda:host sellpcuda:use cmrscuda:use autocuda:use sellpcuda:t1; do
    t=${spec%:*}
    extra=
    [ "$spec" != "${spec%:host}" ] && extra="-mat_gpumats_build host"
    [ "$spec" != "${spec%:use}" ] && extra="-mat_gpumats_build_at use"
    [ "$spec" != "${spec%:t1}" ] && extra="-mat_gpumats_upload_threads 1"
    log=$OUT/ex45-${spec/:/-}.log
    if build/bin/tutorial-ex45 -dll_append "$PWD/lib/libpetscgpumats.so" -dm_mat_type $t -dm_vec_type cuda -da_grid_x $N -da_grid_y $N -da_grid_z $N \
      -ksp_type cg -pc_type jacobi -ksp_max_it 10 -ksp_converged_reason -ksp_view_mat ::ascii_info -log_view -log_view_gpu_time $extra >"$log" 2>&1 && grep -q -E 'CONVERGED|DIVERGED_ITS' "$log"; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "not ok ex45/$spec: exit or convergence (see $log)"
    fi
    fmt=$(echo "${t%cuda}" | tr a-z A-Z)
    asm=$(event "$log" MatAssemblyEnd)
    copy=$(event "$log" MatCUSPARSCopyTo)
    conv=$(event "$log" "${fmt}Convert")
    up=$(event "$log" GpuMatsUpload)
    st=$(event "$log" GpuMatsStructure)
    sc=$(event "$log" GpuMatsScatter)
    if [ "$t" = aijcusparse ]; then
      total=$(awk -v a="$(seconds "$asm")" -v c="$(seconds "$copy")" 'BEGIN {printf "%.4f", a + c}')
      ref_total=$total
    elif [ "$spec" != "${spec%:use}" ]; then # built at the first use, outside MatAssemblyEnd
      total=$(awk -v a="$(seconds "$asm")" -v c="$(seconds "$conv")" 'BEGIN {printf "%.4f", a + c}')
    else
      total=$(seconds "$asm") # the conversions are inside MatAssemblyEnd
    fi
    printf "%-14s %12s %12s %12s %12s %12s %12s %9s %9s\n" "$spec" "$asm" "$copy" "$conv" "$up" "$st" "$sc" "$total" "${ref_total:--}" | tee -a "$OUT/ex45-summary.txt"
  done
  echo "# seconds/calls; total: MatAssemblyEnd (ours: the conversions inside) + MatCUSPARSCopyTo (aijcusparse); :use rows (built at the first"
  echo "# use, here PCJacobi's MatGetDiagonal) MatAssemblyEnd + <FORMAT>Convert. ex45 assembles twice (DMCreateMatrix's zeros, then its"
  echo "# values): a copy built at assembly is built twice, one built at first use once."
  echo "# The format lines of -ksp_view_mat are in $OUT/ex45-<type>.log"
fi

# --- 4b. values_update: new values in the same pattern ------------------------------------------
# examples/values_update.c: the ex45 matrix (N^3) assembled and multiplied once, then new values set
# with MatSetValues, assembled and multiplied VALUES_UPDATES times (default 5). Per update, from the
# stage "Updates" of -log_view: aijcusparse's MatAssemblyEnd + MatCUSPARSCopyTo (its values copy, at
# the product), ours MatAssemblyEnd (the update inside: GpuMatsValues with -mat_gpumats_values_update
# auto, <FORMAT>Convert with rebuild); first: the same for the stage "First build"; ||A 1|| must be
# the same for every run.
# "seconds/count" of event $3 in stage $2 of log $1
stage_event() { awk -v s="$2" -v e="$3" '/^--- Event Stage/ {in_s = index($0, ": " s) > 0} in_s && $1 == e {printf "%.4f/%d\n", $4, $2; found = 1} END {if (!found) print "-"}' "$1" | tail -1; }
if ! skipped values; then
  K=${VALUES_UPDATES:-5}
  make -j"$(nproc)" build/bin/values_update >>"$OUT/build.log" 2>&1 || echo "not ok values_update: build (see $OUT/build.log)"
  echo "# values_update ${N}^3, $K updates of the values, -log_view (seconds per update; first: the first build)"
  printf "%-22s %10s %10s %10s %10s %12s %10s %18s\n" type AssemblyEnd CopyToGPU Values Convert "per update" first "||A 1||" | tee "$OUT/values-summary.txt"
  norm_ref=
  for spec in aijcusparse $(for t in $TYPES; do echo $t:auto $t:rebuild; done); do
    t=${spec%:*}
    extra=
    [ "$t" != aijcusparse ] && extra="-mat_gpumats_values_update ${spec#*:}"
    log=$OUT/values-${spec/:/-}.log
    if ! build/bin/values_update -dll_append "$PWD/lib/libpetscgpumats.so" -n $N -updates $K -mat_type $t $extra -log_view -log_view_gpu_time >"$log" 2>&1; then
      fail=$((fail + 1))
      echo "not ok values/$spec: exit (see $log)"
      continue
    fi
    fmt=$(echo "${t%cuda}" | tr a-z A-Z)
    asm=$(stage_event "$log" Updates MatAssemblyEnd)
    copy=$(stage_event "$log" Updates MatCUSPARSCopyTo)
    vals=$(stage_event "$log" Updates GpuMatsValues)
    conv=$(stage_event "$log" Updates "${fmt}Convert")
    per=$(awk -v a="$(seconds "$asm")" -v c="$(seconds "$copy")" -v k=$K 'BEGIN {printf "%.4f", (a + c) / k}')
    first=$(awk -v a="$(seconds "$(stage_event "$log" "First build" MatAssemblyEnd)")" -v c="$(seconds "$(stage_event "$log" "First build" MatCUSPARSCopyTo)")" 'BEGIN {printf "%.4f", a + c}')
    norm=$(sed -n 's/^||A 1|| after the last update: //p' "$log")
    [ -z "$norm_ref" ] && norm_ref=$norm
    if [ -n "$norm" ] && [ "$norm" = "$norm_ref" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "not ok values/$spec: ||A 1|| $norm, aijcusparse's $norm_ref"; fi
    printf "%-22s %10s %10s %10s %10s %12s %10s %18s\n" "$spec" "$asm" "$copy" "$vals" "$conv" "$per" "$first" "$norm" | tee -a "$OUT/values-summary.txt"
  done
  echo "# seconds/calls in the stage Updates; per update: (MatAssemblyEnd + MatCUSPARSCopyTo) / $K; :auto, :rebuild: -mat_gpumats_values_update"
fi

# --- 5. bench: conversion + first MatMult --------------------------------------------------------
if ! skipped bench; then
  echo "# bench -matrix poisson7 -n $N: conv(ms) = MatConvert + MatSetFromOptions + first MatMult"
  log=$OUT/bench.log
  build/bin/bench -matrix poisson7 -n $N -types aijcusparse,$(echo $TYPES | tr ' ' ',') -baselines 0 -transpose 0 -warmup 3 -reps 20 \
    -csv "$OUT/bench.csv" >"$log" 2>&1
  rc=$?
  grep -E '^(type|aijcusparse|sellpcuda|cmrscuda|bellpackcuda|autocuda) ' "$log" | cut -c1-170
  if [ $rc = 0 ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "not ok bench: exit $rc (see $log)"
    grep -E 'FAILED|skipped' "$log" | head -5
  fi
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
