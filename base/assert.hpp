#pragma once
// KVACTOR_ASSERT: an invariant check that stays on in release builds.
// A broken invariant is a bug in kvactor, never a result of bad input, so it
// aborts with the condition, a message and file:line.

#include <cstdio>
#include <cstdlib>

namespace kvactor::detail {

[[noreturn]] inline void assert_failed(const char* cond, const char* msg, const char* file,
                                       int line) {
  std::fprintf(stderr, "kvactor: assertion failed: %s (%s) at %s:%d\n", cond, msg, file, line);
  std::abort();
}

} // namespace kvactor::detail

#define KVACTOR_ASSERT(cond, msg)                                                    \
  do {                                                                               \
    if (!(cond)) [[unlikely]]                                                        \
      ::kvactor::detail::assert_failed(#cond, msg, __FILE__, __LINE__);              \
  } while (false)
