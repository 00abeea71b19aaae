// gpudetect-bench-track: device time of the masked-SAD template search
// (gst/detect/track, kernels/track.cl) for N templates of S x S pixels in
// A x A search areas of a frame, by OpenCL profiling events, medians over
// frames after a warm-up; beside it the same search as a plain C++ loop on
// every CPU core (the host reference's arithmetic), and a check that both
// found the same offsets and that every distance of every template is the
// reference's (with --cpu-frames 0, neither).
//
//   gpudetect-bench-track [--templates N] [--template S] [--area A | --radius R]
//                         [--frame WxH] [--frames F] [--warmup W] [--cpu-frames C]
//                         [--device SEL] [--work-group G] [--local-bytes B]
//                         [--variants V,V,...] [--pinned] [--format rgbx|nv12|i420]
//                         [--shared] [--sweep SIZES:RADII]
//
// --variants: search schedules to compare in one run on one context, each
// checked against the C++ loop: `default` (the engine's default for the
// device), Kx1 (rows: K offsets per work-item, one work-group per
// template; K 0 the device's default), tKxP (tiles: K offsets per
// work-item, P parts, 0 automatic), and an `n` after tKxP for the tiles'
// integer SAD where the device would take vabsdiff4 (NVIDIA).  The sweep's
// schedule column says `rows of N` where the tiles take the template's rows
// N at a time (in chunks: the whole template and its area rows do not fit
// the device's local memory).
// --pinned: the frame in page-locked memory (as gpudetect's upload pool gives
// it) instead of ordinary memory, for the upload's time.  --format: the frame
// as a decoder gives it (RGBx by default; NV12 and I420 are half the bytes of
// a 4-byte frame and a half), uploaded and converted on the device every
// frame.  --shared: the frame lies on the device already, as gpudetect
// leaves it when gputrack follows it on one device (docs/tracking.md): no
// upload, the conversion from its planes, the search, the readback.
// --sweep 8,16,32,64:8,16,32,64: every template size by every search radius,
// a table row for each variant (N templates), instead of one case.
#include "core/frame.h"
#include "track/reference.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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
                        "[--local-bytes B] [--variants V,...] [--pinned] [--format rgbx|nv12|i420] [--shared] "
                        "[--sweep SIZES:RADII]\n");
}

struct Variant {
  std::string name = "default";
  TemplateSearch::Config::Schedule schedule = TemplateSearch::Config::Schedule::Default;
  int offsets_per_item = 0, parts = -1, sad_ptx = -1;
};

static bool parse_list (const std::string &text, std::vector<std::string> *out) {
  out->clear ();
  size_t p = 0;
  while (p <= text.size ()) {
    size_t q = text.find (',', p);
    if (q == std::string::npos)
      q = text.size ();
    if (q == p)
      return false;
    out->push_back (text.substr (p, q - p));
    p = q + 1;
  }
  return !out->empty ();
}

static bool parse_variants (const std::string &text, std::vector<Variant> *out) {
  std::vector<std::string> items;
  if (!parse_list (text, &items))
    return false;
  out->clear ();
  for (const std::string &item : items) {
    Variant v;
    v.name = item;
    if (item != "default") {
      std::string s = item;
      if (s[0] == 't') {
        v.schedule = TemplateSearch::Config::Schedule::Tiles;
        s = s.substr (1);
        if (!s.empty () && s.back () == 'n') {
          v.sad_ptx = 0;
          s.pop_back ();
        }
      } else {
        v.schedule = TemplateSearch::Config::Schedule::Rows;
      }
      char rest = 0;
      if (std::sscanf (s.c_str (), "%dx%d%c", &v.offsets_per_item, &v.parts, &rest) != 2 || v.offsets_per_item < 0 ||
          v.offsets_per_item > 8 || v.parts < 0)
        return false;
    }
    out->push_back (v);
  }
  return true;
}

static bool parse_ints (const std::string &text, std::vector<int> *out) {
  std::vector<std::string> items;
  if (!parse_list (text, &items))
    return false;
  out->clear ();
  for (const std::string &s : items) {
    const int v = std::atoi (s.c_str ());
    if (v <= 0)
      return false;
    out->push_back (v);
  }
  return true;
}

