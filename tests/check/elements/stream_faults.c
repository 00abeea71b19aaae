/* Stream faults through gpudetect, gputrack and roioverlay (GstHarness and
 * small pipelines): caps renegotiation and resolution changes mid-stream in
 * every format; flushes and seeks with frames in flight at max-in-flight 1, 2
 * and 16 (every buffer that enters leaves, in order, or is dropped by a
 * flush); EOS drain; PLAYING -> NULL -> PLAYING 200 times while another
 * thread reads the elements; property changes from another thread while
 * PLAYING; 1x1 frames, odd sizes and odd strides;
 * frames smaller than the model's window; no OpenCL device; a kernel build
 * failure.  Every fault ends in the expected output or in an error message
 * and a clean stop, never a crash, a hang or a lost buffer. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

static Gray face_image; /* 256 x 300, one face at (88, 73, 90 x 90) */
static Gray face_crop;  /* its 200 x 200 crop from (50, 40): the face at (41, 38, 80 x 80) */

static const GstVideoFormat all_formats[] = {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
    GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx};

/* A frame of `format` holding the grey image `g` (grey in every colour
 * channel, neutral chroma), planes `pad` bytes wider than they need (0: the
 * default strides), with a GstVideoMeta giving the strides. */
static GstBuffer *make_frame (const Gray *g, GstVideoFormat format, int pad, GstClockTime pts)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, format, g->width, g->height);
  gsize offset[GST_VIDEO_MAX_PLANES] = {0};
  gint stride[GST_VIDEO_MAX_PLANES] = {0};
  gsize size = 0;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); p++) {
    stride[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info, p) + pad;
    offset[p] = size;
    /* plane p holds component p (Y, U or UV; V the third plane of I420) */
    size += (gsize) stride[p] * GST_VIDEO_INFO_COMP_HEIGHT (&info, p);
  }
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (buf, 0, 77, size); /* padding visible if read as pixels */
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, format, g->width, g->height,
      GST_VIDEO_INFO_N_PLANES (&info), offset, stride);
  GstMapInfo map;
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  const int pstride = GST_VIDEO_INFO_COMP_PSTRIDE (&info, 0);
  for (int y = 0; y < g->height; y++) {
    const guint8 *src = g->pixels + (gsize) y * g->width;
    guint8 *dst = map.data + offset[0] + (gsize) y * stride[0];
    if (pstride == 4) {
      for (int x = 0; x < g->width; x++) {
        dst[4 * x] = dst[4 * x + 1] = dst[4 * x + 2] = src[x];
        dst[4 * x + 3] = 255;
      }
    } else {
      memcpy (dst, src, g->width);
    }
  }
  for (guint p = 1; p < GST_VIDEO_INFO_N_PLANES (&info); p++)
    for (int y = 0; y < GST_VIDEO_INFO_COMP_HEIGHT (&info, p); y++)
      memset (map.data + offset[p] + (gsize) y * stride[p], 128,
          (gsize) GST_VIDEO_INFO_COMP_WIDTH (&info, p) * GST_VIDEO_INFO_COMP_PSTRIDE (&info, p));
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = GST_MSECOND;
  return buf;
}

static void set_caps (GstHarness *h, GstVideoFormat format, int w, int hgt)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1",
      gst_video_format_to_string (format), w, hgt);
  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
}

/* What reached the harness's sink pad, in arrival order: each buffer with
 * the caps in force when it arrived; EOS and flushes as they came. */
typedef struct {
  GMutex lock;
  GArray *pts;         /* GstClockTime of each buffer */
  GPtrArray *caps;     /* the current caps at each buffer (a ref) */
  GstCaps *current;
  guint eos_after;     /* buffers before EOS, G_MAXUINT without EOS */
  guint flush_stops;
} Record;

static GstPadProbeReturn record_probe (GstPad *pad, GstPadProbeInfo *info, Record *r)
{
  g_mutex_lock (&r->lock);
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    GstClockTime pts = GST_BUFFER_PTS (GST_PAD_PROBE_INFO_BUFFER (info));
    g_array_append_val (r->pts, pts);
    g_ptr_array_add (r->caps, r->current ? gst_caps_ref (r->current) : NULL);
  } else {
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT (info);
    if (GST_EVENT_TYPE (ev) == GST_EVENT_CAPS) {
      GstCaps *c;
      gst_event_parse_caps (ev, &c);
      gst_caps_replace (&r->current, c);
    } else if (GST_EVENT_TYPE (ev) == GST_EVENT_EOS) {
      r->eos_after = r->pts->len;
    } else if (GST_EVENT_TYPE (ev) == GST_EVENT_FLUSH_STOP) {
      r->flush_stops++;
    }
  }
  g_mutex_unlock (&r->lock);
  return GST_PAD_PROBE_OK;
}

static void unref_caps (gpointer caps)
{
  if (caps)
    gst_caps_unref (caps);
}

static void record_init (Record *r, GstHarness *h)
{
  g_mutex_init (&r->lock);
  r->pts = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  r->caps = g_ptr_array_new_with_free_func (unref_caps);
  r->current = NULL;
  r->eos_after = G_MAXUINT;
  r->flush_stops = 0;
  gst_pad_add_probe (h->sinkpad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM |
      GST_PAD_PROBE_TYPE_EVENT_FLUSH, (GstPadProbeCallback) record_probe, r, NULL);
}

static void record_clear (Record *r)
{
  g_array_unref (r->pts);
  g_ptr_array_unref (r->caps);
  gst_caps_replace (&r->current, NULL);
  g_mutex_clear (&r->lock);
}

static guint record_len (Record *r)
{
  g_mutex_lock (&r->lock);
  guint n = r->pts->len;
  g_mutex_unlock (&r->lock);
  return n;
}

