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
 * At most #GstGpuTrack:max-tracks objects are tracked: a frame's least
 * confident detections beyond it are not tracked, and tracks no detection
 * matched make room for new ones, the longest without a detection first; a
 * "gputrack-max-tracks" element message says when frames begin and stop
 * dropping objects (docs/tracking.md).
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

#include "elementdef.h"
#include "gpubasetransform.h"
#include "gpudetect-elements.h"
#include "gstcldevice.h"
#include "gstdeviceframe.h"
#include "properties.h"
#include "roimeta.h"
#include "gstgpudetect.h"
#include "track/tracker.h"

#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

GST_DEBUG_CATEGORY_STATIC (gst_gpu_track_debug);
#define GST_CAT_DEFAULT gst_gpu_track_debug

#define DEFAULT_TRACKING_TYPE GST_GPU_TRACK_SHORT_TERM
#define DEFAULT_DEVICE "auto"
#define DEFAULT_SEARCH_RADIUS 16
#define DEFAULT_TEMPLATE_SIZE 32
#define DEFAULT_MAX_LOST 30
#define DEFAULT_MIN_CONFIDENCE 0.4
#define DEFAULT_IOU_THRESHOLD 0.3
#define DEFAULT_TEMPLATE_BLEND 1.0
// Above the 150 targets per stream of DeepStream's sample tracker
// configurations (maxTargetsPerStream), and a bound on each frame's search,
// which grows with the tracks (docs/tracking.md, "How many tracks").
#define DEFAULT_MAX_TRACKS 256

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
  guint max_tracks = DEFAULT_MAX_TRACKS;
};

// A held buffer: its tracker ticket and, once done, its objects.
struct TrackFrame : GpuFrame {
  uint64_t ticket = 0;
  std::vector<gpudetect::track::TrackedObject> objects;
  size_t dropped = 0;     // detections and tracks dropped for max-tracks
  bool detections = false; // the frame carried detections
};
} // namespace

struct GstGpuTrackPrivate {
  GpuDetectSettings<Settings> settings;
  std::string device_name; // guarded by the settings' lock (device-name is read from any thread)

  // streaming thread
  std::unique_ptr<gpudetect::track::Tracker> tracker;
  Settings running; // the settings the tracker was made with
  guint64 frames = 0;
  bool dropping = false; // the last frame with detections dropped objects for max-tracks
  // frames the tracker uploaded from host memory, and took from gpudetect's
  // upload, so far, and objects dropped for max-tracks (read-only properties)
  std::atomic<guint64> uploaded{0}, shared_frames{0}, tracks_dropped{0};
};

GPUDETECT_DEFINE_ELEMENT (GstGpuTrack, gst_gpu_track, GstGpuBaseTransform, GST_TYPE_GPU_BASE_TRANSFORM, gputrack)

GType gst_gpu_track_type_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
      {GST_GPU_TRACK_SHORT_TERM, "Template search on every frame, ids from detections", "short-term"},
      {GST_GPU_TRACK_ZERO_TERM, "Ids on frames with detections only, by IoU (no device)", "zero-term"},
      {0, nullptr, nullptr},
  };
  return gpudetect_enum_register (&type, "GstGpuTrackType", values);
}

/* ------------------------------------------------------------------------ */

