// The device memory budget (cl/budget.h, DetectorConfig::max_device_memory):
// the accounting scope on its own and around real buffers, a detector that
// refuses a frame size past its budget promptly with a message that says how
// much, the limit and what makes it grow (cv::dpm's person model and a model
// at the parser's caps, a cascade, the model's constants alone), and stays
// usable for frames that fit; detectors of many streams on one device, each
// within its budget, refused past the device's room together; and the
// default budget, which lets every family's shipped models detect on a
// 1080p frame.
//
//   test-memory-budget [--measure]   (--measure: print what each shipped
//                                     model holds at 720p, 1080p and 4K)
#include "check.h"
#include "cl/budget.h"
#include "detector.h"
#include "families/dpm/model.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace gpudetect;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

double seconds_since (std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double> (std::chrono::steady_clock::now () - t0).count ();
}

bool has (const std::string &s, const char *part) { return s.find (part) != std::string::npos; }

std::unique_ptr<Detector> make (const std::string &model, uint64_t budget, Error *err = nullptr,
                                const std::string &tuning = {}) {
  DetectorConfig c;
  c.model = model;
  c.max_device_memory = budget;
  c.tuning = tuning;
  std::unique_ptr<Detector> d;
  Error e = Detector::create (c, &d);
  if (err)
    *err = e;
  else
    CHECK_MSG (!e, "%s: %s", model.c_str (), e.message.c_str ());
  return d;
}

// A cv::dpm model at every cap of its parser (families/dpm/model.h): the
// smallest cells, the most levels an octave, the widest padding, the most
// components and parts, every filter 1 x 1 cell (a 75 KB file).
std::string capped_dpm () {
  const int nc = kDpmMaxComponents, per = kDpmMaxTotalParts / kDpmMaxComponents;
  std::string zeros;
  for (int i = 0; i < kDpmDims; i++)
    zeros += "0.01 ";
  const std::string filter = "<_ type_id=\"opencv-matrix\"><rows>1</rows><cols>32</cols><dt>d</dt><data>" + zeros +
                             "</data></_>";
  std::string s = "<?xml version=\"1.0\"?>\n<opencv_storage>\n<SBin>" + std::to_string (kDpmMinSbin) +
                  "</SBin>\n<Interval>" + std::to_string (kDpmMaxInterval) + "</Interval>\n<MaxSizeX>" +
                  std::to_string (kDpmMaxPad) + "</MaxSizeX>\n<MaxSizeY>" + std::to_string (kDpmMaxPad) +
                  "</MaxSizeY>\n<NumComponents>" + std::to_string (nc) +
                  "</NumComponents>\n<NumFeatures>32</NumFeatures>\n<ScoreThreshold>0</ScoreThreshold>\n<Bias>";
  for (int c = 0; c < nc; c++)
    s += "0 ";
  s += "</Bias>\n<NumParts>";
  for (int c = 0; c < nc; c++)
    s += std::to_string (per) + " ";
  s += "</NumParts>\n<RootFilters>";
  for (int c = 0; c < nc; c++)
    s += filter;
  s += "</RootFilters>\n<PartFilters>";
  for (int p = 0; p < nc * per; p++)
    s += filter + "\n";
  s += "</PartFilters>\n<Anchor>";
  for (int p = 0; p < nc * per; p++)
    s += "<_>1 1</_>";
  s += "</Anchor>\n<Deformation>";
  for (int p = 0; p < nc * per; p++)
    s += "<_>0.1 0 0.1 0</_>";
  s += "</Deformation>\n<LocationWeight>";
  for (int c = 0; c < nc; c++)
    s += "<_>0 0 0</_>";
  return s + "</LocationWeight>\n</opencv_storage>\n";
}

