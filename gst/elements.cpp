#include "config.h"

#include "gpudetect-elements.h"

#include "cl/cl.h"

#include <locale.h>

GST_DEBUG_CATEGORY_STATIC (gpudetect_engine_debug);

// The engine's warnings (a program binary cache entry rebuilt, a cache
// folder that cannot be written: cl.h) in GStreamer's log.
static void engine_warning (const char *message)
{
  GST_CAT_WARNING (gpudetect_engine_debug, "%s", message);
}

void gpudetect_element_init (GstPlugin *plugin)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gpudetect_engine_debug, "gpudetectengine", 0, "gpudetect's engine (program cache)");
    gpudetect::cl::set_warning_handler (engine_warning);
#ifdef ENABLE_NLS
    bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
    bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
#endif
    g_once_init_leave (&done, 1);
  }
}
