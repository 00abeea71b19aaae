#include "fhog.h"

#include "core/orientation.h"

#include "kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

cl_int float_bits (float f) {
  cl_int i;
  std::memcpy (&i, &f, sizeof i);
  return i;
}
float bits_float (cl_int i) {
  float f;
  std::memcpy (&f, &i, sizeof f);
  return f;
}

// dlib's resize_image (8-bit grey to 8-bit grey, interpolate_bilinear): the
// rows' and columns' sources and weights, computed with dlib's own
// arithmetic (its double accumulators, its float lanes).
void resample_tables (int in_w, int in_h, FhogLevel *to) {
  const double x_scale = (in_w - 1) / static_cast<double> (std::max (to->width - 1, 1));
  const double y_scale = (in_h - 1) / static_cast<double> (std::max (to->height - 1, 1));
  double y = -y_scale;
  for (int r = 0; r < to->height; r++) {
    y += y_scale;
    const long top = static_cast<long> (std::floor (y));
    const long bottom = std::min<long> (top + 1, in_h - 1);
    const double tb = y - top;
    to->down_rows.push_back ({{static_cast<cl_int> (top), static_cast<cl_int> (bottom),
                               float_bits (static_cast<float> (tb)), float_bits (static_cast<float> (1 - tb))}});
    to->down_tb.push_back (tb);
  }
  // the 4-lane loop: float positions, advanced by a float step
  const double x = -4 * x_scale;
  float lane[4] = {static_cast<float> (x), static_cast<float> (x + x_scale), static_cast<float> (x + 2 * x_scale),
                   static_cast<float> (x + 3 * x_scale)};
  const float step = static_cast<float> (4 * x_scale);
  int c = 0;
  for (;; c += 4) {
    cl_int left[4];
    float frac[4];
    for (int k = 0; k < 4; k++) {
      lane[k] += step;
      left[k] = static_cast<cl_int> (lane[k]); // truncation (cvttps2dq)
      frac[k] = lane[k] - static_cast<float> (left[k]);
    }
    if (left[3] + 1 >= in_w)
      break;
    for (int k = 0; k < 4 && c + k < to->width; k++)
      to->down_cols.push_back ({{left[k], left[k] + 1, float_bits (frac[k]), 1}});
    if (c + 4 >= to->width) {
      c += 4;
      break;
    }
  }
  // the scalar tail
  double xs = -x_scale + c * x_scale;
  for (; c < to->width; c++) {
    xs += x_scale;
    const long left = static_cast<long> (std::floor (xs));
    const long right = std::min<long> (left + 1, in_w - 1);
    to->down_cols.push_back ({{static_cast<cl_int> (left), static_cast<cl_int> (right),
                               float_bits (static_cast<float> (xs - left)), 0}});
  }
}

} // namespace

FhogPlan plan_fhog (int width, int height, const FhogParams &p) {
  FhogPlan plan;
  plan.params = p;
  plan.image_width = width;
  plan.image_height = height;
  // how many levels: dlib's rect_down of the frame's rectangle, rounded
  const double ratio = (p.pyramid_down - 1.0) / p.pyramid_down;
  long l = 0, t = 0, r = width - 1, b = height - 1;
  int count = 0;
  auto down = [&] (long v) { return static_cast<long> (std::floor ((v - 0.3) * ratio + 0.5)); };
  do {
    l = down (l);
    t = down (t);
    r = down (r);
    b = down (b);
    count++;
  } while ((r >= l ? r - l + 1 : 0) >= p.min_level_width && (b >= t ? b - t + 1 : 0) >= p.min_level_height &&
           count < p.max_levels);
  int w = width, h = height;
  for (int k = 0; k < count; k++) {
    FhogLevel lv;
    if (k > 0) {
      const int N = p.pyramid_down;
      lv.width = static_cast<int> ((static_cast<long> (N - 1) * w) / N);
      lv.height = static_cast<int> ((static_cast<long> (N - 1) * h) / N);
      resample_tables (w, h, &lv);
    } else {
      lv.width = width;
      lv.height = height;
    }
    w = lv.width;
    h = lv.height;
    lv.pixel_offset = plan.pixels;
    plan.pixels += static_cast<size_t> (w) * h;
    lv.cells_y = static_cast<int> (static_cast<float> (h) / static_cast<float> (p.cell) + 0.5);
    lv.cells_x = static_cast<int> (static_cast<float> (w) / static_cast<float> (p.cell) + 0.5);
    const int hog_nr = std::max (lv.cells_y - 2, 0), hog_nc = std::max (lv.cells_x - 2, 0);
    if (hog_nr > 0 && hog_nc > 0) {
      lv.cell_offset = plan.cells;
      plan.cells += static_cast<size_t> (lv.cells_y) * lv.cells_x;
      lv.visible_rows = std::min (lv.cells_y * p.cell, h) - 1;
      lv.visible_cols = std::min (lv.cells_x * p.cell, w) - 1;
      int x = 1;
      while (x < lv.visible_cols - 7)
        x += 8;
      lv.simd_end = x;
      lv.feat_rows = hog_nr + p.pad_rows - 1;
      lv.feat_cols = hog_nc + p.pad_cols - 1;
      lv.feat_offset = plan.feat_plane;
      plan.feat_plane += static_cast<size_t> (lv.feat_rows) * lv.feat_cols;
    } else {
      lv.cells_y = lv.cells_x = 0; // dlib's feature map is empty
      lv.cell_offset = plan.cells;
      lv.feat_offset = plan.feat_plane;
    }
    plan.levels.push_back (std::move (lv));
  }
  return plan;
}

