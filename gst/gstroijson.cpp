/**
 * SECTION:element-roijson
 * @title: roijson
 *
 * Writes the region-of-interest metadata of every buffer (from gpudetect,
 * gputrack or any other element) as one JSON object per line, to a file or to
 * standard output, and passes the buffer on untouched.  The layout is
 * DL Streamer's gvametaconvert's:
 * |[
 * {"timestamp":33333333,"resolution":{"width":1920,"height":1080},
 *  "objects":[{"x":700,"y":130,"w":80,"h":100,"region_id":0,"roi_type":"face",
 *              "detection":{"bounding_box":{"x_min":0.364,"y_min":0.12,"x_max":0.406,"y_max":0.213},
 *                           "confidence":0.83,"label_id":0,"label":"face",
 *                           "model_name":"lbpcascade_frontalface_improved","element_name":"gpudetect0"},
 *              "id":3}]}
 * ]|
 * (one line per buffer; shown here on several).  "timestamp" is the buffer's
 * PTS in nanoseconds (absent where it has none), "region_id" the ROI's id in
 * the buffer, "id" the object id a tracker gave (its "object_id" parameter;
 * absent where there is none), "parent_id" the region_id of the object it
 * was found inside (a gpudetect with inference-region=roi-list; absent
 * otherwise); "model_name" and "element_name" say which model and element
 * found it, where they are known.  Where the "detection" parameters are missing
 * (videoconvert and videoscale drop them in GStreamer 1.22), "detection"
 * holds the box normalised from x, y, w, h and the label from roi_type.
 * "source" is the #GstRoiJson:source property, where set.
 *
 * Every line is valid JSON whatever the metadata holds: a box corner or a
 * confidence that is not finite (NaN, infinity) is written as null; strings
 * as UTF-8, a byte that is not UTF-8 replaced by U+FFFD (gst/jsonwriter.h).
 *
 * ## Example
 * |[
 * gst-launch-1.0 filesrc location=clip.mp4 ! decodebin ! videoconvert ! gpudetect ! \
 *     roijson location=faces.jsonl ! fakesink
 * ]|
 */
#include "config.h"

#include "gstroijson.h"

#include "elementdef.h"
#include "gpudetect-elements.h"
#include "jsonwriter.h"
#include "properties.h"
#include "roimeta.h"

#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

GST_DEBUG_CATEGORY_STATIC (gst_roi_json_debug);
#define GST_CAT_DEFAULT gst_roi_json_debug

#define DEFAULT_ADD_EMPTY_RESULTS TRUE

namespace {
struct Settings {
  std::string location; // empty or "-": standard output
  std::string source;
  bool add_empty = DEFAULT_ADD_EMPTY_RESULTS;
};
} // namespace

struct GstRoiJsonPrivate {
  GpuDetectSettings<Settings> settings;
  // streaming state
  FILE *out = nullptr;
  bool own_file = false; // out is ours to close (not stdout)
  std::string where;     // the file's name in messages
  GstVideoInfo info;
  bool have_info = false;

  // An element finalized while started (never stopped) still closes its file.
  ~GstRoiJsonPrivate ()
  {
    if (out && own_file)
      std::fclose (out);
  }
};

GPUDETECT_DEFINE_ELEMENT (GstRoiJson, gst_roi_json, GstBaseTransform, GST_TYPE_BASE_TRANSFORM, roijson)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));

static void add_object (JsonWriter &j, GstVideoRegionOfInterestMeta *roi, int width, int height)
{
  j.begin_object ();
  j.key ("x");
  j.integer (roi->x);
  j.key ("y");
  j.integer (roi->y);
  j.key ("w");
  j.integer (roi->w);
  j.key ("h");
  j.integer (roi->h);
  j.key ("region_id");
  j.integer (roi->id);
  j.key ("roi_type");
  j.string (roi->roi_type ? g_quark_to_string (roi->roi_type) : "");

  j.key ("detection");
  j.begin_object ();
  const RoiDetection d = gpudetect_roi_detection (roi, width, height);
  if (d.have_box) {
    j.key ("bounding_box");
    j.begin_object ();
    j.key ("x_min");
    j.number (d.x_min);
    j.key ("y_min");
    j.number (d.y_min);
    j.key ("x_max");
    j.number (d.x_max);
    j.key ("y_max");
    j.number (d.y_max);
    j.end_object ();
  }
  if (d.confidence) {
    j.key ("confidence");
    j.number (*d.confidence);
  }
  if (d.label_id) {
    j.key ("label_id");
    j.integer (*d.label_id);
  }
  j.key ("label");
  j.string (d.label);
  if (!d.model_name.empty ()) {
    j.key ("model_name");
    j.string (d.model_name);
  }
  if (!d.element_name.empty ()) {
    j.key ("element_name");
    j.string (d.element_name);
  }
  j.end_object ();
  if (roi->parent_id >= 0) {
    j.key ("parent_id");
    j.integer (roi->parent_id);
  }

  gint64 id;
  if (gpudetect_roi_object_id (roi, &id)) {
    j.key ("id");
    j.integer (id);
  }
  j.end_object ();
}

