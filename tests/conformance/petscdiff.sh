#!/usr/bin/env bash
# PETSCDIFF for PETSc's test harness during a conformance run (tests/conformance/run.sh). The
# harness calls it as it calls petscdiff: `petscdiff.sh [petscdiff options] EXPECTED OUTPUT`, in the
# case's run folder, after the case's command succeeded.
#
#   reference run (CONFORMANCE_RUN=ref): keeps OUTPUT, through the case's own filter, as the expected
#     output of the runs with our types, then compares with EXPECTED as petscdiff would (that result
#     is informational only: the reference type swapped in may legitimately change what a case prints);
#   run with one of our types: compares OUTPUT with the reference run's output of the same case, with
#     the case's own filters, by PETSc's petscdiff (its rules: text and integers exact, numbers with a
#     decimal point or an exponent not compared). If they differ, the case still passes where OUTPUT
#     equals EXPECTED, an output PETSc ships for the case; else compares once more after the
#     accepted differences (accepted.sh) are taken out of both; then the case passes, and the
#     differences that applied are recorded in $CONFORMANCE_OUT/accepted.
#
# Environment (set by run.sh): CONFORMANCE_RUN (ref or the type), CONFORMANCE_REF (folder of the
# reference outputs), CONFORMANCE_OUT (this run's records), CONFORMANCE_PETSCDIFF (PETSc's petscdiff),
# CONFORMANCE_OURS and CONFORMANCE_REF_AIJ (see accepted.sh).
set -u
: "${CONFORMANCE_RUN:?}" "${CONFORMANCE_REF:?}" "${CONFORMANCE_OUT:?}" "${CONFORMANCE_PETSCDIFF:?}"

all=("$@")
filter='' filter_output='' plain=()
while getopts "f:F:hjJ:kmM" opt; do # petscdiff's options
  case $opt in
  F) filter=$OPTARG ;;        # applies to OUTPUT
  f) filter_output=$OPTARG ;; # applies to EXPECTED
  j) plain+=(-j) ;;           # a case that compares its numbers too
  J) plain+=(-J "$OPTARG") ;;
  *) ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || exec "$CONFORMANCE_PETSCDIFF" "${all[@]}"
output=$2
flags=("${all[@]:0:${#all[@]}-2}")

