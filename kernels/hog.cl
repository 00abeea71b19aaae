/* Felzenszwalb's 31-dimensional HOG (FHOG) exactly as dlib computes it
 * (dlib/image_transforms/fhog.h, extract_fhog_features with 8-pixel cells),
 * over dlib's pyramid_down<N> image pyramid (image_pyramid.h, interpolation.h:
 * resize_image of 8-bit grey images), and linear filters correlated with it
 * (scan_fhog_pyramid's detection).
 *
 * Every value is computed with the operations dlib's x86-64 build performs,
 * in the same order (SSE2 lanes included): the host gives the resampling
 * tables (gst/detect/families/hogfilter/fhog.cpp), FP_CONTRACT is off (no fused
 * multiply-adds), and the host adds -cl-fp32-correctly-rounded-divide-sqrt
 * where the device offers it.
 *
 * Level descriptors, int16 (fhog.h: FhogLevel):
 *   s0: width, height, pixel offset, cells down, cells across, cell offset,
 *       visible rows, visible columns (dlib's visible_nr, visible_nc)
 *   s8: first column of dlib's scalar gradient loop, feature rows, feature
 *       columns (padded), feature offset, first cell item, first feature
 *       item, first window, windows across (positions x filters)
 * Build options: -D HOG_CELL=<cell size> -D HOG_FH=<filter rows>
 *   -D HOG_FW=<filter columns> -D HOG_PR=<row padding> -D HOG_PC=<column
 *   padding> -D HOG_NF=<filters> [-D HOG_FP64]; the filters over other
 *   features (hog_dt.cl): -D HOG_FILTER_DIMS=<feature planes> (default 31)
 *   [-D HOG_ACC_DOUBLE: each filter position's terms summed in float, the
 *   positions' sums in double, columns outer (as OpenCV's HOG sums a
 *   window's blocks)]
 */
#pragma OPENCL FP_CONTRACT OFF
#ifdef HOG_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define HOG_DIMS 31
#define HOG_CELL_FLOATS 20 /* 18 bins, the energy, one unused */
#ifndef HOG_FILTER_DIMS
#define HOG_FILTER_DIMS HOG_DIMS
#endif
#ifdef HOG_ACC_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double hog_acc_t;
#else
typedef float hog_acc_t;
#endif

/* The level of an item, from the levels' first items (component k of their
 * descriptors). */
inline int hog_level_of (__global const int16 *lv, int nlevels, int gid, int k)
{
  int l = 0;
  while (l + 1 < nlevels && ((__global const int *) (lv + l + 1))[k] <= gid)
    l++;
  return l;
}

/* The work-item's item of the levels' n items, gid, and its level's
 * descriptor d (FIND: hog_level_of or hog_dt.cl's dt_level_of, over
 * component k); the work-items past n return. */
#define HOG_ITEM(FIND, n, k)                                                                                     \
  const int gid = get_global_id (0);                                                                           \
  if (gid >= (n))                                                                                              \
    return;                                                                                                    \
  const int16 d = levels[FIND (levels, nlevels, gid, k)]

/* The work-item's entry r (a T whose x names a level) of a table of n
 * entries, and its level's descriptor d; the work-items past n return. */
#define HOG_ROW(T, r, table, n)                                                                                  \
  const int gid = get_global_id (0);                                                                           \
  if (gid >= (n))                                                                                              \
    return;                                                                                                    \
  const T r = (table)[gid];                                                                                    \
  const int16 d = levels[r.x]

/* --- the pyramid --- */

/* Level 0: the luma of the frame (grey planes as they are, 4-byte RGB with
 * OpenCV's BT.601 weights, pyramid.cl); resets the candidates. */
__kernel void
hog_luma (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, int width, int height,
          __global uchar *pix, __global uint *cand)
{
  const int gid = get_global_id (0);
  if (gid == 0)
    candidates_reset (cand);
  if (gid >= width * height)
    return;
  const int y = gid / width, x = gid - y * width;
  pix[gid] = (uchar) luma (src + (size_t) y * src_stride + (size_t) x * src_bpp, src_bpp, rgb);
}

