/* cltime: an LD_PRELOAD library that measures the host time of each OpenCL
 * call a program makes, by entry point: where a frame's enqueueing time goes.
 *
 *   cc -O2 -shared -fPIC -o libcltime.so bench/profile/cltime.c -ldl -lpthread
 *   LD_PRELOAD=$PWD/libcltime.so gpudetect-bench ...
 *   CLTIME_OUT=calls.txt LD_PRELOAD=$PWD/libcltime.so gst-launch-1.0 ... ! gpudetect ! ...
 *
 * At exit, in a process that made any call, it prints to stderr (or to the
 * file CLTIME_OUT names), per entry point: calls, total and mean
 * microseconds, and the median and 90th percentile of the last CLTIME_KEEP
 * calls (default 4096) of each.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define _GNU_SOURCE
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP_MAX 65536
typedef struct {
  const char *name;
  unsigned long calls;
  double total_us;
  float *keep; /* the last `keep_n` calls' times, as a ring */
} stat;

enum {
  F_NDRANGE, F_WRITE, F_WRITE_RECT, F_READ, F_MARKER, F_FLUSH, F_FINISH, F_WAIT, F_RELEASE_EVENT, F_EVENT_INFO,
  F_PROFILING_INFO, F_SET_ARG, F_CALLBACK, F_MAP, F_UNMAP, F_RETAIN_QUEUE, F_RELEASE_QUEUE, F_COUNT
};
static stat stats[F_COUNT] = {
    {.name = "clEnqueueNDRangeKernel"},  {.name = "clEnqueueWriteBuffer"},    {.name = "clEnqueueWriteBufferRect"},
    {.name = "clEnqueueReadBuffer"},     {.name = "clEnqueueMarkerWithWaitList"}, {.name = "clFlush"},
    {.name = "clFinish"},                {.name = "clWaitForEvents"},         {.name = "clReleaseEvent"},
    {.name = "clGetEventInfo"},          {.name = "clGetEventProfilingInfo"}, {.name = "clSetKernelArg"},
    {.name = "clSetEventCallback"},      {.name = "clEnqueueMapBuffer"},      {.name = "clEnqueueUnmapMemObject"},
    {.name = "clRetainCommandQueue"},    {.name = "clReleaseCommandQueue"}};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long keep_n;

/* The OpenCL library's own entry point: the next one after this library, or,
 * where the program loads OpenCL from a plugin opened with local symbols
 * (GStreamer), the ICD loader's. */
