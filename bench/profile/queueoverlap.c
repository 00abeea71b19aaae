/* queueoverlap: whether an OpenCL driver runs an upload while a kernel runs,
 * with the two on one in-order queue, on one out-of-order queue (no event
 * between them), and on two in-order queues: a kernel of some 100 us on the
 * first, a 2 MB upload from page-locked memory enqueued right after it; the
 * profiling events say when each ran.
 *
 *   cc -O2 -o queueoverlap bench/profile/queueoverlap.c -lOpenCL && ./queueoverlap
 */
#include "clcheck.h"


static const char *source = "kernel void spin (global float *a, int n)\n"
                            "{\n"
                            "  float x = a[get_global_id (0)];\n"
                            "  for (int i = 0; i < n; i++)\n"
                            "    x = x * 0.999f + 0.5f;\n"
                            "  a[get_global_id (0)] = x;\n"
                            "}\n";

static double at_us (cl_event e, cl_profiling_info what)
{
  cl_ulong v = 0;
  CHECK (clGetEventProfilingInfo (e, what, sizeof v, &v, NULL));
  return v / 1e3;
}

enum { FRAME = 1920 * 1080 };

int main (void)
{
  cl_platform_id p;
  cl_device_id d;
  cl_int st;
  CHECK (clGetPlatformIDs (1, &p, NULL));
  CHECK (clGetDeviceIDs (p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
  char name[256];
  CHECK (clGetDeviceInfo (d, CL_DEVICE_NAME, sizeof name, name, NULL));
  cl_command_queue_properties props = 0;
  CHECK (clGetDeviceInfo (d, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof props, &props, NULL));
  printf ("%s; out-of-order queues %s\n", name,
          props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE ? "supported" : "not supported");
  cl_context c;
  cl_program pr = build_source (d, source, &c);
  cl_kernel k = clCreateKernel (pr, "spin", &st);
  CHECK (st);
  const size_t global = 1 << 20;
  cl_mem a = clCreateBuffer (c, CL_MEM_READ_WRITE, global * sizeof (float), NULL, &st);
  CHECK (st);
  const int n = 2000;
  CHECK (clSetKernelArg (k, 0, sizeof a, &a));
  CHECK (clSetKernelArg (k, 1, sizeof n, &n));
  cl_mem frame = clCreateBuffer (c, CL_MEM_READ_ONLY, FRAME, NULL, &st);
  CHECK (st);
  cl_mem pinned = clCreateBuffer (c, CL_MEM_ALLOC_HOST_PTR, FRAME, NULL, &st);
  CHECK (st);
  static const char *modes[] = {"one in-order queue", "one out-of-order queue", "two in-order queues"};
  for (int mode = 0; mode < 3; mode++) {
    if (mode == 1 && !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
      continue;
    cl_command_queue q = clCreateCommandQueue (
        c, d, CL_QUEUE_PROFILING_ENABLE | (mode == 1 ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0), &st);
    CHECK (st);
    cl_command_queue q2 = q;
    if (mode == 2) {
      q2 = clCreateCommandQueue (c, d, CL_QUEUE_PROFILING_ENABLE, &st);
      CHECK (st);
    }
    void *host = clEnqueueMapBuffer (q, pinned, CL_TRUE, CL_MAP_WRITE, 0, FRAME, 0, NULL, NULL, &st);
    CHECK (st);
    for (int rep = 0; rep < 4; rep++) {
      cl_event ek, ew;
      CHECK (clEnqueueNDRangeKernel (q, k, 1, NULL, &global, NULL, 0, NULL, &ek));
      CHECK (clEnqueueWriteBuffer (q2, frame, CL_FALSE, 0, FRAME, host, 0, NULL, &ew));
      CHECK (clFlush (q));
      CHECK (clFlush (q2));
      CHECK (clFinish (q));
      CHECK (clFinish (q2));
      const double k0 = at_us (ek, CL_PROFILING_COMMAND_START), k1 = at_us (ek, CL_PROFILING_COMMAND_END);
      const double w0 = at_us (ew, CL_PROFILING_COMMAND_START), w1 = at_us (ew, CL_PROFILING_COMMAND_END);
      printf ("%-24s kernel %7.1f us; upload starts %+8.1f us after the kernel, takes %6.1f us: %s\n", modes[mode],
              k1 - k0, w0 - k0, w1 - w0, w0 < k1 ? "overlapped" : "after it");
      CHECK (clReleaseEvent (ek));
      CHECK (clReleaseEvent (ew));
    }
    CHECK (clEnqueueUnmapMemObject (q, pinned, host, 0, NULL, NULL));
    CHECK (clFinish (q));
    if (q2 != q)
      CHECK (clReleaseCommandQueue (q2));
    CHECK (clReleaseCommandQueue (q));
  }
  return 0;
}
