# Sourced by tests/gpu/run.sh and suite_build.sh: build/bin/test_kernels made by the makefile (the
# library's nvcc flags, linked with the kernels' objects that make compiled); left as it is when
# newer than all of them, so that parts of the suite run side by side do not rewrite the program
# another is running. Returns nonzero (the log's tail printed) when the build fails.
link_test_kernels() {
  local log=build/test-logs/kernels-build.log
  mkdir -p build/test-logs
  make -s build/bin/test_kernels >$log 2>&1 || { tail -20 $log; return 1; }
}
