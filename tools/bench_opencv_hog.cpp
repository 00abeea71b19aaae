// gpudetect-bench-opencv-hog: OpenCV's HOGDescriptor::detectMultiScale on the
// CPU (the peer of a hog-dt model such as hog-people) on the same frames as
// gpudetect-bench, with the model file's own weights and parameters: the
// median and p95 time of one frame with OpenCV's parallel_for_ on every core,
// and on one thread (cv::setNumThreads), and the objects found.
//
//   gpudetect-bench-opencv-hog --model FILE.hogfilter [--frames 20] [--warmup 2] FRAME.pgm...
#include "families/hogfilter/model.h"

#include <opencv2/core/utility.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace gpudetect;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since (Clock::time_point t0) {
  return std::chrono::duration<double, std::milli> (Clock::now () - t0).count ();
}

bool read_pgm (const std::string &path, cv::Mat *out) {
  std::ifstream f (path, std::ios::binary);
  std::string magic;
  int w = 0, h = 0, maxval = 0;
  if (!(f >> magic >> w >> h >> maxval) || magic != "P5" || maxval != 255 || w <= 0 || h <= 0)
    return false;
  f.get ();
  *out = cv::Mat (h, w, CV_8U);
  f.read (reinterpret_cast<char *> (out->data), static_cast<std::streamsize> (w) * h);
  return static_cast<bool> (f);
}

int usage (const char *argv0) {
  std::fprintf (stderr, "usage: %s --model FILE.hogfilter [--frames N] [--warmup N] FRAME.pgm...\n", argv0);
  return 2;
}

} // namespace

int main (int argc, char **argv) {
  int frames = 20, warmup = 2;
  std::string model_path;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc)
      frames = std::max (1, std::atoi (argv[++i]));
    else if (a == "--warmup" && i + 1 < argc)
      warmup = std::max (0, std::atoi (argv[++i]));
    else if (a == "--model" && i + 1 < argc)
      model_path = argv[++i];
    else if (!a.empty () && a[0] == '-')
      return usage (argv[0]);
    else
      paths.push_back (a);
  }
  if (paths.empty () || model_path.empty ())
    return usage (argv[0]);
  std::ifstream mf (model_path, std::ios::binary);
  std::stringstream text;
  text << mf.rdbuf ();
  HogFilterModel m;
  if (Error e = parse_hogfilter (text.str (), &m); e || m.features != HogFeatures::DalalTriggs) {
    std::fprintf (stderr, "%s: %s\n", model_path.c_str (), !e ? "not a hog-dt model" : e.message.c_str ());
    return 2;
  }
  // the model's window, descriptor and weights as HOGDescriptor holds them:
  // the blocks of the window column by column, rho last
  const DtHogParams &p = m.dt;
  const cv::Size win ((m.cols - 1) * p.block_stride + p.block, (m.rows - 1) * p.block_stride + p.block);
  cv::HOGDescriptor hog (win, cv::Size (p.block, p.block), cv::Size (p.block_stride, p.block_stride),
                         cv::Size (p.cell, p.cell), p.bins, 1, p.win_sigma, cv::HOGDescriptor::L2Hys, p.l2hys,
                         p.gamma, p.max_levels);
  std::vector<float> svm (static_cast<size_t> (m.rows) * m.cols * p.dims () + 1);
  for (int d = 0; d < p.dims (); d++)
    for (int r = 0; r < m.rows; r++)
      for (int c = 0; c < m.cols; c++)
        svm[(static_cast<size_t> (c) * m.rows + r) * p.dims () + d] =
            m.filters[0].coef[(static_cast<size_t> (d) * m.rows + r) * m.cols + c];
  svm.back () = static_cast<float> (-m.filters[0].bias);
  hog.setSVMDetector (svm);
  const int cores = cv::getNumThreads ();
  std::printf ("OpenCV %s HOGDescriptor::detectMultiScale (CPU, hitThreshold %g, scale %g, groupThreshold %d), "
               "%d frames after %d; every core: %d threads\n\n",
               CV_VERSION, m.threshold, p.scale, p.group, frames, warmup, cores);
  std::printf ("%-26s %9s %5s %11s %11s %11s %11s\n", "frame", "size", "objs", "cores_med", "cores_p95",
               "1thread_med", "1thread_p95");
  for (const std::string &path : paths) {
    cv::Mat img;
    if (!read_pgm (path, &img)) {
      std::fprintf (stderr, "cannot read %s\n", path.c_str ());
      return 1;
    }
    size_t objs = 0;
    double med[2], p95[2];
    for (int k = 0; k < 2; k++) {
      cv::setNumThreads (k == 0 ? cores : 1);
      std::vector<double> t;
      for (int i = 0; i < warmup + frames; i++) {
        std::vector<cv::Rect> found;
        std::vector<double> weights;
        const auto t0 = Clock::now ();
        hog.detectMultiScale (img, found, weights, m.threshold, cv::Size (), cv::Size (), p.scale, p.group);
        if (i >= warmup)
          t.push_back (ms_since (t0));
        objs = found.size ();
      }
      std::sort (t.begin (), t.end ());
      med[k] = t.size () % 2 ? t[t.size () / 2] : 0.5 * (t[t.size () / 2 - 1] + t[t.size () / 2]);
      p95[k] = t[std::min (t.size () - 1, static_cast<size_t> (std::ceil (0.95 * t.size ())) - 1)];
    }
    cv::setNumThreads (cores);
    const std::string name = path.substr (path.find_last_of ('/') + 1);
    char size[32];
    std::snprintf (size, sizeof size, "%dx%d", img.cols, img.rows);
    std::printf ("%-26s %9s %5zu %11.3f %11.3f %11.3f %11.3f\n", name.c_str (), size, objs, med[0], p95[0], med[1],
                 p95[1]);
  }
  std::printf ("\nms per frame, grouping included; cores: OpenCV's own threads on every core; 1thread: "
               "cv::setNumThreads (1)\n");
  return 0;
}
