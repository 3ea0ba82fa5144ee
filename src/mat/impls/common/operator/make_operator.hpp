// FormatOperator for a format described by a traits struct T; the only per-format code of the
// glue is T itself (cmrs/cmrs.cxx, sellp/sellp.cxx, bellpack/bellpack.cxx):
//
//   struct T {
//     using Params = ...; using Matrix = ...;                   // from the format core
//     static PetscErrorCode options(OptionItems, MPI_Comm, Params &, PetscBool *changed);
//     static Params resolve(const Params &, const BlockSource &, PetscInt block_size); // fill in defaults
//     static Matrix from_csr(const CsrIn &, const Params &);
//     static void spmv(const Matrix &, const Scalar *x, const Epilogue<Scalar> &);
//     static void spmv_transpose(const Matrix &, const Scalar *x, const Epilogue<Scalar> &); // with A^T
//     static Footprint footprint(const Matrix &);
//     static std::unique_ptr<cuda::Operator<Scalar>> build_device(const BlockSource &, const Params &); // from A.device
//     static std::unique_ptr<cuda::Operator<Scalar>> upload(const Matrix &); // a host-built copy to the GPU
//     static std::string describe(const Params &);
//   and, for a format with a value dictionary (HasCompressedValues), the GPU side of it:
//     static void allow_compressed_values(Params &); static void plain_values(Params &);
//     Params::dict_entries                               // distinct values counted (-mat_view)
//     static bool dictionary(const Params &);             // the build's choice
//     static std::vector<Scalar> value_table(std::vector<Scalar> distinct); // empty: too many
//     static void encode_device(cuda::Operator<Scalar> &, const std::vector<Scalar> &table);
//     static double predicted_bytes(const Params &, const BlockSource &); // the format's own arrays
//     static double critical_steps(const Params &, const BlockSource &);  // see FormatOperator::estimate
//   };
// resolve, predicted_bytes and critical_steps read the block through BlockSource, whose full
// passes (groups, longest_row) run on the GPU for GPU builds; a host pass of their own over the
// block must be sampled.
#pragma once

#include "format_operator.hpp"

#include <functional>
#include <type_traits>
#include <utility>

namespace gpumats {

// whether a format core's Matrix holds its values in another form than its val array
template <class M>
auto compressed(const M &m, int) -> decltype(m.values_compressed())
{
  return m.values_compressed();
}
template <class M>
bool compressed(const M &, long)
{
  return false;
}

// whether the traits T have a compressed value form (T::allow_compressed_values(Params &))
template <class T, class = void>
struct HasCompressedValues : std::false_type {};
template <class T>
struct HasCompressedValues<T, std::void_t<decltype(T::allow_compressed_values(std::declval<typename T::Params &>()))>> : std::true_type {};

template <class T>
class TraitsOperator final : public FormatOperator {
public:
  typename T::Params params; // as set by options; resolve() fills in what depends on the matrix

  void allow_compressed_values() override
  {
    if constexpr (HasCompressedValues<T>::value) T::allow_compressed_values(params);
  }

