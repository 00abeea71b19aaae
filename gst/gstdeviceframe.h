// A frame gpudetect uploaded, travelling with its buffer to gputrack so that
// the frame is uploaded once when both run on one OpenCL context
// (docs/tracking.md, "One upload for both elements").
//
// - GstGpuDetectFrameMeta: attached by gpudetect to the buffers it uploads,
//   holding the engine's DeviceFrame (the device buffer, its layout and the
//   upload's event).  Tagged video, size, orientation and colorspace, so that
//   elements that change the pixels (videoconvert, videoscale, videoflip)
//   drop it; copied along with buffer copies otherwise.
// - The "gpudetect-device-frame" custom query: gpudetect asks downstream,
//   once per caps, whether an element will read its frames from the device
//   ("context": the cl_context, as a pointer); gputrack answers "colour" TRUE
//   when it searches on that context.  Only then does gpudetect attach the
//   meta, and upload the chroma of NV12 and I420 frames beside the luma it
//   reads itself.
#pragma once

#include "core/frame.h"

#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>

GType gst_gpu_detect_frame_meta_api_get_type (void);
#define GST_GPU_DETECT_FRAME_META_API_TYPE (gst_gpu_detect_frame_meta_api_get_type ())

struct GstGpuDetectFrameMeta {
  GstMeta meta;
  std::shared_ptr<const gpudetect::DeviceFrame> *frame;
};

// Attaches `frame` to `buffer` (writable).
GstGpuDetectFrameMeta *gst_buffer_add_gpu_detect_frame_meta (GstBuffer *buffer,
                                                             std::shared_ptr<const gpudetect::DeviceFrame> frame);
// The frame a buffer carries, where it lies on `context`; null otherwise.
std::shared_ptr<const gpudetect::DeviceFrame> gst_buffer_get_gpu_detect_frame (GstBuffer *buffer, cl_context context);

// Whether a frame gpudetect uploaded is this buffer's frame as the caps
// describe it (an element between that changed the pixels drops the meta;
// this also catches one that kept it).
bool gpudetect_device_frame_matches (const gpudetect::DeviceFrame &d, const GstVideoInfo *info);

#define GPUDETECT_FRAME_QUERY "gpudetect-device-frame"

// A new query for the elements downstream of an engine on `context`.
GstQuery *gpudetect_frame_query_new (cl_context context);
// The context a query of ours asks about (null for another query).
cl_context gpudetect_frame_query_context (GstQuery *query);
// Answers the query: frames are read from the device, in colour.
void gpudetect_frame_query_answer (GstQuery *query);
// Whether an element answered the query.
bool gpudetect_frame_query_answered (GstQuery *query);