enum class Format { Rgbx, Nv12, I420 };

static const char *format_name (Format f) { return f == Format::Nv12 ? "NV12" : f == Format::I420 ? "I420" : "RGBx"; }

// The textured RGBx frame in `format`: planes packed one after the other in
// `bytes` (rows packed, as gpudetect leaves them on the device), described
// by `cf` once the bytes lie where they stay.
struct FramePlanes {
  Format format = Format::Rgbx;
  int w = 0, h = 0;
  std::vector<uint8_t> bytes;
  size_t offset[3] = {};
  int stride[3] = {};
  int planes = 1;
  ColorFrame at (const uint8_t *base) const {
    ColorFrame cf;
    cf.format = format == Format::Nv12 ? ColorFormat::Nv12 : format == Format::I420 ? ColorFormat::I420 : ColorFormat::Rgbx;
    cf.width = w;
    cf.height = h;
    for (int i = 0; i < planes; i++) {
      cf.planes[i] = base + offset[i];
      cf.strides[i] = stride[i];
    }
    return cf;
  }
};

static FramePlanes make_planes (const std::vector<uint8_t> &rgbx, int w, int h, Format format) {
  FramePlanes f;
  f.format = format;
  f.w = w;
  f.h = h;
  if (format == Format::Rgbx) {
    f.bytes = rgbx;
    f.stride[0] = w * 4;
    return f;
  }
  const int cw = (w + 1) / 2, ch = (h + 1) / 2;
  f.planes = format == Format::Nv12 ? 2 : 3;
  f.stride[0] = w;
  f.stride[1] = format == Format::Nv12 ? 2 * cw : cw;
  f.stride[2] = format == Format::Nv12 ? 0 : cw;
  f.offset[1] = static_cast<size_t> (w) * h;
  f.offset[2] = f.offset[1] + static_cast<size_t> (cw) * ch;
  f.bytes.assign (static_cast<size_t> (w) * h + static_cast<size_t> (cw) * ch * 2, 0);
  uint8_t *Y = f.bytes.data (), *C = Y + f.offset[1];
  for (int y = 0; y < h; y++) // BT.601 limited range, as decoders give it
    for (int x = 0; x < w; x++) {
      const uint8_t *p = &rgbx[(static_cast<size_t> (y) * w + x) * 4];
      Y[static_cast<size_t> (y) * w + x] = static_cast<uint8_t> ((66 * p[0] + 129 * p[1] + 25 * p[2] + 128) / 256 + 16);
    }
  for (int y = 0; y < ch; y++)
    for (int x = 0; x < cw; x++) {
      const uint8_t *p = &rgbx[(static_cast<size_t> (2 * y) * w + 2 * x) * 4];
      const uint8_t U = static_cast<uint8_t> ((-38 * p[0] - 74 * p[1] + 112 * p[2] + 128 + 128 * 256) / 256);
      const uint8_t V = static_cast<uint8_t> ((112 * p[0] - 94 * p[1] - 18 * p[2] + 128 + 128 * 256) / 256);
      if (format == Format::Nv12) {
        C[static_cast<size_t> (y) * f.stride[1] + 2 * x] = U;
        C[static_cast<size_t> (y) * f.stride[1] + 2 * x + 1] = V;
      } else {
        C[static_cast<size_t> (y) * cw + x] = U;
        C[static_cast<size_t> (ch + y) * cw + x] = V;
      }
    }
  return f;
}

struct Options {
  int n = 100, fw = 1920, fh = 1080, frames = 100, warmup = 10, cpu_frames = 3;
  int work_group = 0;
  size_t local_bytes = 0;
  bool pinned = false, shared = false;
  Format format = Format::Rgbx;
  std::vector<Variant> variants{Variant ()};
};

// One variant's medians and its matches of the last frame.
struct Result {
  Variant v;
  int parts = 1, kx = 0, wg = 0, chunk = 0;
  bool tiles = false, ptx = false;
  double upload = 0, convert = 0, search = 0, readback = 0, host = 0;
  std::vector<Match> got;
  int equal_distances = 0; // templates whose every distance is the host reference's
  double end_to_end () const { return (upload + convert + search + readback) / 1000; }
};

