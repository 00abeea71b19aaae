/* gputrack element tests (GstHarness): synthetic clips with known tracks —
 * textured sprites moving over textured backgrounds, crossing, one passing
 * behind another, leaving the frame — with detections on every 5th frame
 * (as gpudetect inference-interval=5 gives them); the test computes id
 * switches and MOTA against the known tracks.  Also: every input format, the
 * metadata contract, zero-term, messages, the OpenCL context shared with
 * gpudetect, errors; frames in flight (max-in-flight 1, 2, 8: order, counts,
 * the same objects), EOS drain, flush with frames in flight; one upload per
 * frame when gpudetect and gputrack share the device. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

/* GPUTRACK_TEST_VERBOSE=1: every miss, false box and id switch */
#define VERBOSE(...) \
  do { \
    if (g_getenv ("GPUTRACK_TEST_VERBOSE")) { \
      printf (__VA_ARGS__); \
      printf ("\n"); \
    } \
  } while (0)

/* ------------------------------------------------------------------------ */
/* synthetic clips                                                           */

typedef struct {
  int w, h;          /* size */
  double x, y;       /* top-left on frame 0 */
  double vx, vy;     /* pixels per frame */
  int z;             /* drawing order: higher in front */
  guint seed;        /* texture */
} Sprite;

typedef struct {
  int width, height;
  int frames;
  int interval;      /* detections on frames n % interval == 0 */
  guint bg_seed;
  const Sprite *sprites;
  int n_sprites;
} Clip;

static guint8 tex (guint seed, int x, int y, int c)
{
  /* smooth stripes and blobs of a colour of the seed's, plus hashed noise */
  guint h = (guint) (x * 73856093u) ^ (guint) (y * 19349663u) ^ (seed * 83492791u) ^ (guint) (c * 2654435761u);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  const double f = 0.15 + 0.05 * (seed % 5);
  const double v = 128 + 70 * sin (f * x + seed + c) * cos (f * 0.7 * y + 2 * c + seed * 0.3) + (double) (h % 40) - 20;
  return (guint8) CLAMP ((int) v, 0, 255);
}

static void sprite_at (const Sprite *s, int frame, double *x, double *y)
{
  *x = s->x + s->vx * frame;
  *y = s->y + s->vy * frame;
}

/* Visible fraction of sprite i on a frame (inside the frame, not covered by
 * sprites in front), by counting pixels. */
static double visible_fraction (const Clip *c, int i, int frame)
{
  const Sprite *s = &c->sprites[i];
  double sx, sy;
  sprite_at (s, frame, &sx, &sy);
  const int x0 = (int) floor (sx), y0 = (int) floor (sy);
  int vis = 0;
  for (int y = y0; y < y0 + s->h; y++)
    for (int x = x0; x < x0 + s->w; x++) {
      if (x < 0 || y < 0 || x >= c->width || y >= c->height)
        continue;
      gboolean covered = FALSE;
      for (int j = 0; j < c->n_sprites && !covered; j++) {
        if (c->sprites[j].z <= s->z)
          continue;
        double ox, oy;
        sprite_at (&c->sprites[j], frame, &ox, &oy);
        const int a = (int) floor (ox), b = (int) floor (oy);
        covered = x >= a && x < a + c->sprites[j].w && y >= b && y < b + c->sprites[j].h;
      }
      vis += !covered;
    }
  return (double) vis / (s->w * s->h);
}

/* Frame `n` of the clip as RGBx. */
static GstBuffer *render (const Clip *c, int n)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBx, c->width, c->height);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  GstMapInfo m;
  gst_buffer_map (buf, &m, GST_MAP_WRITE);
  const int stride = GST_VIDEO_INFO_PLANE_STRIDE (&info, 0);
  for (int y = 0; y < c->height; y++)
    for (int x = 0; x < c->width; x++) {
      guint8 *p = m.data + y * stride + 4 * x;
      /* the background drifts slowly, as under a panning camera */
      for (int ch = 0; ch < 3; ch++)
        p[ch] = tex (c->bg_seed, x + n / 4, y, ch);
      p[3] = 255;
    }
  /* sprites back to front */
  for (int z = -10; z <= 10; z++)
    for (int i = 0; i < c->n_sprites; i++) {
      const Sprite *s = &c->sprites[i];
      if (s->z != z)
        continue;
      double sx, sy;
      sprite_at (s, n, &sx, &sy);
      const int x0 = (int) floor (sx), y0 = (int) floor (sy);
      for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
          const int fx = x0 + x, fy = y0 + y;
          if (fx < 0 || fy < 0 || fx >= c->width || fy >= c->height)
            continue;
          guint8 *p = m.data + fy * stride + 4 * fx;
          for (int ch = 0; ch < 3; ch++)
            p[ch] = tex (s->seed, x, y, ch);
        }
    }
  gst_buffer_unmap (buf, &m);
  GST_BUFFER_PTS (buf) = n * GST_SECOND / 30;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

/* As gpudetect attaches them: one ROI per detected object. */
static void add_detection_with (GstBuffer *buf, int fw, int fh, int x, int y, int w, int h, gint id, double conf)
{
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf, "object", x, y, w, h);
  roi->id = id;
  gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("detection", "x_min", G_TYPE_DOUBLE,
      (double) x / fw, "y_min", G_TYPE_DOUBLE, (double) y / fh, "x_max", G_TYPE_DOUBLE, (double) (x + w) / fw,
      "y_max", G_TYPE_DOUBLE, (double) (y + h) / fh, "confidence", G_TYPE_DOUBLE, conf, "label_id", G_TYPE_INT, 0,
      "label", G_TYPE_STRING, "object", NULL));
}

static void add_detection (GstBuffer *buf, int fw, int fh, int x, int y, int w, int h, gint id)
{
  add_detection_with (buf, fw, fh, x, y, w, h, id, 0.8);
}

typedef struct {
  int x, y, w, h;
  gint id;
} Hyp;

static double iou (double ax, double ay, double aw, double ah, double bx, double by, double bw, double bh)
{
  const double x0 = MAX (ax, bx), y0 = MAX (ay, by), x1 = MIN (ax + aw, bx + bw), y1 = MIN (ay + ah, by + bh);
  const double in = MAX (0, x1 - x0) * MAX (0, y1 - y0);
  const double un = aw * ah + bw * bh - in;
  return un > 0 ? in / un : 0;
}

