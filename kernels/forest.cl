/* Random-forest cascade of pixel-difference trees
 * (gst/detect/families/forest/model.h) over a blurred, shrunk pyramid.
 *
 * Preprocessing, three launches over every level at once:
 *   forest_blur_frame  the frame's grey levels blurred with [a b a] / 16 both
 *                      ways (edges replicated), in units of 1 / (255 * 256);
 *                      work-item 0 also resets the counters and candidates
 *                      (a work-item per pixel; forest_blur_frame_rows on the
 *                      CPU schedule, a work-item per row);
 *   forest_shrink      every cell of every level: the level's M x M pixels,
 *                      each resampled from the blurred frame with OpenCV's
 *                      8-bit bilinear weights (rounded), summed;
 *   forest_blur_cells  each level's cells blurred again (edges of the level
 *                      replicated) into the atlas, units 1 / (255 * 65536).
 * All integer: the reference (model.cpp) gives the same values bit for bit.
 *
 * Evaluation.  A node is an int4: inner (offset 1, offset 2, threshold, left)
 * with the offsets of its two values from the window's origin in the atlas
 * and its threshold as an integer (left when the difference is below it, else
 * the node after the left one); leaf (score low, score high, 0, -1), its share
 * of the stage's average as a 64-bit fixed-point number (units of 2^-32).
 * Every stage's trees lie side by side (forest_stage_t.first).
 * GPU schedule:
 *   forest_first  a work-group per 256 windows of a level runs the stages up
 *                 to the first regroup stage, then appends the windows still
 *                 alive, compacted (window, origin, sum), to a list;
 *   forest_more   the same over a list, taken 256 items at a time by
 *                 persistent work-groups, up to the next regroup stage (one
 *                 launch per regroup stage).
 *   The last phase emits the windows whose sum reaches gamma.  Every lane of
 *   a work-group runs the same stages, so their nodes are read once per
 *   work-group into local memory, a chunk of whole stages at a time (chunks:
 *   int4 first stage, end stage, first node, nodes), rather than once per lane.
 * CPU schedule: forest_rows, a work-item per row of windows, each window
 *   through its stages in order, nodes read from global memory.
 *
 * Build options: -D FOREST_K (nodes a tree), -D FOREST_B0, -D FOREST_B1 (the
 * blur's outer and centre weights in 16ths), -D
 * FOREST_LANES (work-items a cell row in the preprocessing), -D
 * FOREST_LOCAL_NODES (GPU schedule: nodes a chunk holds; every lane reading
 * them from global memory instead was slower: docs/forest.md).
 */

#ifndef FOREST_LOCAL_NODES
#define FOREST_LOCAL_NODES 1024
#endif

typedef struct {
  int first;   /* its first node */
  int ntrees;
  long reject; /* rejected when the sum is below this (LONG_MIN: never) */
} forest_stage_t;

typedef struct {
  uint win;    /* window index (candidates.cl) */
  uint ofs;    /* the window's origin in the atlas */
  long sum;    /* the running sum */
} forest_item_t;
WORKLIST_LOAD (forest_item_load, forest_item_t)

/* --- preprocessing --- */

/* [B0 B1 B0] / 16 over three values: the blurs' one direction. */
#define FOREST_BLUR3(a, b, c) (FOREST_B0 * ((a) + (c)) + FOREST_B1 * (b))
/* Column x of the frame blurred down over source rows r0, r1, r2. */
#define FOREST_COL(x)                                                                                            \
  FOREST_BLUR3 (luma (r0 + (x) * src_bpp, src_bpp, rgb), luma (r1 + (x) * src_bpp, src_bpp, rgb),             \
                luma (r2 + (x) * src_bpp, src_bpp, rgb))

__kernel void
forest_blur_frame (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, int width, int height,
                   __global ushort *blurred, __global uint *counters, __global uint *cand)
{
  const int gid = get_global_id (0);
  if (gid == 0)
    frame_reset (counters, cand);
  if (gid >= width * height)
    return;
  const int y = gid / width, x = gid - y * width;
  const int xm = max (x - 1, 0), xp = min (x + 1, width - 1);
  __global const uchar *r0 = src + (size_t) max (y - 1, 0) * src_stride;
  __global const uchar *r1 = src + (size_t) y * src_stride;
  __global const uchar *r2 = src + (size_t) min (y + 1, height - 1) * src_stride;
  blurred[gid] = (ushort) FOREST_BLUR3 (FOREST_COL (xm), FOREST_COL (x), FOREST_COL (xp));
}

