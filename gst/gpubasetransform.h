// The one asynchronous base of the plugin's device elements (gpudetect,
// gputrack), in the manner of GstCudaBaseTransform: it holds every input
// buffer in a FIFO while the subclass's device work for it runs, and owns
// what every such element shares:
// - the frames in flight, in arrival order: submit_input_buffer hands each
//   buffer to the subclass's submit(), generate_output returns the oldest
//   once ready() (never blocking) or once max-in-flight buffers are held
//   (then complete() waits), with finish() making the output buffer;
// - drain before every serialized event (EOS, caps, segment) and on the drain
//   query; discard on flush and stop (discard() drops the device work first;
//   at stop, a subclass with retire() hands its engine and the frames still
//   in flight to a thread that waits for the device, and stops at once);
//   after a failed frame the frames behind it are discarded, not pushed;
// - QoS (the base class's own is skipped by this path): late frames are
//   reported, the subclass asks is_late() and decides what to skip;
// - the latency query: (max-in-flight - 1) frame durations added;
// - the allocation query: a pool of page-locked memory on the subclass's
//   device offered upstream (upload-pool), and how many uploaded frames
//   arrived in it (logged at stop);
// - the device GstContext ("gpudetect.cl.device", gstcldevice.h) and the
//   opening of the shared device;
// - the pad templates (the formats the engines read: GRAY8, NV12, I420 and
//   4-byte RGB) and the negotiated video info;
// - the element message with each frame's objects, as message-mode says.
// Properties: max-in-flight, upload-pool, message-mode.  A subclass chains up
// in start() (before it reads max-in-flight), stop() (first: in-flight work
// is discarded while its engine still exists) and set_caps().
#pragma once

#include "cl/cl.h"
#include "gstcldevice.h"
#include "runtime/runtime.h"

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

// One buffer held in arrival order; a subclass derives its own entry with
// what its device work returns.
struct GpuFrame {
  GstBuffer *buffer = nullptr; // our reference, kept until the device is done with its memory
  GstVideoFrame video;         // mapped while the device may still read the buffer's memory
  bool mapped = false;
  bool done = false;           // completed (its result read) or nothing in flight for it
  GpuFrame () = default;
  GpuFrame (const GpuFrame &) = delete;
  GpuFrame &operator= (const GpuFrame &) = delete;
  virtual ~GpuFrame ();
  bool map (const GstVideoInfo *info, GstMapFlags flags);
  void unmap ();
  // The buffer, ours no more (finish() returns it).
  GstBuffer *take_buffer ();
};

using GpuFrames = std::deque<std::unique_ptr<GpuFrame>>;

G_BEGIN_DECLS

#define GST_TYPE_GPU_BASE_TRANSFORM (gst_gpu_base_transform_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstGpuBaseTransform, gst_gpu_base_transform, GST, GPU_BASE_TRANSFORM, GstBaseTransform)

/**
 * GstGpuDetectMessageMode:
 * When a device element posts its element message with its objects
 * ("gpudetect", "gputrack").
 */
typedef enum {
  GST_GPU_DETECT_MESSAGE_NONE,
  GST_GPU_DETECT_MESSAGE_EVERY_FRAME,
  GST_GPU_DETECT_MESSAGE_ON_CHANGE,
  GST_GPU_DETECT_MESSAGE_ON_DETECTION,
} GstGpuDetectMessageMode;

#define GST_TYPE_GPU_DETECT_MESSAGE_MODE (gst_gpu_detect_message_mode_get_type ())
GType gst_gpu_detect_message_mode_get_type (void);

struct _GstGpuBaseTransformClass {
  GstBaseTransformClass parent_class;
  // Makes the buffer's entry (taking the buffer) and enqueues its device
  // work; GST_FLOW_ERROR with the element error posted on failure.
  GstFlowReturn (*submit) (GstGpuBaseTransform *self, GstBuffer *buf, std::unique_ptr<GpuFrame> *frame);
  // Whether the entry's device work is done (never blocks).
  gboolean (*ready) (GstGpuBaseTransform *self, GpuFrame *frame);
  // Waits for the entry's device work and reads its result; FALSE with the
  // element error posted on failure.
  gboolean (*complete) (GstGpuBaseTransform *self, GpuFrame *frame);
  // The entry's output buffer (taking frame->buffer), its metadata attached.
  GstBuffer *(*finish) (GstGpuBaseTransform *self, GpuFrame *frame);
  // Drops all device work in flight (waiting for the device to let go of the
  // frames' memory); the base then releases the entries.
  void (*discard) (GstGpuBaseTransform *self);
  // The page-locked memory to offer upstream, on the subclass's device; null
  // (with a reason in *error, or none when there is no device yet).
  std::shared_ptr<gpudetect::cl::HostAllocator> (*host_memory) (GstGpuBaseTransform *self, std::string *error);
  // Optional: hands over the engine while its device work is in flight (a
  // stop that must not wait for the device): the call returned waits until
  // the device is done with every frame, and the engine goes with the call.
  // Without it, stop() waits in discard().
  std::function<void ()> (*retire) (GstGpuBaseTransform *self);
};

