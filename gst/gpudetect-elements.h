#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#ifdef ENABLE_NLS
#include <glib/gi18n-lib.h>
#else
#define _(s) (s)
#define N_(s) (s)
#endif

/* Shared per-plugin setup (translations), run once by every element's registration. */
void gpudetect_element_init (GstPlugin *plugin);

G_END_DECLS
