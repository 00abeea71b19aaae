#include "dthog.h"

#include "core/numbers.h"
#include "kernels.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

constexpr double kPi = 3.1415926535897932384626433832795; // CV_PI
constexpr int kPolarPart = 1024; // cartToPolar converts a row in parts of this many values
constexpr int kPolarLanes = 16;  // a part shorter than two AVX2 vectors takes the scalar code

// OpenCV's fastAtan2 coefficients (degrees), as its float constants.
struct AtanConsts {
  float p1, p3, p5, p7, deg, eps;
  AtanConsts () {
    const float to_deg = static_cast<float> (180 / kPi);
    p1 = 0.9997878412794807f * to_deg;
    p3 = -0.3258083974640975f * to_deg;
    p5 = 0.1555786518463281f * to_deg;
    p7 = -0.04432655554792128f * to_deg;
    deg = static_cast<float> (kPi / 180);
    eps = static_cast<float> (DBL_EPSILON);
  }
};

float angle_scale (const DtHogParams &p) { return static_cast<float> (p.bins / kPi); }

// The first column of a row of `width` values that cartToPolar gives its
// scalar code (the last part, where it is shorter than two vectors).
int scalar_tail (int width) {
  const int rest = width % kPolarPart;
  return rest > 0 && rest < kPolarLanes ? width - rest : width;
}

std::vector<float> gamma_lut (const DtHogParams &p) {
  std::vector<float> lut (256);
  for (int i = 0; i < 256; i++)
    lut[i] = p.gamma ? std::sqrt (static_cast<float> (i)) : static_cast<float> (i);
  return lut;
}

// Of two neighbouring cells c0 and c0 + 1, where only one lies in the block:
// that one, with `frac` turned into its weight's fraction (HOGCache::init).
int inner_cell (bool c0_in, int c0, float *frac) {
  if (!c0_in)
    return c0 + 1;
  *frac = 1.f - *frac;
  return c0;
}

} // namespace

DtPlan plan_dt (int width, int height, const DtHogParams &p, int rows, int cols, Size2 min_size, Size2 max_size,
                bool tables) {
  DtPlan plan;
  plan.params = p;
  plan.image_width = width;
  plan.image_height = height;
  plan.filter_rows = rows;
  plan.filter_cols = cols;
  plan.window_width = (cols - 1) * p.block_stride + p.block;
  plan.window_height = (rows - 1) * p.block_stride + p.block;
  if (width <= 0 || height <= 0 || rows <= 0 || cols <= 0)
    return plan;
  // detectMultiScale's scales: 1, then times `scale` while the level is at
  // least the window, up to max_levels
  double s = 1;
  for (int k = 0; k < p.max_levels; k++, s *= p.scale) {
    const int w = round_half_even (width / s), h = round_half_even (height / s);
    if (w < plan.window_width || h < plan.window_height)
      break;
    const int ww = round_half_even (plan.window_width * s), wh = round_half_even (plan.window_height * s);
    if (max_size.width > 0 && max_size.height > 0 && (ww > max_size.width || wh > max_size.height))
      break;
    if (ww >= min_size.width && wh >= min_size.height) {
      DtLevel l;
      l.scale = s;
      l.width = w;
      l.height = h;
      l.pixel_offset = plan.pixels;
      plan.pixels += static_cast<size_t> (w) * h;
      l.blocks_x = (w - p.block) / p.block_stride + 1;
      l.blocks_y = (h - p.block) / p.block_stride + 1;
      l.block_offset = plan.blocks;
      plan.blocks += static_cast<size_t> (l.blocks_x) * l.blocks_y;
      l.windows_x = l.blocks_x - cols + 1;
      l.windows_y = l.blocks_y - rows + 1;
      l.first_window = plan.windows;
      plan.windows += l.windows_x * l.windows_y;
      // cv::resize (frame, level, Size (w, h), 0, 0, INTER_LINEAR_EXACT)
      if (tables) {
        linear_exact_table (width, w, static_cast<double> (w) / width, &l.xtab);
        linear_exact_table (height, h, static_cast<double> (h) / height, &l.ytab);
      }
      plan.levels.push_back (std::move (l));
    }
    if (!(p.scale > 1))
      break;
  }
  return plan;
}

