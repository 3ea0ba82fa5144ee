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
//     static double predicted_bytes(const Params &, const BlockSource &); // the format's own arrays
//     static double critical_steps(const Params &, const BlockSource &);  // see FormatOperator
//   };
// resolve, predicted_bytes and critical_steps read the block through BlockSource, whose full
// passes (groups, longest_row) run on the GPU for GPU builds; a host pass of their own over the
// block must be sampled.
#pragma once

#include "glue.hpp"

namespace gpumats {

template <class T>
class TraitsOperator final : public FormatOperator {
public:
  typename T::Params params; // as set by options; resolve() fills in what depends on the matrix

  std::unique_ptr<FormatOperator> clone_parameters() const override
  {
    auto o          = std::make_unique<TraitsOperator>();
    o->params       = params;
    o->stream_loads  = this->stream_loads;
    o->reorder_rcm   = this->reorder_rcm;
    o->long_rows     = this->long_rows;
    o->build_on_host = this->build_on_host;
    return o;
  }
  PetscErrorCode set_from_options(OptionItems PetscOptionsObject, MPI_Comm comm, PetscBool *changed) override
  {
    return T::options(PetscOptionsObject, comm, params, changed);
  }
  void build(const BlockSource &A, PetscInt block_size, bool device) override
  {
    clear();
#if GPUMATS_HAVE_CUDA
    if (device) cuda::enter_step(A.log, cuda::BuildStep::kStructure, A.stream()); // the parameter choices' queries count as structure
#endif
    const typename T::Params p = T::resolve(params, A, block_size);
    if (device) {
#if GPUMATS_HAVE_CUDA
      // without the block's upload (-mat_gpumats_build host): converted on the host, then uploaded
      dev_              = A.device ? T::build_device(A, p) : T::upload(T::from_csr(A.host, p));
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
#endif
  double predicted_bytes(const BlockSource &A, PetscInt block_size) const override
  {
    return T::predicted_bytes(T::resolve(params, A, block_size), A) + double(sizeof(Scalar)) * double(A.nrows() + A.ncols());
  }
  double critical_steps(const BlockSource &A, PetscInt block_size) const override { return T::critical_steps(T::resolve(params, A, block_size), A); }
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
