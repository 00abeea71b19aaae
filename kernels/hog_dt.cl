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
 * pi), -D DT_EPS ((float) DBL_EPSILON), as float literals; [-D DT_DIV_DOUBLE].
 */
#pragma OPENCL FP_CONTRACT OFF
#ifdef DT_DIV_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define DT_DIV(a, b) ((float) ((double) (a) / (double) (b)))
#define DT_SQRT(a) ((float) sqrt ((double) (a)))
#else
#define DT_DIV(a, b) ((a) / (b))
#define DT_SQRT(a) sqrt (a)
#endif

#define DT_BINS 9
#define DT_NDIMS 36      /* 2 x 2 cells of 9 bins */
#define DT_BLOCK_PIXELS 256
#define DT_STRIDE 8      /* block stride and window stride, pixels */

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
  const int l = hog_level_of (levels, nlevels, gid, 2);
  const int16 d = levels[l];
  const int i = gid - d.s2, y = i / d.s0, x = i - y * d.s0;
  const int ye = ytab[d.s4 + y];
  const uint cy1 = ye & 511, cy0 = 256u - cy1;
  __global const uchar *r0 = src + (size_t) (ye >> 9) * src_stride;
  pix[gid] = (uchar) resample (r0, cy1 ? r0 + src_stride : r0, src_w - 1, src_bpp, rgb, xtab[d.s3 + x], cy0, cy1);
}

/* CPU schedule of the same: a work-item per row of a level (rows: int2
 * level, row). */
__kernel void
dt_resample_rows (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, __global const int16 *levels,
                  __global const int2 *rows, int nrows, __global const int *xtab, __global const int *ytab,
                  __global uchar *pix, __global uint *cand)
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
  for (int x = 0; x < d.s0; x++)
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
  const int gid = get_global_id (0);
  if (gid >= npixels)
    return;
  const int l = hog_level_of (levels, nlevels, gid, 2);
  const int16 d = levels[l];
  const int i = gid - d.s2, y = i / d.s0, x = i - y * d.s0;
  float2 g;
  uchar2 b;
  dt_gradient (pix + d.s2, d.s0, d.s1, y, x, x >= d.s5, lut, &g, &b);
  grad[gid] = g;
  bins[gid] = b;
}

/* CPU schedule of the same: a work-item per row of a level (rows: int2
 * level, row). */
__kernel void
dt_gradients_rows (__global const uchar *pix, __global const int16 *levels, __global const int2 *rows, int nrows,
                   __global const float *lut, __global float2 *grad, __global uchar2 *bins)
{
  const int gid = get_global_id (0);
  if (gid >= nrows)
    return;
  const int2 r = rows[gid];
  const int16 d = levels[r.x];
  __global float2 *go = grad + d.s2 + (size_t) r.y * d.s0;
  __global uchar2 *bo = bins + d.s2 + (size_t) r.y * d.s0;
  for (int x = 0; x < d.s0; x++) {
    float2 g;
    uchar2 b;
    dt_gradient (pix + d.s2, d.s0, d.s1, r.y, x, x >= d.s5, lut, &g, &b);
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
  const int l = live ? hog_level_of (levels, nlevels, blk, 12) : 0;
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
 * block row), each block's 36 bins in private memory, the votes added in
 * HOGCache's order. */
__kernel void
dt_blocks_rows (__global const float2 *grad, __global const uchar2 *bins, __global const int16 *levels,
                __global const int2 *rows, int nrows, __global const int *ptab, __global const float4 *pw,
                float l2hys, __global float *feats, int plane)
{
  const int gid = get_global_id (0);
  if (gid >= nrows)
    return;
  const int2 r = rows[gid];
  const int16 d = levels[r.x];
  const int w = d.s0;
  for (int bx = 0; bx < d.sa; bx++) {
    float h[DT_NDIMS];
    for (int k = 0; k < DT_NDIMS; k++)
      h[k] = 0.0f;
    const size_t origin = (size_t) d.s2 + (size_t) (r.y * DT_STRIDE) * w + bx * DT_STRIDE;
    for (int k = 0; k < DT_BLOCK_PIXELS; k++) {
      const int pos = ptab[k];
      const size_t at = origin + (size_t) (pos >> 4) * w + (pos & 15);
      const float2 a = grad[at];
      const uchar2 b = bins[at];
      const float4 w4 = pw[k];
      const float wc[4] = {w4.x, w4.y, w4.z, w4.w};
      for (int c = 0; c < 4; c++)
        if (wc[c] != 0.0f) {
          h[c * DT_BINS + b.x] += a.x * wc[c];
          h[c * DT_BINS + b.y] += a.y * wc[c];
        }
    }
    float scale, scale2;
    dt_l2hys (h, l2hys, &scale, &scale2);
    __global float *out = feats + d.sc + r.y * d.sa + bx;
    for (int k = 0; k < DT_NDIMS; k++)
      out[(size_t) k * plane] = dt_normalised (h[k], scale, scale2, l2hys);
  }
}
