/* gpudetect-soak: a long run of `appsrc ! gpudetect ! roioverlay ! fakesink`
 * on a real face image (the face moving a pixel a frame), sampling the
 * process's resident memory (VmRSS, /proc/self/status) every N frames into a
 * CSV, then checking that it stays flat after a warm-up: every sample within
 * ±TOL % of the first one after it.  With --pipelines P, P such pipelines run
 * at once in this process (one thread pushing into each), N frames each.
 *
 *   gpudetect-soak --frames 10000 --width 320 --height 240 --every 100 --csv soak.csv
 *   gpudetect-soak --pipelines 8 --frames 1000 --width 320 --height 240
 *
 * Device memory: OpenCL 1.2 has no query for the memory in use.
 * CL_DEVICE_GLOBAL_MEM_SIZE is the device's capacity, not its use, and is not
 * reported; where the device has AMD's cl_amd_device_attribute_query, its
 * free memory (CL_DEVICE_GLOBAL_FREE_MEMORY_AMD) is sampled too; on NVIDIA GPUs,
 * this process's device memory as nvidia-smi reports it.  On PoCL's CPU
 * device, buffers are host memory: they are part of VmRSS.
 *
 * Exit status: 0 when every pipeline delivered every frame, found the face on
 * most of them, and RSS (and device memory, where sampled) stayed flat; 1
 * otherwise. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <gst/gst.h>
#include <gst/video/gstvideometa.h>
#include <gst/video/video.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CL_DEVICE_GLOBAL_FREE_MEMORY_AMD
#define CL_DEVICE_GLOBAL_FREE_MEMORY_AMD 0x4039
#endif

typedef struct {
  int width, height;
  guint8 *pixels;
} Gray;

static struct {
  gint frames, width, height, every, warmup, pipelines;
  gdouble tolerance;
  gchar *model, *image, *csv, *format, *props;
} opt = {10000, 320, 240, 100, -1, 1, 2.0, NULL, NULL, NULL, NULL, NULL};

static gboolean load_pgm (const char *path, Gray *g)
{
  FILE *f = fopen (path, "rb");
  if (!f)
    return FALSE;
  int maxval = 0;
  gboolean ok = fscanf (f, "P5 %d %d %d", &g->width, &g->height, &maxval) == 3 && maxval == 255;
  fgetc (f);
  if (ok) {
    g->pixels = g_malloc ((gsize) g->width * g->height);
    ok = fread (g->pixels, 1, (size_t) g->width * g->height, f) == (size_t) g->width * g->height;
  }
  fclose (f);
  return ok;
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

/* Free device memory in KiB where the driver says (AMD), else -1. */
static cl_device_id amd_device;
static gint64 device_free_kib (void)
{
  cl_ulong kib[2] = {0, 0};
  if (!amd_device || clGetDeviceInfo (amd_device, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, sizeof (kib), kib, NULL) != CL_SUCCESS)
    return -1;
  return (gint64) kib[0];
}

/* This process's device memory in KiB on NVIDIA GPUs (nvidia-smi, where it is
 * on the PATH: OpenCL has no query for it), else -1. */
static gboolean nvidia_device;
static gint64 device_used_kib (void)
{
  if (!nvidia_device)
    return -1;
  FILE *p = popen ("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null", "r");
  if (!p)
    return -1;
  gint64 kib = -1;
  char line[256];
  while (fgets (line, sizeof (line), p)) {
    long pid = 0, mib = 0;
    if (sscanf (line, "%ld , %ld", &pid, &mib) == 2 && pid == (long) getpid ())
      kib = (kib < 0 ? 0 : kib) + (gint64) mib * 1024;
  }
  pclose (p);
  return kib;
}

static void describe_devices (void)
{
  cl_platform_id plats[8];
  cl_uint np = 0;
  if (clGetPlatformIDs (8, plats, &np) != CL_SUCCESS)
    np = 0;
  for (cl_uint p = 0; p < np && p < 8; p++) {
    cl_device_id devs[8];
    cl_uint nd = 0;
    if (clGetDeviceIDs (plats[p], CL_DEVICE_TYPE_ALL, 8, devs, &nd) != CL_SUCCESS)
      continue;
    for (cl_uint d = 0; d < nd && d < 8; d++) {
      char name[256] = "", ext[8192] = "";
      clGetDeviceInfo (devs[d], CL_DEVICE_NAME, sizeof (name) - 1, name, NULL);
      clGetDeviceInfo (devs[d], CL_DEVICE_EXTENSIONS, sizeof (ext) - 1, ext, NULL);
      const gboolean amd = strstr (ext, "cl_amd_device_attribute_query") != NULL;
      cl_uint vendor = 0;
      clGetDeviceInfo (devs[d], CL_DEVICE_VENDOR_ID, sizeof (vendor), &vendor, NULL);
      const gboolean nvidia = vendor == 0x10de && system ("nvidia-smi -L > /dev/null 2>&1") == 0;
      if (amd && !amd_device)
        amd_device = devs[d];
      nvidia_device |= nvidia;
      printf ("# device %s: %s\n", name, amd ? "free memory sampled (CL_DEVICE_GLOBAL_FREE_MEMORY_AMD)" :
          nvidia ? "this process's device memory sampled (nvidia-smi)" :
          "no OpenCL query for memory in use (a CPU device's buffers are host memory, in VmRSS)");
    }
  }
}

