#!/usr/bin/env bash
# The conformance comparison (petscdiff.sh with accepted.sh) judged on made-up outputs, so that a
# change to its rules cannot quietly accept what it must not: a case passes when our output equals
# the reference type's (numbers with a decimal point not compared, as PETSc's petscdiff compares),
# or differs only by the accepted differences, or equals the output PETSc ships for the case but for
# lines that the reference run prints too (this PETSc's); it fails on another iteration count,
# another integer, a line missing, or a line of its own.
# Prints "ok"/"not ok" per rule and "N passed, M failed". Needs PETSc's petscdiff (PETSC_DIR).
set -u
cd "$(dirname "$0")"
HERE=$PWD
PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}
export CONFORMANCE_PETSCDIFF=$PETSC_DIR/lib/petsc/bin/petscdiff
[ -x "$CONFORMANCE_PETSCDIFF" ] || { echo "not ok selftest: no petscdiff at $CONFORMANCE_PETSCDIFF"; echo "0 passed, 1 failed"; exit 1; }
# the GPU platform's names (the host's differ only in these patterns)
export CONFORMANCE_OURS="(cmrs|padsell|bellpack|auto)cuda" CONFORMANCE_REF_AIJ=cusparse
export CONFORMANCE_OURS_ROOT="(cmrs|sellp|bellpack|auto)cuda" CONFORMANCE_REF_ROOT=aijcusparse

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# One case: the reference type's output, the shipped output, ours; want: pass or fail.
judge() { # name want reference-output shipped-output our-output
  local name=$1 want=$2 dir=$work/$1 got
  mkdir -p "$dir/run"
  printf '%s\n' "$3" >"$dir/ref.txt"
  printf '%s\n' "$4" >"$dir/shipped.out"
  printf '%s\n' "$5" >"$dir/ours.txt"
  export CONFORMANCE_REF=$dir/refs CONFORMANCE_OUT=$dir/records
  (cd "$dir/run" && : >"diff-case_$1.sh" &&
    CONFORMANCE_RUN=ref bash "$HERE/petscdiff.sh" "$dir/shipped.out" "$dir/ref.txt" >/dev/null 2>&1
    CONFORMANCE_RUN=cmrscuda bash "$HERE/petscdiff.sh" "$dir/shipped.out" "$dir/ours.txt" >"$dir/said" 2>&1) && got=pass || got=fail
  if [ "$got" = "$want" ]; then
    pass=$((pass + 1))
    echo "ok $name ($want)"
  else
    fail=$((fail + 1))
    echo "not ok $name: wanted $want, got $got: $(head -3 "$dir/said" | paste -sd'|')"
  fi
}

REF="  0 KSP Residual norm 163.71
  1 KSP Residual norm 33.1799
  2 KSP Residual norm 0.00441654
Linear solve converged due to CONVERGED_RTOL iterations 2
    type: mpiaijcusparse
    package used to perform factorization: cusparse
      not using I-node routines"
SHIPPED="  0 KSP Residual norm 230.849
  1 KSP Residual norm 18.3653
Linear solve converged due to CONVERGED_RTOL iterations 1
    type: mpiaij
    package used to perform factorization: petsc
      using I-node routines: found 21 nodes, limit used is 5"

judge same-as-reference pass "$REF" "$SHIPPED" "${REF//163.71/163.70}"
judge type-names-accepted pass "$REF" "$SHIPPED" "${REF//mpiaijcusparse/mpiaijcmrscuda}"
judge own-view-lines-accepted pass "$REF" "$SHIPPED" "$REF
  CMRS (CUDA) diagonal blocks: strip height 8, entries sorted by column"
judge one-iteration-more fail "$REF" "$SHIPPED" "  0 KSP Residual norm 163.71
  1 KSP Residual norm 33.1799
  2 KSP Residual norm 0.1
  3 KSP Residual norm 0.00441654
Linear solve converged due to CONVERGED_RTOL iterations 3
    type: mpiaijcusparse
    package used to perform factorization: cusparse
      not using I-node routines"
judge another-integer fail "$REF" "$SHIPPED" "${REF//iterations 2/iterations 4}"
judge a-line-missing fail "$REF" "$SHIPPED" "$(grep -v 'package used' <<<"$REF")"
# the shipped output, plus a line that this PETSc prints and the shipped output lacks (the reference
# run prints it too: a newer hypre's view)
SHIPPED_HERE="$SHIPPED
    HYPRE BoomerAMG: newer option"
judge shipped-output-plus-this-petscs-line pass "$REF
    HYPRE BoomerAMG: newer option" "$SHIPPED" "${SHIPPED_HERE//1 KSP Residual norm 18.3653/1 KSP Residual norm 18.3775}"
judge shipped-output-one-iteration-less fail "$REF" "$SHIPPED" "$(grep -v '1 KSP Residual' <<<"$SHIPPED")"
judge shipped-output-plus-a-line-of-ours fail "$REF" "$SHIPPED" "$SHIPPED
    using something the reference does not"

# the reference type departs from the shipped output (it diverges, and its block view lacks the
# block size); ours agrees with the shipped output exactly there, and with the reference elsewhere
REF2="  0 KSP Residual norm 529.43
  1 KSP Residual norm 135.942
  Linear solve did not converge due to DIVERGED_INDEFINITE_PC iterations 2
    type: mpiaijcusparse
      not using I-node routines
          rows=9604, cols=9604"
SHIPPED2="  0 KSP Residual norm 529.43
  1 KSP Residual norm 135.942
  2 KSP Residual norm 269.201
  Linear solve converged due to CONVERGED_RTOL iterations 2
    type: mpiaij
      using I-node routines: found 2401 nodes, limit used is 5
          rows=9604, cols=9604, bs=4"
OURS2="  0 KSP Residual norm 529.43
  1 KSP Residual norm 135.942
  2 KSP Residual norm 269.201
  Linear solve converged due to CONVERGED_RTOL iterations 2
    type: mpiaijcmrscuda
      not using I-node routines
          rows=9604, cols=9604, bs=4"
judge shipped-where-the-reference-departs pass "$REF2" "$SHIPPED2" "$OURS2"
judge departs-where-the-reference-agrees-with-shipped fail "$REF2" "$SHIPPED2" "$(grep -v '1 KSP Residual' <<<"$OURS2")"
judge departs-from-reference-and-shipped fail "$REF2" "$SHIPPED2" "${OURS2//iterations 2/iterations 3}"
judge shipped-where-the-reference-departs-plus-a-line-of-ours fail "$REF2" "$SHIPPED2" "$OURS2
    using something the reference does not"
judge reference-departs-ours-with-it-elsewhere-not fail "$REF2" "$SHIPPED2" "${OURS2//, bs=4/, bs=2}"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
