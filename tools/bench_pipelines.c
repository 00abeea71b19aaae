/* gpudetect-bench-pipelines: N camera pipelines with real decoding in one
 * process, `filesrc ! decodebin ! gpudetect ! fakesink` each, to show where
 * the host (decoding), not the device, becomes the limit; with --no-detect
 * the same pipelines without gpudetect (decoding alone).
 *
 *   gpudetect-bench-pipelines [--streams 1,4,16,32,64] [--model NAME] [--seconds 3] [--frames 150]
 *       [--lead-in 1] [--props "PROPERTIES"] [--no-detect] [--clip FILE.avi] [--tile WxH] [--json FILE] FRAME.pgm
 *
 * The clip: FRAME (tiled to WxH with --tile) as I420, encoded once by jpegenc
 * into an MJPEG AVI of --frames frames (kept in --clip, default
 * $TMPDIR/gpudetect-streams-WxH-N.avi); every pipeline plays it in a loop
 * (segment seeks), so that the window can be as long as asked.  Every
 * pipeline's elements share one OpenCL device (the process's, gstcldevice).
 * For each N: aggregate frames per second at the sinks over a window of
 * --seconds that opens --lead-in seconds after every pipeline plays; per stream the
 * latency through gpudetect (its sink pad to its src pad: the frames it
 * holds, max-in-flight) median and p95; the process's CPU time over the
 * window (cores busy); resident memory per stream; the decoder decodebin
 * picked; program builds on the shared device (1 when every gpudetect
 * shares one program).
 * Exit status: 0 when every pipeline ran without error; 1 otherwise; 2 on
 * usage or set-up errors. */
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static struct {
  gchar *streams, *model, *props, *clip, *tile, *json;
  gdouble seconds, lead_in;
  gint frames;
  gboolean no_detect;
} opt = {NULL, NULL, NULL, NULL, NULL, NULL, 3.0, 1.0, 150, FALSE};

typedef struct {
  int width, height;
  guint8 *pixels;
} Gray;

static gboolean load_pgm (const char *path, Gray *g)
{
  FILE *f = fopen (path, "rb");
  if (!f)
    return FALSE;
  int maxval = 0;
  gboolean ok = fscanf (f, "P5 %d %d %d", &g->width, &g->height, &maxval) == 3 && maxval == 255 && g->width > 0 &&
                g->height > 0;
  fgetc (f);
  if (ok) {
    g->pixels = g_malloc ((gsize) g->width * g->height);
    ok = fread (g->pixels, 1, (size_t) g->width * g->height, f) == (size_t) g->width * g->height;
  }
  fclose (f);
  return ok;
}

/* `g` repeated over a w x h frame. */
static Gray tile (const Gray *g, int w, int h)
{
  Gray t = {w, h, g_malloc ((gsize) w * h)};
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      t.pixels[(gsize) y * w + x] = g->pixels[(gsize) (y % g->height) * g->width + x % g->width];
  return t;
}

static gint64 rss_kib (void)
{
  gchar *status = NULL;
  gint64 kib = -1;
  if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL)) {
    const char *l = strstr (status, "\nVmRSS:");
    if (l)
      kib = g_ascii_strtoll (l + 7, NULL, 10);
  }
  g_free (status);
  return kib;
}

