// Grouping of raw detections with OpenCV groupRectangles semantics.
#pragma once

#include <vector>

namespace gpudetect {

struct Rect {
  int x = 0, y = 0, width = 0, height = 0;
  bool operator== (const Rect &o) const {
    return x == o.x && y == o.y && width == o.width && height == o.height;
  }
};

struct GroupedRect {
  Rect rect;
  int neighbors = 0;     // raw windows merged into this one
  float confidence = 0;  // see confidence_from_neighbors()
  float score = 0;       // the largest score of its raw windows (with scores given)
};

// OpenCV's partition() equivalence classes under SimilarRects(eps), class
// averages, classes with <= min_neighbors members dropped, and small boxes
// inside bigger, better supported ones dropped.  min_neighbors <= 0 returns
// every raw rectangle (neighbors = 1), as OpenCV does.  With `scores` (one per
// raw rectangle), each group's score is the largest of its members', as
// OpenCV's variant with level weights gives it when every level is equal.
std::vector<GroupedRect> group_rectangles (const std::vector<Rect> &raw, int min_neighbors, double eps = 0.2,
                                           const std::vector<float> *scores = nullptr);

// Confidence of a grouped object in [0, 1): n / (n + 4), where n is the number
// of raw windows merged into it.  A lone window gives 0.2, 4 give 0.5, 16 give
// 0.8, 36 give 0.9: the support of neighbouring windows and scales that
// Viola-Jones detections are known to gather on true objects.
float confidence_from_neighbors (int n);

// The part of `r` inside a width x height frame (empty when outside).
Rect clip_rect (const Rect &r, int width, int height);

// Intersection over union of two rectangles.
double iou (const Rect &a, const Rect &b);

} // namespace gpudetect
