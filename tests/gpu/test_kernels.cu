// Device kernel tests: every format's CUDA kernel against the host reference, over the same
// matrices and parameter sweeps as the core tests, in double and float:
//   - conversion on the device (CMRS, SELL-P, BELLPACK) gives the host's arrays exactly, bit for
//     bit (padding, order, indices, values, the sigma and block-row orders, the 16-bit forms, the
//     row lengths and strip counts download() derives), from 32-bit and 64-bit index CSRs and
//     from a view whose row pointers start past 0 (a trailing block of rows);
//   - the row statistics of an uploaded CSR (group_stats, longest_row: what the parameter choices
//     ask the GPU) and SELL-P's stored size there equal the host's;
//   - cuSPARSE CSR built from the upload multiplies as the one built from the host;
//   - a device build that runs out of GPU memory throws DeviceError with out_of_memory() (the glue
//     answers PETSC_ERR_MEM), leaves no error behind, and the same build succeeds once memory is back;
//   - every device copy's footprint (what -mat_view prints, stored at build) counts exactly the
//     device memory the copy holds, bytes(), but for the padding stated at each check;
//   - SpMV of the device copy matches the long-double CSR reference within the rounding bound for
//     y = A x (y prefilled with NaN), y = a A x + b y in place, and z = y + A x; for CMRS with
//     every product kernel (warp, shared, subwarp with 8, 16 and chosen lanes, segmented in row
//     order, auto) over the whole height/sort/padding sweep, each resolved alike on both sides;
//   - the implicit transpose product of the device copy (spmv_transpose: atomics over the stored
//     arrays) matches the long-double CSR reference of A^T for the same three epilogues, and the
//     format's host reference (spmv_transpose of host.hpp) within twice that bound (both round,
//     in different orders; the atomics' order changes from run to run); cuSPARSE's transposed
//     SpMV likewise against the reference;
//   - both load policies (streaming and default caching);
//   - the two gathers of reordered copies (x in, the product out through the epilogue);
//   - the scatter of a compressed off-diagonal copy (its rows added through the row map), and the
//     ghost exchange's pieces: a pack on the high-priority stream after an event, pinned copies;
//   - BELLPACK's dense builder of the model benchmarks, and its occupancy query;
//   - padding never reads x (an Inf in x stays in the rows that reference it; with the transpose,
//     in the columns of the row it multiplies), and never writes out of bounds (memcheck);
//   - the transpose prologue (out = beta*in, never reading in when beta = 0) and the long-row
//     tail's transposed scatter;
//   - values-only updates: the gather through a slot map (-1 slots give 0) equals the host's, the
//     device slot map (slots_from_values on the value array of a device conversion of slot values)
//     equals the host's (core/values.hpp), and a device copy refilled in place through values()
//     equals, bit for bit, the device conversion of the new values, in every format and cuSPARSE CSR.
// `--quick` runs a reduced sweep in double only, for compute-sanitizer memcheck. `--only a,b` runs
// the named parts only (cmrs, cmrs-kernels, sellp, bellpack, csr, index-forms, csr-upload, gather,
// values, oom), `--precision double|float` one precision and `--shard k/n` every n-th parameter set
// of each sweep from the k-th: the full sweep takes longer than one device call may, so
// tests/gpu/run.sh splits it.
#include "../../src/mat/impls/auto/device.hpp"
#include "../../src/mat/impls/bellpack/device.hpp"
#include "../../src/mat/impls/bellpack/host.hpp"
#include "../../src/mat/impls/cmrs/device.hpp"
#include "../../src/mat/impls/cmrs/host.hpp"
#include "../../src/mat/impls/common/core/transform.hpp"
#include "../../src/mat/impls/common/core/values.hpp"
#include "../../src/mat/impls/sellp/device.hpp"
#include "../../src/mat/impls/sellp/host.hpp"
#include "../common/check.hpp"
#include "../common/describe.hpp"
#include "../common/matrices.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>

using namespace gpumats;
using testmat::Csr;

