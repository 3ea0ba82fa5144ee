// Unit tests of the format-independent CSR transforms (src/mat/impls/common/core/transform.hpp),
// on every edge-case matrix of the format tests, in double and float, with 32- and 64-bit indices:
//   - permute: B(i, j) == A(order[i], order[j]) entry for entry, every row of B sorted by column,
//     permuting back with the inverse gives A exactly, and bad orders or shapes are refused;
//   - split_rows: the head keeps the first K entries of every row in place, the tail the rest of
//     the longer rows, every entry of A exactly once, for K = 1, 2, 3, the longest row and beyond;
//   - choose_split: the user's K, per-matrix choice on long rows only, never for stencils;
//   - the tail's footprint counts exactly the bytes of its arrays;
//   - transpose: row c of A^T lists the entries of column c of A in row order, exactly, and
//     nothing else;
//   - compress_rows: the rows with entries, each exactly as in A, their rows ascending, and every
//     row left out empty in A; worth_compressing_rows at half the rows empty.
#include "../../src/mat/impls/common/core/transform.hpp"
#include "../common/check.hpp"
#include "../common/matrices.hpp"

#include <map>
#include <numeric>
#include <random>

using namespace gpumats;
using testmat::Csr;

namespace {

template <class V>
bool same(V a, V b)
{
  return testmat::same_bits(double(a), double(b));
}

// Exact equality of two CSRs of any index types.
template <class V, class I, class J>
bool equal_csr(const gpumats::Csr<V, I> &A, const gpumats::Csr<V, J> &B, std::string &why)
{
  if (A.nrows != B.nrows || A.ncols != B.ncols) return why = "dimensions differ", false;
  if (A.row_ptr.size() != B.row_ptr.size() || A.col_ind.size() != B.col_ind.size() || A.val.size() != B.val.size()) return why = "sizes differ", false;
  for (std::size_t i = 0; i < A.row_ptr.size(); ++i)
    if (std::int64_t(A.row_ptr[i]) != std::int64_t(B.row_ptr[i])) return why = "row pointer " + std::to_string(i) + " differs", false;
  for (std::size_t k = 0; k < A.col_ind.size(); ++k)
    if (std::int64_t(A.col_ind[k]) != std::int64_t(B.col_ind[k]) || !same(A.val[k], B.val[k])) return why = "entry " + std::to_string(k) + " differs", false;
  return true;
}

// The orders every square matrix is permuted with: identity, reversal, and two random shuffles.
std::vector<std::pair<std::string, std::vector<std::int32_t>>> orders(std::int64_t n)
{
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> v;
  std::vector<std::int32_t>                                      o(static_cast<std::size_t>(n));
  std::iota(o.begin(), o.end(), 0);
  v.push_back({"identity", o});
  v.push_back({"reversed", std::vector<std::int32_t>(o.rbegin(), o.rend())});
  for (std::uint64_t seed : {1u, 2u}) {
    std::mt19937_64 rng(seed);
    std::shuffle(o.begin(), o.end(), rng);
    v.push_back({"shuffled-" + std::to_string(seed), o});
  }
  return v;
}

template <class I, class V>
bool check_permute(const Csr<V> &A, const std::vector<std::int32_t> &order, std::string &why)
{
  const auto inverse = inverse_permutation(order);
  for (std::size_t i = 0; i < order.size(); ++i)
    if (inverse[std::size_t(order[i])] != std::int32_t(i)) return why = "inverse_permutation is not the inverse", false;
  const gpumats::Csr<V, I> B = permute<I>(A.view(), order);
  if (B.nrows != A.nrows || B.ncols != A.ncols || B.nnz() != A.nnz() || std::int64_t(B.row_ptr[0]) != 0) return why = "sizes differ", false;
  for (std::int64_t i = 0; i < B.nrows; ++i) {
    const std::int64_t r = order[std::size_t(i)];
    // row i of B is row order[i] of A: the same length, and B(i, j) = A(order[i], order[j])
    if (B.row_ptr[i + 1] - B.row_ptr[i] != A.row_ptr[r + 1] - A.row_ptr[r]) return why = "row " + std::to_string(i) + " has the wrong length", false;
    std::map<std::int64_t, V> a;
    for (std::int32_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) a[A.col_ind[k]] = A.val[k];
    for (I k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k) {
      if (k > B.row_ptr[i] && B.col_ind[k] <= B.col_ind[k - 1]) return why = "row " + std::to_string(i) + " is not sorted by column", false;
      const auto it = a.find(order[std::size_t(B.col_ind[k])]);
      if (it == a.end() || !same(it->second, B.val[k])) return why = "B(" + std::to_string(i) + ", " + std::to_string(B.col_ind[k]) + ") is not A(order, order)", false;
    }
  }
  // and back: the inverse order undoes it
  const gpumats::Csr<V, I> C = permute<I>(B.view(), inverse);
  if (!equal_csr(A, C, why)) return why = "round trip: " + why, false;
  return true;
}

// head + tail == A entry for entry, in order; head rows min(len, K) long; tail rows ascending.
template <class I, class V>
bool check_split(const Csr<V> &A, std::int64_t K, std::string &why)
{
  gpumats::Csr<V, I> H;
  RowTail<V>         T;
  split_rows<I>(A.view(), K, H, T);
  if (T.split_at != K || H.nrows != A.nrows || H.ncols != A.ncols || std::int64_t(H.row_ptr.size()) != A.nrows + 1 || H.row_ptr[0] != 0)
    return why = "sizes", false;
  if (T.ptr.size() != T.rows.size() + 1 || T.ptr[0] != 0 || T.col.size() != T.val.size() || std::int64_t(T.ptr.back()) != T.nnz())
    return why = "tail arrays inconsistent", false;
  if (H.nnz() + T.nnz() != A.nnz()) return why = "entries lost or duplicated: " + std::to_string(H.nnz()) + " + " + std::to_string(T.nnz()), false;
  std::size_t t = 0; // next tail row
  for (std::int64_t i = 0; i < A.nrows; ++i) {
    const std::int64_t len = A.row_ptr[i + 1] - A.row_ptr[i], hlen = H.row_ptr[i + 1] - H.row_ptr[i];
    if (hlen != std::min(len, K)) return why = "row " + std::to_string(i) + ": head keeps " + std::to_string(hlen) + " entries", false;
    for (std::int64_t k = 0; k < hlen; ++k)
      if (H.col_ind[H.row_ptr[i] + k] != I(A.col_ind[A.row_ptr[i] + k]) || !same(H.val[H.row_ptr[i] + k], A.val[A.row_ptr[i] + k]))
        return why = "row " + std::to_string(i) + ": head entry " + std::to_string(k) + " differs", false;
    if (len <= K) continue;
    if (t >= T.rows.size() || T.rows[t] != i) return why = "row " + std::to_string(i) + " is missing from the tail", false;
    if (T.ptr[t + 1] - T.ptr[t] != len - K) return why = "row " + std::to_string(i) + ": tail holds the wrong number of entries", false;
    for (std::int64_t k = 0; k < len - K; ++k)
      if (T.col[T.ptr[t] + k] != A.col_ind[A.row_ptr[i] + K + k] || !same(T.val[T.ptr[t] + k], A.val[A.row_ptr[i] + K + k]))
        return why = "row " + std::to_string(i) + ": tail entry " + std::to_string(k) + " differs", false;
    ++t;
  }
  if (t != T.rows.size()) return why = "the tail holds rows that are not longer than K", false;
  // the tail's footprint is the bytes of its four arrays
  const Footprint f = footprint(T);
  const std::int64_t bytes = std::int64_t(sizeof(std::int32_t) * (T.rows.size() + T.ptr.size() + T.col.size()) + sizeof(V) * T.val.size());
  if (f.total_bytes() != bytes || f.nnz != T.nnz() || f.stored != T.nnz())
    return why = "tail footprint " + std::to_string(f.total_bytes()) + " bytes, its arrays hold " + std::to_string(bytes), false;
  return true;
}

// B = transpose(A): walking A row by row, each entry (i, c, v) must be the next one of B's row c.
template <class I, class V>
bool check_transpose(const Csr<V> &A, std::string &why)
{
  const gpumats::Csr<V, I> B = transpose<I>(A.view());
  if (B.nrows != A.ncols || B.ncols != A.nrows) return why = "dimensions not swapped", false;
  if (B.nnz() != A.nnz() || std::int64_t(B.row_ptr.back()) != A.nnz()) return why = "entry count differs", false;
  std::vector<std::int64_t> cursor(B.row_ptr.begin(), B.row_ptr.end() - 1);
  for (std::int64_t i = 0; i < A.nrows; ++i)
    for (std::int64_t k = std::int64_t(A.row_ptr[std::size_t(i)]); k < std::int64_t(A.row_ptr[std::size_t(i + 1)]); ++k) {
      const std::int64_t c = A.col_ind[std::size_t(k)], slot = cursor[std::size_t(c)]++;
      if (slot >= std::int64_t(B.row_ptr[std::size_t(c + 1)])) return why = "row " + std::to_string(c) + " of the transpose is short", false;
      if (std::int64_t(B.col_ind[std::size_t(slot)]) != i || !same(B.val[std::size_t(slot)], A.val[std::size_t(k)]))
        return why = "entry (" + std::to_string(i) + ", " + std::to_string(c) + ") misplaced", false;
    }
  for (std::int64_t c = 0; c < B.nrows; ++c)
    if (cursor[std::size_t(c)] != std::int64_t(B.row_ptr[std::size_t(c + 1)])) return why = "row " + std::to_string(c) + " of the transpose has extra entries", false;
  return true;
}

// compress_rows(A): row r of B is row rows[r] of A entry for entry, rows ascending, and the rows
// of A that are not in rows are empty.
template <class I, class V>
bool check_compress(const Csr<V> &A, std::string &why)
{
  std::vector<std::int32_t> rows{7, 7, 7}; // stale contents must go
  const auto                B = compress_rows<I>(A.view(), rows);
  if (B.ncols != A.ncols || B.nrows != std::int64_t(rows.size()) || std::int64_t(B.row_ptr.size()) != B.nrows + 1 || B.row_ptr[0] != 0)
    return why = "shape of the compressed CSR", false;
  std::int64_t next = 0; // the next row of A not yet accounted for
  for (std::int64_t r = 0; r < B.nrows; ++r) {
    const std::int64_t i = rows[std::size_t(r)];
    if (i < next || i >= A.nrows) return why = "rows not ascending or out of range at " + std::to_string(r), false;
    for (; next < i; ++next)
      if (A.row_ptr[std::size_t(next + 1)] != A.row_ptr[std::size_t(next)]) return why = "row " + std::to_string(next) + " has entries but was left out", false;
    next = i + 1;
    const std::int64_t len = std::int64_t(A.row_ptr[std::size_t(i + 1)] - A.row_ptr[std::size_t(i)]);
    if (len == 0 || std::int64_t(B.row_ptr[std::size_t(r + 1)] - B.row_ptr[std::size_t(r)]) != len) return why = "row " + std::to_string(i) + " length", false;
    for (std::int64_t k = 0; k < len; ++k) {
      const std::size_t a = std::size_t(A.row_ptr[std::size_t(i)] + k), b = std::size_t(B.row_ptr[std::size_t(r)] + k);
      if (std::int64_t(B.col_ind[b]) != std::int64_t(A.col_ind[a]) || !same(B.val[b], A.val[a])) return why = "entry " + std::to_string(k) + " of row " + std::to_string(i), false;
    }
  }
  for (; next < A.nrows; ++next)
    if (A.row_ptr[std::size_t(next + 1)] != A.row_ptr[std::size_t(next)]) return why = "row " + std::to_string(next) + " has entries but was left out", false;
  return true;
}

template <class V, class I>
void run_all(const char *vname, const char *iname)
{
  for (const auto &m : testmat::edge_cases()) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    try {
      if (A.nrows == A.ncols)
        for (const auto &o : orders(A.nrows))
          if (ok && !check_permute<I>(A, o.second, why)) why = o.first + ": " + why, ok = false;
    } catch (const std::exception &e) {
      why = std::string("unexpected exception: ") + e.what(), ok = false;
    }
    if (A.nrows == A.ncols) check::record(ok, std::string("permute/") + vname + "/" + iname + "/" + m.name, why);

    ok                         = true;
    const std::int64_t longest = longest_row(A.view());
    try {
      for (std::int64_t K : {std::int64_t(1), std::int64_t(2), std::int64_t(3), longest, longest + 1, longest + 1000})
        if (ok && K >= 1 && !check_split<I>(A, K, why)) why = "K=" + std::to_string(K) + ": " + why, ok = false;
    } catch (const std::exception &e) {
      why = std::string("unexpected exception: ") + e.what(), ok = false;
    }
    check::record(ok, std::string("split/") + vname + "/" + iname + "/" + m.name, why);

    ok = true;
    try {
      ok = check_transpose<I>(A, why);
    } catch (const std::exception &e) {
      why = std::string("unexpected exception: ") + e.what(), ok = false;
    }
    check::record(ok, std::string("transpose/") + vname + "/" + iname + "/" + m.name, why);

    ok = true;
    try {
      ok = check_compress<I>(A, why);
    } catch (const std::exception &e) {
      why = std::string("unexpected exception: ") + e.what(), ok = false;
    }
    check::record(ok, std::string("compress-rows/") + vname + "/" + iname + "/" + m.name, why);
  }
}