/* The tracker's objects on an output buffer: every ROI with an object_id. */
static int read_hyps (GstBuffer *buf, Hyp *out, int max)
{
  int n = 0;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *o = gst_video_region_of_interest_meta_get_param (roi, "object_id");
    if (!o || n >= max)
      continue;
    Hyp h = {(int) roi->x, (int) roi->y, (int) roi->w, (int) roi->h, -1};
    fail_unless (gst_structure_get_int (o, "id", &h.id));
    out[n++] = h;
  }
  return n;
}

typedef struct {
  int gt, fn, fp, idsw, matched;
  double mota;
  double mean_iou;
} Score;

/* The clip's frame n with its detections (of the sprites at least half
 * visible, on detection frames), as gpudetect would send it. */
static GstBuffer *clip_frame (const Clip *c, int n)
{
  GstBuffer *in = render (c, n);
  if (n % c->interval == 0) {
    gint rid = 0;
    for (int i = 0; i < c->n_sprites; i++) {
      if (visible_fraction (c, i, n) < 0.5)
        continue;
      double sx, sy;
      sprite_at (&c->sprites[i], n, &sx, &sy);
      /* the detector's box: clipped to the frame, a pixel of jitter */
      int x0 = (int) floor (sx) + ((n / c->interval + i) % 3 - 1), y0 = (int) floor (sy);
      int x1 = MIN (x0 + c->sprites[i].w, c->width), y1 = MIN (y0 + c->sprites[i].h, c->height);
      x0 = MAX (x0, 0);
      y0 = MAX (y0, 0);
      add_detection (in, c->width, c->height, x0, y0, x1 - x0, y1 - y0, rid++);
    }
  }
  GST_BUFFER_OFFSET (in) = n;
  return in;
}

/* Every object of every output frame, for comparing runs: (frame, roi id,
 * object id, x, y, w, h, tracking confidence in millionths) per ROI with an
 * object id. */
#define RECORD_FIELDS 8
typedef struct {
  GArray *rows; /* gint[RECORD_FIELDS] each */
} Record;

static void record_frame (Record *r, int n, GstBuffer *out)
{
  if (!r)
    return;
  gpointer st = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (out, &st, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *o = gst_video_region_of_interest_meta_get_param (roi, "object_id");
    gint id = -1;
    if (!o || !gst_structure_get_int (o, "id", &id))
      continue;
    gdouble conf = -1;
    GstStructure *t = gst_video_region_of_interest_meta_get_param (roi, "tracking");
    fail_unless (t && gst_structure_get_double (t, "confidence", &conf));
    gint row[RECORD_FIELDS] = {n, roi->id, id, (gint) roi->x, (gint) roi->y, (gint) roi->w, (gint) roi->h,
        (gint) lround (conf * 1e6)};
    g_array_append_vals (r->rows, row, RECORD_FIELDS);
  }
}

/* Scores output frame n against the sprites (CLEAR MOT: objects at least
 * half visible are ground truth, matched to the tracker's boxes at
 * IoU >= 0.5, greedily by IoU). */