namespace {

bool quick = false;
std::string only;                // --only: comma-separated parts; empty: all
int         shard = 0, shards = 1; // --shard k/n: the k-th of n interleaved parts of each parameter sweep

bool part(const char *name)
{
  if (only.empty()) return true;
  const std::string list = "," + only + ",";
  return list.find("," + std::string(name) + ",") != std::string::npos;
}

template <class T>
struct DeviceArray {
  T          *p = nullptr;
  std::size_t n = 0;
  explicit DeviceArray(const std::vector<T> &h) : n(h.size())
  {
    cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T));
    if (n) cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~DeviceArray() { cudaFree(p); }
  std::vector<T> get() const
  {
    std::vector<T> h(n);
    if (n) cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};

template <class V>
bool bits_equal(const std::vector<V> &a, const std::vector<V> &b)
{
  return a.size() == b.size() && (a.empty() || !std::memcmp(a.data(), b.data(), a.size() * sizeof(V)));
}

// SpMV of a device operator against the reference, all epilogues and both load policies.
template <class V>
bool check_spmv(cuda::Operator<V> &op, const Csr<V> &A, bool exact_padding, std::string &why)
{
  const std::vector<V>     x  = testmat::random_vector<V>(A.ncols, 99);
  const std::vector<V>     y0 = testmat::random_vector<V>(A.nrows, 7);
  std::vector<long double> ref, mag;
  DeviceArray<V>           dx(x);
  for (cuda::LoadPolicy pol : {cuda::LoadPolicy::kStream, cuda::LoadPolicy::kDefault}) {
    op.load_policy = pol;
    struct Case {
      const char *name;
      double      alpha, beta;
      bool        separate_out;
    };
    for (const Case &c : {Case{"y=Ax", 1, 0, false}, Case{"y=aAx+by", 2.5, -0.5, false}, Case{"z=y+Ax", 1, 1, true}}) {
      std::vector<V> out0(std::size_t(A.nrows), std::numeric_limits<V>::quiet_NaN());
      if (!c.separate_out && c.beta != 0) out0 = y0;
      DeviceArray<V> din(y0), dout(out0);
      Epilogue<V>    ep{V(c.alpha), V(c.beta), c.separate_out ? din.p : dout.p, dout.p};
      op.spmv(dx.p, ep, nullptr);
      cudaError_t err = cudaDeviceSynchronize();
      if (err != cudaSuccess) return why = std::string("kernel failed: ") + cudaGetErrorString(err), false;
      testmat::reference_spmv(A, x, c.alpha, c.beta, y0, ref, mag);
      if (!testmat::close(A, dout.get(), ref, mag, why))
        return why = std::string(c.name) + (pol == cuda::LoadPolicy::kStream ? " stream: " : " default: ") + why, false;
    }
  }
  if (exact_padding && A.ncols > 0) {
    std::vector<V> xi = x;
    xi[std::size_t(A.ncols / 2)] = std::numeric_limits<V>::infinity();
    DeviceArray<V> dxi(xi), dout(std::vector<V>(std::size_t(A.nrows)));
    op.spmv(dxi.p, Epilogue<V>{V(1), V(0), nullptr, dout.p}, nullptr);
    cudaDeviceSynchronize();
    testmat::reference_spmv(A, xi, 1, 0, y0, ref, mag);
    if (!testmat::close(A, dout.get(), ref, mag, why)) return why = "Inf in x leaks through padding: " + why, false;
  }
  return true;
}

// The diagonal of a device operator (Operator::diagonal, MatGetDiagonal of the *cuda types) into
// zeros, bitwise against the CSR's: the stored value at (i, i), 0 where row i stores none.
template <class V>
bool check_diagonal(const cuda::Operator<V> &op, const Csr<V> &A, std::string &why)
{
  std::vector<V> ref(std::size_t(A.nrows), V(0));
  for (std::int64_t i = 0; i < A.nrows; ++i)
    for (std::int64_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_ind[k] == i) ref[std::size_t(i)] = A.val[k];
  DeviceArray<V> dd(std::vector<V>(std::size_t(A.nrows), V(0)));
  op.diagonal(dd.p, nullptr);
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return why = std::string("diagonal kernel failed: ") + cudaGetErrorString(err), false;
  const std::vector<V> got = dd.get();
  if (bits_equal(got, ref)) return true;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (std::memcmp(&got[i], &ref[i], sizeof(V))) {
      why = "diagonal: row " + std::to_string(i) + " holds " + std::to_string(double(got[i])) + ", the CSR " + std::to_string(double(ref[i]));
      break;
    }
  return false;
}

// The implicit transpose product of a device operator (spmv_transpose), every epilogue and both
// load policies, against the long-double CSR reference of A^T and, where given (host_t not empty),
// against the format's host reference over the same stored arrays.
template <class V>
bool check_spmv_transpose(cuda::Operator<V> &op, const Csr<V> &A, const std::function<void(const V *, const Epilogue<V> &)> &host_t, bool exact_padding,
                          std::string &why)
{
  const Csr<V>             At = transpose(A.view()); // A^T x is the row-wise product of At
  const std::vector<V>     x  = testmat::random_vector<V>(At.ncols, 98);
  const std::vector<V>     y0 = testmat::random_vector<V>(At.nrows, 8);
  std::vector<long double> ref, mag;
  DeviceArray<V>           dx(x);
  for (cuda::LoadPolicy pol : {cuda::LoadPolicy::kStream, cuda::LoadPolicy::kDefault}) {
    op.load_policy = pol;
    struct Case {
      const char *name;
      double      alpha, beta;
      bool        separate_out;
    };
    for (const Case &c : {Case{"y=A^Tx", 1, 0, false}, Case{"y=aA^Tx+by", 2.5, -0.5, false}, Case{"z=y+A^Tx", 1, 1, true}}) {
      std::vector<V> out0(std::size_t(At.nrows), std::numeric_limits<V>::quiet_NaN());
      if (!c.separate_out && c.beta != 0) out0 = y0;
      DeviceArray<V> din(y0), dout(out0);
      Epilogue<V>    ep{V(c.alpha), V(c.beta), c.separate_out ? din.p : dout.p, dout.p};
      op.spmv_transpose(dx.p, ep, nullptr);
      cudaError_t err = cudaDeviceSynchronize();
      if (err != cudaSuccess) return why = std::string("transpose kernel failed: ") + cudaGetErrorString(err), false;
      const std::vector<V> got = dout.get();
      const std::string    where = std::string(c.name) + (pol == cuda::LoadPolicy::kStream ? " stream: " : " default: ");
      testmat::reference_spmv(At, x, c.alpha, c.beta, y0, ref, mag);
      if (!testmat::close(At, got, ref, mag, why)) return why = where + why, false;
      if (host_t) { // the host reference, computed the same way from the same inputs
        std::vector<V> hin = y0, hout(std::size_t(At.nrows), std::numeric_limits<V>::quiet_NaN());
        if (!c.separate_out && c.beta != 0) hout = y0;
        host_t(x.data(), Epilogue<V>{V(c.alpha), V(c.beta), c.separate_out ? hin.data() : hout.data(), hout.data()});
        std::vector<long double> h(hout.begin(), hout.end()), mag2(mag);
        for (auto &m : mag2) m *= 2;
        if (!testmat::close(At, got, h, mag2, why)) return why = where + "against the host reference: " + why, false;
      }
    }
  }
  if (exact_padding && At.ncols > 0) {
    std::vector<V> xi = x;
    xi[std::size_t(At.ncols / 2)] = std::numeric_limits<V>::infinity();
    DeviceArray<V> dxi(xi), dout(std::vector<V>(std::size_t(At.nrows)));
    op.spmv_transpose(dxi.p, Epilogue<V>{V(1), V(0), nullptr, dout.p}, nullptr);
    cudaDeviceSynchronize();
    testmat::reference_spmv(At, xi, 1, 0, y0, ref, mag);
    if (!testmat::close(At, dout.get(), ref, mag, why)) return why = "transpose: Inf in x leaks through padding: " + why, false;
  }
  // every copy whose transposed product is checked has its diagonal checked too: both walk the
  // stored entries with their rows and columns, past the padding
  return check_diagonal(op, A, why);
}

using testmat::describe;

// The footprint of a device copy against the memory it holds: footprint index_bytes + value_bytes
// + `padding` == bytes(), where padding is what a builder allocates beyond the format on purpose
// (stated by each caller; 0 for every non-empty matrix).
template <class V>
bool check_bytes(const cuda::Operator<V> &op, std::int64_t padding, const char *which, std::string &why)
{
  const std::int64_t fp = op.footprint.index_bytes + op.footprint.value_bytes, held = std::int64_t(op.bytes());
  if (fp + padding == held) return true;
  why = std::string(which) + ": footprint " + std::to_string(fp) + " bytes + " + std::to_string(padding) + " of padding, but the device copy holds " +
        std::to_string(held);
  return false;
}

template <class V>
bool cmrs_case(const Csr<V> &A, const cmrs::Params &p, std::string &why)
{
  const auto H    = cmrs::from_csr(A.view(), p);
  auto       up   = cmrs::to_device(H);
  auto       conv = cmrs::build_on_device(A.view(), p);
  const auto D    = cmrs::download(*conv);
  if (D.strip_ptr != H.strip_ptr || D.col_ind != H.col_ind || !bits_equal(D.val, H.val) || D.strip_nnz != H.strip_nnz)
    return why = "device conversion differs from host", false;
  if (D.params.kernel != H.params.kernel || D.params.lanes != H.params.lanes)
    return why = "device conversion resolved the kernel to " + describe(D.params) + ", the host to " + describe(H.params), false;
  // strip_ptr, col, val: exactly the footprint
  if (!check_bytes(*up, 0, "uploaded", why) || !check_bytes(*conv, 0, "converted", why)) return false;
  if (!check_spmv(*up, A, true, why)) return why = "uploaded: " + why, false;
  if (!check_spmv(*conv, A, true, why)) return false;
  const std::function<void(const V *, const Epilogue<V> &)> host_t = [&](const V *x, const Epilogue<V> &ep) { cmrs::spmv_transpose(H, x, ep); };
  if (!check_spmv_transpose(*up, A, host_t, true, why)) return why = "uploaded: " + why, false;
  return check_spmv_transpose(*conv, A, host_t, true, why);
}

// Every SpMV kernel over the layout of p (p.kernel replaced): the device conversion gives the host's
// arrays and resolves the kernel as the host does, and the products of the converted copy and of
// the uploaded host copy match the reference (padding never reads x). The transpose kernel is the
// same for every kernel: checked once per layout by cmrs_case, and here on the segmented copies
// (the one kernel with its own default order). The segmented kernel takes row order only.
template <class V>
bool cmrs_kernels_case(const Csr<V> &A, const cmrs::Params &p, std::string &why)
{
  struct Variant {
    cmrs::Kernel kernel;
    int          lanes;
  };
  for (const Variant &k : {Variant{cmrs::Kernel::kShared, 0}, Variant{cmrs::Kernel::kSubwarp, 8}, Variant{cmrs::Kernel::kSubwarp, 16},
                           Variant{cmrs::Kernel::kSubwarp, 0}, Variant{cmrs::Kernel::kSegmented, 0}, Variant{cmrs::Kernel::kAuto, 0}}) {
    if (k.kernel == cmrs::Kernel::kSegmented && p.sort_columns) continue;
    if (quick && ((k.kernel == cmrs::Kernel::kSubwarp && k.lanes == 0) || k.kernel == cmrs::Kernel::kAuto)) continue; // the same kernels again
    cmrs::Params q = p;
    q.kernel       = k.kernel;
    q.lanes        = k.lanes;
    const auto H    = cmrs::from_csr(A.view(), q);
    auto       conv = cmrs::build_on_device(A.view(), q);
    const auto D    = cmrs::download(*conv);
    const std::string what = describe(H.params) + ": ";
    if (D.strip_ptr != H.strip_ptr || D.col_ind != H.col_ind || !bits_equal(D.val, H.val) || D.strip_nnz != H.strip_nnz)
      return why = what + "device conversion differs from host", false;
    if (D.params.kernel != H.params.kernel || D.params.lanes != H.params.lanes || H.params.kernel == cmrs::Kernel::kAuto ||
        (H.params.kernel == cmrs::Kernel::kSubwarp && H.params.lanes != 8 && H.params.lanes != 16))
      return why = what + "the device conversion resolved the kernel to " + describe(D.params), false;
    if (!check_bytes(*conv, 0, "converted", why)) return why = what + why, false;
    if (!check_spmv(*conv, A, true, why)) return why = what + why, false;
    if (!quick) {
      auto up = cmrs::to_device(H);
      if (!check_spmv(*up, A, true, why)) return why = what + "uploaded: " + why, false;
    }
    if (k.kernel == cmrs::Kernel::kSegmented) {
      const std::function<void(const V *, const Epilogue<V> &)> host_t = [&](const V *x, const Epilogue<V> &ep) { cmrs::spmv_transpose(H, x, ep); };
      if (!check_spmv_transpose(*conv, A, host_t, true, why)) return why = what + why, false;
    }
  }
  return true;
}

// A's pattern with other values: A0's cycled through 300 of them (A's own take 5), doubled
template <class V>
Csr<V> new_values(const Csr<V> &A, const Csr<V> &A0)
{
  Csr<V> B = A;
  for (std::size_t k = 0; k < B.val.size(); ++k) B.val[k] = V(2) * A0.val[(7 * k + 3) % std::size_t(300) % A0.val.size()];
  return B;
}

// A values-only update of a dictionary copy as the glue makes it (refill_compressed): the plain
// array opened beside the codes must have the layout's length; it gets `plain`, the new values in
// that layout, for the format's encoder to turn into codes.
template <class V>
bool fill_plain_values(cuda::Operator<V> &op, const std::vector<V> &plain, std::string &why)
{
  std::int64_t n   = -1;
  V           *dst = op.open_plain_values(&n);
  if (!dst || n != std::int64_t(plain.size())) return why = "open_plain_values: " + std::to_string(n) + " values for a layout of " + std::to_string(plain.size()), false;
  cudaMemcpy(dst, plain.data(), plain.size() * sizeof(V), cudaMemcpyHostToDevice);
  return true;
}

// A values-only update of a dictionary copy (the glue's refill_compressed), both ways it can go.
// B's values gathered into the plain array opened beside the codes and encoded anew against B's
// table: B's own dictionary form BD, array for array. Gathered again and kept plain, as when they
// are too many for a dictionary (keep_plain_values): B's plain form BP in the same layout, a plain
// footprint and a value array for the next update. `encode` and `download` are the format's,
// `same_layout` compares the index arrays of two host forms.
template <class V, class M, class Encode, class Download, class SameLayout>
bool values_update_case(cuda::Operator<V> &conv, const Csr<V> &B, const M &BP, const M &BD, const std::vector<V> &table, bool exact_padding, Encode encode,
                        Download download, SameLayout same_layout, std::string &why)
{
  if (!fill_plain_values(conv, BP.val, why)) return why = "encoded anew: " + why, false;
  encode(conv, table);
  const M R = download(conv);
  if (!conv.values_compressed() || R.code_bytes != BD.code_bytes || R.code8 != BD.code8 || R.code16 != BD.code16 || !bits_equal(R.dict, BD.dict) ||
      R.val.size() != BD.val.size())
    return why = "encoded anew from a values-only update: differs from the new values' own dictionary form", false;
  if (!check_bytes(conv, 0, "encoded anew", why) || !check_spmv(conv, B, exact_padding, why)) return why = "encoded anew: " + why, false;
  if (!fill_plain_values(conv, BP.val, why)) return why = "kept plain: " + why, false;
  conv.keep_plain_values();
  const M K = download(conv);
  if (conv.values_compressed() || K.code_bytes != 0 || !bits_equal(K.val, BP.val) || !same_layout(K, R))
    return why = "kept plain after a values-only update: differs from the new values' plain form", false;
  if (conv.footprint.value_bytes != std::int64_t(sizeof(V)) * conv.footprint.stored) return why = "kept plain: the footprint still counts a dictionary", false;
  if (!check_bytes(conv, 0, "kept plain", why) || !check_spmv(conv, B, exact_padding, why)) return why = "kept plain: " + why, false;
  std::int64_t nv = 0;
  if (!conv.values(&nv) || nv != conv.footprint.stored) return why = "kept plain: no value array for the next values-only update", false;
  return true;
}

// The dictionary form of SELL-P (values as codes into a table): uploaded arrays come back as
// they went, the footprint counts codes and table exactly, products match the reference, the
// transpose matches the dictionary host reference, and y = A x is bitwise the plain device copy's
// (same values, same order of summation, same kernel but for the value load).
template <class V>
bool sellp_dictionary_case(const Csr<V> &A0, sellp::Params p, std::int64_t distinct, std::string &why)
{
  Csr<V> A = A0;
  for (std::size_t k = 0; k < A.val.size(); ++k) A.val[k] = A0.val[k % std::size_t(distinct)];
  p.values      = Values::kPlain;
  const auto Hp = sellp::from_csr(A.view(), p);
  p.values      = Values::kDictionary;
  const auto H  = sellp::from_csr(A.view(), p);
  if (A.nnz() && !H.values_compressed()) return why = "not compressed", false;
  auto       up = sellp::to_device(H);
  auto       pl = sellp::to_device(Hp);
  const auto D  = sellp::download(*up);
  if (up->values_compressed() != H.values_compressed() || D.code_bytes != H.code_bytes || D.code8 != H.code8 || D.code16 != H.code16 ||
      !bits_equal(D.dict, H.dict) || (H.values_compressed() && !D.val.empty()))
    return why = "download differs from the uploaded dictionary form", false;
  if (!check_bytes(*up, 0, "dictionary", why)) return false;
  if (!check_spmv(*up, A, true, why)) return false;
  // the glue's path: converted on the device, then encoded there against the sorted table
  if (A.nnz()) {
    auto       conv = sellp::build_on_device(A.view(), p);
    sellp::encode_values(*conv, dictionary_table(A.val.data(), A.nnz()));
    const auto C    = sellp::download(*conv);
    if (!conv->values_compressed() || C.code_bytes != H.code_bytes || C.code8 != H.code8 || C.code16 != H.code16 || !bits_equal(C.dict, H.dict) ||
        C.col_ind != H.col_ind || C.col_delta != H.col_delta)
      return why = "device encoding differs from the host's", false;
    if (!check_bytes(*conv, 0, "encoded on the device", why) || !check_spmv(*conv, A, true, why)) return why = "encoded on the device: " + why, false;
  }
  // a values-only update, encoded anew and kept plain (values_update_case): B has the same
  // pattern and 300 values where A has 5, so 2-byte codes where A has 1-byte ones (once per matrix
  // and parameters: the host forms of B are what the SELL-P sweep spends on)
  if (A.nnz() && distinct == 5) {
    auto conv = sellp::build_on_device(A.view(), p);
    sellp::encode_values(*conv, dictionary_table(A.val.data(), A.nnz()));
    const Csr<V>  B  = new_values(A, A0);
    sellp::Params pp = p;
    pp.values        = Values::kPlain;
    const auto BP    = sellp::from_csr(B.view(), pp);
    const auto BD    = sellp::from_csr(B.view(), p);
    if (!values_update_case(
          *conv, B, BP, BD, dictionary_table(B.val.data(), B.nnz()), true, [](cuda::Operator<V> &D, const std::vector<V> &t) { sellp::encode_values(D, t); },
          [](const cuda::Operator<V> &D) { return sellp::download(D); }, [](const auto &X, const auto &Y) { return X.col_ind == Y.col_ind && X.col_delta == Y.col_delta; },
          why))
      return false;
  }
  const std::function<void(const V *, const Epilogue<V> &)> host_t = [&](const V *x, const Epilogue<V> &ep) { sellp::spmv_transpose(H, x, ep); };
  if (!check_spmv_transpose(*up, A, host_t, true, why)) return false;
  // the table staged in shared memory (1-byte codes; other widths ignore the flag)
  sellp::Params ps = p;
  ps.shared_table  = true;
  auto sh          = sellp::to_device(sellp::from_csr(A.view(), ps));
  if (!check_spmv(*sh, A, true, why)) return why = "shared table: " + why, false;
  if (!check_spmv_transpose(*sh, A, host_t, true, why)) return why = "shared table: " + why, false;
  const std::vector<V> x = testmat::random_vector<V>(A.ncols, 3);
  DeviceArray<V>       dx(x), y1(std::vector<V>(std::size_t(A.nrows))), y2(std::vector<V>(std::size_t(A.nrows))), y3(std::vector<V>(std::size_t(A.nrows)));
  for (cuda::LoadPolicy pol : {cuda::LoadPolicy::kStream, cuda::LoadPolicy::kDefault}) {
    up->load_policy = pl->load_policy = sh->load_policy = pol;
    up->spmv(dx.p, Epilogue<V>{V(1), V(0), nullptr, y1.p}, nullptr);
    pl->spmv(dx.p, Epilogue<V>{V(1), V(0), nullptr, y2.p}, nullptr);
    sh->spmv(dx.p, Epilogue<V>{V(1), V(0), nullptr, y3.p}, nullptr);
    cudaDeviceSynchronize();
    if (!bits_equal(y1.get(), y2.get())) return why = "y = A x differs in bits from the plain copy's", false;
    if (!bits_equal(y3.get(), y2.get())) return why = "shared table: y = A x differs in bits from the plain copy's", false;
  }
  return true;
}

template <class V>
bool sellp_case(const Csr<V> &A, const sellp::Params &p, std::string &why)
{
  const auto H    = sellp::from_csr(A.view(), p);
  auto       up   = sellp::to_device(H);
  auto       conv = sellp::build_on_device(A.view(), p);
  const auto D    = sellp::download(*conv);
  if (D.slice_ptr != H.slice_ptr || D.index16 != H.index16 || D.col_ind != H.col_ind || D.col_delta != H.col_delta || D.col_base != H.col_base ||
      !bits_equal(D.val, H.val) || D.row_perm != H.row_perm || D.row_len != H.row_len)
    return why = "device conversion differs from host", false;
  // slice_ptr, col (32-bit, or 16-bit deltas with their bases), val and the sigma row order (the
  // footprint counts it: the kernel reads it for every row): exactly the footprint
  if (!check_bytes(*up, 0, "uploaded", why) || !check_bytes(*conv, 0, "converted", why)) return false;
  if (!check_spmv(*up, A, true, why)) return why = "uploaded: " + why, false;
  if (!check_spmv(*conv, A, true, why)) return false;
  const std::function<void(const V *, const Epilogue<V> &)> host_t = [&](const V *x, const Epilogue<V> &ep) { sellp::spmv_transpose(H, x, ep); };
  if (!check_spmv_transpose(*up, A, host_t, true, why)) return why = "uploaded: " + why, false;
  if (!check_spmv_transpose(*conv, A, host_t, true, why)) return false;
  // the value dictionary: A's own values cycled through 5 of them (1-byte codes) and through 300
  // (2-byte codes, where A has that many entries)
  for (const std::int64_t distinct : {std::int64_t(5), std::int64_t(300)})
    if (!sellp_dictionary_case(A, p, distinct, why)) return why = "dictionary of " + std::to_string(distinct) + ": " + why, false;
  return true;
}

template <class V>
bool bellpack_case(const Csr<V> &A, const bellpack::Params &p, std::string &why)
{
  const auto H    = bellpack::from_csr(A.view(), p);
  auto       up   = bellpack::to_device(H);
  auto       conv = bellpack::build_on_device(A.view(), p);
  const auto D    = bellpack::download(*conv);
  if (D.part_ptr != H.part_ptr || D.block_col != H.block_col || D.row_perm != H.row_perm || !bits_equal(D.val, H.val))
    return why = "device conversion differs from host", false;
  // part_ptr, bcol, val and the block-row order: the footprint, but the device conversion never
  // allocates an empty array (the kernel is handed real pointers): one int32 block column and one
  // value when there are no slots, one int32 of block-row order when there are no block rows
  const std::int64_t pad = (H.slots() ? 0 : std::int64_t(sizeof(std::int32_t) + sizeof(V))) + (H.block_rows ? 0 : std::int64_t(sizeof(std::int32_t)));
  if (!check_bytes(*up, 0, "uploaded", why) || !check_bytes(*conv, pad, "converted", why)) return false;
  if (!check_spmv(*up, A, false, why)) return why = "uploaded: " + why, false;
  if (!check_spmv(*conv, A, false, why)) return false;
  // block fill: an Inf in x may reach a neighbour column through an explicit zero, as forward
  const std::function<void(const V *, const Epilogue<V> &)> host_t = [&](const V *x, const Epilogue<V> &ep) { bellpack::spmv_transpose(H, x, ep); };
  if (!check_spmv_transpose(*up, A, host_t, false, why)) return why = "uploaded: " + why, false;
  return check_spmv_transpose(*conv, A, host_t, false, why);
}

// The dictionary form of BELLPACK, as sellp_dictionary_case: A's values cycled through `distinct`
// of them; the host form uploaded and downloaded unchanged; the device conversion encoded on the
// device against the table the glue gives it (the distinct values and +0.0) into the host's codes;
// products and transposes against the references; y = A x bitwise the plain device copy's, with
// one thread per block row and with the wide kernels alike (p.row_threads).
template <class V>
bool bellpack_dictionary_case(const Csr<V> &A0, const bellpack::Params &p0, std::string &why)
{
  for (const std::int64_t distinct : {std::int64_t(5), std::int64_t(300)}) {
    const std::string what = "dictionary of " + std::to_string(distinct) + ": ";
    Csr<V>            A    = A0;
    for (std::size_t k = 0; k < A.val.size(); ++k) A.val[k] = A0.val[k % std::size_t(distinct)];
    bellpack::Params p = p0;
    p.values           = Values::kPlain;
    const auto Hp      = bellpack::from_csr(A.view(), p);
    p.values           = Values::kDictionary;
    const auto H       = bellpack::from_csr(A.view(), p);
    if (H.stored() && !H.values_compressed()) return why = what + "not compressed", false;
    auto       up = bellpack::to_device(H);
    auto       pl = bellpack::to_device(Hp);
    const auto D  = bellpack::download(*up);
    if (up->values_compressed() != H.values_compressed() || D.code_bytes != H.code_bytes || D.code8 != H.code8 || D.code16 != H.code16 ||
        !bits_equal(D.dict, H.dict) || !D.val.empty() != !H.val.empty())
      return why = what + "download differs from the uploaded dictionary form", false;
    if (!check_bytes(*up, 0, "dictionary", why) || !check_spmv(*up, A, false, why)) return why = what + why, false;
    const std::function<void(const V *, const Epilogue<V> &)> host_t = [&](const V *x, const Epilogue<V> &ep) { bellpack::spmv_transpose(H, x, ep); };
    if (!check_spmv_transpose(*up, A, host_t, false, why)) return why = what + why, false;
    if (H.stored()) { // the glue's path: converted on the device, encoded there
      auto conv = bellpack::build_on_device(A.view(), p);
      bellpack::encode_values(*conv, with_zero(dictionary_table(A.val.data(), A.nnz())));
      const auto C = bellpack::download(*conv);
      if (!conv->values_compressed() || C.code_bytes != H.code_bytes || C.code8 != H.code8 || C.code16 != H.code16 || !bits_equal(C.dict, H.dict) ||
          C.block_col != H.block_col || C.part_ptr != H.part_ptr)
        return why = what + "device encoding differs from the host's", false;
      if (!check_spmv(*conv, A, false, why) || !check_spmv_transpose(*conv, A, host_t, false, why)) return why = what + "encoded on the device: " + why, false;
      if (distinct == 5) { // a values-only update, as in sellp_dictionary_case
        const Csr<V>     B  = new_values(A, A0);
        bellpack::Params pp = p;
        pp.values           = Values::kPlain;
        const auto BP       = bellpack::from_csr(B.view(), pp);
        const auto BD       = bellpack::from_csr(B.view(), p);
        auto       re       = bellpack::build_on_device(A.view(), p);
        bellpack::encode_values(*re, with_zero(dictionary_table(A.val.data(), A.nnz())));
        if (!values_update_case(
              *re, B, BP, BD, with_zero(dictionary_table(B.val.data(), B.nnz())), false,
              [](cuda::Operator<V> &D, const std::vector<V> &t) { bellpack::encode_values(D, t); }, [](const cuda::Operator<V> &D) { return bellpack::download(D); },
              [](const auto &X, const auto &Y) { return X.block_col == Y.block_col && X.part_ptr == Y.part_ptr; }, why))
          return why = what + why, false;
      }
      // a table without +0.0 misses the fill's zeros: refused, not a wrong product
      bool refused = false;
      if (value_bits(C.dict.front()) == 0 && C.dict.size() > 1) {
        auto again = bellpack::build_on_device(A.view(), p);
        try {
          bellpack::encode_values(*again, std::vector<V>(C.dict.begin() + 1, C.dict.end()));
        } catch (const FormatError &) {
          refused = true;
        }
        if (!refused && A.nnz() != H.stored()) return why = what + "a table without +0.0 was accepted for a layout that stores zeros", false;
      }
    }
    const std::vector<V> x = testmat::random_vector<V>(A.ncols, 3);
    DeviceArray<V>       dx(x), y1(std::vector<V>(std::size_t(A.nrows))), y2(std::vector<V>(std::size_t(A.nrows)));
    up->spmv(dx.p, Epilogue<V>{V(1), V(0), nullptr, y1.p}, nullptr);
    pl->spmv(dx.p, Epilogue<V>{V(1), V(0), nullptr, y2.p}, nullptr);
    cudaDeviceSynchronize();
    if (!bits_equal(y1.get(), y2.get())) return why = what + "y = A x differs in bits from the plain copy's", false;
  }
  return true;
}

// Small matrices get every parameter value; large ones (many blocks and grid strides) the reduced
// sweep, where host-side conversion would otherwise dominate the run.
// cuSPARSE CSR, autocuda's fallback candidate, and the trial timer on it
template <class V>
void run_csr(const char *vname, const std::vector<testmat::Named> &mats)
{
  for (const auto &m : mats) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    try {
      auto op = autosel::csr_to_device(A.view());
      // row_ptr, col, val: the footprint, but an empty matrix still gets one column index and one
      // value, as cuSPARSE is handed real pointers
      const std::int64_t pad = A.nnz() ? 0 : std::int64_t(sizeof(std::int32_t) + sizeof(V));
      ok = check_bytes(*op, pad, "cusparse", why) && check_spmv(*op, A, true, why) && check_spmv_transpose<V>(*op, A, {}, true, why) &&
           autosel::time_spmv(*op, A.nrows, A.ncols, 1, 2, nullptr) >= 0;
    } catch (const std::exception &e) {
      ok  = false;
      why = e.what();
    }
    check::record(ok, std::string("gpu/cusparse-csr/") + vname + "/" + m.name, why);
  }
}

