// Unit tests of the format core: for every format, every parameter value at and between its
// bounds, and every test matrix (random and edge cases), in double and float:
//   - to_csr(from_csr(A)) == A exactly (explicit zeros, NaN and Inf values included);
//   - the host SpMV equals the CSR reference for y = A x (y holding NaN garbage before),
//     y = alpha A x + beta y, and z = y + A x, within the rounding bound of any summation order;
//   - the host transpose product over the stored format (the implicit MatMultTranspose) equals
//     the CSR reference of A^T (core/transform.hpp's transpose) for the same three epilogues;
//   - padding never touches x: an Inf in x reaches only the rows that reference its column, and
//     with the transpose only the columns of the row it multiplies;
//   - footprint counts are consistent, and its bytes are exactly those of the arrays a product
//     reads (what the device copy allocates; host-only bookkeeping such as CMRS's strip_nnz,
//     SELL-P's row_len and BELLPACK's presence bits excluded);
//   - group_stats (the row statistics the parameter choices read, which GPU builds compute from
//     their upload) gives SELL-P's and CMRS's stored sizes, their longest strip and row, and
//     stored_entries (with and without the sigma sort) equals what from_csr stores;
//   - BELLPACK's execution-time model grows with the work and picks a valid partition size;
//   - bad parameters and matrices too wide for a packed index are refused with FormatError.
#include "../../src/mat/impls/bellpack/host.hpp"
#include "../../src/mat/impls/bellpack/tuning.hpp"
#include "../../src/mat/impls/cmrs/host.hpp"
#include "../../src/mat/impls/common/core/transform.hpp"
#include "../../src/mat/impls/sellp/host.hpp"
#include "../common/check.hpp"
#include "../common/describe.hpp"
#include "../common/matrices.hpp"

#include <functional>
#include <limits>
#include <sstream>

using namespace gpumats;
using testmat::Csr;

namespace {

using testmat::describe;

std::vector<cmrs::Params> cmrs_sweep()
{
  std::vector<cmrs::Params> v;
  for (int h = 1; h <= 16; ++h)
    for (bool sort : {false, true})
      for (int pad : {1, 32}) v.push_back({h, sort, pad});
  return v;
}
std::vector<sellp::Params> sellp_sweep()
{
  std::vector<sellp::Params> v;
  for (int b : {1, 2, 4, 8, 32, 128, 1024})
    for (int t : {1, 2, 4, 8, 16, 32})
      if (b * t <= 1024)
        for (int sigma : {1, b, 4 * b})
          for (sellp::Index ix : {sellp::Index::k32, sellp::Index::k16_if_possible}) v.push_back({b, t, sigma, ix});
  return v;
}
std::vector<bellpack::Params> bellpack_sweep(bool full)
{
  std::vector<bellpack::Params> v;
  for (int r = 1; r <= 8; ++r)
    for (int c = 1; c <= 8; ++c)
      for (int R : {1, 32, 1024})
        if (full || R == 32) v.push_back({r, c, R});
  return v;
}

// Runs every check of one (format, matrix, parameters); returns false with a reason on the first failure.
template <class V, class Fmt, class P>
bool check_case(const Fmt &fmt, const Csr<V> &A, const P &p, bool exact_padding, std::string &why)
{
  auto M = fmt.build(A, p);
  {
    Csr<V> B = fmt.to_csr(M);
    if (!testmat::equal(A, B, why)) return why = "round trip: " + why, false;
  }
  const Footprint f = fmt.footprint(M);
  if (f.nnz != A.nnz() || f.stored < f.nnz || f.rows != A.nrows || f.cols != A.ncols) return why = "inconsistent footprint", false;
  if (f.total_bytes() != fmt.kernel_bytes(M))
    return why = "footprint of " + std::to_string(f.total_bytes()) + " bytes, the arrays a product reads hold " + std::to_string(fmt.kernel_bytes(M)), false;

  // the product with A (spmv) and with A^T over the same stored arrays (spmv_transpose), each
  // against the long-double CSR reference of its operator
  const Csr<V> At = transpose(A.view());
  for (const bool trans : {false, true}) {
    const Csr<V>        &Op   = trans ? At : A;
    const char          *what = trans ? "transpose " : "";
    const std::vector<V> x    = testmat::random_vector<V>(Op.ncols, 99);
    const std::vector<V> y0   = testmat::random_vector<V>(Op.nrows, 7);
    auto                 product = [&](const V *xp, const Epilogue<V> &ep) { trans ? fmt.spmv_t(M, xp, ep) : fmt.spmv(M, xp, ep); };
    std::vector<long double> ref, mag;
    struct Case {
      const char *name;
      double      alpha, beta;
      bool        separate_out;
    };
    for (const Case &c : {Case{"y=Ax", 1, 0, false}, Case{"y=aAx+by", 2.5, -0.5, false}, Case{"z=y+Ax", 1, 1, true}}) {
      std::vector<V> in = y0, out(std::size_t(Op.nrows), std::numeric_limits<V>::quiet_NaN());
      if (!c.separate_out && c.beta != 0) out = y0; // y = a A x + b y works in place
      Epilogue<V> ep{V(c.alpha), V(c.beta), c.separate_out ? in.data() : out.data(), out.data()};
      product(x.data(), ep);
      testmat::reference_spmv(Op, x, c.alpha, c.beta, y0, ref, mag);
      if (!testmat::close(Op, out, ref, mag, why)) return why = std::string(what) + c.name + ": " + why, false;
    }
    if (exact_padding && Op.ncols > 0) {
      // Inf in one entry of x: outputs not multiplying it must stay finite
      std::vector<V> xi = x;
      xi[std::size_t(Op.ncols / 2)] = std::numeric_limits<V>::infinity();
      std::vector<V> out(std::size_t(Op.nrows));
      product(xi.data(), Epilogue<V>{V(1), V(0), nullptr, out.data()});
      testmat::reference_spmv(Op, xi, 1, 0, y0, ref, mag);
      if (!testmat::close(Op, out, ref, mag, why)) return why = std::string(what) + "Inf in x leaks through padding: " + why, false;
    }
  }
  return true;
}

template <class V, class Fmt, class P>
void run_format(const char *name, const Fmt &fmt, const std::vector<P> &sweep, const std::vector<testmat::Named> &mats, bool exact_padding,
                const char *vname)
{
  for (const auto &m : mats) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    for (const P &p : sweep) {
      try {
        if (!check_case(fmt, A, p, exact_padding, why)) {
          why = describe(p) + ": " + why;
          ok  = false;
          break;
        }
      } catch (const std::exception &e) {
        why = describe(p) + ": unexpected exception: " + e.what();
        ok  = false;
        break;
      }
    }
    check::record(ok, std::string(name) + "/" + vname + "/" + m.name, why);
  }
}

