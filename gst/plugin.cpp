#include "config.h"

#include "gstgpudetect.h"
#include "gstgputrack.h"
#include "gstroioverlay.h"

static gboolean plugin_init (GstPlugin *plugin)
{
  gboolean ok = FALSE;
  ok |= GST_ELEMENT_REGISTER (gpudetect, plugin);
  ok |= GST_ELEMENT_REGISTER (roioverlay, plugin);
  ok |= GST_ELEMENT_REGISTER (gputrack, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpudetect,
                   "Object detection and tracking on OpenCL devices (OpenCV cascades, template search) and ROI overlay",
                   plugin_init, VERSION, "LGPL", PACKAGE_NAME, "https://gpudetect.invalid/")