template <class V, class P>
void run(const char *name, const char *vname, const std::vector<testmat::Named> &mats, const std::vector<P> &full, const std::vector<P> &reduced,
         bool (*one)(const Csr<V> &, const P &, std::string &))
{
  if (!part(name)) return;
  for (const auto &m : mats) {
    const Csr<V>          A     = testmat::cast<V>(m.A);
    const std::vector<P> &sweep = (quick || A.nrows > 20000) ? reduced : full;
    std::string           why;
    bool                  ok = true;
    for (std::size_t k = 0; k < sweep.size(); ++k) {
      if (int(k % std::size_t(shards)) != shard) continue;
      const P &p = sweep[k];
      try {
        if (!one(A, p, why)) {
          why = describe(p) + ": " + why;
          ok  = false;
          break;
        }
      } catch (const std::exception &e) {
        why = describe(p) + ": exception: " + e.what();
        ok  = false;
        break;
      }
    }
    check::record(ok, std::string("gpu/") + name + "/" + vname + "/" + m.name, why);
  }
}

// The device builds from other index forms of the same matrix: 64-bit indices (PetscInt of a
// 64-bit-index PETSc), and a view of rows [k, n) whose row pointers start at the k-th row's offset
// into the full arrays (row_ptr[0] != 0); each against the host conversion of the same view, bit
// for bit, with the row statistics of its upload.
template <class V, class I>
bool index_form_case(const CsrView<V, I, I> &A, std::string &why)
{
  const cuda::DeviceCsr<V, I> up(A, nullptr);
  for (const std::int64_t g : {1, 3, 8, 32})
    for (const std::int64_t m : {1, 2, 32})
      if (!(up.group_stats(g, m, m) == group_stats(A, g, m, m))) return why = "group_stats(" + std::to_string(g) + ", " + std::to_string(m) + ") differs", false;
  if (up.longest_row() != longest_row(A)) return why = "longest row differs", false;
  for (const cmrs::Params &p : {cmrs::Params{5, true, 1}, cmrs::Params{16, true, 32}, cmrs::Params{3, false, 1}, cmrs::Params{6, false, 1, cmrs::Kernel::kSegmented},
                                cmrs::Params{4, true, 1, cmrs::Kernel::kAuto}}) {
    const auto H = cmrs::from_csr(A, p);
    const auto D = cmrs::download(*cmrs::build_on_device(up, p));
    if (D.strip_ptr != H.strip_ptr || D.col_ind != H.col_ind || !bits_equal(D.val, H.val) || D.strip_nnz != H.strip_nnz || D.params.kernel != H.params.kernel ||
        D.params.lanes != H.params.lanes)
      return why = "CMRS " + describe(p) + ": device conversion differs from host", false;
  }
  for (const sellp::Params &p : {sellp::Params{8, 4, 1, sellp::Index::k32}, sellp::Params{4, 2, 16, sellp::Index::k16_if_possible}, sellp::Params{32, 1, 64, sellp::Index::k32}}) {
    const auto H = sellp::from_csr(A, p);
    const auto D = sellp::download(*sellp::build_on_device(up, p));
    if (D.slice_ptr != H.slice_ptr || D.index16 != H.index16 || D.col_ind != H.col_ind || D.col_delta != H.col_delta || D.col_base != H.col_base ||
        !bits_equal(D.val, H.val) || D.row_perm != H.row_perm || D.row_len != H.row_len)
      return why = "SELL-P " + describe(p) + ": device conversion differs from host", false;
    if (sellp::stored_on_device(up, p) != sellp::stored_entries(A, p)) return why = "SELL-P " + describe(p) + ": stored size differs", false;
  }
  for (const bellpack::Params &p : {bellpack::Params{1, 1, 32}, bellpack::Params{3, 3, 128}, bellpack::Params{2, 5, 1}}) {
    const auto H = bellpack::from_csr(A, p);
    const auto D = bellpack::download(*bellpack::build_on_device(up, p));
    if (D.part_ptr != H.part_ptr || D.block_col != H.block_col || D.row_perm != H.row_perm || !bits_equal(D.val, H.val))
      return why = "BELLPACK " + describe(p) + ": device conversion differs from host", false;
  }
  return true;
}

