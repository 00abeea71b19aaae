/**
 * SECTION:element-gpudetect
 * @title: gpudetect
 *
 * Detects objects (faces, eyes, people, plates, ...) on any OpenCL device
 * with the model's family (OpenCV's Haar and LBP cascades, WaldBoost,
 * random-forest cascades, dlib's and OpenCV's HOG detectors, cv::dpm's part
 * models) and attaches one GstVideoRegionOfInterestMeta per object, with a
 * "detection" parameter structure (x_min, y_min, x_max, y_max normalised,
 * confidence, label_id, label; roimeta.h).  Pixels are never modified.
 *
 * Work is asynchronous (gpubasetransform.h): the upload, pyramid, detector
 * kernels and the readback of frame N run on the device while upstream
 * produces frame N+1; up to max-in-flight frames are held, in order.
 *
 * With inference-region=roi-list it searches only inside the objects that
 * elements upstream found (those whose label object-class names, at least
 * object-min-size pixels wide and high, enlarged by object-margin), all of a
 * frame's in one pass over the device, each as the object cut out as a frame
 * of its own would be searched; each object found there names the one it was
 * found in (parent_id).  Object ids are unique in the buffer across elements,
 * and every object says which model and element found it (model_name,
 * element_name).  Secondary search is for OpenCV cascades, WaldBoost and
 * random-forest cascades (docs/secondary.md).
 *
 * ## Example
 * |[
 * gst-launch-1.0 filesrc location=clip.mp4 ! decodebin ! videoconvert ! \
 *     gpudetect model=lbp-frontalface-improved min-size-width=24 min-size-height=24 ! \
 *     roioverlay ! videoconvert ! autovideosink
 * ]|
 * Eyes inside faces:
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! gpudetect model=lbp-frontalface-improved ! \
 *     gpudetect model=haar-eye inference-region=roi-list object-class=face ! \
 *     roioverlay ! videoconvert ! autovideosink
 * ]|
 */
#include "config.h"

#include "gstgpudetect.h"

#include "gpubasetransform.h"

#include "cl/shared.h"
#include "detector.h"
#include "elementdef.h"
#include "gpudetect-elements.h"
#include "gstcldevice.h"
#include "gstdeviceframe.h"
#include "properties.h"
#include "roimeta.h"

#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

GST_DEBUG_CATEGORY_STATIC (gst_gpu_detect_debug);
#define GST_CAT_DEFAULT gst_gpu_detect_debug

#define DEFAULT_MODEL "lbp-frontalface-improved"
#define DEFAULT_DEVICE "auto"
#define DEFAULT_SCALE_FACTOR 1.1
#define DEFAULT_MIN_NEIGHBORS 3
#define DEFAULT_THRESHOLD 0.0
#define DEFAULT_INFERENCE_INTERVAL 1

namespace {

struct Settings {
  std::string model = DEFAULT_MODEL;
  std::string device = DEFAULT_DEVICE;
  double scale_factor = DEFAULT_SCALE_FACTOR;
  int min_neighbors = DEFAULT_MIN_NEIGHBORS;
  int min_w = 0, min_h = 0, max_w = 0, max_h = 0;
  double threshold = DEFAULT_THRESHOLD;
  bool threshold_set = false; // else the model's own
  std::string tuning;
  guint levels_per_octave = 0, shrink = 0; // 0: the model's
  guint64 max_device_memory = 0;           // 0: the engine's default share of the device
  std::string label;
  guint interval = DEFAULT_INFERENCE_INTERVAL;
  bool skip_when_busy = false;
  int roi_x = 0, roi_y = 0, roi_w = 0, roi_h = 0;
  GstGpuDetectInferenceRegion inference_region = GST_GPU_DETECT_INFERENCE_REGION_FULL_FRAME;
  std::string object_class; // labels, comma-separated; empty: every object
  int object_min_size = 0;
  double object_margin = 0;
};

// A held buffer: its detector slot and result.
struct DetectFrame : GpuFrame {
  int ticket = -1;           // detector slot, -1 when not detected
  int roi_x = 0, roi_y = 0;  // offset of the searched region in the frame
  gpudetect::FrameResult result;
  bool detected = false;     // `result` holds the frame's objects
  std::string label;
  std::vector<gint> parents; // inference-region=roi-list: the ROI id of each searched region
};

// Adds the time from its construction to its destruction to a counter.
struct ScopeTimer {
  gint64 *total;
  gint64 t0 = g_get_monotonic_time ();
  explicit ScopeTimer (gint64 *t) : total (t) {}
  ~ScopeTimer () { *total += g_get_monotonic_time () - t0; }
  ScopeTimer (const ScopeTimer &) = delete;
  ScopeTimer &operator= (const ScopeTimer &) = delete;
};

} // namespace

struct GstGpuDetectPrivate {
  GpuDetectSettings<Settings> settings;
  bool search_changed = false; // guarded by the settings' lock
  std::string device_name;     // guarded by the settings' lock (device-name is read from any thread)

  // streaming state (streaming thread only)
  std::unique_ptr<gpudetect::Detector> detector;
  guint64 frame_count = 0;
  std::string model_name;                 // the model file's name without extension (model_name of objects)
  guint64 regions_left_out = 0;           // roi-list regions no pass had room for, all told
  guint64 lost_candidates = 0;            // windows a family's full list dropped, all told
  gint64 element_us = 0;                  // streaming thread's time in submit and output, all told
  guint64 element_frames = 0;             // buffers that went through submit
  // Whether an element downstream reads the frames from the device
  // (gputrack on the same context: gstdeviceframe.h), asked once per caps.
  bool asked_consumer = false, consumer = false;
};

