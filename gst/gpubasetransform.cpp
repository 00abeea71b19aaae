#include "config.h"

#include "gpubasetransform.h"

#include "gpudetect-elements.h"
#include "gsthostmemory.h"
#include "properties.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

GST_DEBUG_CATEGORY_STATIC (gst_gpu_base_transform_debug);
#define GST_CAT_DEFAULT gst_gpu_base_transform_debug

#define DEFAULT_MAX_IN_FLIGHT 2
#define DEFAULT_UPLOAD_POOL TRUE
#define DEFAULT_MESSAGE_MODE GST_GPU_DETECT_MESSAGE_NONE

// The formats the engines read (the subclasses' pads).
#define VIDEO_CAPS GST_VIDEO_CAPS_MAKE ("{ GRAY8, NV12, I420, RGBA, BGRA, RGBx, BGRx }")

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (VIDEO_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (VIDEO_CAPS));

GpuFrame::~GpuFrame ()
{
  unmap ();
  gst_clear_buffer (&buffer);
}

bool GpuFrame::map (const GstVideoInfo *info, GstMapFlags flags)
{
  mapped = gst_video_frame_map (&video, info, buffer, flags);
  return mapped;
}

void GpuFrame::unmap ()
{
  if (mapped)
    gst_video_frame_unmap (&video);
  mapped = false;
}

GstBuffer *GpuFrame::take_buffer ()
{
  GstBuffer *b = buffer;
  buffer = nullptr;
  return b;
}

namespace {
// The engines that stopped with frames in flight and finish them on a thread
// of their own (stop()).  A process that exits right after a stop waits a
// little for them, so that no such thread still calls into the OpenCL driver
// while the driver's own exit handlers tear it down.
struct Retiring {
  std::mutex lock;
  std::condition_variable done;
  unsigned count = 0;

  static Retiring &get ()
  {
    static Retiring *r = new Retiring; // never destroyed: threads may outlive static destructors
    return *r;
  }
  void begin ()
  {
    static std::once_flag once;
    // registered after the driver's handlers (the device is open), so it runs before them
    std::call_once (once, [] () { std::atexit ([] () { get ().wait_at_exit (); }); });
    std::lock_guard<std::mutex> g (lock);
    count++;
  }
  void end ()
  {
    std::lock_guard<std::mutex> g (lock);
    count--;
    done.notify_all ();
  }
  void wait_at_exit ()
  {
    std::unique_lock<std::mutex> g (lock);
    if (!done.wait_for (g, std::chrono::seconds (10), [this] () { return count == 0; }))
      g_printerr ("gpudetect: exiting while %u engines still finish frames on the device\n", count);
  }
};

struct Settings {
  guint max_in_flight = DEFAULT_MAX_IN_FLIGHT;
  bool upload_pool = DEFAULT_UPLOAD_POOL;
  GstGpuDetectMessageMode message_mode = DEFAULT_MESSAGE_MODE;
};

struct Base {
  GpuDetectSettings<Settings> settings;
  GpuDetectDeviceSlot device;

  // streaming thread
  guint running_max_in_flight = DEFAULT_MAX_IN_FLIGHT; // as of start()
  GstVideoInfo info;
  bool have_info = false;
  GpuFrames frames;
  GstAllocator *host_allocator = nullptr; // page-locked memory offered upstream
  guint64 uploads = 0, host_uploads = 0;  // frames the device read from buffers, from the upload pool's
  size_t last_count = G_MAXSIZE;          // objects of the last frame a message was considered for

  // the caps' frame duration (NONE: no caps or no frame rate), read by the
  // latency query from any thread
  std::atomic<GstClockTime> frame_duration{GST_CLOCK_TIME_NONE};

  // set while stopping (any thread)
  std::shared_ptr<gpudetect::runtime::Interrupt> interrupt = std::make_shared<gpudetect::runtime::Interrupt> ();

  // QoS
  std::mutex qos_lock;
  GstClockTime earliest_time = GST_CLOCK_TIME_NONE;
  guint64 processed = 0, skipped = 0;
};
} // namespace

struct GstGpuBaseTransformPrivate {
  Base *base;
};