template <class V>
void run_index_forms(const char *vname, const std::vector<testmat::Named> &mats)
{
  for (const auto &m : mats) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    try {
      Csr<V, std::int64_t> L; // 64-bit indices
      L.nrows = A.nrows, L.ncols = A.ncols;
      L.row_ptr.assign(A.row_ptr.begin(), A.row_ptr.end());
      L.col_ind.assign(A.col_ind.begin(), A.col_ind.end());
      L.val = A.val;
      ok = index_form_case<V, std::int64_t>(L.view(), why);
      if (ok && A.nrows > 1) { // rows [k, n), row_ptr[0] = the k-th row's offset (nonzero unless the first k rows are empty)
        const std::int64_t           k = A.nrows / 3 + 1;
        const CsrView<V, std::int32_t> T{A.nrows - k, A.ncols, A.row_ptr.data() + k, A.col_ind.data(), A.val.data()};
        ok = index_form_case<V, std::int32_t>(T, why);
        if (!ok) why = "rows from " + std::to_string(k) + ": " + why;
      } else if (!ok) {
        why = "64-bit indices: " + why;
      }
    } catch (const std::exception &e) {
      ok  = false;
      why = std::string("exception: ") + e.what();
    }
    check::record(ok, std::string("gpu/index-forms/") + vname + "/" + m.name, why);
  }
}