template <class M_, class P_, class V>
struct FormatOps {
  std::function<M_(const Csr<V> &, const P_ &)> build;
  std::function<Csr<V>(const M_ &)>             to_csr;
  std::function<void(const M_ &, const V *, const Epilogue<V> &)> spmv;
  std::function<void(const M_ &, const V *, const Epilogue<V> &)> spmv_t; // with A^T, over the same arrays
  std::function<Footprint(const M_ &)>                            footprint;
  std::function<std::int64_t(const M_ &)>                         kernel_bytes; // sizes of the arrays SpMV reads
};

template <class T>
std::int64_t bytes_of(const std::vector<T> &v)
{
  return std::int64_t(v.size() * sizeof(T));
}

template <class V>
void run_all(const char *vname)
{
  const auto mats = testmat::edge_cases();
  using CM        = cmrs::Matrix<V>;
  using SM        = sellp::Matrix<V>;
  using BM        = bellpack::Matrix<V>;
  FormatOps<CM, cmrs::Params, V> c{[](const Csr<V> &A, const cmrs::Params &p) { return cmrs::from_csr(A.view(), p); },
                                   [](const CM &M) { return cmrs::to_csr(M); }, [](const CM &M, const V *x, const Epilogue<V> &e) { cmrs::spmv(M, x, e); },
                                   [](const CM &M, const V *x, const Epilogue<V> &e) { cmrs::spmv_transpose(M, x, e); },
                                   [](const CM &M) { return cmrs::footprint(M); },
                                   [](const CM &M) { return bytes_of(M.strip_ptr) + bytes_of(M.col_ind) + bytes_of(M.val); }};
  FormatOps<SM, sellp::Params, V> s{[](const Csr<V> &A, const sellp::Params &p) { return sellp::from_csr(A.view(), p); },
                                    [](const SM &M) { return sellp::to_csr(M); }, [](const SM &M, const V *x, const Epilogue<V> &e) { sellp::spmv(M, x, e); },
                                    [](const SM &M, const V *x, const Epilogue<V> &e) { sellp::spmv_transpose(M, x, e); },
                                    [](const SM &M) { return sellp::footprint(M); },
                                    [](const SM &M) {
                                      return bytes_of(M.slice_ptr) + bytes_of(M.col_ind) + bytes_of(M.col_delta) + bytes_of(M.col_base) + bytes_of(M.val) +
                                             bytes_of(M.row_perm);
                                    }};
  FormatOps<BM, bellpack::Params, V> b{[](const Csr<V> &A, const bellpack::Params &p) { return bellpack::from_csr(A.view(), p); },
                                       [](const BM &M) { return bellpack::to_csr(M); },
                                       [](const BM &M, const V *x, const Epilogue<V> &e) { bellpack::spmv(M, x, e); },
                                       [](const BM &M, const V *x, const Epilogue<V> &e) { bellpack::spmv_transpose(M, x, e); },
                                       [](const BM &M) { return bellpack::footprint(M); },
                                       [](const BM &M) { return bytes_of(M.part_ptr) + bytes_of(M.block_col) + bytes_of(M.val) + bytes_of(M.row_perm); }};
  run_format<V>("cmrs", c, cmrs_sweep(), mats, true, vname);
  run_format<V>("sellp", s, sellp_sweep(), mats, true, vname);
  // block fill multiplies x entries by explicit zeros, so an Inf in x may reach a neighbour row
  // (or, with the transpose, a neighbour column)
  run_format<V>("bellpack", b, bellpack_sweep(std::is_same<V, double>::value), mats, false, vname);
}

