# Sourced by tests/run.sh and tests/gpu/run.sh: GPUMATS_RESUME=1 continues a suite that a time
# limit stopped. A unit (one program run: a PETSc-level test, a kernel-test shard, a memcheck part;
# in tests/run.sh also a tutorial case or an option check, whose output is kept and replayed)
# that passed leaves LOG.passed holding the build's fingerprint, an md5 of the library, of every
# program under build/bin and of the two scripts that say what each unit runs and checks
# (tests/run.sh, tests/gpu/run.sh); with GPUMATS_RESUME=1 a unit whose log passed under the same
# fingerprint is counted from its log instead of run again. Any changed library, test program or
# script changes the fingerprint, so nothing of another build is kept. Without GPUMATS_RESUME every
# unit runs.
# (The caller computes the fingerprint once its programs are built; an exported one is kept, so
# the parts of a suite run side by side share the fingerprint of the build they started from.)
build_fingerprint() {
  [ -n "${GPUMATS_FINGERPRINT:-}" ] && return
  GPUMATS_FINGERPRINT=$(cat "${GPUMATS_LIBDIR:-lib}/libpetscgpumats.so" "${GPUMATS_BUILD:-build}"/bin/* tests/run.sh tests/gpu/run.sh 2>/dev/null | md5sum | cut -c1-32)
  export GPUMATS_FINGERPRINT
}
# resumed LOG: true when resuming and LOG's unit passed under this build's fingerprint
resumed() { [ "${GPUMATS_RESUME:-0}" = 1 ] && [ -n "${GPUMATS_FINGERPRINT:-}" ] && [ "$(cat "$1.passed" 2>/dev/null)" = "$GPUMATS_FINGERPRINT" ]; }
# record_unit LOG PASSED(0|1): LOG's unit passed (kept for a later GPUMATS_RESUME=1 run) or not
record_unit() { if [ "$2" = 1 ] && [ -n "${GPUMATS_FINGERPRINT:-}" ]; then echo "$GPUMATS_FINGERPRINT" >"$1.passed"; else rm -f "$1.passed"; fi; }
# add_last_counts LOG: adds the "N passed, M failed" of LOG's last line to the caller's pass and
# fail (a last line without them counts as one failure: the run stopped before its summary)
add_last_counts() {
  local last p f
  last=$(tail -1 "$1" 2>/dev/null)
  p=$(grep -oE '^[0-9]+ passed' <<<"$last" | grep -oE '^[0-9]+')
  f=$(grep -oE '[0-9]+ failed' <<<"$last" | grep -oE '^[0-9]+')
  pass=$((pass + ${p:-0})) fail=$((fail + ${f:-1}))
}