GType gst_gpu_detect_message_mode_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
      {GST_GPU_DETECT_MESSAGE_NONE, "Post no messages", "none"},
      {GST_GPU_DETECT_MESSAGE_EVERY_FRAME, "Post a message for every frame the element processed", "every-frame"},
      {GST_GPU_DETECT_MESSAGE_ON_CHANGE, "Post when the number of objects changes", "on-change"},
      {GST_GPU_DETECT_MESSAGE_ON_DETECTION, "Post for frames with at least one object", "on-detection"},
      {0, nullptr, nullptr},
  };
  return gpudetect_enum_register (&type, "GstGpuDetectMessageMode", values);
}

#define gst_gpu_base_transform_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstGpuBaseTransform, gst_gpu_base_transform, GST_TYPE_BASE_TRANSFORM);

static Base *base_of (GstGpuBaseTransform *self)
{
  return static_cast<GstGpuBaseTransformPrivate *> (gst_gpu_base_transform_get_instance_private (self))->base;
}

static GpuDetectSettings<Settings> &settings_of (GObject *object)
{
  return base_of (GST_GPU_BASE_TRANSFORM (object))->settings;
}

#define CLASS(self) GST_GPU_BASE_TRANSFORM_GET_CLASS (self)

GpuFrames &gst_gpu_base_transform_frames (GstGpuBaseTransform *self) { return base_of (self)->frames; }

const GstVideoInfo *gst_gpu_base_transform_info (GstGpuBaseTransform *self)
{
  Base *b = base_of (self);
  return b->have_info ? &b->info : nullptr;
}

guint gst_gpu_base_transform_max_in_flight (GstGpuBaseTransform *self) { return base_of (self)->running_max_in_flight; }

GpuDetectDeviceSlot *gst_gpu_base_transform_device_slot (GstGpuBaseTransform *self) { return &base_of (self)->device; }

std::shared_ptr<gpudetect::runtime::Interrupt> gst_gpu_base_transform_interrupt (GstGpuBaseTransform *self)
{
  return base_of (self)->interrupt;
}

bool gst_gpu_base_transform_stopping (GstGpuBaseTransform *self) { return base_of (self)->interrupt->is_set (); }

gboolean gst_gpu_base_transform_complete (GstGpuBaseTransform *self, GpuFrame *frame)
{
  if (frame->done)
    return TRUE;
  const gboolean ok = CLASS (self)->complete (self, frame);
  if (!ok && gst_gpu_base_transform_stopping (self))
    return FALSE; // cut short: still in flight, stop() deals with it
  frame->done = true;
  frame->unmap (); // the device is done with the frame's memory
  return ok;
}

bool gst_gpu_base_transform_is_late (GstGpuBaseTransform *self, GstBuffer *buf)
{
  Base *b = base_of (self);
  if (!gst_base_transform_is_qos_enabled (GST_BASE_TRANSFORM (self)))
    return false;
  const GstClockTime ts = GST_BUFFER_PTS (buf);
  if (!GST_CLOCK_TIME_IS_VALID (ts))
    return false;
  const GstClockTime rt = gst_segment_to_running_time (&GST_BASE_TRANSFORM (self)->segment, GST_FORMAT_TIME, ts);
  std::lock_guard<std::mutex> g (b->qos_lock);
  return GST_CLOCK_TIME_IS_VALID (b->earliest_time) && GST_CLOCK_TIME_IS_VALID (rt) && rt < b->earliest_time;
}

void gst_gpu_base_transform_report_skip (GstGpuBaseTransform *self, GstBuffer *buf)
{
  Base *b = base_of (self);
  b->skipped++;
  const GstClockTime ts = GST_BUFFER_PTS (buf);
  GstSegment *seg = &GST_BASE_TRANSFORM (self)->segment;
  GstMessage *m = gst_message_new_qos (GST_OBJECT (self), FALSE, gst_segment_to_running_time (seg, GST_FORMAT_TIME, ts),
                                       gst_segment_to_stream_time (seg, GST_FORMAT_TIME, ts), ts,
                                       GST_BUFFER_DURATION (buf));
  gst_message_set_qos_stats (m, GST_FORMAT_BUFFERS, b->processed, b->skipped);
  gst_element_post_message (GST_ELEMENT (self), m);
}

