// BELLPACK on the GPU: device storage, the conversion from CSR on the device, the value
// dictionary's encoder, and the product launches for each value form (the kernels, with what they
// do and why, are in kernels.cuh).
#include "../common/cuda/blocks.cuh"
#include "../common/cuda/check.cuh"
#include "device.hpp"
#include "kernels.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <numeric>
#include <utility>
#include <vector>

namespace gpumats {
namespace bellpack {

using cuda::Buffer;
using cuda::blocks_for;
using cuda::LoadPolicy;

namespace {

template <class V>
class DeviceMatrix final : public cuda::Operator<V> {
public:
  Params       params;
  std::int64_t nrows = 0, ncols = 0, block_rows = 0, partitions = 0;
  std::int64_t max_width = 0; // blocks of the longest block row (the first partition's width)
  Buffer       part_ptr, bcol, val, perm;
  int          code_bytes = 0; // value dictionary: codes of 1 or 2 bytes into table, in val's layout; val unused
  Buffer       codes, table;

  bool values_compressed() const override { return code_bytes != 0; }
  // calls f with the value source of this copy's form (common/cuda/values.cuh)
  template <class F>
  void with_values(F &&f) const
  {
    if (code_bytes == 1) f(cuda::DictionaryValues<V, std::uint8_t>{codes.as<std::uint8_t>(), table.as<V>()});
    else if (code_bytes == 2) f(cuda::DictionaryValues<V, std::uint16_t>{codes.as<std::uint16_t>(), table.as<V>()});
    else f(cuda::PlainValues<V>{val.as<V>()});
  }
  // threads per block row of the next launch: the user's, else auto_row_threads
  int    row_threads() const { return params.row_threads ? params.row_threads : kernels::auto_row_threads(block_rows, max_width); }
  Launch launch() const
  {
    Launch L;
    L.params      = params;
    L.nrows       = nrows;
    L.ncols       = ncols;
    L.block_rows  = block_rows;
    L.partitions  = partitions;
    L.row_threads = row_threads();
    L.policy      = this->load_policy;
    L.part_ptr    = part_ptr.as<std::int32_t>();
    L.bcol        = bcol.as<std::int32_t>();
    L.perm        = perm.as<std::int32_t>();
    return L;
  }

  void spmv(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    if (!nrows) return;
    with_values([&](auto vs) { launch_spmv<V>(launch(), vs, x, ep, static_cast<cudaStream_t>(stream)); });
  }
  void spmv_transpose(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    cuda::transpose_prologue(ep, ncols, stream); // also when there are no rows: out = beta*in
    if (!nrows || !ncols) return;
    with_values([&](auto vs) { launch_spmv_transpose<V>(launch(), vs, x, ep, static_cast<cudaStream_t>(stream)); });
  }
  void diagonal(V *d, void *stream) const override
  {
    if (!nrows || !ncols) return;
    with_values([&](auto vs) { launch_diagonal<V>(launch(), vs, d, static_cast<cudaStream_t>(stream)); });
  }
  std::size_t bytes() const override { return part_ptr.bytes() + bcol.bytes() + val.bytes() + perm.bytes() + codes.bytes() + table.bytes(); }
  V *values(std::int64_t *count) override
  {
    // values are separate from the indices, so a gather refills them; not so for dictionary codes
    *count = code_bytes ? 0 : this->footprint.stored;
    return code_bytes ? nullptr : val.template as<V>();
  }
  V *open_plain_values(std::int64_t *count) override { return cuda::open_plain_values<V>(code_bytes, val, this->footprint.stored, count); }
  void keep_plain_values() override { cuda::keep_plain_values<V>("BELLPACK", code_bytes, codes, table, val, this->footprint); }
};

// Walks the distinct block columns of block row `I` in ascending order by merging its r sorted
// rows, calling visit(k, J, a_first..) for the k-th block column J with the heads positioned on it.
// Entry j of the host CSR sits at col[j - base].
template <class I, class F>
__device__ void merge_block_row(std::int64_t blockrow, int r, int c, std::int64_t nrows, std::int64_t base, const I *row_ptr, const I *col, F &&visit)
{
  std::int64_t head[kMaxBlock], end[kMaxBlock];
  for (int a = 0; a < r; ++a) {
    const std::int64_t row = blockrow * r + a;
    head[a] = row < nrows ? std::int64_t(row_ptr[row]) - base : 0;
    end[a]  = row < nrows ? std::int64_t(row_ptr[row + 1]) - base : 0;
  }
  for (std::int32_t k = 0;; ++k) {
    std::int64_t J = -1;
    for (int a = 0; a < r; ++a)
      if (head[a] < end[a]) {
        const std::int64_t Ja = std::int64_t(col[head[a]]) / c;
        if (J < 0 || Ja < J) J = Ja;
      }
    if (J < 0) return;
    visit(k, std::int32_t(J), head, end);
  }
}

template <class I>
__global__ void count_kernel(std::int64_t block_rows, int r, int c, std::int64_t nrows, std::int64_t base, const I *__restrict__ row_ptr, const I *__restrict__ col,
                             std::uint32_t *__restrict__ count)
{
  const std::int64_t B = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (B >= block_rows) return;
  std::uint32_t n = 0;
  merge_block_row(B, r, c, nrows, base, row_ptr, col, [&](std::int32_t, std::int32_t J, std::int64_t *head, std::int64_t *end) {
    ++n;
    for (int a = 0; a < r; ++a)
      while (head[a] < end[a] && std::int64_t(col[head[a]]) / c == J) ++head[a];
  });
  count[B] = n;
}

template <class V, class I>
__global__ void fill_kernel(std::int64_t block_rows, int r, int c, int R, std::int64_t nrows, std::int64_t base, const I *__restrict__ row_ptr,
                            const I *__restrict__ col, const V *__restrict__ val_in, const std::int32_t *__restrict__ perm,
                            const std::int32_t *__restrict__ part_ptr, std::int32_t *__restrict__ bcol, V *__restrict__ val)
{
  const std::int64_t pos = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pos >= block_rows) return;
  const std::int64_t q = pos / R, i = pos % R, rc = std::int64_t(r) * c;
  merge_block_row(std::int64_t(perm[pos]), r, c, nrows, base, row_ptr, col, [&](std::int32_t k, std::int32_t J, std::int64_t *head, std::int64_t *end) {
    bcol[part_ptr[q] + std::int64_t(k) * R + i] = J;
    for (int a = 0; a < r; ++a)
      for (; head[a] < end[a] && std::int64_t(col[head[a]]) / c == J; ++head[a]) {
        const std::int64_t e = a * c + std::int64_t(col[head[a]]) % c;
        val[std::int64_t(part_ptr[q]) * rc + (std::int64_t(k) * rc + e) * R + i] = val_in[head[a]];
      }
  });
}

// A partition holds R block rows as wide as its first (longest): R x that many slots.
__global__ void partition_sizes_kernel(std::int64_t partitions, int R, const std::uint32_t *__restrict__ sorted_count, std::int64_t *__restrict__ sizes)
{
  const std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q < partitions) sizes[q] = std::int64_t(sorted_count[q * R]) * R;
}


} // namespace