// cuSPARSE CSR built from the upload (autocuda's candidate in a GPU build): the same products as
// the one built from the host, and its footprint
template <class V>
void run_csr_from_upload(const char *vname, const std::vector<testmat::Named> &mats)
{
  for (const auto &m : mats) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    try {
      const cuda::DeviceCsr<V, std::int32_t> up(A.view(), nullptr);
      auto                                   op  = autosel::csr_from_device(up);
      const std::int64_t                     pad = A.nnz() ? 0 : std::int64_t(sizeof(std::int32_t) + sizeof(V));
      ok = check_bytes(*op, pad, "cusparse from upload", why) && check_spmv(*op, A, true, why) && check_spmv_transpose<V>(*op, A, {}, true, why);
    } catch (const std::exception &e) {
      ok  = false;
      why = e.what();
    }
    check::record(ok, std::string("gpu/cusparse-csr-from-upload/") + vname + "/" + m.name, why);
  }
}

// The value changes of a device CSR in place (csr.hpp: a product's result whose values live on the
// GPU): row/column scaling bitwise against the host's, and the subset MatAXPY against the host's,
// with its count of X's entries missing from Y (X: every other entry of each row of A, then the
// same with one column added to some rows, which must be counted and change nothing).
template <class V>
void csr_value_ops(const char *vname, const std::vector<testmat::Named> &mats)
{
  for (const auto &m : mats) {
    const Csr<V>         A = testmat::cast<V>(m.A);
    const std::vector<V> l = testmat::random_vector<V>(A.nrows, 5), r = testmat::random_vector<V>(A.ncols, 6);
    std::string          why;
    bool                 ok = true;
    // scaling: rows, columns, both
    for (int mode = 1; mode <= 3 && ok; ++mode) {
      const bool     rows = mode & 1, cols = mode & 2;
      std::vector<V> ref = A.val;
      for (std::int64_t i = 0; i < A.nrows; ++i)
        for (std::int32_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
          const V s = rows ? l[std::size_t(i)] : V(1);
          ref[std::size_t(k)] *= cols ? s * r[std::size_t(A.col_ind[std::size_t(k)])] : s;
        }
      DeviceArray<std::int32_t> rp(A.row_ptr), ci(A.col_ind);
      DeviceArray<V>            val(A.val), dl(l), dr(r);
      cuda::csr_diagonal_scale<V, std::int32_t>(A.nrows, rp.p, ci.p, val.p, rows ? dl.p : nullptr, cols ? dr.p : nullptr, nullptr);
      const std::vector<V> got = val.get(); // equal to the host's, NaN for NaN (the GPU's NaNs carry no payload)
      for (std::size_t k = 0; k < got.size() && ok; ++k)
        if (!testmat::same_bits(double(got[k]), double(ref[k])))
          ok = false, why = std::string("diagonal scale (") + (rows ? "rows" : "") + (cols ? " columns" : "") + "): entry " + std::to_string(k) + " differs from the host's";
    }
    // subset axpy
    for (int extra = 0; extra <= 1 && ok; ++extra) {
      Csr<V> X;
      X.nrows = A.nrows, X.ncols = A.ncols;
      std::int64_t added = 0;
      for (std::int64_t i = 0; i < A.nrows; ++i) {
        std::vector<std::int32_t> cols;
        for (std::int32_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; k += 2) cols.push_back(A.col_ind[std::size_t(k)]);
        if (extra && i % 3 == 0 && A.ncols > 0) { // the first column this row of A lacks, if any
          std::int32_t c = 0;
          for (std::int32_t k = A.row_ptr[i]; k < A.row_ptr[i + 1] && A.col_ind[std::size_t(k)] == c; ++k) ++c;
          if (c < A.ncols) cols.push_back(c), ++added;
        }
        std::sort(cols.begin(), cols.end());
        for (std::int32_t c : cols) X.col_ind.push_back(c), X.val.push_back(V(0.5) + V(c % 5));
        X.row_ptr.push_back(std::int32_t(X.col_ind.size()));
      }
      DeviceArray<std::int32_t> yp(A.row_ptr), yc(A.col_ind), xp(X.row_ptr), xc(X.col_ind);
      DeviceArray<V>            yv(A.val), xv(X.val);
      const V                   a       = V(-0.75);
      const std::int64_t        missing = cuda::csr_subset_axpy<V, std::int32_t>(A.nrows, a, xp.p, xc.p, xv.p, yp.p, yc.p, yv.p, false, nullptr);
      if (missing != added) {
        ok  = false;
        why = "subset axpy counted " + std::to_string(missing) + " missing entries, expected " + std::to_string(added);
        break;
      }
      if (!bits_equal(yv.get(), A.val)) ok = false, why = "subset axpy changed Y while counting"; // (untouched: bit for bit)
      if (extra || !ok) continue;
      std::vector<V> ref = A.val;
      for (std::int64_t i = 0; i < A.nrows; ++i)
        for (std::int32_t e = X.row_ptr[i]; e < X.row_ptr[i + 1]; ++e)
          for (std::int32_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
            if (A.col_ind[std::size_t(k)] == X.col_ind[std::size_t(e)]) ref[std::size_t(k)] += a * X.val[std::size_t(e)];
      (void)cuda::csr_subset_axpy<V, std::int32_t>(A.nrows, a, xp.p, xc.p, xv.p, yp.p, yc.p, yv.p, true, nullptr);
      const std::vector<V> got = yv.get();
      for (std::size_t k = 0; k < got.size() && ok; ++k) { // (the GPU may fuse the multiply-add)
        const V tol = V(4) * std::numeric_limits<V>::epsilon() * (std::abs(A.val[k]) + std::abs(ref[k] - A.val[k]) + V(1e-30));
        if (got[k] != ref[k] && !(std::abs(got[k] - ref[k]) <= tol) && !(std::isnan(got[k]) && std::isnan(ref[k])))
          ok = false, why = "subset axpy: entry " + std::to_string(k) + " is " + std::to_string(double(got[k])) + ", expected " + std::to_string(double(ref[k]));
      }
    }
    check::record(ok, std::string("gpu/csr-value-ops/") + vname + "/" + m.name, why);
  }
}

template <class V>
void run_all(const char *vname)
{
  std::vector<testmat::Named> mats = testmat::edge_cases();
  if (!quick) { // sizes that span many thread blocks and the grid
    mats.push_back({"random-200k", testmat::random_matrix(200000, 200000, 16, 0.02, 31)});
    mats.push_back({"poisson2d-400", testmat::poisson2d(400)});
    mats.push_back({"blocks-3dof-60k", testmat::block_chain(60000, 3)});
  }
  std::vector<cmrs::Params> cp, cq;
  for (int h = 1; h <= 16; ++h)
    for (bool sort : {false, true})
      for (int pad : {1, 32}) {
        cp.push_back({h, sort, pad});
        if (h == 1 || h == 5 || h == 16) cq.push_back({h, sort, pad});
      }
  std::vector<sellp::Params> sp, sq;
  for (int b : {1, 2, 4, 8, 32, 128, 1024})
    for (int t : {1, 2, 4, 8, 16, 32})
      if (b * t <= 1024)
        for (int sigma : {1, 4 * b})
          for (sellp::Index ix : {sellp::Index::k32, sellp::Index::k16_if_possible}) {
            sp.push_back({b, t, sigma, ix});
            if (b * t == 32 || b * t == 1024 || b * t == 2) sq.push_back({b, t, sigma, ix});
          }
  // threads per block row: auto (0) and each forced value in turn over the block sizes, so both
  // kernels (one thread per block row, and wide) see every block size without a sweep of its own
  std::vector<bellpack::Params> bp, bq;
  const int                     row_threads[] = {0, 1, 2, 4, 8, 16, 32};
  int                           n_bp = 0, n_bq = 0;
  for (int r = 1; r <= 8; ++r)
    for (int c = 1; c <= 8; ++c)
      for (int R : {1, 32, 128}) {
        bp.push_back({r, c, R, row_threads[n_bp++ % 7]});
        if (R == 32 && (r == c || r == 1 || c == 8)) bq.push_back({r, c, R, row_threads[n_bq++ % 7]});
      }
  run<V, cmrs::Params>("cmrs", vname, mats, cp, cq, cmrs_case<V>);
  // the other kernels: the full sweep on small matrices; on large ones (and under memcheck) the
  // buffer heights 4, 8 and 16 (runtime heights 3, 8 and 16), both orders, both paddings
  const std::vector<cmrs::Params> ck{{3, false, 1}, {8, true, 1}, {16, false, 32}, {16, true, 32}};
  run<V, cmrs::Params>("cmrs-kernels", vname, mats, cp, ck, cmrs_kernels_case<V>);
  run<V, sellp::Params>("sellp", vname, mats, sp, sq, sellp_case<V>);
  run<V, bellpack::Params>("bellpack", vname, mats, bp, bq, bellpack_case<V>);
  // the value dictionary: every block size at R = 32 (the layout is tested above), threads per
  // block row cycled as there; the reduced sweep as bq
  std::vector<bellpack::Params> bd;
  for (int r = 1; r <= 8; ++r)
    for (int c = 1; c <= 8; ++c) bd.push_back({r, c, 32, row_threads[(r * 8 + c) % 7], Values::kDictionary});
  run<V, bellpack::Params>("bellpack-dictionary", vname, mats, bd, bq, bellpack_dictionary_case<V>);
  if (part("csr")) run_csr<V>(vname, mats);
  if (part("index-forms")) run_index_forms<V>(vname, mats);
  if (part("csr-upload")) run_csr_from_upload<V>(vname, mats);
  if (part("csr-upload")) csr_value_ops<V>(vname, mats);
}

// Out of GPU memory in the middle of a build: the GPU taken but for the upload and 8 MiB, so that
// a build's upload fits and its format does not; each build must throw DeviceError with
// out_of_memory(), leave no CUDA error behind and free what it allocated, and succeed with the
// host's arrays once the memory is back. Runs last: every kernel has been launched before, so the
// driver's local-memory reservation needs no new memory at a launch here.
void out_of_memory()
{
  const Csr<double>   A = testmat::poisson2d(700); // 490k rows, 2.4M entries: about 31 MB uploaded, 29 MB and more per format
  std::size_t         free_bytes = 0, total = 0;
  std::vector<void *> hog;
  const std::size_t   upload = (A.row_ptr.size() + A.col_ind.size()) * sizeof(std::int32_t) + A.val.size() * sizeof(double);
  const std::size_t   keep   = upload + (std::size_t(8) << 20);
  for (std::size_t chunk = std::size_t(1) << 30; chunk >= (std::size_t(1) << 20); chunk /= 2) {
    void *p = nullptr;
    while (true) {
      cudaMemGetInfo(&free_bytes, &total);
      if (free_bytes < keep + chunk || cudaMalloc(&p, chunk) != cudaSuccess) break;
      hog.push_back(p);
    }
    cudaGetLastError();
  }
  auto expect_oom = [&](const char *name, auto build) {
    bool        ok = false;
    std::string why;
    try {
      build();
      why = "the build succeeded in " + std::to_string(free_bytes >> 20) + " MiB";
    } catch (const cuda::DeviceError &e) {
      ok  = e.out_of_memory();
      why = e.what();
    } catch (const std::exception &e) {
      why = std::string("not a DeviceError: ") + e.what();
    }
    const cudaError_t left = cudaGetLastError();
    if (left != cudaSuccess) ok = false, why += std::string("; left behind: ") + cudaGetErrorString(left);
    check::record(ok, std::string("gpu/out-of-memory/") + name, why);
  };
  expect_oom("sellp", [&] { sellp::build_on_device(A.view(), sellp::Params{32, 1, 1, sellp::Index::k32}); });
  expect_oom("sellp-sigma", [&] { sellp::build_on_device(A.view(), sellp::Params{32, 1, 1024, sellp::Index::k16_if_possible}); });
  expect_oom("cmrs", [&] { cmrs::build_on_device(A.view(), cmrs::Params{6, true, 1}); });
  expect_oom("bellpack", [&] { bellpack::build_on_device(A.view(), bellpack::Params{1, 1, 128}); });
  for (void *p : hog) cudaFree(p);
  std::string why;
  bool        ok = false;
  try {
    const sellp::Params p{32, 1, 1, sellp::Index::k32};
    const auto          H = sellp::from_csr(A.view(), p);
    const auto          D = sellp::download(*sellp::build_on_device(A.view(), p));
    ok = D.slice_ptr == H.slice_ptr && D.col_ind == H.col_ind && bits_equal(D.val, H.val);
    if (!ok) why = "differs from host";
  } catch (const std::exception &e) {
    why = e.what();
  }
  check::record(ok, "gpu/out-of-memory/build-after-memory-is-back", why);
}

} // namespace

