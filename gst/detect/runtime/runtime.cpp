#include "runtime.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace gpudetect {

void ProgramSpec::add (const char *text, uint64_t text_hash) {
  hash = source.empty () ? text_hash : cl::fnv1a (&text_hash, sizeof text_hash, hash);
  source += source.empty () ? "" : "\n";
  source += text;
}

void ProgramSpec::add (const std::string &generated) {
  hash = source.empty () ? cl::fnv1a (generated.data (), generated.size ())
                         : cl::fnv1a (generated.data (), generated.size (), hash);
  source += source.empty () ? "" : "\n";
  source += generated;
}

namespace runtime {

bool many_lanes (const cl::DeviceInfo &d) {
  return (d.type & CL_DEVICE_TYPE_GPU) || (d.type & CL_DEVICE_TYPE_ACCELERATOR);
}

Runtime::~Runtime () { finish (); }

Error Runtime::open (const std::string &selector, const cl::Device *share, bool profiling, int shared_queues) {
  profiling_ = profiling;
  if (Error e = share ? cl::attach_device (*share, profiling, &dev_) : cl::open_device (selector, profiling, &dev_))
    return e;
  if (share && shared_queues > 0 && dev_.queues)
    return dev_.queues->next (dev_, shared_queues, profiling, &dev_.queue);
  return {};
}

Error Runtime::add_upload_queue () {
  cl_int st = CL_SUCCESS;
  upload_.reset (clCreateCommandQueue (dev_.context.get (), dev_.info.id, profiling_ ? CL_QUEUE_PROFILING_ENABLE : 0,
                                       &st));
  GPUDETECT_CL_TRY (st);
  return {};
}

Error Runtime::build (const ProgramSpec &spec, const std::string &extra_options,
                      std::shared_ptr<const cl::Program> *out, bool *from_cache, bool *kept_optional) {
  std::string opts = spec.options;
  if (!extra_options.empty ())
    opts += " " + extra_options;
  Error built = cl::build_shared_program (dev_, spec.source, spec.hash, opts, out, from_cache,
                                          spec.ptx_register_limits);
  const size_t at = spec.optional_option.empty () ? std::string::npos : opts.find (spec.optional_option);
  if (kept_optional)
    *kept_optional = !built && at != std::string::npos;
  if (built && at != std::string::npos) {
    opts.erase (at, spec.optional_option.size ());
    built = cl::build_shared_program (dev_, spec.source, spec.hash, opts, out, from_cache);
  }
  return built;
}

// Holds its own reference to the queue it flushes.
static void CL_CALLBACK flush_queue (cl_event, cl_int, void *queue) {
  clFlush (static_cast<cl_command_queue> (queue));
  clReleaseCommandQueue (static_cast<cl_command_queue> (queue));
}

Error Runtime::start_after (cl_event uploaded) {
  GPUDETECT_CL_TRY (clRetainCommandQueue (queue ()));
  if (cl_int st = clSetEventCallback (uploaded, CL_COMPLETE, flush_queue, queue ()); st != CL_SUCCESS) {
    clReleaseCommandQueue (queue ());
    GPUDETECT_CL_TRY (st);
  }
  return {};
}

Error Runtime::finish () {
  if (upload_)
    GPUDETECT_CL_TRY (clFinish (upload_.get ()));
  if (dev_.queue)
    GPUDETECT_CL_TRY (clFinish (dev_.queue.get ()));
  return {};
}

Error Runtime::grow (cl::Mem *m, size_t *have, size_t need) {
  if (*have >= need)
    return {};
  need = std::max (need, *have * 2);
  if (Error e = cl::make_buffer (dev_, m, need))
    return e;
  *have = need;
  return {};
}

void MappedBuffer::release () {
  if (ptr_ && queue_) {
    clEnqueueUnmapMemObject (queue_.get (), mem_.get (), ptr_, 0, nullptr, nullptr);
    clFinish (queue_.get ());
  }
  ptr_ = nullptr;
  size_ = 0;
  mem_.reset ();
  queue_.reset ();
}

Error MappedBuffer::create (const Runtime &rt, size_t bytes) {
  release ();
  if (Error e = cl::make_buffer (rt.device (), &mem_, bytes, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR))
    return e;
  GPUDETECT_CL_TRY (clRetainCommandQueue (rt.queue ()));
  queue_.reset (rt.queue ());
  cl_int st = CL_SUCCESS;
  ptr_ = clEnqueueMapBuffer (rt.queue (), mem_.get (), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                             nullptr, &st);
  GPUDETECT_CL_TRY (st);
  size_ = bytes;
  return {};
}

bool finished (cl_event e) {
  cl_int st = CL_QUEUED;
  clGetEventInfo (e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
  return st <= CL_COMPLETE;
}

Error wait (cl_event e, const char *what) {
  const cl_int st = clWaitForEvents (1, &e);
  if (st == CL_SUCCESS)
    return {};
  cl_int exec = CL_COMPLETE;
  clGetEventInfo (e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, nullptr);
  return std::string (what) + ": " + cl::status_to_string (exec < 0 ? exec : st);
}

void Interrupt::set (bool on) {
  {
    std::lock_guard<std::mutex> g (lock_);
    on_ = on;
  }
  changed_.notify_all ();
}

void Interrupt::wake () {
  std::lock_guard<std::mutex> g (lock_); // a waiter between its check and its sleep sees the change
  changed_.notify_all ();
}

namespace {

void CL_CALLBACK on_complete (cl_event, cl_int, void *data) {
  auto *interrupt = static_cast<std::shared_ptr<Interrupt> *> (data);
  (*interrupt)->wake ();
  delete interrupt;
}

} // namespace

Error wait (cl_event e, const char *what, const std::shared_ptr<Interrupt> &interrupt, bool poll) {
  if (!interrupt)
    return wait (e, what);
  const Error interrupted ("interrupted while waiting for the device", Error::Kind::Interrupted);
  if (poll) {
    while (!finished (e) && !interrupt->is_set ())
      std::this_thread::sleep_for (std::chrono::milliseconds (1));
  } else if (!finished (e)) {
    // the callback owns a reference, so that it may come after this element is gone
    auto *data = new std::shared_ptr<Interrupt> (interrupt);
    if (clSetEventCallback (e, CL_COMPLETE, on_complete, data) != CL_SUCCESS) {
      delete data;
      return interrupt->is_set () ? interrupted : wait (e, what);
    }
    std::unique_lock<std::mutex> l (interrupt->lock_);
    interrupt->changed_.wait (l, [&] { return interrupt->on_.load () || finished (e); });
  }
  if (!finished (e))
    return interrupted;
  return wait (e, what); // done: its status
}

double span_us (const cl::Event &e, cl_ulong *first, cl_ulong *last) {
  if (!e)
    return 0;
  cl_ulong a = 0, b = 0;
  if (clGetEventProfilingInfo (e.get (), CL_PROFILING_COMMAND_START, sizeof a, &a, nullptr) != CL_SUCCESS ||
      clGetEventProfilingInfo (e.get (), CL_PROFILING_COMMAND_END, sizeof b, &b, nullptr) != CL_SUCCESS)
    return 0;
  if (first)
    *first = std::min (*first, a);
  if (last)
    *last = std::max (*last, b);
  return (b - a) / 1000.0;
}

void Timeline::sum (std::vector<double> *phases, cl_ulong *first, cl_ulong *last) const {
  for (const auto &[phase, ev] : events_) {
    if (phase < 0)
      continue;
    if (static_cast<size_t> (phase) >= phases->size ())
      phases->resize (phase + 1);
    (*phases)[phase] += span_us (ev, first, last);
  }
}

} // namespace runtime
} // namespace gpudetect