Rect dt_window_rect (const DtPlan &plan, int level, int x, int y) {
  const double s = plan.levels[level].scale;
  return {round_half_even (x * s), round_half_even (y * s), round_half_even (plan.window_width * s),
          round_half_even (plan.window_height * s)};
}

std::vector<DtPixel> dt_block_pixels (const DtHogParams &p) {
  // HOGCache::init: the Gaussian weight of each place, then each place's
  // cells and bilinear weights, listed by the number of cells it votes into
  const int bs = p.block, ncx = p.block / p.cell, ncy = p.block / p.cell;
  const float sigma = static_cast<float> (p.win_sigma);
  const float scale = 1.f / (sigma * sigma * 2);
  const float half = bs * 0.5f;
  std::vector<float> d2 (bs);
  for (int i = 0; i < bs; i++) {
    d2[i] = static_cast<float> (i) - half;
    d2[i] *= d2[i];
  }
  std::vector<DtPixel> groups[3];
  for (int j = 0; j < bs; j++)
    for (int i = 0; i < bs; i++) {
      const float gw = std::exp (-(d2[i] + d2[j]) * scale);
      float cx = (j + 0.5f) / p.cell - 0.5f, cy = (i + 0.5f) / p.cell - 0.5f;
      const int x0 = static_cast<int> (std::floor (cx)), y0 = static_cast<int> (std::floor (cy));
      cx -= x0;
      cy -= y0;
      const bool x0in = x0 >= 0 && x0 < ncx, x1in = x0 + 1 >= 0 && x0 + 1 < ncx;
      const bool y0in = y0 >= 0 && y0 < ncy, y1in = y0 + 1 >= 0 && y0 + 1 < ncy;
      DtPixel px;
      px.y = i;
      px.x = j;
      auto put = [&] (int cellx, int celly, float w) { px.w[cellx * ncy + celly] = gw * w; };
      int group;
      if (x0in && x1in) {
        if (y0in && y1in) {
          put (x0, y0, (1.f - cx) * (1.f - cy));
          put (x0 + 1, y0, cx * (1.f - cy));
          put (x0, y0 + 1, (1.f - cx) * cy);
          put (x0 + 1, y0 + 1, cx * cy);
          group = 2;
        } else {
          const int y1 = inner_cell (y0in, y0, &cy);
          put (x0, y1, (1.f - cx) * cy);
          put (x0 + 1, y1, cx * cy);
          group = 1;
        }
      } else {
        const int x1 = inner_cell (x0in, x0, &cx);
        if (y0in && y1in) {
          put (x1, y0, cx * (1.f - cy));
          put (x1, y0 + 1, cx * cy);
          group = 1;
        } else {
          const int y1 = inner_cell (y0in, y0, &cy);
          put (x1, y1, cx * cy);
          group = 0;
        }
      }
      groups[group].push_back (px);
    }
  std::vector<DtPixel> out;
  for (const auto &g : groups)
    out.insert (out.end (), g.begin (), g.end ());
  return out;
}

std::vector<uint8_t> dt_level_pixels (const DtLevel &l, const uint8_t *frame, int stride) {
  std::vector<uint8_t> out (static_cast<size_t> (l.width) * l.height);
  for (int y = 0; y < l.height; y++) {
    const int ye = l.ytab[y];
    const uint32_t cy1 = ye & 511, cy0 = 256 - cy1;
    const uint8_t *r0 = frame + static_cast<size_t> (ye >> 9) * stride, *r1 = cy1 ? r0 + stride : r0;
    for (int x = 0; x < l.width; x++) {
      const int xe = l.xtab[x], sx = xe >> 9;
      const uint32_t cx1 = xe & 511, cx0 = 256 - cx1;
      const uint32_t h0 = r0[sx] * cx0 + (cx1 ? r0[sx + 1] * cx1 : 0);
      const uint32_t h1 = cy1 ? r1[sx] * cx0 + (cx1 ? r1[sx + 1] * cx1 : 0) : 0;
      out[static_cast<size_t> (y) * l.width + x] = static_cast<uint8_t> ((h0 * cy0 + h1 * cy1 + 32768u) >> 16);
    }
  }
  return out;
}

