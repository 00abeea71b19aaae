// WaldBoost over multi-block LBP: one boosted classifier whose every weak
// hypothesis looks up a response for the LBP code of one 3x3 grid of blocks,
// with Wald's sequential decision after each of them.  In-memory form, the
// loaders (the project's XML, OpenCV xobjdetect's WBDetector files), the
// writer used by the trainer, and the reference evaluation of one window
// that every schedule of the engine reproduces exactly.
#pragma once

#include "cl/error.h"
#include <libxml/tree.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gpudetect {

struct WaldBoostModel {
  struct Stage {
    // The LBP grid: top-left corner in window pixels, block size in pixels.
    int x = 0, y = 0, w = 1, h = 1;
    // After adding this stage's response, the window is rejected when the
    // sum is below neg_t and accepted at once when it is above pos_t
    // (-inf / +inf: never).
    double neg_t = -std::numeric_limits<double>::infinity ();
    double pos_t = std::numeric_limits<double>::infinity ();
    std::array<float, 256> response{}; // by LBP code
  };

  std::string name;                  // classifierName
  int window_width = 0, window_height = 0;
  double min_std_dev = 0;            // windows flatter than this (grey-level standard deviation) are rejected
  double threshold = 0;              // gamma: a window that runs through every stage is a hit when sum >= gamma
  bool threshold_exclusive = false;  // sum > gamma instead (OpenCV xobjdetect's final test)
  // Sums in single precision, added in stage order, thresholds compared as
  // floats (OpenCV xobjdetect's arithmetic, whose rejection thresholds are
  // themselves such sums) instead of the 64-bit fixed point.
  bool float_sums = false;
  std::vector<Stage> stages;

  // GPU schedule stored with the model (<schedule>; 0 or empty: the engine's
  // defaults): divisors of the staged reduction, stages every window runs
  // before the first survivor count, stages between counts.
  std::vector<int> divisors;
  int sync_first = 0, sync_step = 0;

  enum class Format { Native, XObjDetect };
  Format format = Format::Native;
  std::string path, default_label;   // set by the file loader

  // The first stage from which no stage rejects or accepts (stages.size ()
  // when the last one still decides): the tail, which only adds.
  int tail_start () const;
};

// Fixed-point arithmetic of the evaluation, shared by the reference and every
// kernel: responses and sums are 64-bit integers in units of 2^-32, so that a
// sum does not depend on the order of its terms (the tail is summed as a
// parallel reduction) and matches on every device.
constexpr int kWaldBoostFracBits = 32;
int64_t waldboost_fixed (double v);                   // nearest, saturated
int64_t waldboost_reject_below (double neg_t);        // sum_q < this  <=> sum < neg_t
int64_t waldboost_accept_above (double pos_t);        // sum_q > this  <=> sum > pos_t
int64_t waldboost_final_threshold (double gamma, bool exclusive); // hit <=> sum_q >= this
double waldboost_real (int64_t q);
// float_sums models: hit <=> sum >= this float (the least float above gamma
// when exclusive).
float waldboost_final_threshold_float (double gamma, bool exclusive);

// The LBP code of the 3x3 grid with top-left (x, y) and w x h blocks, from an
// integral image (sum of the pixels above and left, (W+1) x (H+1), `stride`
// elements a row; 32-bit sums wrap as OpenCV's do).  Bit 7 down to bit 0:
// the top-left, top, top-right, right, bottom-right, bottom, bottom-left and
// left blocks, each set when that block's sum is >= the centre block's
// (OpenCV's order, for its cascades and its xobjdetect WaldBoost alike).
int waldboost_lbp_code (const uint32_t *integral, int stride, int x, int y, int w, int h);

// The reference evaluation of the window whose top-left pixel is at `origin`
// of an integral image (and of its squared-sum integral `sq`, needed only
// when min_std_dev > 0): every stage in order as the format defines it.
// Returns whether it is a hit, the sum where it stopped (sum_q in fixed
// point, or sum_f for float_sums models), its score as the kernels report it
// and the stages evaluated.  final_threshold: waldboost_final_threshold's, or
// for float_sums models the bits of waldboost_final_threshold_float's.
struct WaldBoostVerdict {
  bool hit = false;
  int64_t sum_q = 0;
  float sum_f = 0;
  int stages = 0;
  float score () const;
};
WaldBoostVerdict waldboost_evaluate (const WaldBoostModel &m, const uint32_t *integral, const uint32_t *sq,
                                     int stride, int64_t final_threshold);
// The final threshold of a model for waldboost_evaluate: the model's own
// (unset) or a user's (hit <=> sum >= threshold), in the model's arithmetic.
int64_t waldboost_final_threshold_arg (const WaldBoostModel &m, const double *user_threshold = nullptr);
// n * sum(p^2) - sum(p)^2 over a window of n pixels is below this for a window
// flatter than min_std_dev (0 when the model rejects no window so).
int64_t waldboost_flat_limit (const WaldBoostModel &m);

// Parses a model file's text (the project's XML or an xobjdetect
// WBDetector file); returns an empty string on success, else a message naming
// the element, stage or value at fault.
Error parse_waldboost (const std::string &text, WaldBoostModel *out);
// The same from a parsed document's root element, and whether a root element
// is of this format.
Error read_waldboost_native (const xmlNode *root, WaldBoostModel *out);
bool is_waldboost_native (const xmlNode *root);

// OpenCV xobjdetect's WBDetector files (FileStorage XML, WaldBoost::write):
// whether a root element is one, and the model from it (xobjdetect_xml.cpp).
bool is_waldboost_xobjdetect (const xmlNode *root);
Error read_waldboost_xobjdetect (const xmlNode *root, WaldBoostModel *out);

// Reads and parses a file (at most 64 MiB).
Error load_waldboost_file (const std::string &path, WaldBoostModel *out);

// The project's XML for a model (floats written so that they read back
// exactly).
std::string write_waldboost_xml (const WaldBoostModel &m);

} // namespace gpudetect
