// Grouping: same answers as cv::groupRectangles on random clusters, in the
// same order (classes numbered by their first rectangle, as OpenCV's
// partition() does), from a few rectangles to crowds of overlapping clusters.
#include "check.h"
#include "core/group.h"

#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <random>

using namespace gpudetect;

int main () {
  std::mt19937 rng (1234);
  for (int trial = 0; trial < 400; trial++) {
    std::vector<Rect> raw;
    std::vector<cv::Rect> cvraw;
    // trials 300 on: crowds (up to 40 clusters of up to 40 rectangles, not
    // square, close enough to touch each other)
    const bool crowd = trial >= 300;
    int clusters = crowd ? 10 + rng () % 31 : 1 + rng () % 6;
    for (int c = 0; c < clusters; c++) {
      int size = 24 + rng () % 150, x = rng () % (crowd ? 300 : 500), y = rng () % (crowd ? 200 : 400);
      int n = 1 + rng () % (crowd ? 40 : 12), jitter = crowd ? 15 : 7;
      for (int k = 0; k < n; k++) {
        int s = size + static_cast<int> (rng () % 9) - 4, t = crowd ? s + static_cast<int> (rng () % 9) - 4 : s;
        Rect r{x + static_cast<int> (rng () % jitter) - jitter / 2, y + static_cast<int> (rng () % jitter) - jitter / 2,
               s, t};
        raw.push_back (r);
        cvraw.emplace_back (r.x, r.y, r.width, r.height);
      }
    }
    std::shuffle (raw.begin (), raw.end (), rng);
    for (size_t k = 0; k < raw.size (); k++)
      cvraw[k] = cv::Rect (raw[k].x, raw[k].y, raw[k].width, raw[k].height);
    int mn = trial % 5;
    std::vector<GroupedRect> ours = group_rectangles (raw, mn);
    std::vector<int> weights;
    cv::groupRectangles (cvraw, weights, mn, 0.2);
    std::vector<Rect> a, b;
    for (const GroupedRect &g : ours)
      a.push_back (g.rect);
    for (const cv::Rect &r : cvraw)
      b.push_back ({r.x, r.y, r.width, r.height});
    CHECK_MSG (a == b, "trial %d (%zu rectangles): %zu vs %zu boxes", trial, raw.size (), a.size (), b.size ());
    if (mn > 0 && a == b) {
      // neighbours = cluster sizes, as OpenCV's weights
      std::vector<int> na;
      for (const GroupedRect &g : ours)
        na.push_back (g.neighbors);
      CHECK (na == weights);
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
