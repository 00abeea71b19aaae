// Cascaded random forest of pixel-difference trees: a cascade whose every
// stage holds one or more small binary trees over a blurred, M x M-shrunk
// grey pyramid.  An inner node compares the difference of two values of the
// window (x1, y1) - (x2, y2) with its threshold and goes to its left child
// when the difference is below it, else to the right one (the node after the
// left); a leaf holds a score.  A stage adds the average of its trees' leaf
// scores to the window's running sum and rejects the window when the sum is
// below the stage's threshold; a window that runs through every stage is a
// hit when its sum is at least the final threshold.
//
// In-memory form, the file format's reader and writer (csv.cpp,
// models/README.md), the fixed-point arithmetic every schedule shares, and
// the reference preprocessing and evaluation the engine's kernels reproduce
// exactly (tests/engine/test_forest_schedules.cpp).
#pragma once

#include "cl/error.h"
#include "core/pyramid.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gpudetect {

struct ForestModel {
  struct Node {
    double score = 0;     // leaf: its score
    double threshold = 0; // inner node: left when value(x1, y1) - value(x2, y2) < threshold
    int left = -1;        // index of the left child in the tree (the right one is left + 1); -1: a leaf
    int x1 = 0, y1 = 0, x2 = 0, y2 = 0; // in shrunk pixels of the window
    int z1 = 0, z2 = 0;   // layers (one so far: 0, the blurred shrunk grey image)
  };
  struct Stage {
    int first = 0, last = 0; // its trees, first to last inclusive
    double threshold = -std::numeric_limits<double>::infinity (); // rejected below (-inf: never)
  };

  std::string name;
  int window_width = 0, window_height = 0; // in level pixels, multiples of shrink
  int shrink = 1;                          // M: values are sums over M x M level pixels
  int levels_per_octave = 8;               // N: the pyramid's scale step is 2^(1/N)
  std::array<int, 3> blur{4, 8, 4};        // the 3-tap blur in 16ths, symmetric, summing to 16
  double threshold = 0;                    // final: a hit when the sum is >= this
  int nodes_per_tree = 0;
  std::vector<Node> nodes;                 // tree t's nodes: [t * nodes_per_tree, (t + 1) * nodes_per_tree)
  std::vector<Stage> stages;
  std::string path, default_label;         // set by the file loader

  size_t trees () const { return nodes_per_tree ? nodes.size () / nodes_per_tree : 0; }
  // The window in shrunk pixels.
  int cells_x () const { return window_width / shrink; }
  int cells_y () const { return window_height / shrink; }
};

// Limits of what a file may hold (models/README.md).
constexpr int kForestMaxWindow = 512;
constexpr int kForestMaxShrink = 8;
constexpr int kForestMaxLevelsPerOctave = 32;
constexpr int kForestMaxNodesPerTree = 255;
constexpr size_t kForestMaxTrees = 1u << 20;
constexpr size_t kForestMaxStages = 100000;
// A stage's trees times nodes per tree: what one stage puts in local memory
// on the GPU schedule (16 bytes a node).
constexpr int kForestMaxStageNodes = 1024;
// Nodes on the device (a stage's trees are laid out per stage).
constexpr size_t kForestMaxDeviceNodes = 1u << 22;

// Fixed-point arithmetic shared by the reference and every kernel.
//
// Values: the grey level p / 255 blurred ([a b a] / 16 both ways), resampled
// (OpenCV's 8-bit bilinear weights, rounded to the nearest unit), summed over
// M x M level pixels and blurred again, is the integer q of the planes in
// units of 1 / (255 * 256 * 256); every step is exact integer arithmetic, so
// that any schedule on any device reproduces the reference bit for bit.
constexpr double kForestValueUnits = 255.0 * 65536.0;
// An inner node's threshold t as an integer: d < t  <=>  d_q < forest_split (t).
int32_t forest_split (double t);
// Sums: 64-bit integers in units of 2^-32.  A leaf's share of its stage's
// average: score / trees, rounded to the nearest unit (a sum does not depend
// on the order of its terms).
int64_t forest_leaf (double score, int trees);
int64_t forest_reject_below (double stage_threshold); // rejected <=> sum_q < this
int64_t forest_final (double threshold);              // hit <=> sum_q >= this
// The largest |sum| a file may reach (sum of its stages' largest |leaf|).
constexpr double kForestMaxSum = 1 << 30;

// Reference preprocessing (what kernels/forest.cl computes).  The frame's
// grey levels blurred, in units of 1 / (255 * 256): w x h values.
std::vector<uint16_t> forest_blur_frame (const ForestModel &m, const uint8_t *grey, int width, int height,
                                         int stride);
// The finished plane of level `li` of a plan (plan_pyramid_octaves): the
// level resampled from the blurred frame, summed over shrink x shrink blocks,
// blurred again; (width / shrink) x (height / shrink) values, row-major.
std::vector<int32_t> forest_level_plane (const ForestModel &m, const std::vector<uint16_t> &blurred, int width,
                                         int height, const PyramidGeometry &g, size_t li);

// The reference evaluation of the window whose top-left value is `window`
// in a plane `stride` values wide: every stage in order.  `final_q`: the
// final threshold (forest_final).
struct ForestVerdict {
  bool hit = false;
  int64_t sum_q = 0;
  int stages = 0; // stages evaluated
  float score () const { return static_cast<float> (sum_q) * 0x1p-32f; }
};
ForestVerdict forest_evaluate (const ForestModel &m, const int32_t *window, int stride, int64_t final_q);

// The file format (models/README.md): whether a text is one (its first line),
// the model from it (an empty string on success, else a message naming the
// line and column at fault), and the text for a model (every number written
// so that it reads back exactly).
bool is_forest_text (const std::string &text);
Error parse_forest (const std::string &text, ForestModel *out);
std::string write_forest (const ForestModel &m);
// Reads and parses a file (at most 64 MiB).
Error load_forest_file (const std::string &path, ForestModel *out);

} // namespace gpudetect