GPUDETECT_DEFINE_ELEMENT (GstGpuDetect, gst_gpu_detect, GstGpuBaseTransform, GST_TYPE_GPU_BASE_TRANSFORM, gpudetect)


/* ------------------------------------------------------------------------ */
/* results → metadata and messages                                           */

static void attach_results (GstGpuDetect *self, GstBuffer *buf, const DetectFrame &p)
{
  const GstVideoInfo *info = gst_gpu_base_transform_info (GST_GPU_BASE_TRANSFORM (self));
  const GQuark label = g_quark_from_string (p.label.c_str ());
  gint id = gpudetect_roi_next_id (buf); // after the objects of elements upstream
  gchar *element = gst_object_get_name (GST_OBJECT (self));
  for (const gpudetect::Detection &d : p.result.objects) {
    RoiOrigin origin;
    origin.model_name = self->priv->model_name.c_str ();
    origin.element_name = element;
    if (d.region >= 0 && static_cast<size_t> (d.region) < p.parents.size ())
      origin.parent_id = p.parents[d.region];
    gpudetect_roi_add (buf, label, d.rect.x + p.roi_x, d.rect.y + p.roi_y, d.rect.width, d.rect.height,
                       gpudetect_float_field (d.confidence), d.label_id, GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info), id++, origin);
  }
  g_free (element);
}

// Whether `label` is one of object-class's comma-separated labels (any
// label where it is empty).
static bool object_class_matches (const std::string &classes, const char *label)
{
  if (classes.empty ())
    return true;
  size_t start = 0;
  while (start <= classes.size ()) {
    size_t end = classes.find (',', start);
    if (end == std::string::npos)
      end = classes.size ();
    std::string c = classes.substr (start, end - start);
    c.erase (0, c.find_first_not_of (" \t"));
    c.erase (c.find_last_not_of (" \t") + 1);
    if (!c.empty () && c == label)
      return true;
    start = end + 1;
  }
  return false;
}

// inference-region=roi-list: the regions to search, the objects upstream
// elements attached that object-class and object-min-size let through,
// enlarged by object-margin on every side; their ids in `parents`.
static std::vector<gpudetect::Region> upstream_regions (GstBuffer *buf, const Settings &s, std::vector<gint> *parents)
{
  std::vector<gpudetect::Region> regions;
  parents->clear ();
  gpudetect_roi_for_each (buf, [&] (GstVideoRegionOfInterestMeta *roi) {
    const char *label = roi->roi_type ? g_quark_to_string (roi->roi_type) : "";
    if (!object_class_matches (s.object_class, label))
      return;
    if (static_cast<int> (roi->w) < s.object_min_size || static_cast<int> (roi->h) < s.object_min_size)
      return;
    const double mx = roi->w * s.object_margin, my = roi->h * s.object_margin;
    const double x0 = roi->x - mx, y0 = roi->y - my, x1 = roi->x + roi->w + mx, y1 = roi->y + roi->h + my;
    auto to_int = [] (double v) { return static_cast<int> (std::clamp (std::round (v), -1e9, 1e9)); };
    regions.push_back ({to_int (x0), to_int (y0), to_int (x1) - to_int (x0), to_int (y1) - to_int (y0)});
    parents->push_back (roi->id);
  });
  return regions;
}

static void post_message (GstGpuDetect *self, GstBuffer *buf, const DetectFrame &p)
{
  gst_gpu_base_transform_post_objects (GST_GPU_BASE_TRANSFORM (self), "gpudetect", buf, p.result.objects.size (),
                                       [&] (std::vector<GstStructure *> *objects) {
    guint id = 0;
    for (const gpudetect::Detection &d : p.result.objects)
      objects->push_back (gst_gpu_base_transform_object_new (d.rect.x + p.roi_x, d.rect.y + p.roi_y, d.rect.width,
                                                             d.rect.height, p.label.c_str (), d.label_id,
                                                             gpudetect_float_field (d.confidence), id++));
  });
}

/* ------------------------------------------------------------------------ */
/* frames in flight (GstGpuBaseTransform)                                    */

static GstGpuDetect *detect_of (GstGpuBaseTransform *base) { return GST_GPU_DETECT (base); }

static gboolean gst_gpu_detect_ready (GstGpuBaseTransform *base, GpuFrame *frame)
{
  const DetectFrame &p = static_cast<const DetectFrame &> (*frame);
  return p.ticket < 0 || detect_of (base)->priv->detector->ready (p.ticket);
}

