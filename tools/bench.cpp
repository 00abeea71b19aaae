// gpudetect-bench: per-stage device times (OpenCL profiling events), launches
// and host syncs per frame, end-to-end latency and pipelined throughput, and
// OpenCV's CascadeClassifier (CPU, all threads; and UMat/OpenCL) on the same
// frames with the same parameters, in the same run; for WaldBoost models of
// OpenCV xobjdetect (WBDetector files), WBDetector::detect (CPU) where OpenCV
// contrib is present.
//
//   gpudetect-bench --model NAME [--device SEL] [--frames 200] [--warmup 20]
//                   [--scale-factor 1.1] [--min-neighbors 3] [--min-size 24]
//                   [--no-opencv] [--opencv-frames N] [--json FILE] [--dump FILE] FRAME.pgm...
//   gpudetect-bench --parity --model NAME [--min-f1 X] [--min-iou X] IMAGE.pgm...
//
// Frames are binary PGM (P5) files; `gpudetect-make-frames` writes the standard
// set.  Medians and p95 are over --frames frames after --warmup frames.
// --parity instead compares each image's boxes and raw windows with OpenCV's
// CascadeClassifier (CPU), as gpudetect-parity does, for hosts without
// OpenCV's image codecs (WBDetector files: the boxes of WBDetector::detect,
// which returns no raw windows; gpudetect-parity-xobjdetect compares those);
// exits 1 when a threshold is not met.
#include "detector.h"

#ifdef HAVE_OPENCV
#include "compare.h"

#include <opencv2/core/ocl.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/objdetect.hpp>
#endif
#ifdef HAVE_XOBJDETECT
#include <opencv2/xobjdetect.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace gpudetect;
using Clock = std::chrono::steady_clock;

namespace {

struct Image {
  std::string name;
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

bool read_pgm (const std::string &path, Image *img) {
  std::ifstream f (path, std::ios::binary);
  std::string magic;
  int maxval = 0;
  if (!(f >> magic >> img->width >> img->height >> maxval) || magic != "P5" || maxval != 255 || img->width <= 0 ||
      img->height <= 0)
    return false;
  f.get ();
  img->pixels.resize (static_cast<size_t> (img->width) * img->height);
  f.read (reinterpret_cast<char *> (img->pixels.data ()), img->pixels.size ());
  size_t s = path.find_last_of ('/');
  img->name = s == std::string::npos ? path : path.substr (s + 1);
  return static_cast<bool> (f);
}

struct Stats {
  double median = 0, p95 = 0, mean = 0;
};

Stats stats (std::vector<double> v) {
  Stats s;
  if (v.empty ())
    return s;
  std::sort (v.begin (), v.end ());
  s.median = v.size () % 2 ? v[v.size () / 2] : 0.5 * (v[v.size () / 2 - 1] + v[v.size () / 2]);
  s.p95 = v[std::min (v.size () - 1, static_cast<size_t> (std::ceil (0.95 * v.size ())) - 1)];
  for (double x : v)
    s.mean += x;
  s.mean /= v.size ();
  return s;
}

double ms_since (Clock::time_point t0) {
  return std::chrono::duration<double, std::milli> (Clock::now () - t0).count ();
}

#ifdef HAVE_OPENCV
// OpenCV's detector for the model: CascadeClassifier for cascades,
// WBDetector for xobjdetect's WaldBoost files (with OpenCV contrib).
struct Peer {
  cv::CascadeClassifier cascade;
#ifdef HAVE_XOBJDETECT
  cv::Ptr<cv::xobjdetect::WBDetector> wb;
#endif
  const char *name = "";