void dt_gradients (const DtHogParams &p, const std::vector<uint8_t> &px, int w, int h, std::vector<float> *grad,
                   std::vector<uint8_t> *bins) {
  const AtanConsts k;
  const float ascale = angle_scale (p);
  const std::vector<float> lut = gamma_lut (p);
  const int tail = scalar_tail (w);
  grad->assign (static_cast<size_t> (w) * h * 2, 0.0f);
  bins->assign (static_cast<size_t> (w) * h * 2, 0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int xl = x > 0 ? x - 1 : 1, xr = x < w - 1 ? x + 1 : w - 2;
      const int yu = y > 0 ? y - 1 : 1, yd = y < h - 1 ? y + 1 : h - 2;
      const float dx = lut[px[static_cast<size_t> (y) * w + xr]] - lut[px[static_cast<size_t> (y) * w + xl]];
      const float dy = lut[px[static_cast<size_t> (yd) * w + x]] - lut[px[static_cast<size_t> (yu) * w + x]];
      const float mag = std::sqrt (std::fma (dx, dx, dy * dy));
      const float ax = std::fabs (dx), ay = std::fabs (dy);
      const float c = std::min (ax, ay) / (std::max (ax, ay) + k.eps);
      const float cc = c * c;
      const float q = std::fma (std::fma (std::fma (cc, k.p7, k.p5), cc, k.p3), cc, k.p1);
      float a = q * c;
      if (ax < ay)
        a = x >= tail ? std::fma (-q, c, 90.0f) : 90.0f - a;
      if (dx < 0)
        a = 180.0f - a;
      if (dy < 0)
        a = 360.0f - a;
      float angle = (a * k.deg) * ascale - 0.5f;
      int hidx = static_cast<int> (std::floor (angle));
      angle -= static_cast<float> (hidx);
      const size_t at = (static_cast<size_t> (y) * w + x) * 2;
      (*grad)[at] = mag * (1.0f - angle);
      (*grad)[at + 1] = mag * angle;
      if (hidx < 0)
        hidx += p.bins;
      else if (hidx >= p.bins)
        hidx -= p.bins;
      (*bins)[at] = static_cast<uint8_t> (hidx);
      (*bins)[at + 1] = static_cast<uint8_t> (hidx + 1 < p.bins ? hidx + 1 : 0);
    }
}

std::vector<float> dt_blocks (const DtHogParams &p, const DtLevel &l, const std::vector<float> &grad,
                              const std::vector<uint8_t> &bins) {
  const int nd = p.dims (), nb = p.bins;
  const size_t plane = static_cast<size_t> (l.blocks_x) * l.blocks_y;
  std::vector<float> out (plane * nd);
  const std::vector<DtPixel> table = dt_block_pixels (p);
  const float thresh = static_cast<float> (p.l2hys);
  std::vector<float> h (nd);
  for (int by = 0; by < l.blocks_y; by++)
    for (int bx = 0; bx < l.blocks_x; bx++) {
      std::fill (h.begin (), h.end (), 0.0f);
      for (const DtPixel &e : table) {
        const size_t at = (static_cast<size_t> (by * p.block_stride + e.y) * l.width + bx * p.block_stride + e.x) * 2;
        for (int c = 0; c < 4; c++)
          if (e.w[c] != 0) {
            h[c * nb + bins[at]] += grad[at] * e.w[c];
            h[c * nb + bins[at + 1]] += grad[at + 1] * e.w[c];
          }
      }
      // normalizeBlockHistogram, its 4 lanes
      float s[4] = {0, 0, 0, 0};
      for (int i = 0; i < nd; i++)
        s[i % 4] += h[i] * h[i];
      const float scale = 1.f / (std::sqrt ((s[0] + s[1]) + (s[2] + s[3])) + static_cast<float> (nd) * 0.1f);
      std::fill (s, s + 4, 0.0f);
      for (int i = 0; i < nd; i++) {
        h[i] = std::min (scale * h[i], thresh);
        s[i % 4] += h[i] * h[i];
      }
      const float scale2 = 1.f / (std::sqrt ((s[0] + s[1]) + (s[2] + s[3])) + 1e-3f);
      for (int i = 0; i < nd; i++)
        out[i * plane + static_cast<size_t> (by) * l.blocks_x + bx] = scale2 * h[i];
    }
  return out;
}

