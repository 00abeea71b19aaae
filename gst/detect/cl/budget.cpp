#include "budget.h"

#include "cl.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <sys/resource.h>

namespace gpudetect {
namespace cl {

namespace {
thread_local AllocationBudget *current = nullptr;
} // namespace

// The device's memory as budgets count it: its global memory, of a CPU
// device at most the process's address-space limit.
static uint64_t device_memory (const DeviceInfo &d) {
  uint64_t memory = d.global_mem;
  rlimit as{};
  if ((d.type & CL_DEVICE_TYPE_CPU) && getrlimit (RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    memory = std::min<uint64_t> (memory, as.rlim_cur);
  return memory;
}

uint64_t default_memory_budget (const DeviceInfo &d) { return device_memory (d) / 2; }

std::string size_text (uint64_t bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string (bytes) + " bytes";
  double v = static_cast<double> (bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    u++;
  }
  char s[32];
  std::snprintf (s, sizeof s, v < 10 ? "%.2f %s" : "%.1f %s", v, units[u]);
  return s;
}

namespace {
struct DeviceTotals {
  uint64_t held = 0;
  int holders = 0;
};
std::mutex ledger_lock;
std::map<const void *, DeviceTotals> &ledger () {
  static auto *l = new std::map<const void *, DeviceTotals>; // outlives the engines of static destructors
  return *l;
}
} // namespace

DeviceShare::DeviceShare (const DeviceInfo &dev) : device_ (dev.id) {
  capacity_ = device_memory (dev) / 8 * 7;
  std::lock_guard<std::mutex> g (ledger_lock);
  ledger ()[device_].holders++;
}

DeviceShare::~DeviceShare () {
  std::lock_guard<std::mutex> g (ledger_lock);
  DeviceTotals &t = ledger ()[device_];
  t.held -= std::min (t.held, held_);
  if (--t.holders <= 0)
    ledger ().erase (device_);
}

void DeviceShare::hold (uint64_t bytes) {
  std::lock_guard<std::mutex> g (ledger_lock);
  DeviceTotals &t = ledger ()[device_];
  t.held = t.held - std::min (t.held, held_) + bytes;
  held_ = bytes;
}

uint64_t DeviceShare::others (int *count) const {
  std::lock_guard<std::mutex> g (ledger_lock);
  const DeviceTotals &t = ledger ()[device_];
  if (count)
    *count = t.holders - 1;
  return t.held - std::min (t.held, held_);
}

uint64_t DeviceShare::room () const {
  if (capacity_ == 0)
    return 0;
  const uint64_t o = others ();
  return o < capacity_ ? capacity_ - o : 1; // 1 byte: nothing fits (0 would mean no limit)
}

AllocationBudget::AllocationBudget (const DeviceInfo &dev, uint64_t limit, uint64_t used)
    : device_ (dev.name), max_alloc_ (dev.max_alloc), limit_ (limit), used_ (used), previous_ (current) {
  current = this;
}

AllocationBudget::~AllocationBudget () { current = previous_; }

AllocationBudget *AllocationBudget::active () { return current; }

uint64_t AllocationBudget::remaining () const {
  if (limit_ == 0)
    return max_alloc_ ? max_alloc_ : std::numeric_limits<uint64_t>::max ();
  return used_ < limit_ ? limit_ - used_ : 0;
}

Error AllocationBudget::over (uint64_t bytes) {
  if (limit_ == 0 || (bytes <= limit_ && used_ <= limit_ - bytes))
    return {};
  needed_ = used_ + bytes;
  return {"device memory: " + size_text (bytes) + " more would bring what is held to " + size_text (needed_) +
              ", over the limit of " + size_text (limit_) + " (" + std::to_string (limit_) + " bytes)",
          Error::Kind::Resource};
}

Error AllocationBudget::charge (uint64_t bytes) {
  if (max_alloc_ > 0 && bytes > max_alloc_) {
    too_large_ = bytes;
    needed_ = used_ + bytes;
    return {"a buffer of " + size_text (bytes) + " is larger than the largest " + device_ + " allocates (" +
                size_text (max_alloc_) + ")",
            Error::Kind::Resource};
  }
  if (Error e = over (bytes))
    return e;
  used_ += bytes;
  return {};
}

Error AllocationBudget::reserve (uint64_t bytes) {
  if (Error e = over (bytes))
    return e;
  used_ += bytes;
  return {};
}

Error AllocationBudget::check (uint64_t bytes) { return over (bytes); }

} // namespace cl
} // namespace gpudetect
