/* Helpers the element tests share: the grey test images, the objects on a
 * buffer, a pipeline's error, and the order of buffers around flushes. */
#pragma once

#include <gst/check/gstcheck.h>
#include <gst/video/gstvideometa.h>

#include <stdio.h>
#include <string.h>

typedef struct {
  int width, height;
  guint8 *pixels;
} Gray;

/* A binary PGM of 255 levels; may run before the tests (plain assertions,
 * not check's). */
static inline void load_pgm (const char *path, Gray *g)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    g_error ("cannot open %s", path);
  int maxval = 0;
  g_assert_true (fscanf (f, "P5 %d %d %d", &g->width, &g->height, &maxval) == 3 && maxval == 255);
  fgetc (f);
  g->pixels = g_malloc ((gsize) g->width * g->height);
  g_assert_true (fread (g->pixels, 1, (size_t) g->width * g->height, f) == (size_t) g->width * g->height);
  fclose (f);
}

static inline guint count_rois (GstBuffer *buf)
{
  return gst_buffer_get_n_meta (buf, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE);
}

/* The pipeline `desc` set to PLAYING posts an error of `domain` and `code`
 * within `seconds`, whose message is not empty (and is `message` where given),
 * whose debug text holds `debug_part` where given, from an element whose name
 * starts with `source` where given; then the pipeline goes to NULL. */
static inline void expect_error_full (const char *desc, GQuark domain, gint code, guint seconds, const char *message,
    const char *debug_part, const char *source)
{
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, seconds * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR, "no error posted for '%s'", desc);
  GError *err = NULL;
  gchar *dbg = NULL;
  gst_message_parse_error (m, &err, &dbg);
  fail_unless (err->domain == domain && err->code == code, "'%s': %s (%s)", desc, err->message, dbg);
  fail_unless (strlen (err->message) > 0);
  if (message)
    fail_unless_equals_string (err->message, message);
  if (debug_part)
    fail_unless (dbg != NULL && strstr (dbg, debug_part) != NULL, "debug text: %s", dbg);
  if (source)
    fail_unless (g_str_has_prefix (GST_OBJECT_NAME (GST_MESSAGE_SRC (m)), source));
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (m);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

static inline void expect_error (const char *desc, GQuark domain, gint code)
{
  expect_error_full (desc, domain, code, 20, NULL, NULL, NULL);
}

/* The buffers reaching a sink, around the flushes seen upstream of it. */
typedef struct {
  GMutex lock;
  GstClockTime last; /* last PTS since the last flush */
  guint since_flush; /* buffers since the last flush */
  guint total, flushes, disorder, gaps;
  GstClockTime first_after_flush[8];
  guint out_at_flush[8]; /* buffers since the flush before, at each flush-stop */
  guint in_since_flush;  /* (stream-faults) buffers into gpudetect since its last flush-stop */
  guint in_at_flush[8];  /* ... at each flush-stop */
  guint mid_since_flush, mid_at_flush[8]; /* pushed out of gpudetect */
} Order;

/* A sink's handoff: PTS order and gaps (videotestsrc's frames 1/30 s apart,
 * rounded) since the last flush. */
static inline void on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, Order *o)
{
  g_mutex_lock (&o->lock);
  GstClockTime pts = GST_BUFFER_PTS (buf);
  if (o->since_flush > 0 && GST_CLOCK_TIME_IS_VALID (o->last)) {
    if (pts <= o->last)
      o->disorder++;
    else if (pts - o->last > GST_SECOND / 30 + 1)
      o->gaps++;
  }
  if (o->since_flush == 0 && o->flushes > 0 && o->flushes <= 8)
    o->first_after_flush[o->flushes - 1] = pts;
  o->last = pts;
  o->since_flush++;
  o->total++;
  g_mutex_unlock (&o->lock);
}

/* A pad probe on the sink's pad: counts the flush-stops. */
static inline GstPadProbeReturn on_flush (GstPad *pad, GstPadProbeInfo *info, Order *o)
{
  if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_FLUSH_STOP) {
    g_mutex_lock (&o->lock);
    if (o->flushes < 8)
      o->out_at_flush[o->flushes] = o->since_flush;
    o->flushes++;
    o->since_flush = 0;
    o->last = GST_CLOCK_TIME_NONE;
    g_mutex_unlock (&o->lock);
  }
  return GST_PAD_PROBE_OK;
}
