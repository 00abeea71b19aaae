// OpenCL host layer of the detection engine: owned handles, status strings,
// device choice and the program build with its on-disk binary cache.
// No GStreamer include here or below.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "error.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpudetect {
namespace cl {

const char *status_to_string (cl_int status);

// Formats "call failed: CL_STATUS (file:line)" for a failed OpenCL call.
std::string call_error (const char *expr, cl_int status, const char *file, int line);

// Where the engine's warnings go: what went wrong and was worked around (a
// program binary cache entry that failed verification and was rebuilt, a
// cache folder that cannot be written).  The plugin sends them to
// GStreamer's log at warning level (category "gpudetectengine",
// gst/elements.cpp); with no handler set they go to stderr.  Thread-safe.
using WarningHandler = void (*) (const char *message);
void set_warning_handler (WarningHandler handler);
void warn (const std::string &message);

#define GPUDETECT_CL_TRY(expr)                                                 \
  do {                                                                         \
    cl_int _st = (expr);                                                       \
    if (_st != CL_SUCCESS)                                                     \
      return ::gpudetect::Error{                                           \
          ::gpudetect::cl::call_error (#expr, _st, __FILE__, __LINE__)};       \
  } while (0)

// A number no other object of the process had: a handle's identity, which
// its value is not (a released object's handle can come back for another).
uint64_t next_object_id ();

// One owner per handle: a move-only wrapper whose destructor releases.
template <typename T, cl_int (*Release) (T)> class Handle {
public:
  Handle () = default;
  explicit Handle (T h) : h_ (h), id_ (h ? next_object_id () : 0) {}
  Handle (const Handle &) = delete;
  Handle &operator= (const Handle &) = delete;
  Handle (Handle &&o) noexcept : h_ (std::exchange (o.h_, nullptr)), id_ (std::exchange (o.id_, 0)) {}
  Handle &operator= (Handle &&o) noexcept {
    if (this != &o) {
      reset ();
      h_ = std::exchange (o.h_, nullptr);
      id_ = std::exchange (o.id_, 0);
    }
    return *this;
  }
  ~Handle () { reset (); }
  void reset (T h = nullptr) {
    if (h_)
      Release (h_);
    h_ = h;
    id_ = h ? next_object_id () : 0;
  }
  T get () const { return h_; }
  // For a call that writes a new object into it.
  T *out () {
    reset ();
    id_ = next_object_id ();
    return &h_;
  }
  explicit operator bool () const { return h_ != nullptr; }
  // This object's identity (0 when empty): two handles with the same id are
  // the same object, whatever their values.
  uint64_t id () const { return h_ ? id_ : 0; }

private:
  T h_ = nullptr;
  uint64_t id_ = 0;
};

using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Mem = Handle<cl_mem, clReleaseMemObject>;
using Event = Handle<cl_event, clReleaseEvent>;

struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name, vendor, platform_name, driver_version, device_version;
  cl_device_type type = 0;
  cl_uint compute_units = 0;
  size_t max_work_group = 0;
  cl_ulong local_mem = 0;
  cl_ulong global_mem = 0; // CL_DEVICE_GLOBAL_MEM_SIZE
  cl_ulong max_alloc = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest buffer
  bool fp64 = false;
  std::string describe () const;
};

// Every OpenCL device of every platform, in platform/device order; callable
// from any thread (calls are serialised).
std::vector<DeviceInfo> list_devices ();

// Picks a device: `selector` empty or "auto" prefers the first GPU, then any
// device; a decimal number is an index into list_devices(); anything else is
// a case-insensitive substring of "platform: device".
Error choose_device (const std::string &selector, DeviceInfo *out);

// A context and an in-order queue on one device, with profiling where asked
// for: on NVIDIA's driver a profiling queue costs the host more per command
// (an H100's: a transfer 2.2-2.4 -> 8 us to enqueue; bench/profile/launchcost.c).
// The detector puts a frame's upload on a second queue of its own when the
// frame before is still on the device, so that the two overlap (an
// out-of-order queue runs them one after the other on NVIDIA's driver:
// bench/profile/queueoverlap.c).
class ProgramCache; // shared.h
class QueuePool;
struct Device {
  DeviceInfo info;
  Context context;
  Queue queue;
  // What every engine on the context shares (shared.h): its programs, built
  // once, and the queues engines may share; made by open_device, shared by
  // attach_device.
  std::shared_ptr<ProgramCache> programs;
  std::shared_ptr<QueuePool> queues;
};
Error open_device (const std::string &selector, bool profiling, Device *out);
// `shared`'s device and context (one more reference to it) and its program
// cache, with a queue of our own: engines that share a context share
// programs and can share buffers and page-locked memory (many streams;
// gputrack beside gpudetect; docs/ARCHITECTURE.md).
Error attach_device (const Device &shared, bool profiling, Device *out);

// Page-locked host memory: CL_MEM_ALLOC_HOST_PTR buffers, each mapped once
// for its whole life.  The device reads such memory at full transfer speed,
// so a frame that lies in it uploads without the driver's staging copy.  An
// allocator holds its own references to the context and a queue of its own
// (its unmaps never land between a detector's commands), and every block
// holds its allocator: blocks may outlive the Detector that made them.
// Thread-safe.
class HostBlock;
class HostAllocator : public std::enable_shared_from_this<HostAllocator> {
public:
  static Error create (const Device &dev, std::shared_ptr<HostAllocator> *out);
  ~HostAllocator ();
  Error alloc (size_t size, std::unique_ptr<HostBlock> *out);

private:
  friend class HostBlock;
  HostAllocator () = default;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

class HostBlock {
public:
  ~HostBlock ();
  HostBlock (const HostBlock &) = delete;
  HostBlock &operator= (const HostBlock &) = delete;
  void *data () const { return ptr_; }
  size_t size () const { return size_; }

private:
  friend class HostAllocator;
  HostBlock () = default;
  std::shared_ptr<HostAllocator> owner_;
  cl_mem mem_ = nullptr;
  void *ptr_ = nullptr;
  size_t size_ = 0;
};

// Builds `source` with `options`; binaries are cached on disk (cache.h:
// $GPUDETECT_CACHE_DIR, else $XDG_CACHE_HOME/gpudetect or ~/.cache/gpudetect),
// keyed by device, driver, source hash and options.  `from_cache` tells
// whether the binary came from the cache.  A cache entry that fails
// verification, or whose binary the driver refuses, is removed and the
// program built from source (and written back), with a warning; a folder
// that cannot be created or written leaves the program built without it (one
// warning per folder).  `ptx_register_limits`
// ("kernel=N,kernel=N"), where the binary is PTX (NVIDIA), rebuilds the
// program from its PTX with `.maxnreg N` on those kernels (the driver ignores
// -cl-nv-maxrregcount); elsewhere, or where the PTX lacks a kernel, the
// program stays as built.
Error build_program (const Device &dev, const std::string &source, uint64_t source_hash,
                     const std::string &options, Program *out, bool *from_cache = nullptr,
                     const std::string &ptx_register_limits = {});

// A program build from source, as a BuildReport hears of it: before the
// driver compiles (done false) and when it has (done true, ok, seconds).
struct BuildEvent {
  bool done = false;
  bool ok = false;
  double seconds = 0;
  std::string device;
};

// While one exists, the builds from source of this thread (build_program:
// not the binaries found in the cache) are reported to it, so that a caller
// can say why it takes seconds (an element's first start).  Nested reports:
// the innermost hears.
class BuildReport {
public:
  explicit BuildReport (std::function<void (const BuildEvent &)> f);
  ~BuildReport ();
  BuildReport (const BuildReport &) = delete;
  BuildReport &operator= (const BuildReport &) = delete;
  static void tell (const BuildEvent &e);

private:
  std::function<void (const BuildEvent &)> f_;
  BuildReport *outer_;
};

// `ptx` with `.maxnreg N` before the body of each kernel named in `limits`
// ("kernel=N,..."); empty if a kernel is missing or the list is malformed.
std::string limit_ptx_registers (const std::string &ptx, const std::string &limits);

Error create_kernel (const Program &prog, const char *name, Kernel *out);

// A buffer of at least 16 bytes on the device's context (initialised from
// `init` where given, for `size` bytes: the rest zero); the error names the
// size and the device.  Charged to the thread's AllocationBudget where one is
// active (budget.h); a buffer past the budget or larger than the device's
// largest allocation is refused before the driver is asked (kind Resource).
Error make_buffer (const Device &dev, Mem *m, size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE,
                   const void *init = nullptr);
// Several buffers (each `.first` of `.second` bytes), their total checked
// against the active budget before any is made: a refusal names the whole
// need and allocates none of them.
Error make_buffers (const Device &dev, std::initializer_list<std::pair<Mem *, size_t>> buffers,
                    cl_mem_flags flags = CL_MEM_READ_WRITE);
// A read-only buffer holding `v` (16 zero bytes when empty).
template <typename T> Error upload_vector (const Device &dev, Mem *m, const std::vector<T> &v) {
  if (v.empty ()) {
    static const uint32_t zero[4] = {};
    return make_buffer (dev, m, 16, CL_MEM_READ_ONLY, zero);
  }
  return make_buffer (dev, m, v.size () * sizeof (T), CL_MEM_READ_ONLY, v.data ());
}

uint64_t fnv1a (const void *data, size_t len, uint64_t h = 1469598103934665603ull);

// One kernel argument (cl::TypedKernel, kernel.h, sets them all in one
// typed call).
template <typename T> cl_int set_arg (cl_kernel k, cl_uint i, const T &v) {
  return clSetKernelArg (k, i, sizeof (T), &v);
}
inline cl_int set_arg (cl_kernel k, cl_uint i, const Mem &m) {
  cl_mem h = m.get ();
  return clSetKernelArg (k, i, sizeof (cl_mem), &h);
}

} // namespace cl

// v rounded up to a multiple of m (global work sizes).
inline size_t round_up (size_t v, size_t m) { return (v + m - 1) / m * m; }

} // namespace gpudetect
