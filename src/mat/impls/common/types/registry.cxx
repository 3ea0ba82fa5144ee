// The format registry (registry.hpp): the formats in registration order and the type names
// made from them.
#include "registry.hpp"

#include <cstring>
#include <stdexcept>

namespace gpumats {

#define GPUMATS_DECLARE_FORMAT(n) extern FormatInfo n##_info;
GPUMATS_FORMATS(GPUMATS_DECLARE_FORMAT)
#define GPUMATS_LIST_FORMAT(n) &n##_info,
constexpr FormatInfo *kFormats[] = {GPUMATS_FORMATS(GPUMATS_LIST_FORMAT)};

FormatList formats() { return {kFormats, kFormats + kNumFormats}; }

const FormatInfo &format_named(const char *name)
{
  for (const FormatInfo *f : formats())
    if (!std::strcmp(f->name, name)) return *f;
  throw std::logic_error(std::string("no format named ") + name + " in the registry");
}

std::vector<TypeForm> type_forms()
{
  std::vector<TypeForm> v;
  for (std::size_t i = 0; i < kNumFormats; ++i)
    for (bool d : {false, true})
      if (d || kFormats[i]->host) v.push_back({kFormats[i], d, i});
  return v;
}

std::string root_name(const FormatInfo &f, bool device) { return std::string(f.name) + (device ? "cuda" : ""); }

std::string concrete_name(const FormatInfo &f, const char *prefix, bool device) { return std::string(prefix) + "aij" + f.stem + (device ? "cuda" : ""); }

const FormatInfo *find_type(const char *type_name, bool *device)
{
  if (!type_name) return nullptr;
  for (const TypeForm &t : type_forms())
    for (const std::string &n : {root_name(*t.format, t.device), concrete_name(*t.format, "seq", t.device), concrete_name(*t.format, "mpi", t.device)})
      if (n == type_name) {
        if (device) *device = t.device;
        return t.format;
      }
  return nullptr;
}

std::string host_type_list()
{
  std::vector<std::string> names;
  for (const FormatInfo *f : formats())
    if (f->host) names.push_back(f->name);
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? (i + 1 == names.size() ? " or " : ", ") : "") + names[i];
  return s;
}

bool OurDeviceOf(Mat A, const char *prefix)
{
  bool        device = false;
  const char *t      = nullptr;
  if (PetscObjectGetType((PetscObject)A, &t)) return false;
  return t && std::strncmp(t, prefix, std::strlen(prefix)) == 0 && find_type(t, &device) && device;
}

} // namespace gpumats
