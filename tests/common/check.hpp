// A minimal assertion recorder shared by the C++ test programs. Each check prints one line,
// "ok <name>" or "not ok <name>: <why>", and the program exits nonzero if any failed; the suite
// runner (tests/run.sh) counts these lines into its "N passed, M failed" summary.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace check {

inline int &failures()
{
  static int n = 0;
  return n;
}
inline int &passes()
{
  static int n = 0;
  return n;
}

inline void record(bool ok, const std::string &name, const std::string &why = "")
{
  if (ok) {
    ++passes();
    std::printf("ok %s\n", name.c_str());
  } else {
    ++failures();
    std::printf("not ok %s: %s\n", name.c_str(), why.c_str());
  }
  std::fflush(stdout);
}

// The call must throw E with a message that mentions must_mention.
template <class E, class F>
void expect_error(const std::string &name, F f, const std::string &must_mention)
{
  try {
    f();
    record(false, name, "no error raised");
  } catch (const E &e) {
    const std::string msg = e.what();
    record(msg.find(must_mention) != std::string::npos, name, "message lacks '" + must_mention + "': " + msg);
  }
}

inline int finish()
{
  std::printf("# %d checks passed, %d failed\n", passes(), failures());
  return failures() ? 1 : 0;
}

} // namespace check