static void *real_symbol (const char *name)
{
  void *f = dlsym (RTLD_NEXT, name);
  if (!f) {
    static void *lib;
    if (!lib)
      lib = dlopen ("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
    f = lib ? dlsym (lib, name) : NULL;
  }
  if (!f) {
    fprintf (stderr, "cltime: no %s\n", name);
    abort ();
  }
  return f;
}

static double now_us (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void record (int f, double us)
{
  pthread_mutex_lock (&lock);
  if (!keep_n) {
    const char *k = getenv ("CLTIME_KEEP");
    keep_n = k && atol (k) > 0 ? (unsigned long) atol (k) : 4096;
    if (keep_n > KEEP_MAX)
      keep_n = KEEP_MAX;
  }
  stat *s = &stats[f];
  if (!s->keep)
    s->keep = calloc (keep_n, sizeof *s->keep);
  if (s->keep)
    s->keep[s->calls % keep_n] = (float) us;
  s->calls++;
  s->total_us += us;
  pthread_mutex_unlock (&lock);
}

static int cmp_float (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

__attribute__ ((destructor)) static void report (void)
{
  unsigned long calls = 0;
  for (int f = 0; f < F_COUNT; f++)
    calls += stats[f].calls;
  if (!calls) /* a process that made none, e.g. GStreamer's plugin scanner */
    return;
  const char *path = getenv ("CLTIME_OUT");
  FILE *out = path ? fopen (path, "w") : NULL;
  if (!out)
    out = stderr;
  fprintf (out, "%-28s %9s %12s %9s %9s %9s\n", "call", "calls", "total_us", "mean_us", "median", "p90");
  for (int f = 0; f < F_COUNT; f++) {
    stat *s = &stats[f];
    if (!s->calls)
      continue;
    unsigned long n = s->calls < keep_n ? s->calls : keep_n;
    float med = 0, p90 = 0;
    if (s->keep) {
      qsort (s->keep, n, sizeof *s->keep, cmp_float);
      med = s->keep[n / 2];
      p90 = s->keep[n * 9 / 10];
    }
    fprintf (out, "%-28s %9lu %12.1f %9.2f %9.2f %9.2f\n", s->name, s->calls, s->total_us, s->total_us / s->calls, med,
             p90);
  }
  if (out != stderr)
    fclose (out);
}

/* WRAP (index, return type, name, (parameters), (arguments)) */
#define WRAP(F, R, NAME, PARAMS, ARGS)                                                                          \
  R NAME PARAMS                                                                                                 \
  {                                                                                                             \
    static R (*real) PARAMS;                                                                                    \
    if (!real)                                                                                                  \
      *(void **) &real = real_symbol (#NAME);                                                                    \
    const double t0 = now_us ();                                                                                \
    R ret_ = real ARGS;                                                                                          \
    record (F, now_us () - t0);                                                                                 \
    return ret_;                                                                                                \
  }

WRAP (F_NDRANGE, cl_int, clEnqueueNDRangeKernel,
      (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g, const size_t *l, cl_uint n,
       const cl_event *w, cl_event *e),
      (q, k, d, o, g, l, n, w, e))
WRAP (F_WRITE, cl_int, clEnqueueWriteBuffer,
      (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, const void *p, cl_uint n, const cl_event *w,
       cl_event *e),
      (q, m, b, o, s, p, n, w, e))
WRAP (F_WRITE_RECT, cl_int, clEnqueueWriteBufferRect,
      (cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo, const size_t *ho, const size_t *r, size_t brp,
       size_t bsp, size_t hrp, size_t hsp, const void *p, cl_uint n, const cl_event *w, cl_event *e),
      (q, m, b, bo, ho, r, brp, bsp, hrp, hsp, p, n, w, e))
WRAP (F_READ, cl_int, clEnqueueReadBuffer,
      (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void *p, cl_uint n, const cl_event *w,
       cl_event *e),
      (q, m, b, o, s, p, n, w, e))
WRAP (F_MARKER, cl_int, clEnqueueMarkerWithWaitList, (cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e),
      (q, n, w, e))
WRAP (F_FLUSH, cl_int, clFlush, (cl_command_queue q), (q))
WRAP (F_FINISH, cl_int, clFinish, (cl_command_queue q), (q))
WRAP (F_WAIT, cl_int, clWaitForEvents, (cl_uint n, const cl_event *w), (n, w))
WRAP (F_RELEASE_EVENT, cl_int, clReleaseEvent, (cl_event e), (e))
WRAP (F_EVENT_INFO, cl_int, clGetEventInfo, (cl_event e, cl_event_info i, size_t s, void *v, size_t *r),
      (e, i, s, v, r))
WRAP (F_PROFILING_INFO, cl_int, clGetEventProfilingInfo,
      (cl_event e, cl_profiling_info i, size_t s, void *v, size_t *r), (e, i, s, v, r))
WRAP (F_SET_ARG, cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
WRAP (F_CALLBACK, cl_int, clSetEventCallback,
      (cl_event e, cl_int t, void (CL_CALLBACK *cb) (cl_event, cl_int, void *), void *u), (e, t, cb, u))
WRAP (F_MAP, void *, clEnqueueMapBuffer,
      (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o, size_t s, cl_uint n, const cl_event *w,
       cl_event *e, cl_int *st),
      (q, m, b, f, o, s, n, w, e, st))
WRAP (F_UNMAP, cl_int, clEnqueueUnmapMemObject,
      (cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *w, cl_event *e), (q, m, p, n, w, e))
WRAP (F_RETAIN_QUEUE, cl_int, clRetainCommandQueue, (cl_command_queue q), (q))
WRAP (F_RELEASE_QUEUE, cl_int, clReleaseCommandQueue, (cl_command_queue q), (q))
