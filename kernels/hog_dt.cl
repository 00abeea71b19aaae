/* Dalal and Triggs' HOG exactly as OpenCV's HOGDescriptor computes it
 * (objdetect hog.cpp, 4.6; gst/detect/families/hogfilter/dthog.h), over
 * OpenCV's pyramid for it: every level resampled from the frame
 * (INTER_LINEAR_EXACT, pyramid.cl's samples), its gradients, and the L2-Hys
 * normalised features of its blocks, laid out as hog.cl's filters read
 * feature planes: a plane per feature (bin b of cell c: feature 9 c + b), the
 * block positions of every level one after the other, row-major.
 *
 * FP_CONTRACT is off: every product is rounded where OpenCV's is.  OpenCV's
 * vectorised magnitude and arctangent (its AVX2 build) use fused
 * multiply-adds, written here as fma ().  Its divisions and square roots are
 * IEEE's: the host adds -cl-fp32-correctly-rounded-divide-sqrt where the
 * device offers it, else DT_DIV_DOUBLE computes them in double (rounded to
 * float once more: the same value).
 *
 * Level descriptors, int16 (dthog.h: DtDevice::geometry): s0 width, s1
 * height, s2 pixel offset, s3 xtab first, s4 ytab first, s5 first column of
 * OpenCV's scalar arctangent (the width where there is none), s9 blocks down,
 * sa blocks across, sb block offset (in a feature plane), sc first block
 * item, se first window, sf windows across.
 * Build options: -D DT_P1, DT_P3, DT_P5, DT_P7 (OpenCV's arctangent
 * coefficients, in degrees), -D DT_DEG (pi / 180), -D DT_ANGLE_SCALE (bins /
 * pi), -D DT_EPS ((float) DBL_EPSILON), as float literals; -D DT_GAMMA=<1: sqrt of the
 * grey levels, 0: the levels>; [-D DT_DIV_DOUBLE].
 */
#pragma OPENCL FP_CONTRACT OFF
#ifdef DT_DIV_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define DT_DIV(a, b) ((float) ((double) (a) / (double) (b)))
#define DT_SQRT(a) ((float) sqrt ((double) (a)))
#define DT_DIV8(a, b) convert_float8 (convert_double8 (a) / convert_double8 (b))
#define DT_SQRT8(a) convert_float8 (sqrt (convert_double8 (a)))
#else
#define DT_DIV(a, b) ((a) / (b))
#define DT_SQRT(a) sqrt (a)
#define DT_DIV8(a, b) ((a) / (b))
#define DT_SQRT8(a) sqrt (a)
#endif
/* OpenCV's lookup table of grey levels, sqrt ((float) v) with gamma
 * correction (DT_GAMMA=1), as 8 lanes (sqrt is IEEE's here too: the same
 * values as the table). */
#if DT_GAMMA
#define DT_LEVEL8(v) DT_SQRT8 (convert_float8 (v))
#else
#define DT_LEVEL8(v) convert_float8 (v)
#endif

#define DT_BINS 9
#define DT_NDIMS 36      /* 2 x 2 cells of 9 bins */
#define DT_BLOCK_PIXELS 256
#define DT_STRIDE 8      /* block stride and window stride, pixels */

/* The level of an item, from the levels' first items (component k of their
 * descriptors, increasing): a binary search (a 1080p frame has 44 levels). */
