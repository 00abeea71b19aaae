// Shared by the fuzz targets: a check that aborts (so that libFuzzer, and
// the replay driver in a normal build, report the input), and the input as a
// string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, ...)                                                                        \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      std::fprintf (stderr, "%s:%d: property failed: %s: ", __FILE__, __LINE__, #cond);              \
      std::fprintf (stderr, __VA_ARGS__);                                                            \
      std::fprintf (stderr, "\n");                                                                   \
      std::abort ();                                                                                 \
    }                                                                                                \
  } while (0)

static inline std::string fuzz_text (const uint8_t *data, size_t size) {
  return std::string (reinterpret_cast<const char *> (data), size);
}