#ifdef HOG_FP64
typedef double hog_tb_t;
#else
typedef float hog_tb_t;
#endif

/* One pixel of dlib's resize_image of an 8-bit grey image with bilinear
 * interpolation, from its source rows top and bot: ro and co below, tb the
 * row's fraction. */
inline uchar hog_down_at (__global const uchar *top, __global const uchar *bot, int4 ro, int4 co, hog_tb_t tb)
{
  const float tl = top[co.x], tr = top[co.y], bl = bot[co.x], br = bot[co.y];
  const float lr = as_float (co.z);
  if (co.w) {
    /* the 4-lane loop: float weights, ((tl + tr) + bl) + br, (T) (v + 0.5) */
    const float tbf = as_float (ro.z), itbf = as_float (ro.w), ilr = 1.0f - lr;
    const float v = (itbf * ilr) * tl + (itbf * lr) * tr + (tbf * ilr) * bl + (tbf * lr) * br;
    const float f = floor (v);
    return (uchar) min (f + (v - f >= 0.5f ? 1.0f : 0.0f), 255.0f);
  }
  /* the scalar tail: (1 - tb) * (...) + tb * (...) in double, to float,
   * truncated */
  const float a = (1.0f - lr) * tl + lr * tr, b = (1.0f - lr) * bl + lr * br;
#ifdef HOG_FP64
  const float v = (float) ((1.0 - tb) * (double) a + tb * (double) b);
#else
  const float v = (1.0f - tb) * a + tb * b;
#endif
  return (uchar) clamp (v, 0.0f, 255.0f);
}

/* One level from the one before: dlib's resize_image of an 8-bit grey image
 * with bilinear interpolation.  rows: per output row int4 (top, bottom,
 * bits of (float) tb, bits of (float) (1 - tb)), and tb itself (double, where
 * the device has it); cols: per output column int4 (left, right, bits of the
 * float fraction, 1 where dlib's 4-lane loop computes it, 0 for its scalar
 * tail). */
__kernel void
hog_down (__global uchar *pix, int src_off, int src_w, int dst_off, int dst_w, int dst_h,
          __global const int4 *rows, __global const hog_tb_t *rows_tb, __global const int4 *cols)
{
  const int gid = get_global_id (0);
  if (gid >= dst_w * dst_h)
    return;
  const int r = gid / dst_w, c = gid - r * dst_w;
  const int4 ro = rows[r];
  pix[dst_off + gid] = hog_down_at (pix + src_off + (size_t) ro.x * src_w, pix + src_off + (size_t) ro.y * src_w, ro,
                                    cols[c], rows_tb[r]);
}

/* CPU schedule of the same: a work-item per output row; dlib's 4-lane
 * columns 8 at a time in vectors, the same operations lane by lane, from
 * chunks (int16 per 8 columns: their left sources, then the bits of their
 * fractions; each chunk's sources within 16 bytes of its first, so that one
 * load and a shuffle give them all), the other columns one by one. */
__kernel void
hog_down_rows (__global uchar *pix, int src_off, int src_w, int dst_off, int dst_w, int dst_h,
               __global const int4 *rows, __global const hog_tb_t *rows_tb, __global const int4 *cols,
               __global const int16 *chunks, int nchunks)
{
  const int r = get_global_id (0);
  if (r >= dst_h)
    return;
  const int4 ro = rows[r];
  __global const uchar *top = pix + src_off + (size_t) ro.x * src_w;
  __global const uchar *bot = pix + src_off + (size_t) ro.y * src_w;
  __global uchar *out = pix + dst_off + (size_t) r * dst_w;
  const float tbf = as_float (ro.z), itbf = as_float (ro.w);
  for (int k = 0; k < nchunks; k++) {
    const int16 ch = chunks[k];
    const int base = ch.s0;
    const uchar8 rel = convert_uchar8 (ch.lo - base);
    const uchar16 t = vload16 (0, top + base), b = vload16 (0, bot + base);
    const float8 tl = convert_float8 (shuffle (t, rel)), tr = convert_float8 (shuffle (t, rel + (uchar8) 1));
    const float8 bl = convert_float8 (shuffle (b, rel)), br = convert_float8 (shuffle (b, rel + (uchar8) 1));
    const float8 lr = as_float8 (ch.hi), ilr = 1.0f - lr;
    const float8 v = (itbf * ilr) * tl + (itbf * lr) * tr + (tbf * ilr) * bl + (tbf * lr) * br;
    const float8 fl = floor (v);
    vstore8 (convert_uchar8 (min (fl + select ((float8) 0.0f, (float8) 1.0f, v - fl >= 0.5f), 255.0f)), k, out);
  }
  for (int c = nchunks * 8; c < dst_w; c++)
    out[c] = hog_down_at (top, bot, ro, cols[c], rows_tb[r]);
}

