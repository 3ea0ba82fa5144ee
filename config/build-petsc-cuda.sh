#!/usr/bin/env bash
# Builds a CUDA-enabled PETSc for petsc-gpumats on a machine with the CUDA toolkit, from the PETSc
# source that PyPI distributes (the `petsc` sdist), with the flags measured on an H200 in
# docs (about 90 s on 16 cores). Idempotent: an existing build is reused.
#
#   bash config/build-petsc-cuda.sh          # prints: export PETSC_DIR=... PETSC_ARCH=...
#   eval "$(bash config/build-petsc-cuda.sh | tail -1)"; make lib
#
# Environment:
#   PETSC_VERSION   release to build (default 3.25.4; CUDA 13 needs 3.24 or newer)
#   PETSC_PREFIX    where the source tree goes (default: .petsc in this repository)
#   PETSC_TARBALL   a petsc-<version>.tar.gz already at hand (default: .carry/ or a pip download)
#   CUDA_ARCH       compute capability without the dot (default 90: H100/H200)
#   MPI_DIR         MPI installation (default /usr)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${PETSC_VERSION:-3.25.4}
PREFIX=${PETSC_PREFIX:-$PWD/.petsc}
ARCH=arch-cuda
CUDA_ARCH=${CUDA_ARCH:-90}
MPI_DIR=${MPI_DIR:-/usr}
DIR=$PREFIX/petsc-$VERSION
JOBS=$(nproc)

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
    echo "petsc-gpumats: downloading the PETSc $VERSION source from PyPI" >&2
    python3 -m pip download --no-deps --no-binary :all: "petsc==$VERSION" -d "$PREFIX" >&2
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
