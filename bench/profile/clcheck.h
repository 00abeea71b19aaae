/* What the small OpenCL probes in bench/profile share: OpenCL 3.0 headers and
 * CHECK (call), which prints the failing call and its status and exits;
 * build_source, a context on a device and a program built in it. */
#ifndef GPUDETECT_PROFILE_CLCHECK_H
#define GPUDETECT_PROFILE_CLCHECK_H
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                                \
  do {                                                                                                          \
    cl_int st_ = (x);                                                                                           \
    if (st_ != CL_SUCCESS) {                                                                                    \
      fprintf (stderr, "%s:%d: %s: error %d\n", __FILE__, __LINE__, #x, st_);                                   \
      exit (1);                                                                                                 \
    }                                                                                                           \
  } while (0)

static inline cl_program build_source (cl_device_id d, const char *source, cl_context *c)
{
  cl_int st;
  *c = clCreateContext (NULL, 1, &d, NULL, NULL, &st);
  CHECK (st);
  cl_program pr = clCreateProgramWithSource (*c, 1, &source, NULL, &st);
  CHECK (st);
  CHECK (clBuildProgram (pr, 1, &d, "", NULL, NULL));
  return pr;
}

#endif
