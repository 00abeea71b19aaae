#include "candidates.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

namespace gpudetect {

std::vector<RawHit> decode_candidates (const PyramidGeometry &g, const uint32_t *pairs, uint32_t n) {
  std::vector<uint64_t> keyed (n); // window index in the high half: sorting by it keeps each score with its window
  for (uint32_t i = 0; i < n; i++)
    keyed[i] = static_cast<uint64_t> (pairs[2 * i]) << 32 | pairs[2 * i + 1];
  std::sort (keyed.begin (), keyed.end ());
  std::vector<RawHit> hits;
  hits.reserve (n);
  for (uint64_t k : keyed) {
    const int gid = static_cast<int> (k >> 32);
    auto it = std::upper_bound (g.levels.begin (), g.levels.end (), gid,
                                [] (int v, const PyramidLevel &l) { return v < l.first_window; });
    if (it == g.levels.begin ())
      continue;
    const PyramidLevel &l = *(it - 1);
    const int i = gid - l.first_window;
    if (i >= l.nx * l.ny)
      continue; // not a window of this geometry (a device fault): dropped rather than invented
    RawHit h;
    h.level = static_cast<int> (it - 1 - g.levels.begin ());
    h.x = (i % l.nx) * l.step;
    h.y = (i / l.nx) * l.step;
    if (l.resize > 0) // (int) (x / s), as xobjdetect's WBDetector
      h.rect = {static_cast<int> (static_cast<float> (h.x) / l.resize),
                static_cast<int> (static_cast<float> (h.y) / l.resize), l.win_width, l.win_height};
    else
      h.rect = {static_cast<int> (std::nearbyint (static_cast<float> (h.x) * l.scale)),
                static_cast<int> (std::nearbyint (static_cast<float> (h.y) * l.scale)), l.win_width, l.win_height};
    const uint32_t bits = static_cast<uint32_t> (k);
    std::memcpy (&h.score, &bits, sizeof h.score);
    hits.push_back (h);
  }
  return hits;
}

void shuffle_candidates (uint32_t *pairs, uint32_t n, uint64_t seed) {
  std::mt19937_64 rng (seed);
  for (uint32_t i = n; i > 1; i--) { // Fisher-Yates over whole pairs
    const uint32_t j = static_cast<uint32_t> (rng () % i);
    std::swap (pairs[2 * (i - 1)], pairs[2 * j]);
    std::swap (pairs[2 * (i - 1) + 1], pairs[2 * j + 1]);
  }
}

std::vector<Detection> group_hits (const std::vector<RawHit> &hits, const PyramidGeometry &g, int min_neighbors,
                                   double eps, bool scored, double least_confidence) {
  std::vector<Rect> raw;
  std::vector<float> scores;
  raw.reserve (hits.size ());
  for (const RawHit &h : hits) {
    raw.push_back (h.rect);
    if (scored)
      scores.push_back (h.score);
  }
  std::vector<Detection> out;
  for (const GroupedRect &gr : group_rectangles (raw, min_neighbors, eps, scored ? &scores : nullptr)) {
    const Rect r = clip_rect (gr.rect, g.image_width, g.image_height);
    if (r.width > 0 && r.height > 0 && gr.confidence >= least_confidence)
      out.push_back ({r, gr.neighbors, gr.confidence, scored ? gr.score : 0.f, 0});
  }
  return out;
}

bool scored_object (const Rect &box, double score, int width, int height, Detection *out) {
  const Rect r = clip_rect (box, width, height);
  if (r.width <= 0 || r.height <= 0)
    return false;
  *out = Detection ();
  out->rect = r;
  out->neighbors = 1;
  out->score = static_cast<float> (score);
  out->confidence = static_cast<float> (1.0 / (1.0 + std::exp (-score)));
  return true;
}

} // namespace gpudetect
