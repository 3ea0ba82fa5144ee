// The format registry: every format is declared once, by a FormatInfo defined beside its traits
// (cmrs/cmrs.cxx, ...) and one line in register.cxx. Registration, type names, conversions, the
// list of types the examples and tests iterate over, and the error messages all come from here.
//
// Type names. Users type the root names <name> (host reference) and <name>cuda (GPU), as they type
// `aijcusparse`; MatSetType turns them into concrete seq/mpi types named seqaij<stem>[cuda] and
// mpiaij<stem>[cuda]. PETSc decides "is this AIJ?" by a prefix test on the concrete name
// (PetscObjectBaseTypeCompare, MatSolverTypeGet, MatMPIAIJGetSeqAIJ, DMDA's interpolation), so
// these names pass exactly the AIJ tests, as PETSc's own seqaijcusparse does, and the stem is
// chosen so that no other PETSc type is a prefix of it (SELL-P's stem is "padsell": "seqaijsellp"
// would also pass the test for PETSc's seqaijsell, whose layout it does not have).
#pragma once

#include <petscmat.h>

#include <memory>
#include <string>
#include <vector>

namespace gpumats {

// The registry: the one line that names the formats, in registration order. A new format adds its
// core, its CUDA file, its traits (defining its FormatInfo <name>_info) and its name here;
// everything else iterates over this table or finds a format by name (format_named).
#define GPUMATS_FORMATS(X) X(cmrs) X(sellp) X(bellpack) X(auto)
#define GPUMATS_COUNT_FORMAT(n) +1
constexpr std::size_t kNumFormats = 0 GPUMATS_FORMATS(GPUMATS_COUNT_FORMAT);

class FormatOperator;

struct FormatInfo {
  const char *name;  // root names <name> and <name>cuda: the user-facing contract
  const char *stem;  // concrete names seqaij<stem>[cuda], mpiaij<stem>[cuda]
  const char *title; // "CMRS", for -mat_view and -help
  bool        host;  // whether the host reference type <name> exists (autocuda: GPU only)
  // whether -mat_gpumats_long_rows -1 (the default) may split long rows: autocuda weighs long
  // rows itself and may keep cuSPARSE CSR, which balances them
  bool split_long_rows;
  std::unique_ptr<FormatOperator> (*make)(); // null where this build cannot run the format
  PetscLogEvent convert_event, spmv_event;   // registered by PetscGpuMatsInitialize
};

// The registry in declaration order (GPUMATS_FORMATS).
struct FormatList {
  FormatInfo *const *first, *const *last;
  FormatInfo *const *begin() const { return first; }
  FormatInfo *const *end() const { return last; }
};
FormatList formats();
// The format of that root name ("sellp"), for code that works with another format (autocuda's
// candidates); a name not in the registry is a programming error (std::logic_error).
const FormatInfo &format_named(const char *name);

// Every registered type: each format's host form (where it has one), then its GPU form, in
// registry order. index is the format's position in the registry.
struct TypeForm {
  FormatInfo *format;
  bool        device;
  std::size_t index;
};
std::vector<TypeForm> type_forms();

// "cmrscuda"; "seqaijcmrscuda" for prefix "seq".
std::string root_name(const FormatInfo &f, bool device);
std::string concrete_name(const FormatInfo &f, const char *prefix, bool device);
// The format and form a type name stands for: a root name, or a concrete seq or mpi name. Null
// when the name is none of ours.
const FormatInfo *find_type(const char *type_name, bool *device);
// The host types, for messages: "cmrs, sellp or bellpack".
std::string host_type_list();
// Whether A's type is one of our GPU types whose concrete name starts with prefix ("seq", "mpi")
bool OurDeviceOf(Mat A, const char *prefix);

} // namespace gpumats
