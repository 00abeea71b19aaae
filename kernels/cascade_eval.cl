/* Cascade evaluation for one window read straight from the packed integrals,
 * with OpenCV CascadeClassifier's arithmetic: float feature values, double
 * stage sums where the device has fp64, Haar variance normalisation with its
 * flat-window rejection.
 *
 * Needs from the including program: FEATURE_HAAR or FEATURE_LBP, MAX_NODES,
 * acc_t, sum_t, blk_t, LBP_BLOCK, RECT_SUM and the stage_t / tree_t / node_t /
 * stump_t / feature_t types.
 *
 * sum, tilted: the window's origin in the integral planes; s: their row
 * stride.  With USE_FOFS (CPU schedule) each feature's integral offsets come
 * precomputed for that stride (fofs), as OpenCV's setOffsets does: Haar 3
 * rectangles x 4 corners (tilted ones in the tilted plane), LBP the 4x4 grid of
 * integral points; without it (GPU schedule, where loads cost more than
 * arithmetic) they are computed from the feature's rectangle.
 *
 * Stump models (MAX_NODES == 1) read one stump_t per tree: feature, node
 * threshold and both leaves; their category subsets are indexed by tree.
 */

#ifdef FEATURE_HAAR
#ifdef NARROW_SUM
/* A rectangle of the narrow sum plane, hb = 0 where it holds at most 257
 * pixels, else its bands' height: the corners of its first band (the whole
 * rectangle where hb = 0), and the sum of the other bands. */
inline int rect_first_band (__global const sum_t *p, int s, int4 r, int hb)
{
  const int y1 = hb ? r.y + hb : r.y + r.w;
  return RECT_SUM (p, r.x + s * r.y, r.x + r.z + s * r.y, r.x + s * y1, r.x + r.z + s * y1);
}

inline int rect_other_bands (__global const sum_t *p, int s, int4 r, int hb)
{
  return hb && hb < r.w ? rect_sum_banded (p, s, r.x, r.y + hb, r.z, r.w - hb, hb) : 0;
}

/* Models without tilted features: w.w holds the three rectangles' band
 * heights (bits 0-7, 8-15, 16-23).  The first bands' loads come first, the
 * rare other bands after one test per feature. */
inline int node_left (__global const sum_t *sum, __global const uint *tilted, int s, float vnf,
                      __global const feature_t *features, __global const int *fofs, int fi, float threshold,
                      __global const uint *subsets, int si)
{
  const feature_t F = features[fi];
  const int hb = as_int (F.w.w), h0 = hb & 255, h1 = (hb >> 8) & 255, h2 = hb >> 16;
  const int three = F.w.z != 0.0f;
  int s0 = rect_first_band (sum, s, F.r[0], h0), s1 = rect_first_band (sum, s, F.r[1], h1), s2 = 0;
  if (three)
    s2 = rect_first_band (sum, s, F.r[2], h2);
  if (hb) {
    s0 += rect_other_bands (sum, s, F.r[0], h0);
    s1 += rect_other_bands (sum, s, F.r[1], h1);
    s2 += rect_other_bands (sum, s, F.r[2], h2);
  }
  float ret = F.w.x * (float) s0 + F.w.y * (float) s1;
  if (three)
    ret += F.w.z * (float) s2;
  return ret * vnf < threshold;
}
#else
inline int rect_sum (__global const uint *p, int s, int4 r, int t)
{
  if (t)
    return RECT_SUM (p, r.x + s * r.y, r.x - r.w + s * (r.y + r.w), r.x + r.z + s * (r.y + r.z),
                     r.x + r.z - r.w + s * (r.y + r.z + r.w));
  return RECT_SUM (p, r.x + s * r.y, r.x + r.z + s * r.y, r.x + s * (r.y + r.w), r.x + r.z + s * (r.y + r.w));
}

