/* Deformable part models as OpenCV's cv::dpm scores them
 * (gst/detect/families/dpm/dpm.h says what, step by step), in single
 * precision: the image pyramid (cv::resize's coefficients, given by the
 * host), the 32 features of every cell (Feature::computeHOG32D), filter
 * responses by direct correlation (any number of features a cell, any filter
 * size), the parts' distance transform over cv::dpm's search window (+-4
 * cells, rows then columns), and every window's score (root + parts + bias)
 * against the threshold.
 *
 * Tables (ints; built by families/dpm/family.cpp):
 *   level (DPM_LV ints): image, cell, cells across, cells down, feature
 *     columns, feature rows, first cell, first feature, first distance
 *     transform entry, first window, windows across (positions x components)
 *   image (DPM_IM ints): width, height, first pixel, source image, area
 *     halving (1) or bilinear (0), first column entry, first row entry
 * Build options: -D DPM_D=<features a cell> -D DPM_FMAX=<filters of the
 *   largest bank> -D DPM_NCOMP=<components> -D DPM_HW=<half window>
 *   -D DPM_CMAX=<the largest cell size>
 *   [-D DPM_COMPACT] (candidates through compact.cl's wg_rank) [-D DPM_FP64]
 *   (the pyramid and the features in double where the device has it)
 */
#pragma OPENCL FP_CONTRACT OFF
#ifdef DPM_FP64
/* images, gradients, cells and features in double: cv::dpm's own operations
 * in its order, so that every feature is cv::dpm's rounded to float */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#define R(x) x
#else
typedef float real;
#define R(x) x##f
#endif

#define DPM_LV 12
#define DPM_IM 8
#define DPM_CELL_FLOATS 20 /* 18 bins, the energy, one unused */
#define DPM_TILE 64        /* positions a work-item of the CPU schedule's row kernels */

HOG_SNAP (dpm_snap, real, int, real, R)
HOG_ENERGY (dpm_energy, real, __private)
HOG_SHARE (dpm_share, real, R)

/* The entry of a table of `n` records of `stride` ints whose component k
 * (first item of each) is the largest not above gid. */