struct CaseResult {
  std::vector<Result> variants;
  double cpu_ms = 0;
  unsigned threads = 0;
  bool all_same = true;
  std::vector<int> same;
};

// The frame and the objects, shared by every case of a run.
struct Scene {
  std::vector<uint8_t> rgbx;
  FramePlanes planes;
  std::unique_ptr<cl::HostBlock> pinned;
  const uint8_t *base = nullptr; // where the planes lie (page-locked or not)
  std::shared_ptr<DeviceFrame> device;
};

static bool run_case (cl::Device &dev, std::shared_ptr<cl::HostAllocator> &host_alloc, Scene &sc, const Geometry &g,
                      const Options &o, bool verbose, CaseResult *out) {
  const int n = o.n, fw = o.fw, fh = o.fh;
  const long positions = static_cast<long> (g.positions_w ()) * g.positions_h ();
  const ColorFrame cf = sc.planes.at (sc.base);
  std::mt19937 rng (7);
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
  // The host reference's distances of every template, to compare with each
  // variant's (untimed; the timed C++ loop comes after the variants).
  const bool check = o.cpu_frames > 0;
  std::vector<uint8_t> rgbx;
  std::vector<std::vector<uint8_t>> tmpl (n);
  std::vector<std::vector<uint32_t>> ref_d (n);
  std::vector<Match> ref (n);
  const unsigned threads = std::max (1u, std::thread::hardware_concurrency ());
  auto reference_search = [&] (bool keep) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; t++)
      pool.emplace_back ([&, t] () {
        std::vector<uint32_t> dmap;
        for (int i = static_cast<int> (t); i < n; i += static_cast<int> (threads)) {
          Grid gr = grid_for (predicted[i], g);
          gr.ox -= g.centre_x () * gr.sx;
          gr.oy -= g.centre_y () * gr.sy;
          reference::search (rgbx.data (), fw, fh, tmpl[i].data (), gr, g, keep ? &ref_d[i] : &dmap, &ref[i]);
        }
      });
    for (std::thread &th : pool)
      th.join ();
  };
  if (check) {
    rgbx = reference::convert (cf);
    const std::vector<uint8_t> mask = default_mask (g.template_w, g.template_h);
    for (int i = 0; i < n; i++)
      tmpl[i] = reference::extract (rgbx.data (), fw, fh, grid_for (boxes[i], g), g, mask);
    reference_search (true);
  }
  out->variants.clear ();
  for (const Variant &v : o.variants) {
    TemplateSearch::Config cfg;
    cfg.geometry = g;
    cfg.share = &dev;
    cfg.profile = true;
    cfg.work_group = o.work_group;
    cfg.local_bytes = o.local_bytes;
    cfg.schedule = v.schedule;
    cfg.offsets_per_item = v.offsets_per_item;
    cfg.parts = v.parts;
    cfg.sad_ptx = v.sad_ptx;
    std::string err;
    std::unique_ptr<TemplateSearch> ts;
    if (gpudetect::Error e_ = TemplateSearch::create (cfg, &ts))
      err = e_.message;
    if (!ts) {
      std::fprintf (stderr, "gpudetect-bench-track: variant %s: %s\n", v.name.c_str (), err.c_str ());
      return false;
    }
    if (verbose && out->variants.empty ())
      std::printf ("case: %d templates %dx%d, search areas %dx%d (%ld offsets each), frame %dx%d %s %s; "
                   "work-group %d, %d offset rows per band (rows schedule)\n",
                   n, g.template_w, g.template_h, g.search_w, g.search_h, positions, fw, fh,
                   format_name (o.format),
                   o.shared ? "on the device already (no upload)"
                            : o.pinned ? "in page-locked memory" : "in ordinary memory",
                   ts->work_group (), ts->band_rows ());
    auto frame_in = [&] () -> Error {
      if (sc.device)
        return ts->attach (0, sc.device);
      return ts->upload_async (0, cf);
    };
    Error e = frame_in ();
    if (!e)
      e = ts->wait_upload (0);
    if (!e)
      e = ts->update (slots, boxes);
    if (e) {
      std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
      return false;
    }
    std::vector<double> t_upload, t_convert, t_search, t_read, t_host;
    Result r;
    r.v = v;
    r.parts = ts->parts_for (n);
    r.kx = ts->offsets_per_item ();
    r.tiles = ts->schedule () == TemplateSearch::Config::Schedule::Tiles;
    r.ptx = ts->sad_ptx ();
    r.chunk = ts->template_chunk_rows () < g.template_h ? ts->template_chunk_rows () : 0;
    r.wg = r.tiles ? ts->tile_work_group (n) : ts->work_group ();
    for (int f = 0; f < o.warmup + o.frames; f++) {
      const auto t0 = std::chrono::steady_clock::now ();
      e = frame_in ();
      if (!e)
        e = ts->wait_upload (0);
      if (!e)
        e = ts->search (slots, predicted, &r.got);
      if (e) {
        std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
        return false;
      }
      const double host = std::chrono::duration<double, std::micro> (std::chrono::steady_clock::now () - t0).count ();
      if (f < o.warmup)
        continue;
      const Times t = ts->last_times ();
      t_upload.push_back (t.upload);
      t_convert.push_back (t.convert);
      t_search.push_back (t.search);
      t_read.push_back (t.readback);
      t_host.push_back (host);
    }
    if (check) // every distance of every template, bit for bit
      for (int i = 0; i < n; i++) {
        std::vector<uint32_t> d;
        e = ts->read_distances (i, &d);
        if (e) {
          std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
          return false;
        }
        r.equal_distances += d == ref_d[i];
      }
    r.upload = median (t_upload);
    r.convert = median (t_convert);
    r.search = median (t_search);
    r.readback = median (t_read);
    r.host = median (t_host);
    const double ms = r.search / 1000;
    if (verbose) {
      char chunks[64] = "";
      if (r.chunk)
        std::snprintf (chunks, sizeof chunks, ", template rows %d at a time", r.chunk);
      std::printf ("variant %s (%s, %d offsets per work-item, %d work-groups of %d per template%s%s): device, median "
                   "of %d frames after %d: upload %.1f us, convert %.1f us, search %.3f ms (%.2f us per template, "
                   "%.1f G pixel-differences/s), readback %.1f us; upload to readback %.3f ms; host frame %.3f ms\n",
                   v.name.c_str (), r.tiles ? "tiles" : "rows", r.kx, r.parts, r.wg,
                   r.tiles ? (r.ptx ? ", SAD by vabsdiff4" : ", SAD in integers") : "", chunks, o.frames, o.warmup, r.upload,
                   r.convert, ms, r.search / n,
                   static_cast<double> (n) * positions * g.template_w * g.template_h / (ms * 1e6), r.readback,
                   r.end_to_end (), r.host / 1000);
      std::fflush (stdout);
    }
    out->variants.push_back (std::move (r));
  }

  // The plain C++ loop on every core: the reference search of each template.
  out->all_same = true;
  out->same.assign (out->variants.size (), -1);
  if (check) {
    std::vector<double> t_cpu;
    for (int f = 0; f < o.cpu_frames; f++) {
      const auto t0 = std::chrono::steady_clock::now ();
      reference_search (false);
      t_cpu.push_back (std::chrono::duration<double, std::milli> (std::chrono::steady_clock::now () - t0).count ());
    }
    out->cpu_ms = median (t_cpu);
    out->threads = threads;
    for (size_t k = 0; k < out->variants.size (); k++) {
      const Result &r = out->variants[k];
      int same = 0;
      for (int i = 0; i < n; i++)
        same += ref[i].best == r.got[i].best && ref[i].best_x == r.got[i].best_x && ref[i].best_y == r.got[i].best_y &&
                ref[i].alt == r.got[i].alt && ref[i].alt_x == r.got[i].alt_x && ref[i].alt_y == r.got[i].alt_y;
      out->same[k] = std::min (same, r.equal_distances);
      if (verbose)
        std::printf ("cpu loop, %u threads, median of %d frames: %.3f ms (%.1fx variant %s's search); same best and "
                     "alternative for %d of %d templates, every distance the same for %d of %d\n",
                     threads, o.cpu_frames, out->cpu_ms, out->cpu_ms / (r.search / 1000), r.v.name.c_str (), same, n,
                     r.equal_distances, n);
      out->all_same = out->all_same && same == n && r.equal_distances == n;
    }
  }
  (void) host_alloc;
  return true;
}

