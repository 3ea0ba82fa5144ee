// Test matrices for the format unit tests (host and device): random patterns and the edge cases
// every conversion must survive, plus the CSR reference SpMV and the comparison with a rounding
// bound. PETSc-free.
#pragma once

#include "../../src/mat/impls/common/core/csr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace testmat {

using gpumats::Csr;

struct Named {
  std::string       name;
  Csr<double>       A;
};

// Builds a CSR from a per-row column generator; columns are sorted and unique as in PETSc's AIJ.
inline Csr<double> build(std::int64_t n, std::int64_t m, const std::function<std::set<std::int64_t>(std::int64_t)> &cols, std::uint64_t seed)
{
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  Csr<double>                            A;
  A.nrows = n;
  A.ncols = m;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j : cols(i)) {
      A.col_ind.push_back(std::int32_t(j));
      A.val.push_back(val(rng));
    }
    A.row_ptr.push_back(std::int32_t(A.col_ind.size()));
  }
  return A;
}

inline Csr<double> random_matrix(std::int64_t n, std::int64_t m, int max_per_row, double empty_fraction, std::uint64_t seed)
{
  std::mt19937_64 rng(seed * 7919 + 1);
  return build(
    n, m,
    [&](std::int64_t) {
      std::set<std::int64_t> s;
      if (m == 0 || std::uniform_real_distribution<double>(0, 1)(rng) < empty_fraction) return s;
      const int k = std::uniform_int_distribution<int>(1, max_per_row)(rng);
      for (int t = 0; t < k; ++t) s.insert(std::uniform_int_distribution<std::int64_t>(0, m - 1)(rng));
      return s;
    },
    seed);
}

inline Csr<double> poisson2d(std::int64_t g)
{
  return build(
    g * g, g * g,
    [g](std::int64_t i) {
      const std::int64_t     x = i % g, y = i / g;
      std::set<std::int64_t> s{i};
      if (x > 0) s.insert(i - 1);
      if (x + 1 < g) s.insert(i + 1);
      if (y > 0) s.insert(i - g);
      if (y + 1 < g) s.insert(i + g);
      return s;
    },
    3);
}

// d dofs per node on a 1D chain with 3-point coupling: natural d x d blocks.
inline Csr<double> block_chain(std::int64_t nodes, int d)
{
  return build(
    nodes * d, nodes * d,
    [nodes, d](std::int64_t i) {
      const std::int64_t     node = i / d;
      std::set<std::int64_t> s;
      for (std::int64_t nb = std::max<std::int64_t>(0, node - 1); nb <= std::min(nodes - 1, node + 1); ++nb)
        for (int k = 0; k < d; ++k) s.insert(nb * d + k);
      return s;
    },
    5);
}

inline std::vector<Named> edge_cases()
{
  std::vector<Named> v;
  v.push_back({"0x0", build(0, 0, [](std::int64_t) { return std::set<std::int64_t>{}; }, 1)});
  v.push_back({"0x5", build(0, 5, [](std::int64_t) { return std::set<std::int64_t>{}; }, 1)});
  v.push_back({"7x0", build(7, 0, [](std::int64_t) { return std::set<std::int64_t>{}; }, 1)});
  v.push_back({"1x1", build(1, 1, [](std::int64_t) { return std::set<std::int64_t>{0}; }, 1)});
  v.push_back({"all-empty-rows", build(37, 11, [](std::int64_t) { return std::set<std::int64_t>{}; }, 1)});
  v.push_back({"3-rows-fewer-than-a-strip", random_matrix(3, 9, 4, 0.0, 11)});
  v.push_back({"empty-rows-mixed", random_matrix(301, 157, 9, 0.4, 12)});
  v.push_back({"one-dense-row", build(
                                  203, 203,
                                  [](std::int64_t i) {
                                    std::set<std::int64_t> s{i};
                                    if (i == 101)
                                      for (std::int64_t j = 0; j < 203; ++j) s.insert(j);
                                    return s;
                                  },
                                  13)});
  v.push_back({"dense-40x70", build(
                                40, 70,
                                [](std::int64_t) {
                                  std::set<std::int64_t> s;
                                  for (std::int64_t j = 0; j < 70; ++j) s.insert(j);
                                  return s;
                                },
                                14)});
  v.push_back({"wide-off-diagonal-5x1000", random_matrix(5, 1000, 30, 0.2, 15)});
  v.push_back({"tall-1000x3", random_matrix(1000, 3, 3, 0.1, 16)});
  v.push_back({"random-2000x2000", random_matrix(2000, 2000, 20, 0.05, 17)});
  v.push_back({"power-law", build(
                              1500, 1500,
                              [](std::int64_t i) {
                                std::set<std::int64_t> s{i};
                                const std::int64_t     k = 1500 / (i + 1); // row i has about n/(i+1) entries
                                for (std::int64_t t = 0; t < k; ++t) s.insert((i * 31 + t * 17) % 1500);
                                return s;
                              },
                              18)});
  // linear interpolation from 151 coarse points to 301 fine ones: neighbouring rows share columns,
  // so transposed products add into one column from many rows at once
  v.push_back({"interpolation-301x151", build(
                                          301, 151,
                                          [](std::int64_t i) {
                                            return i % 2 ? std::set<std::int64_t>{(i - 1) / 2, (i + 1) / 2} : std::set<std::int64_t>{i / 2};
                                          },
                                          22)});
  v.push_back({"poisson2d-33", poisson2d(33)});
  v.push_back({"blocks-3dof-nodes-101", block_chain(101, 3)});
  v.push_back({"blocks-5dof-partial", [] {
                 Csr<double> A = block_chain(23, 5); // 115 rows: not a multiple of 2,3,4,6,7,8
                 return A;
               }()});
  {
    Csr<double> A = random_matrix(257, 257, 12, 0.1, 19);
    for (std::size_t k = 0; k < A.val.size(); k += 5) A.val[k] = 0.0; // explicit zeros must survive round trips
    v.push_back({"explicit-zeros", A});
  }
  {
    Csr<double> A = random_matrix(129, 129, 6, 0.0, 20);
    A.val[3]      = std::numeric_limits<double>::quiet_NaN();
    A.val[17]     = std::numeric_limits<double>::infinity();
    v.push_back({"nan-and-inf-values", A});
  }
  {
    Csr<double> A = random_matrix(129, 129, 6, 0.0, 21);
    for (auto &a : A.val) a *= 1e300; // huge but finite products with |x| <= 1
    v.push_back({"huge-values", A});
  }
  return v;
}

