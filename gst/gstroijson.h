#pragma once

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_ROI_JSON (gst_roi_json_get_type ())
G_DECLARE_FINAL_TYPE (GstRoiJson, gst_roi_json, GST, ROI_JSON, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (roijson);

G_END_DECLS
