# Sourced by examples/bench_all.sh and examples/profile_kernels.sh: the tiny -n of each generated
# family for their *_SMALL=1 runs (which check the scripts, not the GPU).
small_n() {
  case $1 in
    poisson7 | shuffled7) echo "-n 20" ;;
    poisson27) echo "-n 12" ;;
    block3) echo "-n 8" ;;
    *) echo "-n 20000" ;;
  esac
}