# Which case this is: the harness writes every command it runs to "<tap label>.sh" in the run folder
# just before running it, so the newest diff-*.sh names this diff. The output file's name is not
# enough: the cases of a loop in the test specification ({{a b}}) share one output file.
label=$(ls -t -- diff-*.sh 2>/dev/null | head -1)
label=${label%.sh}
label=${label#diff-}
[ -n "$label" ] || { echo "conformance: no diff-*.sh in $PWD to name the case"; exit 1; }

# the same filter the case applies to its output (petscdiff's filter_file)
filtered() { # file command
  if [ -n "$2" ]; then eval "cat \"\$1\" | $2"; else cat "$1"; fi
}

if [ "$CONFORMANCE_RUN" = ref ]; then
  mkdir -p "$CONFORMANCE_REF"
  filtered "$output" "$filter" >"$CONFORMANCE_REF/$label.out"
  exec "$CONFORMANCE_PETSCDIFF" "${all[@]}"
fi

ref=$CONFORMANCE_REF/$label.out
[ -f "$ref" ] || { echo "conformance: the reference run left no output for $label"; exit 1; }
"$CONFORMANCE_PETSCDIFF" "${flags[@]}" "$ref" "$output" >/dev/null 2>&1 && exit 0

# They differ. Both sides filtered as petscdiff filters them, then the accepted differences.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
filtered "$ref" "$filter_output" >"$tmp/ref"
filtered "$output" "$filter" >"$tmp/ours"
applied=()
expected=${all[${#all[@]}-2]}
filtered "$expected" "$filter_output" >"$tmp/exp" 2>/dev/null || : >"$tmp/exp"
accept() { # name reason sed-script [case-glob]
  # shellcheck disable=SC2053 # the glob is meant to match
  [ -n "${4:-}" ] && [[ $label != $4 ]] && return 0
  local side changed=0
  sed -E "$3" "$tmp/exp" >"$tmp/exp.next" && mv "$tmp/exp.next" "$tmp/exp"
  for side in ref ours; do
    sed -E "$3" "$tmp/$side" >"$tmp/$side.next"
    cmp -s "$tmp/$side" "$tmp/$side.next" || changed=1
    mv "$tmp/$side.next" "$tmp/$side"
  done
  [ $changed = 1 ] && applied+=("$1")
  return 0
}
# shellcheck source=accepted.sh
. "$(dirname "$0")/accepted.sh"

mkdir -p "$CONFORMANCE_OUT/diffs"
if "$CONFORMANCE_PETSCDIFF" "${plain[@]}" "$tmp/ref" "$tmp/ours" >/dev/null 2>&1; then
  echo "$label ${applied[*]}" >>"$CONFORMANCE_OUT/accepted"
  echo "conformance: differs from the reference run only by accepted differences: ${applied[*]}"
  exit 0
fi
# Not what the reference type printed, but one of the outputs PETSc ships for this case (its .out or
# an _alt.out: the harness calls this once per file until one passes), the same accepted differences
# set aside: PETSc's own test passes. A case keeps several outputs where its iteration counts follow
# the summation order (Newton steps with finite-difference Jacobians: snes ex19_tut_3, ts ex12_2),
# one per order PETSc has met, and our MatMult sums in another order than the reference type's. Lines
# that the reference run prints too and the shipped output lacks are this PETSc's, not ours (the
# view of a newer hypre), and are set aside as well.
mask() { # petscdiff's masking of numbers with a decimal point or an exponent
  if [ ${#plain[@]} -gt 0 ]; then cat "$1"; return; fi
  sed -e "s/< [-+ ]*[0-9][0-9]*\.*[0-9]*[eE][-+][0-9][0-9]*/XXX/g" "$1" |
    sed -e "s/[-+ ]*[-]*[0-9][0-9]*\.*[0-9]*[eE][-+][0-9][0-9]*/XXX/g" |
    sed -e "s/[-+ ]*[-]*[0-9][0-9]*\.[0-9]*/XXX/g" -e "s/ \*\*\*\*\*\*\*\*\* /XXX/g"
}
only_this_petsc() { # stdin: the lines of ours missing from the shipped output (masked)
  local l
  while IFS= read -r l; do
    grep -qxF -- "$l" "$tmp/ref.masked" && ! grep -qxF -- "$l" "$tmp/exp.masked" || return 1
  done
}
mask "$tmp/ref" >"$tmp/ref.masked"
mask "$tmp/ours" >"$tmp/ours.masked"
if [ -s "$tmp/exp" ]; then
  mask "$tmp/exp" >"$tmp/exp.masked"
  extra=$(diff -w --unchanged-line-format='' --old-line-format='<%L' --new-line-format='>%L' "$tmp/exp.masked" "$tmp/ours.masked")
  if ! grep -q '^<' <<<"$extra" && grep '^>' <<<"$extra" | cut -c2- | only_this_petsc; then
    echo "$label PETSc's-expected-output:${expected##*/} ${applied[*]}" >>"$CONFORMANCE_OUT/accepted"
    echo "conformance: differs from the reference run, equals PETSc's expected output ${expected##*/} (accepted: ${applied[*]})"
    exit 0
  fi
fi

# Where the reference type itself departs from the output PETSc ships, ours may agree with that
# output instead: aijcusparse's ksp ex56_latebs stops at iteration 2 (DIVERGED_INDEFINITE_PC) where
# ex56_latebs.out and ours converge in 29, and its block Jacobi block views lack the "bs=4" that
# ex19_tut_1.out and ours print. The case passes when every line where ours differs from the
# reference run is the shipped output's and the reference's line there is not (numbers masked as
# petscdiff masks them; shipped_where_ref_departs.py).
if [ -s "$tmp/exp" ] && python3 "$(dirname "$0")/shipped_where_ref_departs.py" "$tmp/ref.masked" "$tmp/ours.masked" "$tmp/exp.masked"; then
  echo "$label PETSc's-expected-output-where-the-reference-departs:${expected##*/} ${applied[*]}" >>"$CONFORMANCE_OUT/accepted"
  echo "conformance: differs from the reference run where the reference run departs from PETSc's expected output ${expected##*/}, and agrees with that output there (accepted: ${applied[*]})"
  exit 0
fi

# What is left after the accepted differences: the lines that petscdiff finds different ("<" the
# reference type's, ">" ours), shown unmasked. Lines that differ only in masked numbers are left out:
# they are not what failed the case.
diff -w --unchanged-line-format='' --old-line-format='<%dn
' --new-line-format='>%dn
' "$tmp/ref.masked" "$tmp/ours.masked" |
  awk -v R="$tmp/ref" -v O="$tmp/ours" '
    BEGIN { while ((getline l < R) > 0) r[++nr] = l; while ((getline l < O) > 0) o[++no] = l }
    /^</ { print "< " r[substr($0, 2) + 0] }
    /^>/ { print "> " o[substr($0, 2) + 0] }' | tee "$CONFORMANCE_OUT/diffs/$label.diff"
exit 1
