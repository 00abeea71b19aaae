#pragma once

#include "gpubasetransform.h"

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_GPU_TRACK (gst_gpu_track_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuTrack, gst_gpu_track, GST, GPU_TRACK, GstGpuBaseTransform)

/**
 * GstGpuTrackType:
 * @GST_GPU_TRACK_SHORT_TERM: detections associated with tracks, boxes moved
 *   by template search on every frame (also those without detections)
 * @GST_GPU_TRACK_ZERO_TERM: detections associated with tracks by IoU only;
 *   frames without detections pass through untouched (no OpenCL device used)
 */
typedef enum {
  GST_GPU_TRACK_SHORT_TERM,
  GST_GPU_TRACK_ZERO_TERM,
} GstGpuTrackType;

#define GST_TYPE_GPU_TRACK_TYPE (gst_gpu_track_type_get_type ())
GType gst_gpu_track_type_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (gputrack);

G_END_DECLS