static double cpu_seconds (void)
{
  struct rusage u;
  getrusage (RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* Runs a pipeline to EOS; FALSE (with the error printed) on an error. */
static gboolean run_to_eos (GstElement *p)
{
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gboolean ok = GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
  if (!ok) {
    GError *e = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (m, &e, &dbg);
    fprintf (stderr, "error: %s (%s)\n", e->message, dbg ? dbg : "");
    g_error_free (e);
    g_free (dbg);
  }
  gst_message_unref (m);
  gst_object_unref (bus);
  gst_element_set_state (p, GST_STATE_NULL);
  return ok;
}

/* The frame as an MJPEG AVI of `frames` frames at 30/1. */
static gboolean make_clip (const Gray *g, int frames, const char *path)
{
  gchar *part = g_strdup_printf ("%s.part", path);
  gchar *desc = g_strdup_printf ("appsrc name=src format=time ! jpegenc quality=85 ! avimux ! filesink location=\"%s\"",
                                 part);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  g_free (desc);
  if (!p) {
    fprintf (stderr, "cannot make the clip (jpegenc, avimux: gst-plugins-good): %s\n", err ? err->message : "");
    g_clear_error (&err);
    g_free (part);
    return FALSE;
  }
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, g->width, g->height);
  info.fps_n = 30;
  info.fps_d = 1;
  GstCaps *caps = gst_video_info_to_caps (&info);
  g_object_set (src, "caps", caps, NULL);
  gst_caps_unref (caps);
  GstBuffer *frame = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  GstVideoFrame vf;
  gst_video_frame_map (&vf, &info, frame, GST_MAP_WRITE);
  for (int y = 0; y < g->height; y++)
    memcpy ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&vf, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&vf, 0),
            g->pixels + (gsize) y * g->width, g->width);
  for (int p2 = 1; p2 < 3; p2++)
    memset (GST_VIDEO_FRAME_PLANE_DATA (&vf, p2), 128,
            (gsize) GST_VIDEO_FRAME_PLANE_STRIDE (&vf, p2) * GST_VIDEO_FRAME_COMP_HEIGHT (&vf, p2));
  gst_video_frame_unmap (&vf);
  gst_element_set_state (p, GST_STATE_PLAYING);
  for (int i = 0; i < frames; i++) {
    GstBuffer *b = gst_buffer_copy (frame);
    GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, 30);
    GST_BUFFER_DURATION (b) = GST_SECOND / 30;
    gst_app_src_push_buffer (GST_APP_SRC (src), b);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_buffer_unref (frame);
  gst_object_unref (src);
  gboolean ok = run_to_eos (p);
  gst_object_unref (p);
  if (ok)
    ok = g_rename (part, path) == 0;
  g_free (part);
  return ok;
}

typedef struct {
  GstElement *pipeline, *detect;
  GMutex lock;
  GQueue entered;          /* gint64 times of buffers held by gpudetect, oldest first */
  GArray *latency_ms;      /* in the window */
  guint64 frames_in_window;
  gboolean error;
  gint loop;               /* the clip ended: seek back (done by the main thread) */
  gchar *decoder;
} Stream;

static gint64 window_start = G_MAXINT64, window_end = G_MAXINT64;

static GstPadProbeReturn on_enter (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Stream *s = data;
  gint64 *t = g_new (gint64, 1);
  *t = g_get_monotonic_time ();
  g_mutex_lock (&s->lock);
  g_queue_push_tail (&s->entered, t);
  g_mutex_unlock (&s->lock);
  return GST_PAD_PROBE_OK;
}

/* gpudetect keeps the order of its buffers: the one leaving is the oldest held. */
static GstPadProbeReturn on_leave (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Stream *s = data;
  const gint64 now = g_get_monotonic_time ();
  g_mutex_lock (&s->lock);
  gint64 *t = g_queue_pop_head (&s->entered);
  if (t && now >= window_start && now < window_end) {
    double ms = (now - *t) / 1000.0;
    g_array_append_val (s->latency_ms, ms);
  }
  g_free (t);
  g_mutex_unlock (&s->lock);
  return GST_PAD_PROBE_OK;
}

static void on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer data)
{
  Stream *s = data;
  const gint64 now = g_get_monotonic_time ();
  if (now >= window_start && now < window_end)
    s->frames_in_window++; /* by the stream's streaming thread alone; read once it stopped */
}

static void on_element_added (GstBin *bin, GstBin *sub, GstElement *e, gpointer data)
{
  Stream *s = data;
  GstElementFactory *f = gst_element_get_factory (e);
  const gchar *klass = f ? gst_element_factory_get_metadata (f, GST_ELEMENT_METADATA_KLASS) : NULL;
  if (klass && strstr (klass, "Decoder")) {
    g_mutex_lock (&s->lock);
    g_free (s->decoder);
    s->decoder = g_strdup (GST_OBJECT_NAME (f));
    g_mutex_unlock (&s->lock);
  }
}

/* The stream's bus: asks for the clip to loop (a seek from the streaming
 * thread could deadlock with the main thread's state changes), notes errors. */
static GstBusSyncReply on_message (GstBus *bus, GstMessage *m, gpointer data)
{
  Stream *s = data;
  switch (GST_MESSAGE_TYPE (m)) {
  case GST_MESSAGE_SEGMENT_DONE:
    g_atomic_int_set (&s->loop, 1);
    break;
  case GST_MESSAGE_ERROR: {
    GError *e = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (m, &e, &dbg);
    fprintf (stderr, "%s: %s (%s)\n", GST_OBJECT_NAME (s->pipeline), e->message, dbg ? dbg : "");
    g_error_free (e);
    g_free (dbg);
    s->error = TRUE;
    break;
  }
  default:
    break;
  }
  gst_message_unref (m); /* dropped: ours to release */
  return GST_BUS_DROP;
}