template <class F>
void expect_error(const std::string &name, F f, const std::string &must_mention)
{
  check::expect_error<FormatError>(name, f, must_mention);
}

// Small cases with their results written out, and the refusals.
void by_hand()
{
  // 3x3: [a . b; . c .; d . e] in the order (2, 0, 1): row 0 = old row 2 = {d at old col 0 -> new 1,
  // e at old col 2 -> new 0}, sorted: (0, e), (1, d); row 1 = old row 0: (0, b), (1, a); row 2 = (2, c)
  Csr<double> A;
  A.nrows = A.ncols = 3;
  A.row_ptr         = {0, 2, 3, 5};
  A.col_ind         = {0, 2, 1, 0, 2};
  A.val             = {1, 2, 3, 4, 5};
  const auto B      = permute(A.view(), {2, 0, 1});
  check::record(B.row_ptr == std::vector<std::int32_t>{0, 2, 4, 5} && B.col_ind == std::vector<std::int32_t>{0, 1, 0, 1, 2} &&
                  B.val == std::vector<double>{5, 4, 2, 1, 3},
                "permute/3x3-by-hand");
  check::record(inverse_permutation({2, 0, 1}) == std::vector<std::int32_t>{1, 2, 0}, "permute/inverse-by-hand");

  // 0 rows: nothing to permute, nothing to split
  Csr<double> E;
  const auto  PE = permute(E.view(), {});
  check::record(PE.nrows == 0 && PE.row_ptr == std::vector<std::int32_t>{0} && PE.nnz() == 0, "permute/0-rows");
  gpumats::Csr<double> HE;
  RowTail<double>      TE;
  split_rows(E.view(), 1, HE, TE);
  check::record(HE.nrows == 0 && HE.row_ptr == std::vector<std::int32_t>{0} && TE.rows.empty() && TE.ptr == std::vector<std::int32_t>{0} && TE.nnz() == 0 &&
                  footprint(TE).total_bytes() == 4,
                "split/0-rows");

  // K = 2 on rows of 3, 0, 2 and 5 entries: rows 0 and 3 lose 1 and 3 entries to the tail
  Csr<double> S;
  S.nrows = 4, S.ncols = 6;
  S.row_ptr = {0, 3, 3, 5, 10};
  S.col_ind = {0, 2, 4, 1, 5, 0, 1, 2, 3, 5};
  S.val     = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  gpumats::Csr<double> H;
  RowTail<double>      T;
  split_rows(S.view(), 2, H, T);
  check::record(H.row_ptr == std::vector<std::int32_t>{0, 2, 2, 4, 6} && H.col_ind == std::vector<std::int32_t>{0, 2, 1, 5, 0, 1} &&
                  H.val == std::vector<double>{1, 2, 4, 5, 6, 7} && T.rows == std::vector<std::int32_t>{0, 3} &&
                  T.ptr == std::vector<std::int32_t>{0, 1, 4} && T.col == std::vector<std::int32_t>{4, 2, 3, 5} &&
                  T.val == std::vector<double>{3, 8, 9, 10},
                "split/K=2-by-hand");
  // 2 tail rows, 3 offsets, 4 columns, 4 values
  check::record(footprint(T).total_bytes() == 4 * (2 + 3 + 4) + 8 * 4 && footprint(T).nnz == 4, "split/tail-footprint-by-hand");
  // no split: no bytes, whatever the arrays hold
  check::record(footprint(RowTail<double>{}).total_bytes() == 0, "split/no-split-no-bytes");
  // a split on a row_ptr that does not start at 0 (the view of a block inside a larger CSR)
  {
    const std::int32_t rp[3] = {2, 4, 7}, ci[7] = {9, 9, 0, 1, 0, 1, 2};
    const double       va[7] = {0, 0, 1, 2, 3, 4, 5};
    gpumats::Csr<double> H2;
    RowTail<double>      T2;
    split_rows(CsrView<double, std::int32_t>{2, 3, rp, ci, va}, 1, H2, T2);
    check::record(H2.row_ptr == std::vector<std::int32_t>{0, 1, 2} && H2.col_ind == std::vector<std::int32_t>{0, 0} && H2.val == std::vector<double>{1, 3} &&
                    T2.rows == std::vector<std::int32_t>{0, 1} && T2.col == std::vector<std::int32_t>{1, 1, 2} && T2.val == std::vector<double>{2, 4, 5},
                  "split/row-ptr-with-offset");
  }

  {
    // [[1 2 0], [0 0 3]] -> [[1 0], [2 0], [0 3]]
    const std::vector<std::int32_t> ptr{0, 2, 3}, col{0, 1, 2};
    const std::vector<double>       val{1, 2, 3};
    const auto                      T = transpose(CsrView<double, std::int32_t, std::int32_t>{2, 3, ptr.data(), col.data(), val.data()});
    check::record(T.nrows == 3 && T.ncols == 2 && T.row_ptr == std::vector<std::int32_t>{0, 1, 2, 3} && T.col_ind == std::vector<std::int32_t>{0, 0, 1} &&
                    T.val == std::vector<double>{1, 2, 3},
                  "transpose/2x3-by-hand");
  }
  {
    // rows 1 and 3 of 5 have entries; the view starts at row_ptr 2 (a block inside a larger CSR)
    const std::int32_t        rp[6] = {2, 2, 4, 4, 5, 5}, ci[5] = {9, 9, 3, 0, 2};
    const double              va[5] = {0, 0, 1, 2, 3};
    const CsrView<double, std::int32_t> V{5, 4, rp, ci, va};
    std::vector<std::int32_t> rows;
    const auto                C = compress_rows(V, rows);
    check::record(C.nrows == 2 && C.ncols == 4 && rows == std::vector<std::int32_t>{1, 3} && C.row_ptr == std::vector<std::int32_t>{0, 2, 3} &&
                    C.col_ind == std::vector<std::int32_t>{3, 0, 2} && C.val == std::vector<double>{1, 2, 3},
                  "compress-rows/by-hand");
    // 2 of 5 rows with entries: worth it; 3 of 5: not; no rows: nothing to compress
    check::record(worth_compressing_rows(V), "compress-rows/worth-it-at-2-of-5");
    const std::int32_t rp3[6] = {0, 1, 1, 2, 3, 3};
    check::record(!worth_compressing_rows(CsrView<double, std::int32_t>{5, 4, rp3, ci, va}), "compress-rows/not-worth-it-at-3-of-5");
    check::record(!worth_compressing_rows(E.view()), "compress-rows/not-for-0-rows");
    const auto CE = compress_rows(E.view(), rows);
    check::record(CE.nrows == 0 && rows.empty() && CE.row_ptr == std::vector<std::int32_t>{0}, "compress-rows/0-rows");
  }
  expect_error("permute/not-square", [] { permute(testmat::random_matrix(4, 5, 2, 0, 1).view(), {0, 1, 2, 3}); }, "not square");
  expect_error("permute/order-too-short", [&] { permute(A.view(), {0, 1}); }, "2 entries for 3 rows");
  expect_error("permute/order-repeats", [&] { permute(A.view(), {0, 1, 1}); }, "not a permutation");
  expect_error("permute/order-out-of-range", [&] { permute(A.view(), {0, 1, 3}); }, "not a permutation");
  expect_error("split/K=0", [&] { split_rows(A.view(), 0, H, T); }, "at least one entry");
}

