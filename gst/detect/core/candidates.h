// The record every family's kernels write for a window they accept, and its
// decoding on the host.
//
// On the device a frame's candidates are one buffer of uints: [0] the count,
// [1] windows a family had to drop because a buffer of its own was full (its
// "lost" counter; 0 for families without one), [2..3] unused, then one
// (window index, score bits) pair per candidate.  The window index numbers
// the windows of every level of the frame's pyramid one after the other
// (PyramidLevel::first_window, row-major in each level's grid), so it names
// the level, x and y at once; the score is the family's raw score (a float).
#pragma once

#include "group.h"
#include "pyramid.h"

#include <cstdint>
#include <vector>

namespace gpudetect {

// Header words before the first (window, score) pair.
constexpr int kCandidateHeader = 4;

// A raw window accepted by a family, before grouping.
struct RawHit {
  int level = 0, x = 0, y = 0; // window origin in level pixels
  Rect rect;                   // in frame pixels
  float score = 0;             // the family's raw score (0 where it has none)
};

// An object reported for a frame.
struct Detection {
  Rect rect;
  int neighbors = 0;    // raw windows merged into it
  float confidence = 0; // in [0, 1]
  float score = 0;      // the family's raw score of the object (0 where it has none)
  int label_id = 0;
  int region = -1;      // the searched region it lies in (Detector::submit's regions); -1: a whole-frame search
};

// Decodes `n` (window, score bits) pairs into raw hits, sorted by window
// index (the order does not depend on the device's).
std::vector<RawHit> decode_candidates (const PyramidGeometry &g, const uint32_t *pairs, uint32_t n);

// The objects of a frame's raw windows by OpenCV's grouping (eps, at least
// min_neighbors + 1 windows), clipped to the frame as detectMultiScale
// clips them; `scored`: each object keeps its best window's score; objects
// whose confidence is below `least_confidence` are dropped.
// An object of a family that scores and suppresses boxes itself (linear
// filters, DPM): the part of `box` inside the frame, `score`, and the score's
// logistic as its confidence; false where no part of the box is inside.
bool scored_object (const Rect &box, double score, int width, int height, Detection *out);

std::vector<Detection> group_hits (const std::vector<RawHit> &hits, const PyramidGeometry &g, int min_neighbors,
                                   double eps, bool scored, double least_confidence = 0.0);

// Puts `n` (window, score bits) pairs in another order, the same for the same
// seed: the order a device's compaction might have written them in.
void shuffle_candidates (uint32_t *pairs, uint32_t n, uint64_t seed);

} // namespace gpudetect
