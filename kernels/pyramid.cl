/* Device pyramid: every level resampled from the original frame with
 * OpenCV's bit-exact bilinear resize (INTER_LINEAR_EXACT), packed into one
 * buffer with one stride, and its integral images (sum, squared sum, tilted).
 *
 * Level descriptors are int8: x0, y0, width, height, nx, ny, step, first_window.
 * Build options: -D WG=<work-group size of pyramid_rows> [-D HAVE_SQSUM]
 * [-D NARROW_SUM]
 */

/* The sum plane's element, shared with the cascade kernels.  NARROW_SUM: the
 * integral modulo 2^16.  The four corners' difference of a rectangle of at
 * most 257 pixels, taken modulo 2^16, is its exact sum (at most 257 * 255 <
 * 2^16), and every read moves half the bytes; larger rectangles are summed in
 * bands of at most 257 pixels.  SUM_WRAP: such a difference as an int;
 * LBP_BLOCK: an LBP block's sum as compared with the others (with NARROW_SUM,
 * times 2^16 as an unsigned int: one shift, where masking the sum took the
 * H100 longer).  The squared sums and the tilted plane stay 32-bit. */
#ifdef NARROW_SUM
typedef ushort sum_t;
typedef uint blk_t;
#define SUM_WRAP(x) ((int) ((uint) (x) & 0xffffu))
#define LBP_BLOCK(x) ((uint) (x) << 16)
#else
typedef uint sum_t;
typedef int blk_t;
#define SUM_WRAP(x) ((int) (x))
#define LBP_BLOCK(x) ((int) (x))
#endif

#ifndef WG
#define WG 256
#endif
#define RK 8 /* pixels per lane and pass in pyramid_rows (core/integral.cpp plans for it) */
#define LPAD(i) ((i) + ((i) >> 5))

/* Luma of the source pixel at p: grey planes as they are, 4-byte RGB formats
 * with OpenCV's fixed-point BT.601 weights (cvtColor RGB2GRAY). */
inline uint luma (__global const uchar *p, int bpp, int4 rgb)
{
  if (bpp == 1)
    return p[0];
  return ((uint) p[rgb.x] * 4899u + (uint) p[rgb.y] * 9617u + (uint) p[rgb.z] * 1868u + 8192u) >> 14;
}

/* A work-item's entry of a map of n entries, level | k << 10 (rows of
 * windows, diagonals, blocks of columns): its level's descriptor in *L and k
 * in *k; 0 for the work-items past n. */
inline int level_entry (__global const int8 *levels, __global const int *map, int n, int8 *L, int *k)
{
  const int gid = get_global_id (0);
  if (gid >= n)
    return 0;
  const int m = map[gid];
  *L = levels[m & 1023];
  *k = m >> 10;
  return 1;
}

/* The same as declarations L and k of a kernel (levels, its descriptors);
 * the work-items past n return. */
#define LEVEL_ENTRY(map, n, L, k)                                                                                \
  int8 L;                                                                                                      \
  int k;                                                                                                       \
  if (!level_entry (levels, map, n, &L, &k))                                                                   \
    return

/* OpenCV's bit-exact bilinear sample of one level pixel (CPU schedule): xe,
 * ye are the table entries (source index << 9 | weight of the next pixel in
 * 1/256); AT (dx, dy): the luma of source pixel (sx + dx, sy + dy), read only
 * where its weight is not 0. */
#define BILINEAR(AT)                             \
  const int sx = xe >> 9;                        \
  const uint cx1 = xe & 511, cx0 = 256u - cx1;   \
  uint h0 = AT (0, 0) * cx0;                     \
  if (cx1)                                       \
    h0 += AT (1, 0) * cx1;                       \
  uint h1 = 0;                                   \
  if (cy1) {                                     \
    h1 = AT (0, 1) * cx0;                        \
    if (cx1)                                     \
      h1 += AT (1, 1) * cx1;                     \
  }                                              \
  return (h0 * cy0 + h1 * cy1 + 32768u) >> 16;

