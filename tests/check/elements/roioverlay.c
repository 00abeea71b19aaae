/* roioverlay tests: pixels change where boxes and labels are, and nowhere
 * else; regions without "detection" params still draw; label filter;
 * expire-overlay. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <string.h>

#define W 160
#define H 120

static GstHarness *overlay (const char *props, const char *format)
{
  gchar *desc = g_strdup_printf ("roioverlay %s", props);
  GstHarness *h = gst_harness_new_parse (desc);
  g_free (desc);
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1", format, W, H);
  gst_harness_set_src_caps_str (h, caps);
  g_free (caps);
  return h;
}

static GstBuffer *grey_frame (GstVideoFormat format, GstClockTime pts)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, format, W, H);
  GstBuffer *b = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_memset (b, 0, 128, GST_VIDEO_INFO_SIZE (&info));
  GST_BUFFER_PTS (b) = pts;
  GST_BUFFER_DURATION (b) = GST_SECOND / 30;
  return b;
}

static void add_roi (GstBuffer *b, const char *label, int x, int y, int w, int h, gboolean params)
{
  GstVideoRegionOfInterestMeta *m = gst_buffer_add_video_region_of_interest_meta (b, label, x, y, w, h);
  if (params)
    gst_video_region_of_interest_meta_add_param (m, gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE,
        0.75, "label", G_TYPE_STRING, label, NULL));
}

/* Every pixel of plane 0 (GRAY8) differing from 128 lies on the outline of
 * the box (x, y, w, h) drawn with line width `lw`; every outline pixel differs. */
static void check_outline (GstBuffer *b, int x, int y, int w, int h, int lw)
{
  GstMapInfo map;
  gst_buffer_map (b, &map, GST_MAP_READ);
  for (int py = 0; py < H; py++)
    for (int px = 0; px < W; px++) {
      gboolean inside = px >= x && px < x + w && py >= y && py < y + h;
      gboolean core = px >= x + lw && px < x + w - lw && py >= y + lw && py < y + h - lw;
      gboolean on = inside && !core;
      gboolean changed = map.data[py * W + px] != 128;
      fail_unless (changed == on, "pixel (%d, %d): changed %d, on outline %d", px, py, changed, on);
    }
  gst_buffer_unmap (b, &map);
}