G_END_DECLS

// The frames held, oldest first (streaming thread).
GpuFrames &gst_gpu_base_transform_frames (GstGpuBaseTransform *self);
// complete() for an entry not yet done (the entry then done); its memory unmapped.
// While the element stops, a complete() that fails leaves the entry in flight.
gboolean gst_gpu_base_transform_complete (GstGpuBaseTransform *self, GpuFrame *frame);
// Set from the moment the element starts to stop (PAUSED to READY) until it
// starts again: the subclass gives it to its engine, whose waits for the
// device it cuts short, so that the streaming thread lets go at once.
std::shared_ptr<gpudetect::runtime::Interrupt> gst_gpu_base_transform_interrupt (GstGpuBaseTransform *self);
// Whether the element is stopping (a failure then is no error: GST_FLOW_FLUSHING).
bool gst_gpu_base_transform_stopping (GstGpuBaseTransform *self);
// The negotiated video info; null before caps.
const GstVideoInfo *gst_gpu_base_transform_info (GstGpuBaseTransform *self);
// max-in-flight as of start().
guint gst_gpu_base_transform_max_in_flight (GstGpuBaseTransform *self);
// The element's shared device slot (gpudetect_cl_device_ensure).
GpuDetectDeviceSlot *gst_gpu_base_transform_device_slot (GstGpuBaseTransform *self);
// The shared device `selector` names (the subclass's device property), kept
// in the slot; null with the element error posted where none matches.
GpuDetectSharedDevice gst_gpu_base_transform_open_device (GstGpuBaseTransform *self, const std::string &selector);
// Reports the program builds from source of this thread while it lives (an
// engine's creation in start()): an INFO line in the subclass's `category` and a "gpudetect-build"
// element message at the start and end of each (status "building", then
// "built" or "failed"; "what": the model, "device", "seconds"), so that a
// first start, which compiles for seconds, says so (gst-launch-1.0 -m).
std::unique_ptr<gpudetect::cl::BuildReport> gst_gpu_base_transform_report_builds (GstGpuBaseTransform *self,
                                                                                 GstDebugCategory *category,
                                                                                 const std::string &what);
// Maps the entry's frame (GpuFrame::map, the negotiated info) for the device
// to read; false with the element error posted.
bool gst_gpu_base_transform_map (GstGpuBaseTransform *self, GpuFrame *frame, GstMapFlags flags);
// Completes the oldest held frames (they stay held) until has_room (), to
// free the engine's slot for a new frame; false where one failed (its
// element error posted).
bool gst_gpu_base_transform_make_room (GstGpuBaseTransform *self, const std::function<bool ()> &has_room);
// Counts a frame the device reads from the buffer's memory, and whether
// that memory is the upload pool's.
void gst_gpu_base_transform_count_upload (GstGpuBaseTransform *self, GstBuffer *buf);
// Whether the buffer is late by the last QoS event; when it is and `skip`,
// the skip is counted and reported (a QoS message).
bool gst_gpu_base_transform_is_late (GstGpuBaseTransform *self, GstBuffer *buf);
void gst_gpu_base_transform_report_skip (GstGpuBaseTransform *self, GstBuffer *buf);
// Posts the element message `name` for the buffer when message-mode asks for
// it on a frame of n objects: timestamp, stream-time, running-time, duration
// and "objects", the structures add_objects gives (taken).
void gst_gpu_base_transform_post_objects (GstGpuBaseTransform *self, const char *name, GstBuffer *buf, size_t n,
                                          const std::function<void (std::vector<GstStructure *> *)> &add_objects);
// An "object" of the element message: its box in frame pixels, label,
// label-id, confidence and id (an element's own fields go after these).
GstStructure *gst_gpu_base_transform_object_new (int x, int y, int w, int h, const char *label, int label_id,
                                                 double confidence, guint id);
// Counts a frame whose device work was submitted (the QoS message's "processed").
void gst_gpu_base_transform_count_processed (GstGpuBaseTransform *self);
