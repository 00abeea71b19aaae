// What the engines on one OpenCL context share (Device::programs,
// Device::queues): the detectors of many streams, gputrack beside them.
// - Programs, built once per context: every engine asks the context's cache
//   for its program; the first asker builds it (through build_program and its
//   binary cache on disk), the others get the same cl_program for as long as
//   any of them holds it.  Kernels stay per engine (their arguments are an
//   engine's own), made from the shared program.
// - Queues, where asked for (Tuning::queues): a few in-order queues that the
//   engines on the context take in turn, instead of one each.
#pragma once

#include "cl.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gpudetect {
namespace cl {

class ProgramCache {
public:
  // The program of (source, options, register limits) on `dev`'s context.
  // Safe to call from several threads: two callers asking for the same
  // program while it builds wait for the one build.  A failed build is not
  // kept (the next caller tries again and gets the error itself).
  Error get (const Device &dev, const std::string &source, uint64_t source_hash, const std::string &options,
             const std::string &ptx_register_limits, std::shared_ptr<const Program> *out, bool *from_cache);
  // Programs built through this cache so far (from source or from a cached
  // binary: each is one clBuildProgram of a program of ours on the context).
  uint64_t builds () const;
  // Programs held now.
  size_t held () const;

private:
  // One program: built under `lock`; its fields written under both locks
  // and read under either.
  struct Entry {
    std::mutex lock;
    std::string source; // the key's hash names it; compared in full
    std::weak_ptr<const Program> program;
    bool from_cache = false;
  };
  mutable std::mutex lock_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  uint64_t builds_ = 0;
};

class QueuePool {
public:
  // The next of `count` in-order queues on the context (profiling ones
  // where asked for), made on first use and handed out in turn; `*out` holds
  // its own reference.
  Error next (const Device &dev, int count, bool profiling, Queue *out);

private:
  struct Pool {
    std::vector<Queue> queues;
    size_t next = 0;
  };
  std::mutex lock_;
  std::map<std::pair<int, bool>, Pool> pools_;
};

// A program through `dev`'s cache (Device::programs), or built for this
// caller alone where the device has none.
Error build_shared_program (const Device &dev, const std::string &source, uint64_t source_hash,
                            const std::string &options, std::shared_ptr<const Program> *out, bool *from_cache = nullptr,
                            const std::string &ptx_register_limits = {});

// Programs built on `dev`'s context through its cache so far (0 without one).
uint64_t program_builds (const Device &dev);

} // namespace cl
} // namespace gpudetect