// Waits for the entry's device work (if any) and reads its result.
static gboolean gst_gpu_detect_complete (GstGpuBaseTransform *base, GpuFrame *frame)
{
  GstGpuDetect *self = detect_of (base);
  GstGpuDetectPrivate *priv = self->priv;
  ScopeTimer timer (&priv->element_us);
  DetectFrame &p = static_cast<DetectFrame &> (*frame);
  if (p.ticket < 0)
    return TRUE;
  gpudetect::Error err = priv->detector->collect (p.ticket, &p.result);
  if (err.kind == gpudetect::Error::Kind::Interrupted)
    return FALSE; // stopping: the frame stays in flight (retire)
  p.ticket = -1;
  if (err) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Detection failed on the OpenCL device.")),
                       ("%s", err.message.c_str ()));
    return FALSE;
  }
  p.detected = true;
  if (p.result.regions_left_out > 0) {
    priv->regions_left_out += p.result.regions_left_out;
    GST_WARNING_OBJECT (self, "%d objects of this frame not searched (%" G_GUINT64_FORMAT " so far): their "
                        "pyramids would take more than the 1024 levels of one pass; a larger min-size-width/height "
                        "or scale-factor, or a stricter object-class or object-min-size, leaves fewer",
                        p.result.regions_left_out, priv->regions_left_out);
  }
  if (p.result.lost > 0) {
    // a list of the family's own was full: those windows were not
    // evaluated to the end
    priv->lost_candidates += p.result.lost;
    GST_WARNING_OBJECT (self, "%u candidate windows lost in this frame (%" G_GUINT64_FORMAT " so far): %s",
                        p.result.lost, priv->lost_candidates, priv->detector->lost_hint ());
  }
  return TRUE;
}

// The completed entry's buffer, its metadata attached.
static GstBuffer *gst_gpu_detect_finish (GstGpuBaseTransform *base, GpuFrame *frame)
{
  GstGpuDetect *self = detect_of (base);
  ScopeTimer timer (&self->priv->element_us);
  DetectFrame &p = static_cast<DetectFrame &> (*frame);
  GstBuffer *buf = p.take_buffer ();
  if (p.detected) {
    if (!p.result.objects.empty ()) {
      buf = gst_buffer_make_writable (buf);
      attach_results (self, buf, p);
    }
    post_message (self, buf, p);
  }
  return buf;
}

// Drops the device work of every held frame.
static void gst_gpu_detect_discard (GstGpuBaseTransform *base)
{
  GstGpuDetectPrivate *priv = detect_of (base)->priv;
  for (std::unique_ptr<GpuFrame> &f : gst_gpu_base_transform_frames (base)) {
    DetectFrame &p = static_cast<DetectFrame &> (*f);
    if (p.ticket >= 0 && priv->detector)
      priv->detector->discard (p.ticket);
    p.ticket = -1;
  }
}

static std::shared_ptr<gpudetect::cl::HostAllocator> gst_gpu_detect_host_memory (GstGpuBaseTransform *base,
                                                                                 std::string *error)
{
  GstGpuDetectPrivate *priv = detect_of (base)->priv;
  std::shared_ptr<gpudetect::cl::HostAllocator> memory;
  if (priv->detector)
    if (gpudetect::Error e = priv->detector->host_allocator (&memory))
      *error = e.message;
  return memory;
}

/* ------------------------------------------------------------------------ */
/* GstBaseTransform                                                          */

// The detector's refusal for want of device memory: its budget
// (max-device-memory) or the device's largest allocation; the detail says
// how much, the limit and what makes it grow.
static void post_memory_error (GstGpuDetect *self, const std::string &model, const gpudetect::Error &err)
{
  const std::string shown = gpudetect::name_for_message (model);
  GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
                     (_("Not enough OpenCL device memory for detection model \"%s\"."), shown.c_str ()),
                     ("%s", err.message.c_str ()));
}

// A frame the detector did not take.
static void post_submit_error (GstGpuDetect *self, const std::string &model, const gpudetect::Error &err)
{
  if (err.kind == gpudetect::Error::Kind::Resource) // a new search region or search parameters
    post_memory_error (self, model, err);
  else
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Detection failed on the OpenCL device.")),
                       ("%s", err.message.c_str ()));
}

// A copy of the settings for the streaming thread; search parameters set
// since the last copy are handed to the detector.
static Settings take_settings (GstGpuDetect *self)
{
  GstGpuDetectPrivate *priv = self->priv;
  Settings s;
  bool search_changed;
  {
    std::lock_guard<std::mutex> g (priv->settings.lock);
    s = priv->settings.values;
    search_changed = priv->search_changed;
    priv->search_changed = false;
  }
  if (search_changed) {
    priv->detector->set_search (s.scale_factor, {s.min_w, s.min_h}, {s.max_w, s.max_h});
    priv->detector->set_min_neighbors (s.min_neighbors);
    priv->detector->set_threshold (s.threshold_set ? std::optional<double> (s.threshold) : std::nullopt);
  }
  return s;
}

// The searched region of a W x H frame (roi-* properties, clamped to it).
struct Region {
  int x = 0, y = 0, width = 0, height = 0;
};
static Region search_region (const Settings &s, int W, int H)
{
  Region r;
  r.x = std::clamp (s.roi_x, 0, W);
  r.y = std::clamp (s.roi_y, 0, H);
  r.width = s.roi_w > 0 ? std::min (s.roi_w, W - r.x) : W - r.x;
  r.height = s.roi_h > 0 ? std::min (s.roi_h, H - r.y) : H - r.y;
  return r;
}

