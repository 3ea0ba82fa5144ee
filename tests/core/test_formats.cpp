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
//   - values-only updates (core/values.hpp): the slot map of every format, made through its own
//     conversion of slot values, names every CSR entry once and pads the rest; a copy of old values
//     refilled through it with new values (explicit zeros and NaN among them) equals, bit for bit,
//     the conversion of the new values, padding and BELLPACK's block fill zero whatever they held;
//     likewise through the glue's renumbering, long-row split and row compression, and from a CSR
//     whose first entry is not at 0; slot maps are refused where the value type cannot count them;
//   - group_stats (the row statistics the parameter choices read, which GPU builds compute from
//     their upload) gives SELL-P's and CMRS's stored sizes, their longest strip and row, and
//     stored_entries (with and without the sigma sort) equals what from_csr stores;
//   - BELLPACK's execution-time model grows with the work and picks a valid partition size;
//   - bad parameters and matrices too wide for a packed index are refused with FormatError.
#include "../../src/mat/impls/bellpack/host.hpp"
#include "../../src/mat/impls/bellpack/tuning.hpp"
#include "../../src/mat/impls/cmrs/host.hpp"
#include "../../src/mat/impls/common/core/transform.hpp"
#include "../../src/mat/impls/common/core/values.hpp"
#include "../../src/mat/impls/sellp/host.hpp"
#include "../common/check.hpp"
#include "../common/describe.hpp"
#include "../common/matrices.hpp"

#include <cstring>
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
                                             bytes_of(M.row_perm) + bytes_of(M.dict) + bytes_of(M.code8) + bytes_of(M.code16);
                                    }};
  FormatOps<BM, bellpack::Params, V> b{[](const Csr<V> &A, const bellpack::Params &p) { return bellpack::from_csr(A.view(), p); },
                                       [](const BM &M) { return bellpack::to_csr(M); },
                                       [](const BM &M, const V *x, const Epilogue<V> &e) { bellpack::spmv(M, x, e); },
                                       [](const BM &M, const V *x, const Epilogue<V> &e) { bellpack::spmv_transpose(M, x, e); },
                                       [](const BM &M) { return bellpack::footprint(M); },
                                       [](const BM &M) {
                                         return bytes_of(M.part_ptr) + bytes_of(M.block_col) + bytes_of(M.val) + bytes_of(M.row_perm) + bytes_of(M.dict) +
                                                bytes_of(M.code8) + bytes_of(M.code16);
                                       }};
  run_format<V>("cmrs", c, cmrs_sweep(), mats, true, vname);
  run_format<V>("sellp", s, sellp_sweep(), mats, true, vname);
  // the dictionary form (forced: every edge case has at most 65536 distinct values) on a reduced
  // sweep: the layout parameters are independent of how values are stored
  std::vector<sellp::Params> sd;
  for (const sellp::Params &p : sellp_sweep())
    if (p.sigma == 1 || p.sigma == p.slice_height) sd.push_back({p.slice_height, p.threads_per_row, p.sigma, p.index, Values::kDictionary});
  run_format<V>("sellp-dictionary", s, sd, mats, true, vname);
  // block fill multiplies x entries by explicit zeros, so an Inf in x may reach a neighbour row
  // (or, with the transpose, a neighbour column)
  run_format<V>("bellpack", b, bellpack_sweep(std::is_same<V, double>::value), mats, false, vname);
  // the dictionary form (forced), every block size at R = 32
  std::vector<bellpack::Params> bd = bellpack_sweep(false);
  for (bellpack::Params &p : bd) p.values = Values::kDictionary;
  run_format<V>("bellpack-dictionary", b, bd, mats, false, vname);
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
  expect_error("cmrs/kernel-out-of-range", [&] { cmrs::from_csr(A.view(), cmrs::Params{8, true, 1, cmrs::Kernel(7)}); }, "warp, shared, subwarp, segmented or auto");
  expect_error("cmrs/lanes-12", [&] { cmrs::from_csr(A.view(), cmrs::Params{8, true, 1, cmrs::Kernel::kSubwarp, 12}); }, "8 or 16");
  expect_error("cmrs/segmented-needs-row-order", [&] { cmrs::from_csr(A.view(), cmrs::Params{8, true, 1, cmrs::Kernel::kSegmented}); }, "row order");
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
    // banded columns (the formats' and autocuda's choices): a 2D Laplacian is banded, two rows
    // 70000 columns apart are not, at the span's bound (0xFFFE) they still are, no rows is banded
    check::record(columns_banded(P.view()), "core/columns-banded/poisson2d");
    check::record(!columns_banded(spread), "core/columns-banded/spread-past-2^16");
    const std::int32_t cib[2] = {0, std::int32_t(kBandSpan)};
    CsrView<double, std::int32_t> edge{2, kBandSpan + 1, rpw, cib, vaw};
    check::record(columns_banded(edge), "core/columns-banded/at-the-bound");
    CsrView<double, std::int32_t> none{0, 5, rpw, ciw, vaw};
    check::record(columns_banded(none), "core/columns-banded/no-rows");
    // sampled: only every kBandStride-th group of kBandRows rows is looked at (one entry per row
    // on the diagonal, two rows 70000 columns apart in an unsampled group, then in a sampled one)
    const std::int64_t        nb = kBandRows * kBandStride + kBandRows;
    std::vector<std::int32_t> rpb(nb + 1), cb(nb);
    std::vector<double>       vb(nb, 1.0);
    for (std::int64_t i = 0; i < nb; ++i) rpb[i + 1] = std::int32_t(i + 1), cb[i] = std::int32_t(i);
    cb[kBandRows] = 70000;
    CsrView<double, std::int32_t> sampled{nb, 70001, rpb.data(), cb.data(), vb.data()};
    check::record(columns_banded(sampled), "core/columns-banded/unsampled-group-not-seen");
    cb[kBandRows] = std::int32_t(kBandRows), cb[kBandRows * kBandStride + 1] = 70000;
    check::record(!columns_banded(sampled), "core/columns-banded/sampled-group-seen");
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

