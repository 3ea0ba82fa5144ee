// Offline benchmarks of the BELLPACK execution-time model (Choi, Singh and Vuduc, section 6.3):
// times the BELLPACK SpMV kernel on dense matrices stored in BELLPACK and derives, for every block
// size r x c (1..8 each) and partition size R (32..1024 threads), the model's constants:
//
//   phi0  = time of a (M*R*r) x c dense matrix: one partition per multiprocessor, one block each;
//           sigma1,o = phi0                                              (the base start-up cost)
//   phi1  = time of (M*R*r) x (c*beta):  gamma  = (phi1 - sigma1,o) / beta                  (15)
//   phiT  = time of (M*T*R*r) x (c*beta), T resident partitions per multiprocessor;
//           alpha per block = (phiT - phi1) / ((T - 1) * beta)                               (17)
//   phiT1 = time of (M*(T+1)*R*r) x (c*beta): gamma' = (phiT1 - phiT) / beta                 (16)
//
// M is the number of multiprocessors and T comes from the CUDA occupancy calculator for the
// kernel of that block size and R (the paper's equations 8-12). Writes one CSV row per (r, c, R)
// to stdout; config/tuning/bellpack_fit.py turns the CSV into src/mat/impls/bellpack/model.hpp.
//
//   make build/bin/bellpack-model && build/bin/bellpack-model > config/tuning/bellpack-model-<gpu>.csv
//
// PETSc-free: it links the CUDA layer of the library only.
#include "../../src/mat/impls/bellpack/device.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>

using namespace gpumats;

namespace {

constexpr int kBeta = 8, kWarmup = 3, kReps = 20;

void ok(cudaError_t e, const char *what)
{
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bellpack-model: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// mean time of one SpMV on a dense (block_rows*r) x (width*c) BELLPACK matrix, microseconds
double time_dense(std::int64_t block_rows, int width, const bellpack::Params &p, cudaEvent_t ev[2])
{
  auto        A = bellpack::dense_on_device<double>(block_rows, width, p);
  cuda::Buffer x(std::size_t(width) * p.c * sizeof(double)), y(std::size_t(block_rows) * p.r * sizeof(double));
  ok(cudaMemset(x.get(), 0, x.bytes()), "cudaMemset");
  Epilogue<double> ep{1.0, 0.0, nullptr, y.as<double>()};
  for (int k = 0; k < kWarmup; ++k) A->spmv(x.as<double>(), ep, nullptr);
  ok(cudaEventRecord(ev[0]), "cudaEventRecord");
  for (int k = 0; k < kReps; ++k) A->spmv(x.as<double>(), ep, nullptr);
  ok(cudaEventRecord(ev[1]), "cudaEventRecord");
  ok(cudaEventSynchronize(ev[1]), "cudaEventSynchronize");
  float ms = 0;
  ok(cudaEventElapsedTime(&ms, ev[0], ev[1]), "cudaEventElapsedTime");
  return 1e3 * double(ms) / kReps;
}

} // namespace

int main()
{
  int            dev = 0;
  cudaDeviceProp prop;
  ok(cudaGetDevice(&dev), "cudaGetDevice");
  ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  const std::int64_t M = prop.multiProcessorCount;
  cudaEvent_t        ev[2];
  ok(cudaEventCreate(&ev[0]), "cudaEventCreate");
  ok(cudaEventCreate(&ev[1]), "cudaEventCreate");
  char      date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));

  std::printf("gpu,date,sms,r,c,R,T,beta,phi0_us,phi1_us,phiT_us,phiT1_us,sigma1o_us,gamma_us,gammap_us,alpha_us\n");
  for (int r = 1; r <= bellpack::kMaxBlock; ++r)
    for (int c = 1; c <= bellpack::kMaxBlock; ++c)
      for (int R = 32; R <= 1024; R *= 2) {
        const bellpack::Params p{r, c, R};
        const int              T     = bellpack::resident_partitions<double>(p);
        const double           phi0  = time_dense(M * R, 1, p, ev);
        const double           phi1  = time_dense(M * R, kBeta, p, ev);
        const double           phiT  = time_dense(M * T * R, kBeta, p, ev);
        const double           phiT1 = time_dense(M * (T + 1) * R, kBeta, p, ev);
        const double           gamma = (phi1 - phi0) / kBeta, gammap = (phiT1 - phiT) / kBeta;
        const double           alpha = T > 1 ? (phiT - phi1) / ((T - 1) * double(kBeta)) : 0.0;
        std::printf("\"%s\",%s,%lld,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%.5f\n", prop.name, date, (long long)M, r, c, R, T, kBeta, phi0, phi1, phiT,
                    phiT1, phi0, gamma, gammap, alpha);
        std::fflush(stdout);
      }
  return 0;
}