static gboolean gst_gpu_track_start (GstBaseTransform *trans)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  GstGpuTrackPrivate *priv = self->priv;
  GstGpuBaseTransform *base = GST_GPU_BASE_TRANSFORM (trans);
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->start (trans))
    return FALSE;
  const Settings s = priv->settings.copy ();
  gpudetect::track::TrackerConfig cfg;
  cfg.search = s.type == GST_GPU_TRACK_SHORT_TERM;
  cfg.max_lost = static_cast<int> (s.max_lost);
  cfg.min_confidence = s.min_confidence;
  cfg.iou_threshold = s.iou_threshold;
  cfg.blend = static_cast<int> (s.template_blend * 256 + 0.5);
  cfg.max_tracks = static_cast<int> (s.max_tracks);
  cfg.frames = static_cast<int> (gst_gpu_base_transform_max_in_flight (base));
  cfg.engine.geometry =
      gpudetect::track::Geometry::square (s.template_size, s.search_radius, std::max (2, s.template_size / 4));
  GpuDetectSharedDevice device;
  if (cfg.search) {
    device = gst_gpu_base_transform_open_device (base, s.device);
    if (!device)
      return FALSE;
    cfg.engine.share = device.get ();
  }
  gpudetect::Error e;
  {
    auto report = gst_gpu_base_transform_report_builds (base, GST_CAT_DEFAULT, "the template search");
    e = gpudetect::track::Tracker::create (cfg, &priv->tracker);
  }
  if (e) {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT, (_("Could not build the OpenCL tracking kernels.")),
                       ("%s", e.message.c_str ()));
    return FALSE;
  }
  priv->running = s;
  const std::string device_name = device ? device->info.describe () : std::string ();
  {
    std::lock_guard<std::mutex> g (priv->settings.lock);
    priv->device_name = device_name;
  }
  if (const gpudetect::track::TemplateSearch *e = priv->tracker->engine ())
    GST_INFO_OBJECT (self, "template search on %s: %dx%d templates, %dx%d areas, work-group %d, %d rows per band%s",
                     device_name.c_str (), e->geometry ().template_w, e->geometry ().template_h,
                     e->geometry ().search_w, e->geometry ().search_h, e->work_group (), e->band_rows (),
                     e->built_from_cache () ? " (kernels from cache)" : "");
  priv->frames = 0;
  priv->dropping = false;
  priv->uploaded = 0;
  priv->shared_frames = 0;
  priv->tracks_dropped = 0;
  return TRUE;
}

static gboolean gst_gpu_track_stop (GstBaseTransform *trans)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  if (self->priv->tracker)
    GST_INFO_OBJECT (self, "%" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " template searches; %" G_GUINT64_FORMAT
                     " frames uploaded, %" G_GUINT64_FORMAT " taken from gpudetect", self->priv->frames,
                     (guint64) self->priv->tracker->searches (), (guint64) self->priv->tracker->uploads (),
                     (guint64) self->priv->tracker->shared_frames ());
  GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans); // in-flight work dropped while the tracker exists
  self->priv->tracker.reset ();
  return TRUE;
}

// A new frame size resets the tracks: boxes of another size mean nothing here.
static gboolean gst_gpu_track_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstGpuBaseTransform *base = GST_GPU_BASE_TRANSFORM (trans);
  const GstVideoInfo *info = gst_gpu_base_transform_info (base);
  const int old_w = info ? GST_VIDEO_INFO_WIDTH (info) : -1, old_h = info ? GST_VIDEO_INFO_HEIGHT (info) : -1;
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->set_caps (trans, incaps, outcaps))
    return FALSE;
  info = gst_gpu_base_transform_info (base);
  GstGpuTrackPrivate *priv = GST_GPU_TRACK (trans)->priv;
  if (old_w >= 0 && (GST_VIDEO_INFO_WIDTH (info) != old_w || GST_VIDEO_INFO_HEIGHT (info) != old_h) && priv->tracker)
    priv->tracker->reset ();
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

static void post_message (GstGpuTrack *self, GstBuffer *buf, const std::vector<gpudetect::track::TrackedObject> &objs)
{
  GstGpuBaseTransform *base = GST_GPU_BASE_TRANSFORM (self);
  gst_gpu_base_transform_post_objects (base, "gputrack", buf, objs.size (), [&] (std::vector<GstStructure *> *list) {
    const GstVideoInfo *info = gst_gpu_base_transform_info (base);
    const int fw = GST_VIDEO_INFO_WIDTH (info), fh = GST_VIDEO_INFO_HEIGHT (info);
    for (const gpudetect::track::TrackedObject &o : objs) {
      int x, y, w, h;
      if (!clip (o.box, fw, fh, &x, &y, &w, &h))
        continue;
      GstStructure *object = gst_gpu_base_transform_object_new (x, y, w, h, o.label.c_str (), o.label_id,
                                                                o.detection_confidence, static_cast<guint> (o.id));
      gst_structure_set (object, "tracking-confidence", G_TYPE_DOUBLE, o.confidence, "detected", G_TYPE_BOOLEAN,
                         static_cast<gboolean> (o.detection >= 0), nullptr);
      list->push_back (object);
    }
  });
}