// group_stats and stored_entries against the layouts from_csr builds
void group_statistics()
{
  for (const auto &m : testmat::edge_cases()) {
    const auto  A  = m.A.view();
    bool        ok = true;
    std::string why;
    for (int h : {1, 3, 8, 16})
      for (int pad : {1, 32}) {
        const auto       M = cmrs::from_csr(A, cmrs::Params{h, false, pad});
        const GroupStats g = group_stats(A, h, 1, pad);
        std::int64_t     fullest = 0;
        for (std::int32_t n : M.strip_nnz) fullest = std::max<std::int64_t>(fullest, n);
        if (g.padded_entries != M.stored() || g.longest_group != fullest || g.longest_row != longest_row(A))
          ok = false, why = "CMRS height " + std::to_string(h) + ", pad " + std::to_string(pad);
      }
    for (int b : {1, 4, 32})
      for (int t : {1, 2, 8})
        for (int sigma : {1, 4 * b}) {
          const sellp::Params p{b, t, sigma, sellp::Index::k32};
          const auto          M = sellp::from_csr(A, p);
          if (sellp::stored_entries(A, p) != M.stored() || (sigma == 1 && group_stats(A, b, t).padded_width != M.stored()))
            ok = false, why = "SELL-P " + describe(p);
        }
    check::record(ok, "group-stats/" + m.name, why);
  }
}

template <class F>
void expect_error(const std::string &name, F f, const std::string &must_mention)
{
  check::expect_error<FormatError>(name, f, must_mention);
}