template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log)
{
  check_params(p);
  if (A.nrows() > std::numeric_limits<std::int32_t>::max() || A.ncols() > std::numeric_limits<std::int32_t>::max())
    throw FormatError("BELLPACK: local block too large for 32-bit indices; use more MPI ranks");
  auto               D      = std::make_unique<DeviceMatrix<V>>();
  void *const        stream = A.stream();
  const auto         st     = static_cast<cudaStream_t>(stream);
  const std::int64_t n = A.nrows(), r = p.r, c = p.c, R = p.partition_rows, rc = r * c, nnz = A.nnz();
  const std::int64_t nbr = (n + r - 1) / r, np = (nbr + R - 1) / R;
  D->params     = p;
  D->nrows      = n;
  D->ncols      = A.ncols();
  D->block_rows = nbr;
  D->partitions = np;

  // structure: blocks per block row (merging its r rows), the stable sort of block rows by count,
  // longest first (a radix sort over the bits a count can have: sort_by_count's order exactly),
  // partition widths and their offsets
  D->perm = Buffer(std::size_t(std::max<std::int64_t>(nbr, 1)) * sizeof(std::int32_t)); // the kernel is handed a real pointer
  Buffer sizes(std::size_t(np) * sizeof(std::int64_t));
  if (nbr) {
    Buffer counts(std::size_t(nbr) * sizeof(std::uint32_t)), sorted(std::size_t(nbr) * sizeof(std::uint32_t)), ids(std::size_t(nbr) * sizeof(std::int32_t)), tmp;
    count_kernel<I><<<blocks_for(nbr), 256, 0, st>>>(nbr, int(r), int(c), n, A.base(), A.row_ptr(), A.col_ind(), counts.as<std::uint32_t>());
    cuda::check_launch("BELLPACK count kernel");
    cuda::iota(ids.as<std::int32_t>(), nbr, stream);
    int                most_bits = 1; // a block row has at most ceil(ncols / c) blocks
    const std::int64_t most      = (A.ncols() + c - 1) / c;
    while (most_bits < 32 && (std::int64_t(1) << most_bits) <= most) ++most_bits;
    std::size_t tmp_bytes = 0;
    cuda::check(cub::DeviceRadixSort::SortPairsDescending(nullptr, tmp_bytes, counts.as<std::uint32_t>(), sorted.as<std::uint32_t>(), ids.as<std::int32_t>(),
                                                          D->perm.template as<std::int32_t>(), nbr, 0, most_bits, st),
                "cub::DeviceRadixSort");
    tmp.resize(std::max<std::size_t>(tmp_bytes, 1));
    cuda::check(cub::DeviceRadixSort::SortPairsDescending(tmp.get(), tmp_bytes, counts.as<std::uint32_t>(), sorted.as<std::uint32_t>(), ids.as<std::int32_t>(),
                                                          D->perm.template as<std::int32_t>(), nbr, 0, most_bits, st),
                "cub::DeviceRadixSort");
    partition_sizes_kernel<<<blocks_for(np), 256, 0, st>>>(np, int(R), sorted.as<std::uint32_t>(), sizes.as<std::int64_t>());
    cuda::check_launch("BELLPACK partition sizes kernel");
    std::uint32_t widest = 0; // the first sorted count: the kernels' choice of threads per block row reads it
    cuda::copy_to_host_sync(&widest, sorted.get(), sizeof widest, stream); // (synchronises: before counts, ids and tmp are freed)
    D->max_width = widest;
  }
  const std::int64_t slots = cuda::offsets_from_sizes(sizes.as<std::int64_t>(), np, D->part_ptr, "BELLPACK", stream);
  checked_offset(slots * rc, "BELLPACK");

  // scatter: padding slots and block fill first, then every entry into its block
  cuda::enter_step(log, cuda::BuildStep::kScatter, stream);
  D->bcol.resize(std::size_t(std::max<std::int64_t>(slots, 1)) * sizeof(std::int32_t));
  D->val.resize(std::size_t(std::max<std::int64_t>(slots * rc, 1)) * sizeof(V));
  cuda::check(cudaMemsetAsync(D->bcol.get(), 0xFF, std::size_t(slots) * sizeof(std::int32_t), st), "cudaMemsetAsync"); // kPadBlock
  cuda::check(cudaMemsetAsync(D->val.get(), 0, std::size_t(slots * rc) * sizeof(V), st), "cudaMemsetAsync");
  if (nbr && nnz) {
    fill_kernel<V, I><<<blocks_for(nbr), 256, 0, st>>>(nbr, int(r), int(c), int(R), n, A.base(), A.row_ptr(), A.col_ind(), A.val(), D->perm.template as<std::int32_t>(),
                                                      D->part_ptr.template as<std::int32_t>(), D->bcol.template as<std::int32_t>(), D->val.template as<V>());
    cuda::check_launch("BELLPACK fill kernel");
  }
  cuda::synchronize(stream);
  D->footprint = Footprint{n, A.ncols(), nnz, slots * rc, 4 * (slots + nbr + np + 1), std::int64_t(sizeof(V)) * slots * rc};
  return D;
}