/* CPU schedule of the same: a work-item per row, each column's vertical sum
 * computed once and slid along the row (3 luma reads a pixel instead of 9). */
__kernel void
forest_blur_frame_rows (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, int width, int height,
                        __global ushort *blurred, __global uint *counters, __global uint *cand)
{
  const int y = get_global_id (0);
  if (y == 0)
    frame_reset (counters, cand);
  if (y >= height)
    return;
  __global const uchar *r0 = src + (size_t) max (y - 1, 0) * src_stride;
  __global const uchar *r1 = src + (size_t) y * src_stride;
  __global const uchar *r2 = src + (size_t) min (y + 1, height - 1) * src_stride;
  __global ushort *out = blurred + (size_t) y * width;
  uint vl = FOREST_COL (0), vc = vl;
  for (int x = 0; x < width; x++) {
    const uint vr = x + 1 < width ? FOREST_COL (x + 1) : vc;
    out[x] = (ushort) FOREST_BLUR3 (vl, vc, vr);
    vl = vc;
    vc = vr;
  }
}

/* Regions of the frame searched as images of their own (a second detector
 * inside the objects of a first): each blurred as forest_blur_frame blurs a
 * frame, its edges replicated, into its place in an image of the regions side
 * by side (`width` pixels a row).  Regions: int8 frame x, y, width, height,
 * image x, y; pixels of the image in no region are left as they are.  A
 * work-item per pixel of the image. */
__kernel void
forest_blur_regions (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, __global const int8 *regions,
                     int nregions, int width, int pixels, __global ushort *blurred, __global uint *counters,
                     __global uint *cand)
{
  const int gid = get_global_id (0);
  if (gid == 0)
    frame_reset (counters, cand);
  if (gid >= pixels)
    return;
  const int iy = gid / width, ix = gid - iy * width;
  for (int r = 0; r < nregions; r++) {
    const int8 R = regions[r];
    const int x = ix - R.s4, y = iy - R.s5;
    if (x < 0 || y < 0 || x >= R.s2 || y >= R.s3)
      continue;
    const int fx = R.s0 + x, x0 = R.s0, x1 = R.s0 + R.s2 - 1, y0 = R.s1, y1 = R.s1 + R.s3 - 1;
    const int xm = max (fx - 1, x0), xp = min (fx + 1, x1);
    __global const uchar *r0 = src + (size_t) max (R.s1 + y - 1, y0) * src_stride;
    __global const uchar *r1 = src + (size_t) (R.s1 + y) * src_stride;
    __global const uchar *r2 = src + (size_t) min (R.s1 + y + 1, y1) * src_stride;
    blurred[gid] = (ushort) FOREST_BLUR3 (FOREST_COL (xm), FOREST_COL (fx), FOREST_COL (xp));
    return;
  }
}

/* Level descriptors: int8 x0, y0 (the plane's origin in the atlas), cells
 * across, cells down, nx, ny (window grid), first_window, 0.  cell_rows: one
 * entry per cell row of every level, level | row << 10.  M: the shrink (a
 * cell is M x M level pixels). */
__kernel void
forest_shrink (__global const ushort *blurred, int width, __global const int8 *levels, __global const int *xtab,
               __global const int *ytab, __global const int *xfirst, __global const int *yfirst,
               __global const int *cell_rows, int nrows, int M, __global int *raw, int stride)
{
  const int gid = get_global_id (0);
  const int r = gid / FOREST_LANES, lane = gid - r * FOREST_LANES;
  if (r >= nrows)
    return;
  const int m = cell_rows[r];
  const int li = m & 1023, cy = m >> 10;
  const int8 L = levels[li];
  __global const int *xt = xtab + xfirst[li];
  __global const int *yt = ytab + yfirst[li] + cy * M;
  __global int *out = raw + (size_t) (L.s1 + cy) * stride + L.s0;
  for (int cx = lane; cx < L.s2; cx += FOREST_LANES) {
    uint s = 0;
    for (int dy = 0; dy < M; dy++) {
      const int ye = yt[dy];
      const uint cy1 = ye & 511, cy0 = 256u - cy1;
      __global const ushort *row0 = blurred + (size_t) (ye >> 9) * width;
      __global const ushort *row1 = cy1 ? row0 + width : row0;
      for (int dx = 0; dx < M; dx++) {
        const int xe = xt[cx * M + dx], sx = xe >> 9;
        const uint cx1 = xe & 511, cx0 = 256u - cx1;
        const uint h0 = row0[sx] * cx0 + (cx1 ? row0[sx + 1] * cx1 : 0u);
        const uint h1 = row1[sx] * cx0 + (cx1 ? row1[sx + 1] * cx1 : 0u);
        s += (h0 * cy0 + h1 * cy1 + 32768u) >> 16;
      }
    }
    out[cx] = (int) s;
  }
}

