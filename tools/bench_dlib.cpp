// gpudetect-bench-dlib: dlib's frontal face detector (the peer of the
// dlib-frontalface model) on the same frames as gpudetect-bench: the median
// time of one frame on one thread (dlib's detector has no parallelism of its
// own), and the time per frame with every CPU core busy (one detector per
// thread, each on the same frame: throughput, not latency).
//
//   gpudetect-bench-dlib [--frames 20] [--warmup 2] [--threads N] FRAME.pgm...
#include <dlib/image_processing/frontal_face_detector.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since (Clock::time_point t0) {
  return std::chrono::duration<double, std::milli> (Clock::now () - t0).count ();
}

bool read_pgm (const std::string &path, dlib::array2d<unsigned char> *img) {
  std::ifstream f (path, std::ios::binary);
  std::string magic;
  int w = 0, h = 0, maxval = 0;
  if (!(f >> magic >> w >> h >> maxval) || magic != "P5" || maxval != 255 || w <= 0 || h <= 0)
    return false;
  f.get ();
  img->set_size (h, w);
  for (int y = 0; y < h; y++)
    f.read (reinterpret_cast<char *> (&(*img)[y][0]), w);
  return static_cast<bool> (f);
}

} // namespace

int main (int argc, char **argv) {
  int frames = 20, warmup = 2;
  unsigned threads = std::max (1u, std::thread::hardware_concurrency ());
  std::vector<std::string> paths;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc)
      frames = std::max (1, std::atoi (argv[++i]));
    else if (a == "--warmup" && i + 1 < argc)
      warmup = std::max (0, std::atoi (argv[++i]));
    else if (a == "--threads" && i + 1 < argc)
      threads = static_cast<unsigned> (std::max (1, std::atoi (argv[++i])));
    else if (!a.empty () && a[0] == '-') {
      std::fprintf (stderr, "usage: %s [--frames N] [--warmup N] [--threads N] FRAME.pgm...\n", argv[0]);
      return 2;
    } else
      paths.push_back (a);
  }
  if (paths.empty ()) {
    std::fprintf (stderr, "usage: %s [--frames N] [--warmup N] [--threads N] FRAME.pgm...\n", argv[0]);
    return 2;
  }
  std::printf ("dlib::get_frontal_face_detector (), %d frames after %d, %u threads for the throughput\n\n", frames,
               warmup, threads);
  std::printf ("%-26s %9s %5s %10s %12s\n", "frame", "size", "objs", "1thread_ms", "all_cores_ms");
  for (const std::string &p : paths) {
    dlib::array2d<unsigned char> img;
    if (!read_pgm (p, &img)) {
      std::fprintf (stderr, "cannot read %s\n", p.c_str ());
      return 1;
    }
    dlib::frontal_face_detector det = dlib::get_frontal_face_detector ();
    std::vector<double> t;
    size_t objs = 0;
    for (int i = 0; i < warmup + frames; i++) {
      const auto t0 = Clock::now ();
      objs = det (img).size ();
      if (i >= warmup)
        t.push_back (ms_since (t0));
    }
    std::sort (t.begin (), t.end ());
    // every core: one detector per thread, `frames` frames each
    std::vector<dlib::frontal_face_detector> dets (threads, det);
    const auto t0 = Clock::now ();
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < threads; k++)
      pool.emplace_back ([&, k] {
        for (int i = 0; i < frames; i++)
          dets[k] (img);
      });
    for (std::thread &th : pool)
      th.join ();
    const double per_frame = ms_since (t0) / (static_cast<double> (frames) * threads);
    const std::string name = p.substr (p.find_last_of ('/') + 1);
    char size[32];
    std::snprintf (size, sizeof size, "%ldx%ld", img.nc (), img.nr ());
    std::printf ("%-26s %9s %5zu %10.3f %12.3f\n", name.c_str (), size, objs, t[t.size () / 2], per_frame);
  }
  std::printf ("\nms; 1thread: median of one frame on one thread; all_cores: wall time per frame with one detector "
               "per thread on every core (throughput)\n");
  return 0;
}