std::unique_ptr<gpudetect::cl::BuildReport> gst_gpu_base_transform_report_builds (GstGpuBaseTransform *self,
                                                                                 GstDebugCategory *category,
                                                                                 const std::string &what)
{
  return std::make_unique<gpudetect::cl::BuildReport> ([self, category, what] (const gpudetect::cl::BuildEvent &e) {
    if (!e.done)
      GST_CAT_INFO_OBJECT (category, self, "building the OpenCL kernels for %s on %s (once: later starts read them from the "
                       "kernel cache)", what.c_str (), e.device.c_str ());
    else
      GST_CAT_INFO_OBJECT (category, self, "kernels for %s %s in %.1f s", what.c_str (), e.ok ? "built" : "failed to build",
                       e.seconds);
    GstStructure *st = gst_structure_new ("gpudetect-build", "status", G_TYPE_STRING,
                                          !e.done ? "building" : e.ok ? "built" : "failed", "what", G_TYPE_STRING,
                                          what.c_str (), "device", G_TYPE_STRING, e.device.c_str (), nullptr);
    if (e.done)
      gst_structure_set (st, "seconds", G_TYPE_DOUBLE, e.seconds, nullptr);
    gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), st));
  });
}

GpuDetectSharedDevice gst_gpu_base_transform_open_device (GstGpuBaseTransform *self, const std::string &selector)
{
  GpuDetectSharedDevice device;
  std::string err;
  if (!gpudetect_cl_device_ensure (GST_ELEMENT (self), selector, &base_of (self)->device, &device, &err)) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE, (_("No usable OpenCL device found.")), ("%s", err.c_str ()));
    return nullptr;
  }
  return device;
}

bool gst_gpu_base_transform_map (GstGpuBaseTransform *self, GpuFrame *frame, GstMapFlags flags)
{
  if (frame->map (gst_gpu_base_transform_info (self), flags))
    return true;
  GST_ELEMENT_ERROR (self, STREAM, FAILED, (_("Could not read the video frame.")), ("map failed"));
  return false;
}

bool gst_gpu_base_transform_make_room (GstGpuBaseTransform *self, const std::function<bool ()> &has_room)
{
  for (std::unique_ptr<GpuFrame> &f : base_of (self)->frames) {
    if (has_room ())
      break;
    if (!gst_gpu_base_transform_complete (self, f.get ()))
      return false;
  }
  return true;
}

void gst_gpu_base_transform_count_upload (GstGpuBaseTransform *self, GstBuffer *buf)
{
  Base *b = base_of (self);
  b->uploads++;
  if (gst_is_gpu_detect_host_memory (gst_buffer_peek_memory (buf, 0)))
    b->host_uploads++;
}

GstStructure *gst_gpu_base_transform_object_new (int x, int y, int w, int h, const char *label, int label_id,
                                                 double confidence, guint id)
{
  return gst_structure_new ("object", "x", G_TYPE_UINT, static_cast<guint> (x), "y", G_TYPE_UINT,
                            static_cast<guint> (y), "width", G_TYPE_UINT, static_cast<guint> (w), "height",
                            G_TYPE_UINT, static_cast<guint> (h), "label", G_TYPE_STRING, label, "label-id",
                            G_TYPE_INT, label_id, "confidence", G_TYPE_DOUBLE, confidence, "id", G_TYPE_UINT, id,
                            nullptr);
}

void gst_gpu_base_transform_post_objects (GstGpuBaseTransform *self, const char *name, GstBuffer *buf, size_t n,
                                          const std::function<void (std::vector<GstStructure *> *)> &add_objects)
{
  Base *b = base_of (self);
  const GstGpuDetectMessageMode mode = b->settings.copy ().message_mode;
  if (mode == GST_GPU_DETECT_MESSAGE_NONE)
    return;
  const bool changed = n != b->last_count;
  b->last_count = n;
  if ((mode == GST_GPU_DETECT_MESSAGE_ON_CHANGE && !changed) || (mode == GST_GPU_DETECT_MESSAGE_ON_DETECTION && n == 0))
    return;
  std::vector<GstStructure *> structures;
  add_objects (&structures);
  GValue objects = G_VALUE_INIT;
  g_value_init (&objects, GST_TYPE_LIST);
  for (GstStructure *o : structures) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, o);
    gst_value_list_append_and_take_value (&objects, &v);
  }
  const GstClockTime ts = GST_BUFFER_PTS (buf);
  GstSegment *seg = &GST_BASE_TRANSFORM (self)->segment;
  GstStructure *s = gst_structure_new (name, "timestamp", G_TYPE_UINT64, ts, "stream-time", G_TYPE_UINT64,
                                       gst_segment_to_stream_time (seg, GST_FORMAT_TIME, ts), "running-time",
                                       G_TYPE_UINT64, gst_segment_to_running_time (seg, GST_FORMAT_TIME, ts),
                                       "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (buf), nullptr);
  gst_structure_take_value (s, "objects", &objects);
  gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
}

