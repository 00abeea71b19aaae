/**
 * SECTION:element-gputrack
 * @title: gputrack
 *
 * Gives every object a stable id across frames and, on frames without
 * detections (gpudetect's inference-interval), moves the boxes by masked-SAD
 * template search on the OpenCL device, so that detection on one frame in N
 * still gives a box on every frame.
 *
 * Each GstVideoRegionOfInterestMeta gets an "object_id" parameter structure
 * (DL Streamer's: field "id", int) and a "tracking" structure (field
 * "confidence", double 0-1, the template search's: 1 - D_best / D_alt).  On
 * frames without detections one meta per tracked object is added, with the
 * "detection" structure of its last detection (box updated).  roi->id stays
 * unique within the buffer.
 *
 * Work is asynchronous, as gpudetect's: a frame's upload and colour
 * conversion are enqueued when it arrives, its template search as soon as
 * the frame before it is associated (track states change in frame order),
 * its results read back without blocking; up to
 * #GstGpuTrack:max-in-flight frames are held, in order (docs/tracking.md).
 * The OpenCL context is shared with gpudetect elements on the same device
 * (GstContext "gpudetect.cl.device").
 *
 * ## Example
 * |[
 * gst-launch-1.0 filesrc location=clip.webm ! decodebin ! videoconvert ! video/x-raw,format=I420 ! \
 *     gpudetect inference-interval=5 ! gputrack ! roioverlay ! videoconvert ! autovideosink
 * ]|
 */
#include "config.h"

#include "gstgputrack.h"

#include "gpudetect-elements.h"
#include "gstcldevice.h"
#include "gstdeviceframe.h"
#include "gsthostmemory.h"
#include "gstgpudetect.h"
#include "track/tracker.h"

#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

GST_DEBUG_CATEGORY_STATIC (gst_gpu_track_debug);
#define GST_CAT_DEFAULT gst_gpu_track_debug

#define VIDEO_CAPS GST_VIDEO_CAPS_MAKE ("{ GRAY8, NV12, I420, RGBA, BGRA, RGBx, BGRx }")

enum {
  PROP_0,
  PROP_TRACKING_TYPE,
  PROP_DEVICE,
  PROP_DEVICE_NAME,
  PROP_SEARCH_RADIUS,
  PROP_TEMPLATE_SIZE,
  PROP_MAX_LOST,
  PROP_MIN_CONFIDENCE,
  PROP_IOU_THRESHOLD,
  PROP_TEMPLATE_BLEND,
  PROP_MESSAGE_MODE,
  PROP_MAX_IN_FLIGHT,
  PROP_FRAMES_UPLOADED,
  PROP_FRAMES_SHARED,
  PROP_UPLOAD_POOL,
};

#define DEFAULT_TRACKING_TYPE GST_GPU_TRACK_SHORT_TERM
#define DEFAULT_DEVICE "auto"
#define DEFAULT_SEARCH_RADIUS 16
#define DEFAULT_TEMPLATE_SIZE 32
#define DEFAULT_MAX_LOST 30
#define DEFAULT_MIN_CONFIDENCE 0.4
#define DEFAULT_IOU_THRESHOLD 0.3
#define DEFAULT_TEMPLATE_BLEND 1.0
#define DEFAULT_MESSAGE_MODE GST_GPU_DETECT_MESSAGE_NONE
#define DEFAULT_MAX_IN_FLIGHT 2
#define DEFAULT_UPLOAD_POOL TRUE

namespace {
struct Settings {
  GstGpuTrackType type = DEFAULT_TRACKING_TYPE;
  std::string device = DEFAULT_DEVICE;
  int search_radius = DEFAULT_SEARCH_RADIUS;
  int template_size = DEFAULT_TEMPLATE_SIZE;
  guint max_lost = DEFAULT_MAX_LOST;
  double min_confidence = DEFAULT_MIN_CONFIDENCE;
  double iou_threshold = DEFAULT_IOU_THRESHOLD;
  double template_blend = DEFAULT_TEMPLATE_BLEND;
  GstGpuDetectMessageMode message_mode = DEFAULT_MESSAGE_MODE;
  guint max_in_flight = DEFAULT_MAX_IN_FLIGHT;
  bool upload_pool = DEFAULT_UPLOAD_POOL;
};

// One buffer held by the element, in arrival order.
struct Pending {
  GstBuffer *buffer = nullptr; // our reference, kept until the device is done with its frame
  GstVideoFrame frame;         // mapped while the device may still read it
  bool mapped = false;
  uint64_t ticket = 0;         // the tracker's
  bool done = false;           // collected: `objects` hold its result
  std::vector<gpudetect::track::TrackedObject> objects;
};
} // namespace

struct GstGpuTrackPrivate {
  std::mutex lock; // guards settings
  Settings settings;
  GpuDetectDeviceSlot shared; // the context shared with gpudetect

