#include "config.h"

#include "roimeta.h"

#include <charconv>

#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

GstVideoRegionOfInterestMeta *gpudetect_roi_add (GstBuffer *buf, GQuark label, int x, int y, int w, int h,
                                                 double confidence, int label_id, int frame_width,
                                                 int frame_height, gint id, const RoiOrigin &origin)
{
  const double fw = frame_width, fh = frame_height;
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta_id (buf, label, x, y, w, h);
  roi->id = id;
  roi->parent_id = origin.parent_id;
  GstStructure *d = gst_structure_new ("detection", "x_min", G_TYPE_DOUBLE, x / fw, "y_min", G_TYPE_DOUBLE, y / fh,
                                       "x_max", G_TYPE_DOUBLE, (x + w) / fw, "y_max", G_TYPE_DOUBLE, (y + h) / fh,
                                       "confidence", G_TYPE_DOUBLE, confidence, "label_id", G_TYPE_INT, label_id,
                                       "label", G_TYPE_STRING, g_quark_to_string (label), nullptr);
  if (origin.model_name)
    gst_structure_set (d, "model_name", G_TYPE_STRING, origin.model_name, nullptr);
  if (origin.element_name)
    gst_structure_set (d, "element_name", G_TYPE_STRING, origin.element_name, nullptr);
  gst_video_region_of_interest_meta_add_param (roi, d);
#ifdef HAVE_GST_ANALYTICS
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta (buf);
  if (!rmeta)
    rmeta = gst_buffer_add_analytics_relation_meta (buf);
  GstAnalyticsODMtd od;
  if (rmeta && gst_analytics_relation_meta_add_od_mtd (rmeta, label, x, y, w, h, confidence, &od))
    roi->id = static_cast<gint> (od.id);
#endif
  return roi;
}

double gpudetect_float_field (float v)
{
  char text[32];
  const std::to_chars_result r = std::to_chars (text, text + sizeof text, v);
  double d = v;
  if (r.ec == std::errc ())
    std::from_chars (text, r.ptr, d);
  return d;
}

gint gpudetect_roi_next_id (GstBuffer *buf)
{
  gint next = 0;
  gpudetect_roi_for_each (buf, [&next] (GstVideoRegionOfInterestMeta *roi) {
    if (roi->id >= next)
      next = roi->id == G_MAXINT ? G_MAXINT : roi->id + 1;
  });
  return next;
}

void gpudetect_roi_add_tracking (GstVideoRegionOfInterestMeta *roi, guint64 object_id, double confidence,
                                 int frames_since_detection)
{
  gst_video_region_of_interest_meta_add_param (
      roi, gst_structure_new ("object_id", "id", G_TYPE_INT, static_cast<gint> (object_id & G_MAXINT), nullptr));
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("tracking", "confidence", G_TYPE_DOUBLE,
                                                                       confidence, "frames-since-detection",
                                                                       G_TYPE_INT, frames_since_detection, nullptr));
}

RoiDetection gpudetect_roi_detection (GstVideoRegionOfInterestMeta *roi, int frame_width, int frame_height)
{
  RoiDetection r;
  const GstStructure *d = gst_video_region_of_interest_meta_get_param (roi, "detection");
  if (d) {
    r.have_box = gst_structure_get_double (d, "x_min", &r.x_min) && gst_structure_get_double (d, "y_min", &r.y_min) &&
                 gst_structure_get_double (d, "x_max", &r.x_max) && gst_structure_get_double (d, "y_max", &r.y_max);
    double confidence;
    if (gst_structure_get_double (d, "confidence", &confidence))
      r.confidence = confidence;
    int label_id;
    if (gst_structure_get_int (d, "label_id", &label_id))
      r.label_id = label_id;
    if (const gchar *l = gst_structure_get_string (d, "label"))
      r.label = l;
    if (const gchar *m = gst_structure_get_string (d, "model_name"))
      r.model_name = m;
    if (const gchar *e = gst_structure_get_string (d, "element_name"))
      r.element_name = e;
  }
  if (!r.have_box && frame_width > 0 && frame_height > 0) {
    r.x_min = static_cast<double> (roi->x) / frame_width, r.y_min = static_cast<double> (roi->y) / frame_height;
    r.x_max = static_cast<double> (roi->x + roi->w) / frame_width;
    r.y_max = static_cast<double> (roi->y + roi->h) / frame_height;
    r.have_box = true;
  }
  if (!d || !gst_structure_get_string (d, "label"))
    r.label = roi->roi_type ? g_quark_to_string (roi->roi_type) : "";
  return r;
}

bool gpudetect_roi_object_id (GstVideoRegionOfInterestMeta *roi, gint64 *id)
{
  const GstStructure *o = gst_video_region_of_interest_meta_get_param (roi, "object_id");
  const GValue *v = o ? gst_structure_get_value (o, "id") : nullptr;
  if (!v)
    return false;
  if (G_VALUE_HOLDS_INT (v))
    *id = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v))
    *id = g_value_get_uint (v);
  else if (G_VALUE_HOLDS_INT64 (v))
    *id = g_value_get_int64 (v);
  else if (G_VALUE_HOLDS_UINT64 (v))
    *id = static_cast<gint64> (g_value_get_uint64 (v));
  else
    return false;
  return true;
}
