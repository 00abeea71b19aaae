// gpudetect-bench-track: device time of the masked-SAD template search
// (gst/detect/track, kernels/track.cl) for N templates of S x S pixels in
// A x A search areas of a frame, by OpenCL profiling events, medians over
// frames after a warm-up; beside it the same search as a plain C++ loop on
// every CPU core (the host reference's arithmetic), and a check that both
// found the same offsets.
//
//   gpudetect-bench-track [--templates N] [--template S] [--area A | --radius R]
//                         [--frame WxH] [--frames F] [--warmup W] [--cpu-frames C]
//                         [--device SEL] [--work-group G] [--local-bytes B]
//                         [--variants KxP,KxP,...] [--pinned]
//
// --variants: search schedules to compare in one run, each K offsets per
// work-item by P work-groups per template (TemplateSearch::Config; 0: the
// device's default, automatic), e.g. 1x1,2x1,4x1,8x1,4x0 (default: 0x1, the
// engine's default); every variant's results are checked against the C++
// loop.  --pinned: the frame
// in page-locked memory (as gpudetect's upload pool gives it) instead of
// ordinary memory, for the upload's time.
#include "track/search.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace gpudetect;
using namespace gpudetect::track;

static double median (std::vector<double> v) {
  if (v.empty ())
    return 0;
  std::sort (v.begin (), v.end ());
  const size_t n = v.size ();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void usage () {
  std::fprintf (stderr, "usage: gpudetect-bench-track [--templates N] [--template S] [--area A | --radius R] "
                        "[--frame WxH] [--frames F] [--warmup W] [--cpu-frames C] [--device SEL] [--work-group G] "
                        "[--local-bytes B] [--variants KxP,...] [--pinned]\n");
}

struct Variant {
  int offsets_per_item = 0, parts = 1;
};

static bool parse_variants (const std::string &text, std::vector<Variant> *out) {
  out->clear ();
  size_t p = 0;
  while (p <= text.size ()) {
    size_t q = text.find (',', p);
    if (q == std::string::npos)
      q = text.size ();
    Variant v;
    if (std::sscanf (text.substr (p, q - p).c_str (), "%dx%d", &v.offsets_per_item, &v.parts) != 2 ||
        v.offsets_per_item < 0 || v.offsets_per_item > 8 || v.parts < 0)
      return false;
    out->push_back (v);
    p = q + 1;
  }
  return !out->empty ();
}

// One variant's medians and its matches of the last frame.
struct Result {
  Variant v;
  int parts = 1;
  double upload = 0, convert = 0, search = 0, readback = 0, host = 0;
  std::vector<Match> got;
};

int main (int argc, char **argv) {
  int n = 100, size = 32, area = 0, radius = 32, fw = 1920, fh = 1080, frames = 100, warmup = 10, cpu_frames = 3;
  int work_group = 0;
  size_t local_bytes = 0;
  std::string device;
  std::vector<Variant> variants (1);
  bool pinned = false;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto next = [&] () -> const char * {
      if (i + 1 >= argc) {
        usage ();
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--templates") n = std::atoi (next ());
    else if (a == "--template") size = std::atoi (next ());
    else if (a == "--area") area = std::atoi (next ());
    else if (a == "--radius") radius = std::atoi (next ());
    else if (a == "--frame") {
      if (std::sscanf (next (), "%dx%d", &fw, &fh) != 2) {
        usage ();
        return 2;
      }
    } else if (a == "--frames") frames = std::atoi (next ());
    else if (a == "--warmup") warmup = std::atoi (next ());
    else if (a == "--cpu-frames") cpu_frames = std::atoi (next ());
    else if (a == "--device") device = next ();
    else if (a == "--work-group") work_group = std::atoi (next ());
    else if (a == "--local-bytes") local_bytes = std::strtoul (next (), nullptr, 10);
    else if (a == "--variants") {
      if (!parse_variants (next (), &variants)) {
        usage ();
        return 2;
      }
    } else if (a == "--pinned") pinned = true;
    else {
      usage ();
      return 2;
    }
  }
  Geometry g = area > 0 ? Geometry{size, size, area, area, std::max (2, size / 4)}
                        : Geometry::square (size, radius, std::max (2, size / 4));
  const long positions = static_cast<long> (g.positions_w ()) * g.positions_h ();

  // A textured frame, and objects at random places (scale 1: boxes of the
  // template's size), searched around a position off by a few pixels.
  std::mt19937 rng (7);
  std::vector<uint8_t> frame (static_cast<size_t> (fw) * fh * 4);
  for (size_t i = 0; i < frame.size (); i++)
    frame[i] = static_cast<uint8_t> ((i % 4 == 3) ? 255 : (rng () & 255));
  for (int y = 0; y < fh; y++) // smooth it a little so that distances have structure
    for (int x = 1; x < fw; x++)
      for (int c = 0; c < 3; c++) {
        uint8_t &p = frame[(static_cast<size_t> (y) * fw + x) * 4 + c];
        p = static_cast<uint8_t> ((p + frame[(static_cast<size_t> (y) * fw + x - 1) * 4 + c]) / 2);
      }
  ColorFrame cf;
  cf.format = ColorFormat::Rgbx;
  cf.width = fw;
  cf.height = fh;
  cf.planes[0] = frame.data ();
  cf.strides[0] = fw * 4;
  std::vector<int> slots (n);
  std::vector<Box> boxes (n), predicted (n);
  std::uniform_int_distribution<int> ux (0, std::max (0, fw - g.template_w)), uy (0, std::max (0, fh - g.template_h));
  std::uniform_int_distribution<int> jitter (-4, 4);
  for (int i = 0; i < n; i++) {
    slots[i] = i;
    boxes[i] = {double (ux (rng)), double (uy (rng)), double (g.template_w), double (g.template_h)};
    predicted[i] = boxes[i];
    predicted[i].x += jitter (rng);
    predicted[i].y += jitter (rng);
  }

  // one context for every variant (and the page-locked frame)
  cl::Device dev;
  if (cl::Error e = cl::open_device (device, true, &dev)) {
    std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
    return 1;
  }
  std::vector<Result> results;
  std::shared_ptr<cl::HostAllocator> host_alloc;
  std::unique_ptr<cl::HostBlock> host_frame;
  for (const Variant &v : variants) {
    TemplateSearch::Config cfg;
    cfg.geometry = g;
    cfg.share = &dev;
    cfg.profile = true;
    cfg.work_group = work_group;
    cfg.local_bytes = local_bytes;
    cfg.offsets_per_item = v.offsets_per_item;
    cfg.parts = v.parts;
    std::string err;
    std::unique_ptr<TemplateSearch> ts = TemplateSearch::create (cfg, &err);
    if (!ts) {
      std::fprintf (stderr, "gpudetect-bench-track: %s\n", err.c_str ());
      return 1;
    }
    if (results.empty ()) {
      std::printf ("device: %s\n", ts->device ().info.describe ().c_str ());
      std::printf ("case: %d templates %dx%d, search areas %dx%d (%ld offsets each), frame %dx%d RGBx in %s memory; "
                   "work-group %d, %d offset rows per band\n",
                   n, g.template_w, g.template_h, g.search_w, g.search_h, positions, fw, fh,
                   pinned ? "page-locked" : "ordinary", ts->work_group (), ts->band_rows ());
      if (pinned) {
        // page-locked memory on the first engine's context (every variant's device is the same)
        cl::Error e = cl::HostAllocator::create (ts->device (), &host_alloc);
        if (!e)
          e = host_alloc->alloc (frame.size (), &host_frame);
        if (e) {
          std::fprintf (stderr, "gpudetect-bench-track: page-locked memory: %s\n", e.message.c_str ());
          return 1;
        }
        std::memcpy (host_frame->data (), frame.data (), frame.size ());
        cf.planes[0] = static_cast<const uint8_t *> (host_frame->data ());
      }
    }
    cl::Error e = ts->upload (cf);
    if (!e)
      e = ts->update (slots, boxes);
    if (e) {
      std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
      return 1;
    }
    std::vector<double> t_upload, t_convert, t_search, t_read, t_host;
    Result r;
    r.v = v;
    r.parts = ts->parts_for (n);
    for (int f = 0; f < warmup + frames; f++) {
      const auto t0 = std::chrono::steady_clock::now ();
      e = ts->upload (cf);
      if (!e)
        e = ts->search (slots, predicted, &r.got);
      if (e) {
        std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
        return 1;
      }
      const double host = std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - t0).count ();
      if (f < warmup)
        continue;
      const Times t = ts->last_times ();
      t_upload.push_back (t.upload);
      t_convert.push_back (t.convert);
      t_search.push_back (t.search);
      t_read.push_back (t.readback);
      t_host.push_back (host);
    }
    r.upload = median (t_upload);
    r.convert = median (t_convert);
    r.search = median (t_search);
    r.readback = median (t_read);
    r.host = median (t_host);
    const double ms = r.search / 1000;
    std::printf ("variant %dx%d (%d offsets per work-item, %d work-groups per template): device, median of %d frames "
                 "after %d: upload %.1f us, convert %.1f us, search %.3f ms (%.2f us per template, %.1f G "
                 "pixel-differences/s), readback %.1f us; upload to readback %.3f ms; host frame %.3f ms\n",
                 v.offsets_per_item, v.parts, ts->offsets_per_item (), r.parts, frames, warmup, r.upload, r.convert, ms,
                 r.search / n, static_cast<double> (n) * positions * g.template_w * g.template_h / (ms * 1e6),
                 r.readback, (r.upload + r.convert + r.search + r.readback) / 1000, r.host / 1000);
    std::fflush (stdout);
    results.push_back (std::move (r));
  }
  const double ms = results.front ().search / 1000;
  const std::vector<Match> &got = results.front ().got;

  // The plain C++ loop on every core: the reference search of each template.
  if (cpu_frames > 0) {
    std::vector<uint8_t> rgbx = reference::convert (cf);
    std::vector<std::vector<uint8_t>> tmpl (n);
    const std::vector<uint8_t> mask = default_mask (g.template_w, g.template_h);
    for (int i = 0; i < n; i++)
      tmpl[i] = reference::extract (rgbx.data (), fw, fh, grid_for (boxes[i], g), g, mask);
    const unsigned threads = std::max (1u, std::thread::hardware_concurrency ());
    std::vector<Match> ref (n);
    std::vector<double> t_cpu;
    for (int f = 0; f < cpu_frames; f++) {
      const auto t0 = std::chrono::steady_clock::now ();
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; t++)
        pool.emplace_back ([&, t] () {
          std::vector<uint32_t> dmap;
          for (int i = static_cast<int> (t); i < n; i += static_cast<int> (threads)) {
            Grid gr = grid_for (predicted[i], g);
            gr.ox -= g.centre_x () * gr.sx;
            gr.oy -= g.centre_y () * gr.sy;
            reference::search (rgbx.data (), fw, fh, tmpl[i].data (), gr, g, &dmap, &ref[i]);
          }
        });
      for (std::thread &th : pool)
        th.join ();
      t_cpu.push_back (std::chrono::duration<double, std::milli> (std::chrono::steady_clock::now () - t0).count ());
    }
    bool all_same = true;
    for (const Result &r : results) {
      int same = 0;
      for (int i = 0; i < n; i++)
        same += ref[i].best == r.got[i].best && ref[i].best_x == r.got[i].best_x && ref[i].best_y == r.got[i].best_y &&
                ref[i].alt == r.got[i].alt;
      std::printf ("cpu loop, %u threads, median of %d frames: %.3f ms (%.1fx variant %dx%d's search); same best and "
                   "alternative for %d of %d templates\n",
                   threads, cpu_frames, median (t_cpu), median (t_cpu) / (r.search / 1000), r.v.offsets_per_item,
                   r.v.parts, same, n);
      all_same = all_same && same == n;
    }
    if (!all_same)
      return 1;
  }
  (void) ms;
  (void) got;
  if (results.size () > 1) {
    std::printf ("variants (offsets per work-item x work-groups per template), search and upload to readback, "
                 "medians:\n");
    for (const Result &r : results)
      std::printf ("  %dx%d: search %.3f ms (%.2fx 1st), upload to readback %.3f ms\n", r.v.offsets_per_item, r.v.parts,
                   r.search / 1000, results.front ().search / r.search,
                   (r.upload + r.convert + r.search + r.readback) / 1000);
  }
  return 0;
}
