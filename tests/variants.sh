#!/usr/bin/env bash
# The plug-in against Debian's other builds of PETSc 3.18 (part of `make test`):
#   - 64-bit PetscInt: supported (the format copies keep 32-bit indices and refuse blocks too large
#     for them), so the PETSc-level tests must pass on 1 and 2 ranks;
#   - complex scalars: not supported, so every type must stop with a clear PETSc error.
# Each variant is built in its own directory (BUILD/LIBDIR) with the host glue only; the CUDA
# objects do not depend on PETSc and are covered by the main build. Prints "N passed, M failed".
set -u
cd "$(dirname "$0")/.."

P64=/usr/lib/petscdir/petsc64-3.18/x86_64-linux-gnu-real
PCX=/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-complex
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
mkdir -p build/test-logs

build_variant() { # name petsc_dir targets...
  local name=$1 dir=$2
  shift 2
  make -s -j"$(nproc)" BUILD="build/$name" LIBDIR="build/$name/lib" PETSC_DIR="$dir" PETSC_ARCH= GPUMATS_CUDA=0 "$@" \
    >"build/test-logs/variant-$name-build.log" 2>&1
}

if [ -f "$P64/lib/petsc/conf/petscvariables" ]; then
  echo "# PETSc with 64-bit indices ($P64)"
  if build_variant petsc64 "$P64" lib build/petsc64/bin/test_mult build/petsc64/bin/test_product build/petsc64/bin/test_convert build/petsc64/bin/test_update \
    build/petsc64/bin/test_ksp build/petsc64/bin/test_io build/petsc64/bin/test_types build/petsc64/bin/test_coo build/petsc64/bin/test_bind \
    build/petsc64/bin/test_inplace; then
    GPUMATS_BUILD=build/petsc64 GPUMATS_LIBDIR=build/petsc64/lib GPUMATS_SKIP="core tutorials options scaling variants conformance" bash tests/run.sh \
      >build/test-logs/variant-petsc64.log 2>&1
    grep -E '^not ok|^# test' build/test-logs/variant-petsc64.log
    read -r p f < <(tail -1 build/test-logs/variant-petsc64.log | awk '/passed/ {print $1, $3}')
    pass=$((pass + ${p:-0}))
    fail=$((fail + ${f:-1}))
    [ "${p:-0}" -gt 0 ] || notok "petsc64" "no checks ran (see build/test-logs/variant-petsc64.log)"
  else
    notok "petsc64/build" "$(tail -3 build/test-logs/variant-petsc64-build.log)"
  fi
else
  notok "petsc64" "Debian's libpetsc64-real3.18-dev is not installed (config/install-deps.sh installs it)"
fi

if [ -f "$PCX/lib/petsc/conf/petscvariables" ]; then
  echo "# PETSc with complex scalars ($PCX)"
  if build_variant complex "$PCX" lib build/complex/bin/test_mult; then
    for t in cmrs sellp bellpack; do
      log=build/test-logs/variant-complex-$t.log
      build/complex/bin/test_mult -types $t >"$log" 2>&1
      rc=$?
      if [ $rc != 0 ] && [ $rc -lt 128 ] && grep -q "supports real scalars only" "$log"; then ok "complex/$t refused with a clear error"
      else notok "complex/$t" "exit $rc, expected the real-scalars error (see $log)"; fi
    done
  else
    notok "complex/build" "$(tail -3 build/test-logs/variant-complex-build.log)"
  fi
else
  notok "complex" "Debian's libpetsc-complex3.18-dev is not installed (config/install-deps.sh installs it)"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