  // Empty when loaded, else why there is no peer.
  std::string load (const ModelInfo &m) {
    if (m.family == "cascade") {
      name = "CascadeClassifier";
      return cascade.load (m.path) ? "" : "OpenCV cannot load " + m.path;
    }
#ifdef HAVE_XOBJDETECT
    const char *why = "OpenCV's peers are CascadeClassifier (cascades) and WBDetector (xobjdetect WaldBoost files)";
    if (m.family != "waldboost")
      return why;
    try { // FileStorage throws on XML that is not its own (the project's WaldBoost format)
      cv::FileStorage fs (m.path, cv::FileStorage::READ);
      if (fs.isOpened () && !fs.getFirstTopLevelNode ()["waldboost_params"].empty ()) {
        name = "WBDetector";
        wb = cv::xobjdetect::WBDetector::create ();
        wb->read (fs.getFirstTopLevelNode ());
        return {};
      }
    } catch (const cv::Exception &) {
    }
    return why;
#else
    return "OpenCV's peer is CascadeClassifier (cascades; WBDetector files need OpenCV contrib's xobjdetect)";
#endif
  }
  bool umat () const { return !is_wb (); }
  bool is_wb () const {
#ifdef HAVE_XOBJDETECT
    return !wb.empty ();
#else
    return false;
#endif
  }
  // WBDetector has no search parameters (models/README.md).
  void detect (const cv::Mat &m, const DetectorConfig &cfg, std::vector<cv::Rect> *out) {
#ifdef HAVE_XOBJDETECT
    if (is_wb ()) {
      std::vector<double> conf;
      wb->detect (m, *out, conf);
      return;
    }
#endif
    cascade.detectMultiScale (m, *out, cfg.scale_factor, cfg.min_neighbors, 0,
                              cv::Size (cfg.min_size.width, cfg.min_size.height));
  }
};
#endif

} // namespace

int main (int argc, char **argv) {
  DetectorConfig cfg;
  cfg.min_size = {24, 24};
  cfg.profile = true;
  // Frames are read where they lie (page-locked copies, as the element's
  // upload pool gives them, or the caller's ordinary memory), as the element
  // reads its buffers.
  cfg.direct_upload = true;
  int frames = 200, warmup = 20, opencv_frames = -1;
  bool use_opencv = true, parity = false, min_size_given = false;
  double min_f1 = 0, min_iou = 0;
  std::string json_path, dump_path;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&] () -> std::string {
      if (i + 1 >= argc) {
        std::fprintf (stderr, "%s needs a value\n", a.c_str ());
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--model") cfg.model = next ();
    else if (a == "--device") cfg.device = next ();
    else if (a == "--frames") frames = std::max (1, std::atoi (next ().c_str ()));
    else if (a == "--warmup") warmup = std::max (0, std::atoi (next ().c_str ()));
    else if (a == "--scale-factor") cfg.scale_factor = std::atof (next ().c_str ());
    else if (a == "--min-neighbors") cfg.min_neighbors = std::atoi (next ().c_str ());
    else if (a == "--min-size") { int s = std::atoi (next ().c_str ()); cfg.min_size = {s, s}; min_size_given = true; }
    else if (a == "--no-opencv") use_opencv = false;
    else if (a == "--opencv-frames") opencv_frames = std::atoi (next ().c_str ());
    else if (a == "--json") json_path = next ();
    else if (a == "--dump") dump_path = next ();
    else if (a == "--tuning") cfg.tuning = next ();
    else if (a == "--max-device-memory") cfg.max_device_memory = std::strtoull (next ().c_str (), nullptr, 10);
    else if (a == "--parity") parity = true;
    else if (a == "--min-f1") min_f1 = std::atof (next ().c_str ());
    else if (a == "--min-iou") min_iou = std::atof (next ().c_str ());
    else if (a == "-h" || a == "--help") {
      std::printf ("usage: %s --model NAME [--device SEL] [--frames N] [--warmup N] [--scale-factor F]\n"
                   "       [--min-neighbors N] [--min-size S] [--no-opencv] [--opencv-frames N] [--json FILE]\n"
                   "       [--dump FILE] [--tuning KEY=VALUE;...] [--max-device-memory BYTES] FRAME.pgm...\n"
                   "       %s --parity --model NAME [--min-f1 X] [--min-iou X] IMAGE.pgm...\n", argv[0], argv[0]);
      return 0;
    } else paths.push_back (a);
  }
  if (paths.empty ()) {
    std::fprintf (stderr, "no frames given (binary PGM files)\n");
    return 2;
  }
  if (opencv_frames < 0)
    opencv_frames = frames;
#ifndef HAVE_OPENCV
  if (parity) {
    std::fprintf (stderr, "--parity needs a build with OpenCV\n");
    return 2;
  }
#endif
  std::string err;
  auto t_create = Clock::now ();
  std::unique_ptr<Detector> det;
  if (gpudetect::Error e_ = Detector::create (cfg, &det))
    err = e_.message;
  if (!det) {
    std::fprintf (stderr, "gpudetect: %s\n", err.c_str ());
    return 2;
  }
  const double create_ms = ms_since (t_create);
  // Latency and throughput are measured on a second detector configured as
  // the element runs, without profiling: a profiling queue costs the host
  // more per command on some drivers (NVIDIA's).
  DetectorConfig plain_cfg = cfg;
  plain_cfg.profile = false;
  std::unique_ptr<Detector> plain;
  if (!parity)
    if (Error e = Detector::create (plain_cfg, &plain))
      err = e.message;
  if (!parity && !plain) {
    std::fprintf (stderr, "gpudetect: %s\n", err.c_str ());
    return 2;
  }
  std::printf ("device: %s\nmodel: %s (%s)\nschedule: %s\nstart-up: %.1f ms (kernels %s)\n",
               det->device ().describe ().c_str (), det->model ().path.c_str (), det->model ().description.c_str (),
               det->gpu_schedule () ? "gpu" : "cpu", create_ms, det->built_from_cache () ? "from cache" : "built");

#ifdef HAVE_OPENCV
  Peer peer;
  if (gpudetect::Error e = peer.load (det->model ())) {
    if (parity) {
      std::fprintf (stderr, "--parity: %s\n", e.message.c_str ());
      return 2;
    }
    use_opencv = false;
  } else if (use_opencv) {
    std::printf ("OpenCV peer: %s\n", peer.name);
  }
  if (peer.is_wb () && !min_size_given) {
    // WBDetector searches every level: no minimum size unless one is asked for
    cfg.min_size = {0, 0};
    det->set_search (cfg.scale_factor, cfg.min_size, cfg.max_size);
    if (plain)
      plain->set_search (cfg.scale_factor, cfg.min_size, cfg.max_size);
  }
  if (use_opencv && cv::ocl::haveOpenCL ()) {
    cv::ocl::setUseOpenCL (true);
    const cv::ocl::Device &d = cv::ocl::Device::getDefault ();
    std::printf ("OpenCV UMat device: %s\n", d.available () ? d.name ().c_str () : "none (UMat runs on the CPU)");
    cv::ocl::setUseOpenCL (false);
  } else if (use_opencv) {
    std::printf ("OpenCV UMat device: none (no OpenCL in OpenCV; UMat runs on the CPU)\n");
  }
  if (parity) {
    compare::Totals total;
    if (peer.is_wb ())
      std::printf ("raw windows not compared: WBDetector::detect returns grouped boxes only\n");
    compare::print_header ();
    for (const std::string &path : paths) {
      Image img;
      if (!read_pgm (path, &img)) {
        std::fprintf (stderr, "cannot read %s (binary PGM expected)\n", path.c_str ());
        return 2;
      }
      Frame f{img.pixels.data (), img.width, img.height, img.width, PixelFormat::Gray8};
      FrameResult res;
      if (gpudetect::Error e = det->detect (f, &res)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      cv::Mat m (img.height, img.width, CV_8U, img.pixels.data ());
      if (peer.is_wb ()) {
        std::vector<cv::Rect> grouped;
        peer.detect (m, cfg, &grouped);
        const compare::Totals t = compare::add_image (res, grouped, {}, img.width, img.height, &total);
        std::printf ("%-28s %6zu %6zu %4d %4d %4d %7.3f\n", img.name.c_str (), res.objects.size (), grouped.size (),
                     t.tp, t.fp, t.fn, t.mean_iou ());
      } else {
        compare::image (peer.cascade, m, cfg, res, img.name, &total);
      }
    }
    total.print ();
    return total.f1 () >= min_f1 && total.mean_iou () >= min_iou ? 0 : 1;
  }
#endif
  std::FILE *json = json_path.empty () ? nullptr : std::fopen (json_path.c_str (), "w");
  std::FILE *dump = dump_path.empty () ? nullptr : std::fopen (dump_path.c_str (), "w");
  if (json)
    std::fprintf (json, "{\"device\": \"%s\", \"model\": \"%s\", \"results\": [\n",
                  det->device ().describe ().c_str (), det->model ().path.c_str ());

  err.clear ();
  std::shared_ptr<cl::HostAllocator> host, plain_host;
  if (Error e = det->host_allocator (&host))
    err = e.message;
  if (Error e = plain->host_allocator (&plain_host))
    err = e.message;
  std::printf ("phases: the model's family's (the phases column, in this order):");
  for (const std::string &p : det->phases ())
    std::printf (" %s;", p.c_str ());
  std::printf ("\n\n%-26s %9s %5s %7s %-31s %7s %8s %8s %8s %7s %7s %7s %8s %4s %5s %9s %9s %9s %7s %5s\n",
               "frame", "size", "objs", "upload", "phases", "readbk", "device",
               "e2e_med", "e2e_p95", "enqueue", "wait", "collect", "e2e_page", "lnch", "syncs", "pipelined",
               "ocv_cpu", "ocv_umat", "raw", "lost");
  bool first_json = true;
  for (const std::string &path : paths) {
    Image img;
    if (!read_pgm (path, &img)) {
      std::fprintf (stderr, "cannot read %s (binary PGM expected)\n", path.c_str ());
      return 2;
    }
    Frame f;
    f.data = img.pixels.data ();
    f.width = img.width;
    f.height = img.height;
    f.stride = img.width;
    // The same frame in page-locked memory, one copy per detector (each
    // context's own).
    std::unique_ptr<cl::HostBlock> block, plain_block;
    if (!host || !plain_host) {
      std::fprintf (stderr, "gpudetect: no page-locked memory: %s\n", err.c_str ());
      return 2;
    }
    for (auto [a, b] : {std::pair (host.get (), &block), std::pair (plain_host.get (), &plain_block)}) {
      if (Error e = a->alloc (img.pixels.size (), b)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      std::memcpy ((*b)->data (), img.pixels.data (), img.pixels.size ());
    }
    Frame fd = f, fp = f;
    fd.data = static_cast<const uint8_t *> (block->data ());
    fp.data = static_cast<const uint8_t *> (plain_block->data ());

    // Device time per command, from page-locked memory, with profiling.
    FrameResult res;
    std::vector<double> dev_total, up, rd;
    std::vector<std::vector<double>> phase (det->phases ().size ());
    int launches = 0;
    uint32_t lost = 0; // the most candidates a frame lost (a full list of the family's)
    for (int i = 0; i < warmup + frames; i++) {
      if (gpudetect::Error e = det->detect (fd, &res)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      if (i < warmup)
        continue;
      const StageTimes &t = res.times;
      dev_total.push_back (t.total_device / 1000), up.push_back (t.upload / 1000), rd.push_back (t.readback / 1000);
      for (size_t k = 0; k < phase.size (); k++)
        phase[k].push_back (k < t.phases.size () ? t.phases[k] / 1000 : 0.0);
      launches = t.launches;
      lost = std::max (lost, res.lost);
    }
    const size_t raw = res.hits.size ();

    // Latency without profiling: one frame at a time, submit to grouped
    // result; from ordinary memory, then from page-locked memory.
    std::vector<double> e2e_pageable;
    for (int i = 0; i < warmup + frames; i++) {
      auto t0 = Clock::now ();
      if (gpudetect::Error e = plain->detect (f, &res)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      if (i >= warmup)
        e2e_pageable.push_back (ms_since (t0));
    }
    std::vector<double> e2e, collect_ms;
    uint64_t syncs0 = 0;
    Detector::HostTimes host0;
    for (int i = 0; i < warmup + frames; i++) {
      if (i == warmup) {
        syncs0 = plain->host_syncs ();
        host0 = plain->host_times ();
      }
      auto t0 = Clock::now ();
      int ticket = -1;
      if (gpudetect::Error e = plain->submit (fp, &ticket)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      const double w0 = plain->host_times ().wait_us;
      auto tc = Clock::now ();
      if (gpudetect::Error e = plain->collect (ticket, &res)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      double ms = ms_since (t0);
      if (i < warmup)
        continue;
      e2e.push_back (ms);
      // collect() past the wait: reading the hits back out and grouping
      collect_ms.push_back (ms_since (tc) - (plain->host_times ().wait_us - w0) / 1000);
    }
    const double syncs = static_cast<double> (plain->host_syncs () - syncs0) / frames;
    const Detector::HostTimes host1 = plain->host_times ();
    const double enqueue_ms = (host1.enqueue_us - host0.enqueue_us) / 1000 / frames;
    const double wait_ms = (host1.wait_us - host0.wait_us) / 1000 / frames;
    if (dump) {
      std::fprintf (dump, "%s objects", img.name.c_str ());
      for (const Detection &d : res.objects)
        std::fprintf (dump, " %d,%d,%d,%d", d.rect.x, d.rect.y, d.rect.width, d.rect.height);
      std::fprintf (dump, "\n%s raw", img.name.c_str ());
      for (const RawHit &h : res.hits)
        std::fprintf (dump, " %d:%d:%d", h.level, h.x, h.y);
      std::fprintf (dump, "\n");
    }

    // Throughput: every slot in flight, as the element runs.
    const int slots = plain->slots ();
    std::vector<int> tickets;
    auto tp0 = Clock::now ();
    for (int i = 0; i < frames; i++) {
      if (static_cast<int> (tickets.size ()) == slots) {
        plain->collect (tickets.front (), &res);
        tickets.erase (tickets.begin ());
      }
      int t = -1;
      if (gpudetect::Error e = plain->submit (fp, &t)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      tickets.push_back (t);
    }
    for (int t : tickets)
      plain->collect (t, &res);
    const double pipelined = ms_since (tp0) / frames;

    double ocv_cpu = 0, ocv_umat = 0;
    size_t ocv_objs = 0;
#ifdef HAVE_OPENCV
    if (use_opencv && opencv_frames > 0) {
      cv::Mat m (img.height, img.width, CV_8U, img.pixels.data ());
      std::vector<cv::Rect> out;
      const cv::Size mins (cfg.min_size.width, cfg.min_size.height);
      std::vector<double> t;
      cv::ocl::setUseOpenCL (false);
      for (int i = 0; i < std::min (3, warmup) + opencv_frames; i++) {
        auto t0 = Clock::now ();
        peer.detect (m, cfg, &out);
        if (i >= std::min (3, warmup))
          t.push_back (ms_since (t0));
      }
      ocv_cpu = stats (t).median;
      ocv_objs = out.size ();
      if (peer.umat () && cv::ocl::haveOpenCL ()) {
        cv::ocl::setUseOpenCL (true);
        cv::UMat u = m.getUMat (cv::ACCESS_READ);
        t.clear ();
        for (int i = 0; i < std::min (3, warmup) + opencv_frames; i++) {
          auto t0 = Clock::now ();
          peer.cascade.detectMultiScale (u, out, cfg.scale_factor, cfg.min_neighbors, 0, mins);
          if (i >= std::min (3, warmup))
            t.push_back (ms_since (t0));
        }
        ocv_umat = stats (t).median;
        cv::ocl::setUseOpenCL (false);
      }
    }
#endif
    Stats se = stats (e2e);
    char size[32];
    std::snprintf (size, sizeof size, "%dx%d", img.width, img.height);
    const double collect_med = stats (collect_ms).median, pageable_med = stats (e2e_pageable).median;
    std::string phases_text, phases_json;
    for (size_t k = 0; k < phase.size (); k++) {
      char v[64];
      std::snprintf (v, sizeof v, "%s%.3f", k ? "/" : "", stats (phase[k]).median);
      phases_text += v;
      std::snprintf (v, sizeof v, "%s\"%s\": %.4f", k ? ", " : "", det->phases ()[k].c_str (), stats (phase[k]).median);
      phases_json += v;
    }
    std::printf ("%-26s %9s %5zu %7.3f %-31s %7.3f %8.3f %8.3f %8.3f %7.3f %7.3f %7.3f "
                 "%8.3f %4d %5.2f %9.3f %9.3f %9.3f %7zu %5u\n",
                 img.name.c_str (), size, res.objects.size (), stats (up).median, phases_text.c_str (),
                 stats (rd).median, stats (dev_total).median, se.median, se.p95, enqueue_ms,
                 wait_ms, collect_med, pageable_med, launches, syncs, pipelined, ocv_cpu, ocv_umat, raw, lost);
    if (json) {
      std::fprintf (json,
                    "%s  {\"frame\": \"%s\", \"width\": %d, \"height\": %d, \"objects\": %zu, \"opencv_objects\": %zu, "
                    "\"frames\": %d, \"upload_ms\": %.4f, \"phases_ms\": {%s}, "
                    "\"readback_ms\": %.4f, \"device_ms\": %.4f, \"e2e_median_ms\": %.4f, \"e2e_p95_ms\": %.4f, "
                    "\"enqueue_ms\": %.4f, \"wait_ms\": %.4f, \"collect_ms\": %.4f, \"e2e_pageable_median_ms\": %.4f, "
                    "\"launches\": %d, \"host_syncs\": %.2f, \"pipelined_ms\": %.4f, \"opencv_cpu_ms\": %.4f, "
                    "\"opencv_umat_ms\": %.4f, \"raw\": %zu, \"lost\": %u}",
                    first_json ? "" : ",\n", img.name.c_str (), img.width, img.height, res.objects.size (), ocv_objs,
                    frames, stats (up).median, phases_json.c_str (), stats (rd).median,
                    stats (dev_total).median, se.median, se.p95, enqueue_ms, wait_ms, collect_med, pageable_med,
                    launches, syncs, pipelined, ocv_cpu, ocv_umat, raw, lost);
      first_json = false;
    }
  }
  std::printf ("\nms; upload, phases, readbk: median device time of the frame's commands under each (OpenCL "
               "profiling events), the phases the family's own, in the order listed above;\ndevice: first command start to last end; e2e: submit to grouped result, one frame at a time, "
               "without profiling (as the element runs), the frame in page-locked memory (as the element's upload pool gives it); of that, on the host: enqueue (in "
               "submit), wait (blocked on the device), collect (reading the hits out, grouping; median);\ne2e_page: the "
               "same from ordinary memory (median); pipelined: per frame with %d frames in flight, page-locked frames; "
               "ocv_*: OpenCV's peer (CascadeClassifier; WBDetector::detect for xobjdetect files, CPU only) median, same "
               "parameters.\n",
               det->slots ());
  if (json) {
    std::fprintf (json, "\n]}\n");
    std::fclose (json);
  }
  if (dump)
    std::fclose (dump);
  return 0;
}
