/* Boosted cascades (OpenCV Haar and LBP, stumps and trees) over every window
 * of every pyramid level, with two schedules that give the same answers:
 *
 * GPU schedule (many lanes):
 *   cascade_first  stage 0 over every window, one code per window;
 *   cascade_tiles  one work-group per 16x16 windows of a level: the windows
 *                  OpenCV would evaluate (stage-0 pass, skip rule), their
 *                  integral tile in local memory, then stage after stage with
 *                  the survivors compacted in local memory; hits appended.
 * CPU schedule (few cores): cascade_rows, one work-item per row of windows,
 *   OpenCV's own loop (every stage, skip after a stage-0 rejection).
 *
 * Level descriptors are int8: x0, y0, width, height, nx, ny, step, first_window.
 * hits[0] counts hits, hits[1 + i] holds window indices.
 */

#define CODE_REJECT0 0 /* evaluated, rejected by stage 0: OpenCV skips the next window */
#define CODE_PASS0 1   /* passed stage 0 */
#define CODE_INVALID 2 /* refused before stage 0 (flat window, Haar) */

#define MODEL_ARGS                                                                                 \
  __global const stage_t *stages, int nstages, __global const tree_t *trees,                      \
      __global const node_t *nodes, __global const float *leaves, __global const feature_t *features, \
      __global const int *fofs, __global const uint *subsets
/* fofs: feature offsets for the packed integrals' stride (global reads) */
#define MODEL_PASS stages, trees, nodes, leaves, features, fofs, subsets
/* tiles read local memory with on-the-fly offsets */
#define MODEL_PASS_TILE stages, trees, nodes, leaves, features, (__global const int *) 0, subsets

/* OpenCV HaarEvaluator::setWindow: variance over the window inset by one
 * pixel; flat windows (area / sqrt(nf) >= 0.1) are refused. */
inline int window_norm (__global const uint *p, __global const uint *q, int s, float *vnf)
{
#ifdef FEATURE_HAAR
  const int a = 1 + s, b = (WIN_W - 1) + s, c = 1 + s * (WIN_H - 1), d = (WIN_W - 1) + s * (WIN_H - 1);
  const int valsum = RECT_SUM (p, a, b, c, d);
  const uint valsqsum = (uint) RECT_SUM (q, a, b, c, d);
#ifdef HAVE_FP64
  const double area = (double) ((WIN_W - 2) * (WIN_H - 2));
  double nf = area * (double) valsqsum - (double) valsum * (double) valsum;
  if (nf > 0.0) {
    nf = sqrt (nf);
    *vnf = (float) (1.0 / nf);
    return area * (double) *vnf < 1e-1;
  }
#else
  const float area = (float) ((WIN_W - 2) * (WIN_H - 2));
  float nf = area * (float) valsqsum - (float) valsum * (float) valsum;
  if (nf > 0.0f) {
    nf = sqrt (nf);
    *vnf = 1.0f / nf;
    return area * *vnf < 1e-1f;
  }
#endif
  *vnf = 1.0f;
  return 0;
#else
  *vnf = 1.0f;
  return 1;
#endif
}

/* Window index -> level (binary search on first_window), x, y. */
inline int locate (__global const int8 *levels, int nlevels, int gid, int *ix, int *iy)
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
  *iy = idx / L.s4;
  *ix = idx - *iy * L.s4;
  return lo;
}

__kernel void
cascade_first (__global const int8 *levels, int nlevels, int nwindows, __global const uint *sum,
               __global const uint *sqsum, __global const uint *tilted, int stride, MODEL_ARGS,
               __global uchar *codes)
{
  const int gid = get_global_id (0);
  if (gid >= nwindows)
    return;
  int ix, iy;
  const int8 L = levels[locate (levels, nlevels, gid, &ix, &iy)];
  const size_t ofs = (size_t) (L.s1 + iy * L.s6) * stride + L.s0 + ix * L.s6;
  float vnf;
  if (!window_norm (sum + ofs, sqsum + ofs, stride, &vnf)) {
    codes[gid] = CODE_INVALID;
    return;
  }
  codes[gid] = stage_passes_g (sum + ofs, tilted + ofs, stride, vnf, 0, MODEL_PASS) ? CODE_PASS0 : CODE_REJECT0;
}

#if defined(TILE_W) && defined(TILE_H)
#define TILE 16
#ifndef COMPACT_EVERY
#define COMPACT_EVERY 1
#endif
/* tile_map: level | tx << 10 | ty << 21, one entry per work-group. */
/* Stages [1, deep_from) run here; windows surviving them are hits when
 * deep_from == nstages, else they go to `deep` for cascade_deep. */