void bad_input()
{
  const Csr<double> A = testmat::random_matrix(10, 10, 3, 0, 1);
  expect_error("cmrs/height-0", [&] { cmrs::from_csr(A.view(), cmrs::Params{0, true, 1}); }, "1..16");
  expect_error("cmrs/height-17", [&] { cmrs::from_csr(A.view(), cmrs::Params{17, true, 1}); }, "1..16");
  expect_error("cmrs/pad-3", [&] { cmrs::from_csr(A.view(), cmrs::Params{8, true, 3}); }, "power of two");
  expect_error("sellp/b-0", [&] { sellp::from_csr(A.view(), sellp::Params{0, 1, 1}); }, "slice height");
  expect_error("sellp/b-3", [&] { sellp::from_csr(A.view(), sellp::Params{3, 1, 1}); }, "power of two");
  expect_error("sellp/t-64", [&] { sellp::from_csr(A.view(), sellp::Params{8, 64, 1}); }, "1..32");
  expect_error("sellp/bt-2048", [&] { sellp::from_csr(A.view(), sellp::Params{128, 16, 1}); }, "1024");
  expect_error("sellp/sigma-not-multiple", [&] { sellp::from_csr(A.view(), sellp::Params{8, 2, 12}); }, "multiple");
  expect_error("bellpack/r-0", [&] { bellpack::from_csr(A.view(), bellpack::Params{0, 1, 32}); }, "1..8");
  expect_error("bellpack/c-9", [&] { bellpack::from_csr(A.view(), bellpack::Params{1, 9, 32}); }, "1..8");
  expect_error("bellpack/R-48", [&] { bellpack::from_csr(A.view(), bellpack::Params{2, 2, 48}); }, "power of two");

  // a block 2^28 columns wide cannot be packed with a 4-bit row_in_strip; no big arrays needed
  const std::int32_t rp[2] = {0, 1};
  const std::int32_t ci[1] = {(1 << 28) - 1};
  const double       va[1] = {1.0};
  CsrView<double, std::int32_t> wide{1, std::int64_t(1) << 28, rp, ci, va};
  expect_error("cmrs/too-wide-for-28-bit-columns", [&] { cmrs::from_csr(wide, cmrs::Params{}); }, "28-bit");
  // 16-bit SELL-P columns: taken where the slice columns allow, refused on demand where they do not
  {
    const Csr<double> P  = testmat::poisson2d(40);
    auto              S  = sellp::from_csr(P.view(), sellp::Params{32, 1, 1, sellp::Index::k16});
    auto              S2 = sellp::from_csr(P.view(), sellp::Params{32, 1, 1, sellp::Index::k32});
    check::record(S.index16 && sellp::footprint(S).index_bytes < sellp::footprint(S2).index_bytes, "sellp/index16-smaller-footprint");
    const std::int32_t rpw[3] = {0, 1, 2}, ciw[2] = {0, 70000};
    const double       vaw[2] = {1, 2};
    CsrView<double, std::int32_t> spread{2, 70001, rpw, ciw, vaw};
    expect_error("sellp/index16-too-wide", [&] { sellp::from_csr(spread, sellp::Params{2, 1, 1, sellp::Index::k16}); }, "2^16");
    auto S3 = sellp::from_csr(spread, sellp::Params{2, 1, 1, sellp::Index::k16_if_possible});
    check::record(!S3.index16 && sellp::to_csr(S3).col_ind == std::vector<std::int32_t>{0, 70000}, "sellp/index16-falls-back-when-too-wide");
  }
  // the other formats take it
  bool ok = true;
  try {
    auto S = sellp::from_csr(wide, sellp::Params{});
    ok     = S.nnz == 1;
  } catch (...) {
    ok = false;
  }
  check::record(ok, "sellp/accepts-2^28-columns");

  const std::int32_t badc[1] = {12};
  CsrView<double, std::int32_t> oob{1, 10, rp, badc, va};
  expect_error("cmrs/column-out-of-range", [&] { cmrs::from_csr(oob, cmrs::Params{}); }, "out of range");
  expect_error("sellp/column-out-of-range", [&] { sellp::from_csr(oob, sellp::Params{}); }, "out of range");
  expect_error("bellpack/column-out-of-range", [&] { bellpack::from_csr(oob, bellpack::Params{}); }, "out of range");

  // 64-bit CSR indices are read, as PETSc built with --with-64-bit-indices hands them over
  const std::int64_t rp64[3] = {0, 2, 3}, ci64[3] = {0, 2, 1};
  const double       v64[3]  = {1, 2, 3};
  CsrView<double, std::int64_t> A64{2, 3, rp64, ci64, v64};
  auto                          C = cmrs::to_csr(cmrs::from_csr(A64, cmrs::Params{2, true, 32}));
  check::record(C.row_ptr == std::vector<std::int32_t>{0, 2, 3} && C.col_ind == std::vector<std::int32_t>{0, 2, 1}, "cmrs/64-bit-csr-input");
}