/* --- FHOG --- */

#define HOG_F(x) x##f
HOG_SNAP (hog_snap, float, int, float, HOG_F)
HOG_SNAP (hog_snap8, float8, int8, float, HOG_F)
HOG_ENERGY (hog_energy, float, __private)
HOG_ENERGY (hog_energy_global, float, __global)
HOG_SHARE (hog_share, float, HOG_F)

/* The gradient of level pixel (y, x) snapped to one of 18 orientations, and
 * its length. */
inline int hog_orientation (__global const uchar *p, int w, int y, int x, float *v)
{
  const int gx = (int) p[y * w + x + 1] - (int) p[y * w + x - 1];
  const int gy = (int) p[(y + 1) * w + x] - (int) p[(y - 1) * w + x];
  *v = sqrt ((float) (gx * gx + gy * gy));
  return hog_snap ((float) gx, (float) gy);
}

/* One work-item per pixel of every level: its gradient's orientation and
 * length, where dlib computes them (inside the visible rows and columns),
 * for hog_cells, whose every pixel votes into 4 cells. */
__kernel void
hog_gradients (__global const uchar *pix, __global const int16 *levels, int nlevels, int npixels,
               __global float *grad_len, __global uchar *grad_o)
{
  HOG_ITEM (hog_level_of, npixels, 2);
  const int i = gid - d.s2, y = i / d.s0, x = i - y * d.s0;
  if (y < 1 || x < 1 || y >= d.s6 || x >= d.s7)
    return;
  float v;
  grad_o[gid] = (uchar) hog_orientation (pix + d.s2, d.s0, y, x, &v);
  grad_len[gid] = v;
}

/* One work-item per cell of every level: its 18-bin histogram, each pixel's
 * bilinear vote added in dlib's order (the pixels in raster order), and its
 * energy (the sum over 9 orientations of the squared sum of both signs). */
__kernel void
hog_cells (__global const float *grad_len, __global const uchar *grad_o, __global const int16 *levels, int nlevels,
           int ncells, __global float *cells)
{
  HOG_ITEM (hog_level_of, ncells, 12);
  const int i = gid - d.sc, cy = i / d.s4, cx = i - cy * d.s4;
  __global const float *gl = grad_len + d.s2;
  __global const uchar *go = grad_o + d.s2;
  const int w = d.s0, vnr = d.s6, vnc = d.s7, simd_end = d.s8;
  float h[18];
  for (int k = 0; k < 18; k++)
    h[k] = 0.0f;
  const int y0 = max (1, HOG_CELL * cy - HOG_CELL / 2), y1 = min (vnr - 1, HOG_CELL * cy + HOG_CELL + HOG_CELL / 2 - 1);
  const int x0 = max (1, HOG_CELL * cx - HOG_CELL / 2), x1 = min (vnc - 1, HOG_CELL * cx + HOG_CELL + HOG_CELL / 2 - 1);
  for (int y = y0; y <= y1; y++) {
    int iyp;
    const float vy0 = hog_share (y, HOG_CELL, &iyp), vy = iyp == cy ? 1.0f - vy0 : vy0;
    for (int x = x0; x <= x1; x++) {
      int ixp;
      const float vx0 = hog_share (x, HOG_CELL, &ixp), vx = ixp == cx ? 1.0f - vx0 : vx0;
      const float v = gl[y * w + x];
      const int o = go[y * w + x];
      /* the 8-lane loop: vy * (vx * v); the scalar tail: (vy * vx) * v */
      h[o] += x < simd_end ? vy * (vx * v) : (vy * vx) * v;
    }
  }
  __global float *out = cells + (size_t) (d.s5 + i) * HOG_CELL_FLOATS;
  for (int k = 0; k < 18; k++)
    out[k] = h[k];
  out[18] = hog_energy (h);
}