__kernel __attribute__ ((reqd_work_group_size (TILE * TILE, 1, 1))) void
cascade_tiles (__global const int8 *levels, __global const int *tile_map, __global const uint *sum,
               __global const uint *sqsum, __global const uint *tilted, int stride, MODEL_ARGS,
               __global const uchar *codes, int deep_from, __global uint *deep, __global uint *counters,
               __global uint *hits, uint hit_capacity)
{
  __local uint tsum[TILE_W * TILE_H];
#ifdef HAVE_TILTED
  __local uint ttilt[TILE_W * TILE_H];
#else
#define ttilt tsum
#endif
  __local short list[2][TILE * TILE];
  __local float lvnf[TILE * TILE];
  __local int count[2];

  const int lid = get_local_id (0);
  const int m = tile_map[get_group_id (0)];
  const int8 L = levels[m & 1023];
  const int tx = (m >> 10) & 2047, ty = (m >> 21) & 2047;
  const int s = L.s6;
  const int wx = lid % TILE, wy = lid / TILE;
  const int ix = tx * TILE + wx, iy = ty * TILE + wy;

  __local uchar evaluated[TILE * TILE];
  if (lid == 0)
    count[0] = 0;
  /* Which windows of each tile row OpenCV evaluates: one lane per row finds
   * the run of stage-0 rejections ending at the tile's left edge (a window is
   * evaluated iff that run has even length), then follows the row, a
   * stage-0 rejection making it skip the next window. */
  if (lid < TILE) {
    const int row = ty * TILE + lid, x0 = tx * TILE;
    if (row < L.s5) {
      __global const uchar *rc = codes + L.s7 + row * L.s4;
      int run = 0;
      while (run < x0 && rc[x0 - run - 1] == CODE_REJECT0)
        run++;
      int e = !(run & 1);
      for (int k = 0; k < TILE; k++) {
        const int x = x0 + k;
        const uchar code = x < L.s4 ? rc[x] : CODE_INVALID;
        evaluated[lid * TILE + k] = (uchar) e;
        e = !(e && code == CODE_REJECT0);
      }
    }
  }
  barrier (CLK_LOCAL_MEM_FENCE);
  /* The windows OpenCV evaluates and that pass stage 0 go on. */
  if (ix < L.s4 && iy < L.s5) {
    const int gid = L.s7 + iy * L.s4 + ix;
    if (codes[gid] == CODE_PASS0 && evaluated[lid]) {
      const size_t ofs = (size_t) (L.s1 + iy * s) * stride + L.s0 + ix * s;
      float vnf;
      window_norm (sum + ofs, sqsum + ofs, stride, &vnf);
      lvnf[lid] = vnf;
      list[0][atomic_add (&count[0], 1)] = (short) lid;
    }
  }
  barrier (CLK_LOCAL_MEM_FENCE);
  int n = count[0];
  /* No early return here: every work-item reaches every barrier, even in tiles
   * without live windows (some implementations mishandle a return before a
   * barrier, uniform or not). */

  /* The integral tile under these windows (zeros past the level's edge). */
  const int ox = tx * TILE * s, oy = ty * TILE * s;
  const size_t origin = (size_t) (L.s1 + oy) * stride + L.s0 + ox;
  /* only the part the windows reach: 15 steps plus a window (smaller at step 1) */
  const int rw = (TILE - 1) * s + WIN_W + 1, rh = (TILE - 1) * s + WIN_H + 1;
  for (int i = lid; n > 0 && i < rw * rh; i += TILE * TILE) {
    const int r = i / rw, c = i - r * rw;
    const int inside = ox + c <= L.s2 && oy + r <= L.s3;
    tsum[r * TILE_W + c] = inside ? sum[origin + (size_t) r * stride + c] : 0u;
#ifdef HAVE_TILTED
    ttilt[r * TILE_W + c] = inside ? tilted[origin + (size_t) r * stride + c] : 0u;
#endif
  }
  barrier (CLK_LOCAL_MEM_FENCE);

  /* Stages in groups of COMPACT_EVERY: each lane takes a live window through
   * a group (stopping at its first failing stage), then the survivors are
   * compacted so that the next group starts on dense lanes. */
  int cur = 0;
  for (int si = 1; si < deep_from && n > 0; si += COMPACT_EVERY) {
    if (lid == 0)
      count[cur ^ 1] = 0;
    barrier (CLK_LOCAL_MEM_FENCE);
    if (lid < n) {
      const int w = list[cur][lid];
      const int o = (w / TILE) * s * TILE_W + (w % TILE) * s;
      const int end = min (si + COMPACT_EVERY, deep_from);
      int k = si;
      while (k < end && stage_passes_l (tsum + o, ttilt + o, TILE_W, lvnf[w], k, MODEL_PASS_TILE))
        k++;
      if (k == end)
        list[cur ^ 1][atomic_add (&count[cur ^ 1], 1)] = (short) w;
    }
    barrier (CLK_LOCAL_MEM_FENCE);
    n = count[cur ^ 1];
    cur ^= 1;
  }
  if (lid < n) {
    const int w = list[cur][lid];
    const uint gid = L.s7 + (ty * TILE + w / TILE) * L.s4 + tx * TILE + w % TILE;
    if (deep_from < nstages) {
      deep[atomic_inc (&counters[0])] = gid;
    } else {
      const uint slot = atomic_inc (&hits[0]);
      if (slot < hit_capacity)
        hits[1 + slot] = gid;
    }
  }
}
#endif