static void read_detections (GstBuffer *buf, std::vector<gpudetect::track::Detection> *dets,
                             std::vector<GstVideoRegionOfInterestMeta *> *metas, gint *max_roi_id)
{
  *max_roi_id = -1;
  gpudetect_roi_for_each (buf, [&] (GstVideoRegionOfInterestMeta *roi) {
    *max_roi_id = std::max (*max_roi_id, roi->id);
    gint64 id;
    if (gpudetect_roi_object_id (roi, &id))
      return; // tracked upstream already
    gpudetect::track::Detection d;
    d.box = {static_cast<double> (roi->x), static_cast<double> (roi->y), static_cast<double> (roi->w),
             static_cast<double> (roi->h)};
    d.label = roi->roi_type ? g_quark_to_string (roi->roi_type) : "";
    const RoiDetection det = gpudetect_roi_detection (roi);
    d.confidence = det.confidence.value_or (d.confidence);
    d.label_id = det.label_id.value_or (d.label_id);
    if (d.box.w <= 0 || d.box.h <= 0)
      return;
    if (dets)
      dets->push_back (std::move (d));
    metas->push_back (roi);
  });
}

// Waits for the entry's objects (the frames before it are done).
static gboolean gst_gpu_track_complete (GstGpuBaseTransform *base, GpuFrame *frame)
{
  GstGpuTrack *self = GST_GPU_TRACK (base);
  TrackFrame &p = static_cast<TrackFrame &> (*frame);
  gpudetect::Error e = self->priv->tracker->collect (p.ticket, &p.objects, &p.dropped);
  if (e) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Tracking failed on the OpenCL device.")), ("%s", e.message.c_str ()));
    return FALSE;
  }
  return TRUE;
}

static gboolean gst_gpu_track_ready (GstGpuBaseTransform *base, GpuFrame *frame)
{
  return GST_GPU_TRACK (base)->priv->tracker->ready (static_cast<TrackFrame &> (*frame).ticket);
}

// Says when frames with detections begin or stop dropping objects for
// max-tracks, and how many (a warning, and a "gputrack-max-tracks" element
// message with "dropped", "max-tracks", "timestamp"): not on every frame.
static void note_dropped (GstGpuTrack *self, GstBuffer *buf, const TrackFrame &p)
{
  GstGpuTrackPrivate *priv = self->priv;
  const size_t dropped = p.dropped;
  priv->tracks_dropped += dropped;
  if ((!p.detections && dropped == 0) || (dropped > 0) == priv->dropping)
    return; // frames between detections keep the state
  priv->dropping = dropped > 0;
  const guint max_tracks = priv->settings.copy ().max_tracks;
  if (dropped > 0)
    GST_WARNING_OBJECT (self, "max-tracks (%u) reached: %" G_GSIZE_FORMAT " detections or tracks dropped on this "
                        "frame (said again once the objects fit)", max_tracks, dropped);
  else
    GST_INFO_OBJECT (self, "objects within max-tracks (%u) again", max_tracks);
  GstStructure *s = gst_structure_new ("gputrack-max-tracks", "dropped", G_TYPE_UINT, static_cast<guint> (dropped),
                                       "max-tracks", G_TYPE_UINT, max_tracks, "timestamp", G_TYPE_UINT64,
                                       GST_BUFFER_PTS (buf), nullptr);
  gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
}

// The entry's buffer with the tracking metadata, its message posted.
static GstBuffer *gst_gpu_track_finish (GstGpuBaseTransform *base, GpuFrame *frame)
{
  GstGpuTrack *self = GST_GPU_TRACK (base);
  TrackFrame &p = static_cast<TrackFrame &> (*frame);
  note_dropped (self, p.buffer, p);
  GstBuffer *buf = p.take_buffer ();
  const GstVideoInfo *info = gst_gpu_base_transform_info (base);
  const int fw = GST_VIDEO_INFO_WIDTH (info), fh = GST_VIDEO_INFO_HEIGHT (info);
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
          gpudetect_roi_add_tracking (metas[o.detection], o.id, o.confidence, o.since_detection);
        continue;
      }
      // a tracked object: a meta of its own, clipped to the frame
      int x0, y0, w, h;
      if (!clip (o.box, fw, fh, &x0, &y0, &w, &h))
        continue;
      GstVideoRegionOfInterestMeta *roi =
          gpudetect_roi_add (buf, g_quark_from_string (o.label.c_str ()), x0, y0, w, h, o.detection_confidence,
                             o.label_id, fw, fh, ++max_roi_id);
      gpudetect_roi_add_tracking (roi, o.id, o.confidence, o.since_detection);
    }
  }
  post_message (self, buf, p.objects);
  return buf;
}

