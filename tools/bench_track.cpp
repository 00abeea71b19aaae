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
                        "[--local-bytes B]\n");
}

int main (int argc, char **argv) {
  int n = 100, size = 32, area = 0, radius = 32, fw = 1920, fh = 1080, frames = 100, warmup = 10, cpu_frames = 3;
  int work_group = 0;
  size_t local_bytes = 0;
  std::string device;
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
    else {
      usage ();
      return 2;
    }
  }
  Geometry g = area > 0 ? Geometry{size, size, area, area, std::max (2, size / 4)}
                        : Geometry::square (size, radius, std::max (2, size / 4));
  TemplateSearch::Config cfg;
  cfg.geometry = g;
  cfg.device = device;
  cfg.profile = true;
  cfg.work_group = work_group;
  cfg.local_bytes = local_bytes;
  std::string err;
  std::unique_ptr<TemplateSearch> ts = TemplateSearch::create (cfg, &err);
  if (!ts) {
    std::fprintf (stderr, "gpudetect-bench-track: %s\n", err.c_str ());
    return 1;
  }
  const long positions = static_cast<long> (g.positions_w ()) * g.positions_h ();
  std::printf ("device: %s\n", ts->device ().info.describe ().c_str ());
  std::printf ("case: %d templates %dx%d, search areas %dx%d (%ld offsets each), frame %dx%d RGBx; work-group %d, "
               "%d offset rows per band\n",
               n, g.template_w, g.template_h, g.search_w, g.search_h, positions, fw, fh, ts->work_group (),
               ts->band_rows ());

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
  cl::Error e = ts->upload (cf);
  if (!e)
    e = ts->update (slots, boxes);
  if (e) {
    std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
    return 1;
  }

  std::vector<double> t_upload, t_convert, t_search, t_read, t_host;
  std::vector<Match> got;
  for (int f = 0; f < warmup + frames; f++) {
    const auto t0 = std::chrono::steady_clock::now ();
    e = ts->upload (cf);
    if (!e)
      e = ts->search (slots, predicted, &got);
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
  const double ms = median (t_search) / 1000;
  std::printf ("device, median of %d frames after %d: upload %.1f us, convert %.1f us, search %.3f ms "
               "(%.2f us per template, %.1f G pixel-differences/s), readback %.1f us; host frame %.3f ms\n",
               frames, warmup, median (t_upload), median (t_convert), ms, median (t_search) / n,
               static_cast<double> (n) * positions * g.template_w * g.template_h / (ms * 1e6), median (t_read),
               median (t_host) / 1000);

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
    int same = 0;
    for (int i = 0; i < n; i++)
      same += ref[i].best == got[i].best && ref[i].best_x == got[i].best_x && ref[i].best_y == got[i].best_y &&
              ref[i].alt == got[i].alt;
    std::printf ("cpu loop, %u threads, median of %d frames: %.3f ms (%.1fx the device's search); same best and "
                 "alternative for %d of %d templates\n",
                 threads, cpu_frames, median (t_cpu), median (t_cpu) / ms, same, n);
    if (same != n)
      return 1;
  }
  return 0;
}