#define DEEP_LANES 32
#define DEEP_WINDOWS 8
/* The long stages, for the few windows that reach them: 32 lanes per window,
 * 8 windows per work-group (grid-stride over the list); the lanes share each
 * stage's trees and a local reduction sums them.  With fp64 the sum of float
 * leaves is exact in any order, so the answer is OpenCV's sequential one. */
__kernel __attribute__ ((reqd_work_group_size (DEEP_LANES * DEEP_WINDOWS, 1, 1))) void
cascade_deep (__global const int8 *levels, int nlevels, __global const uint *sum, __global const uint *sqsum,
              __global const uint *tilted, int stride, MODEL_ARGS, int deep_from, __global const uint *deep,
              __global const uint *counters, __global uint *hits, uint hit_capacity)
{
  __local acc_t part[DEEP_LANES * DEEP_WINDOWS];
  __local int alive[DEEP_WINDOWS];
  const int lid = get_local_id (0);
  const int lane = lid % DEEP_LANES, slot = lid / DEEP_LANES;
  const uint n = counters[0];
  for (uint base = get_group_id (0) * DEEP_WINDOWS; base < n; base += get_num_groups (0) * DEEP_WINDOWS) {
    const uint c = base + slot;
    int gid = 0;
    size_t ofs = 0;
    float vnf = 1.0f;
    if (c < n) {
      gid = deep[c];
      int ix, iy;
      const int8 L = levels[locate (levels, nlevels, gid, &ix, &iy)];
      ofs = (size_t) (L.s1 + iy * L.s6) * stride + L.s0 + ix * L.s6;
      window_norm (sum + ofs, sqsum + ofs, stride, &vnf);
    }
    if (lane == 0)
      alive[slot] = c < n;
    barrier (CLK_LOCAL_MEM_FENCE);
    /* no break out of a loop with barriers: the loop condition ends it */
    int any = 1;
    for (int si = deep_from; si < nstages && any; si++) {
      const stage_t st = stages[si];
      acc_t acc = 0;
      if (alive[slot])
        for (int t = lane; t < st.ntrees; t += DEEP_LANES)
          acc += (acc_t) tree_value_g (sum + ofs, tilted + ofs, stride, vnf, trees[st.first_tree + t], nodes, leaves,
                                       features, fofs, subsets);
      part[lid] = acc;
      barrier (CLK_LOCAL_MEM_FENCE);
      for (int off = DEEP_LANES / 2; off > 0; off >>= 1) {
        if (lane < off)
          part[lid] += part[lid + off];
        barrier (CLK_LOCAL_MEM_FENCE);
      }
      if (lane == 0 && alive[slot] && part[lid] < (acc_t) st.threshold)
        alive[slot] = 0;
      barrier (CLK_LOCAL_MEM_FENCE);
      any = 0;
      for (int j = 0; j < DEEP_WINDOWS; j++)
        any |= alive[j];
    }
    if (lane == 0 && alive[slot]) {
      const uint h = atomic_inc (&hits[0]);
      if (h < hit_capacity)
        hits[1 + h] = gid;
    }
    barrier (CLK_LOCAL_MEM_FENCE);
  }
}

/* CPU schedule: OpenCV's loop over one row of windows.  wrow_map: level | iy << 10. */
__kernel void
cascade_rows (__global const int8 *levels, __global const int *wrow_map, int nrows, __global const uint *sum,
              __global const uint *sqsum, __global const uint *tilted, int stride, MODEL_ARGS,
              __global uint *hits, uint hit_capacity)
{
  const int gid = get_global_id (0);
  if (gid >= nrows)
    return;
  const int m = wrow_map[gid];
  const int8 L = levels[m & 1023];
  const int iy = m >> 10, s = L.s6;
  const size_t row = (size_t) (L.s1 + iy * s) * stride + L.s0;
  int skip = 0;
  for (int ix = 0; ix < L.s4; ix++) {
    if (skip) {
      skip = 0;
      continue;
    }
    const size_t ofs = row + ix * s;
    float vnf;
    if (!window_norm (sum + ofs, sqsum + ofs, stride, &vnf))
      continue;
    if (!stage_passes_g (sum + ofs, tilted + ofs, stride, vnf, 0, MODEL_PASS)) {
      skip = 1;
      continue;
    }
    int si = 1;
    for (; si < nstages; si++)
      if (!stage_passes_g (sum + ofs, tilted + ofs, stride, vnf, si, MODEL_PASS))
        break;
    if (si == nstages) {
      const uint slot = atomic_inc (&hits[0]);
      if (slot < hit_capacity)
        hits[1 + slot] = L.s7 + iy * L.s4 + ix;
    }
  }
}
