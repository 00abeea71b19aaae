#include "dpm.h"

#include "core/orientation.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace gpudetect {

namespace {

int cv_round (double v) { return static_cast<int> (std::nearbyint (v)); } // cvRound: half to even

constexpr double kInf = std::numeric_limits<double>::infinity ();

} // namespace

DpmPlan plan_dpm (int width, int height, const DpmModel &m) {
  DpmPlan p;
  p.width = width;
  p.height = height;
  p.interval = m.interval;
  p.pad_x = m.pad_x + 1;
  p.pad_y = m.pad_y + 1;
  if (width < 1 || height < 1)
    return p;
  const double sf = std::pow (2.0, 1.0 / m.interval);
  const double smallest = std::min (static_cast<double> (width), static_cast<double> (height));
  p.max_scale = 1 + static_cast<int> (std::floor (std::log (smallest / static_cast<float> (m.sbin * 5.0)) / std::log (sf)));
  if (p.max_scale < m.interval) // cv::dpm: "The image is too small to create a pyramid"
    return p;
  // images: the first octave from the frame, each further one halving the
  // image an octave up
  for (int i = 0; i < p.max_scale; i++) {
    DpmImage im;
    if (i < m.interval) {
      const double s = 1.0 / std::pow (sf, i);
      im.width = cv_round (width * s);
      im.height = cv_round (height * s);
    } else {
      const DpmImage &from = p.images[i - m.interval];
      im.source = i - m.interval;
      im.generation = from.generation + 1;
      im.width = cv_round (from.width * 0.5);
      im.height = cv_round (from.height * 0.5);
      im.area = from.width == 2 * im.width && from.height == 2 * im.height;
    }
    im.offset = p.pixels;
    p.pixels += static_cast<size_t> (im.width) * im.height;
    p.generations = std::max (p.generations, im.generation + 1);
    p.images.push_back (im);
  }
  p.levels.resize (p.max_scale + m.interval);
  for (int i = 0; i < m.interval; i++) {
    const double s = 1.0 / std::pow (sf, i);
    DpmLevel &twice = p.levels[i], &root = p.levels[i + m.interval];
    twice.image = root.image = i;
    twice.cell = m.sbin / 2;
    twice.scale = 2 * s;
    root.cell = m.sbin;
    root.scale = s;
    root.computed = i + m.interval <= p.max_scale;
  }
  for (int j = 2 * m.interval; j < static_cast<int> (p.levels.size ()); j++) {
    DpmLevel &l = p.levels[j];
    l.image = j - m.interval;
    l.cell = m.sbin;
    l.scale = p.levels[j - m.interval].scale * 0.5;
  }
  for (DpmLevel &l : p.levels) {
    // offsets also for levels left empty, so that they never decrease
    l.cell_offset = p.cells;
    l.feat_offset = p.feat_plane;
    l.dt_offset = p.dt_plane;
    if (!l.computed)
      continue;
    const DpmImage &im = p.images[l.image];
    l.cells_x = cv_round (static_cast<double> (im.width) / l.cell);
    l.cells_y = cv_round (static_cast<double> (im.height) / l.cell);
    l.feat_w = std::max (l.cells_x - 2, 0) + 2 * p.pad_x;
    l.feat_h = std::max (l.cells_y - 2, 0) + 2 * p.pad_y;
    p.cells += static_cast<size_t> (l.cells_x) * l.cells_y;
    p.feat_plane += static_cast<size_t> (l.feat_w) * l.feat_h;
    p.dt_plane += static_cast<size_t> (l.feat_w + 2 * kDpmHalfWindow) * (l.feat_h + 2 * kDpmHalfWindow);
  }
  return p;
}

DpmRange dpm_root_range (const DpmModel &m, const DpmPlan &p, int level, int comp) {
  DpmRange r;
  if (level < p.interval || level >= static_cast<int> (p.levels.size ()) || !p.levels[level].computed)
    return r;
  const DpmLevel &l = p.levels[level];
  const DpmFilter &f = m.components[comp].root;
  const int mx = (m.pad_x + 1) / 2, my = (m.pad_y + 1) / 2; // ceil (pad / 2.0)
  r.x0 = mx;
  r.x1 = l.feat_w - f.cols + 1 - mx;
  r.y0 = my;
  r.y1 = l.feat_h - f.rows + 1 - my;
  if (r.x1 <= r.x0 || r.y1 <= r.y0)
    r = {};
  return r;
}