int main (int argc, char **argv) {
  Options o;
  int size = 32, area = 0, radius = 32;
  std::string device, sweep;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto next = [&] () -> const char * {
      if (i + 1 >= argc) {
        usage ();
        std::exit (2);
      }
      return argv[++i];
    };
    if (a == "--templates") o.n = std::atoi (next ());
    else if (a == "--template") size = std::atoi (next ());
    else if (a == "--area") area = std::atoi (next ());
    else if (a == "--radius") radius = std::atoi (next ());
    else if (a == "--frame") {
      if (std::sscanf (next (), "%dx%d", &o.fw, &o.fh) != 2) {
        usage ();
        return 2;
      }
    } else if (a == "--frames") o.frames = std::atoi (next ());
    else if (a == "--warmup") o.warmup = std::atoi (next ());
    else if (a == "--cpu-frames") o.cpu_frames = std::atoi (next ());
    else if (a == "--device") device = next ();
    else if (a == "--work-group") o.work_group = std::atoi (next ());
    else if (a == "--local-bytes") o.local_bytes = std::strtoul (next (), nullptr, 10);
    else if (a == "--variants") {
      if (!parse_variants (next (), &o.variants)) {
        usage ();
        return 2;
      }
    } else if (a == "--pinned") o.pinned = true;
    else if (a == "--shared") o.shared = true;
    else if (a == "--format") {
      const std::string f = next ();
      if (f == "rgbx") o.format = Format::Rgbx;
      else if (f == "nv12") o.format = Format::Nv12;
      else if (f == "i420") o.format = Format::I420;
      else {
        usage ();
        return 2;
      }
    } else if (a == "--sweep") sweep = next ();
    else {
      usage ();
      return 2;
    }
  }
  if (o.n < 1 || o.fw < 1 || o.fh < 1 || o.frames < 1 || o.warmup < 0 || size < 1) {
    usage ();
    return 2;
  }

  // A textured frame (smoothed a little so that distances have structure).
  std::mt19937 rng (7);
  Scene sc;
  sc.rgbx.resize (static_cast<size_t> (o.fw) * o.fh * 4);
  for (size_t i = 0; i < sc.rgbx.size (); i++)
    sc.rgbx[i] = static_cast<uint8_t> ((i % 4 == 3) ? 255 : (rng () & 255));
  for (int y = 0; y < o.fh; y++)
    for (int x = 1; x < o.fw; x++)
      for (int c = 0; c < 3; c++) {
        uint8_t &p = sc.rgbx[(static_cast<size_t> (y) * o.fw + x) * 4 + c];
        p = static_cast<uint8_t> ((p + sc.rgbx[(static_cast<size_t> (y) * o.fw + x - 1) * 4 + c]) / 2);
      }
  sc.planes = make_planes (sc.rgbx, o.fw, o.fh, o.format);
  sc.base = sc.planes.bytes.data ();

  // one context for every variant (and the page-locked or device frame)
  cl::Device dev;
  if (Error e = cl::open_device (device, true, &dev)) {
    std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
    return 1;
  }
  std::printf ("device: %s\n", dev.info.describe ().c_str ());
  std::shared_ptr<cl::HostAllocator> host_alloc;
  if (o.pinned && !o.shared) {
    Error e = cl::HostAllocator::create (dev, &host_alloc);
    if (!e)
      e = host_alloc->alloc (sc.planes.bytes.size (), &sc.pinned);
    if (e) {
      std::fprintf (stderr, "gpudetect-bench-track: page-locked memory: %s\n", e.message.c_str ());
      return 1;
    }
    std::memcpy (sc.pinned->data (), sc.planes.bytes.data (), sc.planes.bytes.size ());
    sc.base = static_cast<const uint8_t *> (sc.pinned->data ());
  }
  if (o.shared) {
    // the frame's planes on the device, laid out as gpudetect leaves them
    auto df = std::make_shared<DeviceFrame> ();
    df->context = dev.context.get ();
    if (Error e = cl::make_buffer (dev, &df->mem, sc.planes.bytes.size (), CL_MEM_READ_WRITE,
                                       sc.planes.bytes.data ())) {
      std::fprintf (stderr, "gpudetect-bench-track: %s\n", e.message.c_str ());
      return 1;
    }
    df->format = o.format == Format::Rgbx ? PixelFormat::Rgbx : PixelFormat::Gray8;
    df->chroma = o.format == Format::Nv12 ? ChromaLayout::Nv12 : o.format == Format::I420 ? ChromaLayout::I420
                                                                                           : ChromaLayout::None;
    df->width = o.fw;
    df->height = o.fh;
    df->planes = sc.planes.planes;
    for (int i = 0; i < 3; i++) {
      df->offset[i] = sc.planes.offset[i];
      df->stride[i] = sc.planes.stride[i];
    }
    sc.device = df;
  }

  if (!sweep.empty ()) {
    // template sizes x search radii, one row each
    const size_t colon = sweep.find (':');
    std::vector<int> sizes, radii;
    if (colon == std::string::npos || !parse_ints (sweep.substr (0, colon), &sizes) ||
        !parse_ints (sweep.substr (colon + 1), &radii)) {
      usage ();
      return 2;
    }
    std::printf ("sweep: %d templates, frame %dx%d %s, device medians of %d frames after %d, C++ loop medians of %d\n",
                 o.n, o.fw, o.fh, format_name (o.format), o.frames, o.warmup, o.cpu_frames);
    std::printf ("| template | radius | area | offsets | variant | schedule | search, device | per template | "
                 "C++ loop | loop / device | same |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    bool all = true;
    for (int s : sizes)
      for (int r : radii)
        for (const Variant &v : o.variants) {
          const Geometry g = Geometry::square (s, r, std::max (2, s / 4));
          Options one = o;
          one.variants.assign (1, v);
          CaseResult cr;
          if (!run_case (dev, host_alloc, sc, g, one, false, &cr)) {
            // a schedule this geometry does not fit (the message above)
            std::printf ("| %dx%d | %d | %dx%d | %dx%d | %s | not available | | | | | |\n", s, s, r, g.search_w,
                         g.search_h, g.positions_w (), g.positions_h (), v.name.c_str ());
            continue;
          }
          const Result &res = cr.variants.front ();
          char sched[64];
          char chunks[32] = "";
          if (res.chunk)
            std::snprintf (chunks, sizeof chunks, ", rows of %d", res.chunk);
          std::snprintf (sched, sizeof sched, "%s %dx%d%s%s", res.tiles ? "tiles" : "rows", res.kx, res.parts,
                         res.tiles ? (res.ptx ? " vabsdiff4" : " integers") : "", chunks);
          std::printf ("| %dx%d | %d | %dx%d | %dx%d | %s | %s | %.3f ms | %.2f us | %.3f ms | %.1fx | %d of %d |\n", s,
                       s, r, g.search_w, g.search_h, g.positions_w (), g.positions_h (), v.name.c_str (), sched,
                       res.search / 1000, res.search / o.n, cr.cpu_ms,
                       res.search > 0 ? cr.cpu_ms / (res.search / 1000) : 0.0, cr.same.front (), o.n);
          std::fflush (stdout);
          all = all && cr.all_same;
        }
    return all ? 0 : 1;
  }

  const Geometry g = area > 0 ? Geometry{size, size, area, area, std::max (2, size / 4)}
                              : Geometry::square (size, radius, std::max (2, size / 4));
  CaseResult cr;
  if (!run_case (dev, host_alloc, sc, g, o, true, &cr))
    return 1;
  if (cr.variants.size () > 1) {
    std::printf ("variants, search and %s, medians:\n", o.shared ? "conversion to readback" : "upload to readback");
    for (const Result &r : cr.variants)
      std::printf ("  %s: search %.3f ms (%.2fx 1st), %s %.3f ms\n", r.v.name.c_str (), r.search / 1000,
                   cr.variants.front ().search / r.search, o.shared ? "conversion to readback" : "upload to readback",
                   r.end_to_end ());
  }
  return cr.all_same ? 0 : 1;
}