__kernel void
forest_blur_cells (__global const int8 *levels, __global const int *cell_rows, int nrows, __global const int *raw,
                   __global int *atlas, int stride)
{
  const int gid = get_global_id (0);
  const int r = gid / FOREST_LANES, lane = gid - r * FOREST_LANES;
  if (r >= nrows)
    return;
  const int m = cell_rows[r];
  const int cy = m >> 10;
  const int8 L = levels[m & 1023];
  const size_t base = (size_t) L.s1 * stride + L.s0;
  __global const int *rm = raw + base + (size_t) max (cy - 1, 0) * stride;
  __global const int *rc = raw + base + (size_t) cy * stride;
  __global const int *rp = raw + base + (size_t) min (cy + 1, L.s3 - 1) * stride;
  __global int *out = atlas + base + (size_t) cy * stride;
  for (int cx = lane; cx < L.s2; cx += FOREST_LANES) {
    const int xm = max (cx - 1, 0), xp = min (cx + 1, L.s2 - 1);
#define FOREST_H(p) FOREST_BLUR3 ((p)[xm], (p)[cx], (p)[xp])
    out[cx] = FOREST_BLUR3 (FOREST_H (rm), FOREST_H (rc), FOREST_H (rp));
#undef FOREST_H
  }
}

/* --- evaluation --- */

/* The leaf a window reaches in a tree, and the sum of a stage's trees, with
 * the nodes in global or local memory (no generic address space in 1.2). */
#define FOREST_STAGE_SUM(NAME, SPACE)                                                                            \
  inline long NAME (SPACE const int4 *tree, int ntrees, __global const int *p)                                 \
  {                                                                                                            \
    long s = 0;                                                                                                \
    for (int t = 0; t < ntrees; t++, tree += FOREST_K) {                                                       \
      int4 n = tree[0];                                                                                        \
      while (n.w >= 0)                                                                                         \
        n = tree[n.w + (p[n.x] - p[n.y] >= n.z)];                                                              \
      s += as_long ((int2) (n.x, n.y));                                                                        \
    }                                                                                                          \
    return s;                                                                                                  \
  }
FOREST_STAGE_SUM (forest_stage_global, __global)
FOREST_STAGE_SUM (forest_stage_local, __local)

inline float forest_score (long acc) { return convert_float (acc) * 0x1p-32f; }

/* The stages of chunks [c0, c1) for each lane's window (alive: not rejected
 * yet), the chunk's nodes in local memory.  Called by the whole work-group;
 * stops early once no lane is alive. */
inline void forest_chunks (int *alive, long *acc, __global const int *p, __global const int4 *nodes,
                           __global const forest_stage_t *stages, __global const int4 *chunks, int c0, int c1,
                           __local int4 *lnodes, __local int *any, int lid)
{
  for (int c = c0; c < c1; c++) {
    const int4 ch = chunks[c];
    if (lid == 0)
      *any = 0;
    barrier (CLK_LOCAL_MEM_FENCE);
    if (*alive)
      *any = 1;
    for (int k = lid; k < ch.w; k += WGF)
      lnodes[k] = nodes[ch.z + k];
    barrier (CLK_LOCAL_MEM_FENCE);
    if (!*any)
      break; /* the same for every lane */
    if (*alive)
      for (int st = ch.x; st < ch.y; st++) {
        const forest_stage_t S = stages[st];
        *acc += forest_stage_local (lnodes + (S.first - ch.z), S.ntrees, p);
        if (*acc < S.reject) {
          *alive = 0;
          break;
        }
      }
    barrier (CLK_LOCAL_MEM_FENCE); /* lnodes and *any are rewritten next */
  }
}

/* The end of a phase: the last one emits the windows whose sum reaches gamma;
 * the others append the alive ones to `out` in lane order (what does not fit
 * is counted in the candidates' lost counter).  Called by the whole
 * work-group. */
