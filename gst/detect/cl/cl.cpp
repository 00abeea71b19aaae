#include "cl.h"

#include "budget.h"
#include "cache.h"
#include "shared.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>

namespace gpudetect {
namespace cl {

const char *status_to_string (cl_int status) {
  switch (status) {
#define C(x) case x: return #x;
    C (CL_SUCCESS) C (CL_DEVICE_NOT_FOUND) C (CL_DEVICE_NOT_AVAILABLE)
    C (CL_COMPILER_NOT_AVAILABLE) C (CL_MEM_OBJECT_ALLOCATION_FAILURE)
    C (CL_OUT_OF_RESOURCES) C (CL_OUT_OF_HOST_MEMORY)
    C (CL_PROFILING_INFO_NOT_AVAILABLE) C (CL_MEM_COPY_OVERLAP) C (CL_IMAGE_FORMAT_MISMATCH)
    C (CL_IMAGE_FORMAT_NOT_SUPPORTED) C (CL_BUILD_PROGRAM_FAILURE) C (CL_MAP_FAILURE)
    C (CL_MISALIGNED_SUB_BUFFER_OFFSET) C (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    C (CL_COMPILE_PROGRAM_FAILURE) C (CL_LINKER_NOT_AVAILABLE) C (CL_LINK_PROGRAM_FAILURE)
    C (CL_DEVICE_PARTITION_FAILED) C (CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    C (CL_INVALID_VALUE) C (CL_INVALID_DEVICE_TYPE) C (CL_INVALID_PLATFORM)
    C (CL_INVALID_DEVICE) C (CL_INVALID_CONTEXT) C (CL_INVALID_QUEUE_PROPERTIES)
    C (CL_INVALID_COMMAND_QUEUE) C (CL_INVALID_HOST_PTR) C (CL_INVALID_MEM_OBJECT)
    C (CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) C (CL_INVALID_IMAGE_SIZE) C (CL_INVALID_SAMPLER)
    C (CL_INVALID_BINARY) C (CL_INVALID_BUILD_OPTIONS) C (CL_INVALID_PROGRAM)
    C (CL_INVALID_PROGRAM_EXECUTABLE) C (CL_INVALID_KERNEL_NAME) C (CL_INVALID_KERNEL_DEFINITION)
    C (CL_INVALID_KERNEL) C (CL_INVALID_ARG_INDEX) C (CL_INVALID_ARG_VALUE)
    C (CL_INVALID_ARG_SIZE) C (CL_INVALID_KERNEL_ARGS) C (CL_INVALID_WORK_DIMENSION)
    C (CL_INVALID_WORK_GROUP_SIZE) C (CL_INVALID_WORK_ITEM_SIZE) C (CL_INVALID_GLOBAL_OFFSET)
    C (CL_INVALID_EVENT_WAIT_LIST) C (CL_INVALID_EVENT) C (CL_INVALID_OPERATION)
    C (CL_INVALID_GL_OBJECT) C (CL_INVALID_BUFFER_SIZE) C (CL_INVALID_MIP_LEVEL)
    C (CL_INVALID_GLOBAL_WORK_SIZE) C (CL_INVALID_PROPERTY) C (CL_INVALID_IMAGE_DESCRIPTOR)
    C (CL_INVALID_COMPILER_OPTIONS) C (CL_INVALID_LINKER_OPTIONS)
    C (CL_INVALID_DEVICE_PARTITION_COUNT)
#undef C
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "CL_UNKNOWN_ERROR";
  }
}

std::string call_error (const char *expr, cl_int status, const char *file, int line) {
  std::ostringstream s;
  s << expr << " failed: " << status_to_string (status) << " (" << status << ") at "
    << file << ":" << line;
  return s.str ();
}

static std::atomic<WarningHandler> warning_handler{nullptr};

void set_warning_handler (WarningHandler handler) { warning_handler.store (handler); }

void warn (const std::string &message) {
  if (WarningHandler h = warning_handler.load ())
    h (message.c_str ());
  else
    std::fprintf (stderr, "gpudetect: warning: %s\n", message.c_str ());
}

uint64_t next_object_id () {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add (1, std::memory_order_relaxed);
}

uint64_t fnv1a (const void *data, size_t len, uint64_t h) {
  const unsigned char *p = static_cast<const unsigned char *> (data);
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

// A string query of clGetDeviceInfo or clGetPlatformInfo, without its
// terminating zero and trailing spaces.
template <typename Object, typename Param>
static std::string info_string (cl_int (*query) (Object, Param, size_t, void *, size_t *), Object o, Param what) {
  size_t n = 0;
  if (query (o, what, 0, nullptr, &n) != CL_SUCCESS || n == 0)
    return {};
  std::string s (n, '\0');
  query (o, what, n, &s[0], nullptr);
  while (!s.empty () && (s.back () == '\0' || s.back () == ' '))
    s.pop_back ();
  return s;
}
static std::string device_string (cl_device_id d, cl_device_info what) { return info_string (clGetDeviceInfo, d, what); }
static std::string platform_string (cl_platform_id p, cl_platform_info what) {
  return info_string (clGetPlatformInfo, p, what);
}

std::string DeviceInfo::describe () const {
  std::ostringstream s;
  s << platform_name << ": " << name << " (" << device_version << ", driver " << driver_version
    << ", " << compute_units << " CUs" << (fp64 ? ", fp64" : "") << ")";
  return s.str ();
}

std::vector<DeviceInfo> list_devices () {
  // One enumeration at a time in the process: PoCL 3.1 sets up its devices on
  // the first clGetDeviceIDs, and a call from another thread meanwhile finds
  // no device (CL_DEVICE_NOT_FOUND; docs/reliability.md, ThreadSanitizer run).
  static std::mutex enumerating;
  std::lock_guard<std::mutex> g (enumerating);
  std::vector<DeviceInfo> out;
  cl_uint np = 0;
  if (clGetPlatformIDs (0, nullptr, &np) != CL_SUCCESS || np == 0)
    return out;
  std::vector<cl_platform_id> plats (np);
  clGetPlatformIDs (np, plats.data (), nullptr);
  for (cl_platform_id p : plats) {
    cl_uint nd = 0;
    if (clGetDeviceIDs (p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0)
      continue;
    std::vector<cl_device_id> devs (nd);
    clGetDeviceIDs (p, CL_DEVICE_TYPE_ALL, nd, devs.data (), nullptr);
    for (cl_device_id d : devs) {
      DeviceInfo i;
      i.platform = p;
      i.id = d;
      i.name = device_string (d, CL_DEVICE_NAME);
      i.vendor = device_string (d, CL_DEVICE_VENDOR);
      i.driver_version = device_string (d, CL_DRIVER_VERSION);
      i.device_version = device_string (d, CL_DEVICE_VERSION);
      i.platform_name = platform_string (p, CL_PLATFORM_NAME);
      clGetDeviceInfo (d, CL_DEVICE_TYPE, sizeof i.type, &i.type, nullptr);
      clGetDeviceInfo (d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof i.compute_units, &i.compute_units, nullptr);
      clGetDeviceInfo (d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof i.max_work_group, &i.max_work_group, nullptr);
      clGetDeviceInfo (d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof i.local_mem, &i.local_mem, nullptr);
      clGetDeviceInfo (d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof i.global_mem, &i.global_mem, nullptr);
      clGetDeviceInfo (d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof i.max_alloc, &i.max_alloc, nullptr);
      cl_device_fp_config fp = 0;
      clGetDeviceInfo (d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, nullptr);
      i.fp64 = fp != 0 || device_string (d, CL_DEVICE_EXTENSIONS).find ("cl_khr_fp64") != std::string::npos;
      cl_bool avail = CL_FALSE;
      clGetDeviceInfo (d, CL_DEVICE_AVAILABLE, sizeof avail, &avail, nullptr);
      if (avail)
        out.push_back (std::move (i));
    }
  }
  return out;
}

static std::string lower (std::string s) {
  std::transform (s.begin (), s.end (), s.begin (), [] (unsigned char c) { return std::tolower (c); });
  return s;
}

Error choose_device (const std::string &selector, DeviceInfo *out) {
  std::vector<DeviceInfo> devs = list_devices ();
  if (devs.empty ())
    return {"no OpenCL device found (is an OpenCL driver such as pocl-opencl-icd installed?)"};
  if (selector.empty () || selector == "auto") {
    for (const DeviceInfo &d : devs)
      if (d.type & CL_DEVICE_TYPE_GPU) {
        *out = d;
        return {};
      }
    *out = devs[0];
    return {};
  }
  bool numeric = std::all_of (selector.begin (), selector.end (), [] (char c) { return c >= '0' && c <= '9'; });
  if (numeric) {
    size_t idx = std::strtoul (selector.c_str (), nullptr, 10);
    if (idx >= devs.size ())
      return {"OpenCL device index " + selector + " out of range (" + std::to_string (devs.size ()) +
              " devices)"};
    *out = devs[idx];
    return {};
  }
  std::string want = lower (selector);
  for (const DeviceInfo &d : devs)
    if (lower (d.platform_name + ": " + d.name).find (want) != std::string::npos) {
      *out = d;
      return {};
    }
  std::string all;
  for (const DeviceInfo &d : devs)
    all += (all.empty () ? "" : "; ") + d.platform_name + ": " + d.name;
  return {"no OpenCL device matches '" + selector + "' (available: " + all + ")"};
}

Error open_device (const std::string &selector, bool profiling, Device *out) {
  if (Error e = choose_device (selector, &out->info))
    return e;
  cl_int st = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties) out->info.platform, 0};
  out->context.reset (clCreateContext (props, 1, &out->info.id, nullptr, nullptr, &st));
  GPUDETECT_CL_TRY (st);
  out->queue.reset (
      clCreateCommandQueue (out->context.get (), out->info.id, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &st));
  GPUDETECT_CL_TRY (st);
  out->programs = std::make_shared<ProgramCache> ();
  out->queues = std::make_shared<QueuePool> ();
  return {};
}

Error attach_device (const Device &shared, bool profiling, Device *out) {
  if (!shared.context)
    return {"no OpenCL context to share"};
  GPUDETECT_CL_TRY (clRetainContext (shared.context.get ()));
  out->info = shared.info;
  out->context.reset (shared.context.get ());
  out->programs = shared.programs;
  out->queues = shared.queues;
  cl_int st = CL_SUCCESS;
  out->queue.reset (
      clCreateCommandQueue (out->context.get (), out->info.id, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &st));
  GPUDETECT_CL_TRY (st);
  return {};
}

Error HostAllocator::create (const Device &dev, std::shared_ptr<HostAllocator> *out) {
  std::shared_ptr<HostAllocator> a (new HostAllocator ());
  cl_int st = CL_SUCCESS;
  a->queue_ = clCreateCommandQueue (dev.context.get (), dev.info.id, 0, &st);
  GPUDETECT_CL_TRY (st);
  GPUDETECT_CL_TRY (clRetainContext (dev.context.get ()));
  a->context_ = dev.context.get ();
  *out = std::move (a);
  return {};
}

HostAllocator::~HostAllocator () {
  if (queue_) {
    clFinish (queue_);
    clReleaseCommandQueue (queue_);
  }
  if (context_)
    clReleaseContext (context_);
}

Error HostAllocator::alloc (size_t size, std::unique_ptr<HostBlock> *out) {
  std::unique_ptr<HostBlock> b (new HostBlock ());
  cl_int st = CL_SUCCESS;
  b->mem_ = clCreateBuffer (context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, std::max<size_t> (size, 1), nullptr,
                            &st);
  GPUDETECT_CL_TRY (st);
  b->ptr_ = clEnqueueMapBuffer (queue_, b->mem_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, std::max<size_t> (size, 1), 0,
                                nullptr, nullptr, &st);
  GPUDETECT_CL_TRY (st);
  b->size_ = size;
  b->owner_ = shared_from_this ();
  *out = std::move (b);
  return {};
}

HostBlock::~HostBlock () {
  if (ptr_)
    clEnqueueUnmapMemObject (owner_->queue_, mem_, ptr_, 0, nullptr, nullptr);
  if (mem_)
    clReleaseMemObject (mem_);
  if (owner_ && ptr_)
    clFlush (owner_->queue_);
}

static std::string build_log (const Device &dev, cl_program p) {
  size_t n = 0;
  clGetProgramBuildInfo (p, dev.info.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
  std::string log (n, '\0');
  if (n)
    clGetProgramBuildInfo (p, dev.info.id, CL_PROGRAM_BUILD_LOG, n, &log[0], nullptr);
  while (!log.empty () && (log.back () == '\0' || log.back () == '\n'))
    log.pop_back ();
  return log;
}

std::string limit_ptx_registers (const std::string &ptx, const std::string &limits) {
  std::string out = ptx;
  size_t pos = 0;
  while (pos < limits.size ()) {
    size_t end = limits.find (',', pos);
    if (end == std::string::npos)
      end = limits.size ();
    const std::string item = limits.substr (pos, end - pos);
    pos = end + 1;
    const size_t eq = item.find ('=');
    if (eq == std::string::npos || eq == 0)
      return {};
    const std::string name = item.substr (0, eq);
    const int regs = std::atoi (item.c_str () + eq + 1);
    if (regs < 16 || regs > 255)
      return {};
    // `.entry NAME(` ... `)` [directives] `{`: the limit goes before the body.
    const size_t entry = out.find (".entry " + name + "(");
    if (entry == std::string::npos)
      return {};
    const size_t body = out.find ('{', entry);
    if (body == std::string::npos)
      return {};
    out.insert (body, ".maxnreg " + std::to_string (regs) + "\n");
  }
  return out;
}

// A built program's binary (empty where the implementation gives none).
static std::vector<unsigned char> program_binary (cl_program p) {
  size_t size = 0;
  if (clGetProgramInfo (p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return {};
  std::vector<unsigned char> bin (size);
  unsigned char *ptr = bin.data ();
  if (clGetProgramInfo (p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS)
    return {};
  return bin;
}

// A program from a binary, built with `options`; none if either step fails
// (`*status` says why).
static Program program_from_binary (const Device &dev, const unsigned char *bin, size_t len,
                                    const std::string &options, cl_int *status = nullptr) {
  cl_int st = CL_SUCCESS, bst = CL_SUCCESS;
  Program p (clCreateProgramWithBinary (dev.context.get (), 1, &dev.info.id, &len, &bin, &bst, &st));
  if (st == CL_SUCCESS)
    st = bst;
  if (st == CL_SUCCESS)
    st = clBuildProgram (p.get (), 1, &dev.info.id, options.c_str (), nullptr, nullptr);
  if (status)
    *status = st;
  if (st != CL_SUCCESS)
    return {};
  return p;
}

// The program of `path`'s cache entry, where it holds a verified binary that
// the driver takes; what is there otherwise is removed, with a warning.
static Program program_from_cache (const Device &dev, const std::string &path, uint64_t key,
                                   const std::string &options) {
  std::vector<unsigned char> bin;
  std::string why;
  switch (read_cache_entry (path, key, &bin, &why)) {
  case CacheRead::Miss:
    return {};
  case CacheRead::Hit: {
    cl_int st = CL_SUCCESS;
    if (Program p = program_from_binary (dev, bin.data (), bin.size (), options, &st))
      return p;
    why = std::string ("the driver refused its binary (") + status_to_string (st) + ")";
    break;
  }
  case CacheRead::Bad:
    break;
  }
  std::string not_removed;
  warn ("program binary cache: " + path + ": " + why + "; " +
        (remove_cache_entry (path, &not_removed) ? "removed" : "cannot be removed (" + not_removed + ")") +
        ", building from source");
  return {};
}

// Keeps `p`'s binary as the entry of `key` in `dir`; a folder that cannot
// take it is said once per process.
static void keep_in_cache (const std::string &dir, uint64_t key, cl_program p) {
  const std::vector<unsigned char> bin = program_binary (p);
  if (bin.empty ())
    return;
  std::string why;
  if (write_cache_entry (dir, key, bin.data (), bin.size (), &why))
    return;
  static std::mutex lock;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> g (lock);
  if (warned.insert (dir).second)
    warn ("program binary cache: " + why + "; programs are built without the cache (said once per folder)");
}

namespace {
thread_local BuildReport *current_report = nullptr;
}

BuildReport::BuildReport (std::function<void (const BuildEvent &)> f) : f_ (std::move (f)), outer_ (current_report) {
  current_report = this;
}

BuildReport::~BuildReport () { current_report = outer_; }

void BuildReport::tell (const BuildEvent &e) {
  if (current_report && current_report->f_)
    current_report->f_ (e);
}

Error build_program (const Device &dev, const std::string &source, uint64_t source_hash,
                     const std::string &options, Program *out, bool *from_cache,
                     const std::string &ptx_register_limits) {
  if (from_cache)
    *from_cache = false;
  const uint64_t key = cache_key (dev.info, source_hash, options, ptx_register_limits);
  const std::string dir = cache_dir ();
  cl_int st = CL_SUCCESS;

  if (!dir.empty ())
    if (Program p = program_from_cache (dev, dir + "/" + cache_entry_name (key), key, options)) {
      *out = std::move (p);
      if (from_cache)
        *from_cache = true;
      return {};
    }

  const char *src = source.c_str ();
  size_t len = source.size ();
  Program p (clCreateProgramWithSource (dev.context.get (), 1, &src, &len, &st));
  GPUDETECT_CL_TRY (st);
  BuildEvent ev;
  ev.device = dev.info.name;
  BuildReport::tell (ev);
  const auto t0 = std::chrono::steady_clock::now ();
  // -w: no warnings, which compilers such as PoCL's print to stderr by the
  // thousand; a failed build's log still holds its errors
  st = clBuildProgram (p.get (), 1, &dev.info.id, (options + " -w").c_str (), nullptr, nullptr);
  ev.done = true;
  ev.ok = st == CL_SUCCESS;
  ev.seconds = std::chrono::duration<double> (std::chrono::steady_clock::now () - t0).count ();
  BuildReport::tell (ev);
  if (st != CL_SUCCESS)
    return {"OpenCL program build failed (" + std::string (status_to_string (st)) + ") on " + dev.info.name +
            " with options '" + options + "':\n" + build_log (dev, p.get ())};

  if (!ptx_register_limits.empty ()) {
    // Rebuild from the PTX with per-kernel register limits (NVIDIA: the
    // program's binary is PTX text, which the driver takes back as a binary).
    const std::vector<unsigned char> bin = program_binary (p.get ());
    std::string ptx (bin.begin (), bin.end ());
    while (!ptx.empty () && ptx.back () == '\0')
      ptx.pop_back ();
    const std::string limited =
        ptx.find (".entry ") != std::string::npos ? limit_ptx_registers (ptx, ptx_register_limits) : std::string ();
    if (!limited.empty ())
      if (Program q = program_from_binary (dev, reinterpret_cast<const unsigned char *> (limited.c_str ()),
                                           limited.size () + 1, options))
        p = std::move (q);
  }

  if (!dir.empty ())
    keep_in_cache (dir, key, p.get ());
  *out = std::move (p);
  return {};
}

Error create_kernel (const Program &prog, const char *name, Kernel *out) {
  cl_int st = CL_SUCCESS;
  out->reset (clCreateKernel (prog.get (), name, &st));
  if (st != CL_SUCCESS)
    return {std::string ("clCreateKernel(") + name + ") failed: " + status_to_string (st)};
  return {};
}

Error make_buffer (const Device &dev, Mem *m, size_t size, cl_mem_flags flags, const void *init) {
  cl_int st = CL_SUCCESS;
  // At least 16 bytes; CL_MEM_COPY_HOST_PTR copies the whole buffer, so a
  // shorter `init` (the tables of a pyramid of 1 to 3 levels) is copied from
  // a zero-padded block rather than read past its end.
  uint8_t padded[16] = {};
  if (init && size < sizeof (padded)) {
    std::memcpy (padded, init, size);
    init = padded;
  }
  size = std::max<size_t> (size, sizeof (padded));
  if (AllocationBudget *b = AllocationBudget::active ()) {
    if (Error e = b->charge (size))
      return e;
  } else if (dev.info.max_alloc > 0 && size > dev.info.max_alloc) {
    return {"a buffer of " + size_text (size) + " is larger than the largest " + dev.info.name + " allocates (" +
                size_text (dev.info.max_alloc) + ")",
            Error::Kind::Resource};
  }
  m->reset (clCreateBuffer (dev.context.get (), flags | (init ? CL_MEM_COPY_HOST_PTR : 0), size,
                            const_cast<void *> (init), &st));
  if (st != CL_SUCCESS)
    return {"cannot allocate " + std::to_string (size) + " bytes on " + dev.info.name + ": " + status_to_string (st)};
  return {};
}

Error make_buffers (const Device &dev, std::initializer_list<std::pair<Mem *, size_t>> buffers, cl_mem_flags flags) {
  if (AllocationBudget *b = AllocationBudget::active ()) {
    uint64_t total = 0;
    for (const auto &[m, size] : buffers)
      total += std::max<size_t> (size, 16);
    if (Error e = b->check (total))
      return e;
  }
  for (const auto &[m, size] : buffers)
    if (Error e = make_buffer (dev, m, size, flags))
      return e;
  return {};
}

} // namespace cl
} // namespace gpudetect
