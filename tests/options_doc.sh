#!/usr/bin/env bash
# docs/options.md against the code: every option that -help prints for the types under test is in
# the table with the right "-help" column, every option the table says -help prints is printed, and
# the table holds exactly the options named in src/ (those read directly, column "none", included).
# Usage: tests/options_doc.sh [types...] (default: the host types); *cuda types need a usable GPU.
# Prints "ok ..." / "not ok ..." lines. One ex2 run of 16 rows per type and one on 2 ranks.
set -u
# comm needs the order sort made; in a locale that skips punctuation (en_US.UTF-8) sorting
# "-opt column" lines puts -mat_gpumats_build_at before -mat_gpumats_build, which comm then rejects
export LC_ALL=C
cd "$(dirname "$0")/.."
BIN=${GPUMATS_BUILD:-build}/bin
LIB=$PWD/${GPUMATS_LIBDIR:-lib}/libpetscgpumats.so
DOC=docs/options.md
TYPES=${*:-$("$BIN/test_types" -list_host_types 2>/dev/null)}
TYPES=${TYPES:-cmrs sellp bellpack}
MPIEXEC=(mpiexec --oversubscribe)
[ "$(id -u)" = 0 ] && MPIEXEC+=(--allow-run-as-root)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
OURS='-mat_[a-z0-9]+_[a-z0-9_]+' # every option our sources name: -mat_gpumats_* and -mat_<format>_*

fails=0
check() { # name "list of problems"
  if [ -z "$2" ]; then echo "ok options-doc/$1"; else echo "not ok options-doc/$1: $(echo $2)"; fails=1; fi
}

# the table: "option help-column" per row
grep -E '^\| `-mat_' "$DOC" | sed -E 's/^\| `(-mat_[a-z0-9_]+)[^|]*\|.*\| *([a-z+]+) *\|$/\1 \2/' | sort -u >"$TMP/doc"
check "table-rows" "$(grep -vE '^-mat_[a-z0-9_]+ (host\+gpu|gpu|mpi|none)$' "$TMP/doc")"
doc_with() { awk -v c="$1" '$2 == c {print $1}' "$TMP/doc"; }

# the source: every option name in an options call (PetscOptionsX and PetscOptionsGetX)
grep -rhoE "PetscOptions[A-Za-z]*\([^;]*\"$OURS\"" src | grep -oE "\"$OURS\"" | tr -d '"' | sort -u >"$TMP/src"
check "source-documented" "$(comm -23 "$TMP/src" <(cut -d' ' -f1 "$TMP/doc"))"
check "documented-in-source" "$(comm -13 "$TMP/src" <(cut -d' ' -f1 "$TMP/doc"))"

# -help of each type on one rank, and of the first on two
help() { grep -oE "^ +-mat_(gpumats|$1)_[a-z0-9_]+" | tr -d ' ' | sort -u; } # (PETSc's own -mat_* options left out)
ran_gpu=0
for t in $TYPES; do
  if ! "$BIN/tutorial-ex2" -dll_append "$LIB" -m 4 -n 4 -mat_type "$t" -help >"$TMP/log" 2>&1; then
    check "help/$t" "ex2 -mat_type $t -help failed: $(grep -m1 'ERROR.*:' "$TMP/log" | tail -1)"
    continue
  fi
  base=${t%cuda}
  help "$base|$t" <"$TMP/log" >"$TMP/help-$t"
  case $t in *cuda) ran_gpu=1 ;; esac
  # expected: the common host+gpu options, this format's, and the gpu ones for *cuda types
  { doc_with host+gpu | grep -E "^-mat_(gpumats|$base|$t)_"
    case $t in *cuda) doc_with gpu | grep -E "^-mat_(gpumats|$base|$t)_" ;; esac; } | sort -u >"$TMP/want-$t"
  check "help-in-doc/$t" "$(comm -23 "$TMP/help-$t" "$TMP/want-$t" | sed 's/$/ (printed by -help, not in docs\/options.md with this column)/')"
  check "doc-in-help/$t" "$(comm -13 "$TMP/help-$t" "$TMP/want-$t" | sed 's/$/ (in docs\/options.md, not printed by -help)/')"
done
t=${TYPES%% *}
# (rank 0's output alone, a file per rank by Open MPI's --output-filename: each rank prints its
# own blocks' -help, and on one stream the two ranks' lines interleave, at times mid-line)
if "${MPIEXEC[@]}" --output-filename "$TMP/ranks" -n 2 "$BIN/tutorial-ex2" -dll_append "$LIB" -m 4 -n 4 -mat_type "$t" -help >/dev/null 2>&1; then
  help "${t%cuda}|$t" < <(cat "$TMP"/ranks/*/rank.0/stdout) >"$TMP/help2"
  check "mpi-help/$t" "$(diff <(comm -23 "$TMP/help2" "$TMP/help-$t" 2>/dev/null) <(doc_with mpi | sort) | grep '^[<>]')"
else
  check "mpi-help/$t" "ex2 -mat_type $t -help on 2 ranks failed"
fi
# options read directly must not be in any -help output (else their column is wrong)
check "none-not-in-help" "$(cat "$TMP"/help-* "$TMP/help2" 2>/dev/null | sort -u | comm -12 - <(doc_with none | sort))"
[ "$ran_gpu" = 1 ] || echo "# options-doc: no *cuda type under test; the 'gpu' rows were checked against src/ only"
exit $fails
