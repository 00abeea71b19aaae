// WaldBoost: fixed-point arithmetic, LBP codes and the reference evaluation
// of one window (see model.h).
#include "model.h"

#include "core/numbers.h"

#include <cmath>
#include <cstring>

namespace gpudetect {

namespace {

constexpr double kScale = 4294967296.0; // 2^kWaldBoostFracBits

// Block sum from the integral: (x, y) top-left, w x h.
inline int block (const uint32_t *p, int s, int x, int y, int w, int h) {
  return static_cast<int> (p[x + s * y] - p[x + w + s * y] - p[x + s * (y + h)] + p[x + w + s * (y + h)]);
}

} // namespace

int WaldBoostModel::tail_start () const {
  int t = static_cast<int> (stages.size ());
  while (t > 0 && std::isinf (stages[t - 1].neg_t) && stages[t - 1].neg_t < 0 && std::isinf (stages[t - 1].pos_t) &&
         stages[t - 1].pos_t > 0)
    t--;
  return t;
}

int64_t waldboost_fixed (double v) { return saturate_int64 (std::nearbyint (v * kScale)); }

// sum < t  <=>  sum_q < ceil (t * 2^32), sum_q being an integer.
int64_t waldboost_reject_below (double neg_t) { return saturate_int64 (std::ceil (neg_t * kScale)); }

// sum > t  <=>  sum_q > floor (t * 2^32).
int64_t waldboost_accept_above (double pos_t) { return saturate_int64 (std::floor (pos_t * kScale)); }

int64_t waldboost_final_threshold (double gamma, bool exclusive) {
  if (!exclusive)
    return saturate_int64 (std::ceil (gamma * kScale)); // sum >= g
  const int64_t f = saturate_int64 (std::floor (gamma * kScale)); // sum > g  <=>  sum_q >= floor (g * 2^32) + 1
  return f == INT64_MAX ? f : f + 1;
}

double waldboost_real (int64_t q) { return static_cast<double> (q) / kScale; }

float waldboost_final_threshold_float (double gamma, bool exclusive) {
  float g = static_cast<float> (gamma);
  if (exclusive ? g <= gamma : g < gamma) // the least float above gamma (exclusive) or at least gamma
    g = std::nextafter (g, INFINITY);
  return g;
}

float WaldBoostVerdict::score () const { return sum_f != 0 ? sum_f : static_cast<float> (sum_q) * 0x1p-32f; }

int64_t waldboost_final_threshold_arg (const WaldBoostModel &m, const double *user) {
  if (!m.float_sums)
    return user ? waldboost_final_threshold (*user, false) : waldboost_final_threshold (m.threshold, m.threshold_exclusive);
  const float g = user ? waldboost_final_threshold_float (*user, false)
                       : waldboost_final_threshold_float (m.threshold, m.threshold_exclusive);
  uint32_t bits;
  std::memcpy (&bits, &g, sizeof bits);
  return bits;
}

int waldboost_lbp_code (const uint32_t *p, int s, int x, int y, int w, int h) {
  const int c = block (p, s, x + w, y + h, w, h);
  return (block (p, s, x, y, w, h) >= c ? 128 : 0) | (block (p, s, x + w, y, w, h) >= c ? 64 : 0) |
         (block (p, s, x + 2 * w, y, w, h) >= c ? 32 : 0) | (block (p, s, x + 2 * w, y + h, w, h) >= c ? 16 : 0) |
         (block (p, s, x + 2 * w, y + 2 * h, w, h) >= c ? 8 : 0) | (block (p, s, x + w, y + 2 * h, w, h) >= c ? 4 : 0) |
         (block (p, s, x, y + 2 * h, w, h) >= c ? 2 : 0) | (block (p, s, x, y + h, w, h) >= c ? 1 : 0);
}

int64_t waldboost_flat_limit (const WaldBoostModel &m) {
  if (!(m.min_std_dev > 0))
    return 0;
  const double n = static_cast<double> (m.window_width) * m.window_height;
  const double v = m.min_std_dev * n;
  return saturate_int64 (std::ceil (v * v));
}

WaldBoostVerdict waldboost_evaluate (const WaldBoostModel &m, const uint32_t *integral, const uint32_t *sq, int stride,
                                     int64_t final_threshold) {
  WaldBoostVerdict v;
  if (const int64_t flat = waldboost_flat_limit (m); flat > 0) {
    const int W = m.window_width, H = m.window_height;
    const int64_t s = block (integral, stride, 0, 0, W, H);
    const int64_t q = static_cast<uint32_t> (sq[0] - sq[W] - sq[stride * H] + sq[W + stride * H]);
    if (static_cast<int64_t> (W) * H * q - s * s < flat)
      return v;
  }
  if (m.float_sums) {
    // OpenCV xobjdetect: res += response in single precision, rejected when
    // below the stage's threshold (a float)
    float gamma;
    const uint32_t bits = static_cast<uint32_t> (final_threshold);
    std::memcpy (&gamma, &bits, sizeof gamma);
    float acc = 0;
    for (const WaldBoostModel::Stage &st : m.stages) {
      acc += st.response[waldboost_lbp_code (integral, stride, st.x, st.y, st.w, st.h)];
      v.sum_f = acc;
      v.stages++;
      if (acc < static_cast<float> (st.neg_t))
        return v;
      if (acc > static_cast<float> (st.pos_t)) {
        v.hit = true;
        return v;
      }
    }
    v.hit = acc >= gamma;
    return v;
  }
  const int64_t final_threshold_q = final_threshold;
  for (const WaldBoostModel::Stage &st : m.stages) {
    v.sum_q += waldboost_fixed (st.response[waldboost_lbp_code (integral, stride, st.x, st.y, st.w, st.h)]);
    v.stages++;
    if (v.sum_q < waldboost_reject_below (st.neg_t))
      return v;
    if (v.sum_q > waldboost_accept_above (st.pos_t)) {
      v.hit = true;
      return v;
    }
  }
  v.hit = v.sum_q >= final_threshold_q;
  return v;
}

} // namespace gpudetect
