/* gpudetect element tests (GstHarness): caps per format, detection metadata
 * on a real image with a real cascade, ordering, EOS drain and flushes with
 * frames in flight, inference-interval, resolution change, errors, the
 * page-locked upload pool offered upstream. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

/* A file name of this process's in the temporary directory: element-gpudetect
 * and element-gpudetect-gpu-schedule run this program at the same time. */
static gchar *tmp_file (const char *name)
{
  gchar *own = g_strdup_printf ("%d-%s", (int) getpid (), name);
  gchar *path = g_build_filename (g_get_tmp_dir (), own, NULL);
  g_free (own);
  return path;
}

static Gray face_image;

/* The grey test image as a buffer of `format` (grey in every channel, neutral chroma). */
static GstBuffer *fill_frame (GstBuffer *buf, const Gray *g, GstVideoFormat format, GstClockTime pts)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, format, g->width, g->height);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, format, g->width, g->height,
      GST_VIDEO_INFO_N_PLANES (&info), info.offset, info.stride);
  GstVideoFrame frame;
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  for (int y = 0; y < g->height; y++) {
    const guint8 *src = g->pixels + (gsize) y * g->width;
    guint8 *dst = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
    if (GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, 0) == 4) {
      for (int x = 0; x < g->width; x++) {
        dst[4 * x] = dst[4 * x + 1] = dst[4 * x + 2] = src[x];
        dst[4 * x + 3] = 255;
      }
    } else {
      memcpy (dst, src, g->width);
    }
  }
  for (guint p = 1; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    gint h = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, p);
    memset (d, 128, (gsize) GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p) * h);
  }
  gst_video_frame_unmap (&frame);
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

static GstBuffer *make_frame (const Gray *g, GstVideoFormat format, GstClockTime pts)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, format, g->width, g->height);
  return fill_frame (gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL), g, format, pts);
}

static GstHarness *new_harness (const char *props, GstVideoFormat format, int w, int h)
{
  gchar *desc = g_strdup_printf ("gpudetect %s", props);
  GstHarness *hr = gst_harness_new_parse (desc);
  g_free (desc);
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1",
      gst_video_format_to_string (format), w, h);
  gst_harness_set_src_caps_str (hr, caps);
  g_free (caps);
  return hr;
}

/* Asserts one "face" ROI at exactly (x, y, w, h) in a fw x fh frame, with
 * its "detection" parameters. */
static void assert_box (GstBuffer *buf, int x, int y, int w, int h, int fw, int fh)
{
  fail_unless_equals_int (count_rois (buf), 1);
  GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (buf, 0);
  fail_unless (roi != NULL);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
  fail_unless_equals_int (roi->x, x);
  fail_unless_equals_int (roi->y, y);
  fail_unless_equals_int (roi->w, w);
  fail_unless_equals_int (roi->h, h);
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "detection");
  fail_unless (s != NULL);
  gdouble x_min, y_min, x_max, y_max, conf;
  gint label_id;
  fail_unless (gst_structure_get (s, "x_min", G_TYPE_DOUBLE, &x_min, "y_min", G_TYPE_DOUBLE, &y_min, "x_max",
      G_TYPE_DOUBLE, &x_max, "y_max", G_TYPE_DOUBLE, &y_max, "confidence", G_TYPE_DOUBLE, &conf, "label_id",
      G_TYPE_INT, &label_id, NULL));
  fail_unless (fabs (x_min - (double) x / fw) < 1e-9 && fabs (y_min - (double) y / fh) < 1e-9);
  fail_unless (fabs (x_max - (double) (x + w) / fw) < 1e-9 && fabs (y_max - (double) (y + h) / fh) < 1e-9);
  fail_unless (conf > 0.5 && conf < 1.0, "confidence %f", conf);
  /* the float's shortest decimal (at most 9 digits), not the noise of its double */
  gchar text[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (text, sizeof text, "%.9g", conf);
  fail_unless (g_ascii_strtod (text, NULL) == conf, "confidence %.17g is not a decimal of 9 digits", conf);
  fail_unless_equals_int (label_id, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), "face");
}

/* The face of the test image as OpenCV's CascadeClassifier finds it
 * (lbp-frontalface-improved, scale 1.1, 3 neighbours, min 24): 88, 73, 90 x 90. */
static void assert_face (GstBuffer *buf, int dx, int dy, int w, int h)
{
  assert_box (buf, 88 + dx, 73 + dy, 90, 90, w, h);
}

#define FACE_PROPS "model=lbp-frontalface-improved min-size-width=24 min-size-height=24"

GST_START_TEST (test_formats)
{
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
      GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx};
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstHarness *h = new_harness (FACE_PROPS " max-in-flight=1", formats[i], face_image.width, face_image.height);
    GstBuffer *in = make_frame (&face_image, formats[i], 0);
    GstMapInfo before;
    gst_buffer_map (in, &before, GST_MAP_READ);
    guint8 *copy = g_memdup2 (before.data, before.size);
    gsize size = before.size;
    gst_buffer_unmap (in, &before);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    fail_unless (out != NULL);
    assert_face (out, 0, 0, face_image.width, face_image.height);
    /* pixels untouched */
    GstMapInfo after;
    gst_buffer_map (out, &after, GST_MAP_READ);
    fail_unless (after.size == size && memcmp (after.data, copy, size) == 0);
    gst_buffer_unmap (out, &after);
    g_free (copy);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