void gst_gpu_base_transform_count_processed (GstGpuBaseTransform *self) { base_of (self)->processed++; }

// Drops every held buffer (flush, stop, after an error), once the device is
// done with them.
static void discard_all (GstGpuBaseTransform *self)
{
  Base *b = base_of (self);
  CLASS (self)->discard (self);
  b->frames.clear ();
}

// Pushes every held buffer downstream, in order; after a failed frame the
// rest are discarded.
static GstFlowReturn drain (GstGpuBaseTransform *self)
{
  Base *b = base_of (self);
  while (!b->frames.empty ()) {
    std::unique_ptr<GpuFrame> f = std::move (b->frames.front ());
    b->frames.pop_front ();
    if (!gst_gpu_base_transform_complete (self, f.get ())) {
      discard_all (self);
      return GST_FLOW_ERROR;
    }
    const GstFlowReturn ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), CLASS (self)->finish (self, f.get ()));
    if (ret != GST_FLOW_OK) {
      discard_all (self);
      return ret;
    }
  }
  return GST_FLOW_OK;
}

static gboolean gst_gpu_base_transform_start (GstBaseTransform *trans)
{
  Base *b = base_of (GST_GPU_BASE_TRANSFORM (trans));
  b->running_max_in_flight = b->settings.copy ().max_in_flight;
  b->last_count = G_MAXSIZE;
  b->uploads = b->host_uploads = 0;
  std::lock_guard<std::mutex> g (b->qos_lock);
  b->earliest_time = GST_CLOCK_TIME_NONE;
  b->processed = b->skipped = 0;
  return TRUE;
}

static gboolean gst_gpu_base_transform_stop (GstBaseTransform *trans)
{
  GstGpuBaseTransform *self = GST_GPU_BASE_TRANSFORM (trans);
  Base *b = base_of (self);
  const bool in_flight =
      std::any_of (b->frames.begin (), b->frames.end (), [] (const std::unique_ptr<GpuFrame> &f) { return !f->done; });
  if (in_flight && CLASS (self)->retire) {
    // The device finishes the frames in flight on a thread of its own, which
    // then lets go of their buffers and of the engine: a model that takes
    // minutes a frame does not hold up the state change.
    GST_INFO_OBJECT (self, "stopping with %zu frames in flight: the device finishes them in the background",
                     b->frames.size ());
    Retiring::get ().begin ();
    std::thread ([frames = std::move (b->frames), idle = CLASS (self)->retire (self)] () mutable {
      idle ();
      frames.clear ();
      idle = nullptr;
      Retiring::get ().end ();
    }).detach ();
    b->frames.clear ();
  }
  discard_all (self);
  if (b->uploads > 0)
    GST_INFO_OBJECT (self, "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " frames uploaded arrived in page-locked memory",
                     b->host_uploads, b->uploads);
  gst_clear_object (&b->host_allocator);
  b->have_info = false;
  b->frame_duration = GST_CLOCK_TIME_NONE;
  return TRUE;
}