/* One face ROI at (x, y, w, h), normalised by the frame's fw x fh. */
static void assert_box (GstBuffer *buf, int x, int y, int w, int h, int fw, int fh, const char *what)
{
  fail_unless_equals_int (count_rois (buf), 1);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (buf, 0);
  fail_unless (roi != NULL);
  fail_unless (roi->x == (guint) x && roi->y == (guint) y && roi->w == (guint) w && roi->h == (guint) h,
      "%s: face at %u,%u %ux%u, expected %d,%d %dx%d", what, roi->x, roi->y, roi->w, roi->h, x, y, w, h);
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "detection");
  gdouble x_max;
  fail_unless (s != NULL && gst_structure_get_double (s, "x_max", &x_max));
  fail_unless (x_max > (double) (x + w) / fw - 1e-9 && x_max < (double) (x + w) / fw + 1e-9, "%s: x_max %f", what,
      x_max);
}

#define FACE_PROPS "model=lbp-frontalface-improved min-size-width=24 min-size-height=24"

/* Every format to every other, and the frame size back and forth, with
 * frames in flight at each change: every frame leaves in order, after the
 * caps it was pushed with, and with the face where that frame has it. */
GST_START_TEST (test_renegotiation_every_format)
{
  GstHarness *h = gst_harness_new_parse ("gpudetect " FACE_PROPS " max-in-flight=3");
  Record r;
  record_init (&r, h);
  const guint n_formats = G_N_ELEMENTS (all_formats);
  guint pushed = 0;
  /* the sequence: each format at full size and cropped, then the next format */
  for (guint i = 0; i <= n_formats; i++) {
    const GstVideoFormat f = all_formats[i % n_formats];
    for (int crop = 0; crop < 2; crop++) {
      const Gray *g = crop ? &face_crop : &face_image;
      set_caps (h, f, g->width, g->height);
      for (int k = 0; k < 3; k++, pushed++)
        fail_unless_equals_int (gst_harness_push (h, make_frame (g, f, 0, pushed * GST_MSECOND)), GST_FLOW_OK);
    }
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (record_len (&r), pushed);
  fail_unless_equals_int (r.eos_after, pushed);
  for (guint n = 0; n < pushed; n++) {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless (b != NULL);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), n * GST_MSECOND);
    fail_unless_equals_uint64 (g_array_index (r.pts, GstClockTime, n), n * GST_MSECOND);
    /* frame n is in format (n / 6) % n_formats, cropped when (n / 3) is odd */
    const GstVideoFormat f = all_formats[(n / 6) % n_formats];
    const gboolean crop = (n / 3) % 2 == 1;
    GstCaps *c = g_ptr_array_index (r.caps, n);
    fail_unless (c != NULL);
    GstVideoInfo info;
    fail_unless (gst_video_info_from_caps (&info, c));
    fail_unless (GST_VIDEO_INFO_FORMAT (&info) == f && GST_VIDEO_INFO_WIDTH (&info) == (crop ? 200 : 256),
        "buffer %u left under caps %" GST_PTR_FORMAT, n, c);
    gchar *what = g_strdup_printf ("buffer %u (%s%s)", n, gst_video_format_to_string (f), crop ? ", crop" : "");
    if (crop)
      assert_box (b, 41, 38, 80, 80, 200, 200, what);
    else
      assert_box (b, 88, 73, 90, 90, 256, 300, what);
    g_free (what);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
  record_clear (&r);
}
GST_END_TEST;

/* Flushes with frames in flight, at max-in-flight 1, 2 and 16: what left
 * before the flush is every frame pushed so far but at most max-in-flight,
 * in order; those held are dropped by the flush and nothing else; the
 * frames after it leave, every one, in order; EOS drains the last ones and
 * comes after them. */
static void flush_in_flight (guint max_in_flight)
{
  gchar *desc = g_strdup_printf ("gpudetect " FACE_PROPS " max-in-flight=%u", max_in_flight);
  GstHarness *h = gst_harness_new_parse (desc);
  g_free (desc);
  set_caps (h, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  Record r;
  record_init (&r, h);
  GArray *expected = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  guint pushed = 0;
  for (int round = 0; round < 3; round++) {
    const guint n = max_in_flight + 3 + round;
    for (guint k = 0; k < n; k++, pushed++)
      fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0,
          pushed * GST_MSECOND)), GST_FLOW_OK);
    const guint out = record_len (&r);
    const guint before = expected->len;
    /* left so far: a prefix of this round's frames, holding back at most max-in-flight */
    fail_unless (out - before + max_in_flight >= n && out - before <= n,
        "max-in-flight %u, round %d: %u of %u out before the flush", max_in_flight, round, out - before, n);
    for (guint k = 0; k < out - before; k++) {
      GstClockTime t = (pushed - n + k) * GST_MSECOND;
      g_array_append_val (expected, t);
    }
    fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
    fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
    GstSegment seg;
    gst_segment_init (&seg, GST_FORMAT_TIME);
    fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
    /* the held frames were dropped: nothing came out of the flush */
    fail_unless_equals_int (record_len (&r), out);
  }
  /* after the last flush, frames until EOS: all of them */
  for (guint k = 0; k < 2 * max_in_flight + 1; k++, pushed++) {
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0,
        pushed * GST_MSECOND)), GST_FLOW_OK);
    GstClockTime t = pushed * GST_MSECOND;
    g_array_append_val (expected, t);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (record_len (&r), expected->len);
  fail_unless_equals_int (r.eos_after, expected->len);
  fail_unless_equals_int (r.flush_stops, 3);
  /* what left, in order: the harness's queue holds every buffer, the flushes' too */
  for (guint k = 0; k < expected->len; k++) {
    fail_unless_equals_uint64 (g_array_index (r.pts, GstClockTime, k), g_array_index (expected, GstClockTime, k));
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), g_array_index (expected, GstClockTime, k));
    assert_box (b, 88, 73, 90, 90, 256, 300, "with flushes");
    gst_buffer_unref (b);
  }
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  g_array_unref (expected);
  gst_harness_teardown (h);
  record_clear (&r);
}