GST_START_TEST (test_order_and_eos_drain)
{
  GstHarness *h = new_harness (FACE_PROPS " max-in-flight=3", GST_VIDEO_FORMAT_GRAY8, face_image.width,
      face_image.height);
  const int n = 12;
  for (int i = 0; i < n; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, i * GST_MSECOND)),
        GST_FLOW_OK);
  /* frames are held while in flight: fewer than pushed came out so far */
  fail_unless (gst_harness_buffers_in_queue (h) < (guint) n);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), n);
  for (int i = 0; i < n; i++) {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i * GST_MSECOND);
    assert_face (b, 0, 0, face_image.width, face_image.height);
    gst_buffer_unref (b);
  }
  /* EOS comes after every buffer */
  GstEvent *ev;
  gboolean saw_eos = FALSE;
  while ((ev = gst_harness_try_pull_event (h))) {
    saw_eos |= GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
  }
  fail_unless (saw_eos);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_flush_mid_flight)
{
  GstHarness *h = new_harness (FACE_PROPS " max-in-flight=4", GST_VIDEO_FORMAT_GRAY8, face_image.width,
      face_image.height);
  for (int i = 0; i < 6; i++)
    gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, i * GST_MSECOND));
  guint before = gst_harness_buffers_in_queue (h);
  fail_unless (before < 6);
  /* drop what came out before the flush */
  for (guint i = 0; i < before; i++)
    gst_buffer_unref (gst_harness_pull (h));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
  /* frames held at the flush are discarded; later frames all come out, in order */
  for (int i = 100; i < 110; i++)
    gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, i * GST_MSECOND));
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 10);
  for (int i = 100; i < 110; i++) {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i * GST_MSECOND);
    assert_face (b, 0, 0, face_image.width, face_image.height);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_inference_interval)
{
  GstHarness *h = new_harness (FACE_PROPS " inference-interval=3", GST_VIDEO_FORMAT_GRAY8, face_image.width,
      face_image.height);
  for (int i = 0; i < 9; i++)
    gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, i * GST_MSECOND));
  gst_harness_push_event (h, gst_event_new_eos ());
  for (int i = 0; i < 9; i++) {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_int (count_rois (b), i % 3 == 0 ? 1 : 0);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_roi_and_resolution_change)
{
  /* search only a region around the face: coordinates come back in frame pixels */
  GstHarness *h = new_harness (FACE_PROPS " roi-x=40 roi-y=30 roi-width=180 roi-height=180",
      GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0));
  /* a small search region can finish before the push returns, so the frame may already be out; EOS drains it
   * otherwise */
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 1);
  GstBuffer *b = gst_harness_pull (h);
  /* OpenCV on the same 180x180 crop finds (47, 46, 88, 88), i.e. (87, 76) in the frame */
  assert_box (b, 87, 76, 88, 88, face_image.width, face_image.height);
  gst_buffer_unref (b);
  gst_harness_teardown (h);

  /* mid-stream resolution change: a 200x200 crop whose face sits at (88-50, 73-40) */
  Gray crop = {200, 200, g_malloc (200 * 200)};
  for (int y = 0; y < 200; y++)
    memcpy (crop.pixels + y * 200, face_image.pixels + (gsize) (y + 40) * face_image.width + 50, 200);
  h = new_harness (FACE_PROPS, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0));
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=200,height=200,framerate=30/1");
  gst_harness_push (h, make_frame (&crop, GST_VIDEO_FORMAT_GRAY8, GST_MSECOND));
  gst_harness_push_event (h, gst_event_new_eos ());
  b = gst_harness_pull (h);
  assert_face (b, 0, 0, face_image.width, face_image.height);
  gst_buffer_unref (b);
  b = gst_harness_pull (h);
  /* OpenCV on this crop: (41, 38, 80, 80) */
  assert_box (b, 41, 38, 80, 80, 200, 200);
  gst_buffer_unref (b);
  g_free (crop.pixels);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_errors)
{
  expect_error ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect model=no-such-model ! fakesink",
      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND);
  gchar *bad = tmp_file ("gpudetect-bad-model.xml");
  g_file_set_contents (bad, "<opencv_storage><cascade><stageType>BOOST</stageType>", -1, NULL);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect model=%s ! "
      "fakesink", bad);
  expect_error (desc, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ);
  g_free (desc);
  /* a WaldBoost file whose stage lacks its 256 responses */
  g_file_set_contents (bad, "<WaldBoostClassifier imageSizeX=\"24\" imageSizeY=\"24\" type=\"LBP\"><stage posT=\"1e+50\" "
      "negT=\"-1\"><HistogramWeakHypothesis predictionValues=\"1 2 3\"><LBPFeature positionX=\"0\" positionY=\"0\" "
      "blockWidth=\"1\" blockHeight=\"1\"/></HistogramWeakHypothesis></stage></WaldBoostClassifier>", -1, NULL);
  desc = g_strdup_printf ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect model=%s ! fakesink", bad);
  expect_error (desc, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ);
  g_free (desc);
  g_unlink (bad);
  g_free (bad);
  expect_error ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect device=no-such-device ! fakesink",
      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ_WRITE);
  /* a kernel build failure (an option that breaks the source), reported with
   * the build log, not cached */
  g_setenv ("GPUDETECT_TUNING", "build-options=-D WG=+", TRUE);
  expect_error ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect ! fakesink", GST_LIBRARY_ERROR,
      GST_LIBRARY_ERROR_INIT);
  g_unsetenv ("GPUDETECT_TUNING");
  /* unsupported caps never reach it: negotiation fails (not-negotiated flow error) */
  expect_error ("videotestsrc num-buffers=2 ! video/x-raw,format=YUY2 ! gpudetect ! fakesink", GST_STREAM_ERROR,
      GST_STREAM_ERROR_FAILED);
}
GST_END_TEST;

/* A second gpudetect searching inside the first's faces
 * (inference-region=roi-list): eyes inside the face, each naming the face as
 * its parent, ids unique in the buffer, every object saying which model and
 * element found it, searched on the frame the first left on the device; an
 * object-class that matches nothing searches nothing;
 * a model of a family that searches whole frames only is refused. */
GST_START_TEST (test_secondary_detection)
{
  GstHarness *h = gst_harness_new_parse ("gpudetect name=faces " FACE_PROPS " ! "
      "gpudetect name=eyes model=haar-eye-tree-eyeglasses inference-region=roi-list object-class=person,face "
      "object-margin=0.2");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=256,height=300,framerate=30/1");
  gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0));
  gst_harness_push_event (h, gst_event_new_eos ());
  GstBuffer *b = gst_harness_pull (h);
  /* OpenCV's CascadeClassifier with haarcascade_eye_tree_eyeglasses.xml
   * (scale 1.1, 3 neighbours) on the face enlarged by a fifth on every side
   * and cut out (70, 55, 126 x 126) finds the two eyes (behind glasses) at
   * (72, 28, 22 x 22) and (30, 31, 23 x 23) of the cut-out */
  const int eyes[2][4] = {{70 + 72, 55 + 28, 22, 22}, {70 + 30, 55 + 31, 23, 23}};
  fail_unless_equals_int (count_rois (b), 3);
  GstVideoRegionOfInterestMeta *face = NULL;
  int found = 0;
  gpointer state = NULL;
  GstMeta *meta;
  gint ids[3], n = 0;
  while ((meta = gst_buffer_iterate_meta_filtered (b, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    ids[n++] = roi->id;
    GstStructure *d = gst_video_region_of_interest_meta_get_param (roi, "detection");
    fail_unless (d != NULL);
    const gchar *label = g_quark_to_string (roi->roi_type);
    if (strcmp (label, "face") == 0) {
      face = roi;
      fail_unless_equals_int (roi->parent_id, -1);
      fail_unless_equals_string (gst_structure_get_string (d, "model_name"), "lbpcascade_frontalface_improved");
      fail_unless_equals_string (gst_structure_get_string (d, "element_name"), "faces");
      continue;
    }
    fail_unless_equals_string (label, "eye");
    fail_unless (face != NULL, "the eyes come after the face they were found in");
    fail_unless_equals_int (roi->parent_id, face->id);
    fail_unless_equals_string (gst_structure_get_string (d, "model_name"), "haarcascade_eye_tree_eyeglasses");
    fail_unless_equals_string (gst_structure_get_string (d, "element_name"), "eyes");
    for (int e = 0; e < 2; e++)
      if ((int) roi->x == eyes[e][0] && (int) roi->y == eyes[e][1] && (int) roi->w == eyes[e][2] &&
          (int) roi->h == eyes[e][3])
        found |= 1 << e;
  }
  fail_unless_equals_int (found, 3);
  fail_unless (ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
  /* the eyes were searched on the frame the face detector left on the device:
   * it was asked for, so the buffer carries it */
  GType frame_meta = g_type_from_name ("GstGpuDetectFrameMetaAPI");
  fail_unless (frame_meta != 0 && gst_buffer_get_meta (b, frame_meta) != NULL);
  gst_buffer_unref (b);
  gst_harness_teardown (h);

  /* no upstream object of the class: nothing searched, the face alone */
  h = gst_harness_new_parse ("gpudetect " FACE_PROPS " ! gpudetect model=haar-eye inference-region=roi-list "
      "object-class=car");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=256,height=300,framerate=30/1");
  gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0));
  gst_harness_push_event (h, gst_event_new_eos ());
  b = gst_harness_pull (h);
  fail_unless_equals_int (count_rois (b), 1);
  gst_buffer_unref (b);
  gst_harness_teardown (h);

  /* a family that searches whole frames only */
  expect_error ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect model=" GPUDETECT_TEST_DATA
      "/dpm-test.xml inference-region=roi-list ! fakesink", GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS);
}
GST_END_TEST;

