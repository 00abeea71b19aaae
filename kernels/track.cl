/* Masked-SAD template search for gputrack (host side: gst/detect/track/).
 *
 * A template is TW x TH pixels of (R, G, B, m): colour and a membership
 * weight m in 0..255 (255 = surely the object).  For a search area of
 * SW x SH pixels sampled around a track's predicted position, at the track's
 * own scale, the distance at offset (x, y) is
 *
 *     D (x, y) = sum over the template of m * (|dR| + |dG| + |dB|)
 *
 * in 32-bit integers (at most 64 x 64 x 255 x 765 < 2^32).  Every search
 * finds the best offset and then the best offset at Chebyshev distance
 * >= ALT_D from it (the alternative).  Ties go to the lowest offset index
 * (y * PW + x), so that every device and the host reference agree exactly.
 *
 * Frames arrive as the decoder gives them (NV12, I420, 4-byte RGB or grey) and
 * track_convert turns them into packed (R, G, B, 0) pixels once per frame;
 * the search and the template extraction sample that plane at a track's
 * scale (nearest pixel centre, 16.16 fixed point), the same function in both
 * so that an object that did not move matches its template with D = 0.
 *
 * Build options: -D TW= -D TH= (template), -D SW= -D SH= (search area),
 * -D ALT_D= (alternative distance), -D KX= (neighbouring offsets of a row
 * each work-item computes at once); -D TILES for the tiles' kernels, else
 * the rows schedule's, so that a program holds only the local arrays of the
 * schedule it runs; -D BAND= (rows: offset rows per band of the search area
 * in local memory), -D WG= (rows: work-group size of track_search),
 * -D TCH= (tiles: template rows per chunk, TH the whole template).
 *
 * Rows (track_search): one work-group searches one template: the template
 * and a band of the search area lie in local memory, every work-item
 * computes D at some offsets, a work-group reduction finds the best and one
 * the alternative.  Register tiling (KX > 1): a work-item computes D at KX
 * neighbouring offsets of a row together; along a template row it holds a
 * window of KX + 1 area pixels in registers, so that each template pixel is
 * read and unpacked once for KX offsets and each area pixel once for
 * (nearly) KX offsets instead of once per offset.  The sums are the same
 * integers in the same order.
 *
 * Tiles (track_search_tiles + track_reduce_parts): a template's offset rows
 * in parts of rows_per_part rows, each part's area rows held whole in local
 * memory (no bands), as many work-items as the part has groups of KX
 * offsets (the work-group's size chosen by the host), the template as colour
 * words and weights in two arrays, and a pixel's |dR| + |dG| + |dB| in one
 * instruction on NVIDIA (SAD_PTX: vabsdiff4), else in integers.  A part
 * writes its best; track_reduce_parts finds each template's best among them
 * and its alternative among the other parts' bests and the distances of the
 * parts that lie near the best.  One part per template does it all in one
 * launch.  Where a template's rows and their area rows do not fit local
 * memory (64 x 64 templates searched far on a device of 32 to 48 KB), the
 * template's rows go in chunks of TCH, each offset's distance summed in
 * registers over the chunks.
 */

#ifndef TW
#define TW 32
#define TH 32
#define SW 64
#define SH 64
#define BAND 33
#define WG 256
#define ALT_D 8
#endif
#ifndef KX
#define KX 1
#endif
#ifndef TCH
#define TCH TH
#endif

#define PW (SW - TW + 1)
#define PH (SH - TH + 1)
#define BAND_ROWS (BAND + TH - 1)
/* Offsets a row holds in groups of KX, and the area's row in local memory
 * (padded so that a group at the row's end reads no further than the row). */
#define PWK ((PW + KX - 1) / KX)
#define SWP (SW + KX - 1)
/* The tiles' area rows: every group's KX offsets and, for the vector loads,
 * 4 pixels more, rounded up to whole uint4. */
#define SWT ((PWK * KX + TW + 3) / 4 * 4)
#if KX % 4 == 0 && TW % 4 == 0
#define TILE_VEC 1
#endif

/* Pixel formats of track_convert. */
#define FMT_NV12 0
#define FMT_I420 1
#define FMT_RGB4 2
#define FMT_GRAY 3