// The buffer's line (without its newline); empty when there is nothing to
// write (no object, and add-empty-results off).
static std::string buffer_line (GstRoiJson *self, GstBuffer *buf, const Settings &s)
{
  GstRoiJsonPrivate *priv = self->priv;
  const int width = priv->have_info ? GST_VIDEO_INFO_WIDTH (&priv->info) : 0;
  const int height = priv->have_info ? GST_VIDEO_INFO_HEIGHT (&priv->info) : 0;
  guint n = 0;
  gpudetect_roi_for_each (buf, [&] (GstVideoRegionOfInterestMeta *) { n++; });
  if (n == 0 && !s.add_empty)
    return {};
  JsonWriter j;
  j.begin_object ();
  if (GST_BUFFER_PTS_IS_VALID (buf)) {
    j.key ("timestamp");
    j.integer (static_cast<gint64> (GST_BUFFER_PTS (buf)));
  }
  if (!s.source.empty ()) {
    j.key ("source");
    j.string (s.source);
  }
  if (priv->have_info) {
    j.key ("resolution");
    j.begin_object ();
    j.key ("width");
    j.integer (width);
    j.key ("height");
    j.integer (height);
    j.end_object ();
  }
  j.key ("objects");
  j.begin_array ();
  gpudetect_roi_for_each (buf, [&] (GstVideoRegionOfInterestMeta *roi) { add_object (j, roi, width, height); });
  j.end_array ();
  j.end_object ();
  return j.text ();
}

static gboolean gst_roi_json_start (GstBaseTransform *trans)
{
  GstRoiJson *self = GST_ROI_JSON (trans);
  GstRoiJsonPrivate *priv = self->priv;
  const std::string location = priv->settings.copy ().location;
  if (location.empty () || location == "-") {
    priv->out = stdout;
    priv->own_file = false;
    priv->where = "stdout";
  } else {
    priv->out = std::fopen (location.c_str (), "w");
    if (!priv->out) {
      const int err = errno;
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
                         (_("Could not open \"%s\" to write detections into."), location.c_str ()),
                         ("fopen: %s", g_strerror (err)));
      return FALSE;
    }
    priv->own_file = true;
    priv->where = location;
  }
  return TRUE;
}

static gboolean gst_roi_json_stop (GstBaseTransform *trans)
{
  GstRoiJson *self = GST_ROI_JSON (trans);
  GstRoiJsonPrivate *priv = self->priv;
  bool ok = true;
  int err = 0;
  if (priv->out && priv->own_file) {
    ok = std::fclose (priv->out) == 0;
    err = errno;
  } else if (priv->out) {
    ok = std::fflush (priv->out) == 0;
    err = errno;
  }
  priv->out = nullptr;
  priv->have_info = false;
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, (_("Could not write detections to \"%s\"."), priv->where.c_str ()),
                       ("closing: %s", g_strerror (err)));
    return FALSE;
  }
  return TRUE;
}

static gboolean gst_roi_json_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstRoiJson *self = GST_ROI_JSON (trans);
  // Any raw video, with any memory: the resolution is all we read.
  self->priv->have_info = gst_video_info_from_caps (&self->priv->info, incaps);
  if (!self->priv->have_info)
    GST_WARNING_OBJECT (self, "no video info in %" GST_PTR_FORMAT ": lines without resolution", incaps);
  return TRUE;
}

static GstFlowReturn gst_roi_json_transform_ip (GstBaseTransform *trans, GstBuffer *buf)
{
  GstRoiJson *self = GST_ROI_JSON (trans);
  GstRoiJsonPrivate *priv = self->priv;
  const Settings s = priv->settings.copy ();
  std::string line = buffer_line (self, buf, s);
  if (line.empty ())
    return GST_FLOW_OK;
  line += '\n';
  // One call per line: lines of several elements writing to stdout do not interleave.
  if (std::fwrite (line.data (), 1, line.size (), priv->out) != line.size () || std::fflush (priv->out) != 0) {
    const int err = errno;
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, (_("Could not write detections to \"%s\"."), priv->where.c_str ()),
                       ("%s", g_strerror (err)));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

static GpuDetectSettings<Settings> &settings_of (GObject *object) { return GST_ROI_JSON (object)->priv->settings; }

static void gst_roi_json_init (GstRoiJson *self)
{
  self->priv = new GstRoiJsonPrivate ();
  gst_video_info_init (&self->priv->info);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}

static void gst_roi_json_class_init (GstRoiJsonClass *klass)
{
  GST_DEBUG_CATEGORY_INIT (gst_roi_json_debug, "roijson", 0, "Region-of-interest metadata as JSON lines");

  GpuDetectProperties<Settings> props = gpudetect_element_class_init (klass, gst_roi_json_finalize, settings_of);
  props.field (g_param_spec_string ("location", "Location",
      "File to write one JSON object per buffer into (replaced if it exists); unset or \"-\": standard output",
      nullptr, GPUDETECT_PARAM_READY), &Settings::location);
  props.field (g_param_spec_string ("source", "Source",
      "Written as the \"source\" field of every line (e.g. the camera's URI); unset: no such field", nullptr,
      GPUDETECT_PARAM_PLAYING), &Settings::source);
  props.field (g_param_spec_boolean ("add-empty-results", "Add empty results",
      "Write a line for buffers without any region of interest too (an empty \"objects\" array)",
      DEFAULT_ADD_EMPTY_RESULTS, GPUDETECT_PARAM_PLAYING), &Settings::add_empty);

  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  gst_element_class_set_static_metadata (element_class, "Region of interest JSON writer", "Filter/Analyzer/Video",
      "Writes the region-of-interest metadata of every buffer (boxes, labels, confidences, object ids) as one "
      "JSON object per line, in DL Streamer's gvametaconvert layout; a number that is not finite is written as null",
      "gpudetect developers");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->passthrough_on_same_caps = TRUE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_roi_json_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_roi_json_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_roi_json_set_caps);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_roi_json_transform_ip);
}