GST_START_TEST (test_flush_in_flight_1)
{
  flush_in_flight (1);
}
GST_END_TEST;

GST_START_TEST (test_flush_in_flight_2)
{
  flush_in_flight (2);
}
GST_END_TEST;

GST_START_TEST (test_flush_in_flight_16)
{
  flush_in_flight (16);
}
GST_END_TEST;

/* A pipeline seeked with flushes while frames are in flight (the streaming
 * thread pushing, the seek from this one): every segment's buffers leave in
 * order without a gap, and the first one of each is the seek's target
 * (Order, on_handoff and on_flush: common.h).  On gpudetect's sink pad: */
static GstPadProbeReturn on_input (GstPad *pad, GstPadProbeInfo *info, Order *o)
{
  g_mutex_lock (&o->lock);
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    o->in_since_flush++;
  } else if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_FLUSH_STOP) {
    if (o->flushes < 8)
      o->in_at_flush[o->flushes] = o->in_since_flush;
    o->in_since_flush = 0;
  }
  g_mutex_unlock (&o->lock);
  return GST_PAD_PROBE_OK;
}

/* On gpudetect's source pad. */
static GstPadProbeReturn on_output (GstPad *pad, GstPadProbeInfo *info, Order *o)
{
  g_mutex_lock (&o->lock);
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    o->mid_since_flush++;
  } else if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_FLUSH_STOP) {
    if (o->flushes < 8)
      o->mid_at_flush[o->flushes] = o->mid_since_flush;
    o->mid_since_flush = 0;
  }
  g_mutex_unlock (&o->lock);
  return GST_PAD_PROBE_OK;
}

static guint since_flush (Order *o)
{
  g_mutex_lock (&o->lock);
  guint n = o->since_flush;
  g_mutex_unlock (&o->lock);
  return n;
}

static GstElement *order_pipeline (const char *desc, Order *o, GstElement **sink)
{
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  memset (o, 0, sizeof (*o));
  g_mutex_init (&o->lock);
  o->last = GST_CLOCK_TIME_NONE;
  *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (*sink, "handoff", G_CALLBACK (on_handoff), o);
  GstPad *pad = gst_element_get_static_pad (*sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_FLUSH, (GstPadProbeCallback) on_flush, o, NULL);
  gst_object_unref (pad);
  GstElement *det = gst_bin_get_by_name (GST_BIN (pipe), "d");
  pad = gst_element_get_static_pad (det, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_FLUSH,
      (GstPadProbeCallback) on_input, o, NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (det, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_FLUSH,
      (GstPadProbeCallback) on_output, o, NULL);
  gst_object_unref (pad);
  gst_object_unref (det);
  return pipe;
}

static void seeks_in_flight (guint max_in_flight)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=ball num-buffers=300 ! "
      "video/x-raw,width=320,height=240,framerate=30/1,format=I420 ! gpudetect name=d " FACE_PROPS " max-in-flight=%u ! "
      "fakesink name=sink sync=false signal-handoffs=true", max_in_flight);
  Order o;
  GstElement *sink;
  GstElement *pipe = order_pipeline (desc, &o, &sink);
  g_free (desc);
  GstBus *bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_get_state (pipe, NULL, NULL, 60 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  const GstClockTime targets[4] = {6 * GST_SECOND, GST_SECOND / 2, 2 * GST_SECOND + GST_SECOND / 3, GST_SECOND};
  for (int i = 0; i < 4; i++) {
    for (int t = 0; t < 6000 && since_flush (&o) < 4; t++)
      g_usleep (5000);
    fail_unless (since_flush (&o) >= 4, "max-in-flight %u, segment %d: no frames came out", max_in_flight, i);
    fail_unless (gst_element_seek_simple (pipe, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE,
        targets[i]));
  }
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 300 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "max-in-flight %u: no EOS", max_in_flight);
  gst_message_unref (m);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (o.flushes, 4);
  fail_unless_equals_int (o.disorder, 0);
  fail_unless_equals_int (o.gaps, 0);
  for (int i = 0; i < 4; i++)
    fail_unless (o.first_after_flush[i] >= targets[i] - GST_SECOND / 30 && o.first_after_flush[i] <= targets[i],
        "max-in-flight %u, segment %d starts at %" GST_TIME_FORMAT, max_in_flight, i,
        GST_TIME_ARGS (o.first_after_flush[i]));
  /* at each flush, at most max-in-flight frames held in the element were
   * dropped, and at most the one it was pushing when the sink began to flush;
   * the last segment ran to EOS: every frame that entered left */
  for (int i = 0; i < 4; i++)
    fail_unless (o.out_at_flush[i] <= o.mid_at_flush[i] && o.mid_at_flush[i] <= o.in_at_flush[i] &&
        o.in_at_flush[i] - o.mid_at_flush[i] <= max_in_flight && o.mid_at_flush[i] - o.out_at_flush[i] <= 1,
        "max-in-flight %u, segment %d: %u in, %u pushed out, %u reached the sink", max_in_flight, i, o.in_at_flush[i],
        o.mid_at_flush[i], o.out_at_flush[i]);
  fail_unless (o.since_flush >= 4);
  fail_unless_equals_int (o.since_flush, o.in_since_flush);
  fail_unless_equals_int (o.since_flush, o.mid_since_flush);
  g_mutex_clear (&o.lock);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_START_TEST (test_seeks_in_flight)
{
  const guint depths[] = {1, 2, 16};
  for (guint i = 0; i < G_N_ELEMENTS (depths); i++)
    seeks_in_flight (depths[i]);
}
GST_END_TEST;

