/* Shared declarations of the cascade kernels (see cascade.cl).
 * Build options: -D FEATURE_HAAR | -D FEATURE_LBP, -D MAX_NODES=<max nodes per
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
#define LD1(o) vload16 (0, p + (o))
#define LD2(o) ((uint16) (vload16 (0, p + (o)).even, vload16 (0, p + (o) + 16).even))

#ifndef MAX_NODES
#define MAX_NODES 1
#endif

#define RECT_SUM(p, a, b, c, d) ((int) ((p)[a] - (p)[b] - (p)[c] + (p)[d]))

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
