// BELLPACK's product launches for the value dictionary's 1- and 2-byte codes (kernels.cuh): a file
// of their own, so that these 2 x 64 block sizes of kernels compile beside cuda.cu's plain ones.
#include "kernels.cuh"

namespace gpumats {
namespace bellpack {

GPUMATS_BELLPACK_DICTIONARY_LAUNCHES()

} // namespace bellpack
} // namespace gpumats