inline uchar4 yuv_to_rgb (int y, int u, int v)
{
  /* BT.601, limited range, 8-bit fixed point */
  const int c = 298 * (y - 16) + 128, d = u - 128, e = v - 128;
  const int r = (c + 409 * e) >> 8;
  const int g = (c - 100 * d - 208 * e) >> 8;
  const int b = (c + 516 * d) >> 8;
  return (uchar4) ((uchar) clamp (r, 0, 255), (uchar) clamp (g, 0, 255), (uchar) clamp (b, 0, 255), (uchar) 0);
}

/* One work-item per pixel: the frame's planes (at byte offsets off0..off2 of
 * src, rows stride0..stride2 apart) to packed (R, G, B, 0). */
__kernel void track_convert (__global const uchar *src, int format, int width, int height, int off0, int stride0,
                             int off1, int stride1, int off2, int stride2, int4 rgb, __global uchar4 *dst)
{
  const int x = get_global_id (0), y = get_global_id (1);
  if (x >= width || y >= height)
    return;
  uchar4 out;
  if (format == FMT_RGB4) {
    __global const uchar *p = src + off0 + y * stride0 + 4 * x;
    out = (uchar4) (p[rgb.x], p[rgb.y], p[rgb.z], (uchar) 0);
  } else if (format == FMT_GRAY) {
    const uchar g = src[off0 + y * stride0 + x];
    out = (uchar4) (g, g, g, (uchar) 0);
  } else {
    const int yy = src[off0 + y * stride0 + x];
    int u, v;
    if (format == FMT_NV12) {
      __global const uchar *c = src + off1 + (y >> 1) * stride1 + (x >> 1) * 2;
      u = c[0];
      v = c[1];
    } else {
      u = src[off1 + (y >> 1) * stride1 + (x >> 1)];
      v = src[off2 + (y >> 1) * stride2 + (x >> 1)];
    }
    out = yuv_to_rgb (yy, u, v);
  }
  dst[y * width + x] = out;
}

/* The frame at sample (i, j) of a grid with origin (ox, oy) and steps
 * (sx, sy), all 16.16 fixed point; the edge pixel outside the frame. */
inline uchar4 sample (__global const uchar4 *frame, int fw, int fh, int ox, int oy, int sx, int sy, int i, int j)
{
  const int x = clamp ((ox + i * sx) >> 16, 0, fw - 1);
  const int y = clamp ((oy + j * sy) >> 16, 0, fh - 1);
  return frame[y * fw + x];
}

/* Templates from the frame: work-item (p, k) writes pixel p of request k's
 * template.  A request is 6 ints: slot, ox, oy, sx, sy (16.16, the box's
 * top-left pixel centre and the step between template pixels) and the blend
 * weight a of the new appearance (0..256): t' = (t (256 - a) + f a + 128) >> 8,
 * a = 256 replacing the template.  The membership weight comes from `mask`
 * (TW x TH, the same for every template) blended likewise. */
__kernel void track_extract (__global const uchar4 *frame, int fw, int fh, __global const int *requests,
                             __global const uchar *mask, __global uchar4 *templates)
{
  const int p = get_global_id (0), k = get_global_id (1);
  if (p >= TW * TH)
    return;
  __global const int *r = requests + 6 * k;
  const int slot = r[0], a = r[5];
  const uchar4 f = sample (frame, fw, fh, r[1], r[2], r[3], r[4], p % TW, p / TW);
  __global uchar4 *t = templates + (size_t) slot * (TW * TH) + p;
  const uint4 nw = (uint4) (f.x, f.y, f.z, mask[p]);
  const uint4 old = convert_uint4 (*t);
  const uint4 mix = (old * (uint) (256 - a) + nw * (uint) a + 128u) >> 8;
  *t = convert_uchar4 (mix);
}

/* (distance, index) pairs: the smaller distance, then the smaller index. */
inline int better (uint d, int i, uint bd, int bi)
{
  return d < bd || (d == bd && i < bi);
}

/* The best pair of rd, ri [0, n) into rd[0], ri[0] (n a power of two): a
 * tree over the work-group, called by all of it once the entries are
 * written. */