inline int dpm_find (__global const int *t, int n, int stride, int k, int gid)
{
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (t[mid * stride + k] <= gid)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* --- the image pyramid --- */

/* The images of one generation: from the frame's luma (generation 0, which
 * also resets the candidates), or each from the image an octave up: OpenCV's
 * INTER_AREA halving (((a + b) + c) + d) / 4 where both sides halve exactly,
 * else INTER_LINEAR with its float coefficients (cols: per output column
 * int4 (sx, bits of a0, bits of a1, 1 where sx + 1 is read); rows: per output
 * row int4 (sy, bits of b0, bits of b1, 0)). */
__kernel void
dpm_images (__global const uchar *src, int src_stride, int src_bpp, int4 rgb, int src_w, int src_h,
            __global const int *images, int first, int count, int npixels, __global const int4 *cols,
            __global const int4 *rows, __global real *pix, __global uint *cand)
{
  const int gid = get_global_id (0);
  if (gid == 0 && first == 0)
    candidates_reset (cand);
  if (gid >= npixels)
    return;
  __global const int *base = images + first * DPM_IM;
  const int p0 = base[2];
  const int k = dpm_find (base, count, DPM_IM, 2, gid + p0);
  __global const int *im = base + k * DPM_IM;
  const int w = im[0], i = gid + p0 - im[2], y = i / w, x = i - y * w;
  real v;
  if (im[3] < 0) {
    const int4 cx = cols[im[5] + x], cy = rows[im[6] + y];
    const int y0 = clamp (cy.x, 0, src_h - 1), y1 = clamp (cy.x + 1, 0, src_h - 1);
    __global const uchar *r0 = src + (size_t) y0 * src_stride, *r1 = src + (size_t) y1 * src_stride;
    real h0, h1;
    if (cx.w) {
      h0 = (real) luma (r0 + cx.x * src_bpp, src_bpp, rgb) * (real) as_float (cx.y) +
           (real) luma (r0 + (cx.x + 1) * src_bpp, src_bpp, rgb) * (real) as_float (cx.z);
      h1 = (real) luma (r1 + cx.x * src_bpp, src_bpp, rgb) * (real) as_float (cx.y) +
           (real) luma (r1 + (cx.x + 1) * src_bpp, src_bpp, rgb) * (real) as_float (cx.z);
    } else {
      h0 = (real) luma (r0 + cx.x * src_bpp, src_bpp, rgb);
      h1 = (real) luma (r1 + cx.x * src_bpp, src_bpp, rgb);
    }
    v = h0 * (real) as_float (cy.y) + h1 * (real) as_float (cy.z);
  } else {
    __global const int *from = images + im[3] * DPM_IM;
    const int sw = from[0], sh = from[1];
    __global const real *s = pix + from[2];
    if (im[4]) {
      __global const real *q = s + (size_t) (2 * y) * sw + 2 * x;
      v = (((q[0] + q[1]) + q[sw]) + q[sw + 1]) * R (0.25);
    } else {
      const int4 cx = cols[im[5] + x], cy = rows[im[6] + y];
      __global const real *r0 = s + (size_t) clamp (cy.x, 0, sh - 1) * sw;
      __global const real *r1 = s + (size_t) clamp (cy.x + 1, 0, sh - 1) * sw;
      const real a0 = as_float (cx.y), a1 = as_float (cx.z);
      const real h0 = cx.w ? r0[cx.x] * a0 + r0[cx.x + 1] * a1 : r0[cx.x];
      const real h1 = cx.w ? r1[cx.x] * a0 + r1[cx.x + 1] * a1 : r1[cx.x];
      v = h0 * (real) as_float (cy.y) + h1 * (real) as_float (cy.z);
    }
  }
  pix[im[2] + i] = v;
}

/* --- the features --- */

/* One work-item per pixel of every image: the gradient at (x, y) (central
 * differences), snapped to one of 18 orientations, and its length, where
 * cv::dpm computes one (1 <= x <= w - 2, 1 <= y <= h - 2; pixels past them
 * take the gradient of the last of them, as cv::dpm reads its neighbours
 * clamped).  Every level of the image reads it: the part level's cells and
 * the root level's. */
__kernel void
dpm_gradients (__global const real *pix, __global const int *images, int nimages, int npixels,
               __global uchar *grad_o, __global real *grad_v)
{
  const int gid = get_global_id (0);
  if (gid >= npixels)
    return;
  __global const int *im = images + dpm_find (images, nimages, DPM_IM, 2, gid) * DPM_IM;
  const int w = im[0], h = im[1], i = gid - im[2], y = i / w, x = i - y * w;
  if (x < 1 || y < 1 || x > w - 2 || y > h - 2)
    return;
  __global const real *s = pix + gid;
  const real dy = s[w] - s[-w], dx = s[1] - s[-1];
  grad_o[gid] = (uchar) dpm_snap (dx, dy);
  grad_v[gid] = sqrt (dx * dx + dy * dy);
}

/* One work-item per cell of every level: the votes of the pixels around it
 * (those whose 4 nearest cells include it), in raster order as cv::dpm adds
 * them, then its energy. */
__kernel void
dpm_cells (__global const uchar *grad_o, __global const real *grad_v, __global const int *images,
           __global const int *levels, int nlevels, int ncells, __global real *cells)
{
  const int gid = get_global_id (0);
  if (gid >= ncells)
    return;
  __global const int *lv = levels + dpm_find (levels, nlevels, DPM_LV, 6, gid) * DPM_LV;
  __global const int *im = images + lv[0] * DPM_IM;
  const int w = im[0], h = im[1], c = lv[1], bw = lv[2], bh = lv[3];
  const int i = gid - lv[6], by = i / bw, bx = i - by * bw;
  __global const uchar *go = grad_o + im[2];
  __global const real *gv = grad_v + im[2];
  real hist[18];
  for (int o = 0; o < 18; o++)
    hist[o] = 0;
  /* pixels whose floor ((x + 0.5) / c - 0.5) is bx - 1 or bx */
  const int xa = max ((bx - 1) * c + c / 2, 1), xb = min ((bx + 1) * c + c / 2 - 1, bw * c - 2);
  const int ya = max ((by - 1) * c + c / 2, 1), yb = min ((by + 1) * c + c / 2 - 1, bh * c - 2);
  /* the columns' weights (this cell's share of a pixel's vote), once */
  real wxs[2 * DPM_CMAX];
  for (int x = xa; x <= xb; x++) {
    int ixp;
    const real vx0 = dpm_share (x, c, &ixp);
    wxs[x - xa] = ixp == bx ? R (1.0) - vx0 : vx0;
  }
  for (int y = ya; y <= yb; y++) {
    int iyp;
    const real vy0 = dpm_share (y, c, &iyp), wy = iyp == by ? R (1.0) - vy0 : vy0;
    const size_t row = (size_t) min (y, h - 2) * w;
    for (int x = xa; x <= xb; x++) {
      const size_t at = row + min (x, w - 2);
      hist[go[at]] += (wy * wxs[x - xa]) * gv[at];
    }
  }
  __global real *out = cells + (size_t) gid * DPM_CELL_FLOATS;
  for (int o = 0; o < 18; o++)
    out[o] = hist[o];
  out[18] = dpm_energy (hist);
}

/* One work-item per position of every level's padded feature plane: its 32
 * features, one plane each (DPM_D planes of `plane` floats). */
__kernel void
dpm_features (__global const real *cells, __global const int *levels, int nlevels, int nfeat, int pad_x,
              int pad_y, __global float *feats, int plane)
{
  const int gid = get_global_id (0);
  if (gid >= nfeat)
    return;
  __global const int *lv = levels + dpm_find (levels, nlevels, DPM_LV, 7, gid) * DPM_LV;
  const int bw = lv[2], fw = lv[4], fh = lv[5];
  const int i = gid - lv[7], y = i / fw, x = i - y * fw;
  __global float *dst = feats + gid;
  if (y < pad_y || y >= fh - pad_y || x < pad_x || x >= fw - pad_x) {
    for (int d = 0; d < 31; d++)
      dst[(size_t) d * plane] = 0.0f;
    dst[(size_t) 31 * plane] = 1.0f;
    return;
  }
  const int by = y - pad_y, bx = x - pad_x;
  __global const real *c0 = cells + ((size_t) lv[6] + (size_t) by * bw + bx) * DPM_CELL_FLOATS;
#define E(dy, dx) c0[((dy) * bw + (dx)) * DPM_CELL_FLOATS + 18]
#define N(dy, dx) (R (1.0) / sqrt (E (dy, dx) + E (dy, dx + 1) + E (dy + 1, dx) + E (dy + 1, dx + 1) + R (0.0001)))
  const real n1 = N (1, 1), n2 = N (0, 1), n3 = N (1, 0), n4 = N (0, 0);
#undef N
#undef E
  __global const real *src = c0 + (bw + 1) * DPM_CELL_FLOATS;
  const real cap = R (0.2);
  real t1 = 0, t2 = 0, t3 = 0, t4 = 0;
  for (int o = 0; o < 18; o++) {
    const real v = src[o];
    const real h1 = min (v * n1, cap), h2 = min (v * n2, cap), h3 = min (v * n3, cap), h4 = min (v * n4, cap);
    dst[(size_t) o * plane] = (float) (R (0.5) * (h1 + h2 + h3 + h4));
    t1 += h1;
    t2 += h2;
    t3 += h3;
    t4 += h4;
  }
  for (int o = 0; o < 9; o++) {
    const real v = src[o] + src[o + 9];
    const real h1 = min (v * n1, cap), h2 = min (v * n2, cap), h3 = min (v * n3, cap), h4 = min (v * n4, cap);
    dst[(size_t) (18 + o) * plane] = (float) (R (0.5) * (h1 + h2 + h3 + h4));
  }
  dst[(size_t) 27 * plane] = (float) (R (0.2357) * t1);
  dst[(size_t) 28 * plane] = (float) (R (0.2357) * t2);
  dst[(size_t) 29 * plane] = (float) (R (0.2357) * t3);
  dst[(size_t) 30 * plane] = (float) (R (0.2357) * t4);
  dst[(size_t) 31 * plane] = 0.0f;
}

/* --- filter responses --- */

/* Jobs (8 ints): level, filter rows, filter columns, filters, first output
 * plane, first coefficient, first item, positions across.  A bank's
 * coefficients are interleaved: ((d * rows + y) * cols + x) * filters + f.
 * GPU schedule: a work-item per position of a job, every filter of its bank.
 * Each response lies at its position of the level's feature plane geometry,
 * in output plane (first output plane + f). */
__kernel void
dpm_correlate (__global const float *feats, int plane, __global const int *levels, __global const int *jobs, int njobs,
               int nitems, __global const float *coef, __global float *resp)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  __global const int *j = jobs + dpm_find (jobs, njobs, 8, 6, gid) * 8;
  __global const int *lv = levels + j[0] * DPM_LV;
  const int fw = lv[4], rows = j[1], cols = j[2], nf = j[3];
  const int i = gid - j[6], y = i / j[7], x = i - y * j[7];
  const size_t at = (size_t) lv[7] + (size_t) y * fw + x;
  float acc[DPM_FMAX];
  for (int f = 0; f < DPM_FMAX; f++)
    acc[f] = 0.0f;
  __global const float *k = coef + j[5];
  /* the filters' loops run to the compile-time DPM_FMAX (a bank's own count
   * guards them), so that the accumulators stay in registers */
  for (int d = 0; d < DPM_D; d++) {
    __global const float *q = feats + (size_t) d * plane + at;
    for (int m = 0; m < rows; m++)
      for (int n = 0; n < cols; n++) {
        const float v = q[m * fw + n];
        for (int f = 0; f < DPM_FMAX; f++)
          if (f < nf)
            acc[f] += k[f] * v;
        k += nf;
      }
  }
  for (int f = 0; f < DPM_FMAX; f++)
    if (f < nf)
      resp[(size_t) (j[4] + f) * plane + at] = acc[f];
}

