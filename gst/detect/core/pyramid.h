// Geometry of the detection pyramid: OpenCV's scale list, level sizes and
// window grids, the packed layout that puts every level in one buffer with
// one stride, and the fixed-point resampling tables (INTER_LINEAR_EXACT).
#pragma once

#include <cstdint>
#include <vector>

namespace gpudetect {

struct Size2 {
  int width = 0, height = 0;
};

struct PyramidLevel {
  float scale = 1;             // as OpenCV stores it (float)
  int width = 0, height = 0;   // resampled image: cvRound(image / scale)
  int win_width = 0, win_height = 0; // detection size in image pixels: cvRound(window * scale)
  int step = 2;                // window step: 2 below scale 2, else 1
  int x0 = 0, y0 = 0;          // origin of the level's plane in the packed buffer: its integral, (width+1) x
                               // (height+1), or its cells (plan_pyramid_octaves)
  int nx = 0, ny = 0;          // window grid
  int first_window = 0;        // index of the level's first window in the flat window list
  // How a window's origin maps back to the frame: 0, cvRound (x * scale)
  // (CascadeClassifier); else the factor the frame was resized by, (int) (x /
  // resize) in float (xobjdetect's WBDetector).
  float resize = 0;
  // The region of the frame the level was resampled from (an index into
  // PyramidGeometry::regions; 0 and no regions: the whole frame).  Window
  // origins map back to the region's pixels.
  int region = 0;
};

// A rectangle of the frame searched as an image of its own (plan_regions).
struct Region {
  int x = 0, y = 0, width = 0, height = 0;
  bool operator== (const Region &o) const {
    return x == o.x && y == o.y && width == o.width && height == o.height;
  }
};

struct PyramidGeometry {
  int image_width = 0, image_height = 0;
  int window_width = 0, window_height = 0;
  int stride = 0, rows = 0;    // packed buffer: rows x stride elements
  int total_windows = 0;
  int total_rows = 0;          // sum of level heights
  std::vector<PyramidLevel> levels;
  // Where the pyramid is several regions' (plan_regions): those regions, in
  // frame pixels; empty: the whole image.
  std::vector<Region> regions;
  // Where each region's pixels lie in the image the resampling tables read:
  // the frame (sources == regions), or a family's own image of the regions
  // side by side (the forest's blurred regions), of source_width x
  // source_height pixels (0: the frame's).
  std::vector<Region> sources;
  int source_width = 0, source_height = 0;
  int regions_left_out = 0; // regions plan_regions had no level left for
  int cell = 0;                // the planes' unit: 0 integrals, else cells of cell x cell pixels

  // Per-level resampling tables, concatenated: entry = source index * 512 + c1
  // with c1 in [0, 256] the weight of source index + 1 (8-bit fixed point).
  std::vector<int32_t> xtab, ytab;
  std::vector<int32_t> xtab_first, ytab_first; // start of each level's table
  // Work map: one entry per resampled row (level | y << 10).
  std::vector<int32_t> row_map;
};

// Plans the pyramid exactly as OpenCV's CascadeClassifier::detectMultiScale:
// factor starts at 1 and is multiplied by scale_factor; window sizes round
// with cvRound; levels under min_size are skipped; the scan stops once the
// window exceeds max_size (0 = unbounded) or the image.
PyramidGeometry plan_pyramid (int image_width, int image_height, int window_width, int window_height,
                              double scale_factor, Size2 min_size, Size2 max_size);

// Plans the pyramid exactly as OpenCV xobjdetect's WBDetector::detect (4.6,
// WaldBoost::detect) for a window of window_width x window_height: the frame
// resized by each float factor s = 0.2f, s *= (float) scale_factor while s <
// 1.2f (shrinking and enlarging; levels of cvRound (frame * s) pixels,
// resampled with INTER_LINEAR_EXACT at exactly s, or copied where the level
// has the frame's size), windows every 4 pixels with x + window < width and y +
// window < height, each mapped back to the frame as ((int) (x / s), (int) (y /
// s)) with a side of (int) (window / s).  Levels whose window in frame pixels
// is under min_size or over max_size (0: unbounded) are left out.
PyramidGeometry plan_pyramid_xobjdetect (int image_width, int image_height, int window_width, int window_height,
                                         double scale_factor, Size2 min_size, Size2 max_size);

// Plans a pyramid of levels_per_octave levels an octave, every level made from
// the frame: level k is the frame shrunk by s = 2^(k / levels_per_octave) to
// cvRound (frame / s) pixels (resampled with INTER_LINEAR_EXACT, as the other
// plans), seen as cells of cell x cell pixels; a plane of (width / cell) x
// (height / cell) cells per level, packed (x0, y0, stride), windows of
// window_width x window_height pixels (multiples of cell) every cell pixels,
// until a level's plane is smaller than the window.  Levels whose window in
// frame pixels (cvRound (window * s)) is under min_size are left out; the scan
// stops at one over max_size (0: unbounded).
PyramidGeometry plan_pyramid_octaves (int image_width, int image_height, int window_width, int window_height,
                                      int levels_per_octave, int cell, Size2 min_size, Size2 max_size);

// One axis of OpenCV's INTER_LINEAR_EXACT tables for cv::resize at the factor
// inv_scale (dst / src where it is given the size): an entry per destination
// index, source index * 512 + the weight of the next source pixel (1/256),
// appended to `tab`.
void linear_exact_table (int src, int dst, double inv_scale, std::vector<int32_t> *tab);

// One pyramid of several regions of an image_width x image_height frame, each
// planned by `plan_one` (a family's plan for an image of the region's size)
// exactly as for that region cut out as an image of its own: the regions'
// levels packed into one buffer, their resampling tables reading the frame at
// the region's offset (so that the device resamples every region's levels in
// one pass), each level naming its region.  The work maps hold at most 1024
// levels: the regions past that are left out (regions_left_out); empty
// regions and regions no level fits give no levels.
template <typename Plan>
PyramidGeometry plan_regions (int image_width, int image_height, const std::vector<Region> &regions, Plan plan_one);
// `sources` (where given): each region's place in the image the tables read
// instead of its place in the frame.
PyramidGeometry merge_region_plans (int image_width, int image_height, const std::vector<Region> &regions,
                                    const std::vector<PyramidGeometry> &plans,
                                    const std::vector<Region> *sources = nullptr);
template <typename Plan>
PyramidGeometry plan_regions (int image_width, int image_height, const std::vector<Region> &regions, Plan plan_one) {
  std::vector<PyramidGeometry> plans;
  plans.reserve (regions.size ());
  for (const Region &r : regions)
    plans.push_back (r.width > 0 && r.height > 0 ? plan_one (r.width, r.height) : PyramidGeometry ());
  return merge_region_plans (image_width, image_height, regions, plans);
}

// The geometry of levels a family plans itself (linear HOG filters, DPM):
// each level's size, scale, step and window grid as given (its window size
// the model's where left 0); the windows numbered one level after another.
PyramidGeometry feature_geometry (int image_width, int image_height, Size2 window, std::vector<PyramidLevel> levels);

// OpenCV's cvRound: round half to even.
int round_half_even (double v);

} // namespace gpudetect