inline void reduce_tree (__local uint *rd, __local int *ri, int lid, int n)
{
  barrier (CLK_LOCAL_MEM_FENCE);
  for (int s = n >> 1; s > 0; s >>= 1) {
    if (lid < s && better (rd[lid + s], ri[lid + s], rd[lid], ri[lid])) {
      rd[lid] = rd[lid + s];
      ri[lid] = ri[lid + s];
    }
    barrier (CLK_LOCAL_MEM_FENCE);
  }
}

/* The best pair over the work-group (red_* in local memory). */
inline void reduce_best (__local uint *red_d, __local int *red_i, int lid, uint d, int i)
{
  red_d[lid] = d;
  red_i[lid] = i;
  reduce_tree (red_d, red_i, lid, WG);
}

/* The distances d[0 .. KX) at offsets (px .. px + KX - 1, row y) that lie in
 * the row's PW into dm, the best of them kept in (*bd, *bi). */
__attribute__ ((always_inline)) inline void put_group (__global uint *dm, int y, int px, const uint *d, uint *bd,
                                                      int *bi)
{
#pragma unroll
  for (int k = 0; k < KX; k++)
    if (px + k < PW) {
      const int idx = y * PW + px + k;
      dm[idx] = d[k];
      if (better (d[k], idx, *bd, *bi)) {
        *bd = d[k];
        *bi = idx;
      }
    }
}

/* The alternative among the distances at offsets (px0 .. px0 + KX - 1, py)
 * that lie in the row's PW: those ALT_D or more (Chebyshev) from the best
 * (bx, by), the best of them kept in (*ad, *ai). */
inline void alt_group (__global const uint *dm, int py, int px0, int bx, int by, uint *ad, int *ai)
{
  for (int kk = 0; kk < KX && px0 + kk < PW; kk++) {
    const int px = px0 + kk;
    if (max (abs (px - bx), abs (py - by)) < ALT_D)
      continue;
    const int idx = py * PW + px;
    const uint d = dm[idx];
    if (better (d, idx, *ad, *ai)) {
      *ad = d;
      *ai = idx;
    }
  }
}

inline void write_result (__global uint *results, int k, uint bd, int bi, uint ad, int ai)
{
  __global uint *o = results + 4 * k;
  o[0] = bd;
  o[1] = (uint) bi;
  o[2] = ad;
  o[3] = ai == 0x7fffffff ? 0xffffffffu : (uint) ai;
}

/* ------------------------------------------------------------------------
 * Rows (the program without -D TILES). */
#ifndef TILES

inline uint sad3 (uchar4 u, uchar4 v)
{
  return (uint) (abs ((int) u.x - (int) v.x) + abs ((int) u.y - (int) v.y) + abs ((int) u.z - (int) v.z));
}

/* Loads the template of `slot` into local memory. */
inline void load_template (__global const uchar4 *templates, int slot, __local uchar4 *tmpl, int lid)
{
  __global const uchar4 *t = templates + (size_t) slot * (TW * TH);
  for (int i = lid; i < TW * TH; i += WG)
    tmpl[i] = t[i];
}

/* Distances at offset rows [y_begin, y_end) of a request: written to dm,
 * the best of those this work-item computed kept in (*best_d, *best_i).
 * The area's rows go through local memory a band at a time. */