// A model that cannot be used, said for people: whether the name found no
// file, found something that is not a regular file (saying what), or a file
// that does not load; long names cut (the detail too says why).
static void post_model_error (GstGpuDetect *self, const std::string &model, const char *detail)
{
  using gpudetect::FileKind;
  const std::string shown = gpudetect::name_for_message (model);
  const char *name = shown.c_str ();
  if (!gpudetect::resolve_model (model).empty ()) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ, (_("Could not load detection model \"%s\"."), name), ("%s", detail));
    return;
  }
  switch (gpudetect::unresolved_model (model)) {
  case FileKind::Directory:
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, (_("Detection model \"%s\" is a directory, not a file."), name),
                       ("%s", detail));
    break;
  case FileKind::Fifo:
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, (_("Detection model \"%s\" is a FIFO, not a regular file."), name),
                       ("%s", detail));
    break;
  case FileKind::CharDevice:
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
                       (_("Detection model \"%s\" is a character device, not a regular file."), name), ("%s", detail));
    break;
  case FileKind::BlockDevice:
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
                       (_("Detection model \"%s\" is a block device, not a regular file."), name), ("%s", detail));
    break;
  case FileKind::Socket:
  case FileKind::Other:
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, (_("Detection model \"%s\" is not a regular file."), name),
                       ("%s", detail));
    break;
  default: // missing, or a name too long for a path
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, (_("Could not find detection model \"%s\"."), name),
                       ("%s", detail));
    break;
  }
}

// A gpudetect upstream asks whether its frames are read on the device: this
// one reads them, searching inside its objects on the same context.
static gboolean gst_gpu_detect_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  GstGpuDetect *self = GST_GPU_DETECT (trans);
  if (direction == GST_PAD_SINK) {
    cl_context c = gpudetect_frame_query_context (query);
    if (c && self->priv->detector && c == self->priv->detector->context () &&
        self->priv->settings.copy ().inference_region == GST_GPU_DETECT_INFERENCE_REGION_ROI_LIST) {
      gpudetect_frame_query_answer (query);
      return TRUE;
    }
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction, query);
}

static gboolean gst_gpu_detect_start (GstBaseTransform *trans)
{
  GstGpuDetect *self = GST_GPU_DETECT (trans);
  GstGpuDetectPrivate *priv = self->priv;
  gpudetect::DetectorConfig cfg;
  {
    std::lock_guard<std::mutex> g (priv->settings.lock);
    const Settings &s = priv->settings.values;
    cfg.model = s.model;
    cfg.device = s.device;
    cfg.scale_factor = s.scale_factor;
    cfg.min_neighbors = s.min_neighbors;
    cfg.min_size = {s.min_w, s.min_h};
    cfg.max_size = {s.max_w, s.max_h};
    cfg.slots = 0; // below: max-in-flight as the base holds it
    if (s.threshold_set)
      cfg.threshold = s.threshold;
    cfg.tuning = s.tuning;
    cfg.levels_per_octave = static_cast<int> (s.levels_per_octave);
    cfg.shrink = static_cast<int> (s.shrink);
    cfg.max_device_memory = s.max_device_memory;
    // Frames are uploaded straight from the buffers, which stay mapped and
    // referenced in the FIFO until the device is done with them.
    cfg.direct_upload = true;
    // Each frame in a device buffer of its own while gputrack reads it.
    cfg.share_frames = true;
    priv->search_changed = false;
  }
  GstGpuBaseTransform *base = GST_GPU_BASE_TRANSFORM (trans);
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->start (trans))
    return FALSE;
  cfg.slots = static_cast<int> (gst_gpu_base_transform_max_in_flight (base));
  cfg.interrupt = gst_gpu_base_transform_interrupt (base);
  const GpuDetectSharedDevice device = gst_gpu_base_transform_open_device (base, cfg.device);
  if (!device)
    return FALSE;
  cfg.share = device.get ();
  gpudetect::Error err;
  {
    auto report = gst_gpu_base_transform_report_builds (base, GST_CAT_DEFAULT, gpudetect::name_for_message (cfg.model));
    err = gpudetect::Detector::create (cfg, &priv->detector);
  }
  if (err) {
    const char *detail = err.message.c_str ();
    switch (err.kind) {
    case gpudetect::Error::Kind::Model:
      post_model_error (self, cfg.model, detail);
      break;
    case gpudetect::Error::Kind::Device:
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE, (_("No usable OpenCL device found.")), ("%s", detail));
      break;
    case gpudetect::Error::Kind::Build:
      GST_ELEMENT_ERROR (self, LIBRARY, INIT, (_("Could not build the OpenCL detection kernels.")),
                         ("%s", detail));
      break;
    case gpudetect::Error::Kind::Resource:
      post_memory_error (self, cfg.model, err);
      break;
    default:
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Could not set up object detection.")), ("%s", detail));
      break;
    }
    return FALSE;
  }
  {
    std::lock_guard<std::mutex> g (priv->settings.lock);
    if (priv->settings.values.inference_region == GST_GPU_DETECT_INFERENCE_REGION_ROI_LIST &&
        !priv->detector->searches_regions ()) {
      const std::string shown = gpudetect::name_for_message (priv->settings.values.model);
      GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
                         (_("Detection model \"%s\" can only search whole frames, not inside other objects."),
                          shown.c_str ()),
                         ("inference-region=roi-list is for OpenCV cascades, WaldBoost and random-forest models; this model is of "
                          "the %s family", priv->detector->model ().family.c_str ()));
      priv->detector.reset ();
      return FALSE;
    }
  }
  {
    const std::string &path = priv->detector->model ().path;
    std::string name = path.substr (path.rfind ('/') + 1);
    priv->model_name = name.substr (0, name.rfind ('.'));
  }
  priv->regions_left_out = 0;
  const std::string device_name = priv->detector->device ().describe ();
  {
    std::lock_guard<std::mutex> g (priv->settings.lock);
    priv->device_name = device_name;
  }
  GST_INFO_OBJECT (self, "model %s on %s%s", priv->detector->model ().path.c_str (), device_name.c_str (),
                   priv->detector->built_from_cache () ? " (kernels from cache)" : "");
  priv->frame_count = 0;
  priv->lost_candidates = 0;
  return TRUE;
}