// A grey frame with some texture (the families' kernels see edges).
std::vector<uint8_t> frame_pixels (int w, int h) {
  std::vector<uint8_t> px (static_cast<size_t> (w) * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      px[static_cast<size_t> (y) * w + x] = static_cast<uint8_t> (((x / 37 + y / 29) % 2) * 160 + (x * 7 + y * 3) % 64);
  return px;
}

// The scope on its own: charges, reservations, checks, the largest
// allocation, nesting.
void test_scope () {
  cl::DeviceInfo info;
  info.name = "a device";
  info.global_mem = 64 * MiB;
  info.max_alloc = MiB;
  CHECK (cl::default_memory_budget (info) == 32 * MiB);
  CHECK (cl::AllocationBudget::active () == nullptr);
  {
    cl::AllocationBudget b (info, 4 * MiB, 256 * KiB);
    CHECK (cl::AllocationBudget::active () == &b);
    CHECK (!b.charge (512 * KiB) && b.used () == 768 * KiB);
    Error e = b.charge (2 * MiB); // past the largest allocation, within the limit
    CHECK_MSG (e && e.kind == Error::Kind::Resource && b.too_large () == 2 * MiB && b.used () == 768 * KiB &&
                   has (e.message, "larger than the largest a device allocates (1.00 MiB)"),
               "%s", e.message.c_str ());
    CHECK (!b.reserve (3 * MiB) && b.used () == 3 * MiB + 768 * KiB);
    e = b.check (512 * KiB);
    CHECK_MSG (e && e.kind == Error::Kind::Resource && b.needed () == 4 * MiB + 256 * KiB &&
                   b.used () == 3 * MiB + 768 * KiB && has (e.message, "over the limit of 4.00 MiB (4194304 bytes)"),
               "%s", e.message.c_str ());
    CHECK (!b.check (256 * KiB) && b.remaining () == 256 * KiB);
    {
      cl::AllocationBudget inner (info, 0); // no limit: only the largest allocation
      CHECK (cl::AllocationBudget::active () == &inner);
      CHECK (!inner.charge (MiB) && !inner.reserve (100 * GiB) && inner.charge (MiB + 1));
    }
    CHECK (cl::AllocationBudget::active () == &b);
  }
  CHECK (cl::AllocationBudget::active () == nullptr);
  CHECK (cl::size_text (1000) == "1000 bytes" && cl::size_text (1536) == "1.50 KiB" &&
         cl::size_text (300 * MiB) == "300.0 MiB" && cl::size_text (8 * GiB + GiB / 2) == "8.50 GiB");
}

// cl::make_buffer and make_buffers on the device: a buffer past the largest
// allocation or the scope's limit is refused before the driver is asked, and
// a refused batch makes none of its buffers.
void test_buffers (const cl::Device &shared) {
  cl::Device dev;
  if (Error e = cl::attach_device (shared, false, &dev)) {
    CHECK_MSG (false, "%s", e.message.c_str ());
    return;
  }
  dev.info.max_alloc = MiB; // as a device that allocates at most 1 MiB at once
  cl::Mem m;
  Error e = cl::make_buffer (dev, &m, 2 * MiB);
  CHECK_MSG (e && e.kind == Error::Kind::Resource && !m && has (e.message, "larger than the largest"), "%s",
             e.message.c_str ());
  CHECK (!cl::make_buffer (dev, &m, MiB) && m);
  cl::Mem a, b, c;
  {
    cl::AllocationBudget budget (dev.info, 2 * MiB);
    CHECK (!cl::make_buffers (dev, {{&a, 512 * KiB}, {&b, 512 * KiB}}) && a && b && budget.used () == MiB);
    e = cl::make_buffers (dev, {{&c, 512 * KiB}, {&m, 768 * KiB}});
    CHECK_MSG (e && e.kind == Error::Kind::Resource && !c && m && budget.needed () == 2 * MiB + 256 * KiB &&
                   budget.used () == MiB,
               "%s", e.message.c_str ());
    CHECK (!cl::make_buffer (dev, &c, MiB) && budget.used () == 2 * MiB && budget.remaining () == 0);
    CHECK (cl::make_buffer (dev, &c, 16)); // nothing left
  }
}

// A detector past its budget: refused before allocating, with the numbers and
// what drives them; still usable for frames within it.
void test_detector_refuses (const std::string &capped_path) {
  const auto grey = frame_pixels (320, 240);
  const Frame small{grey.data (), 320, 240, 320, PixelFormat::Gray8};

  // cv::dpm's person model on a 1080p frame with 64 MiB.
  if (auto d = make ("dpm-inriaperson", 64 * MiB)) {
    const auto t0 = std::chrono::steady_clock::now ();
    Error e = d->prepare (1920, 1080, PixelFormat::Gray8);
    const double s = seconds_since (t0);
    std::printf ("dpm-inriaperson, 1920x1080, 64 MiB: refused in %.3f s: %s\n", s, e.message.c_str ());
    CHECK_MSG (e && e.kind == Error::Kind::Resource, "%s", e.message.c_str ());
    CHECK_MSG (has (e.message, "not enough device memory for the dpm model inriaperson.xml on 1920x1080 frames") &&
                   has (e.message, "it needs at least") &&
                   has (e.message, "over the limit of 64.0 MiB (max-device-memory)") &&
                   has (e.message, "Interval 5 (levels an octave)") && has (e.message, "2 components, 16 parts"),
               "%s", e.message.c_str ());
    CHECK_MSG (s < 2, "%.3f s", s);
    CHECK (d->device_memory () < MiB);
    // the same detector on a frame that fits
    FrameResult r;
    e = d->detect (small, &r);
    CHECK_MSG (!e, "%s", e.message.c_str ());
    std::printf ("  then 320x240: %s, %.1f MiB held\n", e ? e.message.c_str () : "detected",
                 d->device_memory () / double (MiB));
    CHECK (d->device_memory () > MiB && d->device_memory () <= 64 * MiB);
    // and the larger frame again, through submit()
    int ticket = -1;
    const auto big = frame_pixels (1920, 1080);
    e = d->submit ({big.data (), 1920, 1080, 1920, PixelFormat::Gray8}, &ticket);
    CHECK_MSG (e && e.kind == Error::Kind::Resource && ticket < 0, "%s", e.message.c_str ());
    CHECK (!d->detect (small, &r));
  }

  // A model at every cap of the parser: refused on a 640x480 frame under 64
  // MiB, naming the model's values.
  if (auto d = make (capped_path, 64 * MiB)) {
    const auto t0 = std::chrono::steady_clock::now ();
    Error e = d->prepare (640, 480, PixelFormat::Gray8);
    const double s = seconds_since (t0);
    std::printf ("capped dpm, 640x480, 64 MiB: refused in %.3f s: %s\n", s, e.message.c_str ());
    CHECK_MSG (e && e.kind == Error::Kind::Resource && has (e.message, "over the limit of 64.0 MiB") &&
                   has (e.message, "SBin 4") && has (e.message, "Interval 20") &&
                   has (e.message, "padding MaxSizeX x MaxSizeY 32x32 cells") &&
                   has (e.message, "16 components, 128 parts"),
               "%s", e.message.c_str ());
    CHECK_MSG (s < 2, "%.3f s", s);
  }

  // A cascade on an 8192x8192 frame with 16 MiB.
  if (auto d = make ("lbp-frontalface-improved", 16 * MiB)) {
    const auto t0 = std::chrono::steady_clock::now ();
    Error e = d->prepare (8192, 8192, PixelFormat::Gray8);
    const double s = seconds_since (t0);
    std::printf ("lbp-frontalface-improved, 8192x8192, 16 MiB: refused in %.3f s: %s\n", s, e.message.c_str ());
    CHECK_MSG (e && e.kind == Error::Kind::Resource && has (e.message, "cascade model") &&
                   has (e.message, "on 8192x8192 frames") && has (e.message, "over the limit of 16.0 MiB") &&
                   has (e.message, "scale-factor"),
               "%s", e.message.c_str ());
    CHECK_MSG (s < 2, "%.3f s", s);
    FrameResult r;
    CHECK (!d->detect (small, &r));
  }

  // The model's constants alone past the budget: create() refuses.
  Error e;
  auto d = make ("dpm-inriaperson", 16 * KiB, &e);
  CHECK_MSG (!d && e.kind == Error::Kind::Resource && has (e.message, "dpm model inriaperson.xml: it needs at least") &&
                 has (e.message, "over the limit of 16.0 KiB (max-device-memory)"),
             "%s", e.message.c_str ());
  std::printf ("dpm-inriaperson, 16 KiB: %s\n", e.message.c_str ());
}

// The models the project ships or makes at build time, and one OpenCV
// cascade of each kind (LBP; Haar stumps; Haar trees with tilted features):
// a cascade's memory depends on its kind, not on its stages.
std::vector<std::string> shipped_models () {
  std::vector<std::string> m = {"lbp-frontalface-improved", "haar-frontalface-default",   "haar-upperbody",
                                "waldboost-frontalface",    "waldboost-frontalface-fast", "forest-frontalface",
                                "forest-frontalface-accurate", "dpm-inriaperson"};
  for (const char *built : {"dlib-frontalface", "hog-people"})
    if (!resolve_model (built).empty ())
      m.push_back (built);
  return m;
}

// The default budget lets every shipped model detect on a 1080p frame (on
// PoCL's CPU schedule; the GPU schedule's lists and FFT evaluation hold more:
// prepared), and what each holds is within half of a 4 GiB device.
void test_default_budget (const std::vector<std::string> &models, bool measure) {
  const auto px = frame_pixels (1920, 1080);
  const Frame frame{px.data (), 1920, 1080, 1920, PixelFormat::Gray8};
  for (const std::string &model : models)
    for (const char *tuning : {"schedule=cpu", "schedule=gpu"}) {
      auto d = make (model, 0, nullptr, tuning);
      if (!d)
        continue;
      CHECK (d->device_memory_limit () == cl::default_memory_budget (d->device ()));
      const auto t0 = std::chrono::steady_clock::now ();
      FrameResult r;
      const bool run = std::strcmp (tuning, "schedule=cpu") == 0;
      Error e = run ? d->detect (frame, &r) : d->prepare (1920, 1080, PixelFormat::Gray8);
      CHECK_MSG (!e, "%s (%s): %s", model.c_str (), tuning, e.message.c_str ());
      std::printf ("%-28s %-12s 1920x1080: %7.1f MiB held (limit %.0f MiB), %s in %.2f s\n", model.c_str (), tuning,
                   d->device_memory () / double (MiB), d->device_memory_limit () / double (MiB),
                   run ? "detected" : "prepared", seconds_since (t0));
      CHECK_MSG (d->device_memory () <= 2 * GiB, "%s (%s): %llu bytes", model.c_str (), tuning,
                 (unsigned long long) d->device_memory ());
      if (measure)
        for (const auto &[w, h] : {std::pair<int, int> {1280, 720}, {3840, 2160}}) {
          e = d->prepare (w, h, PixelFormat::Gray8);
          if (e)
            std::printf ("%-28s %-12s %dx%d: %s\n", model.c_str (), tuning, w, h, e.message.c_str ());
          else
            std::printf ("%-28s %-12s %dx%d: %7.1f MiB\n", model.c_str (), tuning, w, h,
                         d->device_memory () / double (MiB));
        }
    }
}

} // namespace