  // streaming thread
  std::unique_ptr<gpudetect::track::Tracker> tracker;
  Settings running; // the settings the tracker was made with
  GstVideoInfo info;
  bool have_info = false;
  std::string device_name;
  size_t last_count = G_MAXSIZE;
  guint64 frames = 0;
  std::deque<Pending> fifo;
  // frames the tracker uploaded from host memory, and took from gpudetect's
  // upload, so far (read-only properties)
  std::atomic<guint64> uploaded{0}, shared_frames{0};
  GstAllocator *host_allocator = nullptr; // page-locked memory offered upstream
  guint64 host_memory_frames = 0;         // uploaded frames that arrived in it
};

struct _GstGpuTrack {
  GstBaseTransform parent;
  GstGpuTrackPrivate *priv;
};

#define gst_gpu_track_parent_class parent_class
G_DEFINE_TYPE (GstGpuTrack, gst_gpu_track, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (gputrack, "gputrack", GST_RANK_NONE, GST_TYPE_GPU_TRACK,
                                       gpudetect_element_init (plugin));

GType gst_gpu_track_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_GPU_TRACK_SHORT_TERM, "Template search on every frame, ids from detections", "short-term"},
      {GST_GPU_TRACK_ZERO_TERM, "Ids on frames with detections only, by IoU (no device)", "zero-term"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstGpuTrackType", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (VIDEO_CAPS));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (VIDEO_CAPS));

/* ------------------------------------------------------------------------ */

static gboolean gst_gpu_track_start (GstBaseTransform *trans)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  GstGpuTrackPrivate *priv = self->priv;
  Settings s;
  {
    std::lock_guard<std::mutex> g (priv->lock);
    s = priv->settings;
  }
  gpudetect::track::TrackerConfig cfg;
  cfg.search = s.type == GST_GPU_TRACK_SHORT_TERM;
  cfg.max_lost = static_cast<int> (s.max_lost);
  cfg.min_confidence = s.min_confidence;
  cfg.iou_threshold = s.iou_threshold;
  cfg.blend = static_cast<int> (s.template_blend * 256 + 0.5);
  cfg.frames = static_cast<int> (s.max_in_flight);
  cfg.engine.geometry =
      gpudetect::track::Geometry::square (s.template_size, s.search_radius, std::max (2, s.template_size / 4));
  GpuDetectSharedDevice device;
  std::string err;
  if (cfg.search) {
    if (!gpudetect_cl_device_ensure (GST_ELEMENT (self), s.device, &priv->shared, &device, &err)) {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE, (_("No usable OpenCL device found.")), ("%s", err.c_str ()));
      return FALSE;
    }
    cfg.engine.share = device.get ();
  }
  priv->tracker = gpudetect::track::Tracker::create (cfg, &err);
  if (!priv->tracker) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, (_("Could not build the OpenCL tracking kernels.")), ("%s", err.c_str ()));
    return FALSE;
  }
  priv->running = s;
  priv->device_name = device ? device->info.describe () : std::string ();
  if (const gpudetect::track::TemplateSearch *e = priv->tracker->engine ())
    GST_INFO_OBJECT (self, "template search on %s: %dx%d templates, %dx%d areas, work-group %d, %d rows per band%s",
                     priv->device_name.c_str (), e->geometry ().template_w, e->geometry ().template_h,
                     e->geometry ().search_w, e->geometry ().search_h, e->work_group (), e->band_rows (),
                     e->built_from_cache () ? " (kernels from cache)" : "");
  priv->last_count = G_MAXSIZE;
  priv->frames = 0;
  priv->uploaded = 0;
  priv->shared_frames = 0;
  priv->host_memory_frames = 0;
  return TRUE;
}

static void discard_all (GstGpuTrack *self);

static gboolean gst_gpu_track_stop (GstBaseTransform *trans)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  if (self->priv->tracker)
    GST_INFO_OBJECT (self, "%" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " template searches; %" G_GUINT64_FORMAT
                     " frames uploaded (%" G_GUINT64_FORMAT " from page-locked memory), %" G_GUINT64_FORMAT
                     " taken from gpudetect", self->priv->frames, (guint64) self->priv->tracker->searches (),
                     (guint64) self->priv->tracker->uploads (), self->priv->host_memory_frames,
                     (guint64) self->priv->tracker->shared_frames ());
  gst_clear_object (&self->priv->host_allocator);
  discard_all (self);
  self->priv->tracker.reset ();
  self->priv->have_info = false;
  return TRUE;
}

static gboolean gst_gpu_track_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, incaps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (_("Unsupported video format.")),
                       ("cannot parse caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  GstGpuTrackPrivate *priv = self->priv;
  if (priv->have_info && (GST_VIDEO_INFO_WIDTH (&info) != GST_VIDEO_INFO_WIDTH (&priv->info) ||
                          GST_VIDEO_INFO_HEIGHT (&info) != GST_VIDEO_INFO_HEIGHT (&priv->info)) && priv->tracker)
    priv->tracker->reset (); // boxes of another frame size mean nothing here
  priv->info = info;
  priv->have_info = true;
  return TRUE;
}