__attribute__ ((always_inline)) inline void search_rows (__global const uchar4 *frame, int fw, int fh, int ox, int oy, int sx, int sy,
                         __local const uchar4 *tmpl, __local uchar4 *area, __global uint *dm, int y_begin,
                         int y_end, int lid, uint *best_d, int *best_i)
{
  uint bd = *best_d;
  int bi = *best_i;
  for (int y0 = y_begin; y0 < y_end; y0 += BAND) {
    const int rows = min (BAND, y_end - y0);
    barrier (CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < (rows + TH - 1) * SWP; i += WG)
      area[i] = sample (frame, fw, fh, ox, oy, sx, sy, i % SWP, y0 + i / SWP);
    barrier (CLK_LOCAL_MEM_FENCE);
    const int n = rows * PWK;
    for (int q = lid; q < n; q += WG) {
      const int py = q / PWK, px = (q % PWK) * KX;
#if KX == 1
      uint d = 0;
      for (int ty = 0; ty < TH; ty++) {
        __local const uchar4 *a = area + (py + ty) * SWP + px;
        __local const uchar4 *tt = tmpl + ty * TW;
        for (int tx = 0; tx < TW; tx++) {
          const uchar4 u = tt[tx];
          d += (uint) u.w * sad3 (u, a[tx]);
        }
      }
      const int idx = (y0 + py) * PW + px;
      dm[idx] = d;
      if (better (d, idx, bd, bi)) {
        bd = d;
        bi = idx;
      }
#else
      uint d[KX];
#pragma unroll
      for (int k = 0; k < KX; k++)
        d[k] = 0;
      for (int ty = 0; ty < TH; ty++) {
        __local const uchar4 *a = area + (py + ty) * SWP + px;
        __local const uchar4 *tt = tmpl + ty * TW;
        uchar4 win[KX];
#pragma unroll
        for (int k = 0; k < KX - 1; k++)
          win[k] = a[k];
#pragma unroll 4
        for (int tx = 0; tx < TW; tx++) {
          win[KX - 1] = a[tx + KX - 1];
          const uchar4 u = tt[tx];
#pragma unroll
          for (int k = 0; k < KX; k++)
            d[k] += (uint) u.w * sad3 (u, win[k]);
#pragma unroll
          for (int k = 0; k < KX - 1; k++)
            win[k] = win[k + 1];
        }
      }
      put_group (dm, y0 + py, px, d, &bd, &bi);
#endif
    }
  }
  *best_d = bd;
  *best_i = bi;
}

/* Work-group k searches request k: 5 ints, slot and the search area's grid
 * (ox, oy, sx, sy as in track_extract).  Writes 4 uints per request: best D,
 * its offset index, alternative D, its index (index -1 when no offset lies
 * ALT_D away).  `dmap` holds PW x PH distances per request (scratch, read by
 * the tests). */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
track_search (__global const uchar4 *frame, int fw, int fh, __global const int *requests,
              __global const uchar4 *templates, __global uint *dmap, __global uint *results)
{
  __local uchar4 tmpl[TW * TH];
  __local uchar4 area[SWP * BAND_ROWS];
  __local uint red_d[WG];
  __local int red_i[WG];

  const int k = get_group_id (0), lid = get_local_id (0);
  __global const int *r = requests + 5 * k;
  __global uint *dm = dmap + (size_t) k * (PW * PH);
  load_template (templates, r[0], tmpl, lid);

  uint best_d = 0xffffffffu;
  int best_i = 0x7fffffff;
  search_rows (frame, fw, fh, r[1], r[2], r[3], r[4], tmpl, area, dm, 0, PH, lid, &best_d, &best_i);

  /* best over the work-group */
  reduce_best (red_d, red_i, lid, best_d, best_i);
  const uint bd = red_d[0];
  const int bi = red_i[0];
  const int bx = bi % PW, by = bi / PW;
  barrier (CLK_LOCAL_MEM_FENCE);

  /* the alternative: offsets at Chebyshev distance >= ALT_D from the best;
   * each work-item reads back only the distances it wrote itself (the same
   * walk over bands and groups of KX offsets) */
  uint alt_d = 0xffffffffu;
  int alt_i = 0x7fffffff;
  for (int y0 = 0; y0 < PH; y0 += BAND) {
    const int n = min (BAND, PH - y0) * PWK;
    for (int q = lid; q < n; q += WG) {
      const int py = y0 + q / PWK, px0 = (q % PWK) * KX;
      alt_group (dm, py, px0, bx, by, &alt_d, &alt_i);
    }
  }
  reduce_best (red_d, red_i, lid, alt_d, alt_i);
  if (lid == 0)
    write_result (results, k, bd, bi, red_d[0], red_i[0]);
}

#else /* TILES */
/* ------------------------------------------------------------------------
 * Tiles (-D TILES). */