/* CPU schedule: a work-item per tile of up to DPM_TILE positions of a row of
 * a job (items: rows x tiles a row), four filters at a time (each feature
 * read once for the four), the positions in the innermost loop. */
__kernel void
dpm_correlate_rows (__global const float *feats, int plane, __global const int *levels, __global const int *jobs,
                    int njobs, int nitems, __global const float *coef, __global float *resp)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  __global const int *j = jobs + dpm_find (jobs, njobs, 8, 6, gid) * 8;
  __global const int *lv = levels + j[0] * DPM_LV;
  const int fw = lv[4], rows = j[1], cols = j[2], nf = j[3], vw = j[7];
  const int tiles = (vw + DPM_TILE - 1) / DPM_TILE;
  const int i = gid - j[6], y = i / tiles, x0 = (i - y * tiles) * DPM_TILE, n = min (DPM_TILE, vw - x0);
  const size_t at = (size_t) lv[7] + (size_t) y * fw + x0;
  for (int f = 0; f < nf; f += 4) {
    float a0[DPM_TILE], a1[DPM_TILE], a2[DPM_TILE], a3[DPM_TILE];
    for (int t = 0; t < DPM_TILE; t++)
      a0[t] = a1[t] = a2[t] = a3[t] = 0.0f;
    __global const float *k = coef + j[5] + f;
    for (int d = 0; d < DPM_D; d++) {
      __global const float *q = feats + (size_t) d * plane + at;
      for (int m = 0; m < rows; m++)
        for (int c = 0; c < cols; c++) {
          const float w0 = k[0], w1 = f + 1 < nf ? k[1] : 0.0f, w2 = f + 2 < nf ? k[2] : 0.0f,
                      w3 = f + 3 < nf ? k[3] : 0.0f;
          k += nf;
          __global const float *r = q + m * fw + c;
          for (int t = 0; t < DPM_TILE; t++) {
            const float v = r[t];
            a0[t] += w0 * v;
            a1[t] += w1 * v;
            a2[t] += w2 * v;
            a3[t] += w3 * v;
          }
        }
    }
    __global float *out = resp + (size_t) (j[4] + f) * plane + at;
    for (int t = 0; t < n; t++) {
      out[t] = a0[t];
      if (f + 1 < nf)
        out[plane + t] = a1[t];
      if (f + 2 < nf)
        out[2 * (size_t) plane + t] = a2[t];
      if (f + 3 < nf)
        out[3 * (size_t) plane + t] = a3[t];
    }
  }
}