/* hog_orientation for the 8 pixels of row y from column x on, lane by lane
 * (the same operations: the orientations, their lengths in *v). */
inline int8 hog_orientation8 (__global const uchar *p, int w, int y, int x, float8 *v)
{
  __global const uchar *r = p + (size_t) y * w + x;
  const int8 gx = convert_int8 (vload8 (0, r + 1)) - convert_int8 (vload8 (0, r - 1));
  const int8 gy = convert_int8 (vload8 (0, r + w)) - convert_int8 (vload8 (0, r - w));
  *v = sqrt (convert_float8 (gx * gx + gy * gy));
  return hog_snap8 (convert_float8 (gx), convert_float8 (gy));
}

/* One pixel's votes into the row's cells (h: the row's bins), as
 * hog_cells_rows adds them. */
inline void hog_vote (__global float *h, __global const uchar *p, int w, int nc, int simd_end, int y, int x, float vy)
{
  float v;
  const int o = hog_orientation (p, w, y, x, &v);
  int ixp;
  const float vx0 = hog_share (x, HOG_CELL, &ixp), vx1 = 1.0f - vx0;
  const int lanes = x < simd_end;
  if (ixp >= 0)
    h[ixp * HOG_CELL_FLOATS + o] += lanes ? vy * (vx1 * v) : (vy * vx1) * v;
  if (ixp + 1 < nc)
    h[(ixp + 1) * HOG_CELL_FLOATS + o] += lanes ? vy * (vx0 * v) : (vy * vx0) * v;
}

/* CPU schedule of hog_gradients and hog_cells in one: a work-item per band
 * of HOG_BAND rows of cells of a level (rows: int2 level, first cell row),
 * walking the pixels that vote into them in raster order as dlib does, each
 * pixel's votes added to the band's cells it votes into (its 2 rows of 2),
 * the bins in place in `cells`.  Gradients are computed 8 pixels at a time
 * (vectors) where the 8 vote into the same cells (columns 8 k + 4 to
 * 8 k + 11 for 8-pixel cells), then their votes are added one by one in the
 * pixels' order; the pixel rows at a band's edges are computed by both bands
 * they vote into. */
