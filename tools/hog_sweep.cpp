// gpudetect-hog-sweep: linear HOG filters evaluated directly and through the
// frequency domain (hog-eval=direct|fft), for banks of made filters of every
// size and count asked for, on one frame: the device time of the evaluation
// (OpenCL profiling events: the frame's device time, first command's start
// to last command's end, less its upload, the FHOG pyramid and features'
// kernels and the readback; so VkFFT's transforms, which carry no event, and
// the gaps between launches are in it) and of the whole frame, medians over
// --frames frames after --warmup, frames taking turns between the two;
// the ratio; per count the smallest size from which the FFT path is the
// faster; and the constants of fft_preferred's rule (rows x cols >= a /
// filters + b) fitted to those crossovers.  The filters' threshold is never
// reached: no candidates, the evaluation alone.  --table reads the rows of an
// earlier run's output instead of measuring, and prints its crossover.
//
//   gpudetect-hog-sweep [--device SEL] [--frames 100] [--warmup 10] [--sizes 4,6,8,10,12,16,24]
//                       [--counts 1,5,10,27,54] [--tuning EXTRA] FRAME.pgm
//   gpudetect-hog-sweep --table OUTPUT.txt
#include "detector.h"
#include "families/hogfilter/model.h"

#include <algorithm>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace gpudetect;