std::vector<uint8_t> fhog_down (const FhogLevel &from, const std::vector<uint8_t> &src, const FhogLevel &to) {
  std::vector<uint8_t> out (static_cast<size_t> (to.width) * to.height);
  for (int r = 0; r < to.height; r++)
    for (int c = 0; c < to.width; c++) {
      const cl_int4 ro = to.down_rows[r], co = to.down_cols[c];
      const uint8_t *top = src.data () + static_cast<size_t> (ro.s[0]) * from.width;
      const uint8_t *bot = src.data () + static_cast<size_t> (ro.s[1]) * from.width;
      const float tl = top[co.s[0]], tr = top[co.s[1]], bl = bot[co.s[0]], br = bot[co.s[1]];
      const float lr = bits_float (co.s[2]);
      uint8_t v;
      if (co.s[3]) {
        const float tbf = bits_float (ro.s[2]), itbf = bits_float (ro.s[3]), ilr = 1.0f - lr;
        const float tlf = itbf * ilr, trf = itbf * lr, blf = tbf * ilr, brf = tbf * lr;
        float s = tlf * tl;
        s += trf * tr;
        s += blf * bl;
        s += brf * br;
        v = static_cast<uint8_t> (std::min (static_cast<double> (s) + 0.5, 255.0));
      } else {
        const double tb = to.down_tb[r];
        const float a = (1 - lr) * tl + lr * tr, b = (1 - lr) * bl + lr * br;
        const float s = static_cast<float> ((1 - tb) * a + tb * b);
        v = static_cast<uint8_t> (std::clamp (s, 0.0f, 255.0f));
      }
      out[static_cast<size_t> (r) * to.width + c] = v;
    }
  return out;
}

namespace {

int orientation (const uint8_t *p, int w, int y, int x, float *v) {
  const int gx = p[y * w + x + 1] - p[y * w + x - 1], gy = p[(y + 1) * w + x] - p[(y - 1) * w + x];
  *v = std::sqrt (static_cast<float> (gx * gx + gy * gy));
  return snap_orientation (static_cast<float> (gx), static_cast<float> (gy));
}

} // namespace

std::vector<float> fhog_cells (const FhogLevel &l, const std::vector<uint8_t> &px, int cell) {
  std::vector<float> out (static_cast<size_t> (l.cells_y) * l.cells_x * kFhogCellFloats, 0.0f);
  // dlib's order: pixels in raster order, each voting into its 4 cells
  for (int y = 1; y < l.visible_rows; y++) {
    const float yp = (static_cast<float> (y) + 0.5f) / static_cast<float> (cell) - 0.5f;
    const int iyp = static_cast<int> (std::floor (yp));
    const float vy0 = yp - iyp, vy1 = 1.0f - vy0;
    for (int x = 1; x < l.visible_cols; x++) {
      const float xp = (static_cast<float> (x) + 0.5f) / static_cast<float> (cell) - 0.5f;
      const int ixp = static_cast<int> (std::floor (xp));
      const float vx0 = xp - ixp, vx1 = 1.0f - vx0;
      float v;
      const int o = orientation (px.data (), l.width, y, x, &v);
      const bool lanes = x < l.simd_end;
      auto vote = [&] (int cy, int cx, float wy, float wx) {
        if (cy < 0 || cx < 0 || cy >= l.cells_y || cx >= l.cells_x)
          return; // dlib's padding ring, never read
        const float w = lanes ? wy * (wx * v) : (wy * wx) * v;
        out[(static_cast<size_t> (cy) * l.cells_x + cx) * kFhogCellFloats + o] += w;
      };
      vote (iyp, ixp, vy1, vx1);
      vote (iyp + 1, ixp, vy0, vx1);
      vote (iyp, ixp + 1, vy1, vx0);
      vote (iyp + 1, ixp + 1, vy0, vx0);
    }
  }
  for (size_t i = 0; i < static_cast<size_t> (l.cells_y) * l.cells_x; i++) {
    float *h = &out[i * kFhogCellFloats];
    float e = 0;
    for (int k = 0; k < 9; k++) {
      const float s = h[k] + h[k + 9];
      e += s * s;
    }
    h[18] = e;
  }
  return out;
}

