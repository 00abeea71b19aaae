// gpudetect-bench-streams: many streams on one device, in one process, as a
// site with many cameras runs them.  N detectors share one OpenCL device
// (context and programs, DetectorConfig::share); each stream has its own
// detector (its own queue and slots, `--slots` frames in flight as the
// element's max-in-flight) and a page-locked copy of the frame, as the
// element's upload pool gives it, so that no decoding is measured.  Host
// threads feed the streams (one per stream by default, as one streaming
// thread per pipeline).
//
//   gpudetect-bench-streams --model NAME [--device SEL] [--streams 1,4,16,32,64]
//       [--seconds 3] [--warmup 20] [--slots 2] [--threads 0] [--rate 0]
//       [--tuning KEY=VALUE;...] [--min-size 24] [--tile WxH] [--profile] [--lead-in S] [--label TEXT]
//       [--json FILE] FRAME.pgm
//
// --tile WxH: the frame repeated over a WxH frame (e.g. the test image's face
// as a 1080p crowd where the standard frames are not at hand).
// For each N: aggregate frames per second over a window of --seconds in which
// every stream runs (after --warmup frames each, and --lead-in seconds of
// all of them running: 0.5, or 1 with --rate); per stream its frames per
// second and its latency (median, p95) from a frame's submission (or, with
// --rate, its arrival) to its grouped result; the host's CPU time over the
// window (cores busy); memory: resident host memory and, where nvidia-smi
// answers, the process's device memory, before the detectors, after they are
// made and after their first frame, and what each stream added.  Every frame's
// object count is checked against a single detector's answer (mismatches: 0).
// --threads T: T host threads share the streams (0: one per stream).
// --rate R: every stream's frames arrive at R per second (a camera), spread
// over the streams; latency then counts from arrival.  0: as fast as possible.
// --profile: profiling queues, and the device time of the window's frames
// (the sum of their commands' times, OpenCL profiling events) per second of
// the window: below 1 the device idles part of the time (the host or the
// launches are the bound), 1 or more it always has work (commands of several
// streams at once each counting); and launches per second (profiling queues
// cost the host more per command on some drivers: the other columns are
// best read from a run without).
#include "cl/shared.h"
#include "detector.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gpudetect;
using Clock = std::chrono::steady_clock;