template <class V>
std::unique_ptr<cuda::Operator<V>> dense_on_device(std::int64_t block_rows, int blocks_per_row, const Params &p)
{
  check_params(p);
  const std::int64_t R = p.partition_rows, np = (block_rows + R - 1) / R, rc = std::int64_t(p.r) * p.c;
  const std::int64_t slots = checked_offset(np * R * blocks_per_row, "BELLPACK");
  checked_offset(slots * rc, "BELLPACK");
  auto D        = std::make_unique<DeviceMatrix<V>>();
  D->params     = p;
  D->nrows      = block_rows * p.r;
  D->ncols      = std::int64_t(blocks_per_row) * p.c;
  D->block_rows = block_rows;
  D->partitions = np;
  D->max_width  = blocks_per_row;
  std::vector<std::int32_t> pp(np + 1), perm(block_rows), bcol(static_cast<std::size_t>(slots));
  for (std::int64_t q = 0; q <= np; ++q) pp[q] = std::int32_t(q * R * blocks_per_row);
  std::iota(perm.begin(), perm.end(), 0);
  for (std::int64_t q = 0; q < np; ++q)
    for (std::int64_t k = 0; k < blocks_per_row; ++k)
      for (std::int64_t i = 0; i < R; ++i) bcol[pp[q] + k * R + i] = q * R + i < block_rows ? std::int32_t(k) : kPadBlock;
  D->part_ptr = cuda::upload(pp.data(), pp.size());
  D->perm     = cuda::upload(perm.data(), perm.size());
  D->bcol     = cuda::upload(bcol.data(), bcol.size());
  D->val.resize(std::max<std::int64_t>(slots * rc, 1) * sizeof(V));
  cuda::check(cudaMemset(D->val.get(), 0, slots * rc * sizeof(V)), "cudaMemset");
  cuda::synchronize(nullptr);
  D->footprint = Footprint{D->nrows, D->ncols, slots * rc, slots * rc, 4 * (slots + block_rows + np + 1), std::int64_t(sizeof(V)) * slots * rc};
  return D;
}