/* CPU schedule: from the source rows' pointers, r1 the row below r0 (on PoCL,
 * 2 cores: the pyramid at 640x480 3.6 to 2.6 ms). */
inline uint resample_rows (__global const uchar *r0, __global const uchar *r1, int bpp, int4 rgb, int xe, uint cy0,
                           uint cy1)
{
#define AT(dx, dy) luma (((dy) ? r1 : r0) + (sx + (dx)) * bpp, bpp, rgb)
  BILINEAR (AT)
#undef AT
}

/* The same sample on the GPU schedule, from source rows r0 and r1 (the row
 * below; r0 again where its weight cy1 is 0); xmax: the last source column.
 * Every neighbour is read (the right one clamped to the row) and one of weight
 * 0 adds 0, so there is no branch; a * (256 - c) + b * c is written (a << 8) +
 * (b - a) * c, the same integer.  Faster on GPUs, slower on PoCL, whose CPU
 * schedule keeps BILINEAR (docs/benchmarks.md). */
inline uint resample (__global const uchar *r0, __global const uchar *r1, int xmax, int bpp, int4 rgb, int xe,
                      uint cy0, uint cy1)
{
  const int sx = xe >> 9, sx1 = min (sx + 1, xmax);
  const int cx1 = xe & 511;
  const int a = luma (r0 + sx * bpp, bpp, rgb), b = luma (r0 + sx1 * bpp, bpp, rgb);
  const int c = luma (r1 + sx * bpp, bpp, rgb), d = luma (r1 + sx1 * bpp, bpp, rgb);
  const uint h0 = (uint) ((a << 8) + (b - a) * cx1), h1 = (uint) ((c << 8) + (d - c) * cx1);
  return (h0 * cy0 + h1 * cy1 + 32768u) >> 16;
}

/* SQ (statement): only where there are squared sums (HAVE_SQSUM). */
#ifdef HAVE_SQSUM
#define SQ(x) x
#else
#define SQ(x)
#endif

/* Zeroes entry `at` of the integrals (row 0 and column 0 of a level). */
inline void integral_zero (__global sum_t *sum, __global uint *sqsum, size_t at)
{
  sum[at] = 0;
  SQ (sqsum[at] = 0;)
}

/* Inclusive prefix sums of ls and lq (lq only with HAVE_SQSUM) over each
 * segment of `lanes` lanes (lane: the index in its segment).  Called by the
 * whole work-group after every lane wrote its ls[lid] and lq[lid].  (Warp
 * shuffles instead, as in kernels/warp.cl, made pyramid_rows slower on an
 * H100: docs/benchmarks.md.) */
inline void seg_scan2 (__local uint *ls, __local uint *lq, int lid, int lane, int lanes)
{
  barrier (CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < lanes; off <<= 1) {
    const uint a = lane >= off ? ls[lid - off] : 0u;
    SQ (const uint b = lane >= off ? lq[lid - off] : 0u;)
    barrier (CLK_LOCAL_MEM_FENCE);
    ls[lid] += a;
    SQ (lq[lid] += b;)
    barrier (CLK_LOCAL_MEM_FENCE);
  }
}

/* Resampled rows of every level, a work-group at a time: the row-map entry
 * names the level (bits 0-9), the first row (bits 10-26) and log2 of the
 * lanes per row (bits 27-30): a row of w pixels takes the smallest power of
 * two of lanes, at least 8, that holds w / RK pixels, up to WG, so a
 * work-group resamples WG / lanes consecutive rows of a narrow level at once.
 * Each row is resampled and a segmented prefix sum over its lanes writes the
 * row-prefix sums into the integral buffers (the column pass completes them).
 * Row 0 and column 0 of each level's integral are written as zeros.
 * Work-group 0 also resets the frame's counters and candidates
 * (kernels/candidates.cl). */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
