#!/usr/bin/env bash
# make tune: calibrates autocuda's model on the GPU at hand (config/tuning/fit.py says what it
# measures). Runs examples/bench.cu on the six generated families with the formats autocuda picks
# among, writes config/tuning/autocuda-<gpu>.csv (one file per GPU model: a new measurement of a
# model replaces its file) and regenerates src/mat/impls/auto/model.hpp from every such file; `make
# tune` then rebuilds the library, whose autocuda uses this calibration on this GPU model
# (-mat_view and -info say which one a run used). A few minutes on one GPU; TUNE_ARGS passes more options to the
# benchmark (e.g. -reps 200).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
BIN=${BINDIR:-build/bin}
[ -x "$BIN/bench" ] || { echo "tune: no $BIN/bench (make tune builds it)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the kernels of the model's four formats, as autocuda builds them (fit.py reads these rows; raw
# cuSPARSE CSR comes with the benchmark's baselines), and autocuda restricted to CSR: its conversion
# time is what the others' builds are measured against (fit.py's build_ns_per_nnz)
types=aijcusparse,cmrscuda,sellpcuda,bellpackcuda,autocuda:csr
for family in poisson7 poisson27 block3 random4 random16 powerlaw; do
  echo "tune: $family"
  "$BIN/bench" -matrix "$family" -types "$types" -csr_mat_autocuda_formats csr -baselines 1 -transpose 0 -csv "$tmp/run.csv" ${TUNE_ARGS:-} >"$tmp/$family.log" 2>&1 ||
    { tail -20 "$tmp/$family.log" >&2; echo "tune: the benchmark failed on $family" >&2; exit 1; }
done
gpu=$(python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["gpu"])' "$tmp/run.csv")
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')
out=config/tuning/autocuda-$slug.csv
cp "$tmp/run.csv" "$out"
python3 config/tuning/fit.py config/tuning/autocuda-*.csv >"$tmp/model.hpp"
cp "$tmp/model.hpp" src/mat/impls/auto/model.hpp
echo "tune: $gpu measured into $out; src/mat/impls/auto/model.hpp regenerated (make lib rebuilds the library with it)"
