#pragma once
// CMRS on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#include "../common/cuda/format.hpp"
#include "core.hpp"

namespace gpumats::cmrs {

// to_device, build_on_device, download (common/cuda/format.hpp). The build on the GPU computes the
// strip offsets (a gather of the row pointers, or a scan of the padded strip sizes for the
// modified layout), packs each row's entries into its strip and sorts every strip stably by packed
// word (CUB's segmented sort), reading nothing on the host: it costs little more than
// aijcusparse's own upload.
GPUMATS_FORMAT_DEVICE_INTERFACE;

} // namespace gpumats::cmrs