static gpudetect::track::ColorFormat color_format (GstVideoFormat f)
{
  switch (f) {
  case GST_VIDEO_FORMAT_NV12: return gpudetect::track::ColorFormat::Nv12;
  case GST_VIDEO_FORMAT_I420: return gpudetect::track::ColorFormat::I420;
  case GST_VIDEO_FORMAT_RGBA: return gpudetect::track::ColorFormat::Rgba;
  case GST_VIDEO_FORMAT_BGRA: return gpudetect::track::ColorFormat::Bgra;
  case GST_VIDEO_FORMAT_RGBx: return gpudetect::track::ColorFormat::Rgbx;
  case GST_VIDEO_FORMAT_BGRx: return gpudetect::track::ColorFormat::Bgrx;
  default: return gpudetect::track::ColorFormat::Gray8;
  }
}

// Whether a frame gpudetect uploaded is this buffer's frame as the caps
// describe it (an element between the two that changed the pixels drops the
// meta; this also catches one that kept it).
static bool device_frame_matches (const gpudetect::DeviceFrame &d, const GstVideoInfo *info)
{
  if (d.width != GST_VIDEO_INFO_WIDTH (info) || d.height != GST_VIDEO_INFO_HEIGHT (info))
    return false;
  using gpudetect::ChromaLayout;
  using gpudetect::PixelFormat;
  switch (GST_VIDEO_INFO_FORMAT (info)) {
  case GST_VIDEO_FORMAT_GRAY8: return d.format == PixelFormat::Gray8 && d.chroma == ChromaLayout::None;
  case GST_VIDEO_FORMAT_NV12: return d.format == PixelFormat::Gray8 && d.chroma == ChromaLayout::Nv12;
  case GST_VIDEO_FORMAT_I420: return d.format == PixelFormat::Gray8 && d.chroma == ChromaLayout::I420;
  case GST_VIDEO_FORMAT_RGBA: return d.format == PixelFormat::Rgba;
  case GST_VIDEO_FORMAT_BGRA: return d.format == PixelFormat::Bgra;
  case GST_VIDEO_FORMAT_RGBx: return d.format == PixelFormat::Rgbx;
  case GST_VIDEO_FORMAT_BGRx: return d.format == PixelFormat::Bgrx;
  default: return false;
  }
}

// The context of the tracker's search (null without search).
static cl_context search_context (GstGpuTrackPrivate *priv)
{
  const gpudetect::track::TemplateSearch *e = priv->tracker ? priv->tracker->engine () : nullptr;
  return e ? e->device ().context.get () : nullptr;
}

// A box clipped to the frame, in whole pixels; false when nothing is left.
static bool clip (const gpudetect::track::Box &b, int fw, int fh, int *x, int *y, int *w, int *h)
{
  const int x0 = std::clamp (static_cast<int> (std::lround (b.x)), 0, fw);
  const int y0 = std::clamp (static_cast<int> (std::lround (b.y)), 0, fh);
  const int x1 = std::clamp (static_cast<int> (std::lround (b.x + b.w)), 0, fw);
  const int y1 = std::clamp (static_cast<int> (std::lround (b.y + b.h)), 0, fh);
  *x = x0;
  *y = y0;
  *w = x1 - x0;
  *h = y1 - y0;
  return *w > 0 && *h > 0;
}

static void post_message (GstGpuTrack *self, GstBuffer *buf, const std::vector<gpudetect::track::TrackedObject> &objs,
                          GstGpuDetectMessageMode mode)
{
  GstGpuTrackPrivate *priv = self->priv;
  if (mode == GST_GPU_DETECT_MESSAGE_NONE)
    return;
  const size_t n = objs.size ();
  const bool changed = n != priv->last_count;
  priv->last_count = n;
  if ((mode == GST_GPU_DETECT_MESSAGE_ON_CHANGE && !changed) || (mode == GST_GPU_DETECT_MESSAGE_ON_DETECTION && n == 0))
    return;
  GValue objects = G_VALUE_INIT;
  g_value_init (&objects, GST_TYPE_LIST);
  const int fw = GST_VIDEO_INFO_WIDTH (&priv->info), fh = GST_VIDEO_INFO_HEIGHT (&priv->info);
  for (const gpudetect::track::TrackedObject &o : objs) {
    int x, y, w, h;
    if (!clip (o.box, fw, fh, &x, &y, &w, &h))
      continue;
    GValue v = G_VALUE_INIT;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    GstStructure *st = gst_structure_new (
        "object", "x", G_TYPE_UINT, (guint) x, "y", G_TYPE_UINT, (guint) y, "width", G_TYPE_UINT, (guint) w, "height",
        G_TYPE_UINT, (guint) h, "label", G_TYPE_STRING, o.label.c_str (), "label-id", G_TYPE_INT, o.label_id,
        "confidence", G_TYPE_DOUBLE, o.detection_confidence, "id", G_TYPE_UINT, (guint) o.id, "tracking-confidence",
        G_TYPE_DOUBLE, o.confidence, "detected", G_TYPE_BOOLEAN, o.detection >= 0, nullptr);
    g_value_take_boxed (&v, st);
    gst_value_list_append_and_take_value (&objects, &v);
  }
  GstClockTime ts = GST_BUFFER_PTS (buf);
  GstSegment *seg = &GST_BASE_TRANSFORM (self)->segment;
  GstStructure *s = gst_structure_new ("gputrack", "timestamp", G_TYPE_UINT64, ts, "stream-time", G_TYPE_UINT64,
                                       gst_segment_to_stream_time (seg, GST_FORMAT_TIME, ts), "running-time",
                                       G_TYPE_UINT64, gst_segment_to_running_time (seg, GST_FORMAT_TIME, ts),
                                       "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (buf), nullptr);
  gst_structure_take_value (s, "objects", &objects);
  gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
}

static void add_tracking_params (GstVideoRegionOfInterestMeta *roi, const gpudetect::track::TrackedObject &o)
{
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("object_id", "id", G_TYPE_INT,
                                                                       (gint) (o.id & G_MAXINT), nullptr));
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("tracking", "confidence", G_TYPE_DOUBLE,
                                                                       o.confidence, "frames-since-detection",
                                                                       G_TYPE_INT, o.since_detection, nullptr));
}