// x gathered into a reordered copy's column order, and BELLPACK's dense model matrices
void gather_and_dense()
{
  const std::int64_t        n = 1000;
  std::vector<std::int32_t> idx(n);
  std::vector<double>       x(n);
  for (std::int64_t i = 0; i < n; ++i) idx[i] = std::int32_t((i * 7919) % n), x[i] = double(i) + 0.5;
  DeviceArray<std::int32_t> didx(idx);
  DeviceArray<double>       dx(x), dy(std::vector<double>(n, -1));
  cuda::gather(dy.p, dx.p, didx.p, n, nullptr);
  cudaDeviceSynchronize();
  const std::vector<double> y = dy.get();
  bool                      ok = true;
  for (std::int64_t i = 0; i < n; ++i) ok = ok && y[i] == x[idx[i]];
  check::record(ok, "gather/x-in-column-order");
  // out[j] = 2 y[idx[j]] - in[j], also in place (in == out), and beta = 0 never reading in (NaN)
  std::vector<double> in(n);
  for (std::int64_t i = 0; i < n; ++i) in[i] = 3.0 * double(i);
  DeviceArray<double> din(in), dnan(std::vector<double>(n, std::numeric_limits<double>::quiet_NaN()));
  cuda::gather_epilogue(Epilogue<double>{2, -1, din.p, dy.p}, dx.p, didx.p, n, nullptr);
  cuda::gather_epilogue(Epilogue<double>{2, -1, din.p, din.p}, dx.p, didx.p, n, nullptr);
  cuda::gather_epilogue(Epilogue<double>{2, 0, dnan.p, dnan.p}, dx.p, didx.p, n, nullptr);
  cudaDeviceSynchronize();
  const std::vector<double> y2 = dy.get(), y3 = din.get(), y4 = dnan.get();
  ok = true;
  for (std::int64_t i = 0; i < n; ++i) ok = ok && y2[i] == 2 * x[idx[i]] - in[i] && y3[i] == y2[i] && y4[i] == 2 * x[idx[i]];
  check::record(ok, "gather/epilogue-back-to-user-order");
  // the long-row tail adds alpha * (its entries . x) to its rows only; a row of 70 entries spans
  // three warp steps, one of 300 entries ten
  {
    std::vector<std::int32_t> rows{1, 3, 0}, ptr{0, 2, 72, 372}, col{0, 2};
    std::vector<double>       val{1, 2}, xt{1, 2, 3, 4};
    for (int k = 0; k < 70; ++k) col.push_back(k % 4), val.push_back(0.5 * k);
    for (int k = 0; k < 300; ++k) col.push_back((3 * k) % 4), val.push_back(0.25 * k);
    double expect3 = 0, expect0 = 0;
    for (int k = 0; k < 70; ++k) expect3 += 0.5 * k * xt[k % 4];
    for (int k = 0; k < 300; ++k) expect0 += 0.25 * k * xt[(3 * k) % 4];
    DeviceArray<std::int32_t> drows(rows), dptr(ptr), dcol(col);
    DeviceArray<double>       dval(val), dxt(xt), dyt(std::vector<double>{10, 10, 10, 10});
    cuda::tail_spmv(dxt.p, dyt.p, 2.0, drows.p, dptr.p, dcol.p, dval.p, 3, nullptr);
    cudaDeviceSynchronize();
    const std::vector<double> yt = dyt.get();
    check::record(yt[2] == 10 && yt[1] == 10 + 2 * (1 * 1 + 2 * 3) && std::abs(yt[3] - (10 + 2 * expect3)) < 1e-9 && std::abs(yt[0] - (10 + 2 * expect0)) < 1e-9 * expect0,
                  "tail/warp-per-row-adds", "got " + std::to_string(yt[0]) + ", " + std::to_string(yt[1]) + ", " + std::to_string(yt[3]));
  }

  // a compressed copy's product t of rows {1, 3, 6} added into y (in == out, beta 1, alpha 2):
  // the other rows keep their values
  {
    std::vector<std::int32_t> rows{1, 3, 6};
    DeviceArray<std::int32_t> drows(rows);
    DeviceArray<double>       dt(std::vector<double>{1, 2, 3}), dys(std::vector<double>(8, 10.0));
    cuda::scatter_epilogue(Epilogue<double>{2, 1, dys.p, dys.p}, dt.p, drows.p, 3, nullptr);
    cudaDeviceSynchronize();
    const std::vector<double> ys = dys.get();
    check::record(ys == std::vector<double>{10, 12, 10, 14, 10, 10, 16, 10}, "rowmap/scatter-adds-through-the-map");
  }
  // the ghost exchange's device half: x written on the default stream, packed on our stream after
  // an event, copied to pinned memory; then copied back from pinned memory and ordered before the
  // default stream's next work by another event
  {
    cuda::Stream       hs;
    cuda::Event        ready, done;
    cuda::PinnedBuffer pin;
    cuda::Buffer       dsend(n * sizeof(double)), dback(n * sizeof(double));
    pin.resize(n * sizeof(double));
    DeviceArray<double> dx2(std::vector<double>(n, 0.0));
    cuda::copy_to_device(dx2.p, x.data(), n * sizeof(double), nullptr); // x's producer on the default stream
    ready.record(nullptr);
    ready.wait(hs.get());
    cuda::gather(dsend.as<double>(), dx2.p, didx.p, n, hs.get());
    cuda::copy_to_host(pin.as<double>(), dsend.get(), n * sizeof(double), hs.get());
    cuda::synchronize(hs.get());
    bool okp = true;
    for (std::int64_t i = 0; i < n; ++i) okp = okp && pin.as<double>()[i] == x[idx[i]];
    cuda::copy_to_device(dback.get(), pin.as<double>(), n * sizeof(double), hs.get());
    done.record(hs.get());
    done.wait(nullptr);
    std::vector<double> back(n);
    cuda::copy_to_host_sync(back.data(), dback.get(), n * sizeof(double), nullptr);
    for (std::int64_t i = 0; i < n; ++i) okp = okp && back[i] == x[idx[i]];
    check::record(okp, "exchange/pack-on-own-stream-through-pinned-memory");
  }
  // the transpose prologue: out = beta*in (in separate and in place), and 0 from a NaN-filled out
  // when beta = 0 (in never read)
  {
    DeviceArray<double> din(in), dout(std::vector<double>(n, std::numeric_limits<double>::quiet_NaN())), dself(in),
      dnan2(std::vector<double>(n, std::numeric_limits<double>::quiet_NaN()));
    cuda::transpose_prologue(Epilogue<double>{2, -0.5, din.p, dout.p}, n, nullptr);
    cuda::transpose_prologue(Epilogue<double>{2, 3, dself.p, dself.p}, n, nullptr);
    cuda::transpose_prologue(Epilogue<double>{2, 0, dnan2.p, dnan2.p}, n, nullptr);
    cudaDeviceSynchronize();
    const std::vector<double> a = dout.get(), b = dself.get(), c = dnan2.get();
    bool                      okp = true;
    for (std::int64_t i = 0; i < n; ++i) okp = okp && a[i] == -0.5 * in[i] && b[i] == 3 * in[i] && c[i] == 0;
    check::record(okp, "transpose/prologue-beta-in");
  }
  // the long-row tail's transpose scatters alpha * v * x[row] into the entries' columns, rows
  // sharing columns (atomics): tail rows 1 and 3 of a 4 x 4 block, the second of 70 entries
  {
    std::vector<std::int32_t> rows{1, 3}, ptr{0, 2, 72}, col{0, 2};
    std::vector<double>       val{1, 2}, xt{1, 2, 3, 4}, expect{10, 10, 10, 10};
    for (int k = 0; k < 70; ++k) col.push_back(k % 4), val.push_back(0.5 * k);
    for (int r = 0; r < 2; ++r)
      for (int k = ptr[r]; k < ptr[r + 1]; ++k) expect[col[k]] += 2.0 * val[k] * xt[rows[r]];
    DeviceArray<std::int32_t> drows(rows), dptr(ptr), dcol(col);
    DeviceArray<double>       dval(val), dxt(xt), dyt(std::vector<double>{10, 10, 10, 10});
    cuda::tail_spmv_transpose(dxt.p, dyt.p, 2.0, drows.p, dptr.p, dcol.p, dval.p, 2, nullptr);
    cudaDeviceSynchronize();
    const std::vector<double> yt = dyt.get();
    bool                      okt = true;
    for (int c = 0; c < 4; ++c) okt = okt && std::abs(yt[c] - expect[c]) < 1e-9 * std::abs(expect[c]);
    check::record(okt, "tail/transpose-scatters-into-columns", "got " + std::to_string(yt[0]) + ", " + std::to_string(yt[1]) + ", " + std::to_string(yt[2]) + ", " +
                                                                   std::to_string(yt[3]));
  }

  // a dense 3x2-blocked matrix of 77 block rows, 5 blocks each: all-zero values give y = 0, and
  // the layout converts back to CSR with every row of length 10
  const bellpack::Params p{3, 2, 32};
  auto                   D  = bellpack::dense_on_device<double>(77, 5, p);
  const auto             H  = bellpack::download(*D);
  bool                   ok2 = H.nrows == 231 && H.ncols == 10 && H.partitions() == 3 && H.slots() == 3 * 32 * 5;
  for (std::int64_t q = 0; q < H.partitions() && ok2; ++q)
    for (std::int64_t k = 0; k < 5; ++k)
      for (std::int64_t i = 0; i < 32; ++i) ok2 = ok2 && H.block_col[H.part_ptr[q] + k * 32 + i] == (q * 32 + i < 77 ? k : bellpack::kPadBlock);
  DeviceArray<double> xs(std::vector<double>(10, 1.0)), ys(std::vector<double>(231, std::numeric_limits<double>::quiet_NaN()));
  D->spmv(xs.p, Epilogue<double>{1, 0, nullptr, ys.p}, nullptr);
  cudaDeviceSynchronize();
  for (double v : ys.get()) ok2 = ok2 && v == 0;
  std::string why2;
  ok2 = ok2 && check_bytes(*D, 0, "dense", why2);
  check::record(ok2, "bellpack/dense-model-matrix", why2);
  const int T = bellpack::resident_partitions<double>(bellpack::Params{3, 3, 128});
  check::record(T >= 1 && T <= 16, "bellpack/resident-partitions", "T = " + std::to_string(T) + " for 128 threads");
}