inline int dt_level_of (__global const int16 *lv, int nlevels, int gid, int k)
{
  int lo = 0, hi = nlevels - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (((__global const int *) (lv + mid))[k] <= gid)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* --- the levels --- */

/* One work-item per pixel of every level: OpenCV's bit-exact bilinear
 * sample of the frame (its luma) at the level's scale; resets the frame's
 * candidates. */
__kernel void
dt_resample (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, int src_w,
             __global const int16 *levels, int nlevels, int npixels, __global const int *xtab,
             __global const int *ytab, __global uchar *pix, __global uint *cand)
{
  const int gid = get_global_id (0);
  if (gid == 0)
    candidates_reset (cand);
  if (gid >= npixels)
    return;
  const int l = dt_level_of (levels, nlevels, gid, 2);
  const int16 d = levels[l];
  const int i = gid - d.s2, y = i / d.s0, x = i - y * d.s0;
  const int ye = ytab[d.s4 + y];
  const uint cy1 = ye & 511, cy0 = 256u - cy1;
  __global const uchar *r0 = src + (size_t) (ye >> 9) * src_stride;
  pix[gid] = (uchar) resample (r0, cy1 ? r0 + src_stride : r0, src_w - 1, src_bpp, rgb, xtab[d.s3 + x], cy0, cy1);
}

/* CPU schedule of the same: a work-item per row of a level (rows: int2
 * level, row); grey frames 8 pixels at a time in vector lanes (the same
 * integers: a neighbour of weight 0 adds 0). */
__kernel void
dt_resample_rows (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, int src_w,
                  __global const int16 *levels, __global const int2 *rows, int nrows, __global const int *xtab,
                  __global const int *ytab, __global uchar *pix, __global uint *cand)
{
  const int gid = get_global_id (0);
  if (gid == 0)
    candidates_reset (cand);
  if (gid >= nrows)
    return;
  const int2 r = rows[gid];
  const int16 d = levels[r.x];
  const int ye = ytab[d.s4 + r.y];
  const uint cy1 = ye & 511, cy0 = 256u - cy1;
  __global const uchar *r0 = src + (size_t) (ye >> 9) * src_stride;
  __global const uchar *r1 = cy1 ? r0 + src_stride : r0;
  __global const int *xt = xtab + d.s3;
  __global uchar *out = pix + d.s2 + (size_t) r.y * d.s0;
  int x = 0;
  if (src_bpp == 1) {
    for (; x + 8 <= d.s0; x += 8) {
      const int8 xe = vload8 (0, xt + x);
      const int8 sx = xe >> 9, sx1 = min (sx + 1, (int8) (src_w - 1));
      const uint8 cx1 = convert_uint8 (xe & 511), cx0 = (uint8) 256u - cx1;
      const uint8 a = (uint8) (r0[sx.s0], r0[sx.s1], r0[sx.s2], r0[sx.s3], r0[sx.s4], r0[sx.s5], r0[sx.s6], r0[sx.s7]);
      const uint8 b = (uint8) (r0[sx1.s0], r0[sx1.s1], r0[sx1.s2], r0[sx1.s3], r0[sx1.s4], r0[sx1.s5], r0[sx1.s6],
                               r0[sx1.s7]);
      const uint8 c = (uint8) (r1[sx.s0], r1[sx.s1], r1[sx.s2], r1[sx.s3], r1[sx.s4], r1[sx.s5], r1[sx.s6], r1[sx.s7]);
      const uint8 e = (uint8) (r1[sx1.s0], r1[sx1.s1], r1[sx1.s2], r1[sx1.s3], r1[sx1.s4], r1[sx1.s5], r1[sx1.s6],
                               r1[sx1.s7]);
      const uint8 h0 = a * cx0 + b * cx1, h1 = c * cx0 + e * cx1;
      vstore8 (convert_uchar8 ((h0 * cy0 + h1 * cy1 + 32768u) >> 16), 0, out + x);
    }
  }
  for (; x < d.s0; x++)
    out[x] = (uchar) resample_rows (r0, r1, src_bpp, rgb, xt[x], cy0, cy1);
}

/* --- gradients --- */

/* Pixel (y, x) of a level of w x h pixels: its [-1, 0, 1] differences of
 * lut (grey) with the level mirrored at its edges (BORDER_REFLECT_101), the
 * length and fastAtan2 angle of cartToPolar (the vectorised one; `tail`:
 * the scalar one, which computes 90 - p (c) c as one fused operation), and
 * the length's parts for the two nearest bins (computeGradient). */
inline void dt_gradient (__global const uchar *p, int w, int h, int y, int x, int tail, __global const float *lut,
                         float2 *g, uchar2 *b)
{
  const int xl = x > 0 ? x - 1 : 1, xr = x < w - 1 ? x + 1 : w - 2;
  const int yu = y > 0 ? y - 1 : 1, yd = y < h - 1 ? y + 1 : h - 2;
  const float dx = lut[p[y * w + xr]] - lut[p[y * w + xl]];
  const float dy = lut[p[yd * w + x]] - lut[p[yu * w + x]];
  const float mag = DT_SQRT (fma (dx, dx, dy * dy));
  const float ax = fabs (dx), ay = fabs (dy);
  const float c = DT_DIV (fmin (ax, ay), fmax (ax, ay) + DT_EPS);
  const float cc = c * c;
  const float q = fma (fma (fma (cc, DT_P7, DT_P5), cc, DT_P3), cc, DT_P1);
  float a = q * c;
  if (ax < ay)
    a = tail ? fma (-q, c, 90.0f) : 90.0f - a;
  if (dx < 0.0f)
    a = 180.0f - a;
  if (dy < 0.0f)
    a = 360.0f - a;
  float angle = (a * DT_DEG) * DT_ANGLE_SCALE - 0.5f;
  int hidx = (int) floor (angle);
  angle -= (float) hidx;
  *g = (float2) (mag * (1.0f - angle), mag * angle);
  if (hidx < 0)
    hidx += DT_BINS;
  else if (hidx >= DT_BINS)
    hidx -= DT_BINS;
  const int h1 = hidx + 1 < DT_BINS ? hidx + 1 : 0;
  *b = (uchar2) ((uchar) hidx, (uchar) h1);
}

/* One work-item per pixel of every level. */
__kernel void
dt_gradients (__global const uchar *pix, __global const int16 *levels, int nlevels, int npixels,
              __global const float *lut, __global float2 *grad, __global uchar2 *bins)
{
  HOG_ITEM (dt_level_of, npixels, 2);
  const int i = gid - d.s2, y = i / d.s0, x = i - y * d.s0;
  float2 g;
  uchar2 b;
  dt_gradient (pix + d.s2, d.s0, d.s1, y, x, x >= d.s5, lut, &g, &b);
  grad[gid] = g;
  bins[gid] = b;
}

/* CPU schedule of the same: a work-item per row of a level (rows: int2
 * level, row), the pixels inside the row's ends 8 at a time in vector lanes
 * (the same operations lane by lane). */
__kernel void
dt_gradients_rows (__global const uchar *pix, __global const int16 *levels, __global const int2 *rows, int nrows,
                   __global const float *lut, __global float2 *grad, __global uchar2 *bins)
{
  HOG_ROW (int2, r, rows, nrows);
  const int w = d.s0, h = d.s1, y = r.y;
  __global const uchar *p = pix + d.s2;
  __global const uchar *row = p + (size_t) y * w;
  __global const uchar *up = p + (size_t) (y > 0 ? y - 1 : 1) * w;
  __global const uchar *dn = p + (size_t) (y < h - 1 ? y + 1 : h - 2) * w;
  __global float2 *go = grad + d.s2 + (size_t) y * w;
  __global uchar2 *bo = bins + d.s2 + (size_t) y * w;
  float2 g;
  uchar2 b;
  dt_gradient (p, w, h, y, 0, 0 >= d.s5, lut, &g, &b);
  go[0] = g;
  bo[0] = b;
  int x = 1;
  for (; x + 8 <= w - 1; x += 8) {
    const float8 dx = DT_LEVEL8 (vload8 (0, row + x + 1)) - DT_LEVEL8 (vload8 (0, row + x - 1));
    const float8 dy = DT_LEVEL8 (vload8 (0, dn + x)) - DT_LEVEL8 (vload8 (0, up + x));
    const float8 mag = DT_SQRT8 (fma (dx, dx, dy * dy));
    const float8 ax = fabs (dx), ay = fabs (dy);
    const float8 c = DT_DIV8 (fmin (ax, ay), fmax (ax, ay) + DT_EPS);
    const float8 cc = c * c;
    const float8 q = fma (fma (fma (cc, (float8) DT_P7, (float8) DT_P5), cc, (float8) DT_P3), cc, (float8) DT_P1);
    float8 a = q * c;
    const int8 tail = (int8) (x) + (int8) (0, 1, 2, 3, 4, 5, 6, 7) >= (int8) (d.s5);
    a = select (a, select (90.0f - a, fma (-q, c, (float8) 90.0f), tail), ax < ay);
    a = select (a, 180.0f - a, dx < 0.0f);
    a = select (a, 360.0f - a, dy < 0.0f);
    float8 angle = (a * DT_DEG) * DT_ANGLE_SCALE - 0.5f;
    const float8 fl = floor (angle);
    int8 hidx = convert_int8 (fl);
    angle -= fl;
    const float8 g0 = mag * (1.0f - angle), g1 = mag * angle;
    hidx = select (hidx, hidx + DT_BINS, hidx < 0);
    hidx = select (hidx, hidx - DT_BINS, hidx >= DT_BINS);
    const int8 h1 = select (hidx + 1, (int8) 0, hidx + 1 >= DT_BINS);
    const uint16 inter = (uint16) (0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    vstore16 (shuffle2 (g0, g1, inter), 0, (__global float *) (go + x));
    vstore16 (convert_uchar16 (shuffle2 (hidx, h1, inter)), 0, (__global uchar *) (bo + x));
  }
  for (; x < w; x++) {
    dt_gradient (p, w, h, y, x, x >= d.s5, lut, &g, &b);
    go[x] = g;
    bo[x] = b;
  }
}

/* --- blocks --- */

/* L2-Hys of a block's 36 values in h, as HOGCache::normalizeBlockHistogram's
 * 4-lane loops sum them: the sum of squares, scale 1 / (sqrt + 36 * 0.1),
 * clip at l2hys, the sum of squares again, scale 1 / (sqrt + 1e-3). */
inline void dt_l2hys (const float *h, float l2hys, float *scale, float *scale2)
{
  float s0 = h[0] * h[0], s1 = h[1] * h[1], s2 = h[2] * h[2], s3 = h[3] * h[3];
  for (int i = 4; i < DT_NDIMS; i += 4) {
    s0 += h[i] * h[i];
    s1 += h[i + 1] * h[i + 1];
    s2 += h[i + 2] * h[i + 2];
    s3 += h[i + 3] * h[i + 3];
  }
  const float sc = DT_DIV (1.0f, DT_SQRT ((s0 + s1) + (s2 + s3)) + (float) DT_NDIMS * 0.1f);
  s0 = s1 = s2 = s3 = 0.0f;
  for (int i = 0; i < DT_NDIMS; i += 4) {
    const float p0 = fmin (sc * h[i], l2hys), p1 = fmin (sc * h[i + 1], l2hys);
    const float p2 = fmin (sc * h[i + 2], l2hys), p3 = fmin (sc * h[i + 3], l2hys);
    s0 += p0 * p0;
    s1 += p1 * p1;
    s2 += p2 * p2;
    s3 += p3 * p3;
  }
  *scale = sc;
  *scale2 = DT_DIV (1.0f, DT_SQRT ((s0 + s1) + (s2 + s3)) + 1e-3f);
}

/* Feature i of a block after L2-Hys. */
inline float dt_normalised (float v, float scale, float scale2, float l2hys)
{
  return scale2 * fmin (scale * v, l2hys);
}

/* GPU schedule: four lanes a block (one a cell), 16 blocks a work-group of
 * 64.  Each lane walks the block's pixels in HOGCache's order (ptab: the
 * place in the block, y * 16 + x; pw: the weight for each cell, 0 where the
 * pixel does not vote into it) and adds their votes to its cell's 9 bins in
 * registers: every bin takes a select of the two votes or 0 (x + 0 is x), so
 * that no bin is indexed at run time and every bin's sum is OpenCV's, term
 * by term.  The block's 36 values meet in local memory for L2-Hys. */
__kernel __attribute__ ((reqd_work_group_size (64, 1, 1))) void
dt_blocks (__global const float2 *grad, __global const uchar2 *bins, __global const int16 *levels, int nlevels,
           int nblocks, __global const int *ptab, __global const float4 *pw, float l2hys, __global float *feats,
           int plane)
{
  __local float hist[16][DT_NDIMS];
  const int gid = get_global_id (0), lid = get_local_id (0);
  const int blk = gid >> 2, cell = gid & 3, lb = lid >> 2;
  const int live = blk < nblocks;
  const int l = live ? dt_level_of (levels, nlevels, blk, 12) : 0;
  const int16 d = levels[l];
  const int i = live ? blk - d.sc : 0, by = i / d.sa, bx = i - by * d.sa;
  const int w = d.s0;
  const size_t origin = (size_t) d.s2 + (size_t) (by * DT_STRIDE) * w + bx * DT_STRIDE;
  float h0 = 0.0f, h1 = 0.0f, h2 = 0.0f, h3 = 0.0f, h4 = 0.0f, h5 = 0.0f, h6 = 0.0f, h7 = 0.0f, h8 = 0.0f;
  if (live) {
    for (int k = 0; k < DT_BLOCK_PIXELS; k++) {
      const float4 w4 = pw[k];
      const float wc = cell == 0 ? w4.x : cell == 1 ? w4.y : cell == 2 ? w4.z : w4.w;
      const int pos = ptab[k];
      const size_t at = origin + (size_t) (pos >> 4) * w + (pos & 15);
      const float2 a = grad[at];
      const uchar2 b = bins[at];
      const float t0 = a.x * wc, t1 = a.y * wc;
#define VOTE(n) h##n += b.x == n ? t0 : b.y == n ? t1 : 0.0f
      VOTE (0);
      VOTE (1);
      VOTE (2);
      VOTE (3);
      VOTE (4);
      VOTE (5);
      VOTE (6);
      VOTE (7);
      VOTE (8);
#undef VOTE
    }
  }
  __local float *mine = hist[lb] + cell * DT_BINS;
  mine[0] = h0;
  mine[1] = h1;
  mine[2] = h2;
  mine[3] = h3;
  mine[4] = h4;
  mine[5] = h5;
  mine[6] = h6;
  mine[7] = h7;
  mine[8] = h8;
  barrier (CLK_LOCAL_MEM_FENCE);
  if (!live)
    return;
  float v[DT_NDIMS];
  for (int k = 0; k < DT_NDIMS; k++)
    v[k] = hist[lb][k];
  float scale, scale2;
  dt_l2hys (v, l2hys, &scale, &scale2);
  __global float *out = feats + blk;
  for (int k = 0; k < DT_BINS; k++)
    out[(size_t) (cell * DT_BINS + k) * plane] = dt_normalised (v[cell * DT_BINS + k], scale, scale2, l2hys);
}

/* CPU schedule: a work-item per row of blocks of a level (rows: int2 level,
 * block row), each block's bins in private memory bin-major (hb[bin] holds
 * the 4 cells' sums of that bin), so that a pixel adds its two votes to its
 * cells as two 4-lane products and sums, in HOGCache's order; a cell the
 * pixel does not vote into takes a product with weight 0 (x + 0 is x). */
__kernel void
dt_blocks_rows (__global const float2 *grad, __global const uchar2 *bins, __global const int16 *levels,
                __global const int2 *rows, int nrows, __global const int *ptab, __global const float4 *pw,
                float l2hys, __global float *feats, int plane)
{
  HOG_ROW (int2, r, rows, nrows);
  const int w = d.s0;
  for (int bx = 0; bx < d.sa; bx++) {
    float4 hb[DT_BINS];
    for (int k = 0; k < DT_BINS; k++)
      hb[k] = 0.0f;
    const size_t origin = (size_t) d.s2 + (size_t) (r.y * DT_STRIDE) * w + bx * DT_STRIDE;
    for (int k = 0; k < DT_BLOCK_PIXELS; k++) {
      const int pos = ptab[k];
      const size_t at = origin + (size_t) (pos >> 4) * w + (pos & 15);
      const float2 a = grad[at];
      const uchar2 b = bins[at];
      const float4 w4 = pw[k];
      hb[b.x] += a.x * w4;
      hb[b.y] += a.y * w4;
    }
    float h[DT_NDIMS];
    for (int k = 0; k < DT_BINS; k++) {
      h[k] = hb[k].x;
      h[DT_BINS + k] = hb[k].y;
      h[2 * DT_BINS + k] = hb[k].z;
      h[3 * DT_BINS + k] = hb[k].w;
    }
    float scale, scale2;
    dt_l2hys (h, l2hys, &scale, &scale2);
    __global float *out = feats + d.sc + r.y * d.sa + bx;
    for (int k = 0; k < DT_NDIMS; k++)
      out[(size_t) k * plane] = dt_normalised (h[k], scale, scale2, l2hys);
  }
}