/* Runs `desc` to EOS; the statuses of its "gpudetect-build" element
 * messages, in order, comma-separated, each checked for its fields. */
static gchar *build_statuses (const char *desc, const char *model)
{
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  GString *seen = g_string_new (NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  for (;;) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND,
        GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (m != NULL, "no EOS");
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
      fail ("an error");
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS) {
      gst_message_unref (m);
      break;
    }
    const GstStructure *st = gst_message_get_structure (m);
    if (gst_structure_has_name (st, "gpudetect-build")) {
      const gchar *status = gst_structure_get_string (st, "status");
      fail_unless (status != NULL);
      fail_unless_equals_string (gst_structure_get_string (st, "what"), model);
      fail_unless (gst_structure_get_string (st, "device") != NULL);
      gdouble seconds = -1;
      if (strcmp (status, "building") != 0)
        fail_unless (gst_structure_get_double (st, "seconds", &seconds) && seconds >= 0);
      g_string_append_printf (seen, "%s%s", seen->len ? "," : "", status);
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return g_string_free (seen, FALSE);
}

/* A first start compiles the kernels and says so on the bus (building, then
 * built, with the time); a second start reads them from the kernel cache and
 * builds nothing. */
GST_START_TEST (test_build_messages)
{
  gchar *dir = tmp_file ("gpudetect-build-cache");
  gchar *saved = g_strdup (g_getenv ("GPUDETECT_CACHE_DIR"));
  g_setenv ("GPUDETECT_CACHE_DIR", dir, TRUE);
  const char *desc = "videotestsrc num-buffers=1 ! video/x-raw,format=GRAY8,width=64,height=64 ! "
      "gpudetect model=lbp-frontalface-improved ! fakesink";
  gchar *cold = build_statuses (desc, "lbp-frontalface-improved");
  fail_unless_equals_string (cold, "building,built");
  gchar *warm = build_statuses (desc, "lbp-frontalface-improved");
  fail_unless_equals_string (warm, "");
  g_free (cold);
  g_free (warm);
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *name;
  while (d && (name = g_dir_read_name (d))) {
    gchar *f = g_build_filename (dir, name, NULL);
    g_unlink (f);
    g_free (f);
  }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
  if (saved)
    g_setenv ("GPUDETECT_CACHE_DIR", saved, TRUE);
  else
    g_unsetenv ("GPUDETECT_CACHE_DIR");
  g_free (saved);
  g_free (dir);
}
GST_END_TEST;

/* Sets the pipeline to PLAYING from another thread: a start() that blocks
 * (a FIFO opened for reading waits for a writer) fails the test on the
 * timeout below rather than hanging it. */
static gpointer play (gpointer pipe)
{
  return GINT_TO_POINTER (gst_element_set_state (GST_ELEMENT (pipe), GST_STATE_PLAYING));
}

/* gpudetect with `model` posts an error of `code` (resource domain) within
 * 10 seconds, whose message holds `message_part` and whose debug text holds
 * `debug_part`, neither longer than 600 bytes. */
static void expect_model_error (const char *model, gint code, const char *message_part, const char *debug_part)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect name=d ! "
      "fakesink", NULL);
  fail_unless (pipe != NULL);
  GstElement *d = gst_bin_get_by_name (GST_BIN (pipe), "d");
  g_object_set (d, "model", model, NULL);
  gst_object_unref (d);
  GstBus *bus = gst_element_get_bus (pipe);
  const gint64 t0 = g_get_monotonic_time ();
  GThread *t = g_thread_new ("play", play, pipe);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR, "no error within 10 s for model '%.60s'",
      model);
  fail_unless_equals_int (GPOINTER_TO_INT (g_thread_join (t)), GST_STATE_CHANGE_FAILURE);
  const double secs = (g_get_monotonic_time () - t0) / 1e6;
  GError *err = NULL;
  gchar *dbg = NULL;
  gst_message_parse_error (m, &err, &dbg);
  fail_unless (err->domain == GST_RESOURCE_ERROR && err->code == code, "%s (%s)", err->message, dbg);
  fail_unless (strstr (err->message, message_part) != NULL, "message: %s", err->message);
  fail_unless (dbg != NULL && strstr (dbg, debug_part) != NULL, "debug text: %s", dbg);
  fail_unless (strlen (err->message) < 600 && strlen (dbg) < 600, "%zu and %zu bytes", strlen (err->message),
      strlen (dbg));
  GST_INFO ("%.2f s: %s (%s)", secs, err->message, dbg);
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (m);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

/* A model path that is not a regular file is refused at start, saying what
 * it is, without blocking (a FIFO with no writer); a 5000-byte name is cut to
 * 200 bytes and "…" in the message and the debug text. */
/* PoCL on first use (LLVM's RemoveFileOnSignal) gives the calling thread a
 * signal stack from malloc, which AddressSanitizer fails to unmap when that
 * thread ends: the main thread uses the device first, not play()'s. */
static void use_device_here (void)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=1 ! video/x-raw,format=GRAY8,width=64,height=64 ! "
      "gpudetect ! fakesink", NULL);
  fail_unless (pipe != NULL);
  gst_element_set_state (pipe, GST_STATE_PAUSED);
  fail_unless_equals_int (gst_element_get_state (pipe, NULL, NULL, 60 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipe);
}

GST_START_TEST (test_model_not_a_file)
{
  use_device_here ();
  gchar *dir = g_dir_make_tmp ("gpudetect-model-XXXXXX", NULL);
  fail_unless (dir != NULL);
  gchar *fifo = g_build_filename (dir, "model.xml", NULL);
  gchar *zero = g_build_filename (dir, "zero.xml", NULL);
  fail_unless_equals_int (mkfifo (fifo, 0600), 0);
  fail_unless_equals_int (symlink ("/dev/zero", zero), 0);

  expect_model_error (fifo, GST_RESOURCE_ERROR_OPEN_READ, "is a FIFO, not a regular file", "is a FIFO, not a regular file");
  expect_model_error (zero, GST_RESOURCE_ERROR_OPEN_READ, "is a character device, not a regular file",
      "a symbolic link to '/dev/zero'");
  expect_model_error (dir, GST_RESOURCE_ERROR_OPEN_READ, "is a directory", "is a directory, not a regular file");
  /* the FIFO found on the search path by its bare name */
  const gchar *env = g_getenv ("GPUDETECT_MODEL_PATH");
  gchar *saved = g_strdup (env);
  g_setenv ("GPUDETECT_MODEL_PATH", dir, TRUE);
  gchar *found = g_strdup_printf ("model 'model': '%s' is a FIFO", fifo);
  expect_model_error ("model", GST_RESOURCE_ERROR_OPEN_READ, "is a FIFO", found);
  g_free (found);
  if (saved)
    g_setenv ("GPUDETECT_MODEL_PATH", saved, TRUE);
  else
    g_unsetenv ("GPUDETECT_MODEL_PATH");
  g_free (saved);

  gchar *long_name = g_strnfill (5000, 'm');
  gchar *cut = g_strdup_printf ("\"%.200s\xe2\x80\xa6\"", long_name); /* quoted, cut, "…" */
  expect_model_error (long_name, GST_RESOURCE_ERROR_NOT_FOUND, cut, "(5000 bytes) is too long for a file name");
  g_free (cut);
  g_free (long_name);

  g_unlink (fifo);
  g_unlink (zero);
  g_rmdir (dir);
  g_free (fifo);
  g_free (zero);
  g_free (dir);
}
GST_END_TEST;