/* One run of a state cycle: PLAYING until three more frames came out, then
 * NULL, with no error on the bus. */
static void state_cycle (GstElement *pipe, GstBus *bus, Order *o, int cycle)
{
  g_mutex_lock (&o->lock);
  const guint total = o->total;
  g_mutex_unlock (&o->lock);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE, "cycle %d", cycle);
  guint now = total;
  for (int t = 0; t < 4000 && now < total + 3; t++) {
    g_usleep (1000);
    g_mutex_lock (&o->lock);
    now = o->total;
    g_mutex_unlock (&o->lock);
  }
  fail_unless (now >= total + 3, "cycle %d: no frames", cycle);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (m == NULL, "cycle %d: an error", cycle);
}

/* The open file descriptors, one "fd -> target" line each, and their count. */
static gchar *list_fds (guint * count)
{
  GDir *d = g_dir_open ("/proc/self/fd", 0, NULL);
  fail_unless (d != NULL);
  GString *s = g_string_new (NULL);
  guint n = 0;
  const gchar *name;
  while ((name = g_dir_read_name (d))) {
    gchar *path = g_build_filename ("/proc/self/fd", name, NULL);
    gchar *target = g_file_read_link (path, NULL);
    g_string_append_printf (s, "  %s -> %s\n", name, target ? target : "?");
    g_free (target);
    g_free (path);
    n++;
  }
  g_dir_close (d);
  *count = n;
  return g_string_free (s, FALSE);
}

/* What an application may read from another thread while the elements start
 * and stop: their read-only properties and their latency.  Run under
 * ThreadSanitizer (docs/reliability.md), it checks these reads are
 * synchronised with start, stop and caps. */
typedef struct {
  GstElement *elements[2]; /* NULL-terminated */
  volatile gint stop;
  guint reads;
  GThread *thread;
} Reader;

static gpointer read_while_cycling (Reader *r)
{
  while (!g_atomic_int_get (&r->stop)) {
    for (int i = 0; i < 2 && r->elements[i]; i++) {
      gchar *name = NULL;
      g_object_get (r->elements[i], "device-name", &name, NULL);
      g_free (name);
      GstQuery *q = gst_query_new_latency ();
      gst_element_query (r->elements[i], q);
      gst_query_unref (q);
    }
    guint64 builds = 0;
    g_object_get (r->elements[0], "program-builds", &builds, NULL);
    r->reads++;
    g_usleep (200);
  }
  return NULL;
}

/* Reads the named elements of `pipe` from a thread of its own until reader_stop. */
static void reader_start (Reader *r, GstElement *pipe, const char *first, const char *second)
{
  memset (r, 0, sizeof (*r));
  r->elements[0] = gst_bin_get_by_name (GST_BIN (pipe), first);
  r->elements[1] = second ? gst_bin_get_by_name (GST_BIN (pipe), second) : NULL;
  fail_unless (r->elements[0] != NULL && (!second || r->elements[1] != NULL));
  r->thread = g_thread_new ("reader", (GThreadFunc) read_while_cycling, r);
}

static void reader_stop (Reader *r)
{
  g_atomic_int_set (&r->stop, 1);
  g_thread_join (r->thread);
  fail_unless (r->reads > 0);
  for (int i = 0; i < 2; i++)
    if (r->elements[i])
      gst_object_unref (r->elements[i]);
}

/* PLAYING -> NULL -> PLAYING 200 times, frames in flight at each stop, while
 * another thread reads gpudetect (Reader): each run sends frames, no error,
 * and no file descriptor is left behind. */
GST_START_TEST (test_state_cycles)
{
  Order o;
  GstElement *sink;
  GstElement *pipe = order_pipeline ("videotestsrc pattern=ball is-live=false ! "
      "video/x-raw,width=160,height=120,framerate=30/1,format=NV12 ! gpudetect name=d " FACE_PROPS " max-in-flight=4 ! "
      "fakesink name=sink sync=false signal-handoffs=true", &o, &sink);
  GstBus *bus = gst_element_get_bus (pipe);
  guint fds = 0;
  gchar *first = NULL;
  Reader r;
  reader_start (&r, pipe, "d", NULL);
  for (int cycle = 0; cycle < 200; cycle++) {
    state_cycle (pipe, bus, &o, cycle);
    /* a new run restarts the stream: the order holds within each */
    g_mutex_lock (&o.lock);
    o.since_flush = 0;
    g_mutex_unlock (&o.lock);
    if (cycle == 1)
      first = list_fds (&fds); /* after a first run opened what it keeps (caches, the device) */
  }
  reader_stop (&r);
  fail_unless_equals_int (o.disorder, 0);
  /* A stop with frames in flight lets the device finish them on a thread of
   * its own, which then lets go of their buffers and so of upstream's buffer
   * pool (a GstPoll: two sockets): what the last runs opened may close a
   * little later, on a loaded machine. */
  guint now = 0;
  gchar *last = list_fds (&now);
  for (int t = 0; t < 200 && now > fds; t++) {
    g_usleep (50000);
    g_free (last);
    last = list_fds (&now);
  }
  fail_unless (now <= fds,
      "%u file descriptors open 10 s after the last run, %u after the second run:\n%s\nafter the second run:\n%s",
      now, fds, last, first);
  g_free (last);
  g_free (first);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_mutex_clear (&o.lock);
}
GST_END_TEST;

