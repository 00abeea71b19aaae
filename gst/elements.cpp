#include "config.h"

#include "gpudetect-elements.h"

#include <locale.h>

void gpudetect_element_init (GstPlugin *plugin)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
#ifdef ENABLE_NLS
    bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
    bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
#endif
    g_once_init_leave (&done, 1);
  }
}