static void score_frame (const Clip *c, int n, GstBuffer *out, Score *s, double *iou_sum, gint *last_id)
{
  gboolean vis[16];
  for (int i = 0; i < c->n_sprites; i++)
    vis[i] = visible_fraction (c, i, n) >= 0.5;
  Hyp hyps[32];
  const int nh = read_hyps (out, hyps, 32);
  /* roi->id unique in the buffer */
  {
    gpointer st = NULL;
    GstMeta *meta;
    guint64 seen = 0;
    while ((meta = gst_buffer_iterate_meta_filtered (out, &st, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
      const gint id = ((GstVideoRegionOfInterestMeta *) meta)->id;
      fail_unless (id >= 0 && id < 64 && !(seen & (G_GUINT64_CONSTANT (1) << id)), "roi id %d repeated", id);
      seen |= G_GUINT64_CONSTANT (1) << id;
    }
  }
  gboolean used[32] = {FALSE};
  gboolean gt_done[16] = {FALSE};
  /* greedy matching by IoU */
  for (;;) {
    double best = 0.5;
    int bi = -1, bj = -1;
    for (int i = 0; i < c->n_sprites; i++) {
      if (!vis[i] || gt_done[i])
        continue;
      double sx, sy;
      sprite_at (&c->sprites[i], n, &sx, &sy);
      for (int j = 0; j < nh; j++) {
        if (used[j])
          continue;
        /* ground truth clipped to the frame, as the tracker's boxes are */
        const double gx0 = MAX (sx, 0), gy0 = MAX (sy, 0);
        const double gx1 = MIN (sx + c->sprites[i].w, c->width), gy1 = MIN (sy + c->sprites[i].h, c->height);
        const double v = iou (gx0, gy0, gx1 - gx0, gy1 - gy0, hyps[j].x, hyps[j].y, hyps[j].w, hyps[j].h);
        if (v >= best) {
          best = v;
          bi = i;
          bj = j;
        }
      }
    }
    if (bi < 0)
      break;
    gt_done[bi] = used[bj] = TRUE;
    s->matched++;
    *iou_sum += best;
    if (last_id[bi] >= 0 && last_id[bi] != hyps[bj].id) {
      s->idsw++;
      VERBOSE ("frame %d: sprite %d id %d -> %d", n, bi, last_id[bi], hyps[bj].id);
    }
    last_id[bi] = hyps[bj].id;
  }
  for (int i = 0; i < c->n_sprites; i++) {
    s->gt += vis[i];
    if (vis[i] && !gt_done[i]) {
      s->fn++;
      VERBOSE ("frame %d: sprite %d missed", n, i);
    }
  }
  for (int j = 0; j < nh; j++)
    if (!used[j]) {
      s->fp++;
      VERBOSE ("frame %d: false box %d,%d %dx%d id %d", n, hyps[j].x, hyps[j].y, hyps[j].w, hyps[j].h, hyps[j].id);
    }
}

/* Runs the clip through gputrack (`props`), taking output buffers as they
 * come (frames in flight hold some back), the rest after EOS; checks that
 * every frame comes out once, in order; scores the output (and records its
 * objects in `rec` where given). */
static Score run_clip_recorded (const Clip *c, const char *props, Record *rec)
{
  gchar *desc = g_strdup_printf ("gputrack %s", props);
  GstHarness *h = gst_harness_new_parse (desc);
  g_free (desc);
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGBx,width=%d,height=%d,framerate=30/1", c->width, c->height);
  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);

  Score s = {0};
  double iou_sum = 0;
  gint last_id[16];
  for (int i = 0; i < 16; i++)
    last_id[i] = -1;
  int next = 0;
  for (int n = 0; n <= c->frames; n++) {
    if (n < c->frames) {
      fail_unless_equals_int (gst_harness_push (h, clip_frame (c, n)), GST_FLOW_OK);
    } else {
      fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    }
    GstBuffer *out;
    while ((out = gst_harness_try_pull (h))) {
      fail_unless_equals_int ((int) GST_BUFFER_OFFSET (out), next);
      score_frame (c, next, out, &s, &iou_sum, last_id);
      record_frame (rec, next, out);
      next++;
      gst_buffer_unref (out);
    }
  }
  fail_unless_equals_int (next, c->frames);
  gst_harness_teardown (h);
  s.mota = s.gt ? 1.0 - (double) (s.fn + s.fp + s.idsw) / s.gt : 0;
  s.mean_iou = s.matched ? iou_sum / s.matched : 0;
  VERBOSE ("gt %d fn %d fp %d idsw %d: MOTA %.3f, mean IoU %.3f", s.gt, s.fn, s.fp, s.idsw, s.mota, s.mean_iou);
  return s;
}

static Score run_clip (const Clip *c, const char *props)
{
  return run_clip_recorded (c, props, NULL);
}

/* Two sprites crossing over a textured background, one passing in front of
 * the other; a third leaving the frame on the right; a fourth entering at
 * the bottom. */
static const Sprite crossing_sprites[] = {
    {40, 40, 10, 100, 3.0, 0.2, 1, 11},
    {40, 40, 270, 110, -3.0, -0.3, 0, 22},
    {36, 48, 220, 20, 2.5, 0.5, 0, 33},
    {44, 36, 150, 250, 0.5, -2.0, 0, 44},
};
static const Clip crossing = {320, 240, 90, 5, 7, crossing_sprites, G_N_ELEMENTS (crossing_sprites)};

/* One sprite hidden behind another for longer than the detection interval. */
static const Sprite occlusion_sprites[] = {
    {56, 56, 130, 90, 0.0, 0.0, 2, 55},   /* a big static occluder in front */
    {36, 36, 20, 100, 3.0, 0.0, 0, 66},   /* passes behind it */
    {30, 30, 250, 30, -2.0, 1.3, 0, 77},
};
static const Clip occlusion = {320, 240, 100, 5, 9, occlusion_sprites, G_N_ELEMENTS (occlusion_sprites)};

GST_START_TEST (test_synthetic_crossing)
{
  Score s = run_clip (&crossing, "");
  printf ("crossing: %d ground-truth boxes, %d missed, %d false, %d id switches: MOTA %.3f, mean IoU %.3f\n", s.gt,
      s.fn, s.fp, s.idsw, s.mota, s.mean_iou);
  fail_unless (s.idsw == 0, "%d id switches", s.idsw);
  fail_unless (s.mota >= 0.95, "MOTA %.3f", s.mota);
  fail_unless (s.mean_iou >= 0.85, "mean IoU %.3f", s.mean_iou);
  /* the same clip with IoU association alone (no search) misses 4 frames in 5 */
  Score z = run_clip (&crossing, "tracking-type=zero-term");
  printf ("crossing, zero-term: MOTA %.3f\n", z.mota);
  fail_unless (z.mota < 0.5, "zero-term MOTA %.3f", z.mota);
}
GST_END_TEST;

GST_START_TEST (test_synthetic_occlusion)
{
  Score s = run_clip (&occlusion, "");
  printf ("occlusion: %d ground-truth boxes, %d missed, %d false, %d id switches: MOTA %.3f, mean IoU %.3f\n", s.gt,
      s.fn, s.fp, s.idsw, s.mota, s.mean_iou);
  fail_unless (s.idsw == 0, "%d id switches", s.idsw);
  fail_unless (s.mota >= 0.9, "MOTA %.3f", s.mota);
}
GST_END_TEST;


/* The corners of template-size x search-radius: 64 x 64 (a 192-pixel search
 * area of 129 x 129 offsets per track; on devices of 32 to 48 KB of local
 * memory the template's rows go in chunks) tracks as the default does; 8 x 1
 * runs.  The first 30 frames of the crossing clip. */
GST_START_TEST (test_template_size_radius_corners)
{
  Clip c = crossing;
  c.frames = 30;
  Score big = run_clip (&c, "template-size=64 search-radius=64");
  printf ("crossing, 30 frames, template-size=64 search-radius=64: %d ground-truth boxes, %d missed, %d false, "
      "%d id switches: MOTA %.3f\n", big.gt, big.fn, big.fp, big.idsw, big.mota);
  fail_unless (big.gt > 0);
  fail_unless (big.idsw == 0, "%d id switches", big.idsw);
  fail_unless (big.mota >= 0.9, "MOTA %.3f", big.mota);
  Score small = run_clip (&c, "template-size=8 search-radius=1");
  printf ("crossing, 30 frames, template-size=8 search-radius=1: MOTA %.3f\n", small.mota);
  fail_unless (small.gt == big.gt);
}
GST_END_TEST;

/* max-in-flight 1, 2 and 8: every frame out once, in order (run_clip
 * checks), with the same objects (ids, boxes) on every frame; frames held
 * back while in flight (with 8, none comes out before the 8th is in). */
GST_START_TEST (test_in_flight_same_results)
{
  Record ref = {g_array_new (FALSE, FALSE, sizeof (gint))};
  run_clip_recorded (&crossing, "max-in-flight=1", &ref);
  fail_unless (ref.rows->len > RECORD_FIELDS * (guint) crossing.frames, "%u objects", ref.rows->len / RECORD_FIELDS);
  const guint depths[] = {2, 8};
  for (guint k = 0; k < G_N_ELEMENTS (depths); k++) {
    gchar *props = g_strdup_printf ("max-in-flight=%u", depths[k]);
    Record r = {g_array_new (FALSE, FALSE, sizeof (gint))};
    run_clip_recorded (&crossing, props, &r);
    g_free (props);
    fail_unless_equals_int (r.rows->len, ref.rows->len);
    fail_unless (memcmp (r.rows->data, ref.rows->data, ref.rows->len * sizeof (gint)) == 0,
        "max-in-flight=%u: objects differ from max-in-flight=1", depths[k]);
    g_array_unref (r.rows);
  }
  g_array_unref (ref.rows);

  /* held back: with 8 in flight, a frame leaves once 8 are held or its
   * result is back; after EOS all are out */
  GstHarness *h = gst_harness_new_parse ("gputrack max-in-flight=8");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=320,height=240,framerate=30/1");
  int out = 0;
  for (int n = 0; n < 20; n++) {
    fail_unless_equals_int (gst_harness_push (h, clip_frame (&crossing, n)), GST_FLOW_OK);
    GstBuffer *b;
    while ((b = gst_harness_try_pull (h))) {
      fail_unless_equals_int ((int) GST_BUFFER_OFFSET (b), out++);
      gst_buffer_unref (b);
    }
    fail_unless (n + 1 - out <= 8, "%d frames held with max-in-flight=8", n + 1 - out);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  GstBuffer *b;
  while ((b = gst_harness_try_pull (h))) {
    fail_unless_equals_int ((int) GST_BUFFER_OFFSET (b), out++);
    gst_buffer_unref (b);
  }
  fail_unless_equals_int (out, 20);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* EOS drains: with max-in-flight above the frame count nothing needs to
 * leave before EOS, and everything leaves at it, before the EOS event. */
GST_START_TEST (test_eos_drain)
{
  GstHarness *h = gst_harness_new_parse ("gputrack max-in-flight=16");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=320,height=240,framerate=30/1");
  for (int n = 0; n < 10; n++)
    fail_unless_equals_int (gst_harness_push (h, clip_frame (&crossing, n)), GST_FLOW_OK);
  /* drop what was ready early, in order */
  int out = 0;
  GstBuffer *b;
  while ((b = gst_harness_try_pull (h))) {
    fail_unless_equals_int ((int) GST_BUFFER_OFFSET (b), out++);
    gst_buffer_unref (b);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while (out < 10) {
    b = gst_harness_pull (h);
    fail_unless (b != NULL);
    fail_unless_equals_int ((int) GST_BUFFER_OFFSET (b), out++);
    /* tracked: frame 0's detections carry ids, and so do later frames' boxes */
    Hyp hy[8];
    fail_unless (read_hyps (b, hy, 8) >= 3, "frame %d: no tracked objects", out - 1);
    gst_buffer_unref (b);
  }
  gboolean eos = FALSE;
  GstEvent *ev;
  while ((ev = gst_harness_try_pull_event (h))) {
    eos |= GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
  }
  fail_unless (eos);
  fail_unless (gst_harness_try_pull (h) == NULL);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* A flush with frames in flight: they are dropped, none comes out, the
 * tracks are forgotten (new ids after it), and the element goes on. */
GST_START_TEST (test_flush_in_flight)
{
  GstHarness *h = gst_harness_new_parse ("gputrack max-in-flight=8");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=320,height=240,framerate=30/1");
  /* frames go in until some are held (a frame leaves as soon as its search
   * is back, which a fast device may do before the next frame comes) */
  int pushed = 0, before = 0;
  GstBuffer *b;
  gint max_id = -1;
  while (pushed < crossing.frames && before == pushed) {
    fail_unless_equals_int (gst_harness_push (h, clip_frame (&crossing, pushed)), GST_FLOW_OK);
    pushed++;
    while ((b = gst_harness_try_pull (h))) {
      Hyp hy[8];
      const int nh = read_hyps (b, hy, 8);
      for (int i = 0; i < nh; i++)
        max_id = MAX (max_id, hy[i].id);
      before++;
      gst_buffer_unref (b);
    }
  }
  fail_unless (before < pushed, "nothing was in flight after %d frames", pushed);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  fail_unless (gst_harness_try_pull (h) == NULL, "a frame in flight came out after the flush");
  /* after the flush: 5 frames from the next detection frame on, out in order */
  const int resume = (pushed / 5 + 1) * 5; /* (fail_unless_equals_int declares `first`) */
  for (int n = resume; n < resume + 5; n++)
    fail_unless_equals_int (gst_harness_push (h, clip_frame (&crossing, n)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  int out = resume;
  while ((b = gst_harness_try_pull (h))) {
    fail_unless_equals_int ((int) GST_BUFFER_OFFSET (b), out++);
    Hyp hy[8];
    const int nh = read_hyps (b, hy, 8);
    fail_unless (nh >= 1, "frame %d: nothing tracked after the flush", out - 1);
    for (int i = 0; i < nh; i++)
      fail_unless (hy[i].id > max_id, "id %d from before the flush (ids up to %d then)", hy[i].id, max_id);
    gst_buffer_unref (b);
  }
  fail_unless_equals_int (out, resume + 5);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* A static textured sprite detected on frame 0 only, in every input format:
 * one id on every frame, the box where the sprite is, the metadata contract
 * on detected and on tracked frames. */
GST_START_TEST (test_formats_and_metadata)
{
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
      GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx};
  static const Sprite one[] = {{48, 40, 100, 60, 2.0, 1.0, 0, 5}};
  const Clip c = {256, 192, 8, 1000, 3, one, 1};
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstHarness *h = gst_harness_new_parse ("gputrack message-mode=every-frame max-in-flight=1");
    gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1",
        gst_video_format_to_string (formats[f]), c.width, c.height);
    gst_harness_set_src_caps_str (h, caps);
    g_free (caps);
    GstBus *bus = gst_bus_new ();
    gst_element_set_bus (h->element, bus);
    GstVideoInfo rgb, info;
    gst_video_info_set_format (&rgb, GST_VIDEO_FORMAT_RGBx, c.width, c.height);
    gst_video_info_set_format (&info, formats[f], c.width, c.height);
    gint id = -1;
    for (int n = 0; n < c.frames; n++) {
      GstBuffer *src = render (&c, n);
      GstBuffer *in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
      GstVideoFrame a, b;
      fail_unless (gst_video_frame_map (&a, &rgb, src, GST_MAP_READ));
      fail_unless (gst_video_frame_map (&b, &info, in, GST_MAP_WRITE));
      GstVideoConverter *conv = gst_video_converter_new (&rgb, &info, NULL);
      gst_video_converter_frame (conv, &a, &b);
      gst_video_converter_free (conv);
      gst_video_frame_unmap (&a);
      gst_video_frame_unmap (&b);
      gst_buffer_unref (src);
      GST_BUFFER_PTS (in) = n * GST_SECOND / 30;
      if (n == 0)
        add_detection (in, c.width, c.height, 100, 60, 48, 40, 0);
      fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
      GstBuffer *out = gst_harness_pull (h);
      fail_unless_equals_int (gst_buffer_get_n_meta (out, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE), 1);
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (out, 0);
      fail_unless (roi != NULL, "%s frame %d: no roi with id 0", gst_video_format_to_string (formats[f]), n);
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "object");
      GstStructure *o = gst_video_region_of_interest_meta_get_param (roi, "object_id");
      GstStructure *t = gst_video_region_of_interest_meta_get_param (roi, "tracking");
      GstStructure *d = gst_video_region_of_interest_meta_get_param (roi, "detection");
      fail_unless (o != NULL && t != NULL && d != NULL);
      gint this_id = -1, label_id = -1, since = -1;
      gdouble conf = -1, det_conf = -1, x_min = -1;
      fail_unless (gst_structure_get_int (o, "id", &this_id));
      fail_unless (gst_structure_get (t, "confidence", G_TYPE_DOUBLE, &conf, "frames-since-detection", G_TYPE_INT,
          &since, NULL));
      fail_unless (gst_structure_get (d, "confidence", G_TYPE_DOUBLE, &det_conf, "label_id", G_TYPE_INT, &label_id,
          "x_min", G_TYPE_DOUBLE, &x_min, NULL));
      fail_unless_equals_string (gst_structure_get_string (d, "label"), "object");
      fail_unless (fabs (det_conf - 0.8) < 1e-9 && label_id == 0);
      fail_unless (fabs (x_min - (double) roi->x / c.width) < 1e-9);
      fail_unless_equals_int (since, n);
      fail_unless (conf >= 0.4 && conf <= 1.0, "confidence %f", conf);
      if (id < 0)
        id = this_id;
      fail_unless_equals_int (this_id, id);
      double sx, sy;
      sprite_at (&one[0], n, &sx, &sy);
      const double v = iou (sx, sy, 48, 40, roi->x, roi->y, roi->w, roi->h);
      fail_unless (v >= 0.8, "%s frame %d: IoU %.3f (box %u,%u)", gst_video_format_to_string (formats[f]), n, v,
          roi->x, roi->y);
      /* the element message */
      GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
      fail_unless (msg != NULL);
      const GstStructure *ms = gst_message_get_structure (msg);
      fail_unless (gst_structure_has_name (ms, "gputrack"));
      const GValue *objs = gst_structure_get_value (ms, "objects");
      fail_unless (objs != NULL && gst_value_list_get_size (objs) == 1);
      const GstStructure *mo = gst_value_get_structure (gst_value_list_get_value (objs, 0));
      guint mid = 0, mx = 0;
      gboolean detected = FALSE;
      fail_unless (gst_structure_get (mo, "id", G_TYPE_UINT, &mid, "detected", G_TYPE_BOOLEAN, &detected, "x",
          G_TYPE_UINT, &mx, NULL));
      fail_unless (mid == (guint) id && detected == (n == 0) && mx == roi->x);
      gst_message_unref (msg);
      gst_buffer_unref (out);
    }
    gst_element_set_bus (h->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* The object id of each ROI of a buffer, by ROI id (-1: none; ROI ids below n). */
static void ids_by_roi (GstBuffer *buf, gint *ids, int n)
{
  for (int i = 0; i < n; i++)
    ids[i] = -1;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *o = gst_video_region_of_interest_meta_get_param (roi, "object_id");
    if (o && roi->id >= 0 && roi->id < n)
      fail_unless (gst_structure_get_int (o, "id", &ids[roi->id]));
  }
}

static guint64 get_count (GstHarness *h, const char *prop)
{
  GstElement *t = gst_harness_find_element (h, "gputrack");
  guint64 v = 0;
  g_object_get (t, prop, &v, NULL);
  gst_object_unref (t);
  return v;
}

/* max-tracks: 800 detections on a 640x480 frame give the 256 (the default)
 * most confident tracks, and no more objects on the next frame; with
 * max-tracks=8, 20 detections give the 8 most confident, and 4 new ones two
 * frames later take the places of the 4 of those with the least confident
 * detections (none matched since); a warning and a message when dropping
 * begins and ends, not on every frame. */
GST_START_TEST (test_max_tracks)
{
  static const Sprite none[] = {{0, 0, 0, 0, 0, 0, 0, 0}};
  {
    const Clip c = {640, 480, 2, 1000, 11, none, 0};
    GstHarness *h = gst_harness_new_parse ("gputrack max-in-flight=1");
    gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=640,height=480,framerate=30/1");
    enum { N = 800, CAP = 256 };
    GstBuffer *in = render (&c, 0);
    /* 16x16 boxes on a 40x20 grid, confidences in a scrambled order: rank (7 i mod 800) / 800 */
    for (int i = 0; i < N; i++)
      add_detection_with (in, c.width, c.height, 16 * (i % 40), 16 * (i / 40), 16, 16, i, (7 * i % N + 1) / (double) N);
    const gint64 t0 = g_get_monotonic_time ();
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    const double first = (g_get_monotonic_time () - t0) / 1e6;
    static gint ids[N];
    ids_by_roi (out, ids, N);
    int tracked = 0;
    for (int i = 0; i < N; i++) {
      const gboolean kept = 7 * i % N >= N - CAP; /* the CAP most confident */
      fail_unless (kept == (ids[i] >= 0), "detection %d (confidence rank %d): object id %d", i, 7 * i % N, ids[i]);
      tracked += ids[i] >= 0;
    }
    fail_unless_equals_int (tracked, CAP);
    fail_unless_equals_int (count_rois (out), N); /* the others pass on, untracked */
    gst_buffer_unref (out);
    fail_unless_equals_int (get_count (h, "tracks-dropped"), N - CAP);
    /* a frame without detections: at most CAP objects */
    const gint64 t1 = g_get_monotonic_time ();
    fail_unless_equals_int (gst_harness_push (h, render (&c, 1)), GST_FLOW_OK);
    out = gst_harness_pull (h);
    const double second = (g_get_monotonic_time () - t1) / 1e6;
    Hyp hyps[N];
    const int n = read_hyps (out, hyps, N);
    fail_unless (n <= CAP, "%d objects", n);
    GST_INFO ("%d of %d objects tracked: %.2f s, then %.2f s for %d tracked objects", tracked, N, first, second, n);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
  {
    const Clip c = {320, 240, 4, 1000, 12, none, 0};
    GstHarness *h = gst_harness_new_parse ("gputrack max-tracks=8 max-in-flight=1");
    gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=320,height=240,framerate=30/1");
    GstBus *bus = gst_bus_new ();
    gst_element_set_bus (h->element, bus);
    enum { N = 20, NEW = 4 };
    gint ids[N + NEW];
    /* frame 0: 20 detections of confidence 0.05 to 1 (ROI i: 0.05 (i + 1)), in the top half */
    GstBuffer *in = render (&c, 0);
    for (int i = 0; i < N; i++)
      add_detection_with (in, c.width, c.height, 32 * (i % 10), 40 * (i / 10), 24, 24, i, 0.05 * (i + 1));
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    ids_by_roi (out, ids, N);
    gint kept[N];
    for (int i = 0; i < N; i++) {
      fail_unless ((i >= N - 8) == (ids[i] >= 0), "detection %d: object id %d", i, ids[i]);
      kept[i] = ids[i];
    }
    gst_buffer_unref (out);
    /* frame 1: no detections; the 8 tracks (the frame does not change: each
     * found where it was) */
    fail_unless_equals_int (gst_harness_push (h, render (&c, 1)), GST_FLOW_OK);
    out = gst_harness_pull (h);
    Hyp hyps[32];
    int n = read_hyps (out, hyps, 32);
    fail_unless_equals_int (n, 8);
    for (int k = 0; k < n; k++)
      fail_unless_equals_int (hyps[k].id, kept[N - 8 + k]);
    gst_buffer_unref (out);
    /* frame 2: 4 new detections in the bottom half, of confidence 0.99: the
     * tracks of ROIs 12 to 15 (the least confident kept) make room */
    in = render (&c, 2);
    for (int i = 0; i < NEW; i++)
      add_detection_with (in, c.width, c.height, 40 + 64 * i, 180, 24, 24, i, 0.99);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    out = gst_harness_pull (h);
    ids_by_roi (out, ids, NEW);
    for (int i = 0; i < NEW; i++)
      fail_unless (ids[i] > kept[N - 1], "new detection %d: object id %d", i, ids[i]);
    n = read_hyps (out, hyps, 32);
    fail_unless_equals_int (n, 8); /* the 4 detections, then the 4 tracks kept */
    for (int k = 0; k < NEW; k++)
      fail_unless_equals_int (hyps[k].id, ids[k]);
    for (int k = NEW; k < n; k++)
      fail_unless (hyps[k].id == kept[N - 4 + k - NEW], "object %d kept instead of %d (detection %d)", hyps[k].id,
          kept[N - 4 + k - NEW], N - 4 + k - NEW);
    gst_buffer_unref (out);
    fail_unless_equals_int (get_count (h, "tracks-dropped"), (N - 8) + NEW);
    /* frame 3: the 4 new ones detected again: nothing dropped */
    in = render (&c, 3);
    for (int i = 0; i < NEW; i++)
      add_detection_with (in, c.width, c.height, 40 + 64 * i, 180, 24, 24, i, 0.99);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    gst_buffer_unref (gst_harness_pull (h));
    fail_unless_equals_int (get_count (h, "tracks-dropped"), (N - 8) + NEW);
    /* two messages: dropping begins (12 on frame 0), and ends (frame 3) */
    const guint expect[2] = {N - 8, 0};
    for (int k = 0; k < 3; k++) {
      GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
      if (k == 2) {
        fail_unless (msg == NULL, "a third message: %" GST_PTR_FORMAT, msg ? gst_message_get_structure (msg) : NULL);
        break;
      }
      fail_unless (msg != NULL, "message %d missing", k);
      const GstStructure *ms = gst_message_get_structure (msg);
      guint dropped = 99, max_tracks = 0;
      fail_unless (gst_structure_has_name (ms, "gputrack-max-tracks"));
      fail_unless (gst_structure_get (ms, "dropped", G_TYPE_UINT, &dropped, "max-tracks", G_TYPE_UINT, &max_tracks,
          NULL));
      fail_unless_equals_int (dropped, expect[k]);
      fail_unless_equals_int (max_tracks, 8);
      gst_message_unref (msg);
    }
    gst_element_set_bus (h->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* zero-term: ids by IoU on frames with detections, nothing added between */
GST_START_TEST (test_zero_term)
{
  static const Sprite one[] = {{40, 40, 50, 50, 3.0, 0.0, 0, 8}};
  const Clip c = {200, 150, 11, 5, 3, one, 1};
  GstHarness *h = gst_harness_new_parse ("gputrack tracking-type=zero-term");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=200,height=150,framerate=30/1");
  gint id = -1;
  for (int n = 0; n < c.frames; n++) {
    GstBuffer *in = render (&c, n);
    if (n % 5 == 0)
      add_detection (in, c.width, c.height, 50 + 3 * n, 50, 40, 40, 0);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    Hyp hy[4];
    const int nh = read_hyps (out, hy, 4);
    fail_unless_equals_int (nh, n % 5 == 0 ? 1 : 0);
    if (nh) {
      if (id < 0)
        id = hy[0].id;
      fail_unless_equals_int (hy[0].id, id);
    }
    gst_buffer_unref (out);
  }
  gchar *name = NULL;
  GstElement *t = gst_harness_find_element (h, "gputrack");
  g_object_get (t, "device-name", &name, NULL);
  gst_object_unref (t);
  fail_unless (name == NULL, "zero-term opened a device: %s", name);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_errors)
{
  GstElement *e = gst_element_factory_make ("gputrack", NULL);
  g_object_set (e, "device", "no-such-opencl-device", NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gchar *dbg = NULL;
  gst_message_parse_error (msg, &err, &dbg);
  fail_unless (err->domain == GST_RESOURCE_ERROR && err->code == GST_RESOURCE_ERROR_OPEN_READ_WRITE, "%s", err->message);
  fail_unless (dbg && strstr (dbg, "no-such-opencl-device"), "%s", dbg);
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}
GST_END_TEST;

/* gpudetect and gputrack in one pipeline share one OpenCL device: one
 * have-context message, the same context on both elements. */
GST_START_TEST (test_shared_context)
{
  GstElement *p = gst_parse_launch ("videotestsrc num-buffers=3 ! video/x-raw,format=I420,width=160,height=120 ! "
      "gpudetect name=d ! gputrack name=t ! fakesink", NULL);
  fail_unless (p != NULL);
  GstBus *bus = gst_element_get_bus (p);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PLAYING), GST_STATE_CHANGE_ASYNC);
  int have = 0, need = 0;
  for (;;) {
    GstMessage *m = gst_bus_timed_pop (bus, 60 * GST_SECOND);
    fail_unless (m != NULL);
    const GstMessageType type = GST_MESSAGE_TYPE (m);
    if (type == GST_MESSAGE_HAVE_CONTEXT) {
      GstContext *ctx = NULL;
      gst_message_parse_have_context (m, &ctx);
      have += g_strcmp0 (gst_context_get_context_type (ctx), "gpudetect.cl.device") == 0;
      gst_context_unref (ctx);
    } else if (type == GST_MESSAGE_NEED_CONTEXT) {
      const gchar *t = NULL;
      gst_message_parse_context_type (m, &t);
      need += g_strcmp0 (t, "gpudetect.cl.device") == 0;
    }
    fail_if (type == GST_MESSAGE_ERROR);
    gst_message_unref (m);
    if (type == GST_MESSAGE_EOS)
      break;
  }
  fail_unless_equals_int (have, 1);
  fail_unless_equals_int (need, 1); /* the first element asks the application, the second its peer */
  GstElement *d = gst_bin_get_by_name (GST_BIN (p), "d"), *t = gst_bin_get_by_name (GST_BIN (p), "t");
  GstContext *cd = gst_element_get_context (d, "gpudetect.cl.device");
  GstContext *ct = gst_element_get_context (t, "gpudetect.cl.device");
  fail_unless (cd != NULL && ct != NULL);
  fail_unless_equals_string (gst_structure_get_string (gst_context_get_structure (cd), "name"),
      gst_structure_get_string (gst_context_get_structure (ct), "name"));
  gchar *dn = NULL, *tn = NULL;
  g_object_get (d, "device-name", &dn, NULL);
  g_object_get (t, "device-name", &tn, NULL);
  fail_unless (dn && tn && strcmp (dn, tn) == 0);
  g_free (dn);
  g_free (tn);
  gst_context_unref (cd);
  gst_context_unref (ct);
  gst_object_unref (d);
  gst_object_unref (t);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
}
GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* one upload for gpudetect ! gputrack                                       */

/* Frame n of a clip of the test image's face moving right and down, in
 * colour (a tint that varies over the frame, so that the chroma matters), as
 * `format`. */
static GstBuffer *face_frame (const Gray *g, GstVideoFormat format, int n)
{
  GstVideoInfo rgb, info;
  gst_video_info_set_format (&rgb, GST_VIDEO_FORMAT_RGBx, g->width, g->height);
  gst_video_info_set_format (&info, format, g->width, g->height);
  GstBuffer *src = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&rgb), NULL);
  GstMapInfo m;
  gst_buffer_map (src, &m, GST_MAP_WRITE);
  for (int y = 0; y < g->height; y++)
    for (int x = 0; x < g->width; x++) {
      const int sx = CLAMP (x - 2 * n, 0, g->width - 1), sy = CLAMP (y - n, 0, g->height - 1);
      const int v = g->pixels[sy * g->width + sx];
      guint8 *p = m.data + y * GST_VIDEO_INFO_PLANE_STRIDE (&rgb, 0) + 4 * x;
      p[0] = (guint8) CLAMP (v + (sx % 64) - 32, 0, 255);
      p[1] = (guint8) v;
      p[2] = (guint8) CLAMP (v + (sy % 48) - 24, 0, 255);
      p[3] = 255;
    }
  gst_buffer_unmap (src, &m);
  GstBuffer *in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  GstVideoFrame a, b;
  fail_unless (gst_video_frame_map (&a, &rgb, src, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&b, &info, in, GST_MAP_WRITE));
  GstVideoConverter *conv = gst_video_converter_new (&rgb, &info, NULL);
  gst_video_converter_frame (conv, &a, &b);
  gst_video_converter_free (conv);
  gst_video_frame_unmap (&a);
  gst_video_frame_unmap (&b);
  gst_buffer_unref (src);
  GST_BUFFER_PTS (in) = n * GST_SECOND / 30;
  GST_BUFFER_DURATION (in) = GST_SECOND / 30;
  GST_BUFFER_OFFSET (in) = n;
  return in;
}

/* Pushes `frames` frames and EOS into `h`; every output buffer in order. */
static GPtrArray *push_all (GstHarness *h, const Gray *g, GstVideoFormat format, int frames)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  for (int n = 0; n < frames; n++)
    fail_unless_equals_int (gst_harness_push (h, face_frame (g, format, n)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  GstBuffer *b;
  while ((b = gst_harness_try_pull (h))) {
    fail_unless_equals_int ((int) GST_BUFFER_OFFSET (b), (int) out->len);
    g_ptr_array_add (out, b);
  }
  fail_unless_equals_int (out->len, frames);
  return out;
}

static gboolean drop_frame_meta (GstBuffer *buf, GstMeta **meta, gpointer user_data)
{
  if (g_str_equal (g_type_name ((*meta)->info->api), "GstGpuDetectFrameMetaAPI"))
    *meta = NULL;
  return TRUE;
}

#define DETECT_PROPS "model=lbp-frontalface-improved min-size-width=24 min-size-height=24"

/* gpudetect ! gputrack on one device: gputrack takes the frames gpudetect
 * uploaded (in colour: the chroma of NV12 and I420 too) instead of uploading
 * them, and tracks exactly as when it uploads them itself (gpudetect's
 * output, its frames' meta removed, through a gputrack of its own): the same
 * ids, boxes and search confidences on every frame. */
GST_START_TEST (test_one_upload_with_gpudetect)
{
  Gray g;
  load_pgm (GPUDETECT_TEST_DATA "/grace_hopper_256x300.pgm", &g);
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_BGRx,
      GST_VIDEO_FORMAT_GRAY8};
  const int frames = 12;
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint interval = 1; interval <= 2; interval++) {
      const gchar *fmt = gst_video_format_to_string (formats[f]);
      gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1", fmt, g.width,
          g.height);
      /* gpudetect ! gputrack */
      gchar *desc = g_strdup_printf ("gpudetect " DETECT_PROPS " inference-interval=%u ! gputrack", interval);
      GstHarness *h = gst_harness_new_parse (desc);
      g_free (desc);
      gst_harness_set_src_caps_str (h, caps);
      GPtrArray *both = push_all (h, &g, formats[f], frames);
      const guint64 uploaded = get_count (h, "frames-uploaded"), shared = get_count (h, "frames-shared");
      gst_harness_teardown (h);

      /* gpudetect, then gputrack uploading every frame itself */
      desc = g_strdup_printf ("gpudetect " DETECT_PROPS " inference-interval=%u", interval);
      h = gst_harness_new_parse (desc);
      g_free (desc);
      gst_harness_set_src_caps_str (h, caps);
      GPtrArray *detected = push_all (h, &g, formats[f], frames);
      gst_harness_teardown (h);
      GstHarness *t = gst_harness_new ("gputrack");
      gst_harness_set_src_caps_str (t, caps);
      Record ref = {g_array_new (FALSE, FALSE, sizeof (gint))}, got = {g_array_new (FALSE, FALSE, sizeof (gint))};
      int carried = 0;
      for (int n = 0; n < frames; n++) {
        GstBuffer *in = gst_buffer_copy (g_ptr_array_index (detected, n));
        carried += gst_buffer_get_n_meta (in, g_type_from_name ("GstGpuDetectFrameMetaAPI")) > 0;
        gst_buffer_foreach_meta (in, drop_frame_meta, NULL);
        fail_unless_equals_int (gst_harness_push (t, in), GST_FLOW_OK);
      }
      fail_unless_equals_int (carried, 0); /* nothing downstream read them: no meta */
      fail_unless (gst_harness_push_event (t, gst_event_new_eos ()));
      for (int n = 0; n < frames; n++) {
        GstBuffer *b = gst_harness_pull (t);
        fail_unless (b != NULL);
        record_frame (&ref, n, b);
        gst_buffer_unref (b);
      }
      const guint64 ref_uploaded = get_count (t, "frames-uploaded"), ref_shared = get_count (t, "frames-shared");
      gst_harness_teardown (t);
      for (int n = 0; n < frames; n++) {
        GstBuffer *b = g_ptr_array_index (both, n);
        fail_unless (gst_buffer_get_n_meta (b, g_type_from_name ("GstGpuDetectFrameMetaAPI")) == 0,
            "gputrack passed the frame's meta on");
        record_frame (&got, n, b);
      }
      printf ("%s, inference-interval=%u: gputrack uploaded %" G_GUINT64_FORMAT " frames and took %" G_GUINT64_FORMAT
          " from gpudetect (alone: uploaded %" G_GUINT64_FORMAT "); %u tracked objects\n", fmt, interval, uploaded,
          shared, ref_uploaded, got.rows->len / RECORD_FIELDS);
      /* the face is tracked on every frame */
      fail_unless (ref.rows->len >= RECORD_FIELDS * (guint) frames, "%s: %u objects", fmt, ref.rows->len / RECORD_FIELDS);
      fail_unless_equals_int (got.rows->len, ref.rows->len);
      fail_unless (memcmp (got.rows->data, ref.rows->data, ref.rows->len * sizeof (gint)) == 0,
          "%s, inference-interval=%u: objects differ from gputrack's own upload", fmt, interval);
      /* every frame on the device once: detected frames from gpudetect, the others uploaded */
      fail_unless_equals_int (ref_shared, 0);
      fail_unless_equals_int (ref_uploaded, frames);
      fail_unless_equals_int (shared, (frames + interval - 1) / interval);
      fail_unless_equals_int (uploaded, frames - shared);
      g_array_unref (ref.rows);
      g_array_unref (got.rows);
      g_ptr_array_unref (both);
      g_ptr_array_unref (detected);
      g_free (caps);
    }
  g_free (g.pixels);
}
GST_END_TEST;


/* The element answers upstream's allocation query with a pool in
 * page-locked memory (upload-pool, default on); frames from it are tracked
 * as frames in ordinary memory are. */
GST_START_TEST (test_upload_pool)
{
  const gboolean settings[] = {TRUE, FALSE};
  Record rec[2] = {{g_array_new (FALSE, FALSE, sizeof (gint))}, {g_array_new (FALSE, FALSE, sizeof (gint))}};
  const int frames = 12;
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++) {
    gchar *desc = g_strdup_printf ("gputrack upload-pool=%s", settings[i] ? "true" : "false");
    GstHarness *h = gst_harness_new_parse (desc);
    g_free (desc);
    gst_harness_set_src_caps_str (h, "video/x-raw,format=RGBx,width=320,height=240,framerate=30/1");
    int out = 0;
    for (int n = 0; n <= frames; n++) {
      if (n < frames) {
        GstBuffer *src = clip_frame (&crossing, n);
        GstBuffer *in = gst_harness_create_buffer (h, gst_buffer_get_size (src));
        fail_unless (in != NULL);
        const gboolean ours = gst_memory_is_type (gst_buffer_peek_memory (in, 0), "GpuDetectHostMemory");
        fail_unless (ours == settings[i], "page-locked memory %d with upload-pool=%d", ours, settings[i]);
        GstAllocator *allocator = NULL; /* negotiated by the first buffer */
        gst_harness_get_allocator (h, &allocator, NULL);
        if (settings[i])
          fail_unless (allocator != NULL && g_strcmp0 (allocator->mem_type, "GpuDetectHostMemory") == 0);
        GstMapInfo m;
        fail_unless (gst_buffer_map (src, &m, GST_MAP_READ));
        gst_buffer_fill (in, 0, m.data, m.size);
        gst_buffer_unmap (src, &m);
        fail_unless (gst_buffer_copy_into (in, src, GST_BUFFER_COPY_METADATA, 0, -1));
        gst_buffer_unref (src);
        fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
      } else {
        fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
      }
      GstBuffer *b;
      while ((b = gst_harness_try_pull (h))) {
        record_frame (&rec[i], out++, b);
        gst_buffer_unref (b);
      }
    }
    fail_unless_equals_int (out, frames);
    fail_unless_equals_int (get_count (h, "frames-uploaded"), frames);
    gst_harness_teardown (h);
  }
  fail_unless (rec[0].rows->len >= RECORD_FIELDS * 2u * frames, "%u objects", rec[0].rows->len / RECORD_FIELDS);
  fail_unless_equals_int (rec[0].rows->len, rec[1].rows->len);
  fail_unless (memcmp (rec[0].rows->data, rec[1].rows->data, rec[0].rows->len * sizeof (gint)) == 0,
      "objects differ between page-locked and ordinary memory");
  g_array_unref (rec[0].rows);
  g_array_unref (rec[1].rows);
}
GST_END_TEST;


static Suite *gputrack_suite (void)
{
  Suite *s = suite_create ("gputrack");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_synthetic_crossing);
  tcase_add_test (tc, test_synthetic_occlusion);
  tcase_add_test (tc, test_template_size_radius_corners);
  tcase_add_test (tc, test_in_flight_same_results);
  tcase_add_test (tc, test_eos_drain);
  tcase_add_test (tc, test_flush_in_flight);
  tcase_add_test (tc, test_formats_and_metadata);
  tcase_add_test (tc, test_zero_term);
  tcase_add_test (tc, test_max_tracks);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_shared_context);
  tcase_add_test (tc, test_one_upload_with_gpudetect);
  tcase_add_test (tc, test_upload_pool);
  return s;
}

GST_CHECK_MAIN (gputrack);
