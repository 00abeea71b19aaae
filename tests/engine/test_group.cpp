// Grouping: same answers as cv::groupRectangles on random clusters.
#include "check.h"
#include "group.h"

#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <random>

using namespace gpudetect;

static bool less (const Rect &a, const Rect &b) {
  return std::tie (a.x, a.y, a.width, a.height) < std::tie (b.x, b.y, b.width, b.height);
}

int main () {
  std::mt19937 rng (1234);
  for (int trial = 0; trial < 300; trial++) {
    std::vector<Rect> raw;
    std::vector<cv::Rect> cvraw;
    int clusters = 1 + rng () % 6;
    for (int c = 0; c < clusters; c++) {
      int size = 24 + rng () % 150, x = rng () % 500, y = rng () % 400, n = 1 + rng () % 12;
      for (int k = 0; k < n; k++) {
        int s = size + static_cast<int> (rng () % 9) - 4;
        Rect r{x + static_cast<int> (rng () % 7) - 3, y + static_cast<int> (rng () % 7) - 3, s, s};
        raw.push_back (r);
        cvraw.emplace_back (r.x, r.y, r.width, r.height);
      }
    }
    int mn = trial % 5;
    std::vector<GroupedRect> ours = group_rectangles (raw, mn);
    std::vector<int> weights;
    cv::groupRectangles (cvraw, weights, mn, 0.2);
    std::vector<Rect> a, b;
    for (const GroupedRect &g : ours)
      a.push_back (g.rect);
    for (const cv::Rect &r : cvraw)
      b.push_back ({r.x, r.y, r.width, r.height});
    std::sort (a.begin (), a.end (), less);
    std::sort (b.begin (), b.end (), less);
    CHECK_MSG (a == b, "trial %d: %zu vs %zu boxes", trial, a.size (), b.size ());
    if (mn > 0 && a == b) {
      // neighbours = cluster sizes, as OpenCV's weights
      std::vector<int> na, nb (weights.begin (), weights.end ());
      for (const GroupedRect &g : ours)
        na.push_back (g.neighbors);
      std::sort (na.begin (), na.end ());
      std::sort (nb.begin (), nb.end ());
      CHECK (na == nb);
    }
  }
  CHECK (confidence_from_neighbors (4) == 0.5f);
  CHECK (confidence_from_neighbors (0) == 0.f);
  CHECK (confidence_from_neighbors (36) > 0.89f && confidence_from_neighbors (36) < 0.91f);
  Rect c = clip_rect ({-5, 10, 20, 20}, 12, 25);
  CHECK (c.x == 0 && c.y == 10 && c.width == 12 && c.height == 15);
  CHECK (iou ({0, 0, 10, 10}, {5, 0, 10, 10}) > 0.333 && iou ({0, 0, 10, 10}, {5, 0, 10, 10}) < 0.334);
  return finish ();
}