namespace {

struct Image {
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
  return static_cast<bool> (f);
}

// `img` repeated over a w x h frame.
Image tile (const Image &img, int w, int h) {
  Image t;
  t.width = w, t.height = h;
  t.pixels.resize (static_cast<size_t> (w) * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      t.pixels[static_cast<size_t> (y) * w + x] = img.pixels[static_cast<size_t> (y % img.height) * img.width + x % img.width];
  return t;
}

double percentile (std::vector<double> v, double p) {
  if (v.empty ())
    return 0;
  std::sort (v.begin (), v.end ());
  const size_t i = static_cast<size_t> (std::ceil (p * v.size ()));
  return v[std::min (v.size () - 1, i > 0 ? i - 1 : 0)];
}

double ms_between (Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli> (b - a).count ();
}

// Resident memory of this process, MiB.
double rss_mib () {
  std::ifstream f ("/proc/self/status");
  std::string line;
  while (std::getline (f, line))
    if (line.rfind ("VmRSS:", 0) == 0)
      return std::atof (line.c_str () + 6) / 1024.0;
  return -1;
}

double cpu_seconds () {
  rusage u{};
  getrusage (RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Device memory of this process in MiB from nvidia-smi (NVIDIA GPUs), where
// it answers: the process's own entry, else (a container whose process ids
// it does not see) the used memory of the whole device, marked as such in
// `*what`.  Negative where nothing answers.
double device_mib (std::string *what) {
  static int have = -1;
  if (have == 0)
    return -1;
  auto run = [] (const char *cmd) {
    std::string out;
    if (FILE *p = popen (cmd, "r")) {
      char buf[512];
      while (std::fgets (buf, sizeof buf, p))
        out += buf;
      if (pclose (p) != 0)
        out.clear ();
    }
    return out;
  };
  const std::string apps =
      run ("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null");
  std::istringstream in (apps);
  std::string line;
  const long pid = static_cast<long> (getpid ());
  while (std::getline (in, line)) {
    long p = 0;
    double mib = 0;
    if (std::sscanf (line.c_str (), "%ld, %lf", &p, &mib) == 2 && p == pid) {
      have = 1;
      *what = "process";
      return mib;
    }
  }
  const std::string used = run ("nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null");
  double mib = 0;
  if (!used.empty () && std::sscanf (used.c_str (), "%lf", &mib) == 1) {
    have = 1;
    *what = "device";
    return mib;
  }
  have = 0;
  return -1;
}

struct Stream {
  std::unique_ptr<Detector> det;
  std::unique_ptr<cl::HostBlock> block;
  Frame frame;
  struct InFlight {
    int ticket;
    Clock::time_point start; // submission, or arrival with --rate
  };
  std::deque<InFlight> flight;
  uint64_t next_frame = 0; // with --rate: the next frame's number
  Clock::time_point phase; // with --rate: frame 0's arrival
  // results: frames completed inside the window, and their latencies
  std::vector<double> latency_ms;
  uint64_t done_in_window = 0, mismatches = 0, errors = 0;
  double device_us = 0;   // --profile: the window's frames' command times
  uint64_t launches = 0;  // --profile: their kernel launches
  std::string error;
};

struct Options {
  DetectorConfig cfg;
  double seconds = 3;
  int warmup = 20;
  int threads = 0;
  double rate = 0;
  double lead_in = -1; // seconds from the start to the window; < 0: 1 with a rate, else 0.5
};

// A barrier for the main thread and the feeding threads (C++17).
class Barrier {
public:
  explicit Barrier (int n) : n_ (n) {}
  void wait () {
    std::unique_lock<std::mutex> g (m_);
    const uint64_t gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      gen_++;
      cv_.notify_all ();
      return;
    }
    cv_.wait (g, [&] { return gen_ != gen; });
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, waiting_ = 0;
  uint64_t gen_ = 0;
};

struct Run {
  const Options &opt;
  std::vector<Stream> &streams;
  size_t expected_objects;
  // frames start (and arrive) from `go` on; the window is [window_start, window_end)
  Clock::time_point go, window_start, window_end;

  // Collects the stream's oldest frame (waiting for it).
  void collect_oldest (Stream &s) {
    const Stream::InFlight f = s.flight.front ();
    s.flight.pop_front ();
    FrameResult r;
    if (gpudetect::Error e = s.det->collect (f.ticket, &r)) {
      s.errors++;
      s.error = e.message;
      return;
    }
    const Clock::time_point now = Clock::now ();
    if (r.objects.size () != expected_objects)
      s.mismatches++;
    if (now >= window_start && now < window_end) {
      s.done_in_window++;
      s.latency_ms.push_back (ms_between (f.start, now));
      const StageTimes &t = r.times;
      s.device_us += t.upload + t.readback;
      for (double us : t.phases)
        s.device_us += us;
      s.launches += static_cast<uint64_t> (t.launches);
    }
  }

  void submit (Stream &s, Clock::time_point start) {
    int ticket = -1;
    if (gpudetect::Error e = s.det->submit (s.frame, &ticket)) {
      s.errors++;
      s.error = e.message;
      return;
    }
    s.flight.push_back ({ticket, start});
  }

  // A frame into the stream as the element takes one: complete the oldest
  // when every slot is busy, submit, then let every completed frame leave
  // (generate_output returns the buffers whose work is done, without
  // waiting).  With a rate, only once the frame has arrived; returns when
  // the stream's next frame arrives.
  Clock::time_point step (Stream &s) {
    Clock::time_point arrival = Clock::now ();
    if (opt.rate > 0) {
      arrival = s.phase + std::chrono::duration_cast<Clock::duration> (
                              std::chrono::duration<double> (s.next_frame / opt.rate));
      if (arrival > Clock::now ())
        return arrival;
    }
    if (static_cast<int> (s.flight.size ()) >= s.det->slots ())
      collect_oldest (s);
    submit (s, arrival);
    s.next_frame++;
    while (!s.flight.empty () && s.det->ready (s.flight.front ().ticket))
      collect_oldest (s);
    return Clock::now ();
  }

  void drain (Stream &s) {
    while (!s.flight.empty ())
      collect_oldest (s);
  }
};

// Streams [first, first + count) on one thread: warm-up, then frames until
// the window closes.
void drive (Run &run, Barrier &ready, size_t first, size_t count) {
  std::vector<Stream> &ss = run.streams;
  const Options &opt = run.opt;
  for (size_t i = first; i < first + count; i++) {
    for (int k = 0; k < opt.warmup && ss[i].errors == 0; k++) {
      if (static_cast<int> (ss[i].flight.size ()) >= ss[i].det->slots ())
        run.collect_oldest (ss[i]);
      run.submit (ss[i], Clock::now ());
    }
    run.drain (ss[i]);
  }
  ready.wait (); // every stream warm: the main thread sets the times
  ready.wait ();
  // With a rate, stream i's frames arrive i/N of a frame interval after the
  // first stream's, so that arrivals are spread as independent cameras'.
  for (size_t i = first; i < first + count; i++) {
    ss[i].next_frame = 0;
    ss[i].phase = run.go + std::chrono::duration_cast<Clock::duration> (std::chrono::duration<double> (
                               opt.rate > 0 ? static_cast<double> (i) / ss.size () / opt.rate : 0));
  }
  std::this_thread::sleep_until (run.go);
  while (Clock::now () < run.window_end) {
    Clock::time_point wake = Clock::time_point::max ();
    bool alive = false;
    for (size_t i = first; i < first + count; i++)
      if (ss[i].errors == 0) {
        alive = true;
        wake = std::min (wake, run.step (ss[i]));
      }
    if (!alive)
      break;
    if (opt.rate > 0 && wake > Clock::now ())
      std::this_thread::sleep_until (std::min (wake, run.window_end));
  }
  for (size_t i = first; i < first + count; i++)
    run.drain (ss[i]);
}

std::vector<int> parse_list (const std::string &s) {
  std::vector<int> out;
  std::stringstream in (s);
  std::string item;
  while (std::getline (in, item, ','))
    if (int v = std::atoi (item.c_str ()); v > 0)
      out.push_back (v);
  return out;
}

} // namespace

int main (int argc, char **argv) {
  Options opt;
  opt.cfg.min_size = {24, 24};
  opt.cfg.direct_upload = true; // frames read where they lie (page-locked), as the element reads its buffers
  std::vector<int> counts{1, 4, 16, 32, 64};
  std::string json_path, frame_path, label;
  int tile_w = 0, tile_h = 0;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto next = [&] () -> std::string {
      if (i + 1 >= argc) {
        std::fprintf (stderr, "%s needs a value\n", a.c_str ());
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--model") opt.cfg.model = next ();
    else if (a == "--device") opt.cfg.device = next ();
    else if (a == "--streams") counts = parse_list (next ());
    else if (a == "--seconds") opt.seconds = std::max (0.2, std::atof (next ().c_str ()));
    else if (a == "--warmup") opt.warmup = std::max (1, std::atoi (next ().c_str ()));
    else if (a == "--slots") opt.cfg.slots = std::clamp (std::atoi (next ().c_str ()), 1, 16);
    else if (a == "--threads") opt.threads = std::max (0, std::atoi (next ().c_str ()));
    else if (a == "--rate") opt.rate = std::max (0.0, std::atof (next ().c_str ()));
    else if (a == "--tuning") opt.cfg.tuning = next ();
    else if (a == "--max-device-memory") opt.cfg.max_device_memory = std::strtoull (next ().c_str (), nullptr, 10);
    else if (a == "--profile") opt.cfg.profile = true;
    else if (a == "--lead-in") opt.lead_in = std::max (0.0, std::atof (next ().c_str ()));
    else if (a == "--min-size") { const int s = std::atoi (next ().c_str ()); opt.cfg.min_size = {s, s}; }
    else if (a == "--label") label = next ();
    else if (a == "--tile") {
      const std::string v = next ();
      if (std::sscanf (v.c_str (), "%dx%d", &tile_w, &tile_h) != 2 || tile_w <= 0 || tile_h <= 0 || tile_w > 16384 ||
          tile_h > 16384) {
        std::fprintf (stderr, "--tile: WxH expected\n");
        return 2;
      }
    }
    else if (a == "--json") json_path = next ();
    else if (a == "-h" || a == "--help") {
      std::printf ("usage: %s --model NAME [--device SEL] [--streams 1,4,16,32,64] [--seconds 3] [--warmup 20]\n"
                   "       [--slots 2] [--threads 0] [--rate 0] [--tuning KEY=VALUE;...] [--min-size 24]\n"
                   "       [--tile WxH] [--profile] [--lead-in S] [--label TEXT] [--max-device-memory BYTES]\n"
                   "       [--json FILE] FRAME.pgm\n", argv[0]);
      return 0;
    } else frame_path = a;
  }
  Image img;
  if (frame_path.empty () || !read_pgm (frame_path, &img)) {
    std::fprintf (stderr, "a frame is needed (binary PGM): %s\n", frame_path.c_str ());
    return 2;
  }
  if (tile_w > 0)
    img = tile (img, tile_w, tile_h);
  if (counts.empty ()) {
    std::fprintf (stderr, "--streams: no stream count\n");
    return 2;
  }
  std::string mem_what = "none";
  const double rss0 = rss_mib (), dev0 = device_mib (&mem_what);
  cl::Device dev;
  if (Error e = cl::open_device (opt.cfg.device, false, &dev)) {
    std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
    return 2;
  }
  opt.cfg.share = &dev;
  const Frame plain{img.pixels.data (), img.width, img.height, img.width, PixelFormat::Gray8};
  size_t expected = 0;
  std::string model_desc;
  // The reference detector stays for the whole run: it holds the program, so
  // that every stream count shares the one build.
  std::unique_ptr<Detector> ref;
  {
    std::string err;
    if (gpudetect::Error e_ = Detector::create (opt.cfg, &ref))
      err = e_.message;
    FrameResult r;
    if (!ref || !(err = ref->detect (plain, &r).message).empty ()) {
      std::fprintf (stderr, "gpudetect: %s\n", err.c_str ());
      return 2;
    }
    expected = r.objects.size ();
    model_desc = ref->model ().path + " (" + ref->model ().description + ")";
    std::printf ("device: %s\nmodel: %s\nschedule: %s\nframe: %s%s (%dx%d), %zu objects\ntuning: '%s'\n"
                 "slots per stream: %d; threads: %s; rate: %s\n",
                 dev.info.describe ().c_str (), model_desc.c_str (), ref->gpu_schedule () ? "gpu" : "cpu",
                 frame_path.c_str (), tile_w > 0 ? ", tiled" : "", img.width, img.height, expected, opt.cfg.tuning.c_str (), ref->slots (),
                 opt.threads ? std::to_string (opt.threads).c_str () : "one per stream",
                 opt.rate > 0 ? (std::to_string (opt.rate) + " frames/s per stream").c_str () : "as fast as possible");
  }
  std::FILE *json = json_path.empty () ? nullptr : std::fopen (json_path.c_str (), "w");
  if (json)
    std::fprintf (json, "{\"device\": \"%s\", \"model\": \"%s\", \"frame\": \"%s\", \"width\": %d, \"height\": %d, "
                  "\"tuning\": \"%s\", \"label\": \"%s\", \"slots\": %d, \"threads\": %d, \"rate\": %.3f, "
                  "\"seconds\": %.3f, \"memory_source\": \"%s\", \"runs\": [\n",
                  dev.info.describe ().c_str (), model_desc.c_str (), frame_path.c_str (), img.width, img.height,
                  opt.cfg.tuning.c_str (), label.c_str (), opt.cfg.slots, opt.threads, opt.rate, opt.seconds,
                  mem_what.c_str ());
  std::printf ("\n%7s %8s %10s %9s %9s %9s %9s %9s %7s %9s %9s %9s %9s %6s %6s %7s%s\n", "streams", "threads",
               "agg_fps", "fps/strm", "lat_p50", "p95_med", "p95_max", "p95/intv", "cores", "rss_MiB", "rss/strm",
               "dev_MiB", "dev/strm", "builds", "bad", "starved", opt.cfg.profile ? "  dev_busy launch/s" : "");
  bool first_json = true;
  int status = 0;
  for (const int n : counts) {
    std::vector<Stream> streams (n);
    const double rss_before = rss_mib ();
    const double dev_before = device_mib (&mem_what);
    std::string err;
    std::shared_ptr<cl::HostAllocator> host;
    for (int i = 0; i < n; i++) {
      Stream &s = streams[i];
      if (gpudetect::Error e_ = Detector::create (opt.cfg, &s.det))
        err = e_.message;
      if (!s.det) {
        std::fprintf (stderr, "gpudetect: stream %d of %d: %s\n", i, n, err.c_str ());
        return 2;
      }
      if (!host)
        if (Error e = s.det->host_allocator (&host))
          err = e.message;
      if (!host) {
        std::fprintf (stderr, "gpudetect: no page-locked memory: %s\n", err.c_str ());
        return 2;
      }
      if (Error e = host->alloc (img.pixels.size (), &s.block)) {
        std::fprintf (stderr, "gpudetect: %s\n", e.message.c_str ());
        return 2;
      }
      std::memcpy (s.block->data (), img.pixels.data (), img.pixels.size ());
      s.frame = plain;
      s.frame.data = static_cast<const uint8_t *> (s.block->data ());
    }
    const double rss_made = rss_mib (), dev_made = device_mib (&mem_what);
    Run run{opt, streams, expected, {}, {}, {}};
    const int nthreads = opt.threads > 0 ? std::min (opt.threads, n) : n;
    Barrier ready (nthreads + 1);
    std::vector<std::thread> threads;
    size_t at = 0;
    for (int t = 0; t < nthreads; t++) {
      const size_t count = n / nthreads + (t < n % nthreads ? 1 : 0);
      threads.emplace_back (drive, std::ref (run), std::ref (ready), at, count);
      at += count;
    }
    ready.wait (); // warm
    const double rss_warm = rss_mib (), dev_warm = device_mib (&mem_what);
    // Frames from `go` on; the window opens once the streams are in their
    // steady state (a lead-in of a second with a rate, half a second without).
    run.go = Clock::now () + std::chrono::milliseconds (20);
    run.window_start = run.go + std::chrono::duration_cast<Clock::duration> (std::chrono::duration<double> (
                                    opt.lead_in >= 0 ? opt.lead_in : opt.rate > 0 ? 1.0 : 0.5));
    run.window_end = run.window_start + std::chrono::duration_cast<Clock::duration> (
                                            std::chrono::duration<double> (opt.seconds));
    ready.wait (); // go
    std::this_thread::sleep_until (run.window_start);
    const double cpu0 = cpu_seconds ();
    std::this_thread::sleep_until (run.window_end);
    const double cpu = cpu_seconds () - cpu0;
    for (std::thread &t : threads)
      t.join ();
    uint64_t total = 0, mismatches = 0, errors = 0, launches = 0, starved = 0;
    double device_us = 0;
    std::vector<double> p95s, p50s, all;
    std::string first_error;
    for (Stream &s : streams) {
      total += s.done_in_window;
      device_us += s.device_us;
      launches += s.launches;
      mismatches += s.mismatches;
      errors += s.errors;
      if (first_error.empty ())
        first_error = s.error;
      if (s.latency_ms.empty ()) {
        starved++; // no frame of its own completed in the window
        continue;
      }
      p95s.push_back (percentile (s.latency_ms, 0.95));
      p50s.push_back (percentile (s.latency_ms, 0.5));
      all.insert (all.end (), s.latency_ms.begin (), s.latency_ms.end ());
    }
    const double agg = total / opt.seconds;
    const double per_stream = agg / n;
    // a stream's frame interval: its camera's with --rate, else its share of the device
    const double interval_ms = opt.rate > 0 ? 1000.0 / opt.rate : (per_stream > 0 ? 1000.0 / per_stream : 0);
    const double p95_max = p95s.empty () ? 0 : *std::max_element (p95s.begin (), p95s.end ());
    const double p95_med = percentile (p95s, 0.5);
    const double cores = cpu / opt.seconds;
    const double rss_per = (rss_warm - rss_before) / n;
    const double dev_per = dev_warm >= 0 && dev_before >= 0 ? (dev_warm - dev_before) / n : -1;
    const uint64_t builds = cl::program_builds (dev);
    const double dev_busy = device_us / 1e6 / opt.seconds, launch_rate = launches / opt.seconds;
    std::printf ("%7d %8d %10.1f %9.2f %9.3f %9.3f %9.3f %9.2f %7.2f %9.1f %9.2f %9.1f %9.2f %6llu %6llu %7llu", n,
                 nthreads, agg, per_stream, percentile (all, 0.5), p95_med, p95_max,
                 interval_ms > 0 ? p95_max / interval_ms : 0, cores, rss_warm, rss_per, dev_warm, dev_per,
                 static_cast<unsigned long long> (builds), static_cast<unsigned long long> (mismatches + errors),
                 static_cast<unsigned long long> (starved));
    if (opt.cfg.profile)
      std::printf (" %9.3f %9.0f", dev_busy, launch_rate);
    std::printf ("\n");
    std::fflush (stdout);
    if (errors)
      std::fprintf (stderr, "gpudetect: %llu frames failed: %s\n", static_cast<unsigned long long> (errors),
                    first_error.c_str ());
    if (mismatches + errors)
      status = 1;
    if (json) {
      std::fprintf (json,
                    "%s  {\"streams\": %d, \"threads\": %d, \"frames\": %llu, \"aggregate_fps\": %.3f, "
                    "\"per_stream_fps\": %.3f, \"latency_p50_ms\": %.4f, \"latency_p95_median_ms\": %.4f, "
                    "\"latency_p95_max_ms\": %.4f, \"interval_ms\": %.4f, \"host_cores\": %.3f, "
                    "\"rss_mib\": {\"before\": %.1f, \"made\": %.1f, \"warm\": %.1f}, "
                    "\"device_mib\": {\"before\": %.1f, \"made\": %.1f, \"warm\": %.1f}, "
                    "\"rss_per_stream_mib\": %.3f, \"device_per_stream_mib\": %.3f, \"program_builds\": %llu, "
                    "\"mismatches\": %llu, \"errors\": %llu, \"starved\": %llu, \"profile\": %s, \"device_busy\": %.4f, "
                    "\"launches_per_s\": %.1f}",
                    first_json ? "" : ",\n", n, nthreads, static_cast<unsigned long long> (total), agg, per_stream,
                    percentile (all, 0.5), p95_med, p95_max, interval_ms, cores, rss_before, rss_made, rss_warm,
                    dev_before, dev_made, dev_warm, rss_per, dev_per, static_cast<unsigned long long> (builds),
                    static_cast<unsigned long long> (mismatches), static_cast<unsigned long long> (errors),
                    static_cast<unsigned long long> (starved), opt.cfg.profile ? "true" : "false", dev_busy, launch_rate);
      first_json = false;
    }
  }
  std::printf ("\nagg_fps: frames completed by all streams in the %.1f s window, per second; fps/strm: per stream; "
               "lat_*: ms from a frame's %s to its grouped result, p50 over every frame, p95 per stream (median and "
               "worst over streams); p95/intv: the worst p95 in frame intervals (%s); cores: the process's CPU time "
               "over the window per second; rss/dev MiB: resident host memory and %s device memory (nvidia-smi) "
               "with every stream warm, per stream: what each added; builds: programs built on the shared device "
               "so far; bad: frames whose object count differed from a single detector's (%zu) or failed; starved: "
               "streams without a frame completed in the window (left out of the latency columns); with "
               "--profile, dev_busy: the window's frames' command times (profiling events) per second of the window "
               "(above 1: commands of several streams at once), launch/s: their kernel launches per second. "
               "Process start: %.1f MiB resident, %.1f MiB device.\n",
               opt.seconds, opt.rate > 0 ? "arrival" : "submission",
               opt.rate > 0 ? "the camera's" : "the stream's own at its measured rate",
               mem_what == "process" ? "the process's" : mem_what == "device" ? "the whole device's" : "no",
               expected, rss0, dev0);
  if (json) {
    std::fprintf (json, "\n]}\n");
    std::fclose (json);
  }
  return status;
}