// Many streams on one device: detectors each within their own budget, whose
// sum would pass the device's room (7/8 of its memory), are refused past it
// with a message that names the other engines' share; a stream that ends
// leaves its room to the next.  The device is the test's own context whose
// memory it says is small (a smaller device), so that a few detectors at a
// modest frame size fill it.
void test_device_share () {
  const int W = 640, H = 480;
  uint64_t one = 0;
  {
    std::unique_ptr<Detector> probe = make ("lbp-frontalface-improved", 0);
    CHECK (probe && !probe->prepare (W, H, PixelFormat::Gray8));
    one = probe ? probe->device_memory () : 0;
  }
  CHECK (one > 0);
  cl::Device small;
  if (Error e = cl::open_device ("", false, &small)) {
    CHECK_MSG (false, "%s", e.message.c_str ());
    return;
  }
  // room for two such detectors and a half: 7/8 of the memory
  small.info.global_mem = (one * 5 / 2) / 7 * 8 + 8;
  auto make_on = [&] (Error *err) {
    DetectorConfig c;
    c.model = "lbp-frontalface-improved";
    c.share = &small;
    c.max_device_memory = one * 2; // each alone would fit
    std::unique_ptr<Detector> d;
    *err = Detector::create (c, &d);
    if (!*err)
      *err = d->prepare (W, H, PixelFormat::Gray8);
    return d;
  };
  Error e1, e2, e3, e4;
  std::unique_ptr<Detector> a = make_on (&e1), b = make_on (&e2);
  CHECK_MSG (!e1 && !e2, "%s %s", e1.message.c_str (), e2.message.c_str ());
  std::unique_ptr<Detector> c = make_on (&e3);
  CHECK_MSG (e3.kind == Error::Kind::Resource && has (e3.message, "other engines of this process") &&
                 has (e3.message, "2 other engines"),
             "third stream: %s", e3.message.c_str ());
  std::printf ("a third stream on a device with room for two and a half: %s\n", e3.message.c_str ());
  a.reset (); // one stream ends
  std::unique_ptr<Detector> d = make_on (&e4);
  CHECK_MSG (!e4, "after one ended: %s", e4.message.c_str ());
}

int main (int argc, char **argv) {
  const bool measure = argc > 1 && std::strcmp (argv[1], "--measure") == 0;
  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ()); // a device is required here
    return 1;
  }
  std::printf ("%s: %s of global memory, largest allocation %s; default budget %s\n", dev.info.name.c_str (),
               cl::size_text (dev.info.global_mem).c_str (), cl::size_text (dev.info.max_alloc).c_str (),
               cl::size_text (cl::default_memory_budget (dev.info)).c_str ());
  test_scope ();
  test_buffers (dev);

  char dir[] = "/tmp/gpudetect-budget-XXXXXX";
  if (!mkdtemp (dir)) {
    std::fprintf (stderr, "cannot make a temporary folder\n");
    return 1;
  }
  const std::string capped = std::string (dir) + "/capped-dpm.xml";
  std::ofstream (capped) << capped_dpm ();
  test_detector_refuses (capped);
  std::remove (capped.c_str ());
  rmdir (dir);

  test_device_share ();
  test_default_budget (shipped_models (), measure);
  return finish ();
}
