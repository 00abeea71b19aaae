#pragma once

#include "gpubasetransform.h"

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_GPU_DETECT (gst_gpu_detect_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuDetect, gst_gpu_detect, GST, GPU_DETECT, GstGpuBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (gpudetect);

G_END_DECLS
