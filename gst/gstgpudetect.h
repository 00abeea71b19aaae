#pragma once

#include "gpubasetransform.h"

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstGpuDetectInferenceRegion:
 * @GST_GPU_DETECT_INFERENCE_REGION_FULL_FRAME: the frame (or the roi-* rectangle)
 * @GST_GPU_DETECT_INFERENCE_REGION_ROI_LIST: inside the objects upstream elements found
 *
 * Where gpudetect searches (DL Streamer's inference-region).
 */
typedef enum {
  GST_GPU_DETECT_INFERENCE_REGION_FULL_FRAME,
  GST_GPU_DETECT_INFERENCE_REGION_ROI_LIST,
} GstGpuDetectInferenceRegion;

GType gst_gpu_detect_inference_region_get_type (void);
#define GST_TYPE_GPU_DETECT_INFERENCE_REGION (gst_gpu_detect_inference_region_get_type ())

#define GST_TYPE_GPU_DETECT (gst_gpu_detect_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuDetect, gst_gpu_detect, GST, GPU_DETECT, GstGpuBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (gpudetect);

G_END_DECLS