template <class V>
Csr<V> cast(const Csr<double> &A)
{
  Csr<V> B;
  B.nrows   = A.nrows;
  B.ncols   = A.ncols;
  B.row_ptr = A.row_ptr;
  B.col_ind = A.col_ind;
  B.val.assign(A.val.begin(), A.val.end());
  return B;
}

inline bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Exact equality of two CSRs, NaN matching NaN.
template <class V>
bool equal(const Csr<V> &A, const Csr<V> &B, std::string &why)
{
  if (A.nrows != B.nrows || A.ncols != B.ncols) return why = "dimensions differ", false;
  if (A.row_ptr != B.row_ptr) return why = "row pointers differ", false;
  if (A.col_ind != B.col_ind) return why = "column indices differ", false;
  for (std::size_t k = 0; k < A.val.size(); ++k)
    if (!same_bits(double(A.val[k]), double(B.val[k]))) return why = "value " + std::to_string(k) + " differs", false;
  return true;
}

// out = alpha*A*x + beta*in, in long double, together with the magnitude sum that bounds the
// rounding error of any summation order.
template <class V>
void reference_spmv(const Csr<V> &A, const std::vector<V> &x, double alpha, double beta, const std::vector<V> &in, std::vector<long double> &out,
                    std::vector<long double> &mag)
{
  out.assign(std::size_t(A.nrows), 0);
  mag.assign(std::size_t(A.nrows), 0);
  for (std::int64_t i = 0; i < A.nrows; ++i) {
    long double s = 0, m = 0;
    for (std::int32_t j = A.row_ptr[i]; j < A.row_ptr[i + 1]; ++j) {
      s += (long double)A.val[j] * (long double)x[A.col_ind[j]];
      m += std::fabs((long double)A.val[j] * (long double)x[A.col_ind[j]]);
    }
    out[i] = alpha * s + (beta != 0 ? beta * (long double)in[i] : 0);
    mag[i] = std::fabs(alpha) * m + (beta != 0 ? std::fabs(beta * (long double)in[i]) : 0) + std::fabs(out[i]);
  }
}

// |y - ref| <= 2*(len+4)*eps*mag per row, the textbook bound for any summation order; non-finite
// results must match the reference's class (NaN with NaN, +Inf with +Inf).
template <class V>
bool close(const Csr<V> &A, const std::vector<V> &y, const std::vector<long double> &ref, const std::vector<long double> &mag, std::string &why)
{
  const long double eps = std::numeric_limits<V>::epsilon();
  for (std::int64_t i = 0; i < A.nrows; ++i) {
    const long double r = ref[i], v = y[i];
    if (std::isnan(r) != std::isnan(v) || (std::isinf(r) && r != v)) {
      why = "row " + std::to_string(i) + ": got " + std::to_string((double)v) + ", expected " + std::to_string((double)r);
      return false;
    }
    if (std::isnan(r) || std::isinf(r)) continue;
    if (std::isinf(v) && std::fabs(r) > (long double)std::numeric_limits<V>::max() * 0.5L) continue; // overflow of V itself
    const long double len = A.row_ptr[i + 1] - A.row_ptr[i];
    if (std::fabs(v - r) > 2 * (len + 4) * eps * mag[i] + std::numeric_limits<V>::denorm_min()) {
      why = "row " + std::to_string(i) + ": got " + std::to_string((double)v) + ", expected " + std::to_string((double)r);
      return false;
    }
  }
  return true;
}

template <class V>
std::vector<V> random_vector(std::int64_t n, std::uint64_t seed)
{
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<V>                         v(static_cast<std::size_t>(n));
  for (auto &e : v) e = V(d(rng));
  return v;
}

} // namespace testmat