/* The project's trained face models (models/waldboost-frontalface*.xml,
 * models/forest-frontalface*.forest), by short name: the test image's one
 * face, where OpenCV's LBP cascade puts it (IoU >= 0.5 with 88, 73, 90 x 90),
 * with its "detection" parameters; every format; `threshold` (the final sum)
 * high enough leaves nothing.  The forest model finds this face once its
 * final threshold (9.904) is lowered to 0, so that every window that passes
 * its stages is a hit (docs/forest.md: its recall on held-out faces by
 * threshold). */
GST_START_TEST (test_trained_models)
{
  const char *models[] = {"waldboost-frontalface", "waldboost-frontalface-fast", "forest-frontalface",
      "forest-frontalface-accurate"};
  const char *extra[] = {"", "", " threshold=0", ""};
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_BGRx};
  for (guint m = 0; m < G_N_ELEMENTS (models); m++) {
    for (guint i = 0; i < G_N_ELEMENTS (formats); i++) {
      gchar *props = g_strdup_printf ("model=%s min-size-width=24 min-size-height=24 max-in-flight=2%s", models[m],
          extra[m]);
      GstHarness *h = new_harness (props, formats[i], face_image.width, face_image.height);
      g_free (props);
      fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, formats[i], 0)), GST_FLOW_OK);
      gst_harness_push_event (h, gst_event_new_eos ());
      GstBuffer *out = gst_harness_pull (h);
      fail_unless (out != NULL);
      fail_unless (count_rois (out) == 1, "%s, %s: %d objects", models[m], gst_video_format_to_string (formats[i]),
          count_rois (out));
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (out, 0);
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
      const double ix = MAX (0, MIN ((int) roi->x + (int) roi->w, 88 + 90) - MAX ((int) roi->x, 88));
      const double iy = MAX (0, MIN ((int) roi->y + (int) roi->h, 73 + 90) - MAX ((int) roi->y, 73));
      const double iou = ix * iy / ((double) roi->w * roi->h + 90 * 90 - ix * iy);
      fail_unless (iou >= 0.5, "%s: face at %u,%u %ux%u (IoU %.2f)", models[m], roi->x, roi->y, roi->w, roi->h, iou);
      GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "detection");
      gdouble conf;
      fail_unless (s != NULL && gst_structure_get_double (s, "confidence", &conf));
      fail_unless (conf > 0 && conf <= 1.0, "confidence %f", conf);
      fail_unless_equals_string (gst_structure_get_string (s, "label"), "face");
      gst_buffer_unref (out);
      gst_harness_teardown (h);
    }
    gchar *props = g_strdup_printf ("model=%s threshold=1e6 max-in-flight=1", models[m]);
    GstHarness *h = new_harness (props, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
    g_free (props);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull (h);
    fail_unless_equals_int (count_rois (out), 0);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

GST_START_TEST (test_messages_and_latency)
{
  GstHarness *h = new_harness (FACE_PROPS " message-mode=every-frame max-in-flight=3", GST_VIDEO_FORMAT_GRAY8,
      face_image.width, face_image.height);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0));
  gst_harness_push_event (h, gst_event_new_eos ());
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  fail_unless (m != NULL);
  const GstStructure *s = gst_message_get_structure (m);
  fail_unless (gst_structure_has_name (s, "gpudetect"));
  const GValue *objs = gst_structure_get_value (s, "objects");
  fail_unless_equals_int (gst_value_list_get_size (objs), 1);
  const GstStructure *o = gst_value_get_structure (gst_value_list_get_value (objs, 0));
  guint x, w;
  fail_unless (gst_structure_get_uint (o, "x", &x) && gst_structure_get_uint (o, "width", &w));
  fail_unless_equals_int (x, 88);
  fail_unless_equals_int (w, 90);
  fail_unless_equals_string (gst_structure_get_string (o, "label"), "face");
  gst_message_unref (m);
  gst_buffer_unref (gst_harness_pull (h));

  /* latency: two frames of 30 fps held at most */
  GstQuery *q = gst_query_new_latency ();
  fail_unless (gst_pad_peer_query (h->sinkpad, q));
  GstClockTime min, max;
  gboolean live;
  gst_query_parse_latency (q, &live, &min, &max);
  fail_unless_equals_uint64 (min, 2 * gst_util_uint64_scale_int (GST_SECOND, 1, 30));
  gst_query_unref (q);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}
GST_END_TEST;

static guint order_total (Order *o)
{
  g_mutex_lock (&o->lock);
  guint n = o->since_flush;
  g_mutex_unlock (&o->lock);
  return n;
}

/* A 1080p decode pipeline (JPEG encode + decode of a moving pattern) into
 * gpudetect with 4 frames in flight, seeked with flushes while frames are in
 * flight: every segment's buffers leave in order and without a gap, start at
 * the seek target, and the stream still reaches EOS without error. */
GST_START_TEST (test_pipeline_1080p_flushes)
{
  GstElement *pipe = gst_parse_launch (
      "videotestsrc pattern=ball num-buffers=90 ! video/x-raw,width=1920,height=1080,framerate=30/1,format=I420 ! "
      "jpegenc ! jpegdec ! gpudetect name=d model=lbp-frontalface-improved min-size-width=400 min-size-height=400 "
      "max-in-flight=4 ! fakesink name=sink sync=false signal-handoffs=true", NULL);
  fail_unless (pipe != NULL);
  Order o = {0};
  g_mutex_init (&o.lock);
  o.last = GST_CLOCK_TIME_NONE;
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), &o);
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_FLUSH, (GstPadProbeCallback) on_flush, &o, NULL);
  gst_object_unref (pad);
  GstBus *bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_get_state (pipe, NULL, NULL, 60 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  /* seek forward, back, forward again, each once a few frames of the segment went out */
  const GstClockTime targets[3] = {2 * GST_SECOND, GST_SECOND / 2, GST_SECOND + GST_SECOND / 3};
  for (int i = 0; i < 3; i++) {
    for (int t = 0; t < 6000 && order_total (&o) < 6; t++)
      g_usleep (10000);
    fail_unless (order_total (&o) >= 6, "segment %d: no frames came out", i);
    fail_unless (gst_element_seek_simple (pipe, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE,
        targets[i]));
  }
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 300 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "no EOS");
  gst_message_unref (m);
  gst_element_set_state (pipe, GST_STATE_NULL);
  fail_unless_equals_int (o.flushes, 3);
  fail_unless_equals_int (o.disorder, 0);
  fail_unless_equals_int (o.gaps, 0);
  for (int i = 0; i < 3; i++)
    fail_unless (o.first_after_flush[i] >= targets[i] - GST_SECOND / 30 && o.first_after_flush[i] < targets[i] +
        GST_SECOND / 15, "segment %d starts at %" GST_TIME_FORMAT, i, GST_TIME_ARGS (o.first_after_flush[i]));
  fail_unless (o.since_flush >= 6);
  g_mutex_clear (&o.lock);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* The element answers upstream's allocation query with a pool in page-locked
 * memory (upload-pool, default on); frames from it are detected as any other. */