pyramid_rows (__global const uchar *src, int src_stride, int src_bpp, int4 rgb,
              __global const int8 *levels, __global const int *xtab, __global const int *ytab,
              __global const int *xfirst, __global const int *yfirst, __global const int *row_map,
              __global sum_t *sum, __global uint *sqsum, int stride, __global uint *counters,
              __global uint *hits)
{
  __local uint ls[WG];
  __local uint lq[WG];
  __local uint lp[LPAD (WG * RK)];
#ifdef HAVE_SQSUM
  __local uint lpq[LPAD (WG * RK)];
#endif
  const int lid = get_local_id (0);
  const int g = get_group_id (0);
  if (g == 0 && lid == 0)
    frame_reset (counters, hits);
  const int m = row_map[g];
  const int li = m & 1023;
  const int sh = (m >> 27) & 15;
  const int lanes = 1 << sh, lane = lid & (lanes - 1), seg0 = lid - lane;
  const int y = ((m >> 10) & 0x1ffff) + (lid >> sh);
  const int8 L = levels[li];
  const int w = L.s2;
  const bool live = y < L.s3;
  int sy = 0;
  uint cy0 = 0, cy1 = 0;
  if (live) {
    const int ye = ytab[yfirst[li] + y];
    sy = ye >> 9;
    cy1 = ye & 511;
    cy0 = 256u - cy1;
  }
  const size_t base = (size_t) (L.s1 + y + 1) * stride + L.s0;
  if (live && y == 0)
    for (int x = lane; x <= w; x += lanes)
      integral_zero (sum, sqsum, (size_t) L.s1 * stride + L.s0 + x);
  if (live && lane == 0)
    integral_zero (sum, sqsum, base);
  __global const int *xt = xtab + xfirst[li];
  uint carry_s = 0, carry_q = 0;
  /* the source rows: r1 the row below, r0 again where its weight is 0 */
  __global const uchar *r0 = src + (size_t) sy * src_stride;
  __global const uchar *r1 = cy1 ? r0 + src_stride : r0;
  const int xmax = src_stride / src_bpp - 1;
  /* A pass covers lanes * RK pixels of each row: the lanes resample them
   * side by side (coalesced loads), each lane then sums a run of RK of them
   * in local memory, one scan joins the runs, and the lanes store the sums
   * side by side again.  Every row of the work-group has the same width,
   * so the passes and barriers are uniform.  LPAD: one spare word every 32,
   * so that both the side-by-side and the run-wise accesses are free of
   * bank conflicts. */
  const int run0 = seg0 * RK;
  for (int x0 = 0; x0 < w; x0 += lanes * RK) {
    for (int k = 0; k < RK; k++) {
      const int x = x0 + k * lanes + lane;
      uint p = 0;
      if (live && x < w)
        p = resample (r0, r1, xmax, src_bpp, rgb, xt[x], cy0, cy1);
      lp[LPAD (run0 + k * lanes + lane)] = p;
    }
    barrier (CLK_LOCAL_MEM_FENCE);
    uint as = 0, aq = 0;
    for (int k = 0; k < RK; k++) {
      const uint v = lp[LPAD (run0 + lane * RK + k)];
      as += v;
      aq += v * v;
    }
    ls[lid] = as;
    SQ (lq[lid] = aq;)
    seg_scan2 (ls, lq, lid, lane, lanes);
    uint es = carry_s + ls[lid] - as, eq = 0;
    SQ (eq = carry_q + lq[lid] - aq;)
    for (int k = 0; k < RK; k++) {
      const int i = LPAD (run0 + lane * RK + k);
      const uint v = lp[i];
      es += v;
      eq += v * v;
      lp[i] = es;
#ifdef HAVE_SQSUM
      lpq[i] = eq;
#endif
    }
    carry_s += ls[seg0 + lanes - 1];
    SQ (carry_q += lq[seg0 + lanes - 1];)
    barrier (CLK_LOCAL_MEM_FENCE);
    if (live)
      for (int k = 0; k < RK; k++) {
        const int x = x0 + k * lanes + lane;
        if (x < w) {
          sum[base + x + 1] = (sum_t) lp[LPAD (run0 + k * lanes + lane)];
#ifdef HAVE_SQSUM
          sqsum[base + x + 1] = lpq[LPAD (run0 + k * lanes + lane)];
#endif
        }
      }
    barrier (CLK_LOCAL_MEM_FENCE);
  }
}

