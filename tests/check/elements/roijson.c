/* roijson element tests: the gvametaconvert layout of every field from ROI
 * metadata made here (with and without "detection" and "object_id"
 * parameters), empty buffers, buffers passed through untouched, stdout, the
 * face gpudetect finds in the test image, hostile metadata (NaN and infinite
 * numbers, strings that are not UTF-8) giving valid lines, and errors (a file
 * that cannot be opened, a write that fails).  The lines are parsed with
 * json-glib. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>
#include <json-glib/json-glib.h>

#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* The file's lines, each parsed as one JSON object (fails on anything else). */
static GPtrArray *read_lines (const char *path)
{
  gchar *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  gchar **lines = g_strsplit (text, "\n", -1);
  for (gchar **l = lines; *l; l++) {
    if (**l == '\0') {
      fail_unless (l[1] == NULL, "an empty line inside the output");
      continue;
    }
    JsonParser *p = json_parser_new ();
    GError *err = NULL;
    fail_unless (json_parser_load_from_data (p, *l, -1, &err), "not JSON: %s (%s)", *l, err ? err->message : "");
    JsonNode *root = json_parser_get_root (p);
    fail_unless (JSON_NODE_HOLDS_OBJECT (root), "not an object: %s", *l);
    g_ptr_array_add (out, json_node_copy (root));
    g_object_unref (p);
  }
  g_strfreev (lines);
  g_free (text);
  return out;
}

static JsonObject *line (GPtrArray *lines, guint i)
{
  fail_unless (i < lines->len);
  return json_node_get_object (g_ptr_array_index (lines, i));
}

static gchar *temp_path (const char *name)
{
  gchar *own = g_strdup_printf ("%d-%s", (int) getpid (), name);
  gchar *path = g_build_filename (g_get_tmp_dir (), own, NULL);
  g_free (own);
  return path;
}

static GstHarness *new_harness (const char *desc, int w, int h)
{
  GstHarness *hr = gst_harness_new_parse (desc);
  gchar *caps = g_strdup_printf ("video/x-raw,format=GRAY8,width=%d,height=%d,framerate=30/1", w, h);
  gst_harness_set_src_caps_str (hr, caps);
  g_free (caps);
  return hr;
}

static GstBuffer *gray_buffer (int w, int h, GstClockTime pts)
{
  GstBuffer *b = gst_buffer_new_allocate (NULL, (gsize) w * h, NULL);
  gst_buffer_memset (b, 0, 0, (gsize) w * h);
  GST_BUFFER_PTS (b) = pts;
  return b;
}

