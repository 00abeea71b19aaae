#pragma once

#include <gst/video/gstvideofilter.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_ROI_OVERLAY (gst_roi_overlay_get_type ())
G_DECLARE_FINAL_TYPE (GstRoiOverlay, gst_roi_overlay, GST, ROI_OVERLAY, GstVideoFilter)

GST_ELEMENT_REGISTER_DECLARE (roioverlay);

G_END_DECLS
