// host_passes: times, on this CPU, the host passes over a CSR that the glue and the device builds
// make before (and around) a GPU build, on the matrix: a 7-point stencil on an n^3 grid
// (default n = 200: 8M rows, 56M nonzeros, 32-bit indices, as PETSc's SeqAIJ holds ex45's
// operator). PETSc-free; no GPU needed.
//
//   make host-passes                     (builds build/bin/host_passes and runs it)
//   build/bin/host_passes [n] [reps]
//
// Each line is the best of `reps` runs (default 3) in milliseconds. The first group is what the
// glue and the device builds computed on the host before issue 13 (the code of that time, replayed
// here); the second what a device build still computes on the host (sampled estimates only); the
// last what the host types compute.
#include "../src/mat/impls/bellpack/core.hpp"
#include "../src/mat/impls/cmrs/core.hpp"
#include "../src/mat/impls/common/core/transform.hpp"
#include "../src/mat/impls/sellp/core.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace gpumats;

namespace {

Csr<double> poisson7(std::int64_t n)
{
  Csr<double> A;
  A.nrows = A.ncols = n * n * n;
  A.row_ptr.assign(std::size_t(A.nrows + 1), 0);
  A.col_ind.reserve(std::size_t(7 * A.nrows));
  A.val.reserve(std::size_t(7 * A.nrows));
  for (std::int64_t z = 0, r = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x, ++r) {
        const std::int64_t nb[7] = {z > 0 ? r - n * n : -1, y > 0 ? r - n : -1, x > 0 ? r - 1 : -1, r, x < n - 1 ? r + 1 : -1, y < n - 1 ? r + n : -1,
                                    z < n - 1 ? r + n * n : -1};
        for (std::int64_t c : nb)
          if (c >= 0) A.col_ind.push_back(std::int32_t(c)), A.val.push_back(c == r ? 6.0 : -1.0);
        A.row_ptr[std::size_t(r + 1)] = std::int32_t(A.col_ind.size());
      }
  return A;
}

int reps = 3;

double best_ms(const std::function<void()> &f)
{
  double best = 1e300;
  for (int k = 0; k < reps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best          = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

volatile std::int64_t sink; // keeps results alive

// sellp::stored_entries as it was before issue 13: the sigma order (an identity permutation when
// sigma is 1) first, then the slices' longest rows through it
template <class V, class RI, class CI>
std::int64_t old_stored_entries(const CsrView<V, RI, CI> &A, const sellp::Params &p)
{
  const std::vector<std::int32_t> order = sellp::sigma_order(A, p.sigma);
  const std::int64_t              b = p.slice_height, t = p.threads_per_row;
  std::int64_t                    stored = 0;
  for (std::int64_t s0 = 0; s0 < A.nrows; s0 += b) {
    std::int64_t longest = 0;
    for (std::int64_t pos = s0; pos < std::min(A.nrows, s0 + b); ++pos) longest = std::max<std::int64_t>(longest, A.row_end(order[pos]) - A.row_begin(order[pos]));
    stored += (longest + t - 1) / t * t * b;
  }
  return stored;
}

void line(const char *what, double ms) { std::printf("  %-84s %9.2f ms\n", what, ms); }

} // namespace

int main(int argc, char **argv)
{
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 200;
  if (argc > 2) reps = std::atoi(argv[2]);
  const auto         t0 = std::chrono::steady_clock::now();
  const Csr<double>  C  = poisson7(n);
  const auto         A  = C.view();
  std::printf("7-point stencil on %lld^3: %lld rows, %lld nonzeros (built in %.0f ms); best of %d runs\n", (long long)n, (long long)A.nrows, (long long)A.nnz(),
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), reps);

  std::printf("before: host passes of a device build\n");
  double total_sellp = 0, total_cmrs = 0, total_bellpack = 0, total_auto = 0, ms;
  // every type but autocuda: BuildFromSeqAIJ's choose_split (longest row against the mean)
  ms = best_ms([&] { sink = choose_split(-1, A, false); });
  line("glue: choose_split (longest_row), sellpcuda/cmrscuda/bellpackcuda", ms);
  total_sellp += ms, total_cmrs += ms, total_bellpack += ms;
  // SELL-P resolve: stored_entries of the unsorted layout, b = 32, t = 1 (ex45's choice)
  ms = best_ms([&] { sink = old_stored_entries(A, sellp::Params{32, 1, 1, sellp::Index::k32}); });
  line("SELL-P resolve: stored_entries (sigma choice; sigma_order's iota + row loop)", ms);
  total_sellp += ms;
  // SELL-P build_on_device's host part: sigma_order, row lengths, slice pointers
  ms = best_ms([&] {
    const std::int64_t              b = 32, t = 1, ns = (A.nrows + b - 1) / b;
    const std::vector<std::int32_t> order = sellp::sigma_order(A, 1);
    std::vector<std::int32_t>       row_len(std::size_t(A.nrows)), sp(std::size_t(ns + 1), 0);
    for (std::int64_t s = 0; s < ns; ++s) {
      std::int64_t longest = 0;
      for (std::int64_t pos = s * b; pos < std::min(A.nrows, (s + 1) * b); ++pos) {
        row_len[pos] = std::int32_t(A.row_end(order[pos]) - A.row_begin(order[pos]));
        longest      = std::max<std::int64_t>(longest, row_len[pos]);
      }
      sp[s + 1] = checked_offset(sp[s] + (longest + t - 1) / t * t * b, "SELL-P");
    }
    sink = sp[ns];
  });
  line("SELL-P build_on_device (old): sigma_order, row lengths, slice pointers on the host", ms);
  total_sellp += ms;
  // CMRS build_on_device's host part: strip pointers (height 6 for mu = 7)
  ms = best_ms([&] {
    const std::int64_t        h = 6, ns = (A.nrows + h - 1) / h;
    std::vector<std::int32_t> sp(std::size_t(ns + 1), 0), snnz(static_cast<std::size_t>(ns));
    for (std::int64_t s = 0; s < ns; ++s) {
      const std::int64_t k = A.row_begin(std::min(A.nrows, (s + 1) * h)) - A.row_begin(s * h);
      snnz[s] = std::int32_t(k), sp[s + 1] = checked_offset(sp[s] + k, "CMRS");
    }
    sink = sp[ns];
  });
  line("CMRS build_on_device (old): strip pointers on the host (height 6)", ms);
  total_cmrs += ms;
  // BELLPACK's block-size choice, timed in both tables below: a device build still makes it on the host
  const auto bellpack_choice = [&] {
    double best = 1e300;
    int    br = 1, bc = 1;
    for (int r : {1, 2, 3, 4, 6, 8})
      for (int c : {1, 2, 3, 4, 6, 8}) {
        const double fill  = bellpack::block_fill(A, r, c, std::max<std::int64_t>(1, (A.nrows + r - 1) / r / 100));
        const double bytes = fill * (8 + 4.0 / double(r * c));
        if (bytes < best - 1e-12) best = bytes, br = r, bc = c;
      }
    sink = std::int64_t(1e6 * bellpack::block_fill(A, br, bc, std::max<std::int64_t>(1, (A.nrows + br - 1) / br / 100)));
  };
  // BELLPACK resolve with block size 1 (ex45): fill estimation of 36 block sizes, 1% samples,
  // then the partition model's fill of the chosen size
  ms = best_ms(bellpack_choice);
  line("BELLPACK resolve: block size by sampled fill (36 sizes, 1%) + partition model", ms);
  total_bellpack += ms;
  // BELLPACK build_on_device's host part: the sort of block rows by count, partition pointers
  {
    std::vector<std::int64_t> ptr(std::size_t(A.nrows + 1));
    for (std::int64_t i = 0; i <= A.nrows; ++i) ptr[i] = A.row_ptr[i];
    ms = best_ms([&] {
      const std::vector<std::int32_t> perm = bellpack::sort_by_count(ptr);
      const std::int64_t              R = 128, np = (A.nrows + R - 1) / R;
      std::vector<std::int32_t>       pp(std::size_t(np + 1), 0);
      for (std::int64_t q = 0; q < np; ++q) pp[q + 1] = checked_offset(pp[q] + (ptr[perm[q * R] + 1] - ptr[perm[q * R]]) * R, "BELLPACK");
      sink = pp[np];
    });
    line("BELLPACK build_on_device (old): block-row sort and partition pointers on the host", ms);
    total_bellpack += ms;
  }
  // autocuda: the model's inputs for SELL-P and CMRS (bs 1: no BELLPACK), then SELL-P's resolve again
  ms = best_ms([&] {
    const sellp::Params p{32, 1, 1, sellp::Index::k32};
    std::int64_t        s = 0;
    s += old_stored_entries(A, p);                              // predicted_bytes: resolve
    s += old_stored_entries(A, p);                              // predicted_bytes: itself
    s += old_stored_entries(A, p) + longest_row(A);             // critical_steps: resolve, then the longest row
    s += sellp::index16_fits_sampled(A, 32, 64);                   // banded or scattered
    for (std::int64_t r0 = 0; r0 < A.nrows; r0 += 6) s += A.row_begin(std::min(A.nrows, r0 + 6)) - A.row_begin(r0); // CMRS stored entries
    std::int64_t longest = 0;                                      // CMRS critical_steps: longest strip
    for (std::int64_t r0 = 0; r0 < A.nrows; r0 += 6) longest = std::max(longest, A.row_begin(std::min(A.nrows, r0 + 6)) - A.row_begin(r0));
    s += old_stored_entries(A, p);                              // the build of the pick: resolve
    sink = s + longest;
  });
  line("autocuda: predicted_bytes/critical_steps of sellp and cmrs, then sellp's resolve", ms);
  total_auto += ms;
  // csr_to_device (autocuda's cuSPARSE candidate): validate_csr and the 32-bit copies
  ms = best_ms([&] { validate_csr(A, "CSR"); });
  line("validate_csr (host from_csr; autocuda's cuSPARSE candidate)", ms);
  std::printf("  totals: sellpcuda %.1f ms, cmrscuda %.1f ms, bellpackcuda %.1f ms, autocuda %.1f ms (+ the pick's own build passes)\n", total_sellp, total_cmrs,
              total_bellpack, total_auto);

  // What a device build still computes on the host: the sampled estimates only. Every full pass
  // above now runs on the GPU over the uploaded CSR (cuda::DeviceCsr::group_stats, the formats'
  // build_on_device); cmrscuda and sellpcuda (32-bit indices, the default) have no host pass left.
  std::printf("now: host passes left in a device build (sampled, but for the MPI types' off-diagonal blocks)\n");
  ms = best_ms(bellpack_choice);
  line("bellpackcuda: block size and partition rows by sampled fill (1% of block rows)", ms);
  ms = best_ms([&] { sink = sellp::index16_fits_sampled(A, 32, 64); });
  line("autocuda: banded or scattered columns (every 64th slice of 32 rows)", ms);
  ms = best_ms([&] { sink = worth_compressing_rows(A); });
  line("MPI types, off-diagonal blocks only: rows with entries (a full pass, not sampled)", ms);

  // The host types keep their host passes; the unsorted stored size is now one pass (group_stats)
  std::printf("host types (cmrs, sellp, bellpack): the same statistics on the host\n");
  ms = best_ms([&] { sink = group_stats(A, 32, 1).padded_width; });
  line("group_stats (SELL-P's stored size without sorting, the longest row): one pass", ms);
  return 0;
}