namespace {

struct F4 {
  float v[4];
};
F4 add (F4 a, F4 b) { return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}}; }
float sum4 (F4 a) { return (a.v[0] + a.v[2]) + (a.v[1] + a.v[3]); } // SSE2's order

} // namespace

std::vector<float> fhog_features (const FhogLevel &l, const std::vector<float> &cells, const FhogParams &p) {
  const size_t plane = static_cast<size_t> (l.feat_rows) * l.feat_cols;
  std::vector<float> out (plane * kFhogDims, 0.0f);
  const int hog_nr = l.cells_y - 2, hog_nc = l.cells_x - 2, nc = l.cells_x;
  auto N = [&] (int r, int c) { return cells[(static_cast<size_t> (r) * nc + c) * kFhogCellFloats + 18]; };
  for (int y = 0; y < hog_nr; y++)
    for (int x = 0; x < hog_nc; x++) {
      const F4 z1 = {{N (y + 1, x + 1), N (y, x + 1), N (y + 1, x), N (y, x)}};
      const F4 z2 = {{N (y + 1, x + 2), N (y, x + 2), N (y + 1, x + 1), N (y, x + 1)}};
      const F4 z3 = {{N (y + 2, x + 1), N (y + 1, x + 1), N (y + 2, x), N (y + 1, x)}};
      const F4 z4 = {{N (y + 2, x + 2), N (y + 1, x + 2), N (y + 2, x + 1), N (y + 1, x + 1)}};
      const F4 s = add (add (add (z1, z2), z3), z4);
      F4 nn, n;
      for (int k = 0; k < 4; k++) {
        nn.v[k] = 0.2f * std::sqrt (s.v[k] + 0.0001f);
        n.v[k] = 0.1f / nn.v[k];
      }
      const float *h = &cells[(static_cast<size_t> (y + 1) * nc + (x + 1)) * kFhogCellFloats];
      const size_t at = static_cast<size_t> (y + (p.pad_rows - 1) / 2) * l.feat_cols + x + (p.pad_cols - 1) / 2;
      auto norm = [&] (float v) {
        F4 r;
        for (int k = 0; k < 4; k++)
          r.v[k] = std::min (v, nn.v[k]) * n.v[k];
        return r;
      };
      F4 t = {{0, 0, 0, 0}};
      for (int o = 0; o < 18; o += 3) {
        const F4 h0 = norm (h[o]), h1 = norm (h[o + 1]), h2 = norm (h[o + 2]);
        out[o * plane + at] = sum4 (h0);
        out[(o + 1) * plane + at] = sum4 (h1);
        out[(o + 2) * plane + at] = sum4 (h2);
        t = add (t, add (add (h0, h1), h2));
      }
      for (int k = 0; k < 4; k++)
        t.v[k] *= 0.4714f;
      for (int o = 0; o < 9; o++)
        out[(o + 18) * plane + at] = sum4 (norm (h[o] + h[o + 9]));
      for (int k = 0; k < 4; k++)
        out[(27 + k) * plane + at] = t.v[k];
    }
  return out;
}

// --- the device side ---

void FhogDevice::add_sources (ProgramSpec *out) {
  add_core_sources (out);
  out->add (kernels::felzenszwalb_source, kernels::felzenszwalb_hash);
  out->add (kernels::hog_source, kernels::hog_hash);
}