/* gpudetect ! gputrack (template search on the shared device) PLAYING ->
 * NULL -> PLAYING 20 times while another thread reads both (Reader): frames
 * flow in each run, no error. */
GST_START_TEST (test_gputrack_state_cycles)
{
  Order o;
  GstElement *sink;
  GstElement *pipe = order_pipeline ("videotestsrc pattern=ball is-live=false ! "
      "video/x-raw,width=160,height=120,framerate=30/1,format=NV12 ! gpudetect name=d " FACE_PROPS " ! "
      "gputrack name=t ! fakesink name=sink sync=false signal-handoffs=true", &o, &sink);
  GstBus *bus = gst_element_get_bus (pipe);
  Reader r;
  reader_start (&r, pipe, "d", "t");
  for (int cycle = 0; cycle < 20; cycle++) {
    state_cycle (pipe, bus, &o, cycle);
  }
  reader_stop (&r);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_mutex_clear (&o.lock);
}
GST_END_TEST;

/* Every PLAYING property of gpudetect changed from another thread while
 * frames flow: every frame leaves, in order, and the stream ends. */
typedef struct {
  GstElement *det;
  volatile gint stop;
  guint changes;
} Changer;

static gpointer change_properties (Changer *c)
{
  guint i = 0;
  while (!g_atomic_int_get (&c->stop)) {
    g_object_set (c->det, "scale-factor", 1.05 + (i % 5) * 0.1, "min-neighbors", (gint) (i % 4), "min-size-width",
        (gint) (i % 3) * 12, "min-size-height", (gint) (i % 3) * 12, "max-size-width", (gint) (i % 2) * 100,
        "max-size-height", (gint) (i % 2) * 100, "threshold", (i % 7) * 0.1, "label", i % 2 ? "x" : NULL,
        "inference-interval", 1 + i % 3, "skip-when-busy", (gboolean) (i % 2), "roi-x", (gint) (i % 9) * 20, "roi-y",
        (gint) (i % 5) * 30, "roi-width", (gint) (i % 4) * 50, "roi-height", (gint) (i % 6) * 40, "message-mode",
        (gint) (i % 4), NULL);
    i++;
    g_usleep (500);
  }
  c->changes = i;
  return NULL;
}

GST_START_TEST (test_properties_while_playing)
{
  Order o;
  GstElement *sink;
  GstElement *pipe = order_pipeline ("videotestsrc pattern=ball num-buffers=300 ! "
      "video/x-raw,width=160,height=120,framerate=30/1,format=BGRx ! gpudetect name=d max-in-flight=3 ! "
      "fakesink name=sink sync=false signal-handoffs=true", &o, &sink);
  Changer c = {gst_bin_get_by_name (GST_BIN (pipe), "d"), 0, 0};
  GstBus *bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GThread *t = g_thread_new ("changer", (GThreadFunc) change_properties, &c);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 300 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  g_atomic_int_set (&c.stop, 1);
  g_thread_join (t);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "no EOS");
  gst_message_unref (m);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  fail_unless (c.changes > 10, "%u changes", c.changes);
  fail_unless_equals_int (o.total, 300);
  fail_unless_equals_int (o.disorder, 0);
  fail_unless_equals_int (o.gaps, 0);
  gst_object_unref (c.det);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_mutex_clear (&o.lock);
}
GST_END_TEST;

/* A grey image of w x h: the face image's top-left corner, or a gradient
 * beyond it. */
static Gray corner (int w, int h)
{
  Gray g = {w, h, g_malloc ((gsize) w * h)};
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      g.pixels[(gsize) y * w + x] = x < face_image.width && y < face_image.height ?
          face_image.pixels[(gsize) y * face_image.width + x] : (guint8) (x + 3 * y);
  return g;
}

/* 1x1 frames, odd sizes, frames smaller than the model's 24 x 24 window and
 * odd strides, in every format, max-in-flight 1 and 4: each frame leaves
 * with its pixels untouched and no object (none fits), and a padded frame
 * of the face image still gives the face where it is. */