void footprint_values()
{
  // the paper's 5x5 example with height 2: StripPtr = [0 4 9 10] and no padding
  Csr<double> M;
  M.nrows = M.ncols = 5;
  M.row_ptr         = {0, 2, 4, 6, 9, 10};
  M.col_ind         = {0, 3, 1, 4, 2, 4, 2, 3, 4, 4};
  M.val             = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  auto C            = cmrs::from_csr(M.view(), cmrs::Params{2, true, 1});
  check::record(C.strip_ptr == std::vector<std::int32_t>{0, 4, 9, 10}, "cmrs/paper-example-strip-ptr");
  // sorted by column inside strips: the paper's reordered Val = [1 3 2 4 5 7 8 6 9 10]
  check::record(C.val == std::vector<double>{1, 3, 2, 4, 5, 7, 8, 6, 9, 10}, "cmrs/paper-example-reordered-values");
  check::record(cmrs::footprint(C).total_bytes() == 10 * 12 + 4 * 4, "cmrs/paper-example-bytes");
  auto P = cmrs::from_csr(M.view(), cmrs::Params{16, true, 32});
  check::record(P.stored() == 32 && P.strip_nnz[0] == 10, "cmrs/modified-layout-pads-to-32");

  // SELL-P with b = 2, t = 2: slice widths round up to even lengths
  auto S = sellp::from_csr(M.view(), sellp::Params{2, 2, 1});
  check::record(S.slice_ptr == std::vector<std::int32_t>{0, 4, 12, 16}, "sellp/slice-widths-multiple-of-t");
  // sigma = 2 sorts rows 2,3 (lengths 2,3) into 3,2
  auto S2 = sellp::from_csr(M.view(), sellp::Params{2, 1, 2});
  check::record(S2.row_perm == std::vector<std::int32_t>{0, 1, 3, 2, 4}, "sellp/sigma-sorts-longest-first");

  // BELLPACK 2x2: block rows {0,1},{2,3},{4}: blocks 3, 2, 1 -> already sorted
  auto B = bellpack::from_csr(M.view(), bellpack::Params{2, 2, 2});
  check::record(B.blocks == 6 && B.row_perm == std::vector<std::int32_t>{0, 1, 2}, "bellpack/block-count-and-order");
  check::record(std::abs(bellpack::block_fill(M.view(), 2, 2) - 24.0 / 10.0) < 1e-12, "bellpack/fill-ratio");
  // sampling one block row in 400 of a 27-point stencil on a 20^3 grid: a fixed stride of g^2
  // would see only boundary rows (1x2 fill 1.0 against 1.33); the sample must stay within 10%
  {
    const std::int64_t g = 20, n = g * g * g;
    Csr<double>        S;
    S.nrows = S.ncols = n;
    S.row_ptr.assign(1, 0);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t x = i % g, y = i / g % g, z = i / (g * g);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            if (x + dx >= 0 && x + dx < g && y + dy >= 0 && y + dy < g && z + dz >= 0 && z + dz < g) S.col_ind.push_back(std::int32_t(i + dz * g * g + dy * g + dx));
      S.row_ptr.push_back(std::int32_t(S.col_ind.size()));
    }
    S.val.assign(S.col_ind.size(), 1.0);
    bool close = true;
    for (int c : {2, 3, 4}) close = close && std::abs(bellpack::block_fill(S.view(), 1, c, 400) / bellpack::block_fill(S.view(), 1, c) - 1) < 0.1;
    check::record(close, "bellpack/sampled-fill-does-not-alias-with-the-grid");
  }
}

void bellpack_model()
{
  const bellpack::ModelEntry e{1, 1, 128, 16, 3.0, 0.5, 0.05, 0.01};
  // one partial iteration: start-up plus the work of its N blocks, then partitions stack up
  check::record(std::abs(bellpack::model_time(e, 4, 1, 132) - (3.0 + 0.5 * 4)) < 1e-12, "bellpack-model/one-partition");
  bool grows = true;
  for (std::int64_t L = 1; L < 20000; L += 37) grows = grows && bellpack::model_time(e, 4, L + 37, 132) >= bellpack::model_time(e, 4, L, 132);
  for (double N = 1; N < 64; N += 3) grows = grows && bellpack::model_time(e, N + 3, 5000, 132) > bellpack::model_time(e, N, 5000, 132);
  check::record(grows, "bellpack-model/time-grows-with-partitions-and-blocks");
  // eqs. (18)-(21) by hand for I = 3 iterations of T*M = 2112 partitions: 2112 + 2112 + 100
  const double N = 7, a = 0.01 * N;
  const double t = (3.0 + 0.5 * N + a * 15) + (0.05 * N + a * 15) + (0.05 * N + a * ((100 + 131) / 132 - 1));
  check::record(std::abs(bellpack::model_time(e, N, 2 * 2112 + 100, 132) - t) < 1e-9, "bellpack-model/equations-18-21");
  bool valid = true;
  for (int r = 1; r <= 8; ++r)
    for (int c = 1; c <= 8; ++c) {
      const int R = bellpack::choose_partition_rows(r, c, 100000, 7e5);
      valid       = valid && R >= 32 && R <= 1024 && !(R & (R - 1));
    }
  check::record(valid, "bellpack-model/chooses-a-power-of-two-partition");
}

} // namespace

int main()
{
  run_all<double>("double");
  run_all<float>("float");
  bad_input();
  group_statistics();
  footprint_values();
  bellpack_model();
  return check::finish();
}
