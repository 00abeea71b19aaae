// One OpenCL device (context) shared by the plugin's elements through a
// GstContext of type "gpudetect.cl.device", as GL and CUDA elements share
// theirs: an element that needs a device asks its peers (context query),
// then the application and its bins (need-context message); the first one
// to open a device announces it (have-context message) and answers its
// peers' queries.  An element that finds no context that way takes the one
// another element of the process opened on the same device, if any still
// holds it: separate pipelines of one application (one per camera) share
// the device's context and its programs too.  Each engine makes its own queue on the shared context, so
// buffers, programs and page-locked memory can pass between them
// (docs/ARCHITECTURE.md).  The context's structure holds "device" (the
// GstGpuDetectClDevice boxed type) and "name" (the device, in words).
#pragma once

#include "cl/cl.h"

#include <gst/gst.h>

#include <memory>
#include <mutex>
#include <string>

#define GPUDETECT_CL_CONTEXT_TYPE "gpudetect.cl.device"

using GpuDetectSharedDevice = std::shared_ptr<gpudetect::cl::Device>;

GType gst_gpu_detect_cl_device_get_type (void);

// A new persistent context carrying `device`.
GstContext *gpudetect_cl_context_new (const GpuDetectSharedDevice &device);
// The device a context carries; null for another type or none.
GpuDetectSharedDevice gpudetect_cl_context_get_device (GstContext *context);

// An element's shared device and the lock that guards it (set_context may
// come from any thread).
struct GpuDetectDeviceSlot {
  std::mutex lock;
  GpuDetectSharedDevice device;
  // From GstElement::set_context: keeps a context of our type.
  void set_context (GstContext *context);
  GpuDetectSharedDevice get ();
};

// The device for `selector` (as the device property: "auto", an index, a
// name substring): the one in `slot` where it is that device, else one a peer
// or the application gives, else the process's own on that device (opened by
// the first element that needed it), announced with a have-context message.  False with `*error` when no device matches.
bool gpudetect_cl_device_ensure (GstElement *element, const std::string &selector, GpuDetectDeviceSlot *slot,
                                 GpuDetectSharedDevice *out, std::string *error);

// Answers a context query of our type with the slot's device; false when the
// query is another's or there is no device yet.
bool gpudetect_cl_device_handle_query (GstElement *element, GstQuery *query, GpuDetectDeviceSlot *slot);
