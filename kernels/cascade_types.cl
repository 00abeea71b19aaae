/* Shared declarations of the cascade kernels (see cascade.cl).
 * Build options: -D FEATURE_HAAR | -D FEATURE_LBP [-D NARROW_SUM], -D MAX_NODES=<max nodes per
 * tree> (1: stumps), -D WIN_W, -D WIN_H, [-D HAVE_FP64], [-D HAVE_TILTED],
 * [-D LIST_CHUNK: windows per work-group step of cascade_list], [-D USE_FOFS:
 * precomputed feature offsets]. */
#pragma OPENCL FP_CONTRACT OFF

#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

/* The CPU schedule's vector stages (generated, see codegen.h): sums of 16
 * windows, and the loads of 16 windows at a window step of 1 or 2 from p. */
#ifdef HAVE_FP64
typedef double16 accv_t;
#define convert_accv convert_double16
#else
typedef float16 accv_t;
#define convert_accv(x) (x)
#endif
#define LDB1(b, o) vload16 (0, (b) + (o))
#define LDB2(b, o) ((uint16) (vload16 (0, (b) + (o)).even, vload16 (0, (b) + (o) + 16).even))
#define LD1(o) LDB1 (p, o)
#define LD2(o) LDB2 (p, o)

#ifndef MAX_NODES
#define MAX_NODES 1
#endif

/* sum_t, SUM_WRAP: pyramid.cl.  RECT_SUM: corners of the sum plane (at most
 * 257 pixels with NARROW_SUM); RECT_SUM32: of a 32-bit plane. */
#define RECT_SUM(p, a, b, c, d) SUM_WRAP ((p)[a] - (p)[b] - (p)[c] + (p)[d])
#define RECT_SUM32(p, a, b, c, d) ((int) ((p)[a] - (p)[b] - (p)[c] + (p)[d]))

/* The sum of the rectangle at (x, y), w x h, of the sum plane, in bands of hb
 * rows (with NARROW_SUM, bands of at most 257 pixels). */
inline int rect_sum_banded (__global const sum_t *p, int s, int x, int y, int w, int h, int hb)
{
  int acc = 0;
  for (int y0 = y; y0 < y + h; y0 += hb) {
    const int y1 = min (y0 + hb, y + h);
    acc += RECT_SUM (p, x + s * y0, x + w + s * y0, x + s * y1, x + w + s * y1);
  }
  return acc;
}

#ifdef FEATURE_HAAR
/* window_norm (cascade.cl) for 16 windows at a window step of 1 or 2, lane
 * by lane the same arithmetic: the normalisation factors, and -1 where the
 * window is not flat. */
#define VEC_WINDOW_NORM(name, LDX)                                                                         \
  inline int16 name (__global const uint *p, __global const uint *q, int s, float16 *vnf)                 \
  {                                                                                                        \
    const int a = 1 + s, b = (WIN_W - 1) + s, c = 1 + s * (WIN_H - 1), d = (WIN_W - 1) + s * (WIN_H - 1); \
    const int16 valsum = as_int16 (LDX (p, a) - LDX (p, b) - LDX (p, c) + LDX (p, d));                    \
    const uint16 valsqsum = LDX (q, a) - LDX (q, b) - LDX (q, c) + LDX (q, d);                             \
    VEC_NORM_BODY                                                                                          \
  }
#ifdef HAVE_FP64
#define VEC_NORM_BODY                                                                                      \
  const double area = (double) ((WIN_W - 2) * (WIN_H - 2));                                                \
  const double16 nf = area * convert_double16 (valsqsum) - convert_double16 (valsum) * convert_double16 (valsum); \
  const int16 pos = convert_int16 (nf > 0.0);                                                              \
  *vnf = select ((float16) 1.0f, convert_float16 (1.0 / sqrt (nf)), pos);                                   \
  return pos & convert_int16 (area * convert_double16 (*vnf) < 1e-1);
#else
#define VEC_NORM_BODY                                                                                      \
  const float area = (float) ((WIN_W - 2) * (WIN_H - 2));                                                  \
  const float16 nf = area * convert_float16 (valsqsum) - convert_float16 (valsum) * convert_float16 (valsum); \
  const int16 pos = nf > 0.0f;                                                                             \
  *vnf = select ((float16) 1.0f, 1.0f / sqrt (nf), pos);                                                    \
  return pos & (area * *vnf < 1e-1f);
#endif
#endif

typedef struct {
  int first_tree, ntrees;
  float threshold, pad;
} stage_t;

typedef struct {
  int first_node, node_count, first_leaf, pad;
} tree_t;

typedef struct {
  int left, right, feature;
  float threshold;
} node_t;

typedef struct {
  int feature;
  float threshold, left, right; /* node threshold, leaf values */
} stump_t;

#ifdef FEATURE_HAAR
typedef struct {
  int4 r[3]; /* x, y, w, h */
  float4 w;  /* weights of the three rectangles; w.w = 1 for tilted */
} feature_t;
#else
typedef int4 feature_t; /* x, y, w, h of one LBP block */
#endif
