/* roijson element tests: the gvametaconvert layout of every field from ROI
 * metadata made here (with and without "detection" and "object_id"
 * parameters), empty buffers, buffers passed through untouched, stdout, the
 * face gpudetect finds in the test image, and errors (a file that cannot be
 * opened, a write that fails).  The lines are parsed with json-glib. */
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
  tcase_add_test (tc, test_errors);
  return s;
}

GST_CHECK_MAIN (roijson);