GST_START_TEST (test_small_odd_frames)
{
  const int sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {3, 5}, {23, 23}, {24, 23}, {23, 24}, {17, 13}, {25, 31}};
  const int pads[] = {0, 1, 7};
  const guint depths[] = {1, 4};
  for (guint d = 0; d < G_N_ELEMENTS (depths); d++) {
    gchar *desc = g_strdup_printf ("gpudetect " FACE_PROPS " min-neighbors=0 max-in-flight=%u", depths[d]);
    GstHarness *h = gst_harness_new_parse (desc);
    g_free (desc);
    GPtrArray *copies = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
    GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
    for (guint f = 0; f < G_N_ELEMENTS (all_formats); f++)
      for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
        Gray g = corner (sizes[s][0], sizes[s][1]);
        set_caps (h, all_formats[f], g.width, g.height);
        for (guint p = 0; p < G_N_ELEMENTS (pads); p++) {
          GstBuffer *in = make_frame (&g, all_formats[f], pads[p], copies->len * GST_MSECOND);
          GstMapInfo map;
          gst_buffer_map (in, &map, GST_MAP_READ);
          g_ptr_array_add (copies, g_bytes_new (map.data, map.size));
          gst_buffer_unmap (in, &map);
          g_ptr_array_add (names, g_strdup_printf ("%s %dx%d, stride + %d", gst_video_format_to_string (all_formats[f]),
              g.width, g.height, pads[p]));
          fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
        }
        g_free (g.pixels);
      }
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    fail_unless_equals_int (gst_harness_buffers_in_queue (h), copies->len);
    for (guint n = 0; n < copies->len; n++) {
      GstBuffer *out = gst_harness_pull (h);
      const char *what = g_ptr_array_index (names, n);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (out), n * GST_MSECOND);
      fail_unless (count_rois (out) == 0, "%s: %u objects", what, count_rois (out));
      GstMapInfo map;
      gst_buffer_map (out, &map, GST_MAP_READ);
      fail_unless (g_bytes_get_size (g_ptr_array_index (copies, n)) == map.size &&
          memcmp (map.data, g_bytes_get_data (g_ptr_array_index (copies, n), NULL), map.size) == 0,
          "%s: pixels changed", what);
      gst_buffer_unmap (out, &map);
      gst_buffer_unref (out);
    }
    g_ptr_array_unref (copies);
    g_ptr_array_unref (names);
    gst_harness_teardown (h);
  }
  /* search regions a little larger than the model's 45 x 45 window:
   * pyramids of 1 to 3 levels (their tables shorter than the device's least
   * buffer, 16 bytes), at the frame's edges too; windows inside the region */
  const int regions[][4] = {{88, 73, 46, 46}, {88, 73, 50, 50}, {88, 73, 55, 54}, {0, 0, 45, 45}, {211, 255, 0, 0}};
  for (guint i = 0; i < G_N_ELEMENTS (regions); i++) {
    gchar *desc = g_strdup_printf ("gpudetect " FACE_PROPS " min-neighbors=0 max-in-flight=2 roi-x=%d roi-y=%d "
        "roi-width=%d roi-height=%d", regions[i][0], regions[i][1], regions[i][2], regions[i][3]);
    GstHarness *h = gst_harness_new_parse (desc);
    g_free (desc);
    set_caps (h, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0, 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *out = gst_harness_pull (h);
    fail_unless (out != NULL);
    /* raw windows (min-neighbors 0) inside the region */
    for (guint k = 0; k < count_rois (out); k++) {
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (out, (gint) k);
      fail_unless (roi->x >= (guint) regions[i][0] && roi->y >= (guint) regions[i][1] &&
          roi->x + roi->w <= (guint) (regions[i][2] ? regions[i][0] + regions[i][2] : face_image.width) &&
          roi->y + roi->h <= (guint) (regions[i][3] ? regions[i][1] + regions[i][3] : face_image.height));
    }
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
  /* the face image with rows padded by an odd number of bytes: the face
   * where it is, in every format; and an odd size (257 x 301), padded or
   * not: the same objects */
  Gray odd = corner (257, 301);
  for (guint f = 0; f < G_N_ELEMENTS (all_formats); f++) {
    GstHarness *h = gst_harness_new_parse ("gpudetect " FACE_PROPS " max-in-flight=2");
    set_caps (h, all_formats[f], face_image.width, face_image.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, all_formats[f], 13, 0)), GST_FLOW_OK);
    set_caps (h, all_formats[f], odd.width, odd.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&odd, all_formats[f], 0, 1)), GST_FLOW_OK);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&odd, all_formats[f], 13, 2)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *out = gst_harness_pull (h);
    gchar *what = g_strdup_printf ("%s, stride + 13", gst_video_format_to_string (all_formats[f]));
    assert_box (out, 88, 73, 90, 90, 256, 300, what);
    gst_buffer_unref (out);
    GstBuffer *plain = gst_harness_pull (h), *padded = gst_harness_pull (h);
    fail_unless (count_rois (plain) >= 1 && count_rois (plain) == count_rois (padded), "%s: %u and %u objects", what,
        count_rois (plain), count_rois (padded));
    for (guint k = 0; k < count_rois (plain); k++) {
      GstVideoRegionOfInterestMeta *a = gst_buffer_get_video_region_of_interest_meta_id (plain, (gint) k);
      GstVideoRegionOfInterestMeta *b = gst_buffer_get_video_region_of_interest_meta_id (padded, (gint) k);
      fail_unless (a->x == b->x && a->y == b->y && a->w == b->w && a->h == b->h, "%s: 257 x 301 padded differs",
          what);
    }
    g_free (what);
    gst_buffer_unref (plain);
    gst_buffer_unref (padded);
    gst_harness_teardown (h);
  }
  g_free (odd.pixels);
}
GST_END_TEST;

/* Runs `desc` to its error: the error's domain and code, its message the
 * English text given (a string of the po/ catalogues), and the pipeline
 * stops cleanly (to NULL) within the time. */
/* The message has a translation in every catalogue of po/. */
static void assert_translated (const char *message)
{
  gchar *linguas = NULL;
  fail_unless (g_file_get_contents (GPUDETECT_SOURCE_DIR "/po/LINGUAS", &linguas, NULL, NULL));
  gchar **langs = g_strsplit_set (linguas, " \n", -1);
  guint n = 0;
  for (gchar **l = langs; *l; l++) {
    if (!**l || **l == '#')
      continue;
    gchar *path = g_strdup_printf (GPUDETECT_SOURCE_DIR "/po/%s.po", *l);
    gchar *po = NULL;
    fail_unless (g_file_get_contents (path, &po, NULL, NULL), "%s", path);
    gchar *msgid = g_strdup_printf ("msgid \"%s\"\nmsgstr \"", message);
    const char *at = strstr (po, msgid);
    fail_unless (at != NULL && at[strlen (msgid)] != '"', "%s: no translation of \"%s\"", path, message);
    g_free (msgid);
    g_free (po);
    g_free (path);
    n++;
  }
  fail_unless (n >= 1);
  g_strfreev (langs);
  g_free (linguas);
}

/* No OpenCL platform at all: the ICD loader pointed at an empty directory.
 * The loader reads its vendors once per process, so the test runs again in
 * a child process (this very test binary), where only the child's case runs. */