// --- the device side ---

void DtDevice::add_sources (ProgramSpec *out) {
  add_core_sources (out);
  out->add (kernels::felzenszwalb_source, kernels::felzenszwalb_hash);
  out->add (kernels::hog_source, kernels::hog_hash);
  out->add (kernels::hog_dt_source, kernels::hog_dt_hash);
}

std::string DtDevice::options (const cl::Device &dev, const DtHogParams &p) {
  const AtanConsts k;
  std::string o = " -D DT_P1=" + float_literal (k.p1) + " -D DT_P3=" + float_literal (k.p3) +
                  " -D DT_P5=" + float_literal (k.p5) + " -D DT_P7=" + float_literal (k.p7) +
                  " -D DT_DEG=" + float_literal (k.deg) + " -D DT_ANGLE_SCALE=" + float_literal (angle_scale (p)) +
                  " -D DT_EPS=" + float_literal (k.eps) + " -D DT_GAMMA=" + (p.gamma ? "1" : "0");
  // hog.cl's FHOG kernels are built too (for its filters); their options
  o += " -D HOG_CELL=8 -D HOG_PR=1 -D HOG_PC=1";
  // OpenCV's divisions and square roots are IEEE's
  cl_device_fp_config fp = 0;
  if (clGetDeviceInfo (dev.info.id, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, nullptr) == CL_SUCCESS &&
      (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
    o += " -cl-fp32-correctly-rounded-divide-sqrt";
  else if (dev.info.fp64)
    o += " -D DT_DIV_DOUBLE";
  return o;
}

Error DtDevice::setup (const cl::Device &dev, const cl::Program &program, const DtHogParams &p, bool rows) {
  rows_ = rows;
  l2hys_ = static_cast<float> (p.l2hys);
  if (Error e = rows ? resample_rows_.create (program, "dt_resample_rows") : resample_.create (program, "dt_resample"))
    return e;
  if (Error e = rows ? gradients_rows_.create (program, "dt_gradients_rows")
                     : gradients_.create (program, "dt_gradients"))
    return e;
  if (Error e = rows ? blocks_rows_.create (program, "dt_blocks_rows") : blocks_.create (program, "dt_blocks"))
    return e;
  if (Error e = cl::upload_vector (dev, &lut_, gamma_lut (p)))
    return e;
  std::vector<cl_int> pos;
  std::vector<cl_float4> w;
  for (const DtPixel &e : dt_block_pixels (p)) {
    pos.push_back (e.y * 16 + e.x);
    w.push_back ({{e.w[0], e.w[1], e.w[2], e.w[3]}});
  }
  if (Error e = cl::upload_vector (dev, &ptab_, pos))
    return e;
  return cl::upload_vector (dev, &ptab_w_, w);
}

Error DtDevice::geometry (const cl::Device &dev, const DtPlan &plan, const FrameLayout &layout) {
  nlevels_ = static_cast<int> (plan.levels.size ());
  if (plan.pixels >= (size_t (1) << 28) || plan.blocks * kDtDims >= (size_t (1) << 31))
    return {"frames of " + std::to_string (plan.image_width) + "x" + std::to_string (plan.image_height) +
            " pixels are too large for the HOG pyramid"};
  std::vector<cl_int16> lv;
  std::vector<int32_t> xtab, ytab;
  std::vector<cl_int2> prow, brow;
  for (int k = 0; k < nlevels_; k++) {
    const DtLevel &l = plan.levels[k];
    cl_int16 d = {};
    const int v[16] = {l.width, l.height, static_cast<int> (l.pixel_offset), static_cast<int> (xtab.size ()),
                       static_cast<int> (ytab.size ()), scalar_tail (l.width), 0, 0, 0, l.blocks_y, l.blocks_x,
                       static_cast<int> (l.block_offset), static_cast<int> (l.block_offset), 0, l.first_window,
                       l.windows_x};
    std::memcpy (d.s, v, sizeof v);
    lv.push_back (d);
    xtab.insert (xtab.end (), l.xtab.begin (), l.xtab.end ());
    ytab.insert (ytab.end (), l.ytab.begin (), l.ytab.end ());
    for (int y = 0; y < l.height; y++)
      prow.push_back ({{k, y}});
    for (int y = 0; y < l.blocks_y; y++)
      brow.push_back ({{k, y}});
  }
  npixels_ = static_cast<int> (plan.pixels);
  nblocks_ = static_cast<int> (plan.blocks);
  npix_rows_ = static_cast<int> (prow.size ());
  nblock_rows_ = static_cast<int> (brow.size ());
  plane_ = plan.blocks;
  if (Error e = cl::upload_vector (dev, &levels_, lv))
    return e;
  if (Error e = cl::upload_vector (dev, &xtab_, xtab))
    return e;
  if (Error e = cl::upload_vector (dev, &ytab_, ytab))
    return e;
  if (Error e = cl::upload_vector (dev, &pix_rows_, prow))
    return e;
  if (Error e = cl::upload_vector (dev, &block_rows_, brow))
    return e;
  const size_t np = std::max<size_t> (plan.pixels, 1);
  if (Error e = cl::make_buffers (dev, {{&pix_, np},
                                        {&grad_, np * 2 * sizeof (float)},
                                        {&bins_, np * 2},
                                        {&feats_, std::max<size_t> (plan.blocks, 1) * kDtDims * sizeof (float)}}))
    return e;
  layout_ = layout;
  image_width_ = plan.image_width;
  const cl_int plane = static_cast<cl_int> (plan.blocks);
  if (rows_) {
    if (Error e = gradients_rows_.set (pix_, levels_, pix_rows_, cl_int (npix_rows_), lut_, grad_, bins_))
      return e;
    return blocks_rows_.set (grad_, bins_, levels_, block_rows_, cl_int (nblock_rows_), ptab_, ptab_w_, l2hys_, feats_,
                             plane);
  }
  if (Error e = gradients_.set (pix_, levels_, cl_int (nlevels_), cl_int (npixels_), lut_, grad_, bins_))
    return e;
  return blocks_.set (grad_, bins_, levels_, cl_int (nlevels_), cl_int (nblocks_), ptab_, ptab_w_, l2hys_, feats_,
                      plane);
}

Error DtDevice::enqueue (const cl::Mem &src, const cl::Mem &candidates, int pyramid, int features,
                         Launcher &l) {
  const cl_int stride = layout_.stride (), bpp = layout_.bpp ();
  const cl_int4 rgb = rgb_offsets (layout_.format);
  const size_t local = 64;
  if (rows_) {
    if (Error e = resample_rows_.set (src, stride, bpp, rgb, image_width_, levels_, pix_rows_, cl_int (npix_rows_), xtab_,
                                      ytab_, pix_, candidates))
      return e;
    const size_t n = round_up (std::max (npix_rows_, 1), 8);
    if (Error e = l.launch (resample_rows_.get (), n, 8, pyramid))
      return e;
    if (npixels_ == 0)
      return {};
    if (Error e = l.launch (gradients_rows_.get (), n, 8, features))
      return e;
    return l.launch (blocks_rows_.get (), round_up (std::max (nblock_rows_, 1), 8), 8, features);
  }
  if (Error e = resample_.set (src, stride, bpp, rgb, image_width_, levels_, cl_int (nlevels_), cl_int (npixels_), xtab_,
                               ytab_, pix_, candidates))
    return e;
  if (Error e = l.launch (resample_.get (), round_up (std::max (npixels_, 1), local), local, pyramid))
    return e;
  if (npixels_ == 0)
    return {};
  if (Error e = l.launch (gradients_.get (), round_up (npixels_, local), local, features))
    return e;
  return l.launch (blocks_.get (), round_up (static_cast<size_t> (nblocks_) * 4, 64), 64, features);
}

} // namespace gpudetect