template <class V>
int resident_partitions(const Params &p)
{
  check_params(p);
  int n = 0;
  kernels::with_kernel<V, cuda::PlainValues<V>>(p.r, p.c, LoadPolicy::kStream, [&](auto kernel) {
    cuda::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, p.partition_rows, 0), "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  });
  return n;
}

template <class V>
Matrix<V> download(const cuda::Operator<V> &op)
{
  const auto &D = dynamic_cast<const DeviceMatrix<V> &>(op);
  Matrix<V>   M = cuda::host_shell<Matrix<V>>(D);
  M.block_rows  = D.block_rows;
  cuda::download_into(M.part_ptr, D.part_ptr.get(), D.partitions + 1);
  const std::int64_t slots = M.part_ptr.back(), stored = slots * M.rc();
  cuda::download_into(M.block_col, D.bcol.get(), slots);
  cuda::download_into(M.row_perm, D.perm.get(), D.block_rows);
  M.code_bytes = D.code_bytes;
  if (D.code_bytes) { // the dictionary form: codes and table instead of values
    cuda::download_into(M.dict, D.table.get(), std::int64_t(D.table.bytes() / sizeof(V)));
    if (D.code_bytes == 1) cuda::download_into(M.code8, D.codes.get(), stored);
    else cuda::download_into(M.code16, D.codes.get(), stored);
  } else cuda::download_into(M.val, D.val.get(), stored);
  return M;
}

template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M)
{
  auto D        = std::make_unique<DeviceMatrix<V>>();
  D->params     = M.params;
  D->nrows      = M.nrows;
  D->ncols      = M.ncols;
  D->block_rows = M.block_rows;
  D->partitions = M.partitions();
  D->max_width  = M.partitions() ? M.width(0) : 0; // (sorted longest first)
  D->part_ptr   = cuda::upload(M.part_ptr.data(), M.part_ptr.size());
  D->bcol       = cuda::upload(M.block_col.data(), M.block_col.size());
  D->val        = cuda::upload(M.val.data(), M.val.size()); // empty in the dictionary form
  D->code_bytes = M.code_bytes;
  if (M.code_bytes == 1) D->codes = cuda::upload(M.code8.data(), M.code8.size());
  if (M.code_bytes == 2) D->codes = cuda::upload(M.code16.data(), M.code16.size());
  if (M.code_bytes) D->table = cuda::upload(M.dict.data(), M.dict.size());
  D->perm       = cuda::upload(M.row_perm.data(), M.row_perm.size());
  D->footprint  = footprint(M);
  return D;
}

// ---- value dictionary, encoded on the device (common/core/dictionary.hpp) ----------------------
// Every stored value (block fill and padding slots' zeros included) gets its position in the
// table, found by binary search: the same codes as the host's compress_values, array for array. A
// table without +0.0 misses the zeros of a layout that stores any: refused (a FormatError), never a
// wrong code.

namespace {

template <class V, class C>
__global__ void encode_kernel(std::int64_t stored, const V *__restrict__ val, const V *__restrict__ table, int entries, C *__restrict__ code, int *__restrict__ missing)
{
  const std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= stored) return;
  cuda::encode_entry(val[v], table, entries, code + v, missing);
}

} // namespace

template <class V>
void encode_values(cuda::Operator<V> &op, const std::vector<V> &table)
{
  auto              &D      = dynamic_cast<DeviceMatrix<V> &>(op);
  const std::int64_t stored = D.footprint.stored;
  cuda::encode_dictionary("BELLPACK", table, D.code_bytes, D.codes, D.table, D.val, D.footprint, [&](int w, Buffer &codes, const Buffer &tab, int *missing) {
    const unsigned blocks = blocks_for(stored);
    if (w == 1) encode_kernel<V, std::uint8_t><<<blocks, 256>>>(stored, D.val.template as<V>(), tab.as<V>(), int(table.size()), codes.as<std::uint8_t>(), missing);
    else encode_kernel<V, std::uint16_t><<<blocks, 256>>>(stored, D.val.template as<V>(), tab.as<V>(), int(table.size()), codes.as<std::uint16_t>(), missing);
  });
}

// Beyond the shared interface: the dictionary encoding and the pieces of the model's benchmarks.
#define GPUMATS_BELLPACK_EXTRA_V(V)                                                                                                          \
  template void                               encode_values<V>(cuda::Operator<V> &, const std::vector<V> &);                                  \
  template std::unique_ptr<cuda::Operator<V>> dense_on_device<V>(std::int64_t, int, const Params &);                                         \
  template int                                resident_partitions<V>(const Params &);
GPUMATS_FORMAT_DEVICE_INSTANTIATE(GPUMATS_BELLPACK_EXTRA_V, GPUMATS_NO_EXTRA_VI)

} // namespace bellpack
} // namespace gpumats