// The detections a buffer carries (ROIs without an object id, of some size),
// and their metas, in the buffer's order; the largest roi->id.
static void read_detections (GstBuffer *buf, std::vector<gpudetect::track::Detection> *dets,
                             std::vector<GstVideoRegionOfInterestMeta *> *metas, gint *max_roi_id)
{
  *max_roi_id = -1;
  gpointer state = nullptr;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    auto *roi = reinterpret_cast<GstVideoRegionOfInterestMeta *> (meta);
    *max_roi_id = std::max (*max_roi_id, roi->id);
    if (gst_video_region_of_interest_meta_get_param (roi, "object_id"))
      continue; // tracked upstream already
    gpudetect::track::Detection d;
    d.box = {static_cast<double> (roi->x), static_cast<double> (roi->y), static_cast<double> (roi->w),
             static_cast<double> (roi->h)};
    d.label = roi->roi_type ? g_quark_to_string (roi->roi_type) : "";
    if (const GstStructure *p = gst_video_region_of_interest_meta_get_param (roi, "detection")) {
      gst_structure_get_double (p, "confidence", &d.confidence);
      gst_structure_get_int (p, "label_id", &d.label_id);
    }
    if (d.box.w <= 0 || d.box.h <= 0)
      continue;
    if (dets)
      dets->push_back (std::move (d));
    metas->push_back (roi);
  }
}

static void unmap (Pending &p)
{
  if (p.mapped)
    gst_video_frame_unmap (&p.frame);
  p.mapped = false;
}

// Waits for the entry's objects (the frames before it are done).
static gboolean complete (GstGpuTrack *self, Pending &p)
{
  GstGpuTrackPrivate *priv = self->priv;
  if (p.done)
    return TRUE;
  gpudetect::cl::Error e = priv->tracker->collect (p.ticket, &p.objects);
  p.done = true;
  unmap (p); // the device is done with the frame's memory
  if (e) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Tracking failed on the OpenCL device.")), ("%s", e.message.c_str ()));
    return FALSE;
  }
  return TRUE;
}

// The entry's buffer with the tracking metadata, its message posted.
static GstBuffer *finish (GstGpuTrack *self, Pending &p)
{
  GstGpuTrackPrivate *priv = self->priv;
  GstBuffer *buf = p.buffer;
  p.buffer = nullptr;
  const int fw = GST_VIDEO_INFO_WIDTH (&priv->info), fh = GST_VIDEO_INFO_HEIGHT (&priv->info);
  if (gst_buffer_get_meta (buf, GST_GPU_DETECT_FRAME_META_API_TYPE)) {
    // read: its device buffer goes back to gpudetect
    buf = gst_buffer_make_writable (buf);
    gst_buffer_remove_meta (buf, gst_buffer_get_meta (buf, GST_GPU_DETECT_FRAME_META_API_TYPE));
  }
  if (!p.objects.empty ()) {
    buf = gst_buffer_make_writable (buf);
    // the metas of the writable buffer, as submit read them
    std::vector<GstVideoRegionOfInterestMeta *> metas;
    gint max_roi_id = -1;
    read_detections (buf, nullptr, &metas, &max_roi_id);
    for (const gpudetect::track::TrackedObject &o : p.objects) {
      if (o.detection >= 0) {
        if (static_cast<size_t> (o.detection) < metas.size ())
          add_tracking_params (metas[o.detection], o);
        continue;
      }
      // a tracked object: a meta of its own, clipped to the frame
      int x0, y0, w, h;
      if (!clip (o.box, fw, fh, &x0, &y0, &w, &h))
        continue;
      const int x1 = x0 + w, y1 = y0 + h;
      GstVideoRegionOfInterestMeta *roi =
          gst_buffer_add_video_region_of_interest_meta (buf, o.label.c_str (), x0, y0, x1 - x0, y1 - y0);
      roi->id = ++max_roi_id;
      gst_video_region_of_interest_meta_add_param (
          roi, gst_structure_new ("detection", "x_min", G_TYPE_DOUBLE, (double) x0 / fw, "y_min", G_TYPE_DOUBLE,
                                  (double) y0 / fh, "x_max", G_TYPE_DOUBLE, (double) x1 / fw, "y_max", G_TYPE_DOUBLE,
                                  (double) y1 / fh, "confidence", G_TYPE_DOUBLE, o.detection_confidence, "label_id",
                                  G_TYPE_INT, o.label_id, "label", G_TYPE_STRING, o.label.c_str (), nullptr));
      add_tracking_params (roi, o);
    }
  }
  GstGpuDetectMessageMode mode;
  {
    std::lock_guard<std::mutex> g (priv->lock);
    mode = priv->settings.message_mode;
  }
  post_message (self, buf, p.objects, mode);
  return buf;
}

