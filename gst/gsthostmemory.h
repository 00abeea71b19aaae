// Page-locked frame memory for upstream elements: a GstAllocator over the
// detection engine's host blocks (cl::HostBlock) and a video buffer pool
// using it, which gpudetect offers in its ALLOCATION answer.  A decoder that
// takes the pool writes its frames straight into memory the OpenCL device
// reads at full transfer speed: the upload needs no copy on the host.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>

namespace gpudetect::cl {
class HostAllocator;
}

G_BEGIN_DECLS

#define GST_GPU_DETECT_HOST_MEMORY_TYPE "GpuDetectHostMemory"

#define GST_TYPE_GPU_DETECT_HOST_ALLOCATOR (gst_gpu_detect_host_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuDetectHostAllocator, gst_gpu_detect_host_allocator, GST, GPU_DETECT_HOST_ALLOCATOR,
                      GstAllocator)

G_END_DECLS

// A new allocator (full reference) drawing blocks from `blocks`.
GstAllocator *gst_gpu_detect_host_allocator_new (std::shared_ptr<gpudetect::cl::HostAllocator> blocks);

// True when `mem` came from a GstGpuDetectHostAllocator.
bool gst_is_gpu_detect_host_memory (GstMemory *mem);

// A video buffer pool (full reference) for `caps` whose memory comes from
// `allocator`, with GstVideoMeta enabled; nullptr when `caps` are not video.
GstBufferPool *gst_gpu_detect_host_pool_new (GstAllocator *allocator, GstCaps *caps, guint *size);
// Answers an ALLOCATION query with a pool of `allocator` for `caps` (the
// element's logs name `element`), holding `min_buffers`, the allocator first
// among the query's allocators (upstream configures the pool with the
// first), and GstVideoMeta; nothing when `caps` are not video.
void gst_gpu_detect_host_pool_offer (GstObject *element, GstAllocator *allocator, GstQuery *query, GstCaps *caps,
                                     guint min_buffers);
