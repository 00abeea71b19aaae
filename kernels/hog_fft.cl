/* Linear filters correlated with the feature planes of every level of a
 * pyramid through the frequency domain (gst/detect/families/hogfilter/
 * fftconv.h): the levels' planes laid into a few patchworks of R x C
 * (patchwork.h), each patchwork's D dimension planes transformed by one
 * batched real-to-complex FFT (VkFFT), one complex multiply-add per frequency,
 * filter and dimension against the filters' spectra (made once, at the
 * patchwork size), one inverse transform per (patchwork, filter), and the
 * scores read back out at every level's valid positions.
 *
 * Every real plane is R rows of S = C + 2 floats (VkFFT's in-place
 * real-to-complex layout: after the forward transform a row holds C / 2 + 1
 * complex values).  Needs compact.cl and candidates.cl before it.
 * Build options: [-D FFT_COMPACT] (candidates appended through compact.cl's
 * wg_rank by work-groups of WGF lanes; else one atomic per candidate).
 */

/* A frame's features into the patchworks: a work-item per float of one
 * dimension plane of every patchwork (P x R x S of them), all D dimensions.
 * map: the offset, in a dimension plane of `feats`, of the feature each float
 * takes, -1 where it is zero (outside the levels, and the two floats past
 * each row).  Patchwork p's dimension d is plane p * D + d of `out`. */
__kernel void
fft_pack (__global const float *feats, int plane, int dims, __global const int *map, int nitems, int patch_floats,
          __global float *out)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  const int p = gid / patch_floats, i = gid - p * patch_floats;
  const int src = map[gid];
  __global float *o = out + (size_t) p * dims * patch_floats + i;
  if (src < 0) {
    for (int d = 0; d < dims; d++)
      o[(size_t) d * patch_floats] = 0.0f;
  } else {
    __global const float *s = feats + src;
    for (int d = 0; d < dims; d++)
      o[(size_t) d * patch_floats] = s[(size_t) d * plane];
  }
}

/* The filters at the patchwork size, once: a work-item per float of the
 * nplanes (filters x D) planes of R x S; coefficient (y, x) of a plane of
 * frows x fcols at (y, x), times `scale` (1 / (R x C): the inverse transform
 * is not normalised), zero elsewhere. */
__kernel void
fft_place_filters (__global const float *coef, int frows, int fcols, int nitems, int rows, int stride, float scale,
                   __global float *out)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  const int per = rows * stride;
  const int q = gid / per, i = gid - q * per, y = i / stride, x = i - y * stride;
  out[gid] = y < frows && x < fcols ? coef[((size_t) q * frows + y) * fcols + x] * scale : 0.0f;
}

/* The spectra of the correlations: for each patchwork p and filter f,
 * sum over dimensions of X[p][d] * conj (G[f][d]), each plane n complex
 * values.  A work-item per (frequency, group of FFT_FG filters, group of
 * FFT_PG patchworks), the frequency fastest: each filter value read once per
 * FFT_PG patchworks (the filters' spectra are the most memory read), each
 * patchwork value once per FFT_FG filters. */
#define FFT_FG 4
#define FFT_PG 4
__kernel void
fft_mac (__global const float2 *x, __global const float2 *g, __global float2 *y, int n, int dims, int filters,
         int patches, int nitems)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  const int fgroups = (filters + FFT_FG - 1) / FFT_FG;
  const int k = gid % n, r = gid / n, f0 = (r % fgroups) * FFT_FG, p0 = (r / fgroups) * FFT_PG;
  const int nf = min (FFT_FG, filters - f0), np = min (FFT_PG, patches - p0);
  float2 acc[FFT_PG][FFT_FG];
  for (int q = 0; q < FFT_PG; q++)
    for (int j = 0; j < FFT_FG; j++)
      acc[q][j] = (float2) (0.0f, 0.0f);
  for (int d = 0; d < dims; d++) {
    float2 b[FFT_FG];
    for (int j = 0; j < FFT_FG; j++)
      b[j] = j < nf ? g[((size_t) (f0 + j) * dims + d) * n + k] : (float2) (0.0f, 0.0f);
    for (int q = 0; q < FFT_PG; q++)
      if (q < np) {
        const float2 a = x[((size_t) (p0 + q) * dims + d) * n + k];
        for (int j = 0; j < FFT_FG; j++)
          acc[q][j] += (float2) (a.x * b[j].x + a.y * b[j].y, a.y * b[j].x - a.x * b[j].y);
      }
  }
  for (int q = 0; q < np; q++)
    for (int j = 0; j < nf; j++)
      y[((size_t) (p0 + q) * filters + f0 + j) * n + k] = acc[q][j];
}

/* The level of an item, from the levels' first items (component 5). */
inline int fft_level_of (__global const int8 *lv, int nlevels, int gid)
{
  int l = 0;
  while (l + 1 < nlevels && lv[l + 1].s5 <= gid)
    l++;
  return l;
}

/* The scores at every valid position of every level, each (position,
 * filter) reaching the filter's threshold appended to the candidates.
 * Level descriptors, int8: patchwork, top row and left column in it,
 * positions across, positions down, first item, first window, the level's
 * offset in the feature planes.
 * scores: patchworks x filters planes of R x S (the inverse transforms);
 * window index (first window + y * across + x) * filters + filter. */