// Drops every held buffer (flush, stop), after the device is done with them.
static void discard_all (GstGpuTrack *self)
{
  GstGpuTrackPrivate *priv = self->priv;
  if (priv->tracker)
    priv->tracker->discard ();
  for (Pending &p : priv->fifo) {
    unmap (p);
    gst_clear_buffer (&p.buffer);
  }
  priv->fifo.clear ();
}

// Pushes every held buffer downstream, in order (EOS, caps, serialized events, drain).
static GstFlowReturn drain (GstGpuTrack *self)
{
  GstGpuTrackPrivate *priv = self->priv;
  GstFlowReturn ret = GST_FLOW_OK;
  while (!priv->fifo.empty ()) {
    Pending p = std::move (priv->fifo.front ());
    priv->fifo.pop_front ();
    if (ret != GST_FLOW_OK || !complete (self, p)) {
      if (ret == GST_FLOW_OK)
        ret = GST_FLOW_ERROR;
      if (!p.done) { // after an error: what is left in flight goes
        priv->tracker->discard ();
        for (Pending &q : priv->fifo)
          unmap (q);
      }
      unmap (p);
      gst_clear_buffer (&p.buffer);
      continue;
    }
    ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), finish (self, p));
  }
  return ret;
}

// Every input buffer goes into the FIFO, its frame submitted to the tracker
// (upload and conversion enqueued, its search as soon as the frame before is
// associated).
static GstFlowReturn gst_gpu_track_submit_input_buffer (GstBaseTransform *trans, gboolean discont, GstBuffer *buf)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  GstGpuTrackPrivate *priv = self->priv;
  if (!priv->have_info || !priv->tracker) {
    gst_buffer_unref (buf);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (_("Unsupported video format.")), ("no caps before the first buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  Settings s;
  {
    std::lock_guard<std::mutex> g (priv->lock);
    s = priv->settings;
  }
  priv->tracker->set_policy (static_cast<int> (s.max_lost), s.min_confidence, s.iou_threshold,
                             static_cast<int> (s.template_blend * 256 + 0.5));
  priv->frames++;
  const int fw = GST_VIDEO_INFO_WIDTH (&priv->info), fh = GST_VIDEO_INFO_HEIGHT (&priv->info);

  // a frame slot: complete the oldest frames in flight (they stay queued)
  for (Pending &q : priv->fifo) {
    if (priv->tracker->in_flight () < static_cast<size_t> (priv->tracker->frames ()))
      break;
    if (!q.done && !complete (self, q)) {
      gst_buffer_unref (buf);
      return GST_FLOW_ERROR;
    }
  }

  Pending p;
  p.buffer = buf;
  std::vector<gpudetect::track::Detection> dets;
  std::vector<GstVideoRegionOfInterestMeta *> metas;
  gint max_roi_id;
  read_detections (buf, &dets, &metas, &max_roi_id);
  gpudetect::track::ColorFrame cf;
  const bool search = priv->running.type == GST_GPU_TRACK_SHORT_TERM;
  // the frame gpudetect uploaded on our context, where it carries one
  std::shared_ptr<const gpudetect::DeviceFrame> device;
  if (search) {
    device = gst_buffer_get_gpu_detect_frame (buf, search_context (priv));
    if (device && !device_frame_matches (*device, &priv->info)) {
      GST_DEBUG_OBJECT (self, "the device frame the buffer carries is not its frame: uploading it");
      device.reset ();
    }
  }
  if (search && !device) {
    // mapped until the device is done with it (collected or discarded)
    if (!gst_video_frame_map (&p.frame, &priv->info, buf, GST_MAP_READ)) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, (_("Could not read the video frame.")), ("map failed"));
      gst_buffer_unref (buf);
      return GST_FLOW_ERROR;
    }
    p.mapped = true;
    cf.format = color_format (GST_VIDEO_FRAME_FORMAT (&p.frame));
    cf.width = fw;
    cf.height = fh;
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES (&p.frame) && i < 3; i++) {
      cf.planes[i] = static_cast<const uint8_t *> (GST_VIDEO_FRAME_PLANE_DATA (&p.frame, i));
      cf.strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE (&p.frame, i);
    }
  }
  const uint64_t uploads = priv->tracker->uploads ();
  gpudetect::cl::Error e =
      priv->tracker->submit (search && !device ? &cf : nullptr, device, fw, fh, std::move (dets), &p.ticket);
  if (e) {
    unmap (p);
    gst_buffer_unref (buf);
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Tracking failed on the OpenCL device.")), ("%s", e.message.c_str ()));
    return GST_FLOW_ERROR;
  }
  if (priv->tracker->uploads () == uploads)
    unmap (p); // not uploaded: nothing reads it
  else if (gst_is_gpu_detect_host_memory (gst_buffer_peek_memory (buf, 0)))
    priv->host_memory_frames++;
  priv->uploaded = priv->tracker->uploads ();
  priv->shared_frames = priv->tracker->shared_frames ();
  priv->fifo.push_back (std::move (p));
  return GST_FLOW_OK;
}

