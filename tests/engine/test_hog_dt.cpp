// Dalal and Triggs' HOG on the device against OpenCV's HOGDescriptor (the
// oracle, a test dependency only), on both schedules: on every image and
// every level of its pyramid,
// - the level's pixels equal cv::resize (INTER_LINEAR_EXACT) of the image to
//   OpenCV's level size, and the host reference (dthog.h);
// - its gradients (both parts of every pixel's length, both bins) equal
//   HOGDescriptor::computeGradient's on that level;
// - its block features (L2-Hys normalised) equal those of
//   HOGDescriptor::compute's descriptors of windows covering every block
//   position, and the host reference;
// all bit for bit: the same float operations in the same order, so the test
// accepts no tolerance and reports the largest difference where one fails.
// Images: those given, grey; noise images of edge sizes (a window exactly,
// one pixel more or fewer than a whole block, a width whose last 6 values
// cartToPolar converts with its scalar code).
//
//   test-hog-dt IMAGE.pgm...
#include "check.h"
#include "pgm_cv.h"
#include "launcher.h"

#include "families/hogfilter/dthog.h"

#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace gpudetect;

namespace {

struct Diff {
  const char *what;
  size_t values = 0, differ = 0;
  double max_abs = 0;
  void add (double a, double b) {
    values++;
    if (a != b) {
      differ++;
      max_abs = std::max (max_abs, std::fabs (a - b));
    }
  }
  void check (const char *schedule) {
    CHECK_MSG (values > 0 && differ == 0, "%s schedule, %s: %zu of %zu values differ (largest by %g)", schedule, what,
               differ, values, max_abs);
    std::printf ("%s schedule, %s: %zu values, %zu differ\n", schedule, what, values, differ);
  }
};

template <typename T> std::vector<T> read_back (const cl::Device &dev, const cl::Mem &m, size_t n) {
  std::vector<T> v (std::max<size_t> (n, 1));
  CHECK (clEnqueueReadBuffer (dev.queue.get (), m.get (), CL_TRUE, 0, n * sizeof (T), v.data (), 0, nullptr,
                              nullptr) == CL_SUCCESS);
  return v;
}

} // namespace