/* --- the parts' distance transform over cv::dpm's window --- */

/* Jobs (8 ints): level, response plane, positions across (vw), positions down
 * (vh), first item of the rows pass, first item of the columns pass, first
 * cost (DPM_HW * 2 + 1 for x, then as many for y: the cost of anchor minus
 * position = d, -def0 d^2 - def1 d), part.  The transform of part k on a
 * level lies in its plane (k) of (columns + 2 DPM_HW) x (rows + 2 DPM_HW)
 * entries a level, anchors -DPM_HW .. columns + DPM_HW - 1 across and down:
 * rows pass, at (x0, y): the largest response (x, y) + cost (x0 - x) over x
 * within DPM_HW of x0 where the filter fits, -inf if none; columns pass, at
 * (x0, y0): the same down the rows pass's column. */
#define DPM_W (2 * DPM_HW + 1)

inline float dpm_row_max (__global const float *r, int vw, int x0, __global const float *cost)
{
  float best = -INFINITY;
  const int xa = max (x0 - DPM_HW, 0), xb = min (x0 + DPM_HW, vw - 1);
  for (int x = xa; x <= xb; x++)
    best = fmax (best, r[x] + cost[x0 - x + DPM_HW]);
  return best;
}

__kernel void
dpm_dt_rows (__global const float *resp, int plane, __global const int *levels, __global const int *jobs, int njobs,
             int nitems, __global const float *costs, __global float *rows, int dt_plane, int per_row)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  __global const int *j = jobs + dpm_find (jobs, njobs, 8, 4, gid) * 8;
  __global const int *lv = levels + j[0] * DPM_LV;
  const int fw = lv[4], W = fw + 2 * DPM_HW, vw = j[2];
  __global const float *cost = costs + j[6];
  const int i = gid - j[4];
  if (per_row) {
    /* CPU schedule: a work-item per row */
    const int y = i;
    __global const float *r = resp + (size_t) j[1] * plane + lv[7] + (size_t) y * fw;
    __global float *out = rows + (size_t) j[7] * dt_plane + lv[8] + (size_t) y * W;
    for (int x0 = -DPM_HW; x0 < fw + DPM_HW; x0++)
      out[x0 + DPM_HW] = dpm_row_max (r, vw, x0, cost);
  } else {
    const int y = i / W, x0 = i - y * W - DPM_HW;
    __global const float *r = resp + (size_t) j[1] * plane + lv[7] + (size_t) y * fw;
    rows[(size_t) j[7] * dt_plane + lv[8] + (size_t) y * W + x0 + DPM_HW] = dpm_row_max (r, vw, x0, cost);
  }
}

