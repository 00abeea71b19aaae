/* gpudetect-launch: runs a gst-launch style pipeline and prints every
 * "gpudetect" (and "gputrack") element message as one line of text (default) or JSON.
 *
 *   gpudetect-launch [--json] [--fps] PIPELINE-DESCRIPTION...
 *
 * --fps: the pipeline's steady-state frame rate at the element named "sink"
 * (e.g. fakesink name=sink sync=false), from its first buffer to its last, so
 * that start-up (device and kernel set-up) is not counted; and the CPU time
 * per frame of the thread that pushes buffers into the sink over the same
 * span (in a pipeline without queues, the thread that decodes and runs
 * gpudetect), which time the host's other load does not lengthen.
 *
 * Exits 0 at EOS, 1 on a pipeline error (the error is printed), 2 on usage.
 * Also an example of reading gpudetect's results from an application's bus.
 */
#include <gst/gst.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static gboolean json = FALSE;
static guint64 frames = 0;
static gint64 first_us = 0, last_us = 0;
static double first_cpu_ms = 0, last_cpu_ms = 0;

static void on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer data)
{
  gint64 now = g_get_monotonic_time ();
  struct timespec cpu;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &cpu);
  double cpu_ms = cpu.tv_sec * 1e3 + cpu.tv_nsec / 1e6;
  if (frames++ == 0) {
    first_us = now;
    first_cpu_ms = cpu_ms;
  }
  last_us = now;
  last_cpu_ms = cpu_ms;
}

static void print_objects (const GstStructure *s)
{
  guint64 ts = 0;
  gst_structure_get_uint64 (s, "timestamp", &ts);
  const GValue *objs = gst_structure_get_value (s, "objects");
  const gboolean tracked = gst_structure_has_name (s, "gputrack"); /* "id": the object's id across frames */
  guint n = objs ? gst_value_list_get_size (objs) : 0;
  if (json)
    printf ("{\"timestamp\": %" G_GUINT64_FORMAT ", \"objects\": [", ts);
  else
    printf ("%" GST_TIME_FORMAT "  %u object%s", GST_TIME_ARGS (ts), n, n == 1 ? "" : "s");
  for (guint i = 0; i < n; i++) {
    const GstStructure *o = gst_value_get_structure (gst_value_list_get_value (objs, i));
    guint x = 0, y = 0, w = 0, h = 0, id = 0;
    gdouble conf = 0;
    gst_structure_get (o, "x", G_TYPE_UINT, &x, "y", G_TYPE_UINT, &y, "width", G_TYPE_UINT, &w, "height",
        G_TYPE_UINT, &h, "confidence", G_TYPE_DOUBLE, &conf, "id", G_TYPE_UINT, &id, NULL);
    const gchar *label = gst_structure_get_string (o, "label");
    if (json)
      printf ("%s{\"label\": \"%s\", \"x\": %u, \"y\": %u, \"width\": %u, \"height\": %u, \"confidence\": %.3f}",
          i ? ", " : "", label ? label : "", x, y, w, h, conf);
    else if (tracked)
      printf ("%s %s #%u %.2f at %u,%u %ux%u", i ? ";" : ":", label ? label : "", id, conf, x, y, w, h);
    else
      printf ("%s %s %.2f at %u,%u %ux%u", i ? ";" : ":", label ? label : "", conf, x, y, w, h);
  }
  printf (json ? "]}\n" : "\n");
  fflush (stdout);
}

#define USAGE                                                                                              \
  "usage: %s [--json] [--fps] PIPELINE-DESCRIPTION...\n"                                                   \
  "Runs the pipeline and prints each gpudetect and gputrack element message (posted as their message-mode\n" \
  "says) as a line of text, or of JSON with --json; --fps: the frame rate at the element named \"sink\".\n"

int main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  int first = 1;
  gboolean fps = FALSE;
  for (; first < argc; first++) {
    if (strcmp (argv[first], "--json") == 0)
      json = TRUE;
    else if (strcmp (argv[first], "--fps") == 0)
      fps = TRUE;
    else if (strcmp (argv[first], "-h") == 0 || strcmp (argv[first], "--help") == 0) {
      printf (USAGE, argv[0]);
      return 0;
    } else if (strncmp (argv[first], "--", 2) == 0) {
      fprintf (stderr, "unknown option %s\n" USAGE, argv[first], argv[0]);
      return 2;
    } else
      break;
  }
  if (argc <= first) {
    fprintf (stderr, USAGE, argv[0]);
    return 2;
  }
  GError *err = NULL;
  /* Strict: a missing element or an unlinkable pad is an error, not a
   * pipeline that runs with a piece missing. */
  GstParseContext *ctx = gst_parse_context_new ();
  GstElement *pipe = gst_parse_launchv_full ((const gchar **) argv + first, ctx, GST_PARSE_FLAG_FATAL_ERRORS, &err);
  if (!pipe || err) {
    gchar **missing = gst_parse_context_get_missing_elements (ctx);
    fprintf (stderr, "cannot build pipeline: %s\n", err ? err->message : "unknown error");
    for (gchar **m = missing; m && *m; m++)
      fprintf (stderr, "  element not found: %s\n", *m);
    g_strfreev (missing);
    gst_parse_context_free (ctx);
    g_clear_error (&err);
    if (pipe)
      gst_object_unref (pipe);
    return 2;
  }
  gst_parse_context_free (ctx);
  if (fps) {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
    if (!sink) {
      fprintf (stderr, "--fps needs an element named \"sink\" (fakesink name=sink)\n");
      return 2;
    }
    g_object_set (sink, "signal-handoffs", TRUE, NULL);
    g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), NULL);
    gst_object_unref (sink);
  }
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  int ret = 0;
  for (gboolean done = FALSE; !done;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
        GST_MESSAGE_ELEMENT | GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    switch (GST_MESSAGE_TYPE (m)) {
    case GST_MESSAGE_ELEMENT: {
      const GstStructure *s = gst_message_get_structure (m);
      if (s && (gst_structure_has_name (s, "gpudetect") || gst_structure_has_name (s, "gputrack")))
        print_objects (s);
      break;
    }
    case GST_MESSAGE_ERROR: {
      GError *e = NULL;
      gchar *dbg = NULL;
      gst_message_parse_error (m, &e, &dbg);
      fprintf (stderr, "ERROR from %s: %s\n%s\n", GST_OBJECT_NAME (m->src), e->message, dbg ? dbg : "");
      g_error_free (e);
      g_free (dbg);
      ret = 1;
      done = TRUE;
      break;
    }
    default:
      done = TRUE;
      break;
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  if (fps && frames > 1)
    printf ("%" G_GUINT64_FORMAT " frames, %.1f fps (first to last buffer at the sink), %.3f ms of CPU per frame "
        "(the sink's streaming thread)\n", frames, (frames - 1) / ((last_us - first_us) / 1e6),
        (last_cpu_ms - first_cpu_ms) / (frames - 1));
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return ret;
}
