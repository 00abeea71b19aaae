// gpudetect-bench-dpm: OpenCV's cv::dpm::DPMDetector (the peer of the dpm
// family) on the same frames as gpudetect-bench: the median time of one
// detect() with OpenCV's threads (cv::dpm builds its pyramid and its root
// scores through parallel_for_) and on one thread, and the objects it finds.
//
//   gpudetect-bench-dpm --model FILE [--frames 5] [--warmup 1] FRAME.pgm...
//   gpudetect-bench-dpm --write-frames DIR
//
// --write-frames writes frames with people for the benchmarks, from frame 200
// of opencv-doc's vtest.avi (people walking, 768 x 576): people-768x576.pgm
// as it is, people-1080p.pgm scaled by 1.875 to 1440 x 1080 and centred in a
// 1920 x 1080 frame of mid grey.
#include <opencv2/core/utility.hpp>
#include <opencv2/dpm.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int write_frames (const std::string &dir) {
  const char *video = "/usr/share/doc/opencv-doc/examples/data/vtest.avi";
  cv::VideoCapture cap (video);
  cv::Mat f;
  for (int i = 0; i <= 200; i++)
    if (!cap.isOpened () || !cap.read (f)) {
      std::fprintf (stderr, "cannot read frame 200 of %s\n", video);
      return 1;
    }
  cv::Mat g, big, frame (1080, 1920, CV_8UC1, cv::Scalar (128));
  cv::cvtColor (f, g, cv::COLOR_BGR2GRAY);
  cv::resize (g, big, cv::Size (1440, 1080), 0, 0, cv::INTER_LINEAR);
  big.copyTo (frame (cv::Rect (240, 0, 1440, 1080)));
  if (!cv::imwrite (dir + "/people-768x576.pgm", g) || !cv::imwrite (dir + "/people-1080p.pgm", frame)) {
    std::fprintf (stderr, "cannot write to %s\n", dir.c_str ());
    return 1;
  }
  return 0;
}

double median_ms (cv::dpm::DPMDetector &det, const cv::Mat &img, int frames, int warmup, size_t *objects) {
  std::vector<double> t;
  for (int i = 0; i < warmup + frames; i++) {
    cv::Mat m = img.clone (); // detect() converts its argument in place
    std::vector<cv::dpm::DPMDetector::ObjectDetection> ds;
    const auto t0 = Clock::now ();
    det.detect (m, ds);
    if (i >= warmup)
      t.push_back (std::chrono::duration<double, std::milli> (Clock::now () - t0).count ());
    *objects = ds.size ();
  }
  std::sort (t.begin (), t.end ());
  return t[t.size () / 2];
}

} // namespace

int main (int argc, char **argv) {
  int frames = 5, warmup = 1;
  std::string model;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--write-frames" && i + 1 < argc)
      return write_frames (argv[++i]);
    if (a == "--model" && i + 1 < argc)
      model = argv[++i];
    else if (a == "--frames" && i + 1 < argc)
      frames = std::max (1, std::atoi (argv[++i]));
    else if (a == "--warmup" && i + 1 < argc)
      warmup = std::max (0, std::atoi (argv[++i]));
    else if (!a.empty () && a[0] == '-') {
      paths.clear ();
      break;
    } else
      paths.push_back (a);
  }
  if (model.empty () || paths.empty ()) {
    std::fprintf (stderr, "usage: %s --model FILE [--frames N] [--warmup N] FRAME.pgm...\n       %s --write-frames DIR\n",
                  argv[0], argv[0]);
    return 2;
  }
  cv::Ptr<cv::dpm::DPMDetector> det = cv::dpm::DPMDetector::create ({model});
  if (!det || det->isEmpty ()) {
    std::fprintf (stderr, "cv::dpm cannot load %s\n", model.c_str ());
    return 1;
  }
  const int threads = cv::getNumThreads ();
  std::printf ("cv::dpm::DPMDetector (%s), %d frames after %d; OpenCV's threads: %d\n\n", model.c_str (), frames,
               warmup, threads);
  std::printf ("%-26s %9s %5s %12s %10s\n", "frame", "size", "objs", "threads_ms", "1thread_ms");
  for (const std::string &p : paths) {
    const cv::Mat img = cv::imread (p, cv::IMREAD_GRAYSCALE);
    if (img.empty ()) {
      std::fprintf (stderr, "cannot read %s\n", p.c_str ());
      return 1;
    }
    size_t objs = 0;
    cv::setNumThreads (threads);
    const double all = median_ms (*det, img, frames, warmup, &objs);
    cv::setNumThreads (1);
    const double one = median_ms (*det, img, frames, warmup, &objs);
    cv::setNumThreads (threads);
    char size[32];
    std::snprintf (size, sizeof size, "%dx%d", img.cols, img.rows);
    std::printf ("%-26s %9s %5zu %12.1f %10.1f\n", p.substr (p.find_last_of ('/') + 1).c_str (), size, objs, all, one);
    std::fflush (stdout);
  }
  std::printf ("\nms, medians of detect() on the grey frame: with OpenCV's threads, and with cv::setNumThreads (1)\n");
  return 0;
}