std::vector<DpmTap> dpm_linear_taps (int src, int dst, bool columns) {
  const double scale = 1.0 / (static_cast<double> (dst) / src);
  std::vector<DpmTap> taps (dst);
  int xmax = dst;
  for (int d = 0; d < dst; d++) {
    float f = static_cast<float> ((d + 0.5) * scale - 0.5);
    int i = static_cast<int> (std::floor (f));
    f -= i;
    if (columns) {
      if (i < 0)
        f = 0, i = 0;
      if (i + 1 >= src) {
        xmax = std::min (xmax, d);
        if (i >= src - 1)
          f = 0, i = src - 1;
      }
    }
    taps[d].index = i;
    taps[d].w0 = 1.f - f;
    taps[d].w1 = f;
  }
  if (columns) // from the first column reading past the source on, one sample (its weight 1)
    for (int d = xmax; d < dst; d++)
      taps[d].two = false;
  return taps;
}

// --- host reference ---

std::vector<double> dpm_resize (const std::vector<double> &src, int sw, int sh, int dw, int dh) {
  if (sw == dw && sh == dh)
    return src;
  std::vector<double> dst (static_cast<size_t> (dw) * dh);
  const double scale_x = 1.0 / (static_cast<double> (dw) / sw), scale_y = 1.0 / (static_cast<double> (dh) / sh);
  const int ix = cv_round (scale_x), iy = cv_round (scale_y);
  if (std::fabs (scale_x - ix) < DBL_EPSILON && std::fabs (scale_y - iy) < DBL_EPSILON && ix == 2 && iy == 2) {
    // INTER_AREA's fast path: ((a + b) + c) + d, times 0.25
    for (int y = 0; y < dh; y++)
      for (int x = 0; x < dw; x++) {
        const double *s = &src[static_cast<size_t> (2 * y) * sw + 2 * x];
        double sum = 0;
        sum += s[0] + s[1] + s[sw] + s[sw + 1];
        dst[static_cast<size_t> (y) * dw + x] = sum * static_cast<double> (0.25f);
      }
    return dst;
  }
  // INTER_LINEAR: float coefficients, double sums
  const std::vector<DpmTap> cols = dpm_linear_taps (sw, dw, true), rows = dpm_linear_taps (sh, dh, false);
  std::vector<double> h0 (dw), h1 (dw);
  auto hrow = [&] (int sy, std::vector<double> *out) {
    const double *s = &src[static_cast<size_t> (std::clamp (sy, 0, sh - 1)) * sw];
    for (int dx = 0; dx < dw; dx++) {
      const DpmTap &t = cols[dx];
      (*out)[dx] = t.two ? s[t.index] * static_cast<double> (t.w0) + s[t.index + 1] * static_cast<double> (t.w1)
                         : s[t.index] * 1.0;
    }
  };
  for (int dy = 0; dy < dh; dy++) {
    hrow (rows[dy].index, &h0);
    hrow (rows[dy].index + 1, &h1);
    const double b0 = rows[dy].w0, b1 = rows[dy].w1;
    for (int dx = 0; dx < dw; dx++)
      dst[static_cast<size_t> (dy) * dw + dx] = h0[dx] * b0 + h1[dx] * b1;
  }
  return dst;
}