// Returns the oldest held buffer once its frame is associated; waits for it
// only when max-in-flight buffers are held.
static GstFlowReturn gst_gpu_track_generate_output (GstBaseTransform *trans, GstBuffer **outbuf)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  GstGpuTrackPrivate *priv = self->priv;
  *outbuf = nullptr;
  if (priv->fifo.empty ())
    return GST_FLOW_OK;
  guint max_in_flight;
  {
    std::lock_guard<std::mutex> g (priv->lock);
    max_in_flight = priv->running.max_in_flight;
  }
  Pending &front = priv->fifo.front ();
  const bool done = front.done || priv->tracker->ready (front.ticket);
  if (!done && priv->fifo.size () < max_in_flight)
    return GST_FLOW_OK;
  if (!complete (self, front)) {
    gst_clear_buffer (&front.buffer);
    priv->fifo.pop_front ();
    return GST_FLOW_ERROR;
  }
  *outbuf = finish (self, front);
  priv->fifo.pop_front ();
  return GST_FLOW_OK;
}

static gboolean gst_gpu_track_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  switch (GST_EVENT_TYPE (event)) {
  case GST_EVENT_FLUSH_STOP:
    discard_all (self);
    if (self->priv->tracker)
      self->priv->tracker->reset (); // a seek: the next frames are not the ones tracked
    break;
  case GST_EVENT_FLUSH_START:
    break;
  default:
    // Held buffers go out before any serialized event (EOS, caps, segment...).
    if (GST_EVENT_IS_SERIALIZED (event) && !self->priv->fifo.empty ())
      drain (self);
    break;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static gboolean gst_gpu_track_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  if (gpudetect_cl_device_handle_query (GST_ELEMENT (self), query, &self->priv->shared))
    return TRUE;
  // gpudetect upstream asks whether its frames are read on the device
  if (direction == GST_PAD_SINK) {
    cl_context c = gpudetect_frame_query_context (query);
    if (c && c == search_context (self->priv)) {
      gpudetect_frame_query_answer (query);
      return TRUE;
    }
  }
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
    guint depth;
    {
      std::lock_guard<std::mutex> g (self->priv->lock);
      depth = self->priv->settings.max_in_flight - 1;
    }
    GstClockTime frame = GST_SECOND / 30;
    if (self->priv->have_info && GST_VIDEO_INFO_FPS_N (&self->priv->info) > 0)
      frame = gst_util_uint64_scale_int (GST_SECOND, GST_VIDEO_INFO_FPS_D (&self->priv->info),
                                         GST_VIDEO_INFO_FPS_N (&self->priv->info));
    const GstClockTime ours = depth * frame;
    min += ours;
    if (GST_CLOCK_TIME_IS_VALID (max))
      max += ours;
    gst_query_set_latency (query, live, min, max);
    return TRUE;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query);
}

// Offers upstream a video buffer pool in page-locked memory on the search's
// context (gsthostmemory.h), as gpudetect does: frames decoded into it upload
// at the device's full transfer speed.  A pool proposed downstream is left
// first (behind gpudetect, gputrack's pool is the one gpudetect passes on).
static gboolean gst_gpu_track_propose_allocation (GstBaseTransform *trans, GstQuery *decide_query, GstQuery *query)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  GstGpuTrackPrivate *priv = self->priv;
  GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans, decide_query, query);
  bool offer;
  guint min_buffers;
  {
    std::lock_guard<std::mutex> g (priv->lock);
    offer = priv->settings.upload_pool;
    min_buffers = priv->settings.max_in_flight;
  }
  GstCaps *caps = nullptr;
  gboolean need_pool = FALSE;
  gst_query_parse_allocation (query, &caps, &need_pool);
  const gpudetect::track::TemplateSearch *engine = priv->tracker ? priv->tracker->engine () : nullptr;
  if (!offer || !engine || !caps || gst_query_get_n_allocation_pools (query) > 0)
    return TRUE;
  if (!priv->host_allocator) {
    std::shared_ptr<gpudetect::cl::HostAllocator> blocks;
    if (gpudetect::cl::Error e = gpudetect::cl::HostAllocator::create (engine->device (), &blocks)) {
      GST_WARNING_OBJECT (self, "no page-locked memory to offer upstream: %s", e.message.c_str ());
      return TRUE;
    }
    priv->host_allocator = gst_gpu_detect_host_allocator_new (std::move (blocks));
  }
  gst_gpu_detect_host_pool_offer (GST_OBJECT (self), priv->host_allocator, query, caps, min_buffers);
  return TRUE;
}