#ifndef HOG_BAND
#define HOG_BAND 8
#endif
__kernel void
hog_cells_rows (__global const uchar *pix, __global const int16 *levels, __global const int2 *rows, int nrows,
                __global float *cells)
{
  HOG_ROW (int2, r, rows, nrows);
  const int nc = d.s4, w = d.s0, vnr = d.s6, vnc = d.s7, simd_end = d.s8;
  const int c0 = r.y, c1 = min (r.y + HOG_BAND, d.s3);
  __global float *band = cells + ((size_t) d.s5 + (size_t) c0 * nc) * HOG_CELL_FLOATS;
  for (int i = 0; i < (c1 - c0) * nc * HOG_CELL_FLOATS; i++)
    band[i] = 0.0f;
  __global const uchar *p = pix + d.s2;
  const int y0 = max (1, HOG_CELL * c0 - HOG_CELL / 2);
  const int y1 = min (vnr - 1, HOG_CELL * (c1 - 1) + HOG_CELL + HOG_CELL / 2 - 1);
  /* the first column of the chunks: the first pixel of cell 0's right half */
  const int xc = HOG_CELL / 2;
  const int8 lane = (int8) (0, 1, 2, 3, 4, 5, 6, 7);
  for (int y = y0; y <= y1; y++) {
    int iyp;
    const float vy0 = hog_share (y, HOG_CELL, &iyp), vy1 = 1.0f - vy0;
    /* the cell rows it votes into: iyp (weight vy1) and iyp + 1 (vy0), where
     * they are the band's */
    const int top = iyp >= c0, bottom = iyp + 1 < c1;
    __global float *ht = band + (size_t) (iyp - c0) * nc * HOG_CELL_FLOATS;
    __global float *hb = ht + (size_t) nc * HOG_CELL_FLOATS;
    int x = 1;
    for (; x < min (xc, vnc); x++) {
      if (top)
        hog_vote (ht, p, w, nc, simd_end, y, x, vy1);
      if (bottom)
        hog_vote (hb, p, w, nc, simd_end, y, x, vy0);
    }
#if HOG_CELL == 8
    for (; x + 8 <= vnc; x += 8) {
      float8 v;
      const int8 o = hog_orientation8 (p, w, y, x, &v);
      const int8 xs = x + lane;
      const float8 xp = (convert_float8 (xs) + 0.5f) / (float) HOG_CELL - 0.5f;
      const int ixp = (x - xc) / HOG_CELL;
      const float8 vx0 = xp - (float) ixp, vx1 = 1.0f - vx0;
      const int8 lanes = xs < simd_end;
      int ov[8];
      vstore8 (o, 0, ov);
      const int right = ixp + 1 < nc;
      for (int k = 0; k < 2; k++) {
        if (!(k ? bottom : top))
          continue;
        const float vy = k ? vy0 : vy1;
        const float8 a = select ((vy * vx1) * v, vy * (vx1 * v), lanes);
        const float8 b = select ((vy * vx0) * v, vy * (vx0 * v), lanes);
        float av[8], bv[8];
        vstore8 (a, 0, av);
        vstore8 (b, 0, bv);
        __global float *h0 = (k ? hb : ht) + ixp * HOG_CELL_FLOATS, *h1 = h0 + HOG_CELL_FLOATS;
        if (right) {
          for (int j = 0; j < 8; j++) {
            h0[ov[j]] += av[j];
            h1[ov[j]] += bv[j];
          }
        } else {
          for (int j = 0; j < 8; j++)
            h0[ov[j]] += av[j];
        }
      }
    }
#endif
    for (; x < vnc; x++) {
      if (top)
        hog_vote (ht, p, w, nc, simd_end, y, x, vy1);
      if (bottom)
        hog_vote (hb, p, w, nc, simd_end, y, x, vy0);
    }
  }
  for (int c = 0; c < (c1 - c0) * nc; c++) {
    __global float *b = band + c * HOG_CELL_FLOATS;
    b[18] = hog_energy_global (b);
  }
}

/* SSE2's horizontal sum, as dlib's sum (simd4f): (a0 + a2) + (a1 + a3). */
inline float hog_sum4 (float4 a) { return (a.x + a.z) + (a.y + a.w); }

/* One work-item per feature position of every level (the padded planes):
 * the 31 features, or zeros in the padding. */
