/* Masked-SAD template search for gputrack (host side: gst/detect/track/).
 *
 * A template is TW x TH pixels of (R, G, B, m): colour and a membership
 * weight m in 0..255 (255 = surely the object).  For a search area of
 * SW x SH pixels sampled around a track's predicted position, at the track's
 * own scale, the distance at offset (x, y) is
 *
 *     D (x, y) = sum over the template of m * (|dR| + |dG| + |dB|)
 *
 * in 32-bit integers (at most 64 x 64 x 255 x 765 < 2^32).  One work-group
 * searches one template: the template and a band of the search area lie in
 * local memory, every work-item computes D at some offsets, a reduction finds
 * the best offset and then the best offset at Chebyshev distance >= ALT_D
 * from it (the alternative).  Ties go to the lowest offset index
 * (y * PW + x), so that every device and the host reference agree exactly.
 *
 * Frames arrive as the decoder gives them (NV12, I420, 4-byte RGB or grey) and
 * track_convert turns them into packed (R, G, B, 0) pixels once per frame;
 * the search and the template extraction sample that plane at a track's
 * scale (nearest pixel centre, 16.16 fixed point), the same function in both
 * so that an object that did not move matches its template with D = 0.
 *
 * Build options: -D TW= -D TH= (template), -D SW= -D SH= (search area),
 * -D BAND= (offset rows per band of the search area in local memory),
 * -D WG= (work-group size of track_search), -D ALT_D= (alternative distance).
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

#define PW (SW - TW + 1)
#define PH (SH - TH + 1)
#define BAND_ROWS (BAND + TH - 1)

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
  __local uchar4 area[SW * BAND_ROWS];
  __local uint red_d[WG];
  __local int red_i[WG];

  const int k = get_group_id (0), lid = get_local_id (0);
  __global const int *r = requests + 5 * k;
  const int slot = r[0], ox = r[1], oy = r[2], sx = r[3], sy = r[4];
  __global uint *dm = dmap + (size_t) k * (PW * PH);

  __global const uchar4 *t = templates + (size_t) slot * (TW * TH);
  for (int i = lid; i < TW * TH; i += WG)
    tmpl[i] = t[i];

  uint best_d = 0xffffffffu;
  int best_i = 0x7fffffff;
  for (int y0 = 0; y0 < PH; y0 += BAND) {
    const int rows = min (BAND_ROWS, SH - y0);
    barrier (CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < rows * SW; i += WG)
      area[i] = sample (frame, fw, fh, ox, oy, sx, sy, i % SW, y0 + i / SW);
    barrier (CLK_LOCAL_MEM_FENCE);
    const int n = min (BAND, PH - y0) * PW;
    for (int q = lid; q < n; q += WG) {
      const int py = q / PW, px = q % PW;
      uint d = 0;
      for (int ty = 0; ty < TH; ty++) {
        __local const uchar4 *a = area + (py + ty) * SW + px;
        __local const uchar4 *tt = tmpl + ty * TW;
        for (int tx = 0; tx < TW; tx++) {
          const uchar4 u = tt[tx], v = a[tx];
          const int sad = abs ((int) u.x - (int) v.x) + abs ((int) u.y - (int) v.y) + abs ((int) u.z - (int) v.z);
          d += (uint) u.w * (uint) sad;
        }
      }
      const int idx = (y0 + py) * PW + px;
      dm[idx] = d;
      if (better (d, idx, best_d, best_i)) {
        best_d = d;
        best_i = idx;
      }
    }
  }

  /* best over the work-group */
  red_d[lid] = best_d;
  red_i[lid] = best_i;
  barrier (CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s && better (red_d[lid + s], red_i[lid + s], red_d[lid], red_i[lid])) {
      red_d[lid] = red_d[lid + s];
      red_i[lid] = red_i[lid + s];
    }
    barrier (CLK_LOCAL_MEM_FENCE);
  }
  const uint bd = red_d[0];
  const int bi = red_i[0];
  const int bx = bi % PW, by = bi / PW;
  barrier (CLK_LOCAL_MEM_FENCE);

  /* the alternative: offsets at Chebyshev distance >= ALT_D from the best;
   * each work-item reads back only the distances it wrote itself */
  uint alt_d = 0xffffffffu;
  int alt_i = 0x7fffffff;
  for (int y0 = 0; y0 < PH; y0 += BAND) {
    const int n = min (BAND, PH - y0) * PW;
    for (int q = lid; q < n; q += WG) {
      const int py = y0 + q / PW, px = q % PW;
      if (max (abs (px - bx), abs (py - by)) < ALT_D)
        continue;
      const int idx = py * PW + px;
      const uint d = dm[idx];
      if (better (d, idx, alt_d, alt_i)) {
        alt_d = d;
        alt_i = idx;
      }
    }
  }
  red_d[lid] = alt_d;
  red_i[lid] = alt_i;
  barrier (CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s && better (red_d[lid + s], red_i[lid + s], red_d[lid], red_i[lid])) {
      red_d[lid] = red_d[lid + s];
      red_i[lid] = red_i[lid + s];
    }
    barrier (CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    __global uint *o = results + 4 * k;
    o[0] = bd;
    o[1] = (uint) bi;
    o[2] = red_d[0];
    o[3] = red_i[0] == 0x7fffffff ? 0xffffffffu : (uint) red_i[0];
  }
}
