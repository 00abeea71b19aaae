// The engine tests' launcher: every kernel and library launch straight onto
// one queue, counted.
#pragma once
#include "core/family.h"

#include <functional>

class QueueLauncher final : public gpudetect::Launcher {
public:
  explicit QueueLauncher (cl_command_queue q) : q_ (q) {}
  gpudetect::Error launch (cl_kernel k, size_t global, size_t local, int) override {
    GPUDETECT_CL_TRY (clEnqueueNDRangeKernel (q_, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    launches++;
    return {};
  }
  gpudetect::Error library (const std::function<gpudetect::Error (cl_command_queue)> &enqueue,
                            int n) override {
    launches += n;
    return enqueue (q_);
  }
  int launches = 0;

private:
  cl_command_queue q_;
};
