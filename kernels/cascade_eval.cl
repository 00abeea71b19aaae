/* Cascade evaluation for one window, in one address space.  The engine
 * includes this file twice: with SPACE __global / SFX g (windows read straight
 * from the packed integrals) and with SPACE __local / SFX l (windows read from
 * a work-group's tile of them).  OpenCV CascadeClassifier's arithmetic:
 * float feature values, double stage sums where the device has fp64, Haar
 * variance normalisation with its flat-window rejection.
 *
 * Needs from the including program: FEATURE_HAAR or FEATURE_LBP, MAX_NODES,
 * WIN_W, WIN_H, acc_t, and the stage_t / tree_t / node_t / feature_t types.
 */
#ifndef SPACE
#define SPACE __global
#define SFX g
#endif
#define FN_CAT2(a, b) a##_##b
#define FN_CAT(a, b) FN_CAT2 (a, b)
#define FN(name) FN_CAT (name, SFX)

#ifndef RECT_SUM
#define RECT_SUM(p, a, b, c, d) ((int) ((p)[a] - (p)[b] - (p)[c] + (p)[d]))
#endif

#ifdef FEATURE_HAAR
inline int FN (rect_sum) (SPACE const uint *sum, SPACE const uint *tilted, int s, int4 r, int t)
{
  if (t)
    return RECT_SUM (tilted, r.x + s * r.y, r.x - r.w + s * (r.y + r.w), r.x + r.z + s * (r.y + r.z),
                     r.x + r.z - r.w + s * (r.y + r.z + r.w));
  return RECT_SUM (sum, r.x + s * r.y, r.x + r.z + s * r.y, r.x + s * (r.y + r.w), r.x + r.z + s * (r.y + r.w));
}

/* sum, tilted: the window's origin; s: their row stride; fofs: when not
 * null, each feature's 12 corner offsets precomputed for stride s. */