GST_START_TEST (test_outline_only)
{
  GstHarness *h = overlay ("draw-labels=false line-width=3 object-detection-outline-color=0xff00ff00", "GRAY8");
  GstBuffer *in = grey_frame (GST_VIDEO_FORMAT_GRAY8, 0);
  add_roi (in, "face", 20, 30, 50, 40, TRUE);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  check_outline (out, 20, 30, 50, 40, 3);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_without_params_and_label)
{
  /* roi_type alone (params dropped by videoscale): box and label still drawn */
  GstHarness *h = overlay ("line-width=2", "GRAY8");
  GstBuffer *in = grey_frame (GST_VIDEO_FORMAT_GRAY8, 0);
  add_roi (in, "person", 40, 50, 60, 50, FALSE);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  GstMapInfo map;
  gst_buffer_map (out, &map, GST_MAP_READ);
  int label_pixels = 0;
  for (int py = 0; py < H; py++)
    for (int px = 0; px < W; px++) {
      gboolean box = px >= 40 && px < 100 && py >= 50 && py < 100 && !(px >= 42 && px < 98 && py >= 52 && py < 98);
      /* the label sits on a band right above the box */
      gboolean label = py < 50 && py >= 50 - 15 && px >= 40 && px < 40 + 6 * 8 + 4;
      if (map.data[py * W + px] != 128) {
        fail_unless (box || label, "stray pixel at (%d, %d)", px, py);
        label_pixels += label;
      } else {
        fail_if (box, "outline pixel (%d, %d) not drawn", px, py);
      }
    }
  fail_unless (label_pixels > 100);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_label_filter_and_expire)
{
  GstHarness *h = overlay ("draw-labels=false line-width=1 label-filter=face expire-overlay=100000000", "GRAY8");
  GstBuffer *in = grey_frame (GST_VIDEO_FORMAT_GRAY8, 0);
  add_roi (in, "face", 10, 10, 30, 30, TRUE);
  add_roi (in, "eye", 100, 60, 20, 20, TRUE);
  GstBuffer *out = gst_harness_push_and_pull (h, in);
  check_outline (out, 10, 10, 30, 30, 1); /* the eye is filtered out */
  gst_buffer_unref (out);
  /* 50 ms later, no metadata: the last boxes are kept */
  out = gst_harness_push_and_pull (h, grey_frame (GST_VIDEO_FORMAT_GRAY8, 50 * GST_MSECOND));
  check_outline (out, 10, 10, 30, 30, 1);
  gst_buffer_unref (out);
  /* 200 ms later: expired, the frame stays untouched */
  out = gst_harness_push_and_pull (h, grey_frame (GST_VIDEO_FORMAT_GRAY8, 200 * GST_MSECOND));
  check_outline (out, 0, 0, 0, 0, 1);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_formats)
{
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_RGBx,
      GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_xRGB};
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstHarness *h = overlay ("draw-labels=false line-width=2 object-detection-outline-color=0xffff0000",
        gst_video_format_to_string (formats[i]));
    GstBuffer *in = grey_frame (formats[i], 0);
    add_roi (in, "face", 20, 20, 40, 40, TRUE);
    GstBuffer *out = gst_harness_push_and_pull (h, in);
    GstVideoInfo info;
    gst_video_info_set_format (&info, formats[i], W, H);
    GstVideoFrame f;
    fail_unless (gst_video_frame_map (&f, &info, out, GST_MAP_READ));
    const guint8 *p = GST_VIDEO_FRAME_PLANE_DATA (&f, 0);
    int stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0), ps = GST_VIDEO_FRAME_COMP_PSTRIDE (&f, 0);
    if (GST_VIDEO_INFO_IS_RGB (&info)) {
      int ro = GST_VIDEO_FRAME_COMP_OFFSET (&f, 0), go = GST_VIDEO_FRAME_COMP_OFFSET (&f, 1);
      fail_unless_equals_int (p[20 * stride + 30 * ps + ro], 255); /* on the top edge: red */
      fail_unless_equals_int (p[20 * stride + 30 * ps + go], 0);
      fail_unless_equals_int (p[40 * stride + 40 * ps + ro], 128); /* inside: untouched */
      fail_unless_equals_int (p[5 * stride + 5 * ps + ro], 128);
    } else {
      fail_unless_equals_int (p[20 * stride + 30], 82); /* BT.601 luma of pure red */
      fail_unless_equals_int (p[40 * stride + 40], 128);
      const guint8 *c = GST_VIDEO_FRAME_PLANE_DATA (&f, 1);
      int cs = GST_VIDEO_FRAME_PLANE_STRIDE (&f, 1);
      int off = formats[i] == GST_VIDEO_FORMAT_NV12 ? 10 * cs + 15 * 2 + 1 : 10 * cs + 15;
      const guint8 *v = formats[i] == GST_VIDEO_FORMAT_NV12 ? c : GST_VIDEO_FRAME_PLANE_DATA (&f, 2);
      fail_unless_equals_int (v[formats[i] == GST_VIDEO_FORMAT_NV12 ? off : 10 * GST_VIDEO_FRAME_PLANE_STRIDE (&f, 2) + 15], 240);
      fail_unless_equals_int (c[formats[i] == GST_VIDEO_FORMAT_NV12 ? 20 * cs + 20 * 2 : 20 * cs + 20], 128);
    }
    gst_video_frame_unmap (&f);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

static Suite *roioverlay_suite (void)
{
  Suite *s = suite_create ("roioverlay");
  TCase *tc = tcase_create ("general");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_outline_only);
  tcase_add_test (tc, test_without_params_and_label);
  tcase_add_test (tc, test_label_filter_and_expire);
  tcase_add_test (tc, test_formats);
  return s;
}

GST_CHECK_MAIN (roioverlay);
