// Batched two-dimensional real transforms on an OpenCL device through VkFFT
// (its OpenCL backend, Debian's libvkfft-dev): the one file that includes
// vkFFT.h (1.6 MB of header), so that the rest of the engine builds without
// it.  Where the engine was built without VkFFT, plans fail with a message
// saying so.
//
// A plan transforms `batches` planes of rows x cols real values in place,
// each plane rows x (cols + 2) floats: forward, the cols / 2 + 1 complex
// values of each row of its spectrum; inverse, back to real values scaled by
// rows x cols (VkFFT's inverse is not normalised).  VkFFT generates and
// compiles its kernels when the plan is made, never when it runs.
#pragma once

#include "cl/cl.h"

#include <memory>

namespace gpudetect {

class VkfftPlan {
public:
  enum class Direction { Forward, Inverse };
  ~VkfftPlan ();
  VkfftPlan (const VkfftPlan &) = delete;
  VkfftPlan &operator= (const VkfftPlan &) = delete;

  // Whether the engine was built with VkFFT.
  static bool available ();
  static Error create (const cl::Device &dev, int rows, int cols, int batches, Direction dir,
                           std::unique_ptr<VkfftPlan> *out);
  // Enqueues the transform of `buffer` (at least bytes () long) on `queue`
  // (no event: on an in-order queue it runs after the commands before it).
  Error enqueue (cl_command_queue queue, cl_mem buffer) const;

  int rows () const { return rows_; }
  int cols () const { return cols_; }
  int batches () const { return batches_; }
  Direction direction () const { return dir_; }
  size_t bytes () const;
  // The kernels one enqueue () launches.
  int launches () const { return launches_; }

private:
  VkfftPlan () = default;
  struct App;
  std::unique_ptr<App> app_;
  int rows_ = 0, cols_ = 0, batches_ = 0, launches_ = 0;
  Direction dir_ = Direction::Forward;
};

} // namespace gpudetect