inline int node_left (__global const sum_t *sum, __global const uint *tilted, int s, float vnf,
                      __global const feature_t *features, __global const int *fofs, int fi, float threshold,
                      __global const uint *subsets, int si)
{
  const feature_t F = features[fi];
  const int t = F.w.w != 0.0f;
  __global const uint *p = t ? tilted : sum;
#ifdef USE_FOFS
  __global const int *o = fofs + fi * 12;
  float ret = F.w.x * (float) RECT_SUM (p, o[0], o[1], o[2], o[3]) + F.w.y * (float) RECT_SUM (p, o[4], o[5], o[6], o[7]);
  if (F.w.z != 0.0f)
    ret += F.w.z * (float) RECT_SUM (p, o[8], o[9], o[10], o[11]);
#else
  float ret = F.w.x * (float) rect_sum (p, s, F.r[0], t) + F.w.y * (float) rect_sum (p, s, F.r[1], t);
  if (F.w.z != 0.0f)
    ret += F.w.z * (float) rect_sum (p, s, F.r[2], t);
#endif
  return ret * vnf < threshold;
}
#endif
#else /* LBP */
inline int node_left (__global const sum_t *sum, __global const uint *tilted, int s, float vnf,
                      __global const feature_t *features, __global const int *fofs, int fi, float threshold,
                      __global const uint *subsets, int si)
{
#ifdef USE_FOFS
  __global const int *o = fofs + fi * 16;
#define G(i, j) ((int) sum[o[(i) + 4 * (j)]])
#else
  const int4 r = features[fi];
  __global const sum_t *p0 = sum + r.x + s * r.y, *p1 = p0 + s * r.w, *p2 = p1 + s * r.w, *p3 = p2 + s * r.w;
#define PROW(j) ((j) == 0 ? p0 : (j) == 1 ? p1 : (j) == 2 ? p2 : p3)
#define G(i, j) ((int) PROW (j)[(i) * r.z])
#endif
/* a block from the differences along its two rows, each shared with a neighbour */
#define D(i, j) (G (i, j) - G ((i) + 1, j))
#define B(i, j) LBP_BLOCK (D (i, j) - D (i, (j) + 1))
  const blk_t c = B (1, 1);
  const int code = (B (0, 0) >= c ? 128 : 0) | (B (1, 0) >= c ? 64 : 0) | (B (2, 0) >= c ? 32 : 0) |
                   (B (2, 1) >= c ? 16 : 0) | (B (2, 2) >= c ? 8 : 0) | (B (1, 2) >= c ? 4 : 0) |
                   (B (0, 2) >= c ? 2 : 0) | (B (0, 1) >= c ? 1 : 0);
#undef B
#undef D
#undef G
#undef PROW
  return (subsets[si * 8 + (code >> 5)] >> (code & 31)) & 1;
}
#endif

/* The leaf tree `ti` gives a window. */
inline float tree_value (__global const sum_t *sum, __global const uint *tilted, int s, float vnf, int ti,
                         __global const tree_t *trees, __global const node_t *nodes, __global const stump_t *stumps,
                         __global const float *leaves, __global const feature_t *features,
                         __global const int *fofs, __global const uint *subsets)
{
#if MAX_NODES == 1
  const stump_t st = stumps[ti];
#ifdef FEATURES_BY_TREE
  /* features[] in tree order: the feature's load does not wait for the stump's */
  return node_left (sum, tilted, s, vnf, features, fofs, ti, st.threshold, subsets, ti) ? st.left : st.right;
#else
  return node_left (sum, tilted, s, vnf, features, fofs, st.feature, st.threshold, subsets, ti) ? st.left : st.right;
#endif
#else
  const tree_t tr = trees[ti];
  int idx = 0;
  do {
    const node_t n = nodes[tr.first_node + idx];
    idx = node_left (sum, tilted, s, vnf, features, fofs, n.feature, n.threshold, subsets, tr.first_node + idx)
              ? n.left
              : n.right;
  } while (idx > 0);
  return leaves[tr.first_leaf - idx];
#endif
}

#ifndef LIST_UNROLL
#define LIST_UNROLL 1
#endif
/* One stage: the weak trees' leaves summed, in order, against the stage
 * threshold.  LIST_UNROLL (the GPU schedule's cascade_list) trees' values are
 * taken at a time, so that their loads can be in flight together. */
inline int stage_passes (__global const sum_t *sum, __global const uint *tilted, int s, float vnf, int si,
                         __global const stage_t *stages, __global const tree_t *trees, __global const node_t *nodes,
                         __global const stump_t *stumps, __global const float *leaves,
                         __global const feature_t *features, __global const int *fofs, __global const uint *subsets)
{
  const stage_t st = stages[si];
  acc_t acc = 0;
  int t = 0;
#if LIST_UNROLL > 1
  for (; t + LIST_UNROLL <= st.ntrees; t += LIST_UNROLL) {
    float v[LIST_UNROLL];
#pragma unroll
    for (int k = 0; k < LIST_UNROLL; k++)
      v[k] = tree_value (sum, tilted, s, vnf, st.first_tree + t + k, trees, nodes, stumps, leaves, features, fofs,
                         subsets);
#pragma unroll
    for (int k = 0; k < LIST_UNROLL; k++)
      acc += (acc_t) v[k];
  }
#endif
  for (; t < st.ntrees; t++)
    acc += (acc_t) tree_value (sum, tilted, s, vnf, st.first_tree + t, trees, nodes, stumps, leaves, features, fofs,
                               subsets);
  return !(acc < (acc_t) st.threshold);
}