// A's structure with other values, an explicit zero and a NaN among them
template <class V>
Csr<V> other_values(const Csr<V> &A)
{
  Csr<V> B = A;
  for (std::size_t k = 0; k < B.val.size(); ++k) B.val[k] = V(0.5 + double(k % 7)) * (k % 2 ? V(-1) : V(1));
  if (B.val.size() > 3) B.val[1] = V(0), B.val[2] = std::numeric_limits<V>::quiet_NaN();
  return B;
}

// One device format: convert(view) -> a device operator. Its slot map made on the device equals
// the host's (host(view) -> the host conversion's values), and a copy refilled in place equals the
// conversion of the new values.
template <class V, class Convert, class Host>
bool device_refill(const Csr<V> &A, Convert &&convert, Host &&host, std::string &why)
{
  std::vector<V> storage;
  auto           slots_op = convert(slot_csr(A.view(), storage));
  std::int64_t   n        = 0;
  const V       *sv       = slots_op->values(&n);
  const auto     host_slot = slot_map(A.view(), host);
  if (n != std::int64_t(host_slot.size())) return why = "values() counts " + std::to_string(n) + ", the host layout stores " + std::to_string(host_slot.size()), false;
  DeviceArray<std::int32_t> dslot(std::vector<std::int32_t>(std::size_t(n), -7));
  cuda::slots_from_values(sv, n, dslot.p, nullptr);
  cudaDeviceSynchronize();
  if (dslot.get() != host_slot) return why = "device slot map differs from the host's", false;
  const Csr<V>   B   = other_values(A);
  auto           op  = convert(A.view());
  std::int64_t   m   = 0;
  V             *val = op->values(&m);
  DeviceArray<V> dcsr(B.val);
  cuda::gather_values(val, dcsr.p, dslot.p, m, nullptr);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return why = cudaGetErrorString(err), false;
  auto          fresh = convert(B.view());
  std::int64_t  k     = 0;
  const V      *fv    = fresh->values(&k);
  std::vector<V> got(static_cast<std::size_t>(m)), want(static_cast<std::size_t>(k));
  if (m) cudaMemcpy(got.data(), val, std::size_t(m) * sizeof(V), cudaMemcpyDeviceToHost);
  if (k) cudaMemcpy(want.data(), fv, std::size_t(k) * sizeof(V), cudaMemcpyDeviceToHost);
  if (!bits_equal(got, want)) return why = "refilled device copy differs from the conversion of the new values", false;
  return check_spmv(*op, B, false, why);
}

// SELL-P's distinct-value table on the GPU (the dictionary's count and table of GPU builds) against
// the host's count_distinct and dictionary_table: at the bounds of the codes (256, 257, 65536,
// 65537 distinct values), past a small limit, for general values, on small blocks whose table is
// sized by their values, and with the patterns that need care: 0.0 and -0.0 apart, NaNs with
// payloads, infinities, and the all-ones pattern that the GPU's hash table takes for an empty slot.
template <class V>
V value_from_bits(std::uint64_t b)
{
  V v;
  if (sizeof(V) == 4) {
    const std::uint32_t b32 = std::uint32_t(b);
    std::memcpy(&v, &b32, sizeof(V));
  } else std::memcpy(&v, &b, sizeof(V));
  return v;
}

