// What OpenCV's cv::dpm::DPMDetector (opencv_contrib 4.6) computes for a
// model (model.h) and a frame, laid out for the device (kernels/dpm.cl), and
// a host reference of it in double precision, as cv::dpm computes it.
//
// cv::dpm, for an image of W x H pixels (grey images are made BGR with three
// equal channels, which gives the same gradients as the grey image):
// - the pyramid: s = 2^(1 / interval), max_scale = 1 + floor (log (min (W, H)
//   / (float) (5 sbin)) / log s) (no levels if it is under interval); images
//   0 .. interval - 1 are the frame resized (cv::resize, INTER_LINEAR, of the
//   double image) to cvRound (W / s^i) x cvRound (H / s^i); image m >=
//   interval is image m - interval resized to cvRound (its size * 0.5) (where
//   both sides are even, cv::resize takes its INTER_AREA path: the mean of 2 x
//   2 pixels).  Level i < interval is image i with cells of sbin / 2 pixels
//   (the parts' levels, twice the resolution of level i + interval); level m +
//   interval is image m with cells of sbin.  Level scales: 2 / s^i for level
//   i < interval, 1 / s^i for level i + interval, half of level m's for level
//   m + interval.
// - the features (Feature::computeHOG32D): cells = cvRound (size / cell);
//   each pixel inside the visible cells but the outer ring of pixels
//   (reading its neighbours clamped to the image) takes the gradient of the
//   channel with the largest, snaps it to 18 orientations and votes its
//   length into the 4 nearest cells (bilinear weights); every cell but the
//   outer ring has 18 contrast-sensitive features, 9 insensitive and 4
//   texture features, each truncated at 0.2 under its 4 normalisations, and a
//   truncation feature 0; around them (pad_x + 1) x (pad_y + 1) cells of
//   padding whose 31 features are 0 and truncation feature 1.
// - a component's score at root position (rx, ry) of root level r >=
//   interval (its filter's top-left cell in the padded plane; rx from ceil
//   (pad_x / 2) up to, not including, root positions across - ceil (pad_x /
//   2), the same down): bias + location weight of r's octave (levels below 2
//   interval, below 6 interval, beyond) + the root filter's correlation + for
//   each part, on level r - interval at its anchor (px, py) = (2 rx + ax -
//   pad_x, 2 ry + ay - pad_y), the largest over positions (x, y) of the part
//   filter's correlation there minus the deformation cost def0 d^2 + def1 d
//   (d = px - x) + def2 e^2 + def3 e (e = py - y), over the positions where
//   the part filter fits and |d| <= 4, |e| <= 4 (cv::dpm's search window,
//   DPMCascade::halfWindowSize).
// - a window is a detection where that score reaches the model's threshold;
//   its box: scale = sbin / level scale, x1 = (rx - pad_x) scale, y1 = (ry -
//   pad_y) scale, x2 = x1 + root cols * scale - 1, y2 likewise; detections are
//   kept by score, highest first, unless one kept before covers more than half
//   of the box (intersection over this box's area, in pixels counted
//   inclusively); the reported box is the integer part of x1, y1, x2, y2.
//
// cv::dpm's cascade reaches that score through stages of PCA-projected
// filters (the same windows, in a part order, with pruning thresholds and a
// deformation pruning of positions): a window it keeps has the full model's
// score above; windows it drops early are windows whose full score is, by the
// thresholds' construction, almost always under the final threshold.  The
// device scores every window with the full model (docs: dpm.md).
#pragma once

#include "model.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpudetect {

constexpr int kDpmHalfWindow = 4; // cv::dpm's part search window: +-4 cells

struct DpmImage {
  int width = 0, height = 0;
  int source = -1;          // -1: the frame; else the image it halves
  bool area = false;        // the halving takes OpenCV's INTER_AREA path (both sides even)
  int generation = 0;       // 0: from the frame; g: from an image of generation g - 1
  size_t offset = 0;        // of its first pixel in the packed images
};

struct DpmLevel {
  int image = 0;
  int cell = 8;             // pixels a cell
  double scale = 1;         // cv::dpm's scales[level]
  int cells_x = 0, cells_y = 0; // cvRound (image / cell)
  int feat_w = 0, feat_h = 0;   // the padded feature plane
  size_t cell_offset = 0;   // of its first cell in the packed cells
  size_t feat_offset = 0;   // of its first feature in each packed feature plane
  size_t dt_offset = 0;     // of its distance-transform map, (feat_w + 8) x (feat_h + 8)
  bool computed = true;     // cv::dpm leaves some levels of tiny images empty
};

struct DpmPlan {
  int width = 0, height = 0;
  int interval = 0, max_scale = 0;
  int pad_x = 0, pad_y = 0; // the feature planes' padding: the model's + 1
  std::vector<DpmImage> images;
  std::vector<DpmLevel> levels; // interval + max_scale of them (none for images too small)
  int generations = 0;
  size_t pixels = 0, cells = 0, feat_plane = 0, dt_plane = 0;
};

DpmPlan plan_dpm (int width, int height, const DpmModel &m);

// Root positions of a component on a level: [x0, x1) x [y0, y1) (empty where
// the level has none).
struct DpmRange {
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};
DpmRange dpm_root_range (const DpmModel &m, const DpmPlan &p, int level, int comp);

// cv::resize's INTER_LINEAR coefficients along one axis from src to dst
// samples: output sample i reads index (and index + 1 where `two`) with
// float weights w0, w1.  Columns are clamped into the source as cv::resize
// clamps them (and read one sample from its last column on); rows keep their
// index (the row pair is clamped when read).
struct DpmTap {
  int index = 0;
  float w0 = 1, w1 = 0;
  bool two = true;
};
std::vector<DpmTap> dpm_linear_taps (int src, int dst, bool columns);

// --- host reference (double, cv::dpm's arithmetic) ---

// cv::resize (INTER_LINEAR, with its INTER_AREA path for exact halving) of a
// one-channel double image.
std::vector<double> dpm_resize (const std::vector<double> &src, int sw, int sh, int dw, int dh);
// Feature::computeHOG32D of a one-channel image: feat_h rows of feat_w cells
// of kDpmDims features (cv::dpm's layout).
std::vector<double> dpm_hog (const std::vector<double> &img, int w, int h, int cell, int pad_x, int pad_y,
                             int *feat_w, int *feat_h);
// Every level's features (cv::dpm's layout), from a grey frame.
std::vector<std::vector<double>> dpm_features (const DpmPlan &p, const uint8_t *grey, int stride);

struct DpmWindow {
  int comp = 0, level = 0, rx = 0, ry = 0;
  double score = 0;
};
// Every window scoring at least `threshold`, in (component, level, rx, ry)
// order.  half_window: the part search window (kDpmHalfWindow: cv::dpm's;
// -1: unbounded, Felzenszwalb's generalised distance transform).
std::vector<DpmWindow> dpm_reference (const DpmModel &m, const DpmPlan &p,
                                      const std::vector<std::vector<double>> &features, double threshold,
                                      int half_window = kDpmHalfWindow);

// A window's box in frame pixels (cv::dpm's doubles: x1, y1, x2, y2).
struct DpmBox {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  double score = 0;
  int comp = 0;
};
DpmBox dpm_window_box (const DpmModel &m, const DpmPlan &p, int level, int comp, int rx, int ry);
// cv::dpm's non-maximum suppression (overlap 0.5); the boxes kept, highest
// score first.
std::vector<DpmBox> dpm_suppress (std::vector<DpmBox> boxes, double overlap = 0.5);

} // namespace gpudetect