static void gst_gpu_track_set_context (GstElement *element, GstContext *context)
{
  GST_GPU_TRACK (element)->priv->shared.set_context (context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

/* ------------------------------------------------------------------------ */

static void gst_gpu_track_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  GstGpuTrack *self = GST_GPU_TRACK (object);
  std::lock_guard<std::mutex> g (self->priv->lock);
  Settings &s = self->priv->settings;
  switch (prop_id) {
  case PROP_TRACKING_TYPE: s.type = static_cast<GstGpuTrackType> (g_value_get_enum (value)); break;
  case PROP_DEVICE: s.device = g_value_get_string (value) ? g_value_get_string (value) : ""; break;
  case PROP_SEARCH_RADIUS: s.search_radius = g_value_get_int (value); break;
  case PROP_TEMPLATE_SIZE: s.template_size = g_value_get_int (value); break;
  case PROP_MAX_LOST: s.max_lost = g_value_get_uint (value); break;
  case PROP_MIN_CONFIDENCE: s.min_confidence = g_value_get_double (value); break;
  case PROP_IOU_THRESHOLD: s.iou_threshold = g_value_get_double (value); break;
  case PROP_TEMPLATE_BLEND: s.template_blend = g_value_get_double (value); break;
  case PROP_MESSAGE_MODE: s.message_mode = static_cast<GstGpuDetectMessageMode> (g_value_get_enum (value)); break;
  case PROP_MAX_IN_FLIGHT: s.max_in_flight = g_value_get_uint (value); break;
  case PROP_UPLOAD_POOL: s.upload_pool = g_value_get_boolean (value); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
  }
}

static void gst_gpu_track_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstGpuTrack *self = GST_GPU_TRACK (object);
  std::lock_guard<std::mutex> g (self->priv->lock);
  const Settings &s = self->priv->settings;
  switch (prop_id) {
  case PROP_TRACKING_TYPE: g_value_set_enum (value, s.type); break;
  case PROP_DEVICE: g_value_set_string (value, s.device.c_str ()); break;
  case PROP_DEVICE_NAME:
    g_value_set_string (value, self->priv->device_name.empty () ? nullptr : self->priv->device_name.c_str ());
    break;
  case PROP_SEARCH_RADIUS: g_value_set_int (value, s.search_radius); break;
  case PROP_TEMPLATE_SIZE: g_value_set_int (value, s.template_size); break;
  case PROP_MAX_LOST: g_value_set_uint (value, s.max_lost); break;
  case PROP_MIN_CONFIDENCE: g_value_set_double (value, s.min_confidence); break;
  case PROP_IOU_THRESHOLD: g_value_set_double (value, s.iou_threshold); break;
  case PROP_TEMPLATE_BLEND: g_value_set_double (value, s.template_blend); break;
  case PROP_MESSAGE_MODE: g_value_set_enum (value, s.message_mode); break;
  case PROP_MAX_IN_FLIGHT: g_value_set_uint (value, s.max_in_flight); break;
  case PROP_UPLOAD_POOL: g_value_set_boolean (value, s.upload_pool); break;
  case PROP_FRAMES_UPLOADED: g_value_set_uint64 (value, self->priv->uploaded.load ()); break;
  case PROP_FRAMES_SHARED: g_value_set_uint64 (value, self->priv->shared_frames.load ()); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
  }
}