// ---- values-only updates --------------------------------------------------------------------

template <class V>
bool same_bits(const std::vector<V> &a, const std::vector<V> &b)
{
  return a.size() == b.size() && (a.empty() || !std::memcmp(a.data(), b.data(), a.size() * sizeof(V)));
}

// A's structure with other values: signs and sizes changed, an explicit zero and a NaN among them
template <class V>
Csr<V> new_values(const Csr<V> &A)
{
  Csr<V> B = A;
  for (std::size_t k = 0; k < B.val.size(); ++k) B.val[k] = V(0.5 + double(k % 7)) * (k % 2 ? V(-1) : V(1));
  if (B.val.size() > 3) B.val[1] = V(0), B.val[2] = std::numeric_limits<V>::quiet_NaN();
  return B;
}

// Every CSR entry named exactly once, every other stored value -1
bool slots_cover(const std::vector<std::int32_t> &slot, std::int64_t nnz, std::string &why)
{
  std::vector<int> seen(std::size_t(nnz), 0);
  std::int64_t     pad = 0;
  for (std::int32_t s : slot) {
    if (s == -1) ++pad;
    else if (s < 0 || s >= nnz) return why = "slot " + std::to_string(s) + " outside the " + std::to_string(nnz) + " entries", false;
    else ++seen[std::size_t(s)];
  }
  for (std::int64_t k = 0; k < nnz; ++k)
    if (seen[std::size_t(k)] != 1) return why = "CSR entry " + std::to_string(k) + " held by " + std::to_string(seen[std::size_t(k)]) + " stored values", false;
  if (pad != std::int64_t(slot.size()) - nnz) return why = "padding miscounted", false;
  return true;
}

// build(view) -> the value array of the format's conversion with fixed parameters
template <class V, class Build>
bool slot_case(const Csr<V> &A, Build &&build, std::string &why)
{
  const std::vector<std::int32_t> slot = slot_map(A.view(), build);
  if (!slots_cover(slot, A.nnz(), why)) return false;
  const Csr<V>   B = new_values(A);
  std::vector<V> refilled = build(A.view()); // the old copy's values
  for (std::size_t p = 0; p < slot.size(); ++p)
    if (slot[p] < 0) refilled[p] = V(7); // padding that was written to must come back zero
  gather_values(refilled.data(), B.val.data(), slot.data(), std::int64_t(slot.size()));
  if (!same_bits(refilled, build(B.view()))) return why = "refilled values differ from a conversion of the new values", false;
  return true;
}