__kernel void
hog_features (__global const int16 *levels, int nlevels, int nitems, __global const float *cells,
              __global float *feats, int plane)
{
  HOG_ITEM (hog_level_of, nitems, 13);
  const int i = gid - d.sd, fy = i / d.sa, fx = i - fy * d.sa;
  __global float *out = feats + d.sb + i;
  const int y = fy - (HOG_PR - 1) / 2, x = fx - (HOG_PC - 1) / 2;
  const int hog_nr = d.s3 - 2, hog_nc = d.s4 - 2;
  if (y < 0 || x < 0 || y >= hog_nr || x >= hog_nc) {
    for (int k = 0; k < HOG_DIMS; k++)
      out[(size_t) k * plane] = 0.0f;
    return;
  }
  __global const float *c = cells + (size_t) d.s5 * HOG_CELL_FLOATS;
  const int nc = d.s4;
#define N(r, q) c[((size_t) (r) * nc + (q)) * HOG_CELL_FLOATS + 18]
  const float4 z1 = (float4) (N (y + 1, x + 1), N (y, x + 1), N (y + 1, x), N (y, x));
  const float4 z2 = (float4) (N (y + 1, x + 2), N (y, x + 2), N (y + 1, x + 1), N (y, x + 1));
  const float4 z3 = (float4) (N (y + 2, x + 1), N (y + 1, x + 1), N (y + 2, x), N (y + 1, x));
  const float4 z4 = (float4) (N (y + 2, x + 2), N (y + 1, x + 2), N (y + 2, x + 1), N (y + 1, x + 1));
#undef N
  const float4 nn = 0.2f * sqrt (z1 + z2 + z3 + z4 + 0.0001f);
  const float4 n = 0.1f / nn;
  __global const float *h = c + ((size_t) (y + 1) * nc + (x + 1)) * HOG_CELL_FLOATS;
  float4 t = 0.0f;
  for (int o = 0; o < 18; o += 3) {
    const float4 h0 = fmin ((float4) h[o], nn) * n;
    const float4 h1 = fmin ((float4) h[o + 1], nn) * n;
    const float4 h2 = fmin ((float4) h[o + 2], nn) * n;
    out[(size_t) o * plane] = hog_sum4 (h0);
    out[(size_t) (o + 1) * plane] = hog_sum4 (h1);
    out[(size_t) (o + 2) * plane] = hog_sum4 (h2);
    t += h0 + h1 + h2;
  }
  t *= 0.4714f;
  for (int o = 0; o < 9; o++) {
    const float4 h0 = fmin ((float4) (h[o] + h[o + 9]), nn) * n;
    out[(size_t) (o + 18) * plane] = hog_sum4 (h0);
  }
  out[(size_t) 27 * plane] = t.x;
  out[(size_t) 28 * plane] = t.y;
  out[(size_t) 29 * plane] = t.z;
  out[(size_t) 30 * plane] = t.w;
}

/* --- linear filters, direct correlation --- */

/* One work-item per window position of every level: every filter's
 * correlation with the features under it (dimension by dimension, row by
 * row; each feature read once for all filters: coef holds the filters'
 * coefficients interleaved, HOG_NF for each feature offset), a candidate
 * where it reaches the filter's threshold.  The window
 * index counts positions x filters (position * HOG_NF + filter).
 * HOG_COMPACT: work-groups of WGF lanes append each filter's candidates in
 * lane order through the shared compaction (compact.cl's wg_rank, one atomic
 * per work-group and filter); else one atomic per candidate. */
#ifdef HOG_COMPACT
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
#else
__kernel void
#endif
hog_filters (__global const int16 *levels, int nlevels, int nwindows, __global const float *feats, int plane,
             __global const float *coef, __global const float *thresholds, __global uint *cand, uint capacity)
{
  const int gid = get_global_id (0);
  const int live = gid < nwindows;
  const int l = live ? hog_level_of (levels, nlevels, gid, 14) : 0;
  const int16 d = levels[l];
  const int px = max (d.sf / HOG_NF, 1); /* positions across */
  const int i = gid - d.se, wy = i / px, wx = i - wy * px;
  __global const float *base = feats + d.sb + (live ? wy * d.sa + wx : 0);
#ifdef HOG_COMPACT
  __local int scratch[WGF];
  __local uint sbase;
  const int lid = get_local_id (0);
#endif
  hog_acc_t acc[HOG_NF];
  for (int f = 0; f < HOG_NF; f++)
    acc[f] = 0.0f;
  if (live) {
#ifdef HOG_ACC_DOUBLE
    /* position by position (columns outer), each position's terms summed in
     * float, the positions' sums in double */
    for (int n = 0; n < HOG_FW; n++)
      for (int m = 0; m < HOG_FH; m++) {
        float part[HOG_NF];
        for (int f = 0; f < HOG_NF; f++)
          part[f] = 0.0f;
        __global const float *q = base + m * d.sa + n;
        __global const float *k = coef + (m * HOG_FW + n) * HOG_NF;
        for (int dim = 0; dim < HOG_FILTER_DIMS; dim++) {
          const float x = q[(size_t) dim * plane];
          for (int f = 0; f < HOG_NF; f++)
            part[f] += k[f] * x;
          k += HOG_FH * HOG_FW * HOG_NF;
        }
        for (int f = 0; f < HOG_NF; f++)
          acc[f] += part[f];
      }
#else
    __global const float *k = coef;
    for (int dim = 0; dim < HOG_FILTER_DIMS; dim++) {
      __global const float *q = base + (size_t) dim * plane;
      for (int m = 0; m < HOG_FH; m++)
        for (int n = 0; n < HOG_FW; n++) {
          const float x = q[m * d.sa + n];
          for (int f = 0; f < HOG_NF; f++)
            acc[f] += k[f] * x;
          k += HOG_NF;
        }
    }
#endif
  }
  for (int f = 0; f < HOG_NF; f++) {
    const hog_acc_t s = acc[f];
    const int keep = live && s >= thresholds[f];
    const uint win = (uint) (d.se * HOG_NF + i * HOG_NF + f);
#ifdef HOG_COMPACT
    candidates_append (keep, win, (float) s, cand, capacity, scratch, &sbase, lid);
    barrier (CLK_LOCAL_MEM_FENCE);
#else
    if (keep)
      candidate_emit (cand, capacity, win, (float) s);
#endif
  }
}