#ifdef FFT_COMPACT
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
#else
__kernel void
#endif
fft_extract (__global const int8 *levels, int nlevels, int nitems, __global const float *scores, int rows, int stride,
             int filters, __global const float *thresholds, __global uint *cand, uint capacity)
{
  const int gid = get_global_id (0);
  const int live = gid < nitems;
  const int8 d = levels[live ? fft_level_of (levels, nlevels, gid) : 0];
  const int i = live ? gid - d.s5 : 0, wy = i / max (d.s3, 1), wx = i - wy * max (d.s3, 1);
  __global const float *base = scores + ((size_t) d.s0 * filters * rows + d.s1 + wy) * stride + d.s2 + wx;
  const size_t fplane = (size_t) rows * stride;
#ifdef FFT_COMPACT
  __local int scratch[WGF];
  __local uint sbase;
  const int lid = get_local_id (0);
#endif
  for (int f = 0; f < filters; f++) {
    const float s = live ? base[(size_t) f * fplane] : 0.0f;
    const int keep = live && s >= thresholds[f];
    const uint win = (uint) ((d.s6 + i) * filters + f);
#ifdef FFT_COMPACT
    candidates_append (keep, win, s, cand, capacity, scratch, &sbase, lid);
    barrier (CLK_LOCAL_MEM_FENCE);
#else
    if (keep)
      candidate_emit (cand, capacity, win, s);
#endif
  }
}

/* Every valid score into the caller's planes (fftconv.h, enqueue_dense): a
 * work-item per position of every level, filter f's score at plane
 * first_plane + f, at the level's feature offset, rows of (across + fcols -
 * 1) values (the feature plane's). */
__kernel void
fft_dense (__global const int8 *levels, int nlevels, int nitems, __global const float *scores, int rows, int stride,
           int filters, int fcols, __global float *out, int plane, int first_plane)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  const int8 d = levels[fft_level_of (levels, nlevels, gid)];
  const int i = gid - d.s5, wy = i / d.s3, wx = i - wy * d.s3;
  __global const float *base = scores + ((size_t) d.s0 * filters * rows + d.s1 + wy) * stride + d.s2 + wx;
  const size_t fplane = (size_t) rows * stride;
  __global float *o = out + (size_t) first_plane * plane + d.s7 + (size_t) wy * (d.s3 + fcols - 1) + wx;
  for (int f = 0; f < filters; f++)
    o[(size_t) f * plane] = base[(size_t) f * fplane];
}

/* --- the CPU schedule: a work-item per row, along the row in the innermost
 * loop (which the compiler vectorises; work-items side by side are not) --- */

/* fft_pack's work, a work-item per row of every patchwork (P x R rows; map
 * as for fft_pack). */
__kernel void
fft_pack_rows (__global const float *feats, int plane, int dims, __global const int *map, int nrows, int rows,
               int stride, __global float *out)
{
  const int gid = get_global_id (0);
  if (gid >= nrows)
    return;
  const int p = gid / rows, y = gid - p * rows;
  __global const int *m = map + (size_t) gid * stride;
  for (int d = 0; d < dims; d++) {
    __global const float *src = feats + (size_t) d * plane;
    __global float *o = out + ((size_t) (p * dims + d) * rows + y) * stride;
    for (int x = 0; x < stride; x++)
      o[x] = m[x] >= 0 ? src[m[x]] : 0.0f;
  }
}

/* fft_mac's work, a work-item per row of every (patchwork, filter) spectrum
 * (P x F x R rows of `len` complex values), summed over dimensions in place. */
__kernel void
fft_mac_rows (__global const float *x, __global const float *g, __global float *y, int len, int rows, int dims,
              int filters, int nitems)
{
  const int gid = get_global_id (0);
  if (gid >= nitems)
    return;
  const int r = gid % rows, t = gid / rows, f = t % filters, p = t / filters;
  const size_t n = (size_t) rows * len * 2; /* floats of a plane */
  __global float *o = y + (size_t) (p * filters + f) * n + (size_t) r * len * 2;
  __global const float *xa = x + (size_t) p * dims * n + (size_t) r * len * 2;
  __global const float *ga = g + (size_t) f * dims * n + (size_t) r * len * 2;
  for (int k = 0; k < len; k++) {
    o[2 * k] = xa[2 * k] * ga[2 * k] + xa[2 * k + 1] * ga[2 * k + 1];
    o[2 * k + 1] = xa[2 * k + 1] * ga[2 * k] - xa[2 * k] * ga[2 * k + 1];
  }
  for (int d = 1; d < dims; d++) {
    __global const float *a = xa + d * n, *b = ga + d * n;
    for (int k = 0; k < len; k++) {
      o[2 * k] += a[2 * k] * b[2 * k] + a[2 * k + 1] * b[2 * k + 1];
      o[2 * k + 1] += a[2 * k + 1] * b[2 * k] - a[2 * k] * b[2 * k + 1];
    }
  }
}

/* fft_extract's work, a work-item per row of positions of a level (rows:
 * int2 level descriptor index, row), one atomic per candidate. */
__kernel void
fft_extract_rows (__global const int8 *levels, __global const int2 *prows, int nrows, __global const float *scores,
                  int rows, int stride, int filters, __global const float *thresholds, __global uint *cand,
                  uint capacity)
{
  const int gid = get_global_id (0);
  if (gid >= nrows)
    return;
  const int2 pr = prows[gid];
  const int8 d = levels[pr.x];
  const int wy = pr.y;
  for (int f = 0; f < filters; f++) {
    __global const float *s = scores + ((size_t) (d.s0 * filters + f) * rows + d.s1 + wy) * stride + d.s2;
    const float th = thresholds[f];
    for (int wx = 0; wx < d.s3; wx++)
      if (s[wx] >= th)
        candidate_emit (cand, capacity, (uint) ((d.s6 + wy * d.s3 + wx) * filters + f), s[wx]);
  }
}