__kernel void
dpm_dt_cols (__global const int *levels, __global const int *jobs, int njobs, int nitems, __global const float *costs,
             __global const float *rows, __global float *dt, int dt_plane, int per_row)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  __global const int *j = jobs + dpm_find (jobs, njobs, 8, 5, gid) * 8;
  __global const int *lv = levels + j[0] * DPM_LV;
  const int W = lv[4] + 2 * DPM_HW, vh = j[3];
  __global const float *cost = costs + j[6] + DPM_W;
  __global const float *r = rows + (size_t) j[7] * dt_plane + lv[8];
  __global float *out = dt + (size_t) j[7] * dt_plane + lv[8];
  const int i = gid - j[5];
  const int y0 = (per_row ? i : i / W) - DPM_HW;
  const int ya = max (y0 - DPM_HW, 0), yb = min (y0 + DPM_HW, vh - 1);
  const int xa = per_row ? 0 : i - (y0 + DPM_HW) * W, xb = per_row ? W : xa + 1;
  /* CPU schedule: a work-item per output row, the columns innermost */
  for (int x = xa; x < xb; x++) {
    float best = -INFINITY;
    for (int y = ya; y <= yb; y++)
      best = fmax (best, r[(size_t) y * W + x] + cost[y0 - y + DPM_HW]);
    out[(size_t) (y0 + DPM_HW) * W + x] = best;
  }
}

