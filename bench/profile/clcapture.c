/* clcapture: an LD_PRELOAD library that records one launch of an OpenCL
 * kernel as the engine makes it, so that the kernel can be replayed and
 * profiled outside OpenCL (replay.cpp, with NVIDIA's CUDA driver and Nsight
 * Compute, which do not see OpenCL launches).
 *
 *   CLCAPTURE_KERNEL=cascade_list CLCAPTURE_SKIP=20 CLCAPTURE_DIR=out \
 *   LD_PRELOAD=libclcapture.so gpudetect-bench ...
 *
 * Before the (SKIP+1)-th launch of the kernel it waits for the queue and
 * writes into DIR: program.bin (the program's binary: PTX on NVIDIA), and
 * launch.txt (kernel name, global and local size, then per argument
 * "buf INDEX SIZE" or "val SIZE HEX") with bufINDEX.bin holding each
 * buffer's contents as they are when the kernel starts.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define _GNU_SOURCE
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_ARGS 64
#define MAX_KERNELS 64
typedef struct {
  cl_kernel k;
  int n;
  size_t size[MAX_ARGS];
  unsigned char val[MAX_ARGS][16];
} kargs;
static kargs ks[MAX_KERNELS];
static int nks, launches;

static kargs *find (cl_kernel k)
{
  for (int i = 0; i < nks; i++)
    if (ks[i].k == k)
      return &ks[i];
  if (nks == MAX_KERNELS)
    return NULL;
  memset (&ks[nks], 0, sizeof ks[nks]);
  ks[nks].k = k;
  return &ks[nks++];
}

cl_int clSetKernelArg (cl_kernel k, cl_uint i, size_t size, const void *v)
{
  static cl_int (*real) (cl_kernel, cl_uint, size_t, const void *);
  if (!real)
    real = (cl_int (*) (cl_kernel, cl_uint, size_t, const void *)) dlsym (RTLD_NEXT, "clSetKernelArg");
  kargs *a = find (k);
  if (a && i < MAX_ARGS && size <= 16 && v) {
    memcpy (a->val[i], v, size);
    a->size[i] = size;
    if ((int) i + 1 > a->n)
      a->n = (int) i + 1;
  }
  return real (k, i, size, v);
}

static void capture (cl_command_queue q, cl_kernel k, size_t global, size_t local, const char *dir)
{
  char path[4096], name[256] = "";
  clFinish (q);
  mkdir (dir, 0755);
  clGetKernelInfo (k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
  cl_program prog;
  clGetKernelInfo (k, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL);
  size_t binsize = 0;
  clGetProgramInfo (prog, CL_PROGRAM_BINARY_SIZES, sizeof binsize, &binsize, NULL);
  unsigned char *bin = malloc (binsize + 1);
  clGetProgramInfo (prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
  snprintf (path, sizeof path, "%s/program.bin", dir);
  FILE *f = fopen (path, "wb");
  fwrite (bin, 1, binsize, f);
  fclose (f);
  free (bin);
  snprintf (path, sizeof path, "%s/launch.txt", dir);
  FILE *m = fopen (path, "w");
  fprintf (m, "%s %zu %zu\n", name, global, local);
  kargs *a = find (k);
  for (int i = 0; a && i < a->n; i++) {
    cl_mem mem = NULL;
    size_t msize = 0;
    if (a->size[i] == sizeof (cl_mem)) {
      memcpy (&mem, a->val[i], sizeof mem);
      if (mem && clGetMemObjectInfo (mem, CL_MEM_SIZE, sizeof msize, &msize, NULL) != CL_SUCCESS)
        mem = NULL;
    }
    if (mem) {
      void *data = malloc (msize);
      clEnqueueReadBuffer (q, mem, CL_TRUE, 0, msize, data, 0, NULL, NULL);
      snprintf (path, sizeof path, "%s/buf%d.bin", dir, i);
      FILE *b = fopen (path, "wb");
      fwrite (data, 1, msize, b);
      fclose (b);
      free (data);
      fprintf (m, "buf %d %zu\n", i, msize);
    } else {
      fprintf (m, "val %zu ", a->size[i]);
      for (size_t j = 0; j < a->size[i]; j++)
        fprintf (m, "%02x", a->val[i][j]);
      fprintf (m, "\n");
    }
  }
  fclose (m);
  fprintf (stderr, "clcapture: %s captured in %s\n", name, dir);
}

cl_int clEnqueueNDRangeKernel (cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off, const size_t *global,
                               const size_t *local, cl_uint nw, const cl_event *w, cl_event *ev)
{
  static cl_int (*real) (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
                         cl_uint, const cl_event *, cl_event *);
  if (!real)
    real = (cl_int (*) (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,
                        const cl_event *, cl_event *)) dlsym (RTLD_NEXT, "clEnqueueNDRangeKernel");
  const char *want = getenv ("CLCAPTURE_KERNEL"), *dir = getenv ("CLCAPTURE_DIR");
  char name[256] = "";
  if (want && dir && dim == 1) {
    clGetKernelInfo (k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    const int skip = getenv ("CLCAPTURE_SKIP") ? atoi (getenv ("CLCAPTURE_SKIP")) : 0;
    if (strcmp (name, want) == 0 && launches++ == skip) {
      if (nw)
        clWaitForEvents (nw, w);
      capture (q, k, global[0], local ? local[0] : 0, dir);
    }
  }
  return real (q, k, dim, off, global, local, nw, w, ev);
}
