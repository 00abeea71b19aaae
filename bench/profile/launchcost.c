/* launchcost: the host time an OpenCL driver takes to enqueue a command, by
 * kind of command and queue: a kernel with 1 or 16 buffer arguments (over
 * 2^20 work-items and over 256), and a 2 MB upload plus a 4 KB read between
 * page-locked host memory and the device; each on an in-order queue without
 * and with CL_QUEUE_PROFILING_ENABLE, and without and with an event returned.
 * Medians and 90th percentiles over 2000 commands, flushed every 4 and
 * finished every 64, as a frame's commands are.
 *
 *   cc -O2 -o launchcost bench/profile/launchcost.c -lOpenCL && ./launchcost [DEVICE-INDEX]
 */
#include "clcheck.h"

#include <time.h>

static double now_us (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static const char *source =
    "kernel void k1 (global uint *a) { if (get_global_id (0) == 0) a[0]++; }\n"
    "kernel void k16 (global uint *a0, global uint *a1, global uint *a2, global uint *a3, global uint *a4,\n"
    "                 global uint *a5, global uint *a6, global uint *a7, global uint *a8, global uint *a9,\n"
    "                 global uint *a10, global uint *a11, global uint *a12, global uint *a13, global uint *a14,\n"
    "                 global uint *a15, int n)\n"
    "{\n"
    "  if (get_global_id (0) == 0) {\n"
    "    a0[0]++; a1[0]++; a2[0]++; a3[0]++; a4[0]++; a5[0]++; a6[0]++; a7[0]++;\n"
    "    a8[0]++; a9[0]++; a10[0]++; a11[0]++; a12[0]++; a13[0]++; a14[0]++; a15[0] += n;\n"
    "  }\n"
    "}\n";

enum { COMMANDS = 2000, WARMUP = 100, FRAME = 1920 * 1080 };

int main (int argc, char **argv)
{
  cl_platform_id platforms[8];
  cl_uint np = 0;
  CHECK (clGetPlatformIDs (8, platforms, &np));
  const int want = argc > 1 ? atoi (argv[1]) : 0;
  cl_device_id d = NULL;
  int index = 0;
  for (cl_uint p = 0; p < np && !d; p++) {
    cl_device_id ds[16];
    cl_uint nd = 0;
    if (clGetDeviceIDs (platforms[p], CL_DEVICE_TYPE_ALL, 16, ds, &nd) != CL_SUCCESS)
      continue;
    for (cl_uint i = 0; i < nd && !d; i++, index++)
      if (index == want)
        d = ds[i];
  }
  if (!d) {
    fprintf (stderr, "no OpenCL device %d\n", want);
    return 1;
  }
  char name[256];
  CHECK (clGetDeviceInfo (d, CL_DEVICE_NAME, sizeof name, name, NULL));
  printf ("%s\n", name);
  cl_int st;
  cl_context c;
  cl_program pr = build_source (d, source, &c);
  cl_kernel k1 = clCreateKernel (pr, "k1", &st);
  CHECK (st);
  cl_kernel k16 = clCreateKernel (pr, "k16", &st);
  CHECK (st);
  cl_mem b[16];
  for (int i = 0; i < 16; i++) {
    b[i] = clCreateBuffer (c, CL_MEM_READ_WRITE, 1 << 20, NULL, &st);
    CHECK (st);
    CHECK (clSetKernelArg (k16, i, sizeof (cl_mem), &b[i]));
  }
  const int n = 1;
  CHECK (clSetKernelArg (k1, 0, sizeof (cl_mem), &b[0]));
  CHECK (clSetKernelArg (k16, 16, sizeof n, &n));
  cl_mem frame = clCreateBuffer (c, CL_MEM_READ_ONLY, FRAME, NULL, &st);
  CHECK (st);
  cl_mem pinned = clCreateBuffer (c, CL_MEM_ALLOC_HOST_PTR, FRAME, NULL, &st);
  CHECK (st);
  cl_mem result = clCreateBuffer (c, CL_MEM_ALLOC_HOST_PTR, 4096, NULL, &st);
  CHECK (st);
  static const char *kinds[] = {"kernel, 1 buffer, 2^20 items", "kernel, 16 buffers, 2^20 items",
                                "kernel, 16 buffers, 256 items", "2 MB upload / 4 KB read"};
  printf ("%-10s %-6s %-32s %9s %9s\n", "profiling", "event", "command", "median_us", "p90_us");
  for (int prof = 0; prof < 2; prof++) {
    cl_command_queue q = clCreateCommandQueue (c, d, prof ? CL_QUEUE_PROFILING_ENABLE : 0, &st);
    CHECK (st);
    void *host_frame = clEnqueueMapBuffer (q, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, FRAME, 0, NULL, NULL, &st);
    CHECK (st);
    void *host_result = clEnqueueMapBuffer (q, result, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, NULL, NULL, &st);
    CHECK (st);
    for (int ev = 0; ev < 2; ev++)
      for (int kind = 0; kind < 4; kind++) {
        static double t[COMMANDS];
        const size_t global = kind == 2 ? 256 : 256 * 4096, local = 256;
        for (int i = 0; i < WARMUP + COMMANDS; i++) {
          cl_event e = NULL;
          const double t0 = now_us ();
          if (kind == 3 && i % 2)
            CHECK (clEnqueueWriteBuffer (q, frame, CL_FALSE, 0, FRAME, host_frame, 0, NULL, ev ? &e : NULL));
          else if (kind == 3)
            CHECK (clEnqueueReadBuffer (q, b[0], CL_FALSE, 0, 4096, host_result, 0, NULL, ev ? &e : NULL));
          else
            CHECK (clEnqueueNDRangeKernel (q, kind == 0 ? k1 : k16, 1, NULL, &global, &local, 0, NULL, ev ? &e : NULL));
          const double t1 = now_us ();
          if (i >= WARMUP)
            t[i - WARMUP] = t1 - t0;
          if (e)
            CHECK (clReleaseEvent (e));
          if (i % 4 == 3)
            CHECK (clFlush (q));
          if (i % 64 == 63)
            CHECK (clFinish (q));
        }
        CHECK (clFinish (q));
        qsort (t, COMMANDS, sizeof t[0], cmp_double);
        printf ("%-10s %-6s %-32s %9.2f %9.2f\n", prof ? "yes" : "no", ev ? "yes" : "no", kinds[kind], t[COMMANDS / 2],
                t[COMMANDS * 9 / 10]);
      }
    CHECK (clEnqueueUnmapMemObject (q, pinned, host_frame, 0, NULL, NULL));
    CHECK (clEnqueueUnmapMemObject (q, result, host_result, 0, NULL, NULL));
    CHECK (clFinish (q));
    CHECK (clReleaseCommandQueue (q));
  }
  return 0;
}