/* --- scores --- */

/* Jobs (8 ints): component, root level, first rx, rx end, first ry, ry end,
 * first item, bits of bias + location weight (float).  comps (4 ints): first
 * part, parts, root's response plane; parts (4 ints): response plane is not
 * needed here: part index (its transform plane), anchor x - pad_x, anchor y -
 * pad_y.  A work-item per root position (rx, ry) of a job: the root's
 * response + bias + each part's transform at (2 rx + ax, 2 ry + ay) of level
 * (root level - interval); a candidate where it reaches the threshold, the
 * window (level's first window + ry * windows across + rx * components +
 * component). */
__kernel
#ifdef DPM_COMPACT
__attribute__ ((reqd_work_group_size (WGF, 1, 1)))
#endif
void
dpm_scores (__global const float *resp, int plane, __global const float *dt, int dt_plane,
            __global const int *levels, int interval, __global const int *jobs, int njobs, int nitems,
            __global const int4 *comps, __global const int4 *parts, float threshold, __global uint *cand,
            uint capacity)
{
  const int gid = get_global_id (0);
  const int live = gid < nitems;
  float s = -INFINITY;
  uint win = 0;
  if (live) {
    __global const int *j = jobs + dpm_find (jobs, njobs, 8, 6, gid) * 8;
    __global const int *lv = levels + j[1] * DPM_LV;
    __global const int *pl = levels + (j[1] - interval) * DPM_LV;
    const int nx = j[3] - j[2];
    const int i = gid - j[6], ry = j[4] + i / nx, rx = j[2] + i % nx;
    const int4 c = comps[j[0]];
    s = resp[(size_t) c.z * plane + lv[7] + (size_t) ry * lv[4] + rx] + as_float (j[7]);
    const int W = pl[4] + 2 * DPM_HW, H = pl[5] + 2 * DPM_HW;
    for (int k = 0; k < c.y; k++) {
      const int4 p = parts[c.x + k];
      const int px = 2 * rx + p.y + DPM_HW, py = 2 * ry + p.z + DPM_HW;
      s += px >= 0 && px < W && py >= 0 && py < H ? dt[(size_t) p.x * dt_plane + pl[8] + (size_t) py * W + px]
                                                  : -INFINITY;
    }
    win = (uint) (lv[9] + ry * lv[10] + rx * DPM_NCOMP + j[0]);
  }
  const int keep = live && s >= threshold;
#ifdef DPM_COMPACT
  __local int scratch[WGF];
  __local uint sbase;
  candidates_append (keep, win, s, cand, capacity, scratch, &sbase, get_local_id (0));
#else
  if (keep)
    candidate_emit (cand, capacity, win, s);
#endif
}