// The detector, for the device to finish its frames in flight without the
// element waiting (the base's stop()).
static std::function<void ()> gst_gpu_detect_retire (GstGpuBaseTransform *base)
{
  std::shared_ptr<gpudetect::Detector> detector (std::move (detect_of (base)->priv->detector));
  return [detector] () {
    if (detector)
      detector->wait_idle ();
  };
}

static gboolean gst_gpu_detect_stop (GstBaseTransform *trans)
{
  GstGpuDetect *self = GST_GPU_DETECT (trans);
  if (self->priv->detector) {
    // Where the streaming thread's time went (GST_DEBUG=gpudetect:4).
    const gpudetect::Detector::HostTimes t = self->priv->detector->host_times ();
    if (t.frames > 0)
      GST_INFO_OBJECT (self, "%" G_GUINT64_FORMAT " frames detected; per frame: %.1f us copying into staging memory, "
                       "%.1f us enqueueing, %.1f us waiting for the device", t.frames, t.copy_us / t.frames,
                       t.enqueue_us / t.frames, t.wait_us / t.frames);
    GST_INFO_OBJECT (self, "%" G_GUINT64_FORMAT " candidate windows lost to full lists of the family's own",
                     self->priv->lost_candidates);
  }
  if (self->priv->element_frames > 0)
    GST_INFO_OBJECT (self, "%" G_GUINT64_FORMAT " buffers; per buffer %.1f us in the element (submit and output, "
                     "all told)", self->priv->element_frames,
                     static_cast<double> (self->priv->element_us) / self->priv->element_frames);
  self->priv->element_us = 0;
  self->priv->element_frames = 0;
  // in-flight work dropped (or retired) while the detector exists
  GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
  self->priv->detector.reset ();
  return TRUE;
}

static gpudetect::PixelFormat pixel_format (GstVideoFormat f)
{
  switch (f) {
  case GST_VIDEO_FORMAT_RGBA: return gpudetect::PixelFormat::Rgba;
  case GST_VIDEO_FORMAT_BGRA: return gpudetect::PixelFormat::Bgra;
  case GST_VIDEO_FORMAT_RGBx: return gpudetect::PixelFormat::Rgbx;
  case GST_VIDEO_FORMAT_BGRx: return gpudetect::PixelFormat::Bgrx;
  default: return gpudetect::PixelFormat::Gray8; // GRAY8 and the Y plane of NV12 / I420
  }
}

// Formats beyond the pad templates' never get here: negotiation refuses them.
// What frames of the new size need on the device is allocated here, so that
// a model and frame size past the memory budget fail negotiation with their
// own error, not the first frame.
static gboolean gst_gpu_detect_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstGpuDetect *self = GST_GPU_DETECT (trans);
  GstGpuDetectPrivate *priv = self->priv;
  priv->asked_consumer = false;
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->set_caps (trans, incaps, outcaps))
    return FALSE;
  const GstVideoInfo *info = gst_gpu_base_transform_info (GST_GPU_BASE_TRANSFORM (self));
  if (!priv->detector)
    return TRUE;
  const Settings s = take_settings (self);
  const Region r = search_region (s, GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info));
  if (r.width <= 0 || r.height <= 0)
    return TRUE;
  if (gpudetect::Error err = priv->detector->prepare (r.width, r.height, pixel_format (GST_VIDEO_INFO_FORMAT (info)))) {
    if (err.kind == gpudetect::Error::Kind::Resource)
      post_memory_error (self, s.model, err);
    else
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Detection failed on the OpenCL device.")),
                         ("%s", err.message.c_str ()));
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "%dx%d frames: %" G_GUINT64_FORMAT " bytes of device memory of %" G_GUINT64_FORMAT
                    " allowed", r.width, r.height, priv->detector->device_memory (),
                    priv->detector->device_memory_limit ());
  return TRUE;
}