static gboolean gst_gpu_base_transform_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  Base *b = base_of (GST_GPU_BASE_TRANSFORM (trans));
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, incaps)) {
    GST_ELEMENT_ERROR (trans, CORE, NEGOTIATION, (_("Unsupported video format.")),
                       ("cannot parse caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  b->info = info;
  b->have_info = true;
  const gint fps_n = GST_VIDEO_INFO_FPS_N (&info), fps_d = GST_VIDEO_INFO_FPS_D (&info);
  b->frame_duration = fps_n > 0 ? gst_util_uint64_scale_int (GST_SECOND, fps_d, fps_n) : GST_CLOCK_TIME_NONE;
  return TRUE;
}

// Frames are held, not transformed: every input buffer goes into the FIFO,
// its device work submitted by the subclass.
static GstFlowReturn gst_gpu_base_transform_submit_input_buffer (GstBaseTransform *trans, gboolean discont,
                                                                 GstBuffer *buf)
{
  GstGpuBaseTransform *self = GST_GPU_BASE_TRANSFORM (trans);
  Base *b = base_of (self);
  if (!b->have_info) {
    gst_buffer_unref (buf);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (_("Unsupported video format.")), ("no caps before the first buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  std::unique_ptr<GpuFrame> frame;
  const GstFlowReturn ret = CLASS (self)->submit (self, buf, &frame);
  if (ret != GST_FLOW_OK)
    return ret;
  b->frames.push_back (std::move (frame));
  return GST_FLOW_OK;
}

// Returns the oldest held buffer once its device work is done; blocks on it
// only when max-in-flight buffers are held.
static GstFlowReturn gst_gpu_base_transform_generate_output (GstBaseTransform *trans, GstBuffer **outbuf)
{
  GstGpuBaseTransform *self = GST_GPU_BASE_TRANSFORM (trans);
  Base *b = base_of (self);
  *outbuf = nullptr;
  if (b->frames.empty ())
    return GST_FLOW_OK;
  GpuFrame *front = b->frames.front ().get ();
  const bool done = front->done || CLASS (self)->ready (self, front);
  if (!done && b->frames.size () < b->running_max_in_flight)
    return GST_FLOW_OK;
  if (!gst_gpu_base_transform_complete (self, front)) {
    if (gst_gpu_base_transform_stopping (self))
      return GST_FLOW_FLUSHING; // the frame stays for stop()
    b->frames.pop_front ();
    return GST_FLOW_ERROR;
  }
  *outbuf = CLASS (self)->finish (self, front);
  b->frames.pop_front ();
  return GST_FLOW_OK;
}

static GstStateChangeReturn gst_gpu_base_transform_change_state (GstElement *element, GstStateChange transition)
{
  Base *b = base_of (GST_GPU_BASE_TRANSFORM (element));
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    b->interrupt->set (false);
  else if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    b->interrupt->set (true); // before the pads go: the streaming thread stops waiting for the device
  return GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
}

static gboolean gst_gpu_base_transform_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  GstGpuBaseTransform *self = GST_GPU_BASE_TRANSFORM (trans);
  Base *b = base_of (self);
  switch (GST_EVENT_TYPE (event)) {
  case GST_EVENT_FLUSH_STOP:
    discard_all (self);
    {
      std::lock_guard<std::mutex> g (b->qos_lock);
      b->earliest_time = GST_CLOCK_TIME_NONE;
    }
    break;
  case GST_EVENT_FLUSH_START:
    break;
  default:
    // Held buffers go out before any serialized event (EOS, caps, segment...).
    if (GST_EVENT_IS_SERIALIZED (event) && !b->frames.empty ())
      drain (self);
    break;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static gboolean gst_gpu_base_transform_src_event (GstBaseTransform *trans, GstEvent *event)
{
  Base *b = base_of (GST_GPU_BASE_TRANSFORM (trans));
  if (GST_EVENT_TYPE (event) == GST_EVENT_QOS) {
    GstQOSType type;
    gdouble proportion;
    GstClockTimeDiff diff;
    GstClockTime ts;
    gst_event_parse_qos (event, &type, &proportion, &diff, &ts);
    std::lock_guard<std::mutex> g (b->qos_lock);
    if (type == GST_QOS_TYPE_UNDERFLOW || !GST_CLOCK_TIME_IS_VALID (ts))
      b->earliest_time = GST_CLOCK_TIME_NONE;
    else if (diff > 0)
      b->earliest_time = ts + 2 * diff;
    else
      b->earliest_time = ts + diff;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->src_event (trans, event);
}

static gboolean gst_gpu_base_transform_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstGpuBaseTransform *self = GST_GPU_BASE_TRANSFORM (trans);
  Base *b = base_of (self);
  if (gpudetect_cl_device_handle_query (GST_ELEMENT (self), query, &b->device))
    return TRUE;
  if (direction == GST_PAD_SINK && GST_QUERY_TYPE (query) == GST_QUERY_DRAIN) {
    drain (self);
    return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query);
  }
  if (direction == GST_PAD_SRC && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    if (!gst_pad_peer_query (GST_BASE_TRANSFORM_SINK_PAD (trans), query))
      return FALSE;
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency (query, &live, &min, &max);
    // A frame waits for at most max-in-flight - 1 later frames before it leaves.
    const guint depth = b->settings.copy ().max_in_flight - 1;
    GstClockTime frame = b->frame_duration;
    if (!GST_CLOCK_TIME_IS_VALID (frame))
      frame = GST_SECOND / 30;
    const GstClockTime ours = depth * frame;
    min += ours;
    if (GST_CLOCK_TIME_IS_VALID (max))
      max += ours;
    gst_query_set_latency (query, live, min, max);
    return TRUE;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query);
}

// Offers upstream a video buffer pool in page-locked memory (gsthostmemory.h):
// frames decoded into it upload to the device at its full transfer speed.
// Buffers pass through unchanged, so the query first goes downstream (the
// base class's passthrough answer); a pool proposed there is left first.
static gboolean gst_gpu_base_transform_propose_allocation (GstBaseTransform *trans, GstQuery *decide_query,
                                                           GstQuery *query)
{
  GstGpuBaseTransform *self = GST_GPU_BASE_TRANSFORM (trans);
  Base *b = base_of (self);
  // Downstream may not answer (fakesink does not): we answer all the same.
  GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans, decide_query, query);
  const Settings s = b->settings.copy ();
  GstCaps *caps = nullptr;
  gboolean need_pool = FALSE;
  gst_query_parse_allocation (query, &caps, &need_pool);
  if (!s.upload_pool || !caps || gst_query_get_n_allocation_pools (query) > 0)
    return TRUE;
  if (!b->host_allocator) {
    std::string err;
    std::shared_ptr<gpudetect::cl::HostAllocator> blocks = CLASS (self)->host_memory (self, &err);
    if (!blocks) {
      if (!err.empty ())
        GST_WARNING_OBJECT (self, "no page-locked memory to offer upstream: %s", err.c_str ());
      return TRUE;
    }
    b->host_allocator = gst_gpu_detect_host_allocator_new (std::move (blocks));
  }
  gst_gpu_detect_host_pool_offer (GST_OBJECT (self), b->host_allocator, query, caps, s.max_in_flight);
  return TRUE;
}

static void gst_gpu_base_transform_set_context (GstElement *element, GstContext *context)
{
  base_of (GST_GPU_BASE_TRANSFORM (element))->device.set_context (context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static void gst_gpu_base_transform_finalize (GObject *object)
{
  GstGpuBaseTransform *self = GST_GPU_BASE_TRANSFORM (object);
  delete base_of (self);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void gst_gpu_base_transform_init (GstGpuBaseTransform *self)
{
  static_cast<GstGpuBaseTransformPrivate *> (gst_gpu_base_transform_get_instance_private (self))->base = new Base;
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}

static void gst_gpu_base_transform_class_init (GstGpuBaseTransformClass *klass)
{
  GST_DEBUG_CATEGORY_INIT (gst_gpu_base_transform_debug, "gpubasetransform", 0, "gpudetect's device elements");
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  gobject_class->finalize = gst_gpu_base_transform_finalize;
  GpuDetectProperties<Settings> props (gobject_class, settings_of);
  props.field (g_param_spec_uint ("max-in-flight", "Maximum frames in flight",
                   "Frames held while their work runs on the device (1: synchronous)", 1, 16, DEFAULT_MAX_IN_FLIGHT,
                   GPUDETECT_PARAM_READY),
               &Settings::max_in_flight);
  props.field (g_param_spec_boolean ("upload-pool", "Upload pool",
                   "Offer upstream a buffer pool in page-locked memory, from which frames upload to the device "
                   "without a copy on the host (when nothing downstream proposes a pool, and upstream takes it)",
                   DEFAULT_UPLOAD_POOL, GPUDETECT_PARAM_READY),
               &Settings::upload_pool);
  props.field (g_param_spec_enum ("message-mode", "Message mode",
                   "When to post the element message (named as the element: \"gpudetect\", \"gputrack\") with "
                   "each frame's objects", GST_TYPE_GPU_DETECT_MESSAGE_MODE, DEFAULT_MESSAGE_MODE,
                   GPUDETECT_PARAM_PLAYING),
               &Settings::message_mode);
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  element_class->set_context = gst_gpu_base_transform_set_context;
  element_class->change_state = gst_gpu_base_transform_change_state;
  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = gst_gpu_base_transform_start;
  trans_class->stop = gst_gpu_base_transform_stop;
  trans_class->set_caps = gst_gpu_base_transform_set_caps;
  trans_class->submit_input_buffer = gst_gpu_base_transform_submit_input_buffer;
  trans_class->generate_output = gst_gpu_base_transform_generate_output;
  trans_class->sink_event = gst_gpu_base_transform_sink_event;
  trans_class->src_event = gst_gpu_base_transform_src_event;
  trans_class->query = gst_gpu_base_transform_query;
  trans_class->propose_allocation = gst_gpu_base_transform_propose_allocation;
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_BASE_TRANSFORM, static_cast<GstPluginAPIFlags> (0));
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_DETECT_MESSAGE_MODE, static_cast<GstPluginAPIFlags> (0));
}
