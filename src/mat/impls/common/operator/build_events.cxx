// The -log_view events of the GPU builds (format_operator.hpp): where the first build of a GPU copy spends its
// time, upload, structure or scatter, nested in the format's <FORMAT>Convert event.
#include "format_operator.hpp"
#include "../runtime/events.hpp"

namespace gpumats {

namespace {
constexpr PetscLogEvent kNone = -1;
PetscLogEvent           upload_event = kNone, structure_event = kNone, scatter_event = kNone;
} // namespace

PetscErrorCode RegisterBuildEvents()
{
  PetscFunctionBegin;
  PetscCall(RegisterRankEvent("GpuMatsUpload", &upload_event));
  PetscCall(RegisterRankEvent("GpuMatsStructure", &structure_event));
  PetscCall(RegisterRankEvent("GpuMatsScatter", &scatter_event));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if GPUMATS_HAVE_CUDA
namespace {

// One event open at a time: entering a step ends the previous one's event and begins its own;
// kDone, or the end of the build (also by an exception), ends the last.
class BuildEvents final : public cuda::BuildLog {
public:
  ~BuildEvents() override
  {
    if (open_ != kNone) (void)PetscLogEventEnd(open_, 0, 0, 0, 0); // no throwing from here; the build's own error wins
  }
  void step(cuda::BuildStep s) override
  {
    if (open_ != kNone && PetscLogEventEnd(open_, 0, 0, 0, 0)) throw std::runtime_error("PetscLogEventEnd failed");
    open_ = kNone;
    const PetscLogEvent next = s == cuda::BuildStep::kUpload      ? upload_event
                               : s == cuda::BuildStep::kStructure ? structure_event
                               : s == cuda::BuildStep::kScatter   ? scatter_event
                                                                  : kNone;
    if (next != kNone && PetscLogEventBegin(next, 0, 0, 0, 0)) throw std::runtime_error("PetscLogEventBegin failed");
    open_ = next;
  }

private:
  PetscLogEvent open_ = kNone;
};

} // namespace

std::unique_ptr<cuda::BuildLog> BuildEventsIfLogging()
{
  PetscBool active = PETSC_FALSE;
  if (PetscLogIsActive(&active) || !active || upload_event == kNone) return nullptr;
  return std::make_unique<BuildEvents>();
}
#endif

} // namespace gpumats