// Drops the device work of every held frame.
static void gst_gpu_track_discard (GstGpuBaseTransform *base)
{
  GstGpuTrackPrivate *priv = GST_GPU_TRACK (base)->priv;
  if (priv->tracker)
    priv->tracker->discard ();
}

// The tracker, for the device to finish its frames in flight without the
// element waiting (the base's stop()): a stop waits at most for the frame
// the streaming thread is completing, whose search max-tracks bounds.
static std::function<void ()> gst_gpu_track_retire (GstGpuBaseTransform *base)
{
  std::shared_ptr<gpudetect::track::Tracker> tracker (std::move (GST_GPU_TRACK (base)->priv->tracker));
  return [tracker] () {
    if (tracker)
      tracker->discard ();
  };
}

// Every input buffer is held, its frame submitted to the tracker (upload and
// conversion enqueued, its search as soon as the frame before is associated).
static GstFlowReturn gst_gpu_track_submit (GstGpuBaseTransform *base, GstBuffer *buf, std::unique_ptr<GpuFrame> *out)
{
  GstGpuTrack *self = GST_GPU_TRACK (base);
  GstGpuTrackPrivate *priv = self->priv;
  auto entry = std::make_unique<TrackFrame> ();
  TrackFrame &p = *entry;
  p.buffer = buf;
  if (!priv->tracker) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (_("Unsupported video format.")), ("no caps before the first buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const Settings s = priv->settings.copy ();
  priv->tracker->set_policy (static_cast<int> (s.max_lost), s.min_confidence, s.iou_threshold,
                             static_cast<int> (s.template_blend * 256 + 0.5), static_cast<int> (s.max_tracks));
  priv->frames++;
  const GstVideoInfo *info = gst_gpu_base_transform_info (base);
  const int fw = GST_VIDEO_INFO_WIDTH (info), fh = GST_VIDEO_INFO_HEIGHT (info);

  if (!gst_gpu_base_transform_make_room (
          base, [priv] { return priv->tracker->in_flight () < static_cast<size_t> (priv->tracker->frames ()); }))
    return GST_FLOW_ERROR;

  std::vector<gpudetect::track::Detection> dets;
  std::vector<GstVideoRegionOfInterestMeta *> metas;
  gint max_roi_id;
  read_detections (buf, &dets, &metas, &max_roi_id);
  p.detections = !dets.empty ();
  gpudetect::track::ColorFrame cf;
  const bool search = priv->running.type == GST_GPU_TRACK_SHORT_TERM;
  // the frame gpudetect uploaded on our context, where it carries one
  std::shared_ptr<const gpudetect::DeviceFrame> device;
  if (search) {
    device = gst_buffer_get_gpu_detect_frame (buf, search_context (priv));
    if (device && !gpudetect_device_frame_matches (*device, info)) {
      GST_DEBUG_OBJECT (self, "the device frame the buffer carries is not its frame: uploading it");
      device.reset ();
    }
  }
  if (search && !device) {
    // mapped until the device is done with it (collected or discarded)
    if (!gst_gpu_base_transform_map (base, &p, GST_MAP_READ))
      return GST_FLOW_ERROR;
    cf.format = color_format (GST_VIDEO_FRAME_FORMAT (&p.video));
    cf.width = fw;
    cf.height = fh;
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES (&p.video) && i < 3; i++) {
      cf.planes[i] = static_cast<const uint8_t *> (GST_VIDEO_FRAME_PLANE_DATA (&p.video, i));
      cf.strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE (&p.video, i);
    }
  }
  const uint64_t uploads = priv->tracker->uploads ();
  gpudetect::Error e =
      priv->tracker->submit (search && !device ? &cf : nullptr, device, fw, fh, std::move (dets), &p.ticket);
  if (e) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Tracking failed on the OpenCL device.")), ("%s", e.message.c_str ()));
    return GST_FLOW_ERROR;
  }
  if (priv->tracker->uploads () == uploads)
    p.unmap (); // not uploaded: nothing reads it
  else
    gst_gpu_base_transform_count_upload (base, buf);
  priv->uploaded = priv->tracker->uploads ();
  priv->shared_frames = priv->tracker->shared_frames ();
  *out = std::move (entry);
  return GST_FLOW_OK;
}