/* One pipeline and what its sink saw. */
typedef struct {
  GstElement *pipe, *src;
  GMutex lock;
  gint out, with_objects;
  gboolean sampler; /* the one whose frames drive the samples */
} Run;

typedef struct {
  gint frame;
  gdouble seconds;
  gint64 rss, device_free, device_used;
} Sample;

static GMutex samples_lock;
static GArray *samples;
static gint64 t0;
static gint total_out;

static void take_sample (gint frame)
{
  Sample s = {frame, (g_get_monotonic_time () - t0) / 1e6, rss_kib (), device_free_kib (), device_used_kib ()};
  g_mutex_lock (&samples_lock);
  g_array_append_val (samples, s);
  g_mutex_unlock (&samples_lock);
}

static GstPadProbeReturn on_sink_buffer (GstPad *pad, GstPadProbeInfo *info, Run *r)
{
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);
  const gboolean objects = gst_buffer_get_n_meta (b, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE) > 0;
  g_mutex_lock (&r->lock);
  r->out++;
  r->with_objects += objects;
  g_mutex_unlock (&r->lock);
  /* all pipelines' frames together, sampled every `every` of them */
  const gint n = g_atomic_int_add (&total_out, 1) + 1;
  if (n % opt.every == 0)
    take_sample (n);
  return GST_PAD_PROBE_OK;
}

/* The frame: the grey image in the frame's luma, shifted right by `shift`
 * pixels (wrapping), neutral chroma. */
static GstBuffer *make_frame (const GstVideoInfo *info, const Gray *g, int shift, GstClockTime pts)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info), NULL);
  GstVideoFrame frame;
  if (!gst_video_frame_map (&frame, info, buf, GST_MAP_WRITE)) {
    gst_buffer_unref (buf);
    return NULL;
  }
  const int w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  const int ps = GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, 0);
  for (int y = 0; y < h; y++) {
    guint8 *dst = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
    for (int x = 0; x < w; x++) {
      const int sx = ((x - shift) % w + w) % w;
      const guint8 v = sx < g->width && y < g->height ? g->pixels[(gsize) y * g->width + sx] : 96;
      if (ps == 4) {
        dst[4 * x] = dst[4 * x + 1] = dst[4 * x + 2] = v;
        dst[4 * x + 3] = 255;
      } else {
        dst[x] = v;
      }
    }
  }
  for (guint p = 1; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++)
    memset (GST_VIDEO_FRAME_PLANE_DATA (&frame, p), 128,
        (gsize) GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p) * GST_VIDEO_FRAME_COMP_HEIGHT (&frame, p));
  gst_video_frame_unmap (&frame);
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

typedef struct {
  Run *run;
  const Gray *image;
} Feeder;

static gpointer feed (Feeder *f)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, gst_video_format_from_string (opt.format), opt.width, opt.height);
  for (gint i = 0; i < opt.frames; i++) {
    GstBuffer *b = make_frame (&info, f->image, i % 48, gst_util_uint64_scale_int (i, GST_SECOND, 30));
    GstFlowReturn ret = GST_FLOW_ERROR;
    if (b)
      g_signal_emit_by_name (f->run->src, "push-buffer", b, &ret);
    gst_clear_buffer (&b);
    if (ret != GST_FLOW_OK)
      break; /* the pipeline stopped: its error is on the bus */
  }
  GstFlowReturn ret;
  g_signal_emit_by_name (f->run->src, "end-of-stream", &ret);
  return NULL;
}

static gboolean setup_run (Run *r, int index)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=time block=true max-bytes=%d "
      "caps=video/x-raw,format=%s,width=%d,height=%d,framerate=30/1 ! gpudetect model=%s %s ! roioverlay ! "
      "fakesink name=sink sync=false", 4 * opt.width * opt.height * 4, opt.format, opt.width, opt.height, opt.model,
      opt.props ? opt.props : "");
  GError *err = NULL;
  r->pipe = gst_parse_launch (desc, &err);
  g_free (desc);
  if (!r->pipe) {
    fprintf (stderr, "pipeline %d: %s\n", index, err ? err->message : "?");
    g_clear_error (&err);
    return FALSE;
  }
  g_mutex_init (&r->lock);
  r->src = gst_bin_get_by_name (GST_BIN (r->pipe), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (r->pipe), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, (GstPadProbeCallback) on_sink_buffer, r, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);
  return TRUE;
}