/* |dR| + |dG| + |dB| of two (R, G, B, 0) words. */
#ifdef SAD_PTX
inline uint sad4 (uint t, uint a)
{
  uint s;
  const uint z = 0;
  asm ("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(s) : "r"(t), "r"(a), "r"(z));
  return s;
}
#else
inline uint sad4 (uint t, uint a)
{
  return (uint) (abs ((int) (t & 255u) - (int) (a & 255u)) + abs ((int) ((t >> 8) & 255u) - (int) ((a >> 8) & 255u)) +
                 abs ((int) ((t >> 16) & 255u) - (int) ((a >> 16) & 255u)));
}
#endif

/* Adds to d the distances at the KX offsets (px .. px + KX - 1, py) of
 * template rows 0 .. nrows - 1 of `tcol`, `twt` against `area` (rows SWT
 * apart).  Along each template row a window of KX (+ 4) area pixels in
 * registers; with TILE_VEC, area and template read 4 pixels at a time. */
__attribute__ ((always_inline)) inline void tile_accumulate (__local const uint *area, __local const uint *tcol,
                                                            __local const uint *twt, int nrows, int py, int px,
                                                            uint *d)
{
  for (int ty = 0; ty < nrows; ty++) {
    __local const uint *a = area + (py + ty) * SWT + px;
    __local const uint *tc = tcol + ty * TW;
    __local const uint *tw = twt + ty * TW;
#ifdef TILE_VEC
    __local const uint4 *a4 = (__local const uint4 *) a;
    __local const uint4 *tc4 = (__local const uint4 *) tc;
    __local const uint4 *tw4 = (__local const uint4 *) tw;
    uint win[KX + 4];
#pragma unroll
    for (int j = 0; j < KX / 4; j++) {
      const uint4 v = a4[j];
      win[4 * j] = v.x;
      win[4 * j + 1] = v.y;
      win[4 * j + 2] = v.z;
      win[4 * j + 3] = v.w;
    }
#pragma unroll
    for (int c = 0; c < TW / 4; c++) {
      const uint4 v = a4[c + KX / 4];
      win[KX] = v.x;
      win[KX + 1] = v.y;
      win[KX + 2] = v.z;
      win[KX + 3] = v.w;
      const uint4 t4 = tc4[c], m4 = tw4[c];
      const uint tt[4] = {t4.x, t4.y, t4.z, t4.w};
      const uint mm[4] = {m4.x, m4.y, m4.z, m4.w};
#pragma unroll
      for (int j = 0; j < 4; j++)
#pragma unroll
        for (int k = 0; k < KX; k++)
          d[k] += mm[j] * sad4 (tt[j], win[k + j]);
#pragma unroll
      for (int k = 0; k < KX; k++)
        win[k] = win[k + 4];
    }
#else
    uint win[KX];
#pragma unroll
    for (int k = 0; k < KX - 1; k++)
      win[k] = a[k];
#pragma unroll
    for (int tx = 0; tx < TW; tx++) {
      win[KX - 1] = a[tx + KX - 1];
      const uint t = tc[tx], m = tw[tx];
#pragma unroll
      for (int k = 0; k < KX; k++)
        d[k] += m * sad4 (t, win[k]);
#pragma unroll
      for (int k = 0; k < KX - 1; k++)
        win[k] = win[k + 1];
    }
#endif
  }
}

/* The best (d, i) over the work-group of nl work-items: rd, ri hold np2
 * (the power of two >= nl) entries; the result in rd[0], ri[0]. */
inline void reduce_pairs (__local uint *rd, __local int *ri, int lid, int nl, int np2, uint d, int i)
{
  rd[lid] = d;
  ri[lid] = i;
  for (int j = lid + nl; j < np2; j += nl) {
    rd[j] = 0xffffffffu;
    ri[j] = 0x7fffffff;
  }
  reduce_tree (rd, ri, lid, np2);
}

/* Samples area rows first_row .. of a request's grid into `area` (n words,
 * rows SWT apart), the work-group's nl work-items walking it together. */
__attribute__ ((always_inline)) inline void load_area (__global const uchar4 *frame, int fw, int fh, int ox, int oy,
                                                      int sx, int sy, int first_row, int n, __local uint *area,
                                                      int lid, int nl)
{
  const int dc = nl % SWT, dr = nl / SWT;
  int col = lid % SWT, row = lid / SWT;
  for (int i = lid; i < n; i += nl) {
    area[i] = as_uint (sample (frame, fw, fh, ox, oy, sx, sy, col, first_row + row));
    col += dc;
    row += dr;
    if (col >= SWT) {
      col -= SWT;
      row++;
    }
  }
}

/* Template rows t0 .. t0 + nrows - 1 of `t` into local memory as colour
 * words and weights. */
__attribute__ ((always_inline)) inline void load_template_rows (__global const uint *t, int t0, int nrows,
                                                               __local uint *tcol, __local uint *twt, int lid, int nl)
{
  __global const uint *s = t + t0 * TW;
  for (int i = lid; i < nrows * TW; i += nl) {
    const uint v = s[i];
    tcol[i] = v & 0xffffffu;
    twt[i] = v >> 24;
  }
}

/* Work-group g searches part g % parts of request g / parts: offset rows
 * [part * rows_per_part, + rows_per_part).  Writes the distances to dmap;
 * with parts > 1 the part's best to part_best (2 words per work-group),
 * else the results as track_search.  `area4` holds at least twice the
 * work-group's size rounded up to a power of two words (the reductions
 * reuse it) and the area rows below.
 *
 * TCH == TH: the template and the part's area rows (rows_per_part + TH - 1
 * of them) sampled once into local memory; the work-items then loop over
 * the part's groups of KX offsets.
 *
 * TCH < TH (templates whose rows and area rows do not fit local memory):
 * the template's rows in chunks of TCH.  The part's groups of offsets go in
 * passes of one group per work-item; for each pass and chunk, the chunk's
 * template rows and the area rows its offsets need under them (the pass's
 * offset rows + TCH - 1) are loaded, and every work-item adds the chunk's
 * share to its KX distances, held in registers from chunk to chunk.  The
 * same integer sums as the whole template's (integer addition in another
 * grouping: bit for bit the same). */
__kernel void track_search_tiles (__global const uchar4 *frame, int fw, int fh, __global const int *requests,
                                  __global const uchar4 *templates, __global uint *dmap, __global uint *part_best,
                                  __global uint *results, int parts, int rows_per_part, __local uint4 *area4)
{
  /* (declared as uint4 so that every implementation aligns it for the
   * vector loads) */
  __local uint *area = (__local uint *) area4;
  __local uint4 tcol4[(TW * TCH + 3) / 4];
  __local uint4 twt4[(TW * TCH + 3) / 4];
  __local uint *tcol = (__local uint *) tcol4;
  __local uint *twt = (__local uint *) twt4;
  const int g = get_group_id (0), lid = get_local_id (0), nl = get_local_size (0);
  const int k = g / parts, part = g - k * parts;
  const int y_begin = part * rows_per_part, y_end = min (PH, y_begin + rows_per_part);
  __global const int *r = requests + 5 * k;
  const int ox = r[1], oy = r[2], sx = r[3], sy = r[4];
  __global const uint *t = (__global const uint *) templates + (size_t) r[0] * (TW * TH);
  const int rows = y_end - y_begin;
  const int n = rows * PWK;
  __global uint *dm = dmap + (size_t) k * (PW * PH);
  uint bd = 0xffffffffu;
  int bi = 0x7fffffff;
#if TCH == TH
  load_template_rows (t, 0, TH, tcol, twt, lid, nl);
  load_area (frame, fw, fh, ox, oy, sx, sy, y_begin, (rows + TH - 1) * SWT, area, lid, nl);
  barrier (CLK_LOCAL_MEM_FENCE);

  for (int q = lid; q < n; q += nl) {
    const int py = q / PWK, px = (q - py * PWK) * KX;
    uint d[KX];
#pragma unroll
    for (int kk = 0; kk < KX; kk++)
      d[kk] = 0;
    tile_accumulate (area, tcol, twt, TH, py, px, d);
    put_group (dm, y_begin + py, px, d, &bd, &bi);
  }
#else
  for (int base = 0; base < n; base += nl) {
    /* the work-items past the part's last group compute its distances
     * again without writing them: no branch around the chunks' work (a
     * branch on a condition the loop does not change, between barriers, is
     * one a compiler may hoist out of the loop, duplicating the barriers into
     * both sides: PoCL 3.1 then lost the distances) */
    const int q = base + lid, qc = min (q, n - 1);
    const int py = qc / PWK, px = (qc - py * PWK) * KX;
    /* the pass's offset rows [r_lo, r_hi) of the part */
    const int r_lo = base / PWK, r_hi = min (rows, (base + nl - 1) / PWK + 1);
    uint d[KX];
#pragma unroll
    for (int kk = 0; kk < KX; kk++)
      d[kk] = 0;
    for (int t0 = 0; t0 < TH; t0 += TCH) {
      const int tr = min (TCH, TH - t0);
      barrier (CLK_LOCAL_MEM_FENCE); /* the chunk before read */
      load_template_rows (t, t0, tr, tcol, twt, lid, nl);
      load_area (frame, fw, fh, ox, oy, sx, sy, y_begin + r_lo + t0, (r_hi - r_lo + tr - 1) * SWT, area, lid, nl);
      barrier (CLK_LOCAL_MEM_FENCE);
      tile_accumulate (area, tcol, twt, tr, py - r_lo, px, d);
    }
    if (q < n)
      put_group (dm, y_begin + py, px, d, &bd, &bi);
  }
#endif

  /* the part's best (the area's local memory reused) */
  int np2 = 1;
  while (np2 < nl)
    np2 <<= 1;
  __local uint *red_d = area;
  __local int *red_i = (__local int *) (area + np2);
  barrier (CLK_LOCAL_MEM_FENCE);
  reduce_pairs (red_d, red_i, lid, nl, np2, bd, bi);
  const uint wd = red_d[0];
  const int wi = red_i[0];
  if (parts > 1) {
    if (lid == 0) {
      part_best[2 * g] = wd;
      part_best[2 * g + 1] = (uint) wi;
    }
    return;
  }

  /* one part: the alternative among the distances this work-item wrote */
  const int bx = wi % PW, by = wi / PW;
  uint ad = 0xffffffffu;
  int ai = 0x7fffffff;
  for (int q = lid; q < n; q += nl) {
    const int py = q / PWK, px0 = (q - py * PWK) * KX;
    alt_group (dm, py, px0, bx, by, &ad, &ai);
  }
  barrier (CLK_LOCAL_MEM_FENCE);
  reduce_pairs (red_d, red_i, lid, nl, np2, ad, ai);
  if (lid == 0)
    write_result (results, k, wd, wi, red_d[0], red_i[0]);
}

/* Work-group k: request k's best among its parts' bests; its alternative
 * among the bests of the parts whose rows all lie ALT_D or more from the
 * best's row, and the distances of the other parts. */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
track_reduce_parts (__global const uint *dmap, __global const uint *part_best, __global uint *results, int parts,
                    int rows_per_part)
{
  __local uint red_d[WG];
  __local int red_i[WG];
  const int k = get_group_id (0), lid = get_local_id (0);
  __global const uint *pb = part_best + 2 * (size_t) parts * k;
  __global const uint *dm = dmap + (size_t) k * (PW * PH);
  uint bd = 0xffffffffu;
  int bi = 0x7fffffff;
  for (int p = lid; p < parts; p += WG)
    if (better (pb[2 * p], (int) pb[2 * p + 1], bd, bi)) {
      bd = pb[2 * p];
      bi = (int) pb[2 * p + 1];
    }
  reduce_best (red_d, red_i, lid, bd, bi);
  bd = red_d[0];
  bi = red_i[0];
  const int bx = bi % PW, by = bi / PW;
  barrier (CLK_LOCAL_MEM_FENCE);
  /* parts holding rows within ALT_D - 1 of the best's */
  const int p_lo = max (0, by - ALT_D + 1) / rows_per_part;
  const int p_hi = min (PH - 1, by + ALT_D - 1) / rows_per_part;
  uint ad = 0xffffffffu;
  int ai = 0x7fffffff;
  for (int p = lid; p < parts; p += WG)
    if ((p < p_lo || p > p_hi) && better (pb[2 * p], (int) pb[2 * p + 1], ad, ai)) {
      ad = pb[2 * p];
      ai = (int) pb[2 * p + 1];
    }
  const int i_begin = p_lo * rows_per_part * PW, i_end = min (PH, (p_hi + 1) * rows_per_part) * PW;
  for (int i = i_begin + lid; i < i_end; i += WG) {
    const int x = i % PW, y = i / PW;
    if (max (abs (x - bx), abs (y - by)) < ALT_D)
      continue;
    if (better (dm[i], i, ad, ai)) {
      ad = dm[i];
      ai = i;
    }
  }
  reduce_best (red_d, red_i, lid, ad, ai);
  if (lid == 0)
    write_result (results, k, bd, bi, red_d[0], red_i[0]);
}
#endif /* TILES */