static gboolean gst_gpu_track_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  const bool flush_stop = GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP;
  const gboolean ret = GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
  if (flush_stop && self->priv->tracker)
    self->priv->tracker->reset (); // a seek: the next frames are not the ones tracked
  return ret;
}

// gpudetect upstream asks whether its frames are read on the device; the
// rest is the base's.
static gboolean gst_gpu_track_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstGpuTrack *self = GST_GPU_TRACK (trans);
  // gpudetect upstream asks whether its frames are read on the device
  if (direction == GST_PAD_SINK) {
    cl_context c = gpudetect_frame_query_context (query);
    if (c && c == search_context (self->priv)) {
      gpudetect_frame_query_answer (query);
      return TRUE;
    }
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query);
}

// Page-locked memory on the search's context (gsthostmemory.h), as
// gpudetect offers: behind gpudetect, gputrack's pool is the one gpudetect
// passes on.
static std::shared_ptr<gpudetect::cl::HostAllocator> gst_gpu_track_host_memory (GstGpuBaseTransform *base,
                                                                                std::string *error)
{
  GstGpuTrackPrivate *priv = GST_GPU_TRACK (base)->priv;
  const gpudetect::track::TemplateSearch *engine = priv->tracker ? priv->tracker->engine () : nullptr;
  if (!engine)
    return nullptr;
  std::shared_ptr<gpudetect::cl::HostAllocator> blocks;
  if (gpudetect::Error e = gpudetect::cl::HostAllocator::create (engine->device (), &blocks)) {
    *error = e.message;
    return nullptr;
  }
  return blocks;
}

/* ------------------------------------------------------------------------ */

static GpuDetectSettings<Settings> &settings_of (GObject *object) { return GST_GPU_TRACK (object)->priv->settings; }

static void read_device_name (GObject *object, GValue *value)
{
  const std::string &name = GST_GPU_TRACK (object)->priv->device_name;
  g_value_set_string (value, name.empty () ? nullptr : name.c_str ());
}

static void read_frames_uploaded (GObject *object, GValue *value)
{
  g_value_set_uint64 (value, GST_GPU_TRACK (object)->priv->uploaded.load ());
}

static void read_frames_shared (GObject *object, GValue *value)
{
  g_value_set_uint64 (value, GST_GPU_TRACK (object)->priv->shared_frames.load ());
}

static void read_tracks_dropped (GObject *object, GValue *value)
{
  g_value_set_uint64 (value, GST_GPU_TRACK (object)->priv->tracks_dropped.load ());
}

static void gst_gpu_track_init (GstGpuTrack *self)
{
  self->priv = new GstGpuTrackPrivate ();
}