std::vector<double> dpm_hog (const std::vector<double> &img, int w, int h, int cell, int pad_x, int pad_y,
                             int *feat_w, int *feat_h) {
  const int bw = cv_round (static_cast<double> (w) / cell), bh = cv_round (static_cast<double> (h) / cell);
  const int ow = std::max (bw - 2, 0) + 2 * pad_x, oh = std::max (bh - 2, 0) + 2 * pad_y;
  *feat_w = ow;
  *feat_h = oh;
  std::vector<double> hist (static_cast<size_t> (bw) * bh * 18, 0.0), norm (static_cast<size_t> (bw) * bh, 0.0);
  std::vector<double> feat (static_cast<size_t> (ow) * oh * kDpmDims, 0.0);
  const int vis_w = bw * cell, vis_h = bh * cell;
  for (int y = 1; y < vis_h - 1; y++)
    for (int x = 1; x < vis_w - 1; x++) {
      const int cx = std::min (x, w - 2), cy = std::min (y, h - 2);
      const double *s = &img[static_cast<size_t> (cy) * w + cx];
      const double dy = s[w] - s[-w], dx = s[1] - s[-1];
      double v = dx * dx + dy * dy;
      const int o = snap_orientation (dx, dy);
      const double yp = (y + 0.5) / cell - 0.5, xp = (x + 0.5) / cell - 0.5;
      const int iyp = static_cast<int> (std::floor (yp)), ixp = static_cast<int> (std::floor (xp));
      const double vy0 = yp - iyp, vx0 = xp - ixp, vy1 = 1.0 - vy0, vx1 = 1.0 - vx0;
      v = std::sqrt (v);
      auto at = [&] (int by, int bx) -> double & { return hist[(static_cast<size_t> (by) * bw + bx) * 18 + o]; };
      if (iyp >= 0 && ixp >= 0)
        at (iyp, ixp) += vy1 * vx1 * v;
      if (iyp >= 0 && ixp + 1 < bw)
        at (iyp, ixp + 1) += vx0 * vy1 * v;
      if (iyp + 1 < bh && ixp >= 0)
        at (iyp + 1, ixp) += vy0 * vx1 * v;
      if (iyp + 1 < bh && ixp + 1 < bw)
        at (iyp + 1, ixp + 1) += vy0 * vx0 * v;
    }
  for (size_t c = 0; c < norm.size (); c++) {
    const double *s = &hist[c * 18];
    double e = 0;
    for (int o = 0; o < 9; o++)
      e += (s[o] + s[o + 9]) * (s[o] + s[o + 9]);
    norm[c] = e;
  }
  auto blocks = [&] (int by, int bx) {
    const double *p = &norm[static_cast<size_t> (by) * bw + bx];
    return 1.0f / std::sqrt (p[0] + p[1] + p[bw] + p[bw + 1] + 0.0001);
  };
  for (int y = pad_y; y < oh - pad_y; y++)
    for (int x = pad_x; x < ow - pad_x; x++) {
      double *dst = &feat[(static_cast<size_t> (y) * ow + x) * kDpmDims];
      const int by = y - pad_y, bx = x - pad_x;
      const double n1 = blocks (by + 1, bx + 1), n2 = blocks (by, bx + 1), n3 = blocks (by + 1, bx),
                   n4 = blocks (by, bx);
      const double *src = &hist[(static_cast<size_t> (by + 1) * bw + bx + 1) * 18];
      double t1 = 0, t2 = 0, t3 = 0, t4 = 0;
      for (int o = 0; o < 18; o++) {
        const double val = src[o];
        const double h1 = std::min (val * n1, 0.2), h2 = std::min (val * n2, 0.2), h3 = std::min (val * n3, 0.2),
                     h4 = std::min (val * n4, 0.2);
        *dst++ = 0.5 * (h1 + h2 + h3 + h4);
        t1 += h1;
        t2 += h2;
        t3 += h3;
        t4 += h4;
      }
      for (int o = 0; o < 9; o++) {
        const double sum = src[o] + src[o + 9];
        const double h1 = std::min (sum * n1, 0.2), h2 = std::min (sum * n2, 0.2), h3 = std::min (sum * n3, 0.2),
                     h4 = std::min (sum * n4, 0.2);
        *dst++ = 0.5 * (h1 + h2 + h3 + h4);
      }
      *dst++ = 0.2357 * t1;
      *dst++ = 0.2357 * t2;
      *dst++ = 0.2357 * t3;
      *dst++ = 0.2357 * t4;
      *dst = 0;
    }
  for (int y = 0; y < oh; y++)
    for (int x = 0; x < ow; x++)
      if (y < pad_y || y >= oh - pad_y || x < pad_x || x >= ow - pad_x)
        feat[(static_cast<size_t> (y) * ow + x) * kDpmDims + kDpmDims - 1] = 1;
  return feat;
}

