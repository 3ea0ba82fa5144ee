#!/usr/bin/env bash
# make tune: calibrates the library on the GPU at hand, one file per GPU model (a new measurement
# of a model replaces its file):
#   - autocuda's model (config/tuning/fit.py says what it measures): examples/bench.cu on the six
#     generated families with the formats autocuda picks among, into autocuda-<gpu>.csv, and
#     src/mat/impls/auto/model.hpp regenerated from every such file;
#   - CMRS's kernel and strip height for even rows (config/tuning/cmrs_fit.py): every kernel at
#     heights 4, 8 and 16 on the same families (examples/cmrs_variants.sh), into
#     cmrs-kernels-<gpu>.csv, and src/mat/impls/cmrs/tuned.hpp regenerated;
#   - BELLPACK's execution-time model (config/tuning/bellpack_fit.py): the paper's offline
#     benchmarks (bellpack_model.cu) into bellpack-model-<gpu>.csv, and
#     src/mat/impls/bellpack/model.hpp regenerated.
# `make tune` then rebuilds the library, which uses them on this GPU model (-mat_view and -info say
# which ones a run used). A few minutes on one GPU; TUNE_ARGS passes more options to the
# autocuda benchmark (e.g. -reps 200).
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
echo "tune: CMRS kernels"
CMRS_VARIANTS_BUILD=0 CMRS_VARIANTS_OUT="$tmp/cmrs" bash examples/cmrs_variants.sh >"$tmp/cmrs.log" 2>&1 ||
  { tail -20 "$tmp/cmrs.log" >&2; echo "tune: the CMRS kernel sweep failed" >&2; exit 1; }
echo "tune: BELLPACK's model"
"$BIN/bellpack-model" >"$tmp/bellpack.csv" 2>"$tmp/bellpack.log" || { tail -20 "$tmp/bellpack.log" >&2; echo "tune: the BELLPACK benchmarks failed" >&2; exit 1; }
gpu=$(python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["gpu"])' "$tmp/run.csv")
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')
out=config/tuning/autocuda-$slug.csv
cp "$tmp/run.csv" "$out"
cp "$tmp"/cmrs/variants-*.csv "config/tuning/cmrs-kernels-$slug.csv"
cp "$tmp/bellpack.csv" "config/tuning/bellpack-model-$slug.csv"
python3 config/tuning/fit.py config/tuning/autocuda-*.csv >"$tmp/model.hpp"
python3 config/tuning/cmrs_fit.py config/tuning/cmrs-kernels-*.csv >"$tmp/tuned.hpp"
python3 config/tuning/bellpack_fit.py config/tuning/bellpack-model-*.csv >"$tmp/bellpack.hpp"
cp "$tmp/model.hpp" src/mat/impls/auto/model.hpp
cp "$tmp/tuned.hpp" src/mat/impls/cmrs/tuned.hpp
cp "$tmp/bellpack.hpp" src/mat/impls/bellpack/model.hpp
echo "tune: $gpu measured into $out, config/tuning/cmrs-kernels-$slug.csv and bellpack-model-$slug.csv;"
echo "tune: auto/model.hpp, cmrs/tuned.hpp and bellpack/model.hpp regenerated (make lib rebuilds the library with them)"
