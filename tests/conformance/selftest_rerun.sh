#!/usr/bin/env bash
# run.sh's second run of PETSc's own type for cases whose output differs with ours, end to end on
# eight ksp ex2 cases with made-up differences (petscdiff.sh, in a copy, made to report them): a
# difference that PETSc's own type shows on its second run too is a failure marked unstable; one
# that it does not show is a failure; the untouched case passes. And the run once more of a case
# whose command stopped in Open MPI's start-up (once: passes on the second run; twice: fails), or
# ran past the time limit once, and none of a crash. The copy of run.sh works in a folder of its
# own. A second type (sellp), whose cases all pass, follows cmrs, so the runs again of one type
# must leave the next type's judgement intact. Then three runs of parts of a sharded selection: a
# part run again after another keeps its reference and pass. Prints "ok"/"not ok" per rule and
# "N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r tests/conformance "$tmp/conf"
python3 - "$tmp/conf/petscdiff.sh" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
inject = '''label0=$(ls -t -- diff-*.sh 2>/dev/null | head -1)
case "$CONFORMANCE_RUN:$label0" in
cmrs:diff-ksp_ksp_tutorials-ex2_1.sh | cmrs:diff-ksp_ksp_tutorials-ex2_2.sh | ref-again:diff-ksp_ksp_tutorials-ex2_1.sh)
  l=${label0%.sh}; l=${l#diff-}; mkdir -p "$CONFORMANCE_OUT/diffs"; printf '< a\\n> b\\n' >"$CONFORMANCE_OUT/diffs/$l.diff"; exit 1 ;;
esac
'''
assert 'all=("$@")\n' in s
open(p, "w").write(s.replace('all=("$@")\n', inject + 'all=("$@")\n', 1))
PY
python3 - tests/conformance/run.sh "$tmp/run.sh" "$PWD" "$tmp/conf" <<'PY'
import sys
src, dst, root, here = sys.argv[1:]
s = open(src).read()
for old, new in (('cd "$(dirname "$0")/../.."\n', "cd '%s'\n" % root), ('HERE=$ROOT/tests/conformance\n', "HERE='%s'\n" % here)):
    assert old in s, old
    s = s.replace(old, new, 1)
open(dst, "w").write(s)
PY
# Open MPI's start-up failing (the harness's case scripts take their mpiexec from PETSCMPIEXEC): the
# first time cmrs runs ex2_4, and every time cmrs runs ex2_5; cmrs's first run of ex2_bjacobi runs
# past the time limit; ex2_bjacobi_2 crashes with cmrs, and Open MPI logs an error of its own
# (the harness's time limit is Open MPI's MPIEXEC_TIMEOUT: a command past it runs under mpiexec)
mpiexec=$(grep -m1 '^MPIEXEC *=' "${PETSC_DIR:-/usr/lib/petsc}/lib/petsc/conf/petscvariables" | sed 's/^MPIEXEC *= *//')
cat >"$tmp/mpiexec" <<EOF
#!/usr/bin/env bash
case "\$CONFORMANCE_RUN:\$PWD" in
cmrs:*ex2_4) [ -e "$tmp/ex2_4.failed" ] || { touch "$tmp/ex2_4.failed"; echo "[vm:1] ORTE_ERROR_LOG: Error in file util/session_dir.c" >&2; echo "  orte_init failed" >&2; exit 1; } ;;
cmrs*:*ex2_5) echo "  orte_init failed" >&2; exit 1 ;;
cmrs*:*ex2_bjacobi_2) echo "[0]PETSC ERROR: Caught signal number 11 SEGV" >&2; echo "[vm:1] ORTE_ERROR_LOG: Out of resource in file util/show_help.c" >&2; exit 59 ;;
cmrs:*ex2_bjacobi) [ -e "$tmp/ex2_bjacobi.slow" ] || { touch "$tmp/ex2_bjacobi.slow"; exec $mpiexec -n 1 sleep 60; } ;;
esac
exec $mpiexec "\$@"
EOF
chmod +x "$tmp/mpiexec"
PETSCMPIEXEC=$tmp/mpiexec CONFORMANCE_TIMEOUT=15 CONFORMANCE_WORK=$tmp/work bash "$tmp/run.sh" --types "cmrs sellp" 'ksp_ksp_tutorials-ex2_[12345]' 'ksp_ksp_tutorials-ex2_bjacobi*' >"$tmp/log" 2>&1
rc=$?
pass=0 fail=0
expect() { # name pattern
  if grep -qE -- "$2" "$tmp/log"; then pass=$((pass + 1)); echo "ok $1"; else fail=$((fail + 1)); echo "not ok $1: no line matching '$2' ($(tail -1 "$tmp/log"))"; fi
}
expect "unstable with PETSc's own type too: a failure, marked" '^not ok cmrs ksp_ksp_tutorials-ex2_1: < a .*\(unstable: a second run with -mat_type aij'
expect "reproduced by PETSc's own type: a failure, not marked" '^not ok cmrs ksp_ksp_tutorials-ex2_2: < a \| > b$'
expect "no difference: passes" '^ok cmrs ksp_ksp_tutorials-ex2_3$'
expect "stopped once in MPI's start-up: run again, passes" '^ok cmrs ksp_ksp_tutorials-ex2_4 # its first run stopped in Open MPI.s start-up, its second passed$'
expect "stopped twice in MPI's start-up: a failure" '^not ok cmrs ksp_ksp_tutorials-ex2_5: .*\(its first run stopped in Open MPI.s start-up too\)$'
expect "past the time limit once: run again alone, passes" '^ok cmrs ksp_ksp_tutorials-ex2_bjacobi # its first run ran past the time limit beside other cases, its second passed$'
expect "a crash that Open MPI logs an error about: a failure, not run again" '^not ok cmrs ksp_ksp_tutorials-ex2_bjacobi_2: Error code: 59[^(]*$'
expect "a type after one whose case ran again: its summary, printed after the runs again" '^# sellp: 8 passed \(.*\), 0 failed'
expect "the summary counts four as failed, one unstable" '^12 passed, 4 failed, 0 known failures .*; of the failed, 1 unstable with PETSc.s own type$'
if [ $rc != 0 ]; then pass=$((pass + 1)); echo "ok a failure makes the run fail"; else fail=$((fail + 1)); echo "not ok the run succeeded with a failure"; fi

# each part of a sharded selection keeps its records: after part 2, --resume on part 1 again reuses
# part 1's reference and pass (a copy of run.sh whose default records folder is under $tmp)
sed 's#\$ROOT/build/conformance/#'"$tmp"'/shards/#' "$tmp/run.sh" >"$tmp/run-shards.sh"
for part in 1/2 2/2 1/2; do
  bash "$tmp/run-shards.sh" --types sellp --resume --shard $part 'ksp_ksp_tutorials-ex2_[12]' >"$tmp/log" 2>&1
done
expect "a part run again after another: its reference kept" '^# reference: reusing the run of '
expect "a part run again after another: its pass kept" '^# sellp: reusing its pass of '
expect "a part run again after another: its own case" '^ok sellp ksp_ksp_tutorials-ex2_1$'
echo "$pass passed, $fail failed"
[ $fail = 0 ]
