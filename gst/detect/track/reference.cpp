#include "reference.h"

#include <algorithm>
#include <cstring>

namespace gpudetect {
namespace track {

namespace reference {

static inline uint8_t clamp8 (int v) { return static_cast<uint8_t> (std::clamp (v, 0, 255)); }

std::vector<uint8_t> convert (const ColorFrame &f) {
  std::vector<uint8_t> out (static_cast<size_t> (f.width) * f.height * 4);
  const cl_int4 o = rgb_offsets (f.format);
  for (int y = 0; y < f.height; y++)
    for (int x = 0; x < f.width; x++) {
      uint8_t *d = &out[(static_cast<size_t> (y) * f.width + x) * 4];
      if (f.format == ColorFormat::Gray8) {
        d[0] = d[1] = d[2] = f.planes[0][static_cast<size_t> (y) * f.strides[0] + x];
        d[3] = 0;
        continue;
      }
      if (f.format != ColorFormat::Nv12 && f.format != ColorFormat::I420) {
        const uint8_t *p = f.planes[0] + static_cast<size_t> (y) * f.strides[0] + 4 * x;
        d[0] = p[o.s[0]];
        d[1] = p[o.s[1]];
        d[2] = p[o.s[2]];
        d[3] = 0;
        continue;
      }
      const int yy = f.planes[0][static_cast<size_t> (y) * f.strides[0] + x];
      int u, v;
      if (f.format == ColorFormat::Nv12) {
        const uint8_t *c = f.planes[1] + static_cast<size_t> (y >> 1) * f.strides[1] + (x >> 1) * 2;
        u = c[0];
        v = c[1];
      } else {
        u = f.planes[1][static_cast<size_t> (y >> 1) * f.strides[1] + (x >> 1)];
        v = f.planes[2][static_cast<size_t> (y >> 1) * f.strides[2] + (x >> 1)];
      }
      const int c = 298 * (yy - 16) + 128, dd = u - 128, e = v - 128;
      d[0] = clamp8 ((c + 409 * e) >> 8);
      d[1] = clamp8 ((c - 100 * dd - 208 * e) >> 8);
      d[2] = clamp8 ((c + 516 * dd) >> 8);
      d[3] = 0;
    }
  return out;
}

static inline const uint8_t *sample (const uint8_t *rgbx, int fw, int fh, const Grid &g, int i, int j) {
  const int x = std::clamp ((g.ox + i * g.sx) >> 16, 0, fw - 1);
  const int y = std::clamp ((g.oy + j * g.sy) >> 16, 0, fh - 1);
  return rgbx + (static_cast<size_t> (y) * fw + x) * 4;
}

std::vector<uint8_t> extract (const uint8_t *rgbx, int fw, int fh, const Grid &grid, const Geometry &g,
                              const std::vector<uint8_t> &mask) {
  std::vector<uint8_t> t (static_cast<size_t> (g.template_w) * g.template_h * 4);
  for (int j = 0; j < g.template_h; j++)
    for (int i = 0; i < g.template_w; i++) {
      const uint8_t *p = sample (rgbx, fw, fh, grid, i, j);
      uint8_t *d = &t[(static_cast<size_t> (j) * g.template_w + i) * 4];
      d[0] = p[0];
      d[1] = p[1];
      d[2] = p[2];
      d[3] = mask[static_cast<size_t> (j) * g.template_w + i];
    }
  return t;
}

void search (const uint8_t *rgbx, int fw, int fh, const uint8_t *tmpl, const Grid &grid, const Geometry &g,
             std::vector<uint32_t> *dmap, Match *m) {
  const int PW = g.positions_w (), PH = g.positions_h ();
  std::vector<uint8_t> area (static_cast<size_t> (g.search_w) * g.search_h * 4);
  for (int j = 0; j < g.search_h; j++)
    for (int i = 0; i < g.search_w; i++)
      std::memcpy (&area[(static_cast<size_t> (j) * g.search_w + i) * 4], sample (rgbx, fw, fh, grid, i, j), 4);
  dmap->assign (static_cast<size_t> (PW) * PH, 0);
  uint32_t bd = UINT32_MAX;
  int bi = 0;
  for (int py = 0; py < PH; py++)
    for (int px = 0; px < PW; px++) {
      uint32_t d = 0;
      for (int ty = 0; ty < g.template_h; ty++) {
        const uint8_t *t = tmpl + static_cast<size_t> (ty) * g.template_w * 4;
        const uint8_t *a = &area[((static_cast<size_t> (py) + ty) * g.search_w + px) * 4];
        for (int tx = 0; tx < g.template_w; tx++, t += 4, a += 4)
          d += t[3] * static_cast<uint32_t> (std::abs (t[0] - a[0]) + std::abs (t[1] - a[1]) + std::abs (t[2] - a[2]));
      }
      (*dmap)[static_cast<size_t> (py) * PW + px] = d;
      if (d < bd) { // row-major scan: the first of equal distances has the lowest index
        bd = d;
        bi = py * PW + px;
      }
    }
  const int bx = bi % PW, by = bi / PW;
  uint32_t ad = UINT32_MAX;
  int ai = -1;
  for (int py = 0; py < PH; py++)
    for (int px = 0; px < PW; px++) {
      if (std::max (std::abs (px - bx), std::abs (py - by)) < g.alt_distance)
        continue;
      const uint32_t d = (*dmap)[static_cast<size_t> (py) * PW + px];
      if (ai < 0 || d < ad) {
        ad = d;
        ai = py * PW + px;
      }
    }
  m->best = bd;
  m->best_x = bx;
  m->best_y = by;
  m->alt = ad;
  m->alt_x = ai < 0 ? -1 : ai % PW;
  m->alt_y = ai < 0 ? -1 : ai / PW;
}

} // namespace reference

} // namespace track
} // namespace gpudetect
