// The frequency-domain filter evaluation as a component (fftconv.h), apart
// from any detector:
// - patchworks: every plane placed inside its patchwork, none overlapping
//   another, sizes of factors 2, 3, 5, 7 (columns even), nothing placed for
//   empty planes, too large a plane refused, the limits respected;
// - scores: banks of F filters of rows x cols x D (D = 31 as FHOG, 36 as
//   Dalal-Triggs blocks, 32 as DPM's features, 1 and 5) over pyramids of
//   random features, levels large, tiny, smaller than the filter, in one
//   patchwork or many: with every threshold at -FLT_MAX every (position,
//   filter) must come back once, its score within 1e-4 of the direct
//   correlation computed in double on the host, relative to max (|score|,
//   1e-2 * sum |filter| * the level's mean |feature|) (1 % of what a window
//   of typical features could score: a float FFT's error scales with the
//   whole plane's values, not the window's); the same scores in scores(); a second
//   frame the same to the bit; both schedules (the GPU's kernels with
//   candidates through atomics and through the work-group compaction, the
//   CPU's row kernels).
#include "check.h"
#include "launcher.h"

#include "families/hogfilter/fftconv.h"
#include "families/hogfilter/patchwork.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <cmath>
#include <map>
#include <random>

using namespace gpudetect;