/* CPU schedule of the same step: one work-item per resampled row, the
 * prefix sums run sequentially along it. */
__kernel void
pyramid_rows_seq (__global const uchar *src, int src_stride, int src_bpp, int4 rgb,
                  __global const int8 *levels, __global const int *xtab, __global const int *ytab,
                  __global const int *xfirst, __global const int *yfirst, __global const int *row_map,
                  int nrows, __global sum_t *sum, __global uint *sqsum, int stride, __global uint *counters,
                  __global uint *hits)
{
  const int g = get_global_id (0);
  if (g == 0)
    frame_reset (counters, hits);
  if (g >= nrows)
    return;
  const int m = row_map[g];
  const int li = m & 1023, y = m >> 10;
  const int8 L = levels[li];
  const int w = L.s2;
  const int ye = ytab[yfirst[li] + y];
  const int sy = ye >> 9;
  const uint cy1 = ye & 511, cy0 = 256u - cy1;
  __global const uchar *r0 = src + (size_t) sy * src_stride, *r1 = cy1 ? r0 + src_stride : r0;
  const size_t base = (size_t) (L.s1 + y + 1) * stride + L.s0;
  if (y == 0)
    for (int x = 0; x <= w; x++)
      integral_zero (sum, sqsum, (size_t) L.s1 * stride + L.s0 + x);
  integral_zero (sum, sqsum, base);
  __global const int *xt = xtab + xfirst[li];
  uint as = 0, aq = 0;
  for (int x = 0; x < w; x++) {
    const uint p = resample_rows (r0, r1, src_bpp, rgb, xt[x], cy0, cy1);
    as += p;
    aq += p * p;
    sum[base + x + 1] = (sum_t) as;
#ifdef HAVE_SQSUM
    sqsum[base + x + 1] = aq;
#endif
  }
}

/* GPU schedule of the column pass: one work-group per block of 32 integral
 * columns of a level (colblock_map: level | block << 10); 8 lanes of each
 * column take CR rows each per step, a local scan joins them.  The work-groups
 * of a frame run in one wave, so the tallest level's steps, each waiting for
 * its loads, make the kernel's time: 16 rows per lane (8 with squared sums)
 * measured fastest (docs/benchmarks.md). */
#define CB 32
#define CL 8
#ifndef CR
#ifdef HAVE_SQSUM
#define CR 8
#else
#define CR 16
#endif
#endif
__kernel __attribute__ ((reqd_work_group_size (CB * CL, 1, 1))) void
integral_cols_blocked (__global const int8 *levels, __global const int *colblock_map, __global sum_t *sum,
                       __global uint *sqsum, int stride)
{
  __local uint ps[CL][CB];
  __local uint pq[CL][CB];
  const int lid = get_local_id (0);
  const int m = colblock_map[get_group_id (0)];
  const int8 L = levels[m & 1023];
  const int lx = lid % CB, lane = lid / CB;
  const int x = (m >> 10) * CB + lx;
  const int valid = x <= L.s2;
  const size_t col = (size_t) L.s1 * stride + L.s0 + x;
  const int H = L.s3;
  uint carry_s = 0, carry_q = 0;
  for (int y0 = 1; y0 <= H; y0 += CL * CR) {
    uint ts[CR], tq[CR];
    uint as = 0, aq = 0;
    for (int k = 0; k < CR; k++) {
      const int y = y0 + lane * CR + k;
      const int in = valid && y <= H;
      as += in ? sum[col + (size_t) y * stride] : 0u;
      ts[k] = as;
#ifdef HAVE_SQSUM
      aq += in ? sqsum[col + (size_t) y * stride] : 0u;
      tq[k] = aq;
#endif
    }
    ps[lane][lx] = as;
    pq[lane][lx] = aq;
    barrier (CLK_LOCAL_MEM_FENCE);
    uint bs = 0, bq = 0, tots = 0, totq = 0;
    for (int j = 0; j < CL; j++) {
      if (j < lane) {
        bs += ps[j][lx];
        bq += pq[j][lx];
      }
      tots += ps[j][lx];
      totq += pq[j][lx];
    }
    for (int k = 0; k < CR; k++) {
      const int y = y0 + lane * CR + k;
      if (valid && y <= H) {
        sum[col + (size_t) y * stride] = (sum_t) (carry_s + bs + ts[k]);
#ifdef HAVE_SQSUM
        sqsum[col + (size_t) y * stride] = carry_q + bq + tq[k];
#endif
      }
    }
    carry_s += tots;
    carry_q += totq;
    barrier (CLK_LOCAL_MEM_FENCE);
  }
}

