// Pyramid plan: OpenCV's scale list and sizes, packed layout, and resampling
// tables that reproduce cv::resize(INTER_LINEAR_EXACT) bit for bit.
#include "check.h"
#include "core/pyramid.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>

using namespace gpudetect;

// Resamples with the plan's tables, as kernels/pyramid.cl does.
static cv::Mat resample (const cv::Mat &src, const PyramidGeometry &g, size_t li) {
  const PyramidLevel &l = g.levels[li];
  cv::Mat out (l.height, l.width, CV_8U);
  for (int y = 0; y < l.height; y++) {
    int ye = g.ytab[g.ytab_first[li] + y], sy = ye >> 9;
    unsigned cy1 = ye & 511, cy0 = 256 - cy1;
    for (int x = 0; x < l.width; x++) {
      int xe = g.xtab[g.xtab_first[li] + x], sx = xe >> 9;
      unsigned cx1 = xe & 511, cx0 = 256 - cx1;
      auto px = [&] (int xx, int yy) { return static_cast<unsigned> (src.at<uint8_t> (yy, xx)); };
      unsigned h0 = px (sx, sy) * cx0 + (cx1 ? px (sx + 1, sy) * cx1 : 0);
      unsigned h1 = cy1 ? px (sx, sy + 1) * cx0 + (cx1 ? px (sx + 1, sy + 1) * cx1 : 0) : 0;
      out.at<uint8_t> (y, x) = static_cast<uint8_t> ((h0 * cy0 + h1 * cy1 + 32768u) >> 16);
    }
  }
  return out;
}

int main () {
  PyramidGeometry g = plan_pyramid (640, 480, 24, 24, 1.1, {24, 24}, {0, 0});
  CHECK_MSG (g.levels.size () == 32, "%zu levels", g.levels.size ()); // 1.1^31 * 24 <= 480 < 1.1^32 * 24
  double factor = 1;
  int windows = 0;
  for (size_t i = 0; i < g.levels.size (); i++, factor *= 1.1) {
    const PyramidLevel &l = g.levels[i];
    CHECK (l.scale == static_cast<float> (factor));
    CHECK (l.width == static_cast<int> (std::nearbyint (640 / l.scale)));
    CHECK (l.height == static_cast<int> (std::nearbyint (480 / l.scale)));
    CHECK (l.win_width == static_cast<int> (std::nearbyint (24 * l.scale)));
    CHECK (l.step == (l.scale >= 2 ? 1 : 2));
    CHECK (l.nx == (l.width + 1 - 24 + l.step - 1) / l.step && l.ny == (l.height + 1 - 24 + l.step - 1) / l.step);
    CHECK (l.first_window == windows);
    windows += l.nx * l.ny;
    // Inside the packed buffer, disjoint from every other level.
    CHECK (l.x0 >= 0 && l.x0 + l.width + 1 <= g.stride && l.y0 + l.height + 1 <= g.rows);
    for (size_t j = 0; j < i; j++) {
      const PyramidLevel &o = g.levels[j];
      bool apart = l.x0 >= o.x0 + o.width + 1 || o.x0 >= l.x0 + l.width + 1 || l.y0 >= o.y0 + o.height + 1 ||
                   o.y0 >= l.y0 + l.height + 1;
      CHECK_MSG (apart, "levels %zu and %zu overlap", i, j);
    }
  }
  CHECK (g.total_windows == windows);
  CHECK (g.stride == 672); // alignSize(640 + 31, 32)
  CHECK (static_cast<int> (g.row_map.size ()) == g.total_rows);

  // min-size skips small levels, max-size stops the scan.
  PyramidGeometry h = plan_pyramid (640, 480, 24, 24, 1.1, {60, 60}, {200, 200});
  CHECK (!h.levels.empty ());
  CHECK (h.levels.front ().win_width >= 60 && h.levels.back ().win_width <= 200);
  CHECK (std::nearbyint (24 * h.levels.back ().scale * 1.1) > 200);
  CHECK (plan_pyramid (20, 20, 24, 24, 1.1, {0, 0}, {0, 0}).levels.empty ());
  CHECK (plan_pyramid (640, 480, 24, 24, 1.0, {0, 0}, {0, 0}).levels.empty ());

  // The tables reproduce OpenCV's bit-exact bilinear resize on a real image.
  cv::Mat img = cv::imread (GPUDETECT_TEST_DATA "/grace_hopper_256x300.pgm", cv::IMREAD_GRAYSCALE);
  CHECK (!img.empty ());
  if (!img.empty ()) {
    PyramidGeometry p = plan_pyramid (img.cols, img.rows, 24, 24, 1.05, {0, 0}, {0, 0});
    for (size_t li = 0; li < p.levels.size (); li++) {
      cv::Mat ref;
      cv::resize (img, ref, cv::Size (p.levels[li].width, p.levels[li].height), 0, 0, cv::INTER_LINEAR_EXACT);
      cv::Mat ours = resample (img, p, li);
      CHECK_MSG (cv::countNonZero (ref != ours) == 0, "level %zu (%dx%d) differs from cv::resize", li,
                 p.levels[li].width, p.levels[li].height);
    }
  }
  return finish ();
}