GST_START_TEST (test_fields)
{
  gchar *path = temp_path ("roijson-fields.jsonl");
  gchar *desc = g_strdup_printf ("roijson location=%s source=camera-7", path);
  GstHarness *h = new_harness (desc, 320, 240);
  g_free (desc);

  /* a detection with its parameters and a tracker's id, and a bare region */
  GstBuffer *in = gray_buffer (320, 240, GST_SECOND);
  GstVideoRegionOfInterestMeta *a = gst_buffer_add_video_region_of_interest_meta (in, "face", 32, 24, 64, 48);
  a->id = 5;
  gst_video_region_of_interest_meta_add_param (a, gst_structure_new ("detection", "x_min", G_TYPE_DOUBLE, 0.1,
      "y_min", G_TYPE_DOUBLE, 0.1, "x_max", G_TYPE_DOUBLE, 0.3, "y_max", G_TYPE_DOUBLE, 0.3, "confidence",
      G_TYPE_DOUBLE, 0.75, "label_id", G_TYPE_INT, 2, "label", G_TYPE_STRING, "person's \"face\"", NULL));
  gst_video_region_of_interest_meta_add_param (a, gst_structure_new ("object_id", "id", G_TYPE_INT, 7, NULL));
  GstVideoRegionOfInterestMeta *b = gst_buffer_add_video_region_of_interest_meta (in, "eye", 160, 120, 16, 24);
  b->id = 6;
  GstBuffer *kept = gst_buffer_ref (in);
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  GstBuffer *out = gst_harness_pull (h);
  fail_unless (out == kept); /* passed through, untouched */
  gst_buffer_unref (out);
  gst_buffer_unref (kept);

  /* no region, no timestamp: a line all the same, then none once asked */
  fail_unless_equals_int (gst_harness_push (h, gray_buffer (320, 240, GST_CLOCK_TIME_NONE)), GST_FLOW_OK);
  gst_buffer_unref (gst_harness_pull (h));
  GstElement *rj = gst_harness_find_element (h, "roijson");
  g_object_set (rj, "add-empty-results", FALSE, NULL);
  gst_object_unref (rj);
  fail_unless_equals_int (gst_harness_push (h, gray_buffer (320, 240, 2 * GST_SECOND)), GST_FLOW_OK);
  gst_buffer_unref (gst_harness_pull (h));
  gst_harness_teardown (h);

  GPtrArray *lines = read_lines (path);
  fail_unless_equals_int (lines->len, 2);
  JsonObject *o = line (lines, 0);
  fail_unless_equals_int64 (json_object_get_int_member (o, "timestamp"), GST_SECOND);
  fail_unless_equals_string (json_object_get_string_member (o, "source"), "camera-7");
  JsonObject *res = json_object_get_object_member (o, "resolution");
  fail_unless_equals_int (json_object_get_int_member (res, "width"), 320);
  fail_unless_equals_int (json_object_get_int_member (res, "height"), 240);
  JsonArray *objs = json_object_get_array_member (o, "objects");
  fail_unless_equals_int (json_array_get_length (objs), 2);
  JsonObject *f = json_array_get_object_element (objs, 0);
  fail_unless_equals_int (json_object_get_int_member (f, "x"), 32);
  fail_unless_equals_int (json_object_get_int_member (f, "y"), 24);
  fail_unless_equals_int (json_object_get_int_member (f, "w"), 64);
  fail_unless_equals_int (json_object_get_int_member (f, "h"), 48);
  fail_unless_equals_int (json_object_get_int_member (f, "region_id"), 5);
  fail_unless_equals_int (json_object_get_int_member (f, "id"), 7);
  fail_unless_equals_string (json_object_get_string_member (f, "roi_type"), "face");
  JsonObject *d = json_object_get_object_member (f, "detection");
  fail_unless_equals_string (json_object_get_string_member (d, "label"), "person's \"face\"");
  fail_unless_equals_int (json_object_get_int_member (d, "label_id"), 2);
  fail_unless (fabs (json_object_get_double_member (d, "confidence") - 0.75) < 1e-12);
  JsonObject *bb = json_object_get_object_member (d, "bounding_box");
  fail_unless (fabs (json_object_get_double_member (bb, "x_min") - 0.1) < 1e-12);
  fail_unless (fabs (json_object_get_double_member (bb, "y_min") - 0.1) < 1e-12);
  fail_unless (fabs (json_object_get_double_member (bb, "x_max") - 0.3) < 1e-12);
  fail_unless (fabs (json_object_get_double_member (bb, "y_max") - 0.3) < 1e-12);
  /* the bare region: its box normalised from pixels, its label its type, no confidence, no id */
  JsonObject *e = json_array_get_object_element (objs, 1);
  fail_unless_equals_int (json_object_get_int_member (e, "region_id"), 6);
  fail_if (json_object_has_member (e, "id"));
  d = json_object_get_object_member (e, "detection");
  fail_unless_equals_string (json_object_get_string_member (d, "label"), "eye");
  fail_if (json_object_has_member (d, "confidence") || json_object_has_member (d, "label_id"));
  bb = json_object_get_object_member (d, "bounding_box");
  fail_unless (fabs (json_object_get_double_member (bb, "x_min") - 0.5) < 1e-12);
  fail_unless (fabs (json_object_get_double_member (bb, "y_max") - 144.0 / 240) < 1e-12);
  /* the empty buffer */
  o = line (lines, 1);
  fail_if (json_object_has_member (o, "timestamp"));
  fail_unless_equals_int (json_array_get_length (json_object_get_array_member (o, "objects")), 0);
  g_ptr_array_unref (lines);
  g_unlink (path);
  g_free (path);
}
GST_END_TEST;

