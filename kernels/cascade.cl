/* Boosted cascades (OpenCV Haar and LBP, stumps and trees) over every window
 * of every pyramid level, with OpenCV CascadeClassifier's arithmetic:
 * float feature values, double stage sums (when the device has fp64),
 * Haar variance normalisation with its flat-window rejection, and the CPU
 * path's skip of the window after a stage-0 rejection.
 *
 * Build options:
 *   -D FEATURE_HAAR | -D FEATURE_LBP
 *   -D MAX_NODES=<max nodes per tree>   (1: stumps)
 *   -D WIN_W=<window width> -D WIN_H=<window height>
 *   -D HAVE_FP64                        (double accumulation as OpenCV)
 *   -D HAVE_TILTED                      (Haar with tilted features)
 *
 * Phases: cascade_first (dense, stage 0 for all windows, one code per
 * window), cascade_compact (survivors that OpenCV would evaluate -> list),
 * cascade_rest (later stages over the list, grid-stride) -> hits.
 */
#pragma OPENCL FP_CONTRACT OFF

#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

#ifndef MAX_NODES
#define MAX_NODES 1
#endif

/* Window codes written by cascade_first. */
#define CODE_REJECT0 0 /* evaluated, rejected by stage 0: OpenCV skips the next window */
#define CODE_PASS0 1   /* passed stage 0 */
#define CODE_INVALID 2 /* window refused before stage 0 (flat, for Haar) */

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

#ifdef FEATURE_HAAR
typedef struct {
  int4 r[3];   /* x, y, w, h */
  float4 w;    /* weights of the three rectangles; w.w = 1 for tilted */
} feature_t;
#else
typedef int4 feature_t; /* x, y, w, h of one LBP block */
#endif

#define RECT_SUM(p, a, b, c, d) ((int) ((p)[a] - (p)[b] - (p)[c] + (p)[d]))

typedef struct {
  __global const uint *sum;
  __global const uint *sqsum;
  __global const uint *tilted;
  size_t ofs;  /* window origin in the packed integrals */
  int stride;
  float vnf;   /* variance normalisation factor (Haar) */
} window_t;

#ifdef FEATURE_HAAR
inline int rect_sum (const window_t *w, int4 r, int tilted)
{
  const int s = w->stride;
  if (tilted) {
    __global const uint *p = w->tilted + w->ofs;
    return RECT_SUM (p, r.x + s * r.y, r.x - r.w + s * (r.y + r.w), r.x + r.z + s * (r.y + r.z),
                     r.x + r.z - r.w + s * (r.y + r.z + r.w));
  }
  __global const uint *p = w->sum + w->ofs;
  return RECT_SUM (p, r.x + s * r.y, r.x + r.z + s * r.y, r.x + s * (r.y + r.w), r.x + r.z + s * (r.y + r.w));
}

inline float feature_value (const window_t *w, __global const feature_t *f)
{
  const feature_t F = *f;
  const int t = F.w.w != 0.0f;
  float ret = F.w.x * (float) rect_sum (w, F.r[0], t) + F.w.y * (float) rect_sum (w, F.r[1], t);
  if (F.w.z != 0.0f)
    ret += F.w.z * (float) rect_sum (w, F.r[2], t);
  return ret * w->vnf;
}

/* OpenCV HaarEvaluator::setWindow: variance over the window inset by one
 * pixel; flat windows (area / sqrt(nf) >= 0.1) are refused. */