GST_START_TEST (test_no_device_child)
{
  expect_error_full ("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8 ! gpudetect ! fakesink",
      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ_WRITE, 60, "No usable OpenCL device found.",
      "no OpenCL device found", "gpudetect");
  /* gputrack too */
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=3 ! gputrack ! fakesink", NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR, "gputrack: no error");
  GError *err = NULL;
  gst_message_parse_error (m, &err, NULL);
  fail_unless (err->domain == GST_RESOURCE_ERROR, "gputrack: %s", err->message);
  g_error_free (err);
  gst_message_unref (m);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

GST_START_TEST (test_no_device)
{
  assert_translated ("No usable OpenCL device found.");
  gchar *dir = g_dir_make_tmp ("gpudetect-no-icd-XXXXXX", NULL);
  fail_unless (dir != NULL);
  gchar **env = g_get_environ ();
  env = g_environ_setenv (env, "OCL_ICD_VENDORS", dir, TRUE);
  env = g_environ_setenv (env, "OCL_ICD_FILENAMES", "", TRUE);
  env = g_environ_setenv (env, "GST_CHECKS", "test_no_device_child", TRUE);
  env = g_environ_setenv (env, "GPUDETECT_TEST_CHILD", "1", TRUE);
  gchar *self = g_file_read_link ("/proc/self/exe", NULL);
  fail_unless (self != NULL);
  gchar *argv[] = {self, NULL};
  gchar *out = NULL, *errout = NULL;
  gint status = -1;
  fail_unless (g_spawn_sync (NULL, argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &errout, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL), "the child failed:\n%s\n%s", out, errout);
  /* the child did run its case (check prints "100%: Checks: 1") */
  fail_unless (strstr (out, "Checks: 1,") != NULL, "the child ran no test:\n%s\n%s", out, errout);
  g_free (out);
  g_free (errout);
  g_free (self);
  g_strfreev (env);
  g_rmdir (dir);
  g_free (dir);
}
GST_END_TEST;

/* A kernel build failure, forced through the engine's tuning hook
 * (build-options, appended to the OpenCL build options): a library error
 * with the build log in its debug text, a clean stop, and the next start
 * with the plain options builds and detects (the failure was not cached). */
GST_START_TEST (test_build_failure)
{
  assert_translated ("Could not build the OpenCL detection kernels.");
  expect_error_full ("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8 ! gpudetect tuning=\"build-options=-D WG=+\" ! "
      "fakesink", GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_INIT, 60, "Could not build the OpenCL detection kernels.",
      "error", "gpudetect");
  GstHarness *h = gst_harness_new_parse ("gpudetect " FACE_PROPS " max-in-flight=1");
  set_caps (h, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0, 0)), GST_FLOW_OK);
  GstBuffer *b = gst_harness_pull (h);
  assert_box (b, 88, 73, 90, 90, 256, 300, "after a failed build");
  gst_buffer_unref (b);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Synthetic face-like detections for gputrack: one box on a textured frame. */
static GstBuffer *textured (GstVideoFormat format, int w, int h, int shift, GstClockTime pts)
{
  Gray g = {w, h, g_malloc ((gsize) w * h)};
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      g.pixels[(gsize) y * w + x] = (guint8) (((x + shift) * 37) ^ (y * 91));
  GstBuffer *b = make_frame (&g, format, 0, pts);
  g_free (g.pixels);
  return b;
}

static void add_detection (GstBuffer *b, int fw, int fh, int x, int y, int w, int h)
{
  GstVideoRegionOfInterestMeta *m = gst_buffer_add_video_region_of_interest_meta (b, "face", x, y, w, h);
  gst_video_region_of_interest_meta_add_param (m, gst_structure_new ("detection", "x_min", G_TYPE_DOUBLE,
      (double) x / fw, "y_min", G_TYPE_DOUBLE, (double) y / fh, "x_max", G_TYPE_DOUBLE, (double) (x + w) / fw,
      "y_max", G_TYPE_DOUBLE, (double) (y + h) / fh, "confidence", G_TYPE_DOUBLE, 0.9, "label_id", G_TYPE_INT, 0,
      "label", G_TYPE_STRING, "face", NULL));
}

/* gputrack: a track kept across frames without detections; a resolution
 * change (in every format) and a flush each forget it (boxes of another
 * stream mean nothing), and every box stays inside its frame. */