/* CPU schedule of the same: a work-item per tile of up to HOG_TILE positions
 * of a row of a level (tiles: int4 level, row, first column, columns), the
 * positions side by side in the innermost loop, so that a compiler
 * vectorises it; each position and filter still adds its terms in the same
 * order as hog_filters, so the scores are the same to the bit. */
#ifndef HOG_TILE
#define HOG_TILE 64
#endif
__kernel void
hog_filters_rows (__global const int16 *levels, __global const int4 *tiles, int ntiles, __global const float *feats,
                  int plane, __global const float *coef, __global const float *thresholds, __global uint *cand,
                  uint capacity)
{
  HOG_ROW (int4, t, tiles, ntiles);
  const int cols = t.w;
  hog_acc_t acc[HOG_NF][HOG_TILE];
  for (int f = 0; f < HOG_NF; f++)
    for (int x = 0; x < HOG_TILE; x++)
      acc[f][x] = 0.0f;
  __global const float *base = feats + d.sb + t.y * d.sa + t.z;
#ifdef HOG_ACC_DOUBLE
  /* as hog_filters: each position's terms in float, their sums in double */
  for (int n = 0; n < HOG_FW; n++)
    for (int m = 0; m < HOG_FH; m++) {
      float part[HOG_NF][HOG_TILE];
      for (int f = 0; f < HOG_NF; f++)
        for (int x = 0; x < HOG_TILE; x++)
          part[f][x] = 0.0f;
      __global const float *row = base + m * d.sa + n;
      __global const float *k = coef + (m * HOG_FW + n) * HOG_NF;
      for (int dim = 0; dim < HOG_FILTER_DIMS; dim++) {
        __global const float *q = row + (size_t) dim * plane;
        for (int f = 0; f < HOG_NF; f++) {
          const float c = k[f];
          for (int x = 0; x < cols; x++)
            part[f][x] += c * q[x];
        }
        k += HOG_FH * HOG_FW * HOG_NF;
      }
      for (int f = 0; f < HOG_NF; f++)
        for (int x = 0; x < cols; x++)
          acc[f][x] += part[f][x];
    }
#else
  __global const float *k = coef;
  for (int dim = 0; dim < HOG_FILTER_DIMS; dim++) {
    __global const float *q = base + (size_t) dim * plane;
    for (int m = 0; m < HOG_FH; m++) {
      __global const float *row = q + m * d.sa;
      for (int n = 0; n < HOG_FW; n++) {
        for (int f = 0; f < HOG_NF; f++) {
          const float c = k[f];
          for (int x = 0; x < cols; x++)
            acc[f][x] += c * row[x + n];
        }
        k += HOG_NF;
      }
    }
  }
#endif
  const int px = max (d.sf / HOG_NF, 1);
  for (int x = 0; x < cols; x++)
    for (int f = 0; f < HOG_NF; f++)
      if (acc[f][x] >= thresholds[f])
        candidate_emit (cand, capacity, (uint) ((d.se + t.y * px + t.z + x) * HOG_NF + f), (float) acc[f][x]);
}
