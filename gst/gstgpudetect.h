#pragma once

#include "gpubasetransform.h"

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_GPU_DETECT (gst_gpu_detect_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuDetect, gst_gpu_detect, GST, GPU_DETECT, GstGpuBaseTransform)

/**
 * GstGpuDetectMessageMode:
 * When the element posts its "gpudetect" element message.
 */
typedef enum {
  GST_GPU_DETECT_MESSAGE_NONE,
  GST_GPU_DETECT_MESSAGE_EVERY_FRAME,
  GST_GPU_DETECT_MESSAGE_ON_CHANGE,
  GST_GPU_DETECT_MESSAGE_ON_DETECTION,
} GstGpuDetectMessageMode;

#define GST_TYPE_GPU_DETECT_MESSAGE_MODE (gst_gpu_detect_message_mode_get_type ())
GType gst_gpu_detect_message_mode_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (gpudetect);

G_END_DECLS