std::vector<std::vector<double>> dpm_features (const DpmPlan &p, const uint8_t *grey, int stride) {
  std::vector<double> frame (static_cast<size_t> (p.width) * p.height);
  for (int y = 0; y < p.height; y++)
    for (int x = 0; x < p.width; x++)
      frame[static_cast<size_t> (y) * p.width + x] = grey[static_cast<size_t> (y) * stride + x];
  std::vector<std::vector<double>> images (p.images.size ());
  for (size_t i = 0; i < p.images.size (); i++) {
    const DpmImage &im = p.images[i];
    if (im.source < 0)
      images[i] = dpm_resize (frame, p.width, p.height, im.width, im.height);
    else
      images[i] = dpm_resize (images[im.source], p.images[im.source].width, p.images[im.source].height, im.width,
                              im.height);
  }
  std::vector<std::vector<double>> feats (p.levels.size ());
  for (size_t li = 0; li < p.levels.size (); li++) {
    const DpmLevel &l = p.levels[li];
    if (!l.computed)
      continue;
    const DpmImage &im = p.images[l.image];
    int fw, fh;
    feats[li] = dpm_hog (images[l.image], im.width, im.height, l.cell, p.pad_x, p.pad_y, &fw, &fh);
  }
  return feats;
}

namespace {

// cv::dpm's correlation of a filter at (x, y) of a plane of w cells across:
// columns of the matrix (cell, feature) outer, rows inner.
double correlate (const std::vector<double> &feat, int w, const DpmFilter &f, int x, int y) {
  double v = 0;
  for (int xp = 0; xp < f.cols * kDpmDims; xp++)
    for (int yp = 0; yp < f.rows; yp++)
      v += f.coef[static_cast<size_t> (yp) * f.cols * kDpmDims + xp] *
           feat[(static_cast<size_t> (y + yp) * w + x) * kDpmDims + xp];
  return v;
}

} // namespace

std::vector<DpmWindow> dpm_reference (const DpmModel &m, const DpmPlan &p,
                                      const std::vector<std::vector<double>> &features, double threshold,
                                      int half_window) {
  std::vector<DpmWindow> out;
  const int nlevels = static_cast<int> (p.levels.size ());
  for (int c = 0; c < static_cast<int> (m.components.size ()); c++) {
    const DpmComponent &comp = m.components[c];
    for (int r = p.interval; r < nlevels; r++) {
      const DpmRange range = dpm_root_range (m, p, r, c);
      if (range.x1 <= range.x0)
        continue;
      const DpmLevel &rl = p.levels[r], &pl = p.levels[r - p.interval];
      // the parts' responses at every position of the part level
      std::vector<std::vector<double>> conv (comp.parts.size ());
      std::vector<int> vw (comp.parts.size ()), vh (comp.parts.size ());
      for (size_t k = 0; k < comp.parts.size (); k++) {
        const DpmFilter &f = comp.parts[k].filter;
        vw[k] = pl.feat_w - f.cols + 1;
        vh[k] = pl.feat_h - f.rows + 1;
        if (vw[k] <= 0 || vh[k] <= 0)
          continue;
        conv[k].resize (static_cast<size_t> (vw[k]) * vh[k]);
        for (int y = 0; y < vh[k]; y++)
          for (int x = 0; x < vw[k]; x++)
            conv[k][static_cast<size_t> (y) * vw[k] + x] = correlate (features[r - p.interval], pl.feat_w, f, x, y);
      }
      // unbounded: the separable transform, rows then columns, over every
      // position (for comparison with cv::dpm's window)
      std::vector<std::vector<double>> dt (comp.parts.size ());
      std::vector<int> dx0 (comp.parts.size ()), dy0 (comp.parts.size ()), dw (comp.parts.size ());
      if (half_window < 0)
        for (size_t k = 0; k < comp.parts.size (); k++) {
          if (conv[k].empty ())
            continue;
          const DpmPart &part = comp.parts[k];
          // anchors reach from 2 x0 + ax - pad to 2 (x1 - 1) + ax - pad
          dx0[k] = 2 * range.x0 + part.anchor_x - m.pad_x;
          dy0[k] = 2 * range.y0 + part.anchor_y - m.pad_y;
          dw[k] = 2 * (range.x1 - range.x0);
          const int dh = 2 * (range.y1 - range.y0);
          std::vector<double> rows (static_cast<size_t> (dw[k]) * vh[k]);
          for (int y = 0; y < vh[k]; y++)
            for (int i = 0; i < dw[k]; i++) {
              const int px = dx0[k] + i;
              double best = -kInf;
              for (int x = 0; x < vw[k]; x++) {
                const int d = px - x;
                best = std::max (best, conv[k][static_cast<size_t> (y) * vw[k] + x] +
                                           (-part.def[0] * d * d - part.def[1] * d));
              }
              rows[static_cast<size_t> (y) * dw[k] + i] = best;
            }
          dt[k].assign (static_cast<size_t> (dw[k]) * dh, -kInf);
          for (int j = 0; j < dh; j++)
            for (int i = 0; i < dw[k]; i++) {
              const int py = dy0[k] + j;
              double best = -kInf;
              for (int y = 0; y < vh[k]; y++) {
                const int e = py - y;
                best = std::max (best, rows[static_cast<size_t> (y) * dw[k] + i] + (-part.def[2] * e * e - part.def[3] * e));
              }
              dt[k][static_cast<size_t> (j) * dw[k] + i] = best;
            }
        }
      const double bias = static_cast<double> (static_cast<float> (comp.bias)) +
                          (0 + comp.location[0] * (r < p.interval ? 1 : 0) +
                           comp.location[1] * (r >= p.interval && r < 2 * p.interval ? 1 : 0) +
                           comp.location[2] * (r >= 2 * p.interval && r < 6 * p.interval ? 1 : 0));
      for (int rx = range.x0; rx < range.x1; rx++)
        for (int ry = range.y0; ry < range.y1; ry++) {
          double score = bias + correlate (features[r], rl.feat_w, comp.root, rx, ry);
          for (size_t k = 0; k < comp.parts.size (); k++) {
            const DpmPart &part = comp.parts[k];
            const int px = 2 * rx + part.anchor_x - m.pad_x, py = 2 * ry + part.anchor_y - m.pad_y;
            double best = -kInf;
            if (conv[k].empty ()) {
            } else if (half_window < 0) {
              best = dt[k][static_cast<size_t> (py - dy0[k]) * dw[k] + (px - dx0[k])];
            } else {
              const int xs = std::max (px - half_window, 0), xe = std::min (px + half_window, vw[k] - 1);
              const int ys = std::max (py - half_window, 0), ye = std::min (py + half_window, vh[k] - 1);
              for (int y = ys; y <= ye; y++)
                for (int x = xs; x <= xe; x++) {
                  const int d = px - x, e = py - y;
                  double v = conv[k][static_cast<size_t> (y) * vw[k] + x];
                  v += (-part.def[0] * (d * d) - part.def[1] * d) + (-part.def[2] * (e * e) - part.def[3] * e);
                  if (v > best)
                    best = v;
                }
            }
            score += best;
          }
          if (score >= threshold)
            out.push_back ({c, r, rx, ry, score});
        }
    }
  }
  return out;
}