inline void forest_settle (int alive, uint win, uint ofs, long acc, int last, long gamma, __global forest_item_t *out,
                           int out_at, uint out_cap, __global uint *counters, __global uint *cand, uint cand_cap,
                           __local int *scratch, __local uint *sbase, int lid)
{
  if (last) {
    if (alive && acc >= gamma)
      candidate_emit (cand, cand_cap, win, forest_score (acc));
    return;
  }
  int total;
  const int rank = wg_rank (alive, lid, scratch, &total);
  const uint at = worklist_reserve (total, &counters[out_at], out_cap, cand, sbase, lid) + (uint) rank;
  if (alive && at < out_cap) {
    forest_item_t it = {win, ofs, acc};
    out[at] = it;
  }
  barrier (CLK_LOCAL_MEM_FENCE);
}

#define FOREST_MODEL __global const int4 *nodes, __global const forest_stage_t *stages, __global const int4 *chunks
#define FOREST_MODEL_PASS nodes, stages, chunks

/* segs: one int2 per work-group, (level, first window of the level): one
 * launch over every level (a launch a level was slower: docs/forest.md). */
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
forest_first (__global const int8 *levels, __global const int2 *segs, __global const int *atlas, int stride,
              FOREST_MODEL, int c0, int c1, int last, long gamma, __global forest_item_t *out, int out_at,
              uint out_cap, __global uint *counters, __global uint *cand, uint cand_cap)
{
  __local int4 lnodes[FOREST_LOCAL_NODES];
  __local int scratch[WGF];
  __local uint sbase;
  __local int any;
  const int lid = get_local_id (0);
  int8 L;
  int alive, ix, iy;
  const int i = segment_window (levels, segs, lid, &L, &alive, &ix, &iy);
  const uint ofs = (uint) ((L.s1 + iy) * stride + L.s0 + ix);
  long acc = 0;
  forest_chunks (&alive, &acc, atlas + ofs, FOREST_MODEL_PASS, c0, c1, lnodes, &any, lid);
  forest_settle (alive, (uint) (L.s6 + i), ofs, acc, last, gamma, out, out_at, out_cap, counters, cand, cand_cap,
                 scratch, &sbase, lid);
}

/* One further phase over the list `in` (its count at counters[in_at], its
 * chunks of 256 handed out through counters[in_at + 1], at most in_cap
 * stored). */
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
forest_more (__global const int *atlas, FOREST_MODEL, int c0, int c1, int last, long gamma,
             __global const forest_item_t *in, int in_at, uint in_cap, __global forest_item_t *out, int out_at,
             uint out_cap, __global uint *counters, __global uint *cand, uint cand_cap)
{
  __local int4 lnodes[FOREST_LOCAL_NODES];
  __local int scratch[WGF];
  __local uint sbase, lbase;
  __local int any;
  const int lid = get_local_id (0);
  const uint n = min (counters[in_at], in_cap); /* past the capacity nothing was stored */
  for (uint base; (base = worklist_take (&counters[in_at + 1], WGF, &lbase, lid)) < n;) {
    int alive;
    const forest_item_t it = forest_item_load (in, base, n, lid, &alive);
    long acc = it.sum;
    forest_chunks (&alive, &acc, atlas + it.ofs, FOREST_MODEL_PASS, c0, c1, lnodes, &any, lid);
    forest_settle (alive, it.win, it.ofs, acc, last, gamma, out, out_at, out_cap, counters, cand, cand_cap, scratch,
                   &sbase, lid);
    barrier (CLK_LOCAL_MEM_FENCE); /* lbase is rewritten next */
  }
}

/* CPU schedule: the windows of one row of a level in order, each through its
 * stages (wrow_map: level | iy << 10). */
__kernel void
forest_rows (__global const int8 *levels, __global const int *wrow_map, int nrows, __global const int *atlas,
             int stride, __global const int4 *nodes, __global const forest_stage_t *stages, int nstages, long gamma,
             __global uint *cand, uint cand_cap)
{
  LEVEL_ENTRY (wrow_map, nrows, L, iy);
  __global const int *row = atlas + (size_t) (L.s1 + iy) * stride + L.s0;
  for (int ix = 0; ix < L.s4; ix++) {
    long acc = 0;
    int st = 0;
    for (; st < nstages; st++) {
      const forest_stage_t S = stages[st];
      acc += forest_stage_global (nodes + S.first, S.ntrees, row + ix);
      if (acc < S.reject)
        break;
    }
    if (st == nstages && acc >= gamma)
      candidate_emit (cand, cand_cap, (uint) (L.s6 + iy * L.s4 + ix), forest_score (acc));
  }
}
