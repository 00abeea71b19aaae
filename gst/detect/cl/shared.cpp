#include "shared.h"

#include <cstdio>

namespace gpudetect {
namespace cl {

Error ProgramCache::get (const Device &dev, const std::string &source, uint64_t source_hash,
                         const std::string &options, const std::string &ptx_register_limits,
                         std::shared_ptr<const Program> *out, bool *from_cache) {
  char hash[24];
  std::snprintf (hash, sizeof hash, "%016llx", static_cast<unsigned long long> (source_hash));
  const std::string key = std::string (hash) + '\n' + options + '\n' + ptx_register_limits;
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> g (lock_);
    // Entries whose program nobody holds any more go (and with them the
    // source they keep), unless a caller has one in hand (building it).
    for (auto it = entries_.begin (); it != entries_.end ();)
      it = it->second.use_count () == 1 && it->second->program.expired () ? entries_.erase (it) : std::next (it);
    std::shared_ptr<Entry> &e = entries_[key];
    if (!e)
      e = std::make_shared<Entry> ();
    entry = e;
  }
  std::lock_guard<std::mutex> g (entry->lock);
  if (std::shared_ptr<const Program> p = entry->program.lock ()) {
    if (entry->source == source) {
      *out = std::move (p);
      if (from_cache)
        *from_cache = entry->from_cache;
      return {};
    }
  }
  // Built here: for the entry, or for this caller alone where another
  // source has the same 64-bit hash as the entry's.
  const bool shared = !entry->program.lock ();
  Program built;
  bool cached = false;
  if (Error e = build_program (dev, source, source_hash, options, &built, &cached, ptx_register_limits))
    return e;
  auto p = std::make_shared<const Program> (std::move (built));
  {
    // written under both locks, read under either
    std::lock_guard<std::mutex> c (lock_);
    if (shared) {
      entry->program = p;
      entry->source = source;
      entry->from_cache = cached;
    }
    builds_++;
  }
  *out = std::move (p);
  if (from_cache)
    *from_cache = cached;
  return {};
}

uint64_t ProgramCache::builds () const {
  std::lock_guard<std::mutex> g (lock_);
  return builds_;
}

size_t ProgramCache::held () const {
  std::lock_guard<std::mutex> g (lock_);
  size_t n = 0;
  for (const auto &[key, e] : entries_)
    n += !e->program.expired ();
  return n;
}

Error QueuePool::next (const Device &dev, int count, bool profiling, Queue *out) {
  std::lock_guard<std::mutex> g (lock_);
  Pool &p = pools_[{count, profiling}];
  if (p.queues.empty ())
    for (int i = 0; i < count; i++) {
      cl_int st = CL_SUCCESS;
      Queue q (clCreateCommandQueue (dev.context.get (), dev.info.id, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &st));
      if (st != CL_SUCCESS) {
        p.queues.clear ();
        GPUDETECT_CL_TRY (st);
      }
      p.queues.push_back (std::move (q));
    }
  cl_command_queue q = p.queues[p.next++ % p.queues.size ()].get ();
  GPUDETECT_CL_TRY (clRetainCommandQueue (q));
  out->reset (q);
  return {};
}

Error build_shared_program (const Device &dev, const std::string &source, uint64_t source_hash,
                            const std::string &options, std::shared_ptr<const Program> *out, bool *from_cache,
                            const std::string &ptx_register_limits) {
  if (dev.programs)
    return dev.programs->get (dev, source, source_hash, options, ptx_register_limits, out, from_cache);
  Program own;
  if (Error e = build_program (dev, source, source_hash, options, &own, from_cache, ptx_register_limits))
    return e;
  *out = std::make_shared<const Program> (std::move (own));
  return {};
}

uint64_t program_builds (const Device &dev) { return dev.programs ? dev.programs->builds () : 0; }

} // namespace cl
} // namespace gpudetect
