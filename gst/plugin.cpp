#include "config.h"

#include "gstgpudetect.h"
#include "gstgputrack.h"
#include "gstroijson.h"
#include "gstroioverlay.h"

static gboolean plugin_init (GstPlugin *plugin)
{
  gboolean ok = FALSE;
  ok |= GST_ELEMENT_REGISTER (gpudetect, plugin);
  ok |= GST_ELEMENT_REGISTER (roioverlay, plugin);
  ok |= GST_ELEMENT_REGISTER (gputrack, plugin);
  ok |= GST_ELEMENT_REGISTER (roijson, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpudetect,
                   "Object detection and tracking on OpenCL devices (OpenCV cascades, template search), ROI overlay and JSON output",
                   plugin_init, VERSION, "LGPL", PACKAGE_NAME, "Unknown package origin")