// n values cycling through `distinct` of them (1 + k/4: exact in float up to 2^22)
template <class V>
std::vector<V> cycled_values(std::int64_t distinct, std::int64_t n)
{
  std::vector<V> out(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) out[std::size_t(k)] = V(1) + V((k * 7919) % distinct) / V(4);
  return out;
}

template <class V>
void dictionary_table_device(const char *vname)
{
  const std::uint64_t ones = sizeof(V) == 8 ? ~std::uint64_t(0) : std::uint64_t(0xffffffffu);
  std::vector<std::pair<std::string, std::vector<V>>> cases;
  cases.push_back(std::make_pair(std::string("empty"), std::vector<V>()));
  cases.push_back(std::make_pair(std::string("one value"), std::vector<V>(100000, V(-2.5))));
  for (std::int64_t d : {std::int64_t(2), std::int64_t(256), std::int64_t(257), std::int64_t(65536), std::int64_t(65537)})
    cases.push_back(std::make_pair(std::to_string(d) + " values", cycled_values<V>(d, std::max<std::int64_t>(3 * d, 200000))));
  // small blocks (GAMG's coarse levels) get a table sized by their values: every value distinct,
  // at and past the smallest table's quarter
  for (std::int64_t d : {std::int64_t(1), std::int64_t(256), std::int64_t(257), std::int64_t(700), std::int64_t(3000)})
    cases.push_back(std::make_pair(std::to_string(d) + " values, all distinct", cycled_values<V>(d, d)));
  std::vector<V> special;
  const V        pats[] = {V(0), -V(0), std::numeric_limits<V>::infinity(), -std::numeric_limits<V>::infinity(), std::numeric_limits<V>::quiet_NaN(),
                           value_from_bits<V>(ones), value_from_bits<V>(ones - 1), std::numeric_limits<V>::max()};
  for (int r = 0; r < 5000; ++r)
    for (V p : pats) special.push_back(p);
  cases.push_back(std::make_pair(std::string("special patterns"), special));
  cases.push_back(std::make_pair(std::string("general values"), testmat::random_vector<V>(1 << 20, 11)));
  for (const auto &c : cases) {
    const std::int64_t n = std::int64_t(c.second.size());
    for (std::int64_t limit : {kMaxDictionary, std::int64_t(3)}) {
      DeviceArray<V>       d(c.second);
      std::int64_t         count = -1;
      const std::vector<V> table = cuda::distinct_values(d.p, n, limit, &count, nullptr);
      const std::int64_t   host_count = count_distinct(c.second.data(), n, limit);
      std::vector<V>       host_table = dictionary_table(c.second.data(), n);
      if (std::int64_t(host_table.size()) > limit) host_table.clear();
      const std::string name = std::string("sellp-dictionary-table/") + vname + "/" + c.first + "/limit " + std::to_string(limit);
      check::record(count == host_count && bits_equal(table, host_table), name,
                    "GPU: " + std::to_string(count) + " distinct, table of " + std::to_string(table.size()) + "; host: " + std::to_string(host_count) +
                      ", table of " + std::to_string(host_table.size()) + (count == host_count ? " (the tables differ)" : ""));
    }
  }
  // An upload keeps its distinct values per limit (SELL-P's resolve and build_device share one
  // pass): a second ask returns the same table, another limit counts again, and back again.
  {
    const std::vector<V> v = cycled_values<V>(257, 5000);
    Csr<V>               A;
    A.nrows = A.ncols = std::int64_t(v.size());
    A.val             = v;
    for (std::int32_t i = 0; i < std::int32_t(v.size()); ++i) A.col_ind.push_back(i), A.row_ptr.push_back(i + 1);
    const cuda::DeviceCsr<V, std::int32_t> up(A.view(), nullptr);
    const std::vector<V>                   host = dictionary_table(v.data(), std::int64_t(v.size()));
    std::int64_t                           c1 = -1, c2 = -1, c3 = -1;
    const std::vector<V>                   t1 = up.distinct_values(kMaxDictionary, &c1);
    const std::vector<V>                   t2 = up.distinct_values(3, &c2);
    const std::vector<V>                   t3 = up.distinct_values(kMaxDictionary, &c3);
    check::record(c1 == 257 && bits_equal(t1, host) && c2 == 4 && t2.empty() && c3 == 257 && bits_equal(t3, host),
                  std::string("sellp-dictionary-table/") + vname + "/kept with the upload",
                  "counts " + std::to_string(c1) + ", " + std::to_string(c2) + ", " + std::to_string(c3) + " (expected 257, 4, 257)");
  }
}

// The gather itself against the host's, -1 slots included, and each format's refill on the device
template <class V>
void values_update(const char *vname)
{
  {
    const std::int64_t        n = 5000, nnz = 3000;
    std::vector<std::int32_t> slot(n);
    std::vector<V>            csr(nnz), host(n, V(9)), dev_init(n, V(9));
    for (std::int64_t p = 0; p < n; ++p) slot[p] = p % 5 == 0 ? -1 : std::int32_t((p * 7919) % nnz);
    for (std::int64_t k = 0; k < nnz; ++k) csr[k] = V(k) * V(0.25) - V(3);
    gather_values(host.data(), csr.data(), slot.data(), n);
    DeviceArray<std::int32_t> dslot(slot);
    DeviceArray<V>            dcsr(csr), dval(dev_init);
    cuda::gather_values(dval.p, dcsr.p, dslot.p, n, nullptr);
    cudaDeviceSynchronize();
    check::record(bits_equal(dval.get(), host), std::string("values-update/gather-with-padding-slots/") + vname);
  }
  std::vector<testmat::Named> mats = testmat::edge_cases();
  mats.push_back({"blocks-3dof-2k", testmat::block_chain(2000, 3)});
  for (const auto &m : mats) {
    const Csr<V> A = testmat::cast<V>(m.A);
    std::string  why;
    bool         ok = true;
    try {
      for (const cmrs::Params &p : {cmrs::Params{4, true, 1}, cmrs::Params{16, true, 32}, cmrs::Params{3, false, 1}, cmrs::Params{5, true, 1, cmrs::Kernel::kShared},
                                    cmrs::Params{16, true, 32, cmrs::Kernel::kSubwarp, 8}, cmrs::Params{7, false, 1, cmrs::Kernel::kSubwarp, 16},
                                    cmrs::Params{3, false, 1, cmrs::Kernel::kSegmented}, cmrs::Params{16, false, 32, cmrs::Kernel::kSegmented}})
        ok = ok && device_refill(
                     A, [&](const auto &X) { return cmrs::build_on_device(X, p); }, [&](const auto &X) { return cmrs::from_csr(X, p).val; }, why);
      for (const sellp::Params &p : {sellp::Params{32, 1, 1, sellp::Index::k32}, sellp::Params{8, 4, 32, sellp::Index::k16_if_possible}})
        ok = ok && device_refill(
                     A, [&](const auto &X) { return sellp::build_on_device(X, p); }, [&](const auto &X) { return sellp::from_csr(X, p).val; }, why);
      for (const bellpack::Params &p : {bellpack::Params{1, 1, 32}, bellpack::Params{3, 3, 128}, bellpack::Params{2, 5, 1}})
        ok = ok && device_refill(
                     A, [&](const auto &X) { return bellpack::build_on_device(X, p); }, [&](const auto &X) { return bellpack::from_csr(X, p).val; }, why);
      // cuSPARSE CSR stores the CSR's own values in order: its slot map is the identity
      ok = ok && device_refill(
                   A, [&](const auto &X) { return autosel::csr_to_device(X); }, [&](const auto &X) { return std::vector<V>(X.val, X.val + X.nnz()); }, why);
    } catch (const std::exception &e) {
      ok = false, why = std::string("exception: ") + e.what();
    }
    check::record(ok, std::string("values-update/device-refill/") + vname + "/" + m.name, why);
  }
}

int main(int argc, char **argv)
{
  std::string precision; // empty: both (double only with --quick)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--precision" && i + 1 < argc) precision = argv[++i];
    else if (a == "--shard" && i + 1 < argc && std::sscanf(argv[i + 1], "%d/%d", &shard, &shards) == 2 && shards >= 1 && shard >= 0 && shard < shards) ++i;
    else {
      std::fprintf(stderr, "test_kernels: unknown argument '%s' (--quick, --only parts, --precision double|float, --shard k/n)\n", argv[i]);
      return 2;
    }
  }
  if (!precision.empty() && precision != "double" && precision != "float") {
    std::fprintf(stderr, "test_kernels: --precision %s: double or float\n", precision.c_str());
    return 2;
  }
  const bool dbl = precision != "float", flt = !quick && precision != "double";
  // wait for the GPU asleep, not spinning: the suite runs dozens of these processes side by side
  // (with PETSc's ranks), and spinning waits would take the cores their host references need
  (void)cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  std::string why;
  if (cuda::device_count(&why) == 0) {
    check::record(false, "gpu/device-present", "no CUDA device: " + why);
    return check::finish();
  }
  if (dbl) run_all<double>("double");
  if (flt) run_all<float>("float"); // memcheck: the index arithmetic is the same for both
  if (part("gather") && dbl) gather_and_dense();
  if (part("values") && dbl) dictionary_table_device<double>("double");
  if (part("values") && flt) dictionary_table_device<float>("float");
  if (part("values") && dbl) values_update<double>("double");
  if (part("values") && flt) values_update<float>("float");
  if (part("oom") && !quick && dbl) out_of_memory(); // memcheck: nothing new to check, and it would shadow the whole GPU
  return check::finish();
}