inline int haar_set_window (window_t *w)
{
  const int s = w->stride;
  __global const uint *p = w->sum + w->ofs;
  __global const uint *q = w->sqsum + w->ofs;
  const int a = 1 + s, b = (WIN_W - 1) + s, c = 1 + s * (WIN_H - 1), d = (WIN_W - 1) + s * (WIN_H - 1);
  const int valsum = RECT_SUM (p, a, b, c, d);
  const uint valsqsum = (uint) RECT_SUM (q, a, b, c, d);
#ifdef HAVE_FP64
  const double area = (double) ((WIN_W - 2) * (WIN_H - 2));
  double nf = area * (double) valsqsum - (double) valsum * (double) valsum;
  if (nf > 0.0) {
    nf = sqrt (nf);
    w->vnf = (float) (1.0 / nf);
    return area * (double) w->vnf < 1e-1;
  }
#else
  const float area = (float) ((WIN_W - 2) * (WIN_H - 2));
  float nf = area * (float) valsqsum - (float) valsum * (float) valsum;
  if (nf > 0.0f) {
    nf = sqrt (nf);
    w->vnf = 1.0f / nf;
    return area * w->vnf < 1e-1f;
  }
#endif
  w->vnf = 1.0f;
  return 0;
}

inline int node_left (const window_t *w, __global const feature_t *features, node_t n,
                      __global const uint *subsets, int node_index)
{
  return feature_value (w, features + n.feature) < n.threshold;
}
#else /* LBP */
inline int lbp_code (const window_t *w, int4 r)
{
  const int s = w->stride;
  __global const uint *p = w->sum + w->ofs + r.x + s * r.y;
  /* 4x4 grid of integral points, o(i, j) = i*bw + j*bh*stride */
#define O(i, j) ((i) * r.z + (j) * r.w * s)
  const int c = RECT_SUM (p, O (1, 1), O (2, 1), O (1, 2), O (2, 2));
  return (RECT_SUM (p, O (0, 0), O (1, 0), O (0, 1), O (1, 1)) >= c ? 128 : 0) |
         (RECT_SUM (p, O (1, 0), O (2, 0), O (1, 1), O (2, 1)) >= c ? 64 : 0) |
         (RECT_SUM (p, O (2, 0), O (3, 0), O (2, 1), O (3, 1)) >= c ? 32 : 0) |
         (RECT_SUM (p, O (2, 1), O (3, 1), O (2, 2), O (3, 2)) >= c ? 16 : 0) |
         (RECT_SUM (p, O (2, 2), O (3, 2), O (2, 3), O (3, 3)) >= c ? 8 : 0) |
         (RECT_SUM (p, O (1, 2), O (2, 2), O (1, 3), O (2, 3)) >= c ? 4 : 0) |
         (RECT_SUM (p, O (0, 2), O (1, 2), O (0, 3), O (1, 3)) >= c ? 2 : 0) |
         (RECT_SUM (p, O (0, 1), O (1, 1), O (0, 2), O (1, 2)) >= c ? 1 : 0);
#undef O
}

inline int node_left (const window_t *w, __global const feature_t *features, node_t n,
                      __global const uint *subsets, int node_index)
{
  const int c = lbp_code (w, features[n.feature]);
  return (subsets[node_index * 8 + (c >> 5)] >> (c & 31)) & 1;
}
#endif

/* One stage: sum of the weak trees' leaves against the stage threshold. */
inline int stage_passes (const window_t *w, int si, __global const stage_t *stages,
                         __global const tree_t *trees, __global const node_t *nodes,
                         __global const float *leaves, __global const feature_t *features,
                         __global const uint *subsets)
{
  const stage_t st = stages[si];
  acc_t sum = 0;
  for (int t = 0; t < st.ntrees; t++) {
    const tree_t tr = trees[st.first_tree + t];
    int idx = 0;
#if MAX_NODES == 1
    {
      const node_t n = nodes[tr.first_node];
      idx = node_left (w, features, n, subsets, tr.first_node) ? n.left : n.right;
    }
#else
    do {
      const node_t n = nodes[tr.first_node + idx];
      idx = node_left (w, features, n, subsets, tr.first_node + idx) ? n.left : n.right;
    } while (idx > 0);
#endif
    sum += (acc_t) leaves[tr.first_leaf - idx];
  }
  return !(sum < (acc_t) st.threshold);
}