int main (int argc, char **argv) {
  std::vector<std::string> images (argv + 1, argv + argc);
  CHECK_MSG (!images.empty (), "no images given");
  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }
  std::printf ("device: %s\n", dev.info.describe ().c_str ());
  const DtHogParams p;
  const int rows = 15, cols = 7; // OpenCV's people window, 64 x 128
  cl::Program prog;
  ProgramSpec spec;
  DtDevice::add_sources (&spec);
  if (Error e = cl::build_program (dev, spec.source, spec.hash,
                                       "-cl-std=CL1.2 " + DtDevice::options (dev, p) +
                                           " -D HOG_FH=15 -D HOG_FW=7 -D HOG_NF=1 -D HOG_FILTER_DIMS=36",
                                       &prog)) {
    std::fprintf (stderr, "build: %s\n", e.message.c_str ());
    return 1;
  }
  const cv::HOGDescriptor ocv; // the people detector's descriptor: 16-pixel blocks every 8, 9 bins, L2-Hys 0.2
  CHECK (ocv.getWinSigma () == p.win_sigma);

  std::vector<std::string> all = images;
  for (const char *size : {"64x128", "65x129", "79x135", "1030x130", "97x300"})
    all.push_back (std::string ("noise:") + size);
  for (bool rows_schedule : {false, true}) {
    const char *sched = rows_schedule ? "CPU" : "GPU";
    DtDevice dd;
    CHECK (!dd.setup (dev, prog, p, rows_schedule));
    Diff pix_ocv{"level pixels vs cv::resize"}, pix_ref{"level pixels vs the reference"},
        grad_ocv{"gradients vs computeGradient"}, bins_ocv{"gradient bins vs computeGradient"},
        blk_ocv{"block features vs HOGDescriptor::compute"}, blk_ref{"block features vs the reference"};
    int levels = 0;
    for (const std::string &path : all) {
      cv::Mat img;
      if (path.rfind ("noise:", 0) == 0) {
        int w = 0, h = 0;
        std::sscanf (path.c_str () + 6, "%dx%d", &w, &h);
        img = cv::Mat (h, w, CV_8U);
        uint32_t r = 12345;
        for (int i = 0; i < w * h; i++) {
          r = r * 1664525u + 1013904223u;
          img.data[i] = static_cast<uint8_t> (r >> 24);
        }
        // some smooth areas too (equal neighbours: zero gradients)
        cv::GaussianBlur (img (cv::Rect (0, 0, w / 2, h)), img (cv::Rect (0, 0, w / 2, h)), cv::Size (5, 5), 2);
      } else if (!read_pgm (path, &img)) {
        CHECK_MSG (false, "cannot read %s", path.c_str ());
        continue;
      }
      const DtPlan plan = plan_dt (img.cols, img.rows, p, rows, cols);
      CHECK_MSG (!plan.levels.empty (), "%s: no levels", path.c_str ());
      const FrameLayout layout{PixelFormat::Gray8, img.cols, img.rows};
      if (Error e = dd.geometry (dev, plan, layout)) {
        CHECK_MSG (false, "geometry: %s", e.message.c_str ());
        continue;
      }
      cl::Mem src, cand;
      CHECK (!cl::make_buffer (dev, &src, img.total (), CL_MEM_READ_ONLY, img.data));
      CHECK (!cl::make_buffer (dev, &cand, 64));
      QueueLauncher launcher (dev.queue.get ());
      CHECK (!dd.enqueue (src, cand, 0, 1, launcher));
      const auto dpix = read_back<uint8_t> (dev, dd.pixels (), plan.pixels);
      const auto dgrad = read_back<float> (dev, dd.gradients (), plan.pixels * 2);
      const auto dbins = read_back<uint8_t> (dev, dd.bins (), plan.pixels * 2);
      const auto dfeat = read_back<float> (dev, dd.features (), plan.blocks * kDtDims);
      for (const DtLevel &l : plan.levels) {
        levels++;
        cv::Mat lvl;
        if (l.width == img.cols && l.height == img.rows)
          lvl = img;
        else
          cv::resize (img, lvl, cv::Size (l.width, l.height), 0, 0, cv::INTER_LINEAR_EXACT);
        const std::vector<uint8_t> ref = dt_level_pixels (l, img.data, static_cast<int> (img.step));
        for (int y = 0; y < l.height; y++)
          for (int x = 0; x < l.width; x++) {
            const size_t i = static_cast<size_t> (y) * l.width + x;
            pix_ocv.add (dpix[l.pixel_offset + i], lvl.at<uint8_t> (y, x));
            pix_ref.add (dpix[l.pixel_offset + i], ref[i]);
          }
        // gradients and blocks of OpenCV's own level image
        cv::Mat grad, qangle;
        ocv.computeGradient (lvl, grad, qangle);
        for (int y = 0; y < l.height; y++)
          for (int x = 0; x < l.width; x++) {
            const size_t i = (l.pixel_offset + static_cast<size_t> (y) * l.width + x) * 2;
            for (int k = 0; k < 2; k++) {
              grad_ocv.add (dgrad[i + k], grad.ptr<float> (y)[2 * x + k]);
              bins_ocv.add (dbins[i + k], qangle.ptr<uint8_t> (y)[2 * x + k]);
            }
          }
        // windows that cover every block position: HOGDescriptor::compute's
        // descriptor of each, its blocks column by column
        std::vector<cv::Point> wins;
        for (int wy = 0;; wy = std::min (wy + rows, l.windows_y - 1)) {
          for (int wx = 0;; wx = std::min (wx + cols, l.windows_x - 1)) {
            wins.push_back ({wx * 8, wy * 8});
            if (wx == l.windows_x - 1)
              break;
          }
          if (wy == l.windows_y - 1)
            break;
        }
        std::vector<float> desc;
        ocv.compute (lvl, desc, cv::Size (8, 8), cv::Size (0, 0), wins);
        const size_t dsize = static_cast<size_t> (rows) * cols * kDtDims;
        CHECK_MSG (desc.size () == wins.size () * dsize, "%s: %zu descriptor values for %zu windows", path.c_str (),
                   desc.size (), wins.size ());
        std::vector<float> lgrad (dgrad.begin () + l.pixel_offset * 2,
                                  dgrad.begin () + (l.pixel_offset + static_cast<size_t> (l.width) * l.height) * 2);
        std::vector<uint8_t> lbins (dbins.begin () + l.pixel_offset * 2,
                                    dbins.begin () + (l.pixel_offset + static_cast<size_t> (l.width) * l.height) * 2);
        const std::vector<float> rblk = dt_blocks (p, l, lgrad, lbins);
        const size_t nb = static_cast<size_t> (l.blocks_x) * l.blocks_y;
        for (size_t b = 0; b < nb; b++)
          for (int d = 0; d < kDtDims; d++)
            blk_ref.add (dfeat[static_cast<size_t> (d) * plan.blocks + l.block_offset + b],
                         rblk[static_cast<size_t> (d) * nb + b]);
        for (size_t w = 0; w < wins.size () && (w + 1) * dsize <= desc.size (); w++)
          for (int c = 0; c < cols; c++)
            for (int r = 0; r < rows; r++) {
              const size_t b = static_cast<size_t> (wins[w].y / 8 + r) * l.blocks_x + wins[w].x / 8 + c;
              for (int d = 0; d < kDtDims; d++)
                blk_ocv.add (dfeat[static_cast<size_t> (d) * plan.blocks + l.block_offset + b],
                             desc[w * dsize + (static_cast<size_t> (c) * rows + r) * kDtDims + d]);
            }
      }
    }
    std::printf ("%s schedule: %d levels of %zu images\n", sched, levels, all.size ());
    for (Diff *d : {&pix_ocv, &pix_ref, &grad_ocv, &bins_ocv, &blk_ocv, &blk_ref})
      d->check (sched);
  }
  // the host reference's gradients against OpenCV's on one image's level 0
  {
    cv::Mat img (130, 1030, CV_8U);
    cv::randu (img, 0, 256);
    std::vector<uint8_t> px (img.data, img.data + img.total ());
    std::vector<float> g;
    std::vector<uint8_t> b;
    dt_gradients (p, px, img.cols, img.rows, &g, &b);
    cv::Mat grad, qangle;
    ocv.computeGradient (img, grad, qangle);
    CHECK (std::memcmp (g.data (), grad.data, g.size () * sizeof (float)) == 0);
    CHECK (std::memcmp (b.data (), qangle.data, b.size ()) == 0);
  }
  return finish ();
}