void choose()
{
  const Csr<double> P = testmat::poisson2d(30); // rows of 3 to 5 entries
  check::record(choose_split(0, P.view(), false) == 0, "choose-split/0-never");
  check::record(choose_split(3, P.view(), false) == 3 && choose_split(3, P.view(), true) == 3, "choose-split/user-K-when-a-row-is-longer");
  check::record(choose_split(5, P.view(), false) == 0 && choose_split(100, P.view(), false) == 0, "choose-split/user-K-beyond-every-row");
  check::record(choose_split(-1, P.view(), false) == 0, "choose-split/auto-leaves-a-stencil-alone");

  // 999 rows of 5 entries and one of 1000: mu ~ 6, 16 mu + 64 ~ 160 < 1000, K = 32 (4 mu < 32)
  const Csr<double> L = testmat::build(
    1000, 1000,
    [](std::int64_t i) {
      std::set<std::int64_t> s;
      for (std::int64_t j = 0; j < (i == 500 ? 1000 : 5); ++j) s.insert((i + j) % 1000);
      return s;
    },
    1);
  check::record(choose_split(-1, L.view(), false) == 32, "choose-split/auto-warp-for-one-long-row", "K = " + std::to_string(choose_split(-1, L.view(), false)));
  check::record(choose_split(-1, L.view(), true) == 0, "choose-split/auto-off-when-only-told");
  // rows of 40 and one of 5000: mu ~ 45, K = 256 (the power of two at or above 4 mu = 180)
  const Csr<double> W = testmat::build(
    1000, 6000,
    [](std::int64_t i) {
      std::set<std::int64_t> s;
      for (std::int64_t j = 0; j < (i == 7 ? 5000 : 40); ++j) s.insert((i * 3 + j) % 6000);
      return s;
    },
    2);
  check::record(choose_split(-1, W.view(), false) == 256, "choose-split/auto-4-mu-rounded-to-a-power-of-two",
                "K = " + std::to_string(choose_split(-1, W.view(), false)));
  const Csr<double> E;
  check::record(choose_split(-1, E.view(), false) == 0 && choose_split(4, E.view(), false) == 0, "choose-split/0-rows");
}

} // namespace

int main()
{
  run_all<double, std::int32_t>("double", "int32");
  run_all<double, std::int64_t>("double", "int64");
  run_all<float, std::int32_t>("float", "int32");
  by_hand();
  choose();
  return check::finish();
}