/* Window index -> level (binary search on first_window), x, y. */
inline int locate (__global const int8 *levels, int nlevels, int gid, int *x, int *y)
{
  int lo = 0, hi = nlevels - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (levels[mid].s7 <= gid)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int8 L = levels[lo];
  const int idx = gid - L.s7;
  const int iy = idx / L.s4;
  *x = (idx - iy * L.s4) * L.s6;
  *y = iy * L.s6;
  return lo;
}

inline int open_window (window_t *w, __global const int8 *levels, int nlevels, int gid,
                        __global const uint *sum, __global const uint *sqsum, __global const uint *tilted,
                        int stride, int *ix)
{
  int x, y;
  const int li = locate (levels, nlevels, gid, &x, &y);
  const int8 L = levels[li];
  *ix = x / L.s6;
  w->sum = sum;
  w->sqsum = sqsum;
  w->tilted = tilted;
  w->stride = stride;
  w->ofs = (size_t) (L.s1 + y) * stride + L.s0 + x;
  w->vnf = 1.0f;
#ifdef FEATURE_HAAR
  return haar_set_window (w);
#else
  return 1;
#endif
}

#define MODEL_ARGS                                                                                 \
  __global const stage_t *stages, int nstages, __global const tree_t *trees,                      \
      __global const node_t *nodes, __global const float *leaves, __global const feature_t *features, \
      __global const uint *subsets
#define MODEL_PASS stages, trees, nodes, leaves, features, subsets

__kernel void
cascade_first (__global const int8 *levels, int nlevels, int nwindows, __global const uint *sum,
               __global const uint *sqsum, __global const uint *tilted, int stride, MODEL_ARGS,
               __global uchar *codes)
{
  const int gid = get_global_id (0);
  if (gid >= nwindows)
    return;
  window_t w;
  int ix;
  if (!open_window (&w, levels, nlevels, gid, sum, sqsum, tilted, stride, &ix)) {
    codes[gid] = CODE_INVALID;
    return;
  }
  codes[gid] = stage_passes (&w, 0, MODEL_PASS) ? CODE_PASS0 : CODE_REJECT0;
}

/* OpenCV scans a row left to right and, after a window rejected at stage 0,
 * skips the next one.  A window that passed stage 0 was evaluated iff the run
 * of stage-0 rejections right before it in its row has even length. */
__kernel void
cascade_compact (__global const int8 *levels, int nlevels, int nwindows, __global const uchar *codes,
                 __global uint *list, __global uint *counters)
{
  const int gid = get_global_id (0);
  if (gid >= nwindows || codes[gid] != CODE_PASS0)
    return;
  int x, y;
  const int li = locate (levels, nlevels, gid, &x, &y);
  const int ix = x / levels[li].s6;
  int run = 0;
  for (int j = 1; j <= ix && codes[gid - j] == CODE_REJECT0; j++)
    run++;
  if (run & 1)
    return;
  list[atomic_inc (&counters[0])] = gid;
}

__kernel void
cascade_rest (__global const int8 *levels, int nlevels, __global const uint *sum, __global const uint *sqsum,
              __global const uint *tilted, int stride, MODEL_ARGS, __global const uint *list,
              __global const uint *counters, __global uint *hits, uint hit_capacity)
{
  const uint n = counters[0];
  for (uint i = get_global_id (0); i < n; i += get_global_size (0)) {
    const int gid = list[i];
    window_t w;
    int ix;
    open_window (&w, levels, nlevels, gid, sum, sqsum, tilted, stride, &ix);
    int si = 1;
    for (; si < nstages; si++)
      if (!stage_passes (&w, si, MODEL_PASS))
        break;
    if (si == nstages) {
      const uint slot = atomic_inc (&hits[0]);
      if (slot < hit_capacity)
        hits[1 + slot] = gid;
    }
  }
}