/* Unset location: standard output, one line per buffer. */
GST_START_TEST (test_stdout)
{
  gchar *path = temp_path ("roijson-stdout.jsonl");
  fflush (stdout);
  const int saved = dup (STDOUT_FILENO);
  const int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  fail_unless (saved >= 0 && fd >= 0);
  dup2 (fd, STDOUT_FILENO);
  close (fd);
  GstHarness *h = new_harness ("roijson", 64, 48);
  for (int i = 0; i < 3; i++) {
    fail_unless_equals_int (gst_harness_push (h, gray_buffer (64, 48, i * GST_MSECOND)), GST_FLOW_OK);
    gst_buffer_unref (gst_harness_pull (h));
  }
  gst_harness_teardown (h);
  fflush (stdout);
  dup2 (saved, STDOUT_FILENO);
  close (saved);
  GPtrArray *lines = read_lines (path);
  fail_unless_equals_int (lines->len, 3);
  fail_unless_equals_int64 (json_object_get_int_member (line (lines, 2), "timestamp"), 2 * GST_MSECOND);
  g_ptr_array_unref (lines);
  g_unlink (path);
  g_free (path);
}
GST_END_TEST;

/* gpudetect ! roijson on the test image: the face OpenCV's CascadeClassifier
 * finds (lbp-frontalface-improved, scale 1.1, 3 neighbours, min 24):
 * 88, 73, 90 x 90 (tests/check/elements/gpudetect.c). */
GST_START_TEST (test_gpudetect)
{
  Gray g;
  load_pgm (GPUDETECT_TEST_DATA "/grace_hopper_256x300.pgm", &g);
  gchar *path = temp_path ("roijson-face.jsonl");
  gchar *desc = g_strdup_printf ("gpudetect model=lbp-frontalface-improved min-size-width=24 min-size-height=24 ! "
      "roijson location=%s", path);
  GstHarness *h = new_harness (desc, g.width, g.height);
  g_free (desc);
  GstBuffer *in = gst_buffer_new_wrapped (g_memdup2 (g.pixels, (gsize) g.width * g.height), (gsize) g.width * g.height);
  GST_BUFFER_PTS (in) = 40 * GST_MSECOND;
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  gst_buffer_unref (gst_harness_pull (h));
  gst_harness_teardown (h);
  GPtrArray *lines = read_lines (path);
  fail_unless_equals_int (lines->len, 1);
  JsonObject *o = line (lines, 0);
  fail_unless_equals_int64 (json_object_get_int_member (o, "timestamp"), 40 * GST_MSECOND);
  JsonArray *objs = json_object_get_array_member (o, "objects");
  fail_unless_equals_int (json_array_get_length (objs), 1);
  JsonObject *f = json_array_get_object_element (objs, 0);
  fail_unless_equals_int (json_object_get_int_member (f, "x"), 88);
  fail_unless_equals_int (json_object_get_int_member (f, "y"), 73);
  fail_unless_equals_int (json_object_get_int_member (f, "w"), 90);
  fail_unless_equals_int (json_object_get_int_member (f, "h"), 90);
  JsonObject *d = json_object_get_object_member (f, "detection");
  fail_unless_equals_string (json_object_get_string_member (d, "label"), "face");
  const double c = json_object_get_double_member (d, "confidence");
  fail_unless (c > 0 && c <= 1);
  JsonObject *bb = json_object_get_object_member (d, "bounding_box");
  fail_unless (fabs (json_object_get_double_member (bb, "x_min") - 88.0 / g.width) < 1e-9);
  fail_unless (fabs (json_object_get_double_member (bb, "y_max") - 163.0 / g.height) < 1e-9);
  g_ptr_array_unref (lines);
  g_unlink (path);
  g_free (path);
  g_free (g.pixels);
}
GST_END_TEST;

