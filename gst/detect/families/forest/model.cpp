// Random-forest cascade: fixed-point arithmetic, the reference preprocessing
// and the reference evaluation of one window (see model.h).
#include "model.h"

#include "core/numbers.h"

#include <algorithm>
#include <cmath>

namespace gpudetect {

namespace {

constexpr double kSumScale = 4294967296.0; // 2^32

inline int clampi (int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

} // namespace

int32_t forest_split (double t) {
  const double v = std::ceil (t * kForestValueUnits);
  if (!(v < 2147483647.0))
    return INT32_MAX;
  if (!(v > -2147483647.0))
    return -INT32_MAX;
  return static_cast<int32_t> (v);
}

int64_t forest_leaf (double score, int trees) { return saturate_int64 (std::nearbyint (score * kSumScale / trees)); }

int64_t forest_reject_below (double t) {
  if (std::isinf (t) && t < 0)
    return INT64_MIN;
  return saturate_int64 (std::ceil (t * kSumScale));
}

int64_t forest_final (double t) { return saturate_int64 (std::ceil (t * kSumScale)); }

std::vector<uint16_t> forest_blur_frame (const ForestModel &m, const uint8_t *grey, int w, int h, int stride) {
  std::vector<uint16_t> out (static_cast<size_t> (w) * h);
  const int k[3] = {m.blur[0], m.blur[1], m.blur[2]};
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      unsigned acc = 0;
      for (int j = -1; j <= 1; j++) {
        const uint8_t *row = grey + static_cast<size_t> (clampi (y + j, 0, h - 1)) * stride;
        unsigned r = 0;
        for (int i = -1; i <= 1; i++)
          r += k[i + 1] * row[clampi (x + i, 0, w - 1)];
        acc += k[j + 1] * r;
      }
      out[static_cast<size_t> (y) * w + x] = static_cast<uint16_t> (acc);
    }
  return out;
}

std::vector<int32_t> forest_level_plane (const ForestModel &m, const std::vector<uint16_t> &b, int w, int h,
                                         const PyramidGeometry &g, size_t li) {
  (void) h;
  const PyramidLevel &l = g.levels[li];
  const int M = l.step, cw = l.width / M, ch = l.height / M;
  const int32_t *xt = g.xtab.data () + g.xtab_first[li], *yt = g.ytab.data () + g.ytab_first[li];
  auto at = [&] (int x, int y) -> uint32_t { return b[static_cast<size_t> (y) * w + x]; };
  // OpenCV's bilinear sample with 8-bit weights, rounded
  auto sample = [&] (int px, int py) -> uint32_t {
    const int sx = xt[px] >> 9, sy = yt[py] >> 9;
    const uint32_t cx1 = xt[px] & 511, cx0 = 256 - cx1, cy1 = yt[py] & 511, cy0 = 256 - cy1;
    const uint32_t h0 = at (sx, sy) * cx0 + (cx1 ? at (sx + 1, sy) * cx1 : 0);
    const uint32_t h1 = cy1 ? at (sx, sy + 1) * cx0 + (cx1 ? at (sx + 1, sy + 1) * cx1 : 0) : 0;
    return (h0 * cy0 + h1 * cy1 + 32768u) >> 16;
  };
  std::vector<int32_t> raw (static_cast<size_t> (cw) * ch), out (raw.size ());
  for (int cy = 0; cy < ch; cy++)
    for (int cx = 0; cx < cw; cx++) {
      uint32_t s = 0;
      for (int dy = 0; dy < M; dy++)
        for (int dx = 0; dx < M; dx++)
          s += sample (cx * M + dx, cy * M + dy);
      raw[static_cast<size_t> (cy) * cw + cx] = static_cast<int32_t> (s);
    }
  const int k[3] = {m.blur[0], m.blur[1], m.blur[2]};
  for (int cy = 0; cy < ch; cy++)
    for (int cx = 0; cx < cw; cx++) {
      int32_t acc = 0;
      for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++)
          acc += k[j + 1] * k[i + 1] *
                 raw[static_cast<size_t> (clampi (cy + j, 0, ch - 1)) * cw + clampi (cx + i, 0, cw - 1)];
      out[static_cast<size_t> (cy) * cw + cx] = acc;
    }
  return out;
}

ForestVerdict forest_evaluate (const ForestModel &m, const int32_t *win, int stride, int64_t final_q) {
  ForestVerdict v;
  const int K = m.nodes_per_tree;
  for (const ForestModel::Stage &st : m.stages) {
    const int n = st.last - st.first + 1;
    for (int t = st.first; t <= st.last; t++) {
      const ForestModel::Node *tree = m.nodes.data () + static_cast<size_t> (t) * K;
      int i = 0;
      while (tree[i].left >= 0) {
        const ForestModel::Node &nd = tree[i];
        const int32_t d = win[nd.y1 * stride + nd.x1] - win[nd.y2 * stride + nd.x2];
        i = d < forest_split (nd.threshold) ? nd.left : nd.left + 1;
      }
      v.sum_q += forest_leaf (tree[i].score, n);
    }
    v.stages++;
    if (v.sum_q < forest_reject_below (st.threshold))
      return v;
  }
  v.hit = v.sum_q >= final_q;
  return v;
}

} // namespace gpudetect