/* CPU schedule of the column pass: one work-item per block of 32 columns of
 * a level (colblock_map), adding each row to the finished row above; the
 * inner loop runs along contiguous memory. */
__kernel void
integral_cols_rows (__global const int8 *levels, __global const int *colblock_map, int nblocks,
                    __global sum_t *sum, __global uint *sqsum, int stride)
{
  LEVEL_ENTRY (colblock_map, nblocks, L, block);
  const int x0 = block * 32;
  const int n = min (32, L.s2 + 1 - x0);
  size_t p = (size_t) (L.s1 + 1) * stride + L.s0 + x0;
  for (int y = 1; y < L.s3; y++, p += stride) {
    for (int c = 0; c < n; c++) {
      sum[p + stride + c] = (sum_t) (sum[p + stride + c] + sum[p + c]);
#ifdef HAVE_SQSUM
      sqsum[p + stride + c] += sqsum[p + c];
#endif
    }
  }
}

/* Tilted (45 degree) integral, OpenCV's definition:
 *   T(X, Y) = sum of I(x, y) over y < Y, |x - X + 1| <= Y - 1 - y
 * = A(X, Y) - B(X, Y), with S(x, y) the row-prefix sum (exclusive) of row y:
 *   A(X, Y) = sum_{y<Y} S(clamp(X + Y - 1 - y), y)   anti-diagonal recurrence
 *   B(X, Y) = sum_{y<Y} S(clamp(X - Y + y), y)       diagonal recurrence
 * Both run on the row-prefix sums, i.e. before integral_cols.  One work-item
 * per diagonal of every level (diag_map: level | k << 10, k in [0, W + H]):
 * TILTED_DIAGONAL gives it k, the level's W and H and its origin in the
 * planes, and returns past the last diagonal. */
#define TILTED_DIAGONAL                                                                                          \
  LEVEL_ENTRY (diag_map, ndiag, L, k);                                                                         \
  const int W = L.s2, H = L.s3;                                                                                \
  const size_t origin = (size_t) L.s1 * stride + L.s0

__kernel void
tilted_anti (__global const int8 *levels, __global const int *diag_map, int ndiag,
             __global const uint *rowsum, __global uint *tilted, int stride)
{
  TILTED_DIAGONAL;
  if (k <= W)
    tilted[origin + k] = 0;
  uint acc = 0;
  for (int Y = 1; Y <= H; Y++) {
    const int X = k - Y;
    if (X < 0)
      break;
    acc += rowsum[origin + (size_t) Y * stride + min (X, W)];
    if (X <= W)
      tilted[origin + (size_t) Y * stride + X] = acc;
  }
}

__kernel void
tilted_diag (__global const int8 *levels, __global const int *diag_map, int ndiag,
             __global const uint *rowsum, __global uint *tilted, int stride)
{
  TILTED_DIAGONAL;
  const int d = k - H;
  uint acc = 0;
  for (int Y = max (0, -d) + 1; Y <= H; Y++) {
    const int X = d + Y;
    if (X > W)
      break;
    acc += rowsum[origin + (size_t) Y * stride + (X - 1)];
    tilted[origin + (size_t) Y * stride + X] -= acc;
  }
}