template <class V, class P, class Build>
void run_slots(const char *name, const char *vname, const std::vector<testmat::Named> &mats, const std::vector<P> &sweep, Build &&build)
{
  for (const auto &m : mats) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    for (const P &p : sweep) {
      try {
        if (!slot_case(A, [&](const auto &view) { return build(view, p); }, why)) {
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
    check::record(ok, std::string("values-update/") + name + "/" + vname + "/" + m.name, why);
  }
}

// The glue's pipeline (FormatOperator::update_values): slot values through the renumbering and the
// long-row split of a square block, or the row compression of an off-diagonal one, then the format;
// the tail's slots come from the split's tail. build(view) -> the format's values.
template <class V, class Build>
bool staged_case(const Csr<V> &A, bool compress, Build &&build, std::string &why)
{
  std::vector<std::int32_t> order(std::size_t(A.nrows)), rows;
  for (std::int64_t i = 0; i < A.nrows; ++i) order[std::size_t(i)] = std::int32_t((i * 7 + 3) % A.nrows); // a permutation when gcd(7, n) = 1
  const std::int64_t K     = 3;
  auto               stage = [&](const CsrView<V, std::int32_t, std::int32_t> &X, Csr<V> &head, RowTail<V> &tail) {
    if (compress) {
      head = compress_rows(X, rows);
      tail = RowTail<V>{};
      return;
    }
    const Csr<V> P = permute(X, order);
    split_rows(P.view(), K, head, tail);
  };
  std::vector<V> storage;
  Csr<V>         H, H2;
  RowTail<V>     T, T2;
  stage(slot_csr(A.view(), storage), H, T);
  const std::vector<V>      fv = build(H.view());
  std::vector<std::int32_t> fslot(fv.size()), tslot(T.val.size());
  slots_from_values(fv.data(), std::int64_t(fv.size()), fslot.data());
  slots_from_values(T.val.data(), std::int64_t(T.val.size()), tslot.data());
  std::vector<std::int32_t> all(fslot);
  all.insert(all.end(), tslot.begin(), tslot.end());
  if (!slots_cover(all, A.nnz(), why)) return false;
  const Csr<V> B = new_values(A);
  stage(B.view(), H2, T2);
  std::vector<V> f(fslot.size(), V(7)), t(tslot.size(), V(7));
  gather_values(f.data(), B.val.data(), fslot.data(), std::int64_t(f.size()));
  gather_values(t.data(), B.val.data(), tslot.data(), std::int64_t(t.size()));
  if (!same_bits(f, build(H2.view()))) return why = "format values differ from a conversion of the new values", false;
  if (!same_bits(t, T2.val)) return why = "tail values differ from the split of the new values", false;
  return true;
}

template <class V>
void value_updates(const char *vname)
{
  std::vector<testmat::Named> mats = testmat::edge_cases();
  { // blocks with holes: every third entry of a 5-dof chain dropped, so most 2x2..8x8 blocks are partly filled
    Csr<double> A = testmat::block_chain(23, 5), B;
    B.nrows = A.nrows, B.ncols = A.ncols;
    for (std::int64_t i = 0; i < A.nrows; ++i) {
      for (std::int32_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (k % 3 != 1) B.col_ind.push_back(A.col_ind[k]), B.val.push_back(A.val[k]);
      B.row_ptr.push_back(std::int32_t(B.col_ind.size()));
    }
    mats.push_back({"partly-filled-blocks", B});
  }
  std::vector<cmrs::Params> cp;
  for (int h : {1, 3, 8, 16})
    for (bool sort : {false, true})
      for (int pad : {1, 32}) cp.push_back({h, sort, pad});
  std::vector<sellp::Params> sp;
  for (int b : {1, 4, 32})
    for (int t : {1, 4})
      for (int sigma : {1, 4 * b})
        for (sellp::Index ix : {sellp::Index::k32, sellp::Index::k16_if_possible}) sp.push_back({b, t, sigma, ix});
  std::vector<bellpack::Params> bp;
  for (int r : {1, 2, 3, 5, 8})
    for (int c : {1, 2, 3, 5, 8})
      for (int R : {1, 32}) bp.push_back({r, c, R});
  run_slots<V>("cmrs", vname, mats, cp, [](const auto &A, const cmrs::Params &p) { return cmrs::from_csr(A, p).val; });
  run_slots<V>("sellp", vname, mats, sp, [](const auto &A, const sellp::Params &p) { return sellp::from_csr(A, p).val; });
  run_slots<V>("bellpack", vname, mats, bp, [](const auto &A, const bellpack::Params &p) { return bellpack::from_csr(A, p).val; });

  // through the glue's transforms, with one layout of each format
  for (const auto &m : mats) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    for (bool compress : {false, true}) {
      if (!compress && (A.nrows != A.ncols || (A.nrows && A.nrows % 7 == 0))) continue; // renumbering: square blocks, and (i*7+3) % n a permutation
      try {
        ok = ok && staged_case(A, compress, [](const auto &H) { return cmrs::from_csr(H, cmrs::Params{5, true, 32}).val; }, why) &&
             staged_case(A, compress, [](const auto &H) { return sellp::from_csr(H, sellp::Params{4, 2, 16, sellp::Index::k16_if_possible}).val; }, why) &&
             staged_case(A, compress, [](const auto &H) { return bellpack::from_csr(H, bellpack::Params{3, 2, 32}).val; }, why);
      } catch (const std::exception &e) {
        ok = false, why = std::string("unexpected exception: ") + e.what();
      }
      if (!ok) {
        why = (compress ? "rows with entries: " : "renumbered and split: ") + why;
        break;
      }
    }
    check::record(ok, std::string("values-update/staged/") + vname + "/" + m.name, why);
  }
}

void value_update_limits()
{
  // a CSR whose entries start at 3 of its value array (CsrView allows row_ptr[0] != 0): slots count from there
  {
    const std::int32_t rp[4] = {3, 5, 5, 8}, ci[8] = {-1, -1, -1, 0, 2, 1, 2, 3};
    const double       va[8] = {9, 9, 9, 1, 2, 3, 4, 5}, nv[8] = {0, 0, 0, 10, 20, 30, 40, 50};
    CsrView<double, std::int32_t> A{3, 4, rp, ci, va}, B{3, 4, rp, ci, nv};
    const cmrs::Params            p{2, true, 32};
    const auto slot = slot_map(A, [&](const CsrView<double, std::int32_t> &S) { return cmrs::from_csr(S, p).val; });
    auto       M    = cmrs::from_csr(A, p);
    gather_values(M.val.data(), nv + 3, slot.data(), std::int64_t(slot.size()));
    check::record(M.val == cmrs::from_csr(B, p).val, "values-update/csr-starting-past-0");
  }
  check::record(slot_map_exact<float>(std::int64_t(1) << 24) && !slot_map_exact<float>((std::int64_t(1) << 24) + 1) &&
                  slot_map_exact<double>(std::int64_t(1) << 30) && !slot_map_exact<double>(std::numeric_limits<std::int32_t>::max()),
                "values-update/exact-up-to-2^24-in-float-and-32-bit-slots");
  // refused before any entry is read (the arrays of 2^24 + 1 entries are not there)
  const std::int32_t           rp[2] = {0, (1 << 24) + 1};
  CsrView<float, std::int32_t> big{1, 1, rp, nullptr, nullptr};
  expect_error("values-update/float-slot-map-refused-past-2^24", [&] { slot_map(big, [](const CsrView<float, std::int32_t> &) { return std::vector<float>{}; }); },
               "exact");
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
      const int R = bellpack::choose_partition_rows(bellpack::kModels[0], r, c, 100000, 7e5);
      valid       = valid && R >= 32 && R <= 1024 && !(R & (R - 1));
    }
  check::record(valid, "bellpack-model/chooses-a-power-of-two-partition");
  // one model per GPU model: its own where benchmarked, else the first with a note naming both
  for (const bellpack::Model &m : bellpack::kModels) {
    const bellpack::ModelChoice ch = bellpack::model_for(m.gpu);
    check::record(ch.entry == &m && ch.note.empty() && m.count == 8 * 8 * 6 && m.sms > 0, std::string("bellpack-model/own-model-of-") + m.gpu);
  }
  const bellpack::ModelChoice other = bellpack::model_for("NVIDIA A100-SXM4-80GB");
  check::record(other.entry == &bellpack::kModels[0] && other.note.find("NVIDIA A100-SXM4-80GB") != std::string::npos &&
                  other.note.find(bellpack::kModels[0].gpu) != std::string::npos && other.note.find("make tune") != std::string::npos,
                "bellpack-model/another-gpu-gets-the-first-with-a-note", other.note);
}

// A matrix of the pattern of `pattern` whose k-th entry holds values[k % values.size()].
template <class V>
Csr<V> with_values(const Csr<double> &pattern, const std::vector<V> &values)
{
  Csr<V> A = testmat::cast<V>(pattern);
  for (std::size_t k = 0; k < A.val.size(); ++k) A.val[k] = values[k % values.size()];
  return A;
}

// What the dictionary tests need of a format with a value dictionary (P: its Params; the core's
// functions are found through P's namespace): build in a value form, the round trip, the products,
// the footprint, and the table the device encoder is given for a matrix (SELL-P: the distinct
// values; BELLPACK, WITH_ZERO: those and +0.0, which its fill and padding store).
template <class P, bool WITH_ZERO>
struct DictionaryForm {
  using Params = P;
  template <class V>
  static auto build(const Csr<V> &A, P p, Values v)
  {
    p.values = v;
    return from_csr(A.view(), p); // (the format's own, found through P's namespace)
  }
  template <class M>
  static auto round_trip(const M &m) { return to_csr(m); }
  template <class M, class V>
  static void mult(const M &m, bool trans, const V *x, const Epilogue<V> &ep) { trans ? spmv_transpose(m, x, ep) : spmv(m, x, ep); }
  template <class M>
  static Footprint bytes(const M &m) { return footprint(m); }
  template <class V>
  static std::vector<V> table(const Csr<V> &A)
  {
    std::vector<V> t = dictionary_table(A.val.data(), A.nnz());
    return WITH_ZERO ? with_zero(std::move(t)) : t;
  }
};
using SellpDictionary    = DictionaryForm<sellp::Params, false>;
using BellpackDictionary = DictionaryForm<bellpack::Params, true>;

// The dictionary form against the plain form of the same matrix: values back bit for bit, and
// host products (forward and transposed, all epilogues) bitwise equal, the summation order being
// the same. Returns "" or the reason.
template <class F, class V>
std::string dictionary_vs_plain(const Csr<V> &A, const typename F::Params &p, int expect_code_bytes)
{
  const auto P = F::build(A, p, Values::kPlain);
  const auto D = F::build(A, p, Values::kDictionary);
  if (D.code_bytes != expect_code_bytes) return "code bytes " + std::to_string(D.code_bytes) + ", expected " + std::to_string(expect_code_bytes);
  if (D.values_compressed() != (expect_code_bytes != 0) || (expect_code_bytes && !D.val.empty())) return "values_compressed/val inconsistent";
  if (!same_bits(F::round_trip(D).val, A.val)) return "round trip changes value bits";
  // the table the device encoder is given (sorted by bit pattern) is the host's
  if (expect_code_bytes && !same_bits(F::table(A), D.dict)) return "the device's table differs from the host's";
  if (!expect_code_bytes && !F::table(A).empty()) return "the table of too many values is not empty";
  for (std::size_t k = 1; k < D.dict.size(); ++k)
    if (!(value_bits(D.dict[k - 1]) < value_bits(D.dict[k]))) return "table not sorted by bit pattern";
  const Footprint fp = F::bytes(D), fq = F::bytes(P);
  if (fp.index_bytes != fq.index_bytes) return "index bytes differ";
  if (expect_code_bytes && fp.value_bytes != expect_code_bytes * D.stored() + std::int64_t(sizeof(V) * D.dict.size())) return "value bytes miscounted";
  for (const bool trans : {false, true}) {
    const std::int64_t   n = trans ? A.ncols : A.nrows, m = trans ? A.nrows : A.ncols;
    const std::vector<V> x = testmat::random_vector<V>(m, 5), y0 = testmat::random_vector<V>(n, 6);
    for (const double beta : {0.0, -0.5}) {
      std::vector<V> a = y0, b = y0;
      auto           go = [&](const auto &M, std::vector<V> &y) { F::mult(M, trans, x.data(), Epilogue<V>{V(1.5), V(beta), y.data(), y.data()}); };
      go(P, a), go(D, b);
      if (!same_bits(a, b)) return std::string(trans ? "transpose " : "") + "product differs from the plain form's";
    }
  }
  return "";
}

// BELLPACK's bounds: its table holds the matrix's values and +0.0, so a matrix of k distinct
// nonzero values needs k + 1 entries (255 -> 1-byte codes, 256 -> 2-byte, 65535 -> 2-byte,
// 65536 -> plain); with an explicit zero among the values, no more than k.
template <class V>
void bellpack_dictionary_values(const char *vname)
{
  const std::string pre = std::string("bellpack-dictionary/") + vname + "/";
  const Csr<double> pat = testmat::random_matrix(20000, 20000, 8, 0.05, 17);
  for (const auto &c : std::vector<std::pair<std::int64_t, int>>{{1, 1}, {255, 1}, {256, 2}, {65535, 2}, {65536, 0}}) {
    std::vector<V> vals;
    for (std::int64_t k = 0; k < c.first; ++k) vals.push_back(V(1) + V(k) / V(65536 * 4));
    for (const bellpack::Params p : {bellpack::Params{1, 1, 32}, bellpack::Params{3, 2, 128}}) {
      const std::string why = dictionary_vs_plain<BellpackDictionary>(with_values(pat, vals), p, c.second);
      check::record(why.empty(), pre + std::to_string(c.first) + "-distinct/" + std::to_string(p.r) + "x" + std::to_string(p.c), why);
    }
  }
  {
    std::vector<V> vals;
    for (int k = 0; k < 256; ++k) vals.push_back(V(k)); // 0 among them: 256 entries, 1-byte codes
    const std::string why = dictionary_vs_plain<BellpackDictionary>(with_values(pat, vals), bellpack::Params{2, 2, 32}, 1);
    check::record(why.empty(), pre + "explicit-zero-256", why);
  }
  // -0.0 is not +0.0: the fill's +0.0 is an entry of its own
  {
    const Csr<V> A = with_values(testmat::random_matrix(50, 50, 6, 0.1, 3), std::vector<V>{-V(0), V(2)});
    const auto   D = BellpackDictionary::build(A, bellpack::Params{2, 2, 32}, Values::kDictionary);
    check::record(D.code_bytes == 1 && D.dict.size() == 3 && same_bits(bellpack::to_csr(D).val, A.val), pre + "negative-zero-exact", "table of " + std::to_string(D.dict.size()));
  }
  // auto: a 3x3-block stencil of few values is compressed, general values are not
  {
    Csr<V> S = testmat::cast<V>(testmat::block_chain(400, 3));
    for (std::size_t k = 0; k < S.val.size(); ++k) S.val[k] = V(int(k % 3) - 1);
    const auto a = BellpackDictionary::build(S, bellpack::Params{3, 3, 32}, Values::kAuto);
    check::record(a.code_bytes == 1 && a.dict.size() == 3, pre + "auto-compresses-block-stencil", "code bytes " + std::to_string(a.code_bytes));
    const Csr<V> R = testmat::cast<V>(testmat::random_matrix(20000, 20000, 8, 0, 4));
    check::record(!BellpackDictionary::build(R, bellpack::Params{1, 1, 32}, Values::kAuto).values_compressed(), pre + "auto-declines-general-values");
    Csr<V> Z = S;
    Z.row_ptr.assign(std::size_t(Z.nrows + 1), 0), Z.col_ind.clear(), Z.val.clear();
    check::record(!BellpackDictionary::build(Z, bellpack::Params{3, 3, 32}, Values::kDictionary).values_compressed(), pre + "no-entries-stay-plain");
  }
  expect_error(pre + "bad-mode", [] { bellpack::check_params(bellpack::Params{2, 2, 32, 0, Values(7)}); }, "value form");
}

template <class V>
void dictionary_values(const char *vname)
{
  const std::string pre = std::string("sellp-dictionary/") + vname + "/";
  // distinct counts at the bounds of the two code widths, and past the last: plain again
  const Csr<double> pat = testmat::random_matrix(20000, 20000, 8, 0.05, 17); // > 65537 entries
  check::record(pat.nnz() > 65537, pre + "pattern-large-enough");
  for (const auto &c : std::vector<std::pair<std::int64_t, int>>{{1, 1}, {2, 1}, {255, 1}, {256, 1}, {257, 2}, {65536, 2}, {65537, 0}}) {
    std::vector<V> vals;
    for (std::int64_t k = 0; k < c.first; ++k) vals.push_back(V(1) + V(k) / V(65536 * 4)); // distinct in float too
    const Csr<V>      A   = with_values(pat, vals);
    const std::string why = dictionary_vs_plain<SellpDictionary>(A, sellp::Params{32, 1, 1, sellp::Index::k16_if_possible}, c.second);
    check::record(why.empty(), pre + std::to_string(c.first) + "-distinct", why);
    check::record(count_distinct(A.val.data(), A.nnz(), kMaxDictionary) == std::min(c.first, kMaxDictionary + 1),
                  pre + std::to_string(c.first) + "-counted");
  }
  // bit patterns, not ==: -0.0 and 0.0 are two codes, NaN payloads and infinities survive
  {
    std::vector<V> vals{V(0), -V(0), std::numeric_limits<V>::infinity(), -std::numeric_limits<V>::infinity(), std::numeric_limits<V>::quiet_NaN(),
                        std::numeric_limits<V>::denorm_min(), V(-1)};
    V nan2 = std::numeric_limits<V>::quiet_NaN();
    reinterpret_cast<unsigned char *>(&nan2)[0] ^= 0x5; // another payload
    vals.push_back(nan2);
    const Csr<V> A = with_values(testmat::random_matrix(50, 50, 6, 0.1, 3), vals);
    const auto   D = sellp::from_csr(A.view(), sellp::Params{4, 2, 1, sellp::Index::k32, Values::kDictionary});
    check::record(D.code_bytes == 1 && D.dict.size() == vals.size() && same_bits(sellp::to_csr(D).val, A.val), pre + "special-values-exact",
                  "table of " + std::to_string(D.dict.size()));
  }
  // empty rows, one dense row, fewer rows than a slice, every layout parameter
  {
    Csr<double> E;
    E.nrows = 5, E.ncols = 40;
    E.row_ptr = {0, 0, 40, 40, 42, 42};
    for (int c = 0; c < 40; ++c) E.col_ind.push_back(c);
    E.col_ind.push_back(3), E.col_ind.push_back(39);
    E.val.assign(42, 0.0);
    const Csr<V> A = with_values(E, std::vector<V>{V(2), V(-1), V(0.25)});
    std::string  why;
    for (const sellp::Params &p : sellp_sweep())
      if (why.empty()) {
        why = dictionary_vs_plain<SellpDictionary>(A, p, 1);
        if (!why.empty()) why = describe(p) + ": " + why;
      }
    check::record(why.empty(), pre + "empty-dense-short-rows", why);
    Csr<V> Z = testmat::cast<V>(E);
    Z.row_ptr.assign(6, 0), Z.col_ind.clear(), Z.val.clear(); // no entries: nothing to compress
    check::record(!sellp::from_csr(Z.view(), sellp::Params{8, 1, 1, sellp::Index::k32, Values::kDictionary}).values_compressed(), pre + "no-entries-stay-plain");
  }
  // auto: a 5-point stencil (3 values) is compressed; a small matrix whose table would cost more
  // than the codes save stays plain, as does one of general values
  {
    Csr<V> S = testmat::cast<V>(testmat::poisson2d(60)); // its values are random: set the stencil's
    for (std::int64_t i = 0; i < S.nrows; ++i)
      for (std::int32_t k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k) S.val[k] = S.col_ind[k] == i ? V(4) : V(-1);
    const auto   a = sellp::from_csr(S.view(), sellp::Params{32, 1, 1, sellp::Index::k32, Values::kAuto});
    check::record(a.code_bytes == 1 && a.dict.size() == 2 && sellp::footprint(a).value_bytes == a.stored() + 2 * std::int64_t(sizeof(V)),
                  pre + "auto-compresses-stencil", "code bytes " + std::to_string(a.code_bytes));
    std::vector<V> vals;
    for (int k = 0; k < 200; ++k) vals.push_back(V(k + 1));
    const Csr<V> T = with_values(testmat::random_matrix(40, 40, 5, 0, 9), vals);
    check::record(T.nnz() <= 200 && !sellp::from_csr(T.view(), sellp::Params{8, 1, 1, sellp::Index::k32, Values::kAuto}).values_compressed(),
                  pre + "auto-declines-when-table-dominates");
    const Csr<V> R = testmat::cast<V>(testmat::random_matrix(20000, 20000, 8, 0, 4));
    check::record(!sellp::from_csr(R.view(), sellp::Params{32, 1, 1, sellp::Index::k32, Values::kAuto}).values_compressed(), pre + "auto-declines-general-values");
  }
  expect_error(pre + "bad-mode", [] { sellp::check_params(sellp::Params{8, 1, 1, sellp::Index::k32, Values(7)}); }, "value form");
}

// The SpMV kernel is a parameter of the copy, not of its layout: every kernel's conversion stores
// the arrays of the warp kernel's (segmented: those of row order), and from_csr records the kernel
// with auto and lanes 0 resolved from the average strip length (resolve_kernel)
void cmrs_kernels()
{
  for (const auto &m : testmat::edge_cases()) {
    const auto  A  = m.A.view();
    bool        ok = true;
    std::string why;
    for (int h : {1, 3, 8, 16})
      for (int pad : {1, 32})
        for (bool sort : {false, true})
          for (int k = 0; k < cmrs::kKernels && ok; ++k)
            for (int lanes : {0, 8, 16}) {
              const cmrs::Kernel kernel = cmrs::Kernel(k);
              if (kernel == cmrs::Kernel::kSegmented && sort) continue;
              const auto W = cmrs::from_csr(A, cmrs::Params{h, sort, pad});
              const auto M = cmrs::from_csr(A, cmrs::Params{h, sort, pad, kernel, lanes});
              const auto R = cmrs::resolve_kernel(cmrs::Params{h, sort, pad, kernel, lanes}, A.nnz(), A.nrows);
              if (M.strip_ptr != W.strip_ptr || M.col_ind != W.col_ind || !same_bits(M.val, W.val) || M.strip_nnz != W.strip_nnz)
                ok = false, why = describe(M.params) + ": arrays differ from the warp kernel's";
              else if (M.params.kernel != R.kernel || M.params.lanes != R.lanes || R.kernel == cmrs::Kernel::kAuto ||
                       (R.kernel == cmrs::Kernel::kSubwarp && R.lanes != 8 && R.lanes != 16) || (lanes && R.lanes != lanes) ||
                       (kernel != cmrs::Kernel::kAuto && R.kernel != kernel))
                ok = false, why = describe(cmrs::Params{h, sort, pad, kernel, lanes}) + ": resolved to " + describe(M.params);
            }
    check::record(ok, "cmrs/kernel-keeps-layout/" + m.name, why);
  }
  // the choices of auto and lanes 0 at their bounds: subwarp with 8 lanes up to 96 entries per strip
  // on average, 16 lanes up to 320, shared above; an empty block takes 8 lanes
  const auto at = [](cmrs::Kernel k, std::int64_t per_strip) { return cmrs::resolve_kernel(cmrs::Params{8, true, 1, k}, per_strip * 100, 8 * 100); };
  const auto r1 = at(cmrs::Kernel::kAuto, 96), r2 = at(cmrs::Kernel::kAuto, 97), r3 = at(cmrs::Kernel::kAuto, 320), r5 = at(cmrs::Kernel::kAuto, 321);
  const auto r4 = cmrs::resolve_kernel(cmrs::Params{8, true, 1, cmrs::Kernel::kSubwarp}, 0, 0);
  const auto r6 = at(cmrs::Kernel::kSubwarp, 1000);
  check::record(r1.kernel == cmrs::Kernel::kSubwarp && r1.lanes == 8 && r2.kernel == cmrs::Kernel::kSubwarp && r2.lanes == 16 &&
                  r3.kernel == cmrs::Kernel::kSubwarp && r3.lanes == 16 && r5.kernel == cmrs::Kernel::kShared && r4.lanes == 8 &&
                  r6.kernel == cmrs::Kernel::kSubwarp && r6.lanes == 16,
                "cmrs/kernel-auto-from-strip-length",
                describe(r1) + "; " + describe(r2) + "; " + describe(r3) + "; " + describe(r5) + "; " + describe(r4) + "; " + describe(r6));
}

} // namespace

int main()
{
  run_all<double>("double");
  run_all<float>("float");
  value_updates<double>("double");
  value_updates<float>("float");
  value_update_limits();
  dictionary_values<double>("double");
  dictionary_values<float>("float");
  bellpack_dictionary_values<double>("double");
  bellpack_dictionary_values<float>("float");
  bad_input();
  group_statistics();
  cmrs_kernels();
  footprint_values();
  bellpack_model();
  return check::finish();
}