namespace {

void check_packing (const std::vector<PatchworkRect> &planes, const PatchworkPlan &p, const char *what) {
  CHECK_MSG (p.count > 0, "%s: no patchwork", what);
  CHECK_MSG (patchwork_friendly (p.rows) && patchwork_friendly (p.cols) && p.cols % 2 == 0, "%s: size %dx%d", what,
             p.rows, p.cols);
  CHECK (p.places.size () == planes.size ());
  for (size_t i = 0; i < planes.size (); i++) {
    const PatchworkPlace &a = p.places[i];
    if (planes[i].rows <= 0 || planes[i].cols <= 0) {
      CHECK (a.patch < 0);
      continue;
    }
    CHECK_MSG (a.patch >= 0 && a.patch < p.count && a.y >= 0 && a.x >= 0 && a.y + planes[i].rows <= p.rows &&
                   a.x + planes[i].cols <= p.cols,
               "%s: plane %zu outside", what, i);
    for (size_t j = 0; j < i; j++) {
      const PatchworkPlace &b = p.places[j];
      if (b.patch != a.patch || planes[j].rows <= 0 || planes[j].cols <= 0)
        continue;
      const bool apart = a.y + planes[i].rows <= b.y || b.y + planes[j].rows <= a.y ||
                         a.x + planes[i].cols <= b.x || b.x + planes[j].cols <= a.x;
      CHECK_MSG (apart, "%s: planes %zu and %zu overlap", what, i, j);
    }
  }
}

// A pyramid's planes: the first of rows0 x cols0, each next 5/6 of the one
// before, down to `least` rows or columns.
std::vector<PatchworkRect> pyramid (int rows0, int cols0, int least) {
  std::vector<PatchworkRect> v;
  double r = rows0, c = cols0;
  while (r >= least && c >= least) {
    v.push_back ({static_cast<int> (r), static_cast<int> (c)});
    r *= 5.0 / 6.0;
    c *= 5.0 / 6.0;
  }
  return v;
}

void test_patchworks () {
  // dlib's 1080p pyramid with 10 x 10 filters: planes of 142 x 247 down
  const std::vector<PatchworkRect> hd = pyramid (142, 247, 17);
  PatchworkWork w;
  w.dims = 31;
  w.filters = 5;
  const PatchworkPlan p = plan_patchworks (hd, w);
  check_packing (hd, p, "1080p");
  double area = 0;
  for (const PatchworkRect &r : hd)
    area += static_cast<double> (r.rows) * r.cols;
  std::printf ("1080p pyramid: %zu planes, %.0f cells, %d patchworks of %dx%d (%.0f %% used)\n", hd.size (), area,
               p.count, p.rows, p.cols, 100.0 * area / (static_cast<double> (p.count) * p.rows * p.cols));
  // at least half the patchworks' area is features
  CHECK (area >= 0.5 * p.count * p.rows * p.cols);
  // a fixed size: many patchworks, each plane placed once
  PatchworkPlan fixed;
  CHECK (pack_patchworks (hd, 160, 256, &fixed));
  check_packing (hd, fixed, "160x256");
  CHECK (!pack_patchworks (hd, 100, 256, &fixed)); // the first plane does not fit
  // empty planes and odd ones
  std::vector<PatchworkRect> odd = {{0, 5}, {3, 0}, {1, 1}, {9, 2}, {2, 9}, {7, 7}, {0, 0}};
  const PatchworkPlan po = plan_patchworks (odd, w);
  check_packing (odd, po, "odd");
  CHECK (plan_patchworks ({{0, 3}}, w).count == 0);
  // the limits: a bank too large for any buffer
  PatchworkWork tight = w;
  tight.max_buffer = 1 << 20;
  CHECK (plan_patchworks (hd, tight).count == 0);
  // 2^a 3^b 5^c with b <= 2, c <= 1, b + c <= 2
  for (int n : {1, 2, 64, 96, 120, 144, 160, 192, 256, 3 * 5 * 64, 9 * 64})
    CHECK_MSG (patchwork_friendly (n), "%d should be a patchwork size", n);
  for (int n : {0, -8, 7, 11, 2 * 13, 7 * 64, 27 * 2, 162, 25 * 4, 75, 9 * 5 * 2, 432})
    CHECK_MSG (!patchwork_friendly (n), "%d should not be a patchwork size", n);
}

struct Case {
  const char *name;
  int dims, filters, rows, cols;
  std::vector<PatchworkRect> levels;
};

struct Errors {
  double max_rel = 0, max_abs = 0;
  size_t scores = 0;
};

void run_case (const cl::Device &dev, const cl::Program &prog, bool gpu, bool compact, const Case &c, Errors *err) {
  std::mt19937 rng (static_cast<unsigned> (c.dims * 7919 + c.filters * 31 + c.rows * 7 + c.cols));
  std::uniform_real_distribution<float> feat (0.0f, 0.4f), coef (-0.5f, 0.5f);
  FilterBank bank;
  bank.rows = c.rows;
  bank.cols = c.cols;
  bank.dims = c.dims;
  for (int f = 0; f < c.filters; f++) {
    std::vector<float> v (static_cast<size_t> (c.rows) * c.cols * c.dims);
    for (float &x : v)
      x = coef (rng);
    bank.filters.push_back (v);
  }
  std::vector<FeatureLevel> levels;
  size_t plane = 0;
  int first = 0;
  for (const PatchworkRect &r : c.levels) {
    FeatureLevel l;
    l.rows = r.rows;
    l.cols = r.cols;
    l.offset = plane;
    l.first_window = first;
    plane += static_cast<size_t> (r.rows) * r.cols;
    if (r.rows >= c.rows && r.cols >= c.cols)
      first += (r.rows - c.rows + 1) * (r.cols - c.cols + 1);
    levels.push_back (l);
  }
  const int positions = first;
  std::vector<float> feats (std::max<size_t> (plane, 1) * c.dims);
  for (float &x : feats)
    x = feat (rng);
  // some exact zeros, as padding
  for (size_t i = 0; i < feats.size (); i += 7)
    feats[i] = 0.0f;
  cl::Mem fbuf, tbuf, cand;
  CHECK (!cl::make_buffer (dev, &fbuf, feats.size () * 4, CL_MEM_READ_ONLY, feats.data ()));
  std::vector<float> th (c.filters, -FLT_MAX);
  CHECK (!cl::make_buffer (dev, &tbuf, th.size () * 4, CL_MEM_READ_ONLY, th.data ()));
  const size_t capacity = static_cast<size_t> (positions) * c.filters + 16;
  CHECK (!cl::make_buffer (dev, &cand, (4 + 2 * capacity) * 4));

  FftCorrelator fc;
  if (Error e = fc.setup (dev, prog, bank, gpu, compact)) {
    CHECK_MSG (false, "%s: setup: %s", c.name, e.message.c_str ());
    return;
  }
  if (Error e = fc.geometry (levels, plane, fbuf, tbuf)) {
    CHECK_MSG (false, "%s: geometry: %s", c.name, e.message.c_str ());
    return;
  }
  CHECK (fc.positions () == positions);
  std::vector<std::vector<uint32_t>> frames;
  for (int frame = 0; frame < 2; frame++) {
    const uint32_t zero[2] = {0, 0};
    CHECK (clEnqueueWriteBuffer (dev.queue.get (), cand.get (), CL_TRUE, 0, sizeof zero, zero, 0, nullptr, nullptr) ==
           CL_SUCCESS);
    QueueLauncher l (dev.queue.get ());
    if (Error e = fc.enqueue (cand, static_cast<cl_uint> (capacity), 0, l)) {
      CHECK_MSG (false, "%s: enqueue: %s", c.name, e.message.c_str ());
      return;
    }
    CHECK (l.launches == fc.launches ());
    std::vector<uint32_t> out (4 + 2 * capacity);
    CHECK (clEnqueueReadBuffer (dev.queue.get (), cand.get (), CL_TRUE, 0, out.size () * 4, out.data (), 0, nullptr,
                                nullptr) == CL_SUCCESS);
    frames.push_back (std::move (out));
  }
  const std::vector<uint32_t> &out = frames[0];
  CHECK_MSG (out[0] == static_cast<uint32_t> (positions) * c.filters, "%s: %u candidates, expected %d", c.name, out[0],
             positions * c.filters);
  // per window, its score
  std::map<uint32_t, float> got, again;
  for (uint32_t i = 0; i < std::min<uint32_t> (out[0], static_cast<uint32_t> (capacity)); i++) {
    float s;
    std::memcpy (&s, &out[4 + 2 * i + 1], 4);
    CHECK_MSG (got.emplace (out[4 + 2 * i], s).second, "%s: window %u twice", c.name, out[4 + 2 * i]);
  }
  for (uint32_t i = 0; i < std::min<uint32_t> (frames[1][0], static_cast<uint32_t> (capacity)); i++) {
    float s;
    std::memcpy (&s, &frames[1][4 + 2 * i + 1], 4);
    again.emplace (frames[1][4 + 2 * i], s);
  }
  CHECK_MSG (got == again, "%s: the second frame differs", c.name);
  // the dense scores
  std::vector<float> dense (fc.patchworks ().count * static_cast<size_t> (c.filters) * fc.patchworks ().rows *
                            (fc.patchworks ().cols + 2));
  if (!dense.empty ())
    CHECK (clEnqueueReadBuffer (dev.queue.get (), fc.scores ().get (), CL_TRUE, 0, dense.size () * 4, dense.data (), 0,
                                nullptr, nullptr) == CL_SUCCESS);
  std::vector<double> l1, mean;
  for (const std::vector<float> &fl : bank.filters) {
    double a = 0;
    for (float v : fl)
      a += std::fabs (v);
    l1.push_back (a);
  }
  for (const FeatureLevel &l : levels) {
    double a = 0;
    for (int d = 0; d < c.dims; d++)
      for (size_t i = 0; i < static_cast<size_t> (l.rows) * l.cols; i++)
        a += std::fabs (feats[d * plane + l.offset + i]);
    mean.push_back (l.rows > 0 && l.cols > 0 ? a / (static_cast<double> (l.rows) * l.cols * c.dims) : 0);
  }
  size_t bad = 0;
  for (size_t li = 0; li < levels.size (); li++) {
    const FeatureLevel &l = levels[li];
    if (l.rows < c.rows || l.cols < c.cols)
      continue;
    const int across = l.cols - c.cols + 1, down = l.rows - c.rows + 1;
    for (int y = 0; y < down; y++)
      for (int x = 0; x < across; x++)
        for (int f = 0; f < c.filters; f++) {
          double ref = 0;
          for (int d = 0; d < c.dims; d++)
            for (int m = 0; m < c.rows; m++)
              for (int n = 0; n < c.cols; n++) {
                const double a = bank.filters[f][(static_cast<size_t> (d) * c.rows + m) * c.cols + n];
                const double b = feats[d * plane + l.offset + static_cast<size_t> (y + m) * l.cols + x + n];
                ref += a * b;
              }
          const uint32_t win = static_cast<uint32_t> ((l.first_window + y * across + x) * c.filters + f);
          auto it = got.find (win);
          if (it == got.end ()) {
            bad++;
            continue;
          }
          const double e = std::fabs (it->second - ref);
          const double rel = e / std::max (std::fabs (ref), 1e-2 * l1[f] * mean[li]);
          err->max_rel = std::max (err->max_rel, rel);
          err->max_abs = std::max (err->max_abs, e);
          err->scores++;
          if (rel > 1e-4 || dense[fc.score_index (static_cast<int> (li), f, y, x)] != it->second)
            bad++;
        }
  }
  CHECK_MSG (bad == 0, "%s: %zu scores missing, off by more than 1e-4 or not in scores()", c.name, bad);
  std::printf ("%-34s %s: %d patchworks of %dx%d, %d positions x %d filters, %d launches\n", c.name,
               !gpu ? "CPU schedule          " : compact ? "GPU schedule, compacted" : "GPU schedule, atomics  ",
               fc.patchworks ().count, fc.patchworks ().rows, fc.patchworks ().cols, positions, c.filters,
               fc.launches ());
}

} // namespace

