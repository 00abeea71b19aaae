#include "pyramid.h"

#include <algorithm>
#include <cmath>

namespace gpudetect {

int round_half_even (double v) { return static_cast<int> (std::nearbyint (v)); }

// Coefficients of OpenCV's bit-exact bilinear resize for one axis.
static void linear_exact_table (int src, int dst, std::vector<int32_t> *tab) {
  const double inv_scale = static_cast<double> (dst) / src;
  const double scale = 1.0 / inv_scale;
  for (int d = 0; d < dst; d++) {
    double f = scale * (d + 0.5) - 0.5;
    int i = static_cast<int> (std::floor (f));
    int index, c1;
    if (i < 0) {
      index = 0, c1 = 0;
    } else if (i >= src - 1) {
      index = src - 1, c1 = 0;
    } else {
      index = i;
      c1 = round_half_even ((f - i) * 256.0);
    }
    tab->push_back (index * 512 + c1);
  }
}

PyramidGeometry plan_pyramid (int iw, int ih, int ww, int wh, double scale_factor, Size2 min_size,
                              Size2 max_size) {
  PyramidGeometry g;
  g.image_width = iw;
  g.image_height = ih;
  g.window_width = ww;
  g.window_height = wh;
  if (iw <= 0 || ih <= 0 || ww <= 0 || wh <= 0 || !(scale_factor > 1.0))
    return g;
  if (max_size.width <= 0 || max_size.height <= 0)
    max_size = {iw, ih};

  std::vector<float> scales;
  for (double factor = 1;; factor *= scale_factor) {
    int w = round_half_even (ww * factor), h = round_half_even (wh * factor);
    if (w > max_size.width || h > max_size.height || w > iw || h > ih)
      break;
    if (w < min_size.width || h < min_size.height)
      continue;
    scales.push_back (static_cast<float> (factor));
  }
  if (scales.empty ())
    return g;

  // One buffer, one stride: levels placed left to right, wrapping to a new band.
  g.stride = (round_half_even (iw / scales[0]) + 31 + 31) / 32 * 32;
  int ox = 0, oy = 0, band = 0;
  if (scales.size () > 1024)
    scales.resize (1024); // the work maps hold the level in 10 bits
  for (float sc : scales) {
    PyramidLevel l;
    l.scale = sc;
    l.width = std::max (round_half_even (iw / sc), 0);
    l.height = std::max (round_half_even (ih / sc), 0);
    l.win_width = round_half_even (ww * sc);
    l.win_height = round_half_even (wh * sc);
    l.step = sc >= 2 ? 1 : 2;
    if (g.levels.empty ())
      band = l.height + 1;
    if (ox + l.width + 1 > g.stride) {
      ox = 0;
      oy += band;
      band = l.height + 1;
    }
    l.x0 = ox;
    l.y0 = oy;
    ox += l.width + 1;
    int sw = std::max (l.width + 1 - ww, 0), sh = std::max (l.height + 1 - wh, 0);
    l.nx = (sw + l.step - 1) / l.step;
    l.ny = (sh + l.step - 1) / l.step;
    l.first_window = g.total_windows;
    g.total_windows += l.nx * l.ny;
    int li = static_cast<int> (g.levels.size ());
    g.xtab_first.push_back (static_cast<int32_t> (g.xtab.size ()));
    g.ytab_first.push_back (static_cast<int32_t> (g.ytab.size ()));
    linear_exact_table (iw, l.width, &g.xtab);
    linear_exact_table (ih, l.height, &g.ytab);
    for (int y = 0; y < l.height; y++)
      g.row_map.push_back (li | (y << 10));
    g.total_rows += l.height;
    g.levels.push_back (l);
  }
  g.rows = oy + band;
  return g;
}

} // namespace gpudetect
