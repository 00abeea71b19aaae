// Minimal test harness: CHECK records failures, finish() prints the tally.
// CHECK may run on several threads at once (the tally is atomic).
#pragma once
#include <atomic>
#include <cstdio>

static std::atomic<int> g_passed{0}, g_failed{0};

#define CHECK(cond)                                                                                  \
  do {                                                                                               \
    if (cond)                                                                                        \
      g_passed++;                                                                                    \
    else {                                                                                           \
      g_failed++;                                                                                    \
      std::fprintf (stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                \
    }                                                                                                \
  } while (0)

#define CHECK_MSG(cond, ...)                                                                         \
  do {                                                                                               \
    if (cond)                                                                                        \
      g_passed++;                                                                                    \
    else {                                                                                           \
      g_failed++;                                                                                    \
      std::fprintf (stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);                 \
      std::fprintf (stderr, __VA_ARGS__);                                                            \
      std::fprintf (stderr, "\n");                                                                   \
    }                                                                                                \
  } while (0)

static inline int finish () {
  std::printf ("%d passed, %d failed\n", g_passed.load (), g_failed.load ());
  return g_failed ? 1 : 0;
}