int main () {
  test_patchworks ();
  // the default's rule (fftconv.cpp): on the CPU schedule dlib's 5 filters of
  // 10x10 through the FFT, 4x4 filters directly at any count, 12x12 through
  // the FFT even alone
  CHECK (fft_preferred (false, 5, 10, 10) && fft_preferred (false, 1, 12, 12) && fft_preferred (false, 54, 6, 6));
  CHECK (!fft_preferred (false, 54, 4, 4) && !fft_preferred (false, 1, 10, 10) && !fft_preferred (false, 5, 6, 6));
  // GPUs (H100 sweep): FFT from 8x8 for one filter and 6x6 for 5, at 4x4 from 10 on
  CHECK (fft_preferred (true, 1, 8, 8) && fft_preferred (true, 5, 6, 6) && fft_preferred (true, 10, 4, 4));
  CHECK (!fft_preferred (true, 1, 6, 6) && !fft_preferred (true, 5, 4, 4));
  if (!FftCorrelator::available ()) {
    std::printf ("built without VkFFT: the FFT evaluation is not tested\n");
    return finish ();
  }
  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }
  std::printf ("device: %s\n", dev.info.describe ().c_str ());
  const std::vector<Case> cases = {
      {"dlib-like 5 x 10x10x31, VGA", 31, 5, 10, 10, pyramid (67, 87, 10)},
      {"1 x 4x4x31, tiny levels", 31, 1, 4, 4, {{4, 4}, {5, 9}, {3, 3}, {4, 5}, {2, 40}, {6, 4}}},
      {"Dalal-Triggs 1 x 15x7x36", 36, 1, 15, 7, pyramid (60, 40, 7)},
      {"DPM-like 9 x 6x6x32", 32, 9, 6, 6, pyramid (50, 64, 6)},
      {"5 x 3x8x1", 1, 5, 3, 8, {{30, 31}, {3, 8}, {12, 9}}},
      {"odd 3 x 5x3x5, no level fits", 5, 3, 5, 3, {{4, 30}, {30, 2}}},
      {"6 x 5x5x2, 20 levels of 41x41", 2, 6, 5, 5, std::vector<PatchworkRect> (20, PatchworkRect{41, 41})},
  };
  Errors err;
  for (bool compact : {false, true}) {
    if (compact && dev.info.max_work_group < 256)
      continue;
    cl::Program prog;
    ProgramSpec spec;
    FftCorrelator::add_program_sources (&spec);
    if (Error e = cl::build_program (dev, spec.source, spec.hash,
                                         "-cl-std=CL1.2" + FftCorrelator::options (compact), &prog)) {
      CHECK_MSG (false, "build: %s", e.message.c_str ());
      return finish ();
    }
    for (const Case &c : cases) {
      if (!compact)
        run_case (dev, prog, false, false, c, &err);
      run_case (dev, prog, true, compact, c, &err);
    }
  }
  std::printf ("%zu scores: max error %.3g relative (to max (|score|, 1e-2 sum |f| mean |x|)), %.3g absolute\n",
               err.scores, err.max_rel, err.max_abs);
  return finish ();
}
