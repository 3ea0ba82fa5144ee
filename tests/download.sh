#!/usr/bin/env bash
# Checks the download path of config/build-petsc-cuda.sh without building anything: the PETSc
# sdist comes from PyPI (network needed) into a temporary folder, and must be a gzip tar holding
# petsc-3.25.4/configure. Prints "ok download-petsc-sdist" or "not ok download-petsc-sdist: <why>".
set -u
cd "$(dirname "$0")/.."

NAME=download-petsc-sdist
VERSION=3.25.4 # build-petsc-cuda.sh's default release; the check is of that default, so none is passed
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() {
  echo "not ok $NAME: $1"
  exit 1
}

tarball=$(env -u PETSC_VERSION -u PETSC_TARBALL bash config/build-petsc-cuda.sh --download-only "$TMP/sdist" 2>"$TMP/log") ||
  fail "build-petsc-cuda.sh --download-only failed: $(tail -3 "$TMP/log" | tr '\n' ' ')"
[ "$tarball" = "$TMP/sdist/petsc-$VERSION.tar.gz" ] || fail "expected the path $TMP/sdist/petsc-$VERSION.tar.gz on stdout, got '$tarball'"
[ -s "$tarball" ] || fail "$tarball does not exist or is empty"
gzip -t "$tarball" 2>"$TMP/gz" || fail "$tarball is not gzip data: $(head -1 "$TMP/gz")"
tar -tzf "$tarball" >"$TMP/list" 2>"$TMP/tar" || fail "$tarball is not a tar archive: $(head -1 "$TMP/tar")"
grep -qx "petsc-$VERSION/configure" "$TMP/list" || fail "$tarball has no petsc-$VERSION/configure"
echo "ok $NAME"