static void gst_gpu_track_class_init (GstGpuTrackClass *klass)
{
  GST_DEBUG_CATEGORY_INIT (gst_gpu_track_debug, "gputrack", 0, "OpenCL template tracking");

  GpuDetectProperties<Settings> props = gpudetect_element_class_init (klass, gst_gpu_track_finalize, settings_of);
  const GParamFlags ready = GPUDETECT_PARAM_READY, playing = GPUDETECT_PARAM_PLAYING;
  props.field (g_param_spec_enum ("tracking-type", "Tracking type",
      "short-term: boxes moved by template search on every frame; zero-term: ids on frames with detections only",
      GST_TYPE_GPU_TRACK_TYPE, DEFAULT_TRACKING_TYPE, ready), &Settings::type);
  props.field (g_param_spec_string ("device", "Device",
      "OpenCL device: auto (first GPU, else any device), an index, or a substring of \"platform: device\" "
      "(shared with gpudetect elements on the same device)", DEFAULT_DEVICE, ready), &Settings::device);
  props.read_only (g_param_spec_string ("device-name", "Device name",
      "The OpenCL device in use (read-only, set once started)", nullptr, GPUDETECT_PARAM_READ_ONLY), read_device_name);
  props.field (g_param_spec_int ("search-radius", "Search radius",
      "How far a template is searched around the predicted position each way, in template pixels (an object "
      "template-size wide moves at most search-radius / template-size of its width per frame beyond the "
      "prediction)", 1, 64, DEFAULT_SEARCH_RADIUS, ready), &Settings::search_radius);
  props.field (g_param_spec_int ("template-size", "Template size",
      "Side of the square template every object is sampled to, in pixels", 8, 64, DEFAULT_TEMPLATE_SIZE, ready),
      &Settings::template_size);
  props.field (g_param_spec_uint ("max-lost", "Maximum lost frames",
      "Frames a track lives without a matching detection before it is dropped", 0, G_MAXINT, DEFAULT_MAX_LOST,
      playing), &Settings::max_lost);
  props.field (g_param_spec_double ("min-confidence", "Minimum confidence",
      "Least template-search confidence (1 - best distance / alternative distance) for a track to move and be "
      "reported on a frame; below it the track coasts on its velocity unreported", 0.0, 1.0,
      DEFAULT_MIN_CONFIDENCE, playing), &Settings::min_confidence);
  props.field (g_param_spec_double ("iou-threshold", "IoU threshold",
      "Least overlap (intersection over union) of a detection and a track's box for them to match", 0.0, 1.0,
      DEFAULT_IOU_THRESHOLD, playing), &Settings::iou_threshold);
  props.field (g_param_spec_double ("template-blend", "Template blend",
      "Weight of a matching detection's appearance in the track's template (1: replaced; less: a slow blend)",
      0.0, 1.0, DEFAULT_TEMPLATE_BLEND, playing), &Settings::template_blend);
  props.field (g_param_spec_uint ("max-tracks", "Maximum tracks",
      "Objects tracked at most: beyond it a frame's least confident detections are not tracked, and tracks no "
      "detection matched are dropped (the longest without a detection first) to make room for new ones", 1,
      G_MAXINT, DEFAULT_MAX_TRACKS, playing), &Settings::max_tracks);
  props.read_only (g_param_spec_uint64 ("tracks-dropped", "Tracks dropped",
      "Detections left untracked and tracks dropped for max-tracks since the element started (read-only)", 0,
      G_MAXUINT64, 0, GPUDETECT_PARAM_READ_ONLY), read_tracks_dropped);
  props.read_only (g_param_spec_uint64 ("frames-uploaded", "Frames uploaded",
      "Frames copied to the device since the element started (read-only)", 0, G_MAXUINT64, 0,
      GPUDETECT_PARAM_READ_ONLY), read_frames_uploaded);
  props.read_only (g_param_spec_uint64 ("frames-shared", "Frames shared",
      "Frames taken from an upstream gpudetect's upload on the same device instead of uploading them again, "
      "since the element started (read-only)", 0, G_MAXUINT64, 0, GPUDETECT_PARAM_READ_ONLY), read_frames_shared);

  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstGpuBaseTransformClass *base_class = GST_GPU_BASE_TRANSFORM_CLASS (klass);
  gst_element_class_set_static_metadata (GST_ELEMENT_CLASS (klass), "OpenCL template tracker", "Filter/Analyzer/Video",
      "Gives detected objects ids across frames and moves their boxes by template search on an OpenCL device on "
      "frames without detections", "gpudetect developers");

  trans_class->start = GST_DEBUG_FUNCPTR (gst_gpu_track_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_gpu_track_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_gpu_track_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_gpu_track_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_gpu_track_query);
  base_class->submit = GST_DEBUG_FUNCPTR (gst_gpu_track_submit);
  base_class->ready = GST_DEBUG_FUNCPTR (gst_gpu_track_ready);
  base_class->complete = GST_DEBUG_FUNCPTR (gst_gpu_track_complete);
  base_class->finish = GST_DEBUG_FUNCPTR (gst_gpu_track_finish);
  base_class->discard = GST_DEBUG_FUNCPTR (gst_gpu_track_discard);
  base_class->retire = gst_gpu_track_retire;
  base_class->host_memory = GST_DEBUG_FUNCPTR (gst_gpu_track_host_memory);

  gst_type_mark_as_plugin_api (GST_TYPE_GPU_TRACK_TYPE, static_cast<GstPluginAPIFlags> (0));
}