// Every input buffer is held; its detection is submitted when it is to be
// detected.
static GstFlowReturn gst_gpu_detect_submit (GstGpuBaseTransform *base, GstBuffer *buf, std::unique_ptr<GpuFrame> *out)
{
  GstGpuDetect *self = detect_of (base);
  GstBaseTransform *trans = GST_BASE_TRANSFORM (base);
  GstGpuDetectPrivate *priv = self->priv;
  ScopeTimer timer (&priv->element_us);
  priv->element_frames++;
  auto entry = std::make_unique<DetectFrame> ();
  DetectFrame &p = *entry;
  p.buffer = buf;
  p.done = true; // until device work is submitted for it
  if (!priv->detector) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (_("Unsupported video format.")), ("no caps before the first buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const Settings s = take_settings (self);
  p.label = s.label.empty () ? priv->detector->model ().label : s.label;
  const guint64 n = priv->frame_count++;
  bool detect = n % std::max<guint> (s.interval, 1) == 0;
  if (detect && gst_gpu_base_transform_is_late (base, buf)) {
    detect = false;
    gst_gpu_base_transform_report_skip (base, buf);
  }
  if (detect && priv->detector->free_slots () == 0 && s.skip_when_busy)
    detect = false;
  if (detect && !priv->asked_consumer) {
    GstQuery *q = gpudetect_frame_query_new (priv->detector->context ());
    priv->consumer = gst_pad_peer_query (GST_BASE_TRANSFORM_SRC_PAD (trans), q) && gpudetect_frame_query_answered (q);
    gst_query_unref (q);
    priv->asked_consumer = true;
    GST_DEBUG_OBJECT (self, "frames %s on the device downstream", priv->consumer ? "read" : "not read");
  }
  if (detect) {
    if (!gst_gpu_base_transform_make_room (base, [priv] { return priv->detector->free_slots () > 0; }))
      return gst_gpu_base_transform_stopping (base) ? GST_FLOW_FLUSHING : GST_FLOW_ERROR;
    const bool roi_list = s.inference_region == GST_GPU_DETECT_INFERENCE_REGION_ROI_LIST;
    std::vector<gpudetect::Region> regions;
    if (roi_list) {
      regions = upstream_regions (buf, s, &p.parents);
      if (regions.empty ()) { // nothing to search in: no objects
        p.detected = true;
        gst_gpu_base_transform_count_processed (base);
        *out = std::move (entry);
        return GST_FLOW_OK;
      }
    }
    // The frame the gpudetect before this one left on the device (on the
    // same context, which answered its query): searched where it lies.
    std::shared_ptr<const gpudetect::DeviceFrame> device;
    if (roi_list)
      device = gst_buffer_get_gpu_detect_frame (buf, priv->detector->context ());
    if (device && gpudetect_device_frame_matches (*device, gst_gpu_base_transform_info (base))) {
      if (gpudetect::Error err = priv->detector->submit (std::move (device), regions, &p.ticket)) {
        post_submit_error (self, s.model, err);
        return GST_FLOW_ERROR;
      }
      p.done = false;
      gst_gpu_base_transform_count_processed (base);
      *out = std::move (entry);
      return GST_FLOW_OK;
    }
    const bool full_frame = roi_list || (s.roi_x <= 0 && s.roi_y <= 0 && s.roi_w <= 0 && s.roi_h <= 0);
    const bool share = priv->consumer && full_frame;
    if (share)
      p.buffer = buf = gst_buffer_make_writable (buf); // for the frame's meta
    GstVideoFrame &frame = p.video;
    // sharing: the entry's reference keeps the buffer, which stays writable
    // for the frame's meta
    const GstMapFlags flags =
        share ? static_cast<GstMapFlags> (GST_MAP_READ | GST_VIDEO_FRAME_MAP_FLAG_NO_REF) : GST_MAP_READ;
    if (!gst_gpu_base_transform_map (base, &p, flags))
      return GST_FLOW_ERROR;
    const Region r = roi_list ? Region{0, 0, GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame)}
                              : search_region (s, GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame));
    const int rx = r.x, ry = r.y, rw = r.width, rh = r.height;
    gpudetect::Frame f;
    f.format = pixel_format (GST_VIDEO_FRAME_FORMAT (&frame));
    const int bpp = f.format == gpudetect::PixelFormat::Gray8 ? 1 : 4;
    f.stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
    f.data = static_cast<const uint8_t *> (GST_VIDEO_FRAME_PLANE_DATA (&frame, 0)) + ry * f.stride + rx * bpp;
    f.width = rw;
    f.height = rh;
    const GstVideoFormat vf = GST_VIDEO_FRAME_FORMAT (&frame);
    if (share && (vf == GST_VIDEO_FORMAT_NV12 || vf == GST_VIDEO_FORMAT_I420)) {
      // the chroma too, for gputrack's colour
      f.chroma = vf == GST_VIDEO_FORMAT_NV12 ? gpudetect::ChromaLayout::Nv12 : gpudetect::ChromaLayout::I420;
      for (guint i = 1; i < GST_VIDEO_FRAME_N_PLANES (&frame) && i < 3; i++) {
        f.chroma_data[i - 1] = static_cast<const uint8_t *> (GST_VIDEO_FRAME_PLANE_DATA (&frame, i));
        f.chroma_stride[i - 1] = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, i);
      }
    }
    gpudetect::Error err;
    if (rw > 0 && rh > 0)
      err = roi_list ? priv->detector->submit (f, regions, &p.ticket) : priv->detector->submit (f, &p.ticket);
    if (share && p.ticket >= 0)
      gst_buffer_add_gpu_detect_frame_meta (buf, priv->detector->device_frame (p.ticket));
    if (p.ticket >= 0)
      gst_gpu_base_transform_count_upload (base, buf);
    else
      p.unmap (); // nothing in flight reads it
    if (err) {
      post_submit_error (self, s.model, err);
      return GST_FLOW_ERROR;
    }
    p.roi_x = rx;
    p.roi_y = ry;
    p.done = p.ticket < 0;
    p.detected = p.ticket < 0; // an empty search region detects nothing
    gst_gpu_base_transform_count_processed (base);
  }
  *out = std::move (entry);
  return GST_FLOW_OK;
}

