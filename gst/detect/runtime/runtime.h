// The one device runtime of the engine's two users, the detector and the
// template search: the device (its own or a shared context's), the compute
// queue and an optional upload queue, program builds through the context's
// cache, page-locked buffers mapped for life, completion checks and the
// profiled commands of a frame.  Layers: detector and track -> runtime -> cl.
#pragma once

#include "cl/cl.h"
#include "cl/shared.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gpudetect {

// What one program is built from.
struct ProgramSpec {
  std::string source;
  uint64_t hash = 0;   // of everything in source
  std::string options;
  std::string ptx_register_limits; // "kernel=N,..." (NVIDIA; see cl::build_program)
  // An option whose build failure is retried without it (and without the
  // register limits): code a driver may refuse, with a portable fallback.
  std::string optional_option;

  // Appends OpenCL C: an embedded file (its text and hash, kernels.h), or
  // text made at run time (hashed here); the program's hash folds every
  // piece's in order.
  void add (const char *text, uint64_t text_hash);
  void add (const std::string &generated);
};

namespace runtime {

// GPUs and accelerators: the devices the many-lanes schedules are for.
bool many_lanes (const cl::DeviceInfo &d);

class Runtime {
public:
  Runtime () = default;
  Runtime (const Runtime &) = delete;
  Runtime &operator= (const Runtime &) = delete;
  // Waits for both queues: nothing of ours runs after its owner is gone.
  ~Runtime ();

  // Attaches to `share`'s context where given (programs, page-locked memory
  // and, with shared_queues > 0, one of the context's `shared_queues`
  // in-order queues taken in turn), else opens `selector`'s device.
  Error open (const std::string &selector, const cl::Device *share, bool profiling, int shared_queues = 0);
  // A second in-order queue for uploads, so that a frame's upload runs while
  // the frame before it is computed (an out-of-order queue runs them one
  // after the other on NVIDIA's driver: bench/profile/queueoverlap.c).
  Error add_upload_queue ();

  const cl::Device &device () const { return dev_; }
  const cl::DeviceInfo &info () const { return dev_.info; }
  cl_command_queue queue () const { return dev_.queue.get (); }
  bool has_upload_queue () const { return static_cast<bool> (upload_); }
  // The upload queue where there is one, else the compute queue.
  cl_command_queue uploads () const { return upload_ ? upload_.get () : dev_.queue.get (); }
  bool profiling () const { return profiling_; }
  // `e` to receive a command's event where profiling, else null.
  cl_event *profiled (cl::Event *e) const { return profiling_ ? e->out () : nullptr; }

  // The program of `spec` with `extra_options` after its own, from the
  // context's cache; where that build fails and the spec has an optional
  // option, built again without it (and without the register limits);
  // `*kept_optional` says whether the program has it.
  Error build (const ProgramSpec &spec, const std::string &extra_options, std::shared_ptr<const cl::Program> *out,
               bool *from_cache = nullptr, bool *kept_optional = nullptr);
  // Programs built on this context through its cache so far.
  uint64_t program_builds () const { return cl::program_builds (dev_); }

  // Commands on the compute queue that wait for `uploaded` (a command of the
  // upload queue) start as soon as it completes: a driver that resolves
  // waits across queues only at API calls would start them at the next one.
  Error start_after (cl_event uploaded);

  // Waits until both queues are empty.
  Error finish ();

  // `*m` holds at least `need` bytes (twice what it held where it grows).
  Error grow (cl::Mem *m, size_t *have, size_t need);

private:
  cl::Device dev_;
  cl::Queue upload_;
  bool profiling_ = false;
};

// A buffer in page-locked host memory, mapped for its whole life: the host
// writes frames into it or reads results out of it, and the device moves it
// at full transfer speed.  Unmapped on the queue it was mapped on.
class MappedBuffer {
public:
  MappedBuffer () = default;
  MappedBuffer (MappedBuffer &&o) noexcept { *this = std::move (o); }
  MappedBuffer &operator= (MappedBuffer &&o) noexcept {
    if (this != &o) {
      release ();
      mem_ = std::move (o.mem_);
      queue_ = std::move (o.queue_);
      ptr_ = std::exchange (o.ptr_, nullptr);
      size_ = std::exchange (o.size_, 0);
    }
    return *this;
  }
  ~MappedBuffer () { release (); }
  // `bytes` of it (what it held before is released).
  Error create (const Runtime &rt, size_t bytes);
  void *data () const { return ptr_; }
  size_t size () const { return size_; }
  const cl::Mem &mem () const { return mem_; }

private:
  void release ();
  cl::Mem mem_;
  cl::Queue queue_; // one more reference to the queue that mapped it
  void *ptr_ = nullptr;
  size_t size_ = 0;
};

// Whether `e`'s command has finished, or failed (never blocks).
bool finished (cl_event e);
// Waits for `e`; where its command failed, "`what`: CL_..." with the
// command's own status where the driver reports it.
Error wait (cl_event e, const char *what);

// Lets another thread cut a wait for the device short (an element that
// stops): while set, the waits given it return Error::Kind::Interrupted at
// once, whatever the device is still doing.
class Interrupt {
public:
  void set (bool on);
  bool is_set () const { return on_.load (); }
  // Wakes the waits to look again (a command they wait for completed).
  void wake ();

private:
  friend Error wait (cl_event e, const char *what, const std::shared_ptr<Interrupt> &interrupt, bool poll);
  std::atomic<bool> on_{false};
  std::mutex lock_;
  std::condition_variable changed_;
};
// wait() that `interrupt` (may be null) can cut short: the thread sleeps
// until the driver's completion callback or the interrupt wakes it, or,
// where `poll`, looks every millisecond (NVIDIA's callbacks came up to 20 ms
// late, and its own wait is faster than either for sub-millisecond frames:
// bench/results/turns-h200-wait.txt).
Error wait (cl_event e, const char *what, const std::shared_ptr<Interrupt> &interrupt, bool poll);

// Microseconds from a profiled command's start to its end (0 without
// profiling information); widens [*first, *last] to the command's span.
double span_us (const cl::Event &e, cl_ulong *first = nullptr, cl_ulong *last = nullptr);

// The profiled commands of one frame, each under a phase its user names
// (Family::phases, the tracker's own).
class Timeline {
public:
  void clear () { events_.clear (); }
  void add (int phase, cl::Event e) { events_.emplace_back (phase, std::move (e)); }
  // Each phase's device time in `phases` (grown to fit), in microseconds;
  // widens [*first, *last] over every command.
  void sum (std::vector<double> *phases, cl_ulong *first, cl_ulong *last) const;

private:
  std::vector<std::pair<int, cl::Event>> events_;
};

} // namespace runtime
} // namespace gpudetect
