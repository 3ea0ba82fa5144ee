# Sourced by tests/gpu/run.sh and parts.sh: links build/bin/test_kernels with the kernels' objects
# that make compiled (those of every .cu of the library), not compiling them again; left as it is
# when newer than all of them, so that parts of the suite run side by side do not rewrite the
# program another is running. Returns nonzero (the log's tail printed) when the link fails.
link_test_kernels() {
  local kobjs f stale=0
  kobjs=$(for f in src/mat/impls/*/*.cu src/mat/impls/common/cuda/*.cu; do f=${f#src/}; echo "build/obj/${f%.cu}.o"; done)
  for f in tests/gpu/test_kernels.cu $kobjs; do [ build/bin/test_kernels -nt "$f" ] || stale=1; done
  [ $stale = 1 ] || return 0
  mkdir -p build/bin build/test-logs build/obj/tests
  # (compiled apart from the link, with the library's --objdir-as-tempdir and -frandom-seed: the same
  # source gives the same program on every build, which the suite's resume marks rely on)
  local nvcc="${CUDA_DIR:-/usr/local/cuda}/bin/nvcc" log=build/test-logs/kernels-build.log
  { "$nvcc" -std=c++17 -O2 -arch=sm_${CUDA_ARCH:-90} --objdir-as-tempdir -frandom-seed=tests/gpu/test_kernels.cu -c tests/gpu/test_kernels.cu -o build/obj/tests/test_kernels.o &&
    "$nvcc" -arch=sm_${CUDA_ARCH:-90} -o build/bin/test_kernels build/obj/tests/test_kernels.o $kobjs -lcusparse; } >$log 2>&1 ||
    { tail -20 $log; return 1; }
}