DpmBox dpm_window_box (const DpmModel &m, const DpmPlan &p, int level, int comp, int rx, int ry) {
  const DpmFilter &f = m.components[comp].root;
  const double scale = m.sbin / p.levels[level].scale;
  DpmBox b;
  b.x1 = (rx - m.pad_x) * scale;
  b.y1 = (ry - m.pad_y) * scale;
  b.x2 = b.x1 + f.cols * scale - 1;
  b.y2 = b.y1 + f.rows * scale - 1;
  b.comp = comp;
  return b;
}

std::vector<DpmBox> dpm_suppress (std::vector<DpmBox> boxes, double overlap) {
  // ascending by score; the last is picked first (ties: the one listed
  // first, cv::dpm's exchange sort keeps no such promise)
  std::stable_sort (boxes.begin (), boxes.end (), [] (const DpmBox &a, const DpmBox &b) { return a.score < b.score; });
  std::vector<DpmBox> kept;
  std::vector<bool> gone (boxes.size (), false);
  for (size_t n = boxes.size (); n-- > 0;) {
    if (gone[n])
      continue;
    const DpmBox &i = boxes[n];
    kept.push_back (i);
    for (size_t k = 0; k < n; k++) {
      if (gone[k])
        continue;
      const DpmBox &j = boxes[k];
      const double w = std::min (i.x2, j.x2) - std::max (i.x1, j.x1) + 1;
      const double h = std::min (i.y2, j.y2) - std::max (i.y1, j.y1) + 1;
      if (w > 0 && h > 0 && w * h / ((j.x2 - j.x1 + 1) * (j.y2 - j.y1 + 1)) > overlap)
        gone[k] = true;
    }
  }
  return kept;
}

} // namespace gpudetect