  std::unique_ptr<FormatOperator> clone_parameters() const override
  {
    auto o    = std::make_unique<TraitsOperator>();
    o->params = params;
    this->copy_settings_to(*o);
    return o;
  }
  PetscErrorCode set_from_options(OptionItems PetscOptionsObject, MPI_Comm comm, PetscBool *changed) override
  {
    return T::options(PetscOptionsObject, comm, params, changed);
  }
  void build(const BlockSource &A, PetscInt block_size, bool device) override
  {
#if GPUMATS_HAVE_CUDA
    if (device) cuda::enter_step(A.log, cuda::BuildStep::kStructure, A.stream()); // the parameter choices' queries count as structure
#endif
    build_resolved(A, T::resolve(params, A, block_size), device);
  }
  std::unique_ptr<FormatOperator> build_like(const BlockSource &B, PetscInt, bool device) const override
  {
    auto o    = std::make_unique<TraitsOperator>();
    o->params = params;
    this->copy_settings_to(*o);
    typename T::Params p = used_;
    if constexpr (HasCompressedValues<T>::value) T::plain_values(p); // the slots, one per stored value, are not compressed
    o->build_resolved(B, p, device);
    return o;
  }
  bool refill_compressed(const std::vector<Scalar> &distinct, const std::function<void(Scalar *, std::int64_t)> &gather) override
  {
#if GPUMATS_HAVE_CUDA
    if constexpr (HasCompressedValues<T>::value) {
      if (!dev_ || !dev_->values_compressed()) return false;
      // no table: more distinct values than a dictionary holds (a Newton step's Jacobian after a
      // first one of few values). The copy keeps its layout with plain values rather than being
      // converted in full, which for autocuda would also mean a new choice with its timings.
      const std::vector<Scalar> table = T::value_table(distinct); // empty for empty
      std::int64_t              n     = 0;
      Scalar                   *plain = dev_->open_plain_values(&n);
      gather(plain, n);
      if (table.empty()) {
        dev_->keep_plain_values();
        // (what parameters() reports: plain, after more values than a dictionary holds)
        T::plain_values(used_);
        used_.dict_entries = kMaxDictionary + 1;
      } else T::encode_device(*dev_, table); // as build_resolved does
      fp_ = dev_->footprint;
      return true;
    }
#endif
    (void)distinct, (void)gather;
    return false;
  }
  Scalar *values(std::int64_t *count) override
  {
    *count = 0;
    if (host_) { // every format's Matrix keeps its values in val, apart from its indices,
      // unless it holds them compressed (SELL-P's dictionary): then there is no array to refill
      if (compressed(*host_, 0)) return nullptr;
      *count = std::int64_t(host_->val.size());
      return host_->val.data();
    }
#if GPUMATS_HAVE_CUDA
    if (dev_) return dev_->values(count);
#endif
    return nullptr;
  }
  void clear() override
  {
    host_.reset();
#if GPUMATS_HAVE_CUDA
    dev_.reset();
#endif
    built_ = false;
    fp_    = Footprint{};
  }
  void mult_host(const Scalar *x, const Epilogue<Scalar> &ep) const override { T::spmv(*host_, x, ep); }
  void mult_transpose_host(const Scalar *x, const Epilogue<Scalar> &ep) const override { T::spmv_transpose(*host_, x, ep); }
#if GPUMATS_HAVE_CUDA
  void mult_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override { dev_->spmv(x, ep, stream); }
  void mult_transpose_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override { dev_->spmv_transpose(x, ep, stream); }
  void diagonal_device(Scalar *d, void *stream) const override { dev_->diagonal(d, stream); }
#endif
  Estimate estimate(const BlockSource &A, PetscInt block_size) const override
  {
    const typename T::Params p = T::resolve(params, A, block_size);
    return {T::predicted_bytes(p, A) + double(sizeof(Scalar)) * double(A.nrows() + A.ncols()), T::critical_steps(p, A)};
  }
  Footprint   footprint() const override { return fp_; }
  std::string parameters() const override
  {
    return T::describe(built_ ? used_ : params) + (this->stream_loads ? "" : ", cached matrix loads") + this->glue_notes();
  }
  std::size_t device_bytes() const override
  {
#if GPUMATS_HAVE_CUDA
    return dev_ ? dev_->bytes() : 0;
#else
    return 0;
#endif
  }

private:
  // builds with parameters already resolved: by build, or the copy's own for build_like
  void build_resolved(const BlockSource &A, const typename T::Params &p, bool device)
  {
    clear();
    if (device) {
#if GPUMATS_HAVE_CUDA
      // without the block's upload (-mat_gpumats_build host): converted on the host, then uploaded
      dev_ = A.device ? T::build_device(A, p) : T::upload(T::from_csr(A.host, p));
      // a GPU build's dictionary: the format's table of the block's distinct values (counted by
      // resolve and kept with the upload), the stored values encoded against it on the GPU; a
      // host build's from_csr has encoded them already
      if constexpr (HasCompressedValues<T>::value)
        if (A.device && T::dictionary(p)) {
          std::vector<Scalar> distinct;
          A.distinct_values(&distinct);
          const std::vector<Scalar> table = T::value_table(std::move(distinct));
          if (!table.empty()) T::encode_device(*dev_, table);
        }
      dev_->load_policy = this->stream_loads ? cuda::LoadPolicy::kStream : cuda::LoadPolicy::kDefault;
      fp_               = dev_->footprint;
#endif
    } else {
      host_ = std::make_unique<typename T::Matrix>(T::from_csr(A.host, p));
      fp_   = T::footprint(*host_);
    }
    used_  = p;
    built_ = true;
  }

  bool                                    built_ = false;
  typename T::Params                      used_{};
  Footprint                               fp_{};
  std::unique_ptr<typename T::Matrix>     host_;
#if GPUMATS_HAVE_CUDA
  std::unique_ptr<cuda::Operator<Scalar>> dev_;
#endif
};

template <class T>
std::unique_ptr<FormatOperator> make_operator()
{
  return std::make_unique<TraitsOperator<T>>();
}

} // namespace gpumats