GST_START_TEST (test_upload_pool)
{
  const gboolean settings[] = {TRUE, FALSE};
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++) {
    gchar *props = g_strdup_printf (FACE_PROPS " upload-pool=%s", settings[i] ? "true" : "false");
    GstHarness *h = new_harness (props, GST_VIDEO_FORMAT_I420, face_image.width, face_image.height);
    g_free (props);
    GstVideoInfo info;
    gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, face_image.width, face_image.height);
    GstBuffer *in = gst_harness_create_buffer (h, GST_VIDEO_INFO_SIZE (&info));
    fail_unless (in != NULL);
    const gboolean ours = gst_memory_is_type (gst_buffer_peek_memory (in, 0), "GpuDetectHostMemory");
    fail_unless (ours == settings[i], "page-locked memory %d with upload-pool=%d", ours, settings[i]);
    GstAllocator *allocator = NULL;
    gst_harness_get_allocator (h, &allocator, NULL);
    if (settings[i])
      fail_unless (allocator != NULL && g_strcmp0 (allocator->mem_type, "GpuDetectHostMemory") == 0);
    fill_frame (in, &face_image, GST_VIDEO_FORMAT_I420, 0);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *out = gst_harness_pull (h);
    fail_unless (out != NULL);
    assert_face (out, 0, 0, face_image.width, face_image.height);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* A random-forest cascade (models/README.md) written here: one stump over
 * two values of a 20x20 window (shrink 2, values in [0, 4]), +1 where the
 * top-left value exceeds the centre's by 0.6 or more, else -1; hits are
 * windows with a sum >= 0.5 (a few thousand on the test image, under the
 * candidates read back, so that every frame's objects are the same). */
static gchar *write_forest_model (const char *name)
{
  gchar *path = tmp_file (name);
  fail_unless (g_file_set_contents (path,
          "gpudetect-forest 1\nwindow 20 20\nshrink 2\nlevels-per-octave 4\nthreshold 0.5\nnodes 3\n"
          "[trees]\n0,0.6,1,0,0,5,5,0,0, -1,0,-1,0,0,0,0,0,0, 1,0,-1,0,0,0,0,0,0\n"
          "[stages]\n0,0,-inf\n", -1, NULL));
  return path;
}

static GstPadProbeReturn count_buffer (GstPad *pad, GstPadProbeInfo *info, gpointer count)
{
  g_atomic_int_inc ((gint *) count);
  return GST_PAD_PROBE_OK;
}

/* Stopping does not wait for the device: a valid forest whose every window
 * runs through 100000 stages takes seconds a frame on PoCL, and the pipeline
 * goes to NULL within a second while two frames are on the device (the
 * device finishes them in the background). */
GST_START_TEST (test_stop_while_device_busy)
{
  GString *model = g_string_new ("gpudetect-forest 1\nwindow 20 20\nshrink 2\nlevels-per-octave 4\nnodes 1\n"
      "[trees]\n0,0,-1,0,0,0,0,0,0\n[stages]\n");
  for (int i = 0; i < 100000; i++)
    g_string_append (model, "0,0,-inf\n");
  gchar *path = tmp_file ("gpudetect-slow.forest");
  fail_unless (g_file_set_contents (path, model->str, -1, NULL));
  g_string_free (model, TRUE);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=8 ! video/x-raw,format=GRAY8,width=320,height=240 ! "
      "gpudetect name=d max-in-flight=2 model=%s ! fakesink name=s sync=false", path);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  gint in = 0, out = 0;
  GstElement *d = gst_bin_get_by_name (GST_BIN (pipe), "d"), *s = gst_bin_get_by_name (GST_BIN (pipe), "s");
  GstPad *dpad = gst_element_get_static_pad (d, "sink"), *spad = gst_element_get_static_pad (s, "sink");
  gst_pad_add_probe (dpad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &in, NULL);
  gst_pad_add_probe (spad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &out, NULL);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  /* the second frame in: the first is on the device, the streaming thread waits */
  for (int i = 0; i < 6000 && g_atomic_int_get (&in) < 2; i++)
    g_usleep (10000);
  fail_unless (g_atomic_int_get (&in) >= 2, "no second frame within 60 s");
  g_usleep (200000);
  fail_unless_equals_int (g_atomic_int_get (&out), 0); /* the device is still at the first frame */
  const gint64 t0 = g_get_monotonic_time ();
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  const double secs = (g_get_monotonic_time () - t0) / 1e6;
  GST_INFO ("set_state (NULL) in %.3f s, %d frames in, %d out", secs, g_atomic_int_get (&in), g_atomic_int_get (&out));
  fail_unless (secs < 1.0, "stopping took %.2f s", secs);
  fail_unless_equals_int (g_atomic_int_get (&out), 0);
  gst_object_unref (dpad);
  gst_object_unref (spad);
  gst_object_unref (d);
  gst_object_unref (s);
  gst_object_unref (pipe);
  g_unlink (path);
  g_free (path);
  g_free (desc);
}

GST_END_TEST;

