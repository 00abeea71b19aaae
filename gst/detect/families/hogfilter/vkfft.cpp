#include "vkfft.h"

#ifdef HAVE_VKFFT
#define VKFFT_BACKEND 3
#include <vkFFT.h>
#endif

#include <string>

namespace gpudetect {

#ifdef HAVE_VKFFT

struct VkfftPlan::App {
  // VkFFT keeps pointers to these for the life of the application
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  uint64_t bytes = 0;
  // VkFFT keeps the address of the buffer and reads the handle there at each
  // launch: one place per application, rewritten before each enqueue
  cl_mem buffer = nullptr;
  cl_command_queue queue = nullptr;
  VkFFTApplication app = {};
  bool live = false;
  ~App () {
    if (live)
      deleteVkFFT (&app);
  }
};

VkfftPlan::~VkfftPlan () = default;

bool VkfftPlan::available () { return true; }

size_t VkfftPlan::bytes () const { return app_ ? static_cast<size_t> (app_->bytes) : 0; }

Error VkfftPlan::create (const cl::Device &dev, int rows, int cols, int batches, Direction dir,
                             std::unique_ptr<VkfftPlan> *out) {
  if (rows < 1 || cols < 2 || cols % 2 || batches < 1)
    return {"invalid transform size " + std::to_string (rows) + "x" + std::to_string (cols) + " x " +
            std::to_string (batches)};
  std::unique_ptr<VkfftPlan> p (new VkfftPlan ());
  p->app_ = std::make_unique<App> ();
  App &a = *p->app_;
  a.device = dev.info.id;
  a.context = dev.context.get ();
  a.bytes = uint64_t (rows) * (cols + 2) * 4 * uint64_t (batches);
  VkFFTConfiguration c = {};
  c.FFTdim = 2;
  c.size[0] = static_cast<uint64_t> (cols);
  c.size[1] = static_cast<uint64_t> (rows);
  c.numberBatches = static_cast<uint64_t> (batches);
  c.performR2C = 1;
  c.device = &a.device;
  c.context = &a.context;
  c.bufferSize = &a.bytes;
  // twiddles from a table computed in double on the host rather than by
  // single-precision sin/cos on the device: the smaller error
  // (docs/benchmarks.md, the FFT's accuracy)
  c.useLUT = 1;
  if (dir == Direction::Forward)
    c.makeForwardPlanOnly = 1;
  else
    c.makeInversePlanOnly = 1;
  if (a.bytes >= (uint64_t (1) << 32))
    c.useUint64 = 1;
  const VkFFTResult r = initializeVkFFT (&a.app, c);
  if (r != VKFFT_SUCCESS)
    return {"VkFFT could not plan a " + std::to_string (rows) + "x" + std::to_string (cols) + " transform of " +
            std::to_string (batches) + " planes on this device (VkFFT error " + std::to_string (static_cast<int> (r)) +
            ")"};
  a.live = true;
  const VkFFTPlan *plan = dir == Direction::Forward ? a.app.localFFTPlan : a.app.localFFTPlan_inverse;
  int launches = 0;
  if (plan) {
    for (int i = 0; i < 2; i++)
      launches += static_cast<int> (plan->numAxisUploads[i]);
    launches += plan->multiUploadR2C ? 1 : 0;
  }
  p->rows_ = rows;
  p->cols_ = cols;
  p->batches_ = batches;
  p->dir_ = dir;
  p->launches_ = launches;
  *out = std::move (p);
  return {};
}

Error VkfftPlan::enqueue (cl_command_queue queue, cl_mem buffer) const {
  app_->queue = queue;
  app_->buffer = buffer;
  VkFFTLaunchParams lp = {};
  lp.commandQueue = &app_->queue;
  lp.buffer = &app_->buffer;
  const VkFFTResult r = VkFFTAppend (&app_->app, dir_ == Direction::Forward ? -1 : 1, &lp);
  if (r != VKFFT_SUCCESS)
    return {"VkFFT could not enqueue a transform (VkFFT error " + std::to_string (static_cast<int> (r)) + ")"};
  return {};
}

#else // !HAVE_VKFFT

struct VkfftPlan::App {};

VkfftPlan::~VkfftPlan () = default;

bool VkfftPlan::available () { return false; }

size_t VkfftPlan::bytes () const { return 0; }

Error VkfftPlan::create (const cl::Device &, int, int, int, Direction, std::unique_ptr<VkfftPlan> *) {
  return {"this build of gpudetect has no FFT evaluation (VkFFT's vkFFT.h was not found when it was configured)"};
}

Error VkfftPlan::enqueue (cl_command_queue, cl_mem) const { return {"no VkFFT in this build"}; }

#endif

} // namespace gpudetect