GST_START_TEST (test_gputrack_renegotiation_and_flush)
{
  /* one frame in flight: each push gives its frame back at once (the
   * asynchronous path with frames held is element-gputrack's) */
  GstHarness *h = gst_harness_new_parse ("gputrack max-in-flight=1");
  guint pushed = 0;
  for (guint f = 0; f < G_N_ELEMENTS (all_formats); f++) {
    const int w = f % 2 ? 161 : 320, hgt = f % 2 ? 97 : 240; /* odd sizes every other format */
    set_caps (h, all_formats[f], w, hgt);
    /* a detection, then frames without: the tracker carries the box */
    GstBuffer *in = textured (all_formats[f], w, hgt, 0, pushed++ * GST_MSECOND);
    add_detection (in, w, hgt, w / 4, hgt / 4, w / 3, hgt / 3);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    gst_buffer_unref (gst_harness_pull (h));
    for (int k = 1; k <= 2; k++) {
      fail_unless_equals_int (gst_harness_push (h, textured (all_formats[f], w, hgt, k, pushed++ * GST_MSECOND)),
          GST_FLOW_OK);
      GstBuffer *out = gst_harness_pull (h);
      fail_unless (count_rois (out) == 1, "%s: the track was lost", gst_video_format_to_string (all_formats[f]));
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (out, 0);
      fail_unless (roi->x + roi->w <= (guint) w && roi->y + roi->h <= (guint) hgt);
      gst_buffer_unref (out);
    }
    if (f % 2) {
      /* a flush: no track afterwards */
      fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
      fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
      GstSegment seg;
      gst_segment_init (&seg, GST_FORMAT_TIME);
      fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
      fail_unless_equals_int (gst_harness_push (h, textured (all_formats[f], w, hgt, 3, pushed++ * GST_MSECOND)),
          GST_FLOW_OK);
      GstBuffer *out = gst_harness_pull (h);
      fail_unless_equals_int (count_rois (out), 0);
      gst_buffer_unref (out);
    }
  }
  /* a resolution change with a live track: none on the next frame */
  set_caps (h, GST_VIDEO_FORMAT_GRAY8, 320, 240);
  GstBuffer *in = textured (GST_VIDEO_FORMAT_GRAY8, 320, 240, 0, pushed++ * GST_MSECOND);
  add_detection (in, 320, 240, 200, 150, 100, 80);
  gst_harness_push (h, in);
  gst_buffer_unref (gst_harness_pull (h));
  set_caps (h, GST_VIDEO_FORMAT_GRAY8, 64, 48);
  fail_unless_equals_int (gst_harness_push (h, textured (GST_VIDEO_FORMAT_GRAY8, 64, 48, 1, pushed++ * GST_MSECOND)),
      GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  fail_unless_equals_int (count_rois (out), 0);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* roioverlay: renegotiation through every format and size, regions from the
 * old size (partly or wholly outside the new frame) on the new one, 1x1 and
 * odd sizes, odd strides, and a flush: every frame leaves, drawn inside its
 * planes only (the padding bytes stay as they were). */
GST_START_TEST (test_roioverlay_renegotiation_and_flush)
{
  GstHarness *h = gst_harness_new_parse ("roioverlay");
  const int sizes[][2] = {{320, 240}, {1, 1}, {33, 17}, {161, 97}};
  guint pushed = 0;
  for (guint f = 0; f < G_N_ELEMENTS (all_formats); f++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
      const int w = sizes[s][0], hgt = sizes[s][1];
      set_caps (h, all_formats[f], w, hgt);
      Gray g = {w, hgt, g_malloc0 ((gsize) w * hgt)};
      GstBuffer *in = make_frame (&g, all_formats[f], 5, pushed * GST_MSECOND);
      g_free (g.pixels);
      /* a region of the 320 x 240 stream, one across its right edge, one far outside */
      add_detection (in, 320, 240, 100, 80, 120, 100);
      add_detection (in, 320, 240, 300, 200, 60, 60);
      gst_buffer_add_video_region_of_interest_meta (in, "face", 5000, 4000, 10, 10);
      GstVideoMeta *vm = gst_buffer_get_video_meta (in);
      GstMapInfo map;
      gst_buffer_map (in, &map, GST_MAP_READ);
      guint8 *copy = g_memdup2 (map.data, map.size);
      gst_buffer_unmap (in, &map);
      const gsize stride0 = vm->stride[0];
      const gsize row = (gsize) w * GST_VIDEO_FORMAT_INFO_PSTRIDE (gst_video_format_get_info (all_formats[f]), 0);
      fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
      GstBuffer *out = gst_harness_pull (h);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (out), pushed * GST_MSECOND);
      gst_buffer_map (out, &map, GST_MAP_READ);
      gboolean drawn = FALSE;
      /* plane 0: the padding of each row unchanged; something drawn on the frames the regions reach */
      for (int y = 0; y < hgt; y++) {
        fail_unless (memcmp (map.data + y * stride0 + row, copy + y * stride0 + row, stride0 - row) == 0,
            "%s %dx%d: padding of row %d written", gst_video_format_to_string (all_formats[f]), w, hgt, y);
        drawn |= memcmp (map.data + y * stride0, copy + y * stride0, row) != 0;
      }
      fail_unless (drawn == (w > 100 && hgt > 80), "%s %dx%d: drawn %d", gst_video_format_to_string (all_formats[f]),
          w, hgt, drawn);
      gst_buffer_unmap (out, &map);
      gst_buffer_unref (out);
      g_free (copy);
      pushed++;
      if (s == 2) {
        fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
        fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
      }
    }
  gst_harness_teardown (h);
}
GST_END_TEST;

static Suite *stream_faults_suite (void)
{
  Suite *s = suite_create ("stream-faults");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  load_pgm (GPUDETECT_TEST_DATA "/grace_hopper_256x300.pgm", &face_image);
  face_crop.width = face_crop.height = 200;
  face_crop.pixels = g_malloc (200 * 200);
  for (int y = 0; y < 200; y++)
    memcpy (face_crop.pixels + y * 200, face_image.pixels + (gsize) (y + 40) * face_image.width + 50, 200);
  if (g_getenv ("GPUDETECT_TEST_CHILD")) {
    /* the child process of test_no_device */
    tcase_add_test (tc, test_no_device_child);
    return s;
  }
  tcase_add_test (tc, test_renegotiation_every_format);
  tcase_add_test (tc, test_flush_in_flight_1);
  tcase_add_test (tc, test_flush_in_flight_2);
  tcase_add_test (tc, test_flush_in_flight_16);
  tcase_add_test (tc, test_seeks_in_flight);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_gputrack_state_cycles);
  tcase_add_test (tc, test_properties_while_playing);
  tcase_add_test (tc, test_small_odd_frames);
  tcase_add_test (tc, test_no_device);
  tcase_add_test (tc, test_build_failure);
  tcase_add_test (tc, test_gputrack_renegotiation_and_flush);
  tcase_add_test (tc, test_roioverlay_renegotiation_and_flush);
  return s;
}

GST_CHECK_MAIN (stream_faults);