inline int FN (node_left) (SPACE const uint *sum, SPACE const uint *tilted, int s, float vnf,
                           __global const feature_t *features, __global const int *fofs, node_t n,
                           __global const uint *subsets, int node_index)
{
  const feature_t F = features[n.feature];
  const int t = F.w.w != 0.0f;
  float ret;
  if (fofs) {
    __global const int *o = fofs + n.feature * 12;
    SPACE const uint *p = t ? tilted : sum;
    ret = F.w.x * (float) RECT_SUM (p, o[0], o[1], o[2], o[3]) + F.w.y * (float) RECT_SUM (p, o[4], o[5], o[6], o[7]);
    if (F.w.z != 0.0f)
      ret += F.w.z * (float) RECT_SUM (p, o[8], o[9], o[10], o[11]);
  } else {
    ret = F.w.x * (float) FN (rect_sum) (sum, tilted, s, F.r[0], t) +
          F.w.y * (float) FN (rect_sum) (sum, tilted, s, F.r[1], t);
    if (F.w.z != 0.0f)
      ret += F.w.z * (float) FN (rect_sum) (sum, tilted, s, F.r[2], t);
  }
  return ret * vnf < n.threshold;
}
#else /* LBP */
inline int FN (node_left) (SPACE const uint *sum, SPACE const uint *tilted, int s, float vnf,
                           __global const feature_t *features, __global const int *fofs, node_t n,
                           __global const uint *subsets, int node_index)
{
  SPACE const uint *p;
  int code;
  if (fofs) {
    /* 16 offsets of the 4x4 grid of integral points, precomputed for stride s */
    __global const int *o = fofs + n.feature * 16;
    p = sum;
#define G(k) ((int) p[o[k]])
    const int c = G (5) - G (6) - G (9) + G (10);
    code = (G (0) - G (1) - G (4) + G (5) >= c ? 128 : 0) | (G (1) - G (2) - G (5) + G (6) >= c ? 64 : 0) |
           (G (2) - G (3) - G (6) + G (7) >= c ? 32 : 0) | (G (6) - G (7) - G (10) + G (11) >= c ? 16 : 0) |
           (G (10) - G (11) - G (14) + G (15) >= c ? 8 : 0) | (G (9) - G (10) - G (13) + G (14) >= c ? 4 : 0) |
           (G (8) - G (9) - G (12) + G (13) >= c ? 2 : 0) | (G (4) - G (5) - G (8) + G (9) >= c ? 1 : 0);
#undef G
    return (subsets[node_index * 8 + (code >> 5)] >> (code & 31)) & 1;
  }
  const int4 r = features[n.feature];
  p = sum + r.x + s * r.y;
  /* 4x4 grid of integral points, O(i, j) = i*block_w + j*block_h*stride */
#define O(i, j) ((i) * r.z + (j) * r.w * s)
  const int c = RECT_SUM (p, O (1, 1), O (2, 1), O (1, 2), O (2, 2));
  code = (RECT_SUM (p, O (0, 0), O (1, 0), O (0, 1), O (1, 1)) >= c ? 128 : 0) |
                   (RECT_SUM (p, O (1, 0), O (2, 0), O (1, 1), O (2, 1)) >= c ? 64 : 0) |
                   (RECT_SUM (p, O (2, 0), O (3, 0), O (2, 1), O (3, 1)) >= c ? 32 : 0) |
                   (RECT_SUM (p, O (2, 1), O (3, 1), O (2, 2), O (3, 2)) >= c ? 16 : 0) |
                   (RECT_SUM (p, O (2, 2), O (3, 2), O (2, 3), O (3, 3)) >= c ? 8 : 0) |
                   (RECT_SUM (p, O (1, 2), O (2, 2), O (1, 3), O (2, 3)) >= c ? 4 : 0) |
                   (RECT_SUM (p, O (0, 2), O (1, 2), O (0, 3), O (1, 3)) >= c ? 2 : 0) |
                   (RECT_SUM (p, O (0, 1), O (1, 1), O (0, 2), O (1, 2)) >= c ? 1 : 0);
#undef O
  return (subsets[node_index * 8 + (code >> 5)] >> (code & 31)) & 1;
}
#endif

/* The leaf one weak tree gives a window. */
inline float FN (tree_value) (SPACE const uint *sum, SPACE const uint *tilted, int s, float vnf, tree_t tr,
                              __global const node_t *nodes, __global const float *leaves,
                              __global const feature_t *features, __global const int *fofs,
                              __global const uint *subsets)
{
  int idx = 0;
#if MAX_NODES == 1
  const node_t n = nodes[tr.first_node];
  idx = FN (node_left) (sum, tilted, s, vnf, features, fofs, n, subsets, tr.first_node) ? n.left : n.right;
#else
  do {
    const node_t n = nodes[tr.first_node + idx];
    idx = FN (node_left) (sum, tilted, s, vnf, features, fofs, n, subsets, tr.first_node + idx) ? n.left : n.right;
  } while (idx > 0);
#endif
  return leaves[tr.first_leaf - idx];
}

/* One stage: the weak trees' leaves summed against the stage threshold. */
inline int FN (stage_passes) (SPACE const uint *sum, SPACE const uint *tilted, int s, float vnf, int si,
                              __global const stage_t *stages, __global const tree_t *trees,
                              __global const node_t *nodes, __global const float *leaves,
                              __global const feature_t *features, __global const int *fofs,
                              __global const uint *subsets)
{
  const stage_t st = stages[si];
  acc_t acc = 0;
  for (int t = 0; t < st.ntrees; t++)
    acc += (acc_t) FN (tree_value) (sum, tilted, s, vnf, trees[st.first_tree + t], nodes, leaves, features, fofs,
                                        subsets);
  return !(acc < (acc_t) st.threshold);
}

#undef FN
#undef FN_CAT
#undef FN_CAT2
#undef SPACE
#undef SFX
