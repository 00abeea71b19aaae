#include "pyramid.h"

#include <algorithm>
#include <cmath>

namespace gpudetect {

int round_half_even (double v) { return static_cast<int> (std::nearbyint (v)); }

// Coefficients of OpenCV's bit-exact bilinear resize for one axis, at the
// factor inv_scale (cv::resize: dst / src where it is given the size, the
// factor itself where it is given that).
void linear_exact_table (int src, int dst, double inv_scale, std::vector<int32_t> *tab) {
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

namespace {

// A level before packing, and the factors its resampling tables are made at.
struct Planned {
  PyramidLevel level;
  double inv_x = 1, inv_y = 1;
};

// One buffer, one stride: levels' planes placed left to right, wrapping to a
// new band as tall as the tallest plane in it; window indices, resampling
// tables and the row work map.  cell 0: a plane is the level's integral,
// (width + 1) x (height + 1); else the level in cells of cell x cell pixels,
// (width / cell) x (height / cell).
// Places g's levels' planes (x0, y0, first_window), numbers its windows and
// makes the row work map; g->stride, rows, total_windows and total_rows.
void place (PyramidGeometry *g) {
  const int cell = g->cell;
  auto plane_w = [cell] (const PyramidLevel &l) { return cell ? l.width / cell : l.width + 1; };
  auto plane_h = [cell] (const PyramidLevel &l) { return cell ? l.height / cell : l.height + 1; };
  int widest = 0;
  for (const PyramidLevel &l : g->levels)
    widest = std::max (widest, plane_w (l));
  g->stride = cell ? (widest + 31) / 32 * 32 : (widest + 30 + 31) / 32 * 32; // integrals: 31 spare columns
  g->total_windows = g->total_rows = 0;
  g->row_map.clear ();
  int ox = 0, oy = 0, band = 0;
  for (size_t li = 0; li < g->levels.size (); li++) {
    PyramidLevel &l = g->levels[li];
    if (ox + plane_w (l) > g->stride) {
      ox = 0;
      oy += band;
      band = 0;
    }
    band = std::max (band, plane_h (l));
    l.x0 = ox;
    l.y0 = oy;
    ox += plane_w (l);
    l.first_window = g->total_windows;
    g->total_windows += l.nx * l.ny;
    for (int y = 0; y < l.height; y++)
      g->row_map.push_back (static_cast<int32_t> (li) | (y << 10));
    g->total_rows += l.height;
  }
  g->rows = oy + band;
}

void pack (PyramidGeometry *g, const std::vector<Planned> &levels, int cell = 0) {
  if (levels.empty ())
    return;
  g->cell = cell;
  for (const Planned &p : levels) {
    g->xtab_first.push_back (static_cast<int32_t> (g->xtab.size ()));
    g->ytab_first.push_back (static_cast<int32_t> (g->ytab.size ()));
    linear_exact_table (g->image_width, p.level.width, p.inv_x, &g->xtab);
    linear_exact_table (g->image_height, p.level.height, p.inv_y, &g->ytab);
    g->levels.push_back (p.level);
  }
  place (g);
}

} // namespace

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

  if (scales.size () > 1024)
    scales.resize (1024); // the work maps hold the level in 10 bits
  std::vector<Planned> levels;
  for (float sc : scales) {
    Planned p;
    PyramidLevel &l = p.level;
    l.scale = sc;
    l.width = std::max (round_half_even (iw / sc), 0);
    l.height = std::max (round_half_even (ih / sc), 0);
    l.win_width = round_half_even (ww * sc);
    l.win_height = round_half_even (wh * sc);
    l.step = sc >= 2 ? 1 : 2;
    int sw = std::max (l.width + 1 - ww, 0), sh = std::max (l.height + 1 - wh, 0);
    l.nx = (sw + l.step - 1) / l.step;
    l.ny = (sh + l.step - 1) / l.step;
    p.inv_x = static_cast<double> (l.width) / iw;
    p.inv_y = static_cast<double> (l.height) / ih;
    levels.push_back (p);
  }
  pack (&g, levels);
  return g;
}

PyramidGeometry plan_pyramid_xobjdetect (int iw, int ih, int ww, int wh, double scale_factor, Size2 min_size,
                                         Size2 max_size) {
  PyramidGeometry g;
  g.image_width = iw;
  g.image_height = ih;
  g.window_width = ww;
  g.window_height = wh;
  const float factor = static_cast<float> (scale_factor);
  if (iw <= 0 || ih <= 0 || ww <= 0 || wh <= 0 || !(factor > 1.0f))
    return g;
  const int kStep = 4; // WaldBoost::detect
  std::vector<Planned> levels;
  for (float s = 0.2f; s < 1.2f && levels.size () < 1024; s *= factor) {
    Planned p;
    PyramidLevel &l = p.level;
    l.scale = 1.0f / s;
    l.resize = s;
    // cv::resize (img, out, Size (), s, s, INTER_LINEAR_EXACT)
    l.width = round_half_even (iw * static_cast<double> (s));
    l.height = round_half_even (ih * static_cast<double> (s));
    if (l.width <= 0 || l.height <= 0)
      continue; // OpenCV asserts on an empty level
    l.win_width = static_cast<int> (ww / s);
    l.win_height = static_cast<int> (wh / s);
    if (l.win_width < min_size.width || l.win_height < min_size.height)
      continue;
    if (max_size.width > 0 && max_size.height > 0 &&
        (l.win_width > max_size.width || l.win_height > max_size.height))
      continue;
    l.step = kStep;
    // for (r = 0; r + 24 < rows; r += step)
    l.nx = l.width > ww ? (l.width - ww - 1) / kStep + 1 : 0;
    l.ny = l.height > wh ? (l.height - wh - 1) / kStep + 1 : 0;
    const bool copy = l.width == iw && l.height == ih; // cv::resize copies then
    p.inv_x = copy ? 1.0 : static_cast<double> (s);
    p.inv_y = copy ? 1.0 : static_cast<double> (s);
    levels.push_back (p);
  }
  pack (&g, levels);
  return g;
}

PyramidGeometry plan_pyramid_octaves (int iw, int ih, int ww, int wh, int levels_per_octave, int cell,
                                      Size2 min_size, Size2 max_size) {
  PyramidGeometry g;
  g.image_width = iw;
  g.image_height = ih;
  g.window_width = ww;
  g.window_height = wh;
  if (iw <= 0 || ih <= 0 || ww <= 0 || wh <= 0 || levels_per_octave <= 0 || cell <= 0 || ww % cell || wh % cell)
    return g;
  const int cw = ww / cell, ch = wh / cell;
  std::vector<Planned> levels;
  for (int k = 0; levels.size () < 1024; k++) {
    const double s = std::exp2 (static_cast<double> (k) / levels_per_octave);
    Planned p;
    PyramidLevel &l = p.level;
    l.scale = static_cast<float> (s);
    l.width = round_half_even (iw / s);
    l.height = round_half_even (ih / s);
    if (l.width / cell < cw || l.height / cell < ch)
      break;
    l.win_width = round_half_even (ww * s);
    l.win_height = round_half_even (wh * s);
    if (max_size.width > 0 && max_size.height > 0 &&
        (l.win_width > max_size.width || l.win_height > max_size.height))
      break;
    if (l.win_width < min_size.width || l.win_height < min_size.height)
      continue;
    l.step = cell;
    l.nx = l.width / cell - cw + 1;
    l.ny = l.height / cell - ch + 1;
    p.inv_x = static_cast<double> (l.width) / iw;
    p.inv_y = static_cast<double> (l.height) / ih;
    levels.push_back (p);
  }
  pack (&g, levels, cell);
  return g;
}

PyramidGeometry merge_region_plans (int image_width, int image_height, const std::vector<Region> &regions,
                                    const std::vector<PyramidGeometry> &plans, const std::vector<Region> *sources) {
  PyramidGeometry g;
  g.image_width = image_width;
  g.image_height = image_height;
  g.regions = regions;
  g.sources = sources ? *sources : regions;
  for (size_t r = 0; r < plans.size () && r < regions.size (); r++) {
    const PyramidGeometry &p = plans[r];
    if (p.levels.empty ())
      continue;
    if (g.levels.size () + p.levels.size () > 1024) { // the work maps hold the level in 10 bits
      g.regions_left_out++;
      continue;
    }
    g.window_width = p.window_width;
    g.window_height = p.window_height;
    g.cell = p.cell;
    for (size_t li = 0; li < p.levels.size (); li++) {
      PyramidLevel l = p.levels[li];
      l.region = static_cast<int> (r);
      g.xtab_first.push_back (static_cast<int32_t> (g.xtab.size ()));
      g.ytab_first.push_back (static_cast<int32_t> (g.ytab.size ()));
      // the region's tables, read at its offset in the frame: an entry is
      // source index * 512 + weight
      const size_t x0 = p.xtab_first[li], x1 = li + 1 < p.levels.size () ? p.xtab_first[li + 1] : p.xtab.size ();
      const size_t y0 = p.ytab_first[li], y1 = li + 1 < p.levels.size () ? p.ytab_first[li + 1] : p.ytab.size ();
      for (size_t i = x0; i < x1; i++)
        g.xtab.push_back (p.xtab[i] + g.sources[r].x * 512);
      for (size_t i = y0; i < y1; i++)
        g.ytab.push_back (p.ytab[i] + g.sources[r].y * 512);
      g.levels.push_back (l);
    }
  }
  if (!g.levels.empty ())
    place (&g);
  return g;
}

PyramidGeometry feature_geometry (int image_width, int image_height, Size2 window, std::vector<PyramidLevel> levels) {
  PyramidGeometry g;
  g.image_width = image_width;
  g.image_height = image_height;
  g.window_width = window.width;
  g.window_height = window.height;
  int first = 0;
  for (PyramidLevel &l : levels) {
    l.win_width = l.win_width ? l.win_width : window.width;
    l.win_height = l.win_height ? l.win_height : window.height;
    l.first_window = first;
    first += l.nx * l.ny;
  }
  g.levels = std::move (levels);
  g.total_windows = first;
  return g;
}

} // namespace gpudetect