/* ------------------------------------------------------------------------ */
/* properties                                                                */

static GpuDetectSettings<Settings> &settings_of (GObject *object) { return GST_GPU_DETECT (object)->priv->settings; }

// The search parameters changed: the detector takes them with the next frame.
static void search_changed (GObject *object, Settings &) { GST_GPU_DETECT (object)->priv->search_changed = true; }

static void threshold_changed (GObject *object, Settings &s)
{
  s.threshold_set = true;
  search_changed (object, s);
}

static void read_device_name (GObject *object, GValue *value)
{
  const std::string &name = GST_GPU_DETECT (object)->priv->device_name;
  g_value_set_string (value, name.empty () ? nullptr : name.c_str ());
}

static void read_program_builds (GObject *object, GValue *value)
{
  GpuDetectSharedDevice d = gst_gpu_base_transform_device_slot (GST_GPU_BASE_TRANSFORM (object))->get ();
  g_value_set_uint64 (value, d ? gpudetect::cl::program_builds (*d) : 0);
}

static void gst_gpu_detect_init (GstGpuDetect *self)
{
  self->priv = new GstGpuDetectPrivate ();
  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self), TRUE); // late frames pass undetected
}

static void gst_gpu_detect_class_init (GstGpuDetectClass *klass)
{
  GST_DEBUG_CATEGORY_INIT (gst_gpu_detect_debug, "gpudetect", 0, "OpenCL object detection");

  GpuDetectProperties<Settings> props = gpudetect_element_class_init (klass, gst_gpu_detect_finalize, settings_of);
  const GParamFlags ready = GPUDETECT_PARAM_READY, playing = GPUDETECT_PARAM_PLAYING;
  props.field (g_param_spec_string ("model", "Model",
      "Detection model of any family (OpenCV cascade, WaldBoost, random forest, HOG filter, cv::dpm): a path, a "
      "file name on the model search path, or a short name such as lbp-frontalface-improved, "
      "haar-frontalface-default, dlib-frontalface or hog-people (search path: $GPUDETECT_MODEL_PATH, the "
      "project's models, /usr/share/opencv4/{haar,lbp}cascades)", DEFAULT_MODEL, ready), &Settings::model);
  props.field (g_param_spec_string ("device", "Device",
      "OpenCL device: auto (first GPU, else any device), an index, or a substring of \"platform: device\"",
      DEFAULT_DEVICE, ready), &Settings::device);
  props.read_only (g_param_spec_string ("device-name", "Device name",
      "The OpenCL device in use (read-only, set once started)", nullptr, GPUDETECT_PARAM_READ_ONLY), read_device_name);
  props.read_only (g_param_spec_uint64 ("program-builds", "Program builds",
      "OpenCL programs built so far on this element's device (context) in this process, by every element "
      "sharing it: elements with the same model and options build their program once (read-only; 0 before "
      "the element starts)", 0, G_MAXUINT64, 0, GPUDETECT_PARAM_READ_ONLY), read_program_builds);
  props.field (g_param_spec_double ("scale-factor", "Scale factor", "Pyramid scale step between detection window sizes",
      1.01, 10.0, DEFAULT_SCALE_FACTOR, playing), &Settings::scale_factor, search_changed);
  props.field (g_param_spec_int ("min-neighbors", "Minimum neighbors",
      "Raw windows an object needs beyond one to be reported (0: report raw windows ungrouped)", 0, 1000,
      DEFAULT_MIN_NEIGHBORS, playing), &Settings::min_neighbors, search_changed);
  props.field (g_param_spec_int ("min-size-width", "Minimum width",
      "Smallest object width in pixels (0: the model's window)", 0, G_MAXINT, 0, playing), &Settings::min_w,
      search_changed);
  props.field (g_param_spec_int ("min-size-height", "Minimum height",
      "Smallest object height in pixels (0: the model's window)", 0, G_MAXINT, 0, playing), &Settings::min_h,
      search_changed);
  props.field (g_param_spec_int ("max-size-width", "Maximum width", "Largest object width in pixels (0: unbounded)",
      0, G_MAXINT, 0, playing), &Settings::max_w, search_changed);
  props.field (g_param_spec_int ("max-size-height", "Maximum height", "Largest object height in pixels (0: unbounded)",
      0, G_MAXINT, 0, playing), &Settings::max_h, search_changed);
  props.field (g_param_spec_double ("threshold", "Threshold",
      "Decision threshold, as the model's family defines it: OpenCV cascades, the least confidence of a "
      "reported object (n / (n + 4) for n merged windows); WaldBoost and random-forest cascades, the least "
      "final sum of a window that passes every stage; linear HOG filters, the least confidence (filter score "
      "minus its bias, dlib's adjust_threshold) of an object. "
      "Until set: the model's own (0 for cascades)", -G_MAXDOUBLE, G_MAXDOUBLE, DEFAULT_THRESHOLD, playing),
      &Settings::threshold, threshold_changed);
  props.field (g_param_spec_string ("label", "Label",
      "Label of detected objects (default: derived from the model, e.g. face)", nullptr, playing), &Settings::label);
  props.field (g_param_spec_uint ("inference-interval", "Inference interval",
      "Detect on every Nth frame; the others pass through without metadata", 1, G_MAXUINT,
      DEFAULT_INFERENCE_INTERVAL, playing), &Settings::interval);
  props.field (g_param_spec_boolean ("skip-when-busy", "Skip when busy",
      "Pass frames through undetected when every device slot is busy instead of waiting (live sources)", FALSE,
      playing), &Settings::skip_when_busy);
  props.field (g_param_spec_int ("roi-x", "Search region x", "Left edge of the searched region", 0, G_MAXINT, 0,
      playing), &Settings::roi_x);
  props.field (g_param_spec_int ("roi-y", "Search region y", "Top edge of the searched region", 0, G_MAXINT, 0,
      playing), &Settings::roi_y);
  props.field (g_param_spec_int ("roi-width", "Search region width",
      "Width of the searched region (0: to the right edge)", 0, G_MAXINT, 0, playing), &Settings::roi_w);
  props.field (g_param_spec_int ("roi-height", "Search region height",
      "Height of the searched region (0: to the bottom edge)", 0, G_MAXINT, 0, playing), &Settings::roi_h);
  props.field (g_param_spec_enum ("inference-region", "Inference region",
      "Where to search: the whole frame (or the roi-* rectangle), or inside the objects that elements upstream "
      "found (roi-list; object-class, object-min-size and object-margin pick and enlarge them)",
      GST_TYPE_GPU_DETECT_INFERENCE_REGION, GST_GPU_DETECT_INFERENCE_REGION_FULL_FRAME, ready),
      &Settings::inference_region);
  props.field (g_param_spec_string ("object-class", "Object class",
      "inference-region=roi-list: the labels of the upstream objects to search in, comma-separated "
      "(e.g. face,person); empty: every object", "", playing), &Settings::object_class);
  props.field (g_param_spec_int ("object-min-size", "Object minimum size",
      "inference-region=roi-list: upstream objects narrower or lower than this many pixels are not searched",
      0, G_MAXINT, 0, playing), &Settings::object_min_size);
  props.field (g_param_spec_double ("object-margin", "Object margin",
      "inference-region=roi-list: each upstream object is searched enlarged on every side by this fraction of "
      "its width and height (clipped to the frame)", 0.0, 10.0, 0.0, playing), &Settings::object_margin);
  props.field (g_param_spec_string ("tuning", "Tuning",
      "Expert knobs of the engine, \"key=value;key=value\" (README, Tuning): the schedule, the upload queue, "
      "the WaldBoost reduction divisors, ...; empty: the measured defaults", "", ready), &Settings::tuning);
  props.field (g_param_spec_uint ("levels-per-octave", "Levels per octave",
      "Random-forest cascades: pyramid levels per halving of the frame size (scale step 2^(1/N)); "
      "0: the model's", 0, 32, 0, ready), &Settings::levels_per_octave);
  props.field (g_param_spec_uint ("shrink", "Shrink",
      "Random-forest cascades: the side in level pixels of the blocks the trees compare (the window keeps its "
      "blocks, so it grows with it); 0: the model's", 0, 8, 0, ready), &Settings::shrink);
  props.field (g_param_spec_uint64 ("max-device-memory", "Maximum device memory",
      "Bytes of OpenCL device memory the detector may hold: the model's constants, its planes for the frame size "
      "and the frames in flight. A model and frame size that need more fail when the element starts or its caps "
      "are set, with a resource error that says how much they need. 0: half the device's global memory (of a CPU device, at most half the process's address-space limit)",
      0, G_MAXUINT64, 0, ready), &Settings::max_device_memory);

  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstGpuBaseTransformClass *base_class = GST_GPU_BASE_TRANSFORM_CLASS (klass);
  gst_element_class_set_static_metadata (GST_ELEMENT_CLASS (klass), "OpenCL object detector", "Filter/Analyzer/Video",
      "Detects objects on an OpenCL device (OpenCV's Haar and LBP cascades, WaldBoost, random-forest cascades, "
      "dlib's and OpenCV's HOG detectors, cv::dpm's part models) and attaches region-of-interest metadata",
      "gpudetect developers");

  trans_class->start = GST_DEBUG_FUNCPTR (gst_gpu_detect_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_gpu_detect_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_gpu_detect_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_gpu_detect_query);
  base_class->submit = GST_DEBUG_FUNCPTR (gst_gpu_detect_submit);
  base_class->ready = GST_DEBUG_FUNCPTR (gst_gpu_detect_ready);
  base_class->complete = GST_DEBUG_FUNCPTR (gst_gpu_detect_complete);
  base_class->finish = GST_DEBUG_FUNCPTR (gst_gpu_detect_finish);
  base_class->discard = GST_DEBUG_FUNCPTR (gst_gpu_detect_discard);
  base_class->retire = gst_gpu_detect_retire;
  base_class->host_memory = GST_DEBUG_FUNCPTR (gst_gpu_detect_host_memory);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_DETECT_INFERENCE_REGION, static_cast<GstPluginAPIFlags> (0));
}

GType gst_gpu_detect_inference_region_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
      {GST_GPU_DETECT_INFERENCE_REGION_FULL_FRAME, "The whole frame (or the roi-* rectangle)", "full-frame"},
      {GST_GPU_DETECT_INFERENCE_REGION_ROI_LIST, "Inside the objects elements upstream found", "roi-list"},
      {0, nullptr, nullptr},
  };
  return gpudetect_enum_register (&type, "GstGpuDetectInferenceRegion", values);
}