GST_START_TEST (test_forest_model)
{
  gchar *path = write_forest_model ("gpudetect-made-face.forest");
  gchar *props = g_strdup_printf ("model=%s min-neighbors=3 max-in-flight=2", path);
  GstHarness *h = new_harness (props, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  for (int i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, i * GST_MSECOND)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  guint first = 0;
  for (int i = 0; i < 3; i++) {
    GstBuffer *b = gst_harness_pull (h);
    const guint n = count_rois (b);
    fail_unless (n >= 1, "no object on frame %d", i);
    if (i == 0)
      first = n;
    else
      fail_unless (n == first, "%u objects on frame %d, %u on the first", n, i, first); /* the same frame */
    for (guint k = 0; k < n; k++) {
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (b, (gint) k);
      fail_unless (roi != NULL);
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
      fail_unless (roi->w >= 20 && roi->x + roi->w <= (guint) face_image.width &&
          roi->y + roi->h <= (guint) face_image.height);
      GstStructure *st = gst_video_region_of_interest_meta_get_param (roi, "detection");
      fail_unless (st != NULL);
      gdouble conf;
      fail_unless (gst_structure_get_double (st, "confidence", &conf) && conf > 0 && conf < 1);
      fail_unless_equals_string (gst_structure_get_string (st, "label"), "face");
    }
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
  /* the same frame as 4-byte RGB (grey in every channel: the same luma), and
   * as NV12: the same objects */
  const GstVideoFormat others[] = {GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_NV12};
  for (guint f = 0; f < G_N_ELEMENTS (others); f++) {
    h = new_harness (props, others[f], face_image.width, face_image.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, others[f], 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *b = gst_harness_pull (h);
    fail_unless (count_rois (b) == first, "%s: %u objects, %u in GRAY8", gst_video_format_to_string (others[f]),
        count_rois (b), first);
    gst_buffer_unref (b);
    gst_harness_teardown (h);
  }
  g_free (props);
  /* the pyramid overridden: blocks of 4 x 4 pixels (a window of 40 x 40),
   * 2 levels an octave */
  props = g_strdup_printf ("name=det model=%s min-neighbors=0 shrink=4 levels-per-octave=2", path);
  h = new_harness (props, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  guint shrink = 0, lpo = 0;
  GstElement *det = gst_bin_get_by_name (GST_BIN (h->element), "det");
  fail_unless (det != NULL);
  g_object_get (det, "shrink", &shrink, "levels-per-octave", &lpo, NULL);
  gst_object_unref (det);
  fail_unless (shrink == 4 && lpo == 2);
  fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  {
    GstBuffer *b = gst_harness_pull (h);
    fail_unless (count_rois (b) >= 1);
    for (guint k = 0; k < count_rois (b); k++) {
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (b, (gint) k);
      /* levels 2^(k/2): windows of 40, 57, 80, ... pixels (clipped at the frame's edge) */
      fail_unless (roi->w >= 40 || roi->x + roi->w == (guint) face_image.width, "a window of %u", roi->w);
    }
    gst_buffer_unref (b);
  }
  gst_harness_teardown (h);
  g_free (props);
  /* a final threshold no sum reaches (the stump's is at most 1): nothing */
  props = g_strdup_printf ("model=%s min-neighbors=0 threshold=1.5", path);
  h = new_harness (props, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  GstBuffer *b = gst_harness_pull (h);
  fail_unless_equals_int (count_rois (b), 0);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
  g_free (props);
  g_unlink (path);
  g_free (path);
  /* a forest file the loader refuses: a read error naming it */
  gchar *bad = tmp_file ("gpudetect-bad-model.forest");
  g_file_set_contents (bad, "gpudetect-forest 1\nwindow 20 20\nshrink 3\n", -1, NULL);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect model=%s ! "
      "fakesink", bad);
  expect_error (desc, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ);
  g_free (desc);
  g_unlink (bad);
  g_free (bad);
}
GST_END_TEST;

/* dlib's frontal face detector as a linear HOG filter model (made at build
 * time where dlib is found): Grace Hopper's face, in GRAY8 and BGRx alike;
 * no face at a threshold no window reaches; a filter file the loader refuses
 * stops the pipeline with a read error. */
GST_START_TEST (test_hogfilter_model)
{
  gchar *model = g_build_filename (GPUDETECT_BUILD_MODELS, "dlib-frontalface.hogfilter", NULL);
  if (!g_file_test (model, G_FILE_TEST_EXISTS)) {
    g_print ("no %s (built where dlib is found): skipped\n", model);
    g_free (model);
    return;
  }
  gchar *props = g_strdup_printf ("model=%s", model);
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_BGRx};
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstHarness *h = new_harness (props, formats[f], face_image.width, face_image.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, formats[f], 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *b = gst_harness_pull (h);
    /* dlib::get_frontal_face_detector ()(img): [(77, 65) (181, 169)], confidence 1.12 */
    assert_box (b, 77, 65, 105, 105, face_image.width, face_image.height);
    gst_buffer_unref (b);
    gst_harness_teardown (h);
  }
  g_free (props);
  /* a lower threshold (dlib's adjust_threshold): dlib's detector (img, -1.5) finds 4 boxes, two of them reaching
   * past the frame's top edge, reported clipped to the frame */
  props = g_strdup_printf ("model=%s threshold=-1.5", model);
  {
    GstHarness *hl = new_harness (props, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
    fail_unless_equals_int (gst_harness_push (hl, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (hl, gst_event_new_eos ()));
    GstBuffer *bl = gst_harness_pull (hl);
    fail_unless_equals_int (count_rois (bl), 4);
    for (guint k = 0; k < 4; k++) {
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (bl, (gint) k);
      fail_unless (roi->x + roi->w <= (guint) face_image.width && roi->y + roi->h <= (guint) face_image.height);
    }
    gst_buffer_unref (bl);
    gst_harness_teardown (hl);
  }
  g_free (props);
  props = g_strdup_printf ("model=%s threshold=100", model);
  GstHarness *h = new_harness (props, GST_VIDEO_FORMAT_GRAY8, face_image.width, face_image.height);
  fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  GstBuffer *b = gst_harness_pull (h);
  fail_unless_equals_int (count_rois (b), 0);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
  g_free (props);
  g_free (model);
  gchar *bad = tmp_file ("gpudetect-bad-model.hogfilter");
  g_file_set_contents (bad, "gpudetect-hogfilter 1\nfilter-size 10 10\nfilters 1\nfilter nan\n", -1, NULL);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect model=%s ! "
      "fakesink", bad);
  expect_error (desc, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ);
  g_free (desc);
  g_unlink (bad);
  g_free (bad);
}
GST_END_TEST;

/* Pipelines started to PAUSED; returns the element named `name` in it. */
static GstElement *paused (const char *desc, const char *name, GstElement **pipeline)
{
  *pipeline = gst_parse_launch (desc, NULL);
  fail_unless (*pipeline != NULL);
  fail_if (gst_element_set_state (*pipeline, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (*pipeline, NULL, NULL, 120 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  return gst_bin_get_by_name (GST_BIN (*pipeline), name);
}

static guint64 builds (GstElement *e)
{
  guint64 n = 0;
  g_object_get (e, "program-builds", &n, NULL);
  return n;
}

/* Elements on one device share its context and build a program once per
 * model and options: two elements with the same model in one pipeline, and
 * in another pipeline of the process, one build; another model, one more. */
GST_START_TEST (test_program_builds)
{
  GstElement *p1, *p2, *p3;
  GstElement *a = paused ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=160,height=120 ! "
      "gpudetect name=a model=lbp-frontalface-improved ! gpudetect name=b model=lbp-frontalface-improved ! "
      "fakesink", "a", &p1);
  GstElement *b = gst_bin_get_by_name (GST_BIN (p1), "b");
  fail_unless_equals_uint64 (builds (a), 1);
  fail_unless_equals_uint64 (builds (b), 1);
  /* a second pipeline, which does not see the first's context: the process's */
  GstElement *c = paused ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=160,height=120 ! "
      "gpudetect name=c model=lbp-frontalface-improved ! fakesink", "c", &p2);
  fail_unless_equals_uint64 (builds (c), 1);
  gchar *na = NULL, *nc = NULL;
  g_object_get (a, "device-name", &na, NULL);
  g_object_get (c, "device-name", &nc, NULL);
  fail_unless (na && nc && strcmp (na, nc) == 0);
  g_free (na);
  g_free (nc);
  /* another model: its own program */
  GstElement *d = paused ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=160,height=120 ! "
      "gpudetect name=d model=haar-frontalface-default ! fakesink", "d", &p3);
  fail_unless_equals_uint64 (builds (d), 2);
  /* counted on one context: all four elements' */
  fail_unless_equals_uint64 (builds (a), 2);
  fail_unless_equals_uint64 (builds (b), 2);
  fail_unless_equals_uint64 (builds (c), 2);
  GstElement *elements[] = {a, b, c, d}, *pipelines[] = {p1, p2, p3};
  for (guint i = 0; i < G_N_ELEMENTS (elements); i++)
    gst_object_unref (elements[i]);
  for (guint i = 0; i < G_N_ELEMENTS (pipelines); i++) {
    gst_element_set_state (pipelines[i], GST_STATE_NULL);
    gst_object_unref (pipelines[i]);
  }
}
GST_END_TEST;

/* Eight pipelines started at once, each from a thread of its own (a barrier
 * lets them go together): their elements find or open the process's device
 * and build the model's program concurrently; one context and one build for
 * all, and every pipeline's frames through to EOS. */
#define AT_ONCE 8
typedef struct {
  GMutex lock;
  GCond cond;
  guint waiting;
} Barrier;

typedef struct {
  Barrier *barrier;
  GstElement *pipeline;
  GstStateChangeReturn ret;
} Starter;

static gpointer start_together (Starter *s)
{
  g_mutex_lock (&s->barrier->lock);
  s->barrier->waiting++;
  g_cond_broadcast (&s->barrier->cond);
  while (s->barrier->waiting < AT_ONCE)
    g_cond_wait (&s->barrier->cond, &s->barrier->lock);
  g_mutex_unlock (&s->barrier->lock);
  s->ret = gst_element_set_state (s->pipeline, GST_STATE_PLAYING);
  return NULL;
}

GST_START_TEST (test_pipelines_starting_at_once)
{
#ifdef __SANITIZE_ADDRESS__
  /* the thread that compiles first gets LLVM's malloc'd signal stack, which
   * AddressSanitizer cannot unmap when the thread ends (use_device_here):
   * under it the device's first use is the main thread's, and the eight
   * threads still start at once on the set-up device */
  use_device_here ();
#endif
  Barrier barrier = {0};
  g_mutex_init (&barrier.lock);
  g_cond_init (&barrier.cond);
  Starter starters[AT_ONCE];
  GThread *threads[AT_ONCE];
  for (guint i = 0; i < AT_ONCE; i++) {
    starters[i].barrier = &barrier;
    starters[i].pipeline = gst_parse_launch ("videotestsrc num-buffers=4 ! "
        "video/x-raw,format=GRAY8,width=160,height=120 ! gpudetect name=d model=lbp-frontalface-improved ! "
        "fakesink", NULL);
    fail_unless (starters[i].pipeline != NULL);
  }
  for (guint i = 0; i < AT_ONCE; i++)
    threads[i] = g_thread_new ("start", (GThreadFunc) start_together, &starters[i]);
  for (guint i = 0; i < AT_ONCE; i++)
    g_thread_join (threads[i]);
  for (guint i = 0; i < AT_ONCE; i++) {
    fail_if (starters[i].ret == GST_STATE_CHANGE_FAILURE, "pipeline %u did not start", i);
    GstBus *bus = gst_element_get_bus (starters[i].pipeline);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 120 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless (m != NULL && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "pipeline %u: no EOS", i);
    gst_message_unref (m);
    gst_object_unref (bus);
    GstElement *d = gst_bin_get_by_name (GST_BIN (starters[i].pipeline), "d");
    fail_unless_equals_uint64 (builds (d), 1);
    gst_object_unref (d);
  }
  for (guint i = 0; i < AT_ONCE; i++) {
    gst_element_set_state (starters[i].pipeline, GST_STATE_NULL);
    gst_object_unref (starters[i].pipeline);
  }
  g_cond_clear (&barrier.cond);
  g_mutex_clear (&barrier.lock);
}
GST_END_TEST;

/* OpenCV's people detector as a linear HOG filter model (hog-people, made at
 * build time where OpenCV is found) on a frame of opencv-doc's vtest.avi
 * (people walking, made grey at build time): OpenCV's two people, in GRAY8,
 * NV12 and BGRx alike (the luma of grey colour is the grey); none at a
 * threshold no window reaches. */
GST_START_TEST (test_hog_people)
{
  gchar *model = g_build_filename (GPUDETECT_BUILD_MODELS, "hog-people.hogfilter", NULL);
  gchar *frame = g_build_filename (GPUDETECT_BUILD_TESTS, "vtest-0.pgm", NULL);
  if (!g_file_test (model, G_FILE_TEST_EXISTS) || !g_file_test (frame, G_FILE_TEST_EXISTS)) {
    g_print ("no %s or %s (made where OpenCV and opencv-doc are found): skipped\n", model, frame);
    g_free (model);
    g_free (frame);
    return;
  }
  Gray people;
  load_pgm (frame, &people);
  /* HOGDescriptor::detectMultiScale (getDefaultPeopleDetector) on the grey frame, with its weights */
  const int want[2][4] = {{231, 185, 75, 149}, {620, 158, 97, 193}};
  const double weight[2] = {2.2789, 0.8089};
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_BGRx};
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    gchar *props = g_strdup_printf ("model=%s", model);
    GstHarness *h = new_harness (props, formats[f], people.width, people.height);
    g_free (props);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&people, formats[f], 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_int (count_rois (b), 2);
    for (guint k = 0; k < 2; k++) {
      GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (b, (gint) k);
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "person");
      const int i = roi->x == (guint) want[0][0] ? 0 : 1;
      fail_unless (roi->x == (guint) want[i][0] && roi->y == (guint) want[i][1] && roi->w == (guint) want[i][2] &&
          roi->h == (guint) want[i][3], "%s: box %u,%u %ux%u", gst_video_format_to_string (formats[f]), roi->x,
          roi->y, roi->w, roi->h);
      GstStructure *st = gst_video_region_of_interest_meta_get_param (roi, "detection");
      gdouble conf = 0;
      fail_unless (st && gst_structure_get_double (st, "confidence", &conf));
      fail_unless (fabs (conf - 1.0 / (1.0 + exp (-weight[i]))) < 1e-3, "confidence %f", conf);
    }
    gst_buffer_unref (b);
    gst_harness_teardown (h);
  }
  gchar *props = g_strdup_printf ("model=%s threshold=100", model);
  GstHarness *h = new_harness (props, GST_VIDEO_FORMAT_GRAY8, people.width, people.height);
  fail_unless_equals_int (gst_harness_push (h, make_frame (&people, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  GstBuffer *b = gst_harness_pull (h);
  fail_unless_equals_int (count_rois (b), 0);
  gst_buffer_unref (b);
  gst_harness_teardown (h);
  g_free (props);
  g_free (people.pixels);
  g_free (model);
  g_free (frame);
}
GST_END_TEST;

/* cv::dpm's deformable part models.  The made test model (tests/data/dpm-test.xml), whose cascade prunes
 * nothing, on the test image in GRAY8 and BGRx: the 12 objects of cv::dpm::DPMDetector::detect, its best first
 * (113, 181) 113 x 113, score 0.628; a threshold over every score: nothing.  inriaperson.xml by its short name on
 * basketball1.png (a parity image, made as PGM where OpenCV is found): cv::dpm's one person, (24, 97) 121 x 363,
 * score 0.470, labelled "person".  A cv::dpm file the loader refuses: a read error. */
GST_START_TEST (test_dpm_model)
{
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_BGRx};
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    GstHarness *h = new_harness ("model=" GPUDETECT_TEST_DATA "/dpm-test.xml", formats[f], face_image.width,
        face_image.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, formats[f], 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_int (count_rois (b), 12);
    GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (b, 0);
    fail_unless (roi != NULL && roi->x == 113 && roi->y == 181 && roi->w == 113 && roi->h == 113);
    GstStructure *st = gst_video_region_of_interest_meta_get_param (roi, "detection");
    gdouble conf = 0;
    fail_unless (st != NULL && gst_structure_get_double (st, "confidence", &conf));
    fail_unless (fabs (conf - 1.0 / (1.0 + exp (-0.628038))) < 1e-5, "confidence %f", conf);
    gst_buffer_unref (b);
    gst_harness_teardown (h);
  }
  {
    GstHarness *h = new_harness ("model=" GPUDETECT_TEST_DATA "/dpm-test.xml threshold=0.7", GST_VIDEO_FORMAT_GRAY8,
        face_image.width, face_image.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_int (count_rois (b), 0);
    gst_buffer_unref (b);
    gst_harness_teardown (h);
  }
  gchar *people = g_build_filename (GPUDETECT_BUILD_TESTS, "basketball1.pgm", NULL);
  if (g_file_test (people, G_FILE_TEST_EXISTS)) {
    Gray g;
    load_pgm (people, &g);
    GstHarness *h = new_harness ("model=dpm-inriaperson", GST_VIDEO_FORMAT_GRAY8, g.width, g.height);
    fail_unless_equals_int (gst_harness_push (h, make_frame (&g, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    GstBuffer *b = gst_harness_pull (h);
    fail_unless_equals_int (count_rois (b), 1);
    GstVideoRegionOfInterestMeta *roi = gst_buffer_get_video_region_of_interest_meta_id (b, 0);
    fail_unless (roi != NULL && roi->x == 24 && roi->y == 97 && roi->w == 121 && roi->h == 363);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), "person");
    gst_buffer_unref (b);
    gst_harness_teardown (h);
    g_free (g.pixels);
  } else {
    g_print ("no %s (made where OpenCV is found): inriaperson skipped\n", people);
  }
  g_free (people);
  gchar *bad = tmp_file ("gpudetect-bad-model-dpm.xml");
  g_file_set_contents (bad, "<opencv_storage><SBin>7</SBin><RootFilters/></opencv_storage>", -1, NULL);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8 ! gpudetect model=%s ! "
      "fakesink", bad);
  expect_error (desc, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ);
  g_free (desc);
  g_unlink (bad);
  g_free (bad);
}
GST_END_TEST;

/* max-device-memory: a model and frame size past it fail negotiation (the
 * model's constants alone: start) with a RESOURCE/NO_SPACE_LEFT error whose
 * debug text says how much they need and the limit, within seconds and
 * before the frame's planes are allocated; within it the stream runs, and a
 * renegotiation to a frame size past it fails with the same error. */
static void expect_memory_error (GstBus *bus, const char *debug_part)
{
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (m != NULL, "no error posted");
  GError *err = NULL;
  gchar *dbg = NULL;
  gst_message_parse_error (m, &err, &dbg);
  fail_unless (err->domain == GST_RESOURCE_ERROR && err->code == GST_RESOURCE_ERROR_NO_SPACE_LEFT, "%s (%s)",
      err->message, dbg);
  fail_unless (dbg != NULL && strstr (dbg, debug_part) != NULL, "debug text: %s", dbg);
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (m);
}

GST_START_TEST (test_max_device_memory)
{
  const gint64 t0 = g_get_monotonic_time ();
  expect_error_full ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=1920,height=1080 ! "
      "gpudetect model=dpm-inriaperson max-device-memory=8388608 ! fakesink", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NO_SPACE_LEFT, 60, "Not enough OpenCL device memory for detection model \"dpm-inriaperson\".",
      "over the limit of 8.00 MiB (max-device-memory)", "gpudetect");
  expect_error_full ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=320,height=240 ! "
      "gpudetect model=dpm-inriaperson max-device-memory=16384 ! fakesink", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NO_SPACE_LEFT, 60, NULL, "it needs at least", "gpudetect");
  GST_INFO ("refused in %.2f s", (g_get_monotonic_time () - t0) / 1e6);

  /* within 8 MiB, the face; then 4096x4096 frames, past it */
  GstHarness *h = new_harness (FACE_PROPS " max-device-memory=8388608", GST_VIDEO_FORMAT_GRAY8, face_image.width,
      face_image.height);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  fail_unless_equals_int (gst_harness_push (h, make_frame (&face_image, GST_VIDEO_FORMAT_GRAY8, 0)), GST_FLOW_OK);
  gst_harness_push_event (h, gst_event_new_eos ());
  GstBuffer *b = gst_harness_pull (h);
  assert_face (b, 0, 0, face_image.width, face_image.height);
  gst_buffer_unref (b);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
  gst_harness_push_event (h, gst_event_new_flush_start ());
  gst_harness_push_event (h, gst_event_new_flush_stop (TRUE));
  /* (not gst_harness_set_src_caps, which asserts that the caps are taken) */
  gst_harness_push_event (h, gst_event_new_caps (gst_caps_from_string ("video/x-raw,format=GRAY8,width=4096,"
      "height=4096,framerate=30/1")));
  GstSegment segment;
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_harness_push_event (h, gst_event_new_segment (&segment));
  Gray big = {4096, 4096, g_malloc0 (4096 * 4096)};
  fail_unless_equals_int (gst_harness_push (h, make_frame (&big, GST_VIDEO_FORMAT_GRAY8, GST_SECOND)),
      GST_FLOW_NOT_NEGOTIATED);
  expect_memory_error (bus, "on 4096x4096 frames: it needs at least");
  g_free (big.pixels);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}
GST_END_TEST;

static Suite *gpudetect_suite (void)
{
  Suite *s = suite_create ("gpudetect");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  load_pgm (GPUDETECT_TEST_DATA "/grace_hopper_256x300.pgm", &face_image);
  tcase_add_test (tc, test_formats);
  tcase_add_test (tc, test_order_and_eos_drain);
  tcase_add_test (tc, test_flush_mid_flight);
  tcase_add_test (tc, test_inference_interval);
  tcase_add_test (tc, test_roi_and_resolution_change);
  tcase_add_test (tc, test_secondary_detection);
  tcase_add_test (tc, test_build_messages);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_model_not_a_file);
  tcase_add_test (tc, test_messages_and_latency);
  tcase_add_test (tc, test_pipeline_1080p_flushes);
  tcase_add_test (tc, test_upload_pool);
  tcase_add_test (tc, test_trained_models);
  tcase_add_test (tc, test_forest_model);
  tcase_add_test (tc, test_stop_while_device_busy);
  tcase_add_test (tc, test_hogfilter_model);
  tcase_add_test (tc, test_program_builds);
  tcase_add_test (tc, test_pipelines_starting_at_once);
  tcase_add_test (tc, test_hog_people);
  tcase_add_test (tc, test_dpm_model);
  tcase_add_test (tc, test_max_device_memory);
  return s;
}

GST_CHECK_MAIN (gpudetect);