static void gst_gpu_track_finalize (GObject *object)
{
  discard_all (GST_GPU_TRACK (object));
  delete GST_GPU_TRACK (object)->priv;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void gst_gpu_track_init (GstGpuTrack *self)
{
  self->priv = new GstGpuTrackPrivate ();
  gst_video_info_init (&self->priv->info);
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}

static void gst_gpu_track_class_init (GstGpuTrackClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  GST_DEBUG_CATEGORY_INIT (gst_gpu_track_debug, "gputrack", 0, "OpenCL template tracking");

  gobject_class->set_property = gst_gpu_track_set_property;
  gobject_class->get_property = gst_gpu_track_get_property;
  gobject_class->finalize = gst_gpu_track_finalize;

  const GParamFlags rw = static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  const GParamFlags ready = static_cast<GParamFlags> (rw | GST_PARAM_MUTABLE_READY);
  const GParamFlags playing = static_cast<GParamFlags> (rw | GST_PARAM_MUTABLE_PLAYING);

  g_object_class_install_property (gobject_class, PROP_TRACKING_TYPE,
      g_param_spec_enum ("tracking-type", "Tracking type",
          "short-term: boxes moved by template search on every frame; zero-term: ids on frames with detections only",
          GST_TYPE_GPU_TRACK_TYPE, DEFAULT_TRACKING_TYPE, ready));
  g_object_class_install_property (gobject_class, PROP_DEVICE,
      g_param_spec_string ("device", "Device",
          "OpenCL device: auto (first GPU, else any device), an index, or a substring of \"platform: device\" "
          "(shared with gpudetect elements on the same device)", DEFAULT_DEVICE, ready));
  g_object_class_install_property (gobject_class, PROP_DEVICE_NAME,
      g_param_spec_string ("device-name", "Device name", "The OpenCL device in use (read-only, set once started)",
          nullptr, static_cast<GParamFlags> (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property (gobject_class, PROP_SEARCH_RADIUS,
      g_param_spec_int ("search-radius", "Search radius",
          "How far a template is searched around the predicted position each way, in template pixels (an object "
          "template-size wide moves at most search-radius / template-size of its width per frame beyond the "
          "prediction)", 1, 64, DEFAULT_SEARCH_RADIUS, ready));
  g_object_class_install_property (gobject_class, PROP_TEMPLATE_SIZE,
      g_param_spec_int ("template-size", "Template size",
          "Side of the square template every object is sampled to, in pixels", 8, 64, DEFAULT_TEMPLATE_SIZE, ready));
  g_object_class_install_property (gobject_class, PROP_MAX_LOST,
      g_param_spec_uint ("max-lost", "Maximum lost frames",
          "Frames a track lives without a matching detection before it is dropped", 0, G_MAXINT, DEFAULT_MAX_LOST,
          playing));
  g_object_class_install_property (gobject_class, PROP_MIN_CONFIDENCE,
      g_param_spec_double ("min-confidence", "Minimum confidence",
          "Least template-search confidence (1 - best distance / alternative distance) for a track to move and be "
          "reported on a frame; below it the track coasts on its velocity unreported", 0.0, 1.0,
          DEFAULT_MIN_CONFIDENCE, playing));
  g_object_class_install_property (gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_double ("iou-threshold", "IoU threshold",
          "Least overlap (intersection over union) of a detection and a track's box for them to match", 0.0, 1.0,
          DEFAULT_IOU_THRESHOLD, playing));
  g_object_class_install_property (gobject_class, PROP_TEMPLATE_BLEND,
      g_param_spec_double ("template-blend", "Template blend",
          "Weight of a matching detection's appearance in the track's template (1: replaced; less: a slow blend)",
          0.0, 1.0, DEFAULT_TEMPLATE_BLEND, playing));
  g_object_class_install_property (gobject_class, PROP_MESSAGE_MODE,
      g_param_spec_enum ("message-mode", "Message mode",
          "When to post the \"gputrack\" element message with the tracked objects and their ids",
          GST_TYPE_GPU_DETECT_MESSAGE_MODE, DEFAULT_MESSAGE_MODE, playing));
  g_object_class_install_property (gobject_class, PROP_MAX_IN_FLIGHT,
      g_param_spec_uint ("max-in-flight", "Maximum frames in flight",
          "Frames held while their upload and template search run on the device (1: synchronous)", 1, 16,
          DEFAULT_MAX_IN_FLIGHT, ready));
  g_object_class_install_property (gobject_class, PROP_UPLOAD_POOL,
      g_param_spec_boolean ("upload-pool", "Upload pool",
          "Offer upstream a buffer pool in page-locked memory, from which frames upload to the device without a "
          "copy on the host (when nothing downstream proposes a pool, and upstream takes it)",
          DEFAULT_UPLOAD_POOL, ready));
  g_object_class_install_property (gobject_class, PROP_FRAMES_UPLOADED,
      g_param_spec_uint64 ("frames-uploaded", "Frames uploaded",
          "Frames copied to the device since the element started (read-only)", 0, G_MAXUINT64, 0,
          static_cast<GParamFlags> (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
  g_object_class_install_property (gobject_class, PROP_FRAMES_SHARED,
      g_param_spec_uint64 ("frames-shared", "Frames shared",
          "Frames taken from an upstream gpudetect's upload on the same device instead of uploading them again, "
          "since the element started (read-only)", 0, G_MAXUINT64, 0,
          static_cast<GParamFlags> (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

  gst_element_class_set_static_metadata (element_class, "OpenCL template tracker", "Filter/Analyzer/Video",
      "Gives detected objects ids across frames and moves their boxes by template search on an OpenCL device on "
      "frames without detections", "gpudetect developers");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_gpu_track_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_gpu_track_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_gpu_track_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_gpu_track_set_caps);
  trans_class->submit_input_buffer = GST_DEBUG_FUNCPTR (gst_gpu_track_submit_input_buffer);
  trans_class->generate_output = GST_DEBUG_FUNCPTR (gst_gpu_track_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_gpu_track_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_gpu_track_query);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_gpu_track_propose_allocation);

  gst_type_mark_as_plugin_api (GST_TYPE_GPU_TRACK_TYPE, static_cast<GstPluginAPIFlags> (0));
}
