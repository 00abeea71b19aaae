// gpudetect-fft-sizes: how long VkFFT's batched real-to-complex transform (the
// FFT path's forward transform, fftconv.h) takes on a device, per plane, for
// each patchwork size asked for; and whether the patchwork planner may pick
// that size (patchwork_friendly).  Each size: --batches planes (31: one
// patchwork of FHOG features) transformed --frames times after --warmup,
// medians of the device time between a marker before and one after the
// transform (OpenCL profiling events; VkFFT's own launches carry none) and
// of the host's time from enqueue to clFinish.
//
//   gpudetect-fft-sizes [--device SEL] [--frames 100] [--warmup 10] [--batches 31] ROWSxCOLS...
#include "families/hogfilter/patchwork.h"
#include "families/hogfilter/vkfft.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace gpudetect;

namespace {

double median (std::vector<double> v) {
  if (v.empty ())
    return 0;
  std::sort (v.begin (), v.end ());
  return v[v.size () / 2];
}

} // namespace

int main (int argc, char **argv) {
  std::string device;
  int frames = 100, warmup = 10, batches = 31;
  std::vector<std::pair<int, int>> sizes;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto next = [&] () -> std::string {
      if (i + 1 >= argc) {
        std::fprintf (stderr, "%s needs a value\n", a.c_str ());
        std::exit (2);
      }
      return argv[++i];
    };
    int r = 0, c = 0;
    if (a == "--device")
      device = next ();
    else if (a == "--frames")
      frames = std::max (1, std::atoi (next ().c_str ()));
    else if (a == "--warmup")
      warmup = std::max (0, std::atoi (next ().c_str ()));
    else if (a == "--batches")
      batches = std::max (1, std::atoi (next ().c_str ()));
    else if (std::sscanf (a.c_str (), "%dx%d", &r, &c) == 2 && r > 0 && c > 1 && c % 2 == 0)
      sizes.push_back ({r, c});
    else {
      std::fprintf (stderr,
                    "usage: %s [--device SEL] [--frames N] [--warmup N] [--batches N] ROWSxCOLS... (COLS even)\n",
                    argv[0]);
      return 2;
    }
  }
  if (sizes.empty ()) {
    std::fprintf (stderr, "no sizes given\n");
    return 2;
  }
  if (!VkfftPlan::available ()) {
    std::fprintf (stderr, "this build has no VkFFT\n");
    return 1;
  }
  cl::Device dev;
  if (Error e = cl::open_device (device, true, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }
  std::printf ("device: %s\n", dev.info.describe ().c_str ());
  std::printf ("%d planes a transform, medians of %d after %d\n\n", batches, frames, warmup);
  std::printf ("%-10s %8s %9s %12s %12s %12s\n", "size", "area", "friendly", "device_ms", "per_plane_us", "host_ms");
  const cl_command_queue q = dev.queue.get ();
  for (const auto &[rows, cols] : sizes) {
    std::unique_ptr<VkfftPlan> plan;
    if (Error e = VkfftPlan::create (dev, rows, cols, batches, VkfftPlan::Direction::Forward, &plan)) {
      std::printf ("%dx%d: %s\n", rows, cols, e.message.c_str ());
      continue;
    }
    std::vector<float> host (plan->bytes () / sizeof (float));
    for (size_t k = 0; k < host.size (); k++)
      host[k] = static_cast<float> ((k * 2654435761u) % 1000) / 1000.0f;
    cl::Mem buf;
    if (Error e = cl::make_buffer (dev, &buf, plan->bytes (), CL_MEM_READ_WRITE, host.data ())) {
      std::printf ("%dx%d: %s\n", rows, cols, e.message.c_str ());
      continue;
    }
    std::vector<double> device_ms, host_ms;
    bool failed = false;
    for (int k = 0; k < warmup + frames && !failed; k++) {
      cl_event before = nullptr, after = nullptr;
      const auto t0 = std::chrono::steady_clock::now ();
      failed = clEnqueueMarkerWithWaitList (q, 0, nullptr, &before) != CL_SUCCESS;
      if (Error e = plan->enqueue (q, buf.get ())) {
        std::printf ("%dx%d: %s\n", rows, cols, e.message.c_str ());
        failed = true;
      }
      failed = failed || clEnqueueMarkerWithWaitList (q, 0, nullptr, &after) != CL_SUCCESS;
      failed = failed || clFinish (q) != CL_SUCCESS;
      const auto t1 = std::chrono::steady_clock::now ();
      cl_ulong a = 0, b = 0;
      if (!failed && k >= warmup) {
        host_ms.push_back (std::chrono::duration<double, std::milli> (t1 - t0).count ());
        if (clGetEventProfilingInfo (before, CL_PROFILING_COMMAND_END, sizeof a, &a, nullptr) == CL_SUCCESS &&
            clGetEventProfilingInfo (after, CL_PROFILING_COMMAND_END, sizeof b, &b, nullptr) == CL_SUCCESS && b > a)
          device_ms.push_back ((b - a) * 1e-6);
      }
      if (before)
        clReleaseEvent (before);
      if (after)
        clReleaseEvent (after);
    }
    if (failed)
      continue;
    const double d = median (device_ms);
    char size[32];
    std::snprintf (size, sizeof size, "%dx%d", rows, cols);
    std::printf ("%-10s %8d %9s %12.3f %12.2f %12.3f\n", size, rows * cols,
                 patchwork_friendly (rows) && patchwork_friendly (cols) ? "yes" : "no", d, 1000 * d / batches,
                 median (host_ms));
  }
  std::printf ("\ndevice_ms: between markers before and after the transform (0: the device gave no marker times); "
               "host_ms: enqueue to clFinish\n");
  return 0;
}