/* Hostile metadata, as any upstream element may attach it, through a real
 * pipeline (videotestsrc, a pad probe attaching the ROIs, roijson): NaN and
 * infinite box corners and confidences, extra NaN and infinite parameters
 * (which roijson does not write), doubles whose shortest form has no point
 * (1e22), control characters, and a region type and a source that are not
 * UTF-8 (GstStructure refuses such strings in parameters).  Every line is
 * JSON; a number that is not finite is null, the others read back exactly,
 * bytes that are not UTF-8 read back as U+FFFD. */
static GstPadProbeReturn attach_hostile (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GstBuffer *buf = gst_buffer_make_writable (GST_PAD_PROBE_INFO_BUFFER (info));
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  const double nan = NAN, inf = INFINITY;
  GstVideoRegionOfInterestMeta *a = gst_buffer_add_video_region_of_interest_meta (buf, "face", 1, 2, 3, 4);
  a->id = 0;
  gst_video_region_of_interest_meta_add_param (a, gst_structure_new ("detection", "x_min", G_TYPE_DOUBLE, nan,
      "y_min", G_TYPE_DOUBLE, inf, "x_max", G_TYPE_DOUBLE, -inf, "y_max", G_TYPE_DOUBLE, 0.5, "confidence",
      G_TYPE_DOUBLE, nan, "label_id", G_TYPE_INT, 1, "label", G_TYPE_STRING, "face", "extra", G_TYPE_DOUBLE, inf,
      "scores", G_TYPE_FLOAT, (gfloat) nan, NULL));
  gst_video_region_of_interest_meta_add_param (a, gst_structure_new ("tracking", "confidence", G_TYPE_DOUBLE, -nan,
      "frames-since-detection", G_TYPE_INT, 3, NULL));
  gst_video_region_of_interest_meta_add_param (a, gst_structure_new ("object_id", "id", G_TYPE_INT, 9, NULL));
  GstVideoRegionOfInterestMeta *b = gst_buffer_add_video_region_of_interest_meta (buf, "car", 5, 6, 7, 8);
  b->id = 1;
  gst_video_region_of_interest_meta_add_param (b, gst_structure_new ("detection", "x_min", G_TYPE_DOUBLE, 1e22,
      "y_min", G_TYPE_DOUBLE, -0.0, "x_max", G_TYPE_DOUBLE, 5e-324, "y_max", G_TYPE_DOUBLE, 1e17, "confidence",
      G_TYPE_DOUBLE, inf, NULL));
  GstVideoRegionOfInterestMeta *c = gst_buffer_add_video_region_of_interest_meta (buf, "bad\xff\x01type", 9, 9, 9, 9);
  c->id = 2;
  gst_video_region_of_interest_meta_add_param (c, gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, -inf,
      "label", G_TYPE_STRING, "l\x7f(abel\n\"\x01", NULL));
  return GST_PAD_PROBE_OK;
}

static gboolean is_null (JsonObject *o, const char *member)
{
  JsonNode *n = json_object_get_member (o, member);
  return n != NULL && JSON_NODE_HOLDS_NULL (n);
}

