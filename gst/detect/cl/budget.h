// Device memory a detector may hold, counted before the driver is asked.
// While an AllocationBudget is active on a thread, cl::make_buffer (cl.h)
// charges every buffer it makes there to it and refuses, with an Error of
// kind Resource and before clCreateBuffer, a buffer larger than the device's
// largest allocation or one that takes the total past the limit.  The
// Detector holds one around its family's setup() and geometry()
// (detector.cpp): a model and a frame size that need more than the limit
// fail with a message instead of the driver aborting (docs/reliability.md).
#pragma once

#include "error.h"

#include <cstdint>
#include <string>

namespace gpudetect {
namespace cl {

struct DeviceInfo;

// What one detector may hold on a device unless told otherwise: half its
// global memory (of a CPU device, whose buffers are the process's memory, half
// of the process's address-space limit where that is less), so that one
// stream cannot take what the other streams on the device and the driver
// need, while every shipped model at 1080p (1.15 GiB at most, dpm-inriaperson
// through the FFT: docs/reliability.md) runs on a device of 4 GiB; 0 where
// the device does not say its memory: no limit.
uint64_t default_memory_budget (const DeviceInfo &d);

// "1.50 GiB", "12.0 MiB", "300 bytes": sizes in messages.
std::string size_text (uint64_t bytes);

// What every engine of this process holds on each device, so that many
// streams on one device share it: a detector may take what its own budget
// allows only as far as the device has room left beside the others' (7/8 of
// its global memory, of a CPU device at most its address-space limit; the
// rest for the driver and what budgets do not count).  Each detector holds
// one Share while it exists and says what it holds; a refusal for want of
// the device's room says how much the others hold.
class DeviceShare {
public:
  explicit DeviceShare (const DeviceInfo &dev);
  ~DeviceShare ();
  DeviceShare (const DeviceShare &) = delete;
  DeviceShare &operator= (const DeviceShare &) = delete;

  // What this holder holds now (replacing what it said before).
  void hold (uint64_t bytes);
  // The most this holder may hold: the device's room less the others'.
  uint64_t room () const;
  // What the others hold, and how many they are.
  uint64_t others (int *count = nullptr) const;
  // The device's room for all holders (0: the device does not say: no limit).
  uint64_t capacity () const { return capacity_; }

private:
  const void *device_;
  uint64_t capacity_ = 0, held_ = 0;
};

class AllocationBudget {
public:
  // Active on this thread until destroyed; a scope made while another is
  // active suspends it until then.  `used`: bytes already held against
  // `limit` (0: no limit; a buffer is still refused past the device's
  // largest allocation).
  AllocationBudget (const DeviceInfo &dev, uint64_t limit, uint64_t used = 0);
  ~AllocationBudget ();
  AllocationBudget (const AllocationBudget &) = delete;
  AllocationBudget &operator= (const AllocationBudget &) = delete;

  // The scope active on this thread, or null.
  static AllocationBudget *active ();

  // One buffer of `bytes`: refused where it is larger than the device's
  // largest allocation or takes the total past the limit, else counted.
  Error charge (uint64_t bytes);
  // `bytes` in buffers made later, outside the scope (the frames in flight):
  // refused where they take the total past the limit, else counted.
  Error reserve (uint64_t bytes);
  // Whether buffers of `bytes` in all, about to be charged one by one, fit:
  // nothing counted; refused as charge() would refuse their total, so that
  // the refusal names the whole need before any of them is made.
  Error check (uint64_t bytes);

  uint64_t limit () const { return limit_; }
  uint64_t used () const { return used_; }
  // What is left under the limit (the largest allocation where no limit).
  uint64_t remaining () const;
  // After a refusal: the total the scope was asked to reach (0 before any).
  uint64_t needed () const { return needed_; }
  // After a refusal: the one buffer larger than the device's largest
  // allocation (0 where the limit refused).
  uint64_t too_large () const { return too_large_; }
  uint64_t max_alloc () const { return max_alloc_; }

private:
  Error over (uint64_t bytes);
  std::string device_;
  uint64_t max_alloc_ = 0, limit_ = 0, used_ = 0, needed_ = 0, too_large_ = 0;
  AllocationBudget *previous_ = nullptr;
};

} // namespace cl
} // namespace gpudetect