static int compare_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double percentile (GArray *v, double p)
{
  if (v->len == 0)
    return 0;
  qsort (v->data, v->len, sizeof (double), compare_double);
  guint i = (guint) ceil (p * v->len);
  return g_array_index (v, double, MIN (v->len - 1, i > 0 ? i - 1 : 0));
}

int main (int argc, char **argv)
{
  GOptionEntry entries[] = {
      {"streams", 0, 0, G_OPTION_ARG_STRING, &opt.streams, "Stream counts (1,4,16,32,64)", "LIST"},
      {"model", 0, 0, G_OPTION_ARG_STRING, &opt.model, "gpudetect's model (lbp-frontalface-improved)", "NAME"},
      {"props", 0, 0, G_OPTION_ARG_STRING, &opt.props, "More gpudetect properties", "PROPS"},
      {"seconds", 0, 0, G_OPTION_ARG_DOUBLE, &opt.seconds, "Window (3)", "S"},
      {"lead-in", 0, 0, G_OPTION_ARG_DOUBLE, &opt.lead_in, "From the start to the window (1)", "S"},
      {"frames", 0, 0, G_OPTION_ARG_INT, &opt.frames, "Frames in the clip (150)", "N"},
      {"no-detect", 0, 0, G_OPTION_ARG_NONE, &opt.no_detect, "Decoding alone, without gpudetect", NULL},
      {"clip", 0, 0, G_OPTION_ARG_FILENAME, &opt.clip, "The clip (made if missing)", "FILE"},
      {"tile", 0, 0, G_OPTION_ARG_STRING, &opt.tile, "Tile the frame to WxH first", "WxH"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &opt.json, "Results as JSON", "FILE"},
      {NULL}};
  GError *err = NULL;
  GOptionContext *ctx = g_option_context_new ("FRAME.pgm");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err) || argc != 2) {
    fprintf (stderr, "%s\n", err ? err->message : "usage: gpudetect-bench-pipelines [OPTION...] FRAME.pgm");
    return 2;
  }
  g_option_context_free (ctx);
  Gray g;
  if (!load_pgm (argv[1], &g)) {
    fprintf (stderr, "cannot read %s (binary PGM expected)\n", argv[1]);
    return 2;
  }
  int tw = 0, th = 0;
  if (opt.tile && (sscanf (opt.tile, "%dx%d", &tw, &th) != 2 || tw <= 0 || th <= 0 || tw > 8192 || th > 8192)) {
    fprintf (stderr, "--tile: WxH expected\n");
    return 2;
  }
  if (tw > 0) {
    Gray t = tile (&g, tw & ~1, th & ~1);
    g_free (g.pixels);
    g = t;
  }
  const gchar *model = opt.model ? opt.model : "lbp-frontalface-improved";
  gchar **counts = g_strsplit (opt.streams ? opt.streams : "1,4,16,32,64", ",", -1);
  gchar *clip = opt.clip ? g_strdup (opt.clip)
                         : g_strdup_printf ("%s/gpudetect-streams-%dx%d-%d.avi", g_get_tmp_dir (), g.width, g.height,
                                            opt.frames);
  if (!g_file_test (clip, G_FILE_TEST_EXISTS)) {
    gint64 t0 = g_get_monotonic_time ();
    if (!make_clip (&g, opt.frames, clip))
      return 2;
    printf ("clip: %s made in %.1f s\n", clip, (g_get_monotonic_time () - t0) / 1e6);
  }
  printf ("clip: %s (%dx%d MJPEG, %d frames, looped)\nmode: %s\n", clip, g.width, g.height, opt.frames,
          opt.no_detect ? "decoding alone" : "decoding and gpudetect");
  if (!opt.no_detect)
    printf ("gpudetect: model=%s %s\n", model, opt.props ? opt.props : "");
  FILE *json = opt.json ? fopen (opt.json, "w") : NULL;
  if (json)
    fprintf (json, "{\"clip\": \"%s\", \"width\": %d, \"height\": %d, \"detect\": %s, \"model\": \"%s\", "
             "\"props\": \"%s\", \"seconds\": %.3f, \"runs\": [\n", clip, g.width, g.height,
             opt.no_detect ? "false" : "true", model, opt.props ? opt.props : "", opt.seconds);
  printf ("\n%7s %10s %9s %9s %9s %9s %7s %9s %9s %6s %-12s\n", "streams", "agg_fps", "fps/strm", "lat_p50",
          "p95_med", "p95_max", "cores", "rss_MiB", "rss/strm", "builds", "decoder");
  int status = 0;
  gboolean first_json = TRUE;
  for (gchar **c = counts; *c; c++) {
    const int n = atoi (*c);
    if (n <= 0)
      continue;
    const gint64 rss0 = rss_kib ();
    Stream *ss = g_new0 (Stream, n);
    for (int i = 0; i < n; i++) {
      Stream *s = &ss[i];
      g_mutex_init (&s->lock);
      g_queue_init (&s->entered);
      s->latency_ms = g_array_new (FALSE, FALSE, sizeof (double));
      gchar *desc = opt.no_detect
                        ? g_strdup_printf ("filesrc location=\"%s\" ! decodebin ! fakesink name=sink sync=false "
                                           "signal-handoffs=true", clip)
                        : g_strdup_printf ("filesrc location=\"%s\" ! decodebin ! gpudetect name=detect model=%s "
                                           "min-size-width=24 min-size-height=24 %s ! fakesink name=sink sync=false "
                                           "signal-handoffs=true", clip, model, opt.props ? opt.props : "");
      s->pipeline = gst_parse_launch (desc, &err);
      g_free (desc);
      if (!s->pipeline) {
        fprintf (stderr, "cannot make pipeline %d: %s\n", i, err ? err->message : "");
        return 2;
      }
      gchar *name = g_strdup_printf ("stream%d", i);
      gst_object_set_name (GST_OBJECT (s->pipeline), name);
      g_free (name);
      GstElement *sink = gst_bin_get_by_name (GST_BIN (s->pipeline), "sink");
      g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), s);
      gst_object_unref (sink);
      g_signal_connect (s->pipeline, "deep-element-added", G_CALLBACK (on_element_added), s);
      s->detect = gst_bin_get_by_name (GST_BIN (s->pipeline), "detect");
      if (s->detect) {
        GstPad *sp = gst_element_get_static_pad (s->detect, "sink"), *op = gst_element_get_static_pad (s->detect, "src");
        gst_pad_add_probe (sp, GST_PAD_PROBE_TYPE_BUFFER, on_enter, s, NULL);
        gst_pad_add_probe (op, GST_PAD_PROBE_TYPE_BUFFER, on_leave, s, NULL);
        gst_object_unref (sp);
        gst_object_unref (op);
      }
      GstBus *bus = gst_element_get_bus (s->pipeline);
      gst_bus_set_sync_handler (bus, on_message, s, NULL);
      gst_object_unref (bus);
    }
    /* PAUSED, then a segment seek (so that the clip loops), then PLAYING */
    for (int i = 0; i < n; i++)
      gst_element_set_state (ss[i].pipeline, GST_STATE_PAUSED);
    gboolean ok = TRUE;
    for (int i = 0; i < n; i++) {
      if (gst_element_get_state (ss[i].pipeline, NULL, NULL, 120 * GST_SECOND) == GST_STATE_CHANGE_FAILURE ||
          ss[i].error) {
        fprintf (stderr, "stream %d did not start\n", i);
        ok = FALSE;
      }
    }
    for (int i = 0; i < n && ok; i++)
      gst_element_seek (ss[i].pipeline, 1.0, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_SEGMENT,
                        GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_NONE, -1);
    const gint64 rss_ready = rss_kib ();
    window_start = window_end = G_MAXINT64;
    const gint64 go = g_get_monotonic_time ();
    for (int i = 0; i < n && ok; i++)
      gst_element_set_state (ss[i].pipeline, GST_STATE_PLAYING);
    window_start = go + (gint64) (opt.lead_in * G_USEC_PER_SEC);
    window_end = window_start + (gint64) (opt.seconds * G_USEC_PER_SEC);
    /* Until the window closes: the clips' loops (segment seeks, from here). */
    double cpu0 = -1, cpu = 0;
    for (;;) {
      const gint64 now = g_get_monotonic_time ();
      if (cpu0 < 0 && now >= window_start)
        cpu0 = cpu_seconds ();
      if (now >= window_end)
        break;
      for (int i = 0; i < n; i++)
        if (g_atomic_int_compare_and_exchange (&ss[i].loop, 1, 0))
          gst_element_seek (ss[i].pipeline, 1.0, GST_FORMAT_TIME, GST_SEEK_FLAG_SEGMENT, GST_SEEK_TYPE_SET, 0,
                            GST_SEEK_TYPE_NONE, -1);
      g_usleep (1000);
    }
    cpu = cpu_seconds () - cpu0;
    const gint64 rss_run = rss_kib ();
    guint64 builds = 0;
    gchar *device = NULL;
    if (ss[0].detect)
      g_object_get (ss[0].detect, "program-builds", &builds, "device-name", &device, NULL);
    for (int i = 0; i < n; i++)
      gst_element_set_state (ss[i].pipeline, GST_STATE_NULL);
    guint64 total = 0;
    GArray *p95 = g_array_new (FALSE, FALSE, sizeof (double)), *all = g_array_new (FALSE, FALSE, sizeof (double));
    gboolean errors = !ok;
    for (int i = 0; i < n; i++) {
      total += ss[i].frames_in_window;
      errors |= ss[i].error;
      if (ss[i].latency_ms->len) {
        g_array_append_vals (all, ss[i].latency_ms->data, ss[i].latency_ms->len);
        double v = percentile (ss[i].latency_ms, 0.95);
        g_array_append_val (p95, v);
      }
    }
    const double agg = total / opt.seconds, p95_max = p95->len ? percentile (p95, 1.0) : 0;
    const double p95_med = percentile (p95, 0.5), p50 = percentile (all, 0.5);
    const double rss_mib = rss_run / 1024.0, rss_per = (rss_run - rss0) / 1024.0 / n;
    const char *decoder = ss[0].decoder ? ss[0].decoder : "?";
    printf ("%7d %10.1f %9.2f %9.3f %9.3f %9.3f %7.2f %9.1f %9.2f %6" G_GUINT64_FORMAT " %-12s%s\n", n, agg, agg / n,
            p50, p95_med, p95_max, cpu / opt.seconds, rss_mib, rss_per, builds, decoder,
            errors ? "  (errors)" : "");
    fflush (stdout);
    if (json) {
      fprintf (json, "%s  {\"streams\": %d, \"frames\": %" G_GUINT64_FORMAT ", \"aggregate_fps\": %.3f, "
               "\"per_stream_fps\": %.3f, \"latency_p50_ms\": %.4f, \"latency_p95_median_ms\": %.4f, "
               "\"latency_p95_max_ms\": %.4f, \"host_cores\": %.3f, \"rss_mib\": %.1f, \"rss_ready_mib\": %.1f, "
               "\"rss_per_stream_mib\": %.3f, \"program_builds\": %" G_GUINT64_FORMAT ", \"decoder\": \"%s\", "
               "\"device\": \"%s\", \"errors\": %s}", first_json ? "" : ",\n", n, total, agg, agg / n, p50, p95_med,
               p95_max, cpu / opt.seconds, rss_mib, rss_ready / 1024.0, rss_per, builds, decoder, device ? device : "",
               errors ? "true" : "false");
      first_json = FALSE;
    }
    if (errors)
      status = 1;
    g_free (device);
    for (int i = 0; i < n; i++) {
      if (ss[i].detect)
        gst_object_unref (ss[i].detect);
      gst_object_unref (ss[i].pipeline);
      g_queue_clear_full (&ss[i].entered, g_free);
      g_array_free (ss[i].latency_ms, TRUE);
      g_free (ss[i].decoder);
      g_mutex_clear (&ss[i].lock);
    }
    g_free (ss);
    g_array_free (p95, TRUE);
    g_array_free (all, TRUE);
  }
  printf ("\nagg_fps: buffers at the sinks of all pipelines in the %.1f s window (opened %.1f s after they start), "
          "per second; lat_*: ms from gpudetect's sink pad to its src pad (the frames it holds in flight), p50 over "
          "every frame, p95 per stream (median and worst over streams); cores: the process's CPU time over the window "
          "per second; rss: resident memory while running, per stream: what each added; builds: programs built on the "
          "shared device.\n", opt.seconds, opt.lead_in);
  if (json) {
    fprintf (json, "\n]}\n");
    fclose (json);
  }
  g_strfreev (counts);
  g_free (clip);
  g_free (g.pixels);
  return status;
}