GST_START_TEST (test_non_finite_and_invalid_utf8)
{
  gchar *path = temp_path ("roijson-hostile.jsonl");
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8,width=64,height=48 ! "
      "identity name=i ! roijson name=j ! fakesink", NULL);
  fail_unless (pipe != NULL);
  GstElement *j = gst_bin_get_by_name (GST_BIN (pipe), "j");
  g_object_set (j, "location", path, "source", "cam\xfe\t7", NULL);
  gst_object_unref (j);
  GstElement *i = gst_bin_get_by_name (GST_BIN (pipe), "i");
  GstPad *src = gst_element_get_static_pad (i, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, attach_hostile, NULL, NULL);
  gst_object_unref (src);
  gst_object_unref (i);
  GstBus *bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS);
  gst_message_unref (m);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);

  GPtrArray *lines = read_lines (path); /* each line parsed: fails on anything but JSON */
  fail_unless_equals_int (lines->len, 3);
  for (guint k = 0; k < lines->len; k++) {
    JsonObject *o = line (lines, k);
    fail_unless_equals_string (json_object_get_string_member (o, "source"), "cam\xef\xbf\xbd\t7");
    JsonArray *objs = json_object_get_array_member (o, "objects");
    fail_unless_equals_int (json_array_get_length (objs), 3);
    /* NaN and infinite box and confidence: null; the rest as they were */
    JsonObject *a = json_array_get_object_element (objs, 0);
    fail_unless_equals_int (json_object_get_int_member (a, "id"), 9);
    JsonObject *d = json_object_get_object_member (a, "detection");
    JsonObject *bb = json_object_get_object_member (d, "bounding_box");
    fail_unless (is_null (bb, "x_min") && is_null (bb, "y_min") && is_null (bb, "x_max"));
    fail_unless (json_object_get_double_member (bb, "y_max") == 0.5);
    fail_unless (is_null (d, "confidence"));
    fail_unless_equals_int (json_object_get_int_member (d, "label_id"), 1);
    /* doubles without a point in their shortest form, -0, the least subnormal */
    JsonObject *b = json_array_get_object_element (objs, 1);
    d = json_object_get_object_member (b, "detection");
    fail_unless (is_null (d, "confidence"));
    bb = json_object_get_object_member (d, "bounding_box");
    fail_unless (json_object_get_double_member (bb, "x_min") == 1e22);
    fail_unless (json_object_get_double_member (bb, "y_min") == 0 && signbit (json_object_get_double_member (bb, "y_min")));
    fail_unless (json_object_get_double_member (bb, "x_max") == 5e-324);
    fail_unless (json_object_get_double_member (bb, "y_max") == 1e17);
    /* a byte that is not UTF-8: U+FFFD; control characters escaped */
    JsonObject *c = json_array_get_object_element (objs, 2);
    fail_unless_equals_string (json_object_get_string_member (c, "roi_type"), "bad\xef\xbf\xbd\x01type");
    d = json_object_get_object_member (c, "detection");
    fail_unless (is_null (d, "confidence"));
    fail_unless_equals_string (json_object_get_string_member (d, "label"), "l\x7f(abel\n\"\x01");
  }
  g_ptr_array_unref (lines);
  /* as written: null, never nan/inf; 1e+22 without ".0" after it */
  gchar *text = NULL;
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  fail_if (strstr (text, "nan") || strstr (text, "inf") || strstr (text, "e+22.0"), "%s", text);
  fail_unless (strstr (text, "\"x_min\":null,\"y_min\":null,\"x_max\":null,\"y_max\":0.5") != NULL, "%s", text);
  g_free (text);
  g_unlink (path);
  g_free (path);
}
GST_END_TEST;

GST_START_TEST (test_errors)
{
  expect_error ("videotestsrc num-buffers=2 ! roijson location=/nonexistent-dir/out.jsonl ! fakesink",
      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_WRITE);
  if (g_file_test ("/dev/full", G_FILE_TEST_EXISTS))
    expect_error ("videotestsrc num-buffers=2 ! roijson location=/dev/full ! fakesink", GST_RESOURCE_ERROR,
        GST_RESOURCE_ERROR_WRITE);
}
GST_END_TEST;

static Suite *roijson_suite (void)
{
  Suite *s = suite_create ("roijson");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_fields);
  tcase_add_test (tc, test_stdout);
  tcase_add_test (tc, test_gpudetect);
  tcase_add_test (tc, test_non_finite_and_invalid_utf8);
  tcase_add_test (tc, test_errors);
  return s;
}

GST_CHECK_MAIN (roijson);