/* Waits for every pipeline's EOS or the first error. */
static gboolean wait_all (Run *runs, int n)
{
  gboolean ok = TRUE;
  for (int i = 0; i < n; i++) {
    GstBus *bus = gst_element_get_bus (runs[i].pipe);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      gchar *dbg = NULL;
      gst_message_parse_error (m, &err, &dbg);
      fprintf (stderr, "pipeline %d: %s (%s)\n", i, err->message, dbg ? dbg : "");
      g_error_free (err);
      g_free (dbg);
      ok = FALSE;
    }
    gst_message_unref (m);
    gst_object_unref (bus);
  }
  return ok;
}

int main (int argc, char **argv)
{
  GOptionEntry entries[] = {
      {"frames", 'n', 0, G_OPTION_ARG_INT, &opt.frames, "Frames through each pipeline (10000)", "N"},
      {"width", 0, 0, G_OPTION_ARG_INT, &opt.width, "Frame width (320)", "W"},
      {"height", 0, 0, G_OPTION_ARG_INT, &opt.height, "Frame height (240)", "H"},
      {"format", 0, 0, G_OPTION_ARG_STRING, &opt.format, "Video format (I420)", "F"},
      {"every", 0, 0, G_OPTION_ARG_INT, &opt.every, "Sample every N frames, all pipelines together (100)", "N"},
      {"warmup", 0, 0, G_OPTION_ARG_INT, &opt.warmup, "Frames before the flatness check (default: a tenth)", "N"},
      {"tolerance", 0, 0, G_OPTION_ARG_DOUBLE, &opt.tolerance, "Allowed RSS change after warm-up, percent (2)",
       "PCT"},
      {"pipelines", 'p', 0, G_OPTION_ARG_INT, &opt.pipelines, "Pipelines at once in this process (1)", "P"},
      {"model", 0, 0, G_OPTION_ARG_STRING, &opt.model, "gpudetect model (lbp-frontalface-improved)", "M"},
      {"props", 0, 0, G_OPTION_ARG_STRING, &opt.props, "More gpudetect properties, \"a=b c=d\"", "P"},
      {"image", 0, 0, G_OPTION_ARG_FILENAME, &opt.image, "Grey PGM image with a face", "PGM"},
      {"csv", 0, 0, G_OPTION_ARG_FILENAME, &opt.csv, "Write the samples here (default: stdout)", "FILE"},
      {NULL}};
  GOptionContext *ctx = g_option_context_new ("- soak gpudetect ! roioverlay");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  GError *err = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    fprintf (stderr, "%s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (!opt.model)
    opt.model = g_strdup ("lbp-frontalface-improved");
  if (!opt.format)
    opt.format = g_strdup ("I420");
  if (!opt.image)
    opt.image = g_strdup (GPUDETECT_TEST_DATA "/grace_hopper_256x300.pgm");
  if (opt.warmup < 0)
    opt.warmup = opt.frames * opt.pipelines / 10;
  if (opt.frames < 1 || opt.every < 1 || opt.pipelines < 1 || opt.pipelines > 64 || opt.width < 1 || opt.height < 1) {
    fprintf (stderr, "bad arguments\n");
    return 2;
  }
  Gray image;
  if (!load_pgm (opt.image, &image)) {
    fprintf (stderr, "cannot read %s\n", opt.image);
    return 2;
  }
  printf ("# gpudetect-soak: %d pipeline(s) x %d frames of %dx%d %s, model %s, sample every %d frames, warm-up %d "
      "frames, tolerance %.1f %%\n", opt.pipelines, opt.frames, opt.width, opt.height, opt.format, opt.model,
      opt.every, opt.warmup, opt.tolerance);
  describe_devices ();

  samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  Run *runs = g_new0 (Run, opt.pipelines);
  Feeder *feeders = g_new0 (Feeder, opt.pipelines);
  GThread **threads = g_new0 (GThread *, opt.pipelines);
  for (int i = 0; i < opt.pipelines; i++)
    if (!setup_run (&runs[i], i))
      return 1;
  t0 = g_get_monotonic_time ();
  take_sample (0);
  for (int i = 0; i < opt.pipelines; i++) {
    if (gst_element_set_state (runs[i].pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      wait_all (&runs[i], 1);
      return 1;
    }
    feeders[i] = (Feeder) {&runs[i], &image};
    threads[i] = g_thread_new ("feed", (GThreadFunc) feed, &feeders[i]);
  }
  gboolean ok = wait_all (runs, opt.pipelines);
  for (int i = 0; i < opt.pipelines; i++)
    g_thread_join (threads[i]);
  const gdouble seconds = (g_get_monotonic_time () - t0) / 1e6;
  if (g_array_index (samples, Sample, samples->len - 1).frame != g_atomic_int_get (&total_out))
    take_sample (g_atomic_int_get (&total_out));

  FILE *csv = opt.csv ? fopen (opt.csv, "w") : stdout;
  if (!csv) {
    fprintf (stderr, "cannot write %s\n", opt.csv);
    return 2;
  }
  fprintf (csv, "frames,seconds,rss_kib,device_free_kib,device_used_kib\n");
  for (guint i = 0; i < samples->len; i++) {
    const Sample *s = &g_array_index (samples, Sample, i);
    fprintf (csv, "%d,%.2f,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "\n", s->frame, s->seconds,
        s->rss, s->device_free, s->device_used);
  }
  if (csv != stdout)
    fclose (csv);

  /* every pipeline delivered every frame, the face on most */
  for (int i = 0; i < opt.pipelines; i++) {
    printf ("# pipeline %d: %d frames out, %d with objects\n", i, runs[i].out, runs[i].with_objects);
    if (runs[i].out != opt.frames || runs[i].with_objects < opt.frames / 2)
      ok = FALSE;
  }
  /* RSS flat after warm-up: every sample within ±tolerance % of the first one after it */
  const Sample *ref = NULL;
  gint64 lo = G_MAXINT64, hi = 0;
  for (guint i = 0; i < samples->len; i++) {
    const Sample *s = &g_array_index (samples, Sample, i);
    if (s->frame < opt.warmup)
      continue;
    if (!ref)
      ref = s;
    lo = MIN (lo, s->rss);
    hi = MAX (hi, s->rss);
  }
  const Sample *first = &g_array_index (samples, Sample, 0), *last = &g_array_index (samples, Sample, samples->len - 1);
  printf ("# %d frames in %.1f s (%.1f frames/s); RSS %" G_GINT64_FORMAT " KiB at start, %" G_GINT64_FORMAT
      " KiB at the end\n", g_atomic_int_get (&total_out), seconds, g_atomic_int_get (&total_out) / seconds,
      first->rss, last->rss);
  if (ref) {
    const gdouble up = 100.0 * (hi - ref->rss) / ref->rss, down = 100.0 * (ref->rss - lo) / ref->rss;
    const gboolean flat = up <= opt.tolerance && down <= opt.tolerance;
    printf ("# after warm-up (from frame %d, %" G_GINT64_FORMAT " KiB): min %" G_GINT64_FORMAT " KiB (-%.2f %%), "
        "max %" G_GINT64_FORMAT " KiB (+%.2f %%), last %" G_GINT64_FORMAT " KiB: %s\n", ref->frame, ref->rss, lo, down,
        hi, up, last->rss, flat ? "flat" : "NOT FLAT");
    ok &= flat;
    /* device memory (where sampled): every sample after the warm-up within the same tolerance */
    gint64 dlo = G_MAXINT64, dhi = -1;
    for (guint i = 0; i < samples->len; i++) {
      const Sample *s = &g_array_index (samples, Sample, i);
      const gint64 v = s->device_used >= 0 ? s->device_used : s->device_free;
      if (s->frame >= ref->frame && v >= 0) {
        dlo = MIN (dlo, v);
        dhi = MAX (dhi, v);
      }
    }
    const gint64 dref = ref->device_used >= 0 ? ref->device_used : ref->device_free;
    if (dhi >= 0 && dref > 0) {
      const gboolean used = ref->device_used >= 0;
      const gdouble dup = 100.0 * (dhi - dref) / dref, ddown = 100.0 * (dref - dlo) / dref;
      const gboolean dflat = dup <= opt.tolerance && ddown <= opt.tolerance;
      printf ("# device memory %s after warm-up: %" G_GINT64_FORMAT " KiB, min %" G_GINT64_FORMAT " KiB (-%.2f %%), "
          "max %" G_GINT64_FORMAT " KiB (+%.2f %%): %s\n", used ? "used by this process" : "free", dref, dlo, ddown,
          dhi, dup, dflat ? "flat" : "NOT FLAT");
      ok &= dflat;
    }
  } else {
    printf ("# no sample after the warm-up\n");
    ok = FALSE;
  }
  for (int i = 0; i < opt.pipelines; i++) {
    gst_element_set_state (runs[i].pipe, GST_STATE_NULL);
    gst_object_unref (runs[i].src);
    gst_object_unref (runs[i].pipe);
    g_mutex_clear (&runs[i].lock);
  }
  printf ("# %s\n", ok ? "PASS" : "FAIL");
  g_free (runs);
  g_free (feeders);
  g_free (threads);
  g_array_unref (samples);
  g_free (image.pixels);
  return ok ? 0 : 1;
}
