// The metadata contract of the plugin's elements, written and read here only
// (docs/ARCHITECTURE.md, "Metadata"):
// - one GstVideoRegionOfInterestMeta per object: roi_type the label's quark,
//   x/y/w/h in pixels, id unique in the buffer;
// - its "detection" parameter, DL Streamer's fields: x_min, y_min, x_max,
//   y_max (doubles, normalised by the frame size), confidence (double 0-1),
//   label_id (int), label (string); and who made it: model_name (the model
//   file's name without its extension) and element_name (the element's);
// - parent_id: the id of the object it was found inside (a gpudetect with
//   inference-region=roi-list), else -1;
// - a tracker's "object_id" parameter (id: int) and "tracking" parameter
//   (confidence: the template search's, frames-since-detection: int);
// - where built against GStreamer >= 1.24 (analytics option), an object
//   detection GstAnalyticsODMtd per object too, the ROI's id its mtd's id.
// Readers take what they find: converters of GStreamer 1.22 drop the
// parameters, so a box and its label come from x/y/w/h and roi_type alone
// then, and an object id may have been written with any integer type.
#pragma once

#include <gst/video/gstvideometa.h>

#include <optional>
#include <string>

// One object's "detection" parameter as read back.
struct RoiDetection {
  double x_min = 0, y_min = 0, x_max = 0, y_max = 0;
  bool have_box = false;
  std::optional<double> confidence;
  std::optional<int> label_id;
  std::string label; // the parameter's, else roi_type's
  std::string model_name, element_name; // empty where absent
};

// Who made an object, and inside which (written with it).
struct RoiOrigin {
  const char *model_name = nullptr;   // null: not written
  const char *element_name = nullptr; // null: not written
  gint parent_id = -1;
};

// Adds an object (its ROI meta with the "detection" parameter, and the
// analytics mtd where built) to a writable buffer; `id` is the ROI's id
// where no analytics mtd gives one.
GstVideoRegionOfInterestMeta *gpudetect_roi_add (GstBuffer *buf, GQuark label, int x, int y, int w, int h,
                                                 double confidence, int label_id, int frame_width,
                                                 int frame_height, gint id, const RoiOrigin &origin = {});

// A float as the double of its shortest decimal (0.9166667f gives 0.9166667,
// not 0.9166666865348816), for fields that JSON and logs print: the engine
// computes confidences in single precision.
double gpudetect_float_field (float v);

// An id for the next object added to the buffer: one more than the largest
// ROI id on it (0 on a buffer without ROIs), so that objects of several
// elements keep ids unique in the buffer.
gint gpudetect_roi_next_id (GstBuffer *buf);

// Adds a tracker's parameters to an object.
void gpudetect_roi_add_tracking (GstVideoRegionOfInterestMeta *roi, guint64 object_id, double confidence,
                                 int frames_since_detection);

// The object's "detection" parameter (box normalised by the frame's size
// from x/y/w/h where the parameter lacks it and the size is known; label
// from roi_type where it lacks one).
RoiDetection gpudetect_roi_detection (GstVideoRegionOfInterestMeta *roi, int frame_width = 0, int frame_height = 0);

// A tracker's object id, of whichever integer type it was written with;
// false where the object has none.
bool gpudetect_roi_object_id (GstVideoRegionOfInterestMeta *roi, gint64 *id);

// Calls f (roi) for each ROI meta of the buffer, in order.
template <typename F> void gpudetect_roi_for_each (GstBuffer *buf, F f)
{
  gpointer state = nullptr;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    f (reinterpret_cast<GstVideoRegionOfInterestMeta *> (meta));
}