std::string FhogDevice::options (const cl::Device &dev, const FhogParams &p, int filters) {
  std::string o;
  for (const auto &[name, v] : {std::pair<const char *, int> {"HOG_CELL", p.cell}, {"HOG_BAND", kFhogBand},
                                {"HOG_PR", p.pad_rows}, {"HOG_PC", p.pad_cols}, {"HOG_FH", p.pad_rows},
                                {"HOG_FW", p.pad_cols}, {"HOG_NF", std::max (filters, 1)}})
    o += std::string (" -D ") + name + "=" + std::to_string (v);
  if (dev.info.fp64)
    o += " -D HOG_FP64";
  // dlib's sqrt and division are IEEE's (SSE): the same where the device can
  cl_device_fp_config fp = 0;
  if (clGetDeviceInfo (dev.info.id, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, nullptr) == CL_SUCCESS &&
      (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
    o += " -cl-fp32-correctly-rounded-divide-sqrt";
  return o;
}

Error FhogDevice::setup (const cl::Program &program, bool rows) {
  rows_ = rows;
  if (Error e = luma_.create (program, "hog_luma"))
    return e;
  if (Error e = rows ? cells_rows_.create (program, "hog_cells_rows") : gradients_.create (program, "hog_gradients"))
    return e;
  if (!rows)
    if (Error e = cells_.create (program, "hog_cells"))
      return e;
  if (Error e = features_.create (program, "hog_features"))
    return e;
  program_ = &program;
  return {};
}

Error FhogDevice::geometry (const cl::Device &dev, const FhogPlan &plan, const FrameLayout &layout,
                                const std::vector<std::pair<int, int>> &windows) {
  nlevels_ = static_cast<int> (plan.levels.size ());
  std::vector<cl_int16> lv;
  int first_cell = 0, first_feat = 0;
  for (size_t k = 0; k < plan.levels.size (); k++) {
    const FhogLevel &l = plan.levels[k];
    cl_int16 d = {};
    const int v[16] = {l.width, l.height, static_cast<int> (l.pixel_offset), l.cells_y, l.cells_x,
                       static_cast<int> (l.cell_offset), l.visible_rows, l.visible_cols, l.simd_end, l.feat_rows,
                       l.feat_cols, static_cast<int> (l.feat_offset), first_cell, first_feat,
                       k < windows.size () ? windows[k].first : 0, k < windows.size () ? windows[k].second : 0};
    std::memcpy (d.s, v, sizeof v);
    lv.push_back (d);
    first_cell += l.cells_y * l.cells_x;
    first_feat += l.feat_rows * l.feat_cols;
  }
  if (plan.pixels >= (size_t (1) << 31) || plan.feat_plane * kFhogDims >= (size_t (1) << 31))
    return {"frames of " + std::to_string (plan.image_width) + "x" + std::to_string (plan.image_height) +
            " pixels are too large for the FHOG pyramid"};
  ncells_ = first_cell;
  nfeat_ = first_feat;
  pixels0_ = plan.image_width * plan.image_height;
  if (Error e = cl::upload_vector (dev, &levels_, lv))
    return e;
  const size_t pixels = std::max<size_t> (plan.pixels, 1), cells = std::max<size_t> (plan.cells, 1) * kFhogCellFloats * 4,
               feats = std::max<size_t> (plan.feat_plane, 1) * kFhogDims * 4;
  // together, so that a budget that refuses them says their whole size (the
  // rows schedule computes gradients where it votes)
  if (Error e = rows_ ? cl::make_buffers (dev, {{&pix_, pixels}, {&cells_buf_, cells}, {&feats_, feats}})
                      : cl::make_buffers (dev, {{&pix_, pixels},
                                                {&cells_buf_, cells},
                                                {&grad_len_, pixels * 4},
                                                {&grad_o_, pixels},
                                                {&feats_, feats}}))
    return e;
  npixels_ = static_cast<int> (plan.pixels);
  down_.clear ();
  down_rows_.clear ();
  down_tabs_.clear ();
  down_items_.clear ();
  for (size_t k = 1; k < plan.levels.size (); k++) {
    const FhogLevel &from = plan.levels[k - 1], &to = plan.levels[k];
    cl::Mem rows, tb, cols;
    if (Error e = cl::upload_vector (dev, &rows, to.down_rows))
      return e;
    if (dev.info.fp64) {
      if (Error e = cl::upload_vector (dev, &tb, to.down_tb))
        return e;
    } else {
      std::vector<float> f (to.down_tb.begin (), to.down_tb.end ());
      if (Error e = cl::upload_vector (dev, &tb, f))
        return e;
    }
    if (Error e = cl::upload_vector (dev, &cols, to.down_cols))
      return e;
    const cl_int src_off = cl_int (from.pixel_offset), src_w = cl_int (from.width), dst_off = cl_int (to.pixel_offset);
    if (!rows_) {
      Down kern;
      if (Error e = kern.create (*program_, "hog_down"))
        return e;
      if (Error e = kern.set (pix_, src_off, src_w, dst_off, cl_int (to.width), cl_int (to.height), rows, tb, cols))
        return e;
      down_.push_back (std::move (kern));
    } else {
      // dlib's 4-lane columns in chunks of 8 whose sources (left and right)
      // lie within 16 bytes of the first; the rest one by one.  A chunk's
      // load may pass its row's end: into the next row, or the next level
      // (always after it in the buffer), bytes no lane uses.
      std::vector<cl_int16> chunks;
      for (size_t c = 0; c + 8 <= to.down_cols.size (); c += 8) {
        const cl_int4 *co = &to.down_cols[c];
        bool fits = true;
        for (int j = 0; j < 8; j++)
          fits = fits && co[j].s[3] && co[j].s[1] == co[j].s[0] + 1 && co[j].s[0] >= co[0].s[0] &&
                 co[j].s[1] - co[0].s[0] < 16;
        if (!fits)
          break;
        cl_int16 ch;
        for (int j = 0; j < 8; j++) {
          ch.s[j] = co[j].s[0];
          ch.s[8 + j] = co[j].s[2];
        }
        chunks.push_back (ch);
      }
      cl::Mem tab;
      if (Error e = cl::upload_vector (dev, &tab, chunks.empty () ? std::vector<cl_int16> (1) : chunks))
        return e;
      DownRows kern;
      if (Error e = kern.create (*program_, "hog_down_rows"))
        return e;
      if (Error e = kern.set (pix_, src_off, src_w, dst_off, cl_int (to.width), cl_int (to.height), rows, tb, cols, tab,
                              cl_int (chunks.size ())))
        return e;
      down_rows_.push_back (std::move (kern));
      down_tabs_.push_back (std::move (tab));
    }
    down_items_.push_back (rows_ ? to.height : to.width * to.height);
    down_tabs_.push_back (std::move (rows));
    down_tabs_.push_back (std::move (tb));
    down_tabs_.push_back (std::move (cols));
  }
  layout_ = layout;
  image_width_ = plan.image_width;
  image_height_ = plan.image_height;
  if (!rows_)
    if (Error e = gradients_.set (pix_, levels_, cl_int (nlevels_), cl_int (npixels_), grad_len_, grad_o_))
      return e;
  if (rows_) {
    std::vector<cl_int2> crows;
    for (size_t k = 0; k < plan.levels.size (); k++)
      for (int y = 0; y < plan.levels[k].cells_y; y += kFhogBand)
        crows.push_back ({{static_cast<cl_int> (k), y}});
    ncell_rows_ = static_cast<int> (crows.size ());
    if (Error e = cl::upload_vector (dev, &cell_rows_, crows))
      return e;
    if (Error e = cells_rows_.set (pix_, levels_, cell_rows_, cl_int (ncell_rows_), cells_buf_))
      return e;
  } else if (Error e = cells_.set (grad_len_, grad_o_, levels_, cl_int (nlevels_), cl_int (ncells_), cells_buf_)) {
    return e;
  }
  return features_.set (levels_, cl_int (nlevels_), cl_int (nfeat_), cells_buf_, feats_, cl_int (plan.feat_plane));
}

Error FhogDevice::enqueue (const cl::Mem &src, const cl::Mem &candidates, int pyramid, int features,
                         Launcher &l) {
  if (Error e = luma_.set (src, cl_int (layout_.stride ()), cl_int (layout_.bpp ()), rgb_offsets (layout_.format),
                           image_width_, image_height_, pix_, candidates))
    return e;
  const size_t local = 64;
  if (Error e = l.launch (luma_.get (), round_up (std::max (pixels0_, 1), local), local, pyramid))
    return e;
  const size_t down_local = rows_ ? 4 : local;
  for (size_t k = 0; k < down_items_.size (); k++)
    if (Error e = l.launch (rows_ ? down_rows_[k].get () : down_[k].get (),
                            round_up (std::max (down_items_[k], 1), down_local), down_local, pyramid))
      return e;
  if (ncells_ == 0)
    return {};
  if (!rows_)
    if (Error e = l.launch (gradients_.get (), round_up (npixels_, local), local, features))
      return e;
  if (Error e = rows_ ? l.launch (cells_rows_.get (), round_up (std::max (ncell_rows_, 1), 8), 8, features)
                          : l.launch (cells_.get (), round_up (ncells_, local), local, features))
    return e;
  return l.launch (features_.get (), round_up (std::max (nfeat_, 1), local), local, features);
}

} // namespace gpudetect