namespace {

bool read_pgm (const std::string &path, int *w, int *h, std::vector<uint8_t> *px) {
  std::ifstream f (path, std::ios::binary);
  std::string magic;
  int maxval = 0;
  if (!(f >> magic >> *w >> *h >> maxval) || magic != "P5" || maxval != 255 || *w <= 0 || *h <= 0)
    return false;
  f.get ();
  px->resize (static_cast<size_t> (*w) * *h);
  f.read (reinterpret_cast<char *> (px->data ()), px->size ());
  return static_cast<bool> (f);
}

std::vector<int> ints (const char *s) {
  std::vector<int> v;
  for (const char *p = s; *p;) {
    char *end = nullptr;
    const long x = std::strtol (p, &end, 10);
    if (end == p || x <= 0 || x > 1000)
      return {};
    v.push_back (static_cast<int> (x));
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

double median (std::vector<double> v) {
  if (v.empty ())
    return 0;
  std::sort (v.begin (), v.end ());
  return v.size () % 2 ? v[v.size () / 2] : 0.5 * (v[v.size () / 2 - 1] + v[v.size () / 2]);
}

struct Timing {
  bool ok = false;
  double eval_ms = 0, total_ms = 0;
  int launches = 0;
};

std::unique_ptr<Detector> make (const std::string &model, const std::string &tuning, const std::string &device) {
  DetectorConfig cfg;
  cfg.model = model;
  cfg.device = device;
  cfg.slots = 1;
  cfg.profile = true;
  cfg.tuning = tuning;
  std::string err;
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  if (!det)
    std::fprintf (stderr, "%s (%s): %s\n", model.c_str (), tuning.c_str (), err.c_str ());
  return det;
}

// Frames through each detector in turn (so that a change in the machine's
// load reaches both alike); medians per detector.
std::vector<Timing> measure (std::vector<std::unique_ptr<Detector>> &dets, int w, int h, const std::vector<uint8_t> &px,
                             int warmup, int frames) {
  std::vector<Timing> t (dets.size ());
  std::vector<std::vector<double>> eval (dets.size ()), total (dets.size ());
  for (int i = 0; i < warmup + frames; i++)
    for (size_t k = 0; k < dets.size (); k++) {
      FrameResult res;
      if (Error e = dets[k]->detect ({px.data (), w, h, w, PixelFormat::Gray8}, &res)) {
        std::fprintf (stderr, "%s: %s\n", dets[k]->model ().description.c_str (), e.message.c_str ());
        return {};
      }
      if (i < warmup)
        continue;
      const StageTimes &s = res.times;
      // the filters (the family's last phase) with the FFT library's commands: all but the other phases
      double features = 0;
      for (size_t p = 0; p + 1 < s.phases.size (); p++)
        features += s.phases[p];
      eval[k].push_back ((s.total_device - s.upload - features - s.readback) / 1000);
      total[k].push_back (s.total_device / 1000);
      t[k].launches = s.launches;
    }
  for (size_t k = 0; k < dets.size (); k++) {
    t[k].eval_ms = median (eval[k]);
    t[k].total_ms = median (total[k]);
    t[k].ok = true;
  }
  return t;
}

} // namespace

int main (int argc, char **argv) {
  int frames = 100, warmup = 10;
  std::vector<int> sizes = {4, 6, 8, 10, 12, 16, 24}, counts = {1, 5, 10, 27, 54};
  std::string device, extra, frame, saved;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc)
      frames = std::max (1, std::atoi (argv[++i]));
    else if (a == "--warmup" && i + 1 < argc)
      warmup = std::max (0, std::atoi (argv[++i]));
    else if (a == "--sizes" && i + 1 < argc)
      sizes = ints (argv[++i]);
    else if (a == "--counts" && i + 1 < argc)
      counts = ints (argv[++i]);
    else if (a == "--device" && i + 1 < argc)
      device = argv[++i];
    else if (a == "--tuning" && i + 1 < argc)
      extra = argv[++i];
    else if (a == "--table" && i + 1 < argc)
      saved = argv[++i];
    else if (!a.empty () && a[0] != '-' && frame.empty ())
      frame = a;
    else {
      std::fprintf (stderr, "usage: %s [--device SEL] [--frames N] [--warmup N] [--sizes 4,6,...] [--counts 1,5,...] "
                            "[--tuning EXTRA] FRAME.pgm\n", argv[0]);
      return 2;
    }
  }
  std::map<std::pair<int, int>, std::pair<double, double>> table; // (count, size) -> (direct, fft)
  bool failed = false;
  if (!saved.empty ()) {
    std::ifstream f (saved);
    std::string line;
    std::vector<int> ss, cs;
    while (std::getline (f, line)) {
      int r = 0, c = 0, n = 0;
      double d = 0, t = 0;
      if (std::sscanf (line.c_str (), " %dx%d %d %lf %lf", &r, &c, &n, &d, &t) == 5 && r == c) {
        table[{n, r}] = {d, t};
        if (std::find (ss.begin (), ss.end (), r) == ss.end ())
          ss.push_back (r);
        if (std::find (cs.begin (), cs.end (), n) == cs.end ())
          cs.push_back (n);
      }
    }
    if (table.empty ()) {
      std::fprintf (stderr, "no rows in %s\n", saved.c_str ());
      return 2;
    }
    std::sort (ss.begin (), ss.end ());
    std::sort (cs.begin (), cs.end ());
    sizes = ss;
    counts = cs;
  }
  int w = 0, h = 0;
  std::vector<uint8_t> px;
  if (saved.empty () && (frame.empty () || sizes.empty () || counts.empty () || !read_pgm (frame, &w, &h, &px))) {
    std::fprintf (stderr, "need a binary PGM frame, sizes and counts\n");
    return 2;
  }
  char dir[] = "/tmp/gpudetect-hog-sweep-XXXXXX";
  if (saved.empty () && !mkdtemp (dir)) {
    std::perror ("mkdtemp");
    return 1;
  }
  if (saved.empty ()) {
    std::printf ("frame %s (%dx%d), medians over %d frames after %d; eval: the filters' device time (frame's device "
                 "time less upload, FHOG kernels and readback), total: the frame's\n",
                 frame.c_str (), w, h, frames, warmup);
    std::printf ("%-7s %6s %11s %11s %11s %11s %9s %7s %7s\n", "filter", "count", "direct_ms", "fft_ms", "direct_tot",
                 "fft_tot", "direct/fft", "l_dir", "l_fft");
  }
  for (int count : saved.empty () ? counts : std::vector<int> ())
    for (int size : sizes) {
      HogFilterModel m;
      m.name = "sweep " + std::to_string (size) + "x" + std::to_string (size) + " x " + std::to_string (count);
      m.rows = m.cols = size;
      m.threshold = 1e6; // nothing found: the evaluation alone
      std::mt19937 rng (static_cast<unsigned> (size * 1000 + count));
      std::uniform_real_distribution<float> u (-0.1f, 0.1f);
      for (int f = 0; f < count; f++) {
        HogFilterModel::Filter fl;
        for (int i = 0; i < kFhogDims * size * size; i++)
          fl.coef.push_back (u (rng));
        m.filters.push_back (fl);
      }
      const std::string path = std::string (dir) + "/sweep.hogfilter";
      std::ofstream (path, std::ios::binary | std::ios::trunc) << write_hogfilter (m);
      const std::string sep = extra.empty () ? "" : ";";
      std::vector<std::unique_ptr<Detector>> dets;
      dets.push_back (make (path, extra + sep + "hog-eval=direct", device));
      dets.push_back (make (path, extra + sep + "hog-eval=fft", device));
      std::remove (path.c_str ());
      if (!dets[0] || !dets[1]) {
        failed = true;
        continue;
      }
      const std::vector<Timing> t = measure (dets, w, h, px, warmup, frames);
      if (t.size () != 2) {
        failed = true;
        continue;
      }
      const Timing &d = t[0], &f = t[1];
      table[{count, size}] = {d.eval_ms, f.eval_ms};
      std::printf ("%3dx%-3d %6d %11.3f %11.3f %11.3f %11.3f %9.2f %7d %7d\n", size, size, count, d.eval_ms, f.eval_ms,
                   d.total_ms, f.total_ms, f.eval_ms > 0 ? d.eval_ms / f.eval_ms : 0, d.launches, f.launches);
      std::fflush (stdout);
    }
  if (saved.empty ())
    rmdir (dir);
  // the crossover: per count, the smallest size from which the FFT path is
  // the faster at it and every larger size, and the size below it; then the
  // rule fft_preferred applies, rows x cols >= a / filters + b (the FFT
  // path's cost is mostly a part per frame and a part per filter, the direct
  // one's per filter and cell), fitted by least squares to the middles of
  // those intervals
  std::printf ("crossover (per count: the smallest size from which FFT is faster at it and every larger size):\n");
  std::vector<std::pair<double, double>> mids; // (1 / count, area)
  std::vector<std::pair<int, std::pair<double, double>>> spans;
  for (int count : counts) {
    int from = 0, below = 0;
    for (auto it = sizes.rbegin (); it != sizes.rend (); ++it) {
      auto e = table.find ({count, *it});
      if (e == table.end ())
        continue;
      if (e->second.second < e->second.first) {
        from = *it;
      } else {
        below = *it;
        break;
      }
    }
    if (!from) {
      std::printf ("  %2d filters: direct at every size measured\n", count);
      continue;
    }
    std::printf ("  %2d filters: FFT from %dx%d, direct at %s\n", count, from, from,
                 below ? (std::to_string (below) + "x" + std::to_string (below)).c_str () : "no size measured");
    const double hi = static_cast<double> (from) * from, lo = static_cast<double> (below) * below;
    spans.push_back ({count, {lo, hi}});
    mids.push_back ({1.0 / count, below ? 0.5 * (lo + hi) : hi});
  }
  if (mids.size () >= 2) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto &[x, y] : mids) {
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    const double n = static_cast<double> (mids.size ()), den = n * sxx - sx * sx;
    double a = den != 0 ? (n * sxy - sx * sy) / den : 0, b = (sy - a * sx) / n;
    const auto within = [&] (double a_, double b_) {
      for (const auto &[count, span] : spans)
        if (a_ / count + b_ <= span.first || a_ / count + b_ > span.second)
          return false;
      return true;
    };
    // Where the plain fit puts a count's threshold outside its measured
    // interval: the least squares over the rules that keep every threshold
    // within its interval (a in steps of 0.1; for each a, the best b clamped
    // to the range every interval allows), if there is one.
    if (!within (a, b)) {
      double best = std::numeric_limits<double>::infinity (), max_hi = 0;
      for (const auto &[count, span] : spans)
        max_hi = std::max (max_hi, span.second);
      for (double ta = 0; ta <= 4 * max_hi; ta += 0.1) {
        double lo = -std::numeric_limits<double>::infinity (), hi = std::numeric_limits<double>::infinity ();
        for (const auto &[count, span] : spans) {
          lo = std::max (lo, span.first - ta / count + 1e-3);
          hi = std::min (hi, span.second - ta / count);
        }
        if (lo > hi)
          continue;
        double mean = 0;
        for (const auto &[x, y] : mids)
          mean += y - ta * x;
        const double tb = std::clamp (mean / n, lo, hi);
        double err = 0;
        for (const auto &[x, y] : mids)
          err += (ta * x + tb - y) * (ta * x + tb - y);
        if (err < best) {
          best = err;
          a = ta;
          b = tb;
        }
      }
    }
    std::printf ("rule: FFT where rows x cols >= a / filters + b, fitted: a = %.1f, b = %.1f\n", a, b);
    for (const auto &[count, span] : spans) {
      const double at = a / count + b;
      std::printf ("  %2d filters: threshold %.1f cells, measured crossover in (%.0f, %.0f]: %s\n", count, at,
                   span.first, span.second, at > span.first && at <= span.second ? "consistent" : "off");
    }
  }
  return failed ? 1 : 0;
}
