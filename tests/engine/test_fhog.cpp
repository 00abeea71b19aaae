// FHOG on the device against dlib's own (the oracle, a test dependency only):
// on every image, for the plain features (no padding) and for the padding of
// dlib's frontal face scanner (10 x 10 cells), every pyramid level's pixels
// and every feature of every level must equal
// - the host reference (families/hogfilter/fhog.h), bit for bit;
// - dlib's create_fhog_pyramid<pyramid_down<6>> (pyramid_down<6> images,
//   extract_fhog_features), bit for bit (the images given, and noise images of
//   edge sizes made here: 1x1 to 100x30, fewer than 3 cells, cells past the
//   image's edge): both compute the same float
//   operations in the same order (dlib's SSE2 lanes included), so the test
//   accepts no tolerance and reports the largest difference where one fails.
//
//   test-fhog IMAGE.pgm...
#include "check.h"
#include "launcher.h"
#include "pgm.h"

#include "families/hogfilter/fhog.h"

#include <dlib/array.h>
#include <dlib/array2d.h>
#include <dlib/image_processing/scan_fhog_pyramid.h>
#include <dlib/image_transforms.h>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace gpudetect;

namespace {

struct Diff {
  size_t values = 0, differ = 0;
  double max_abs = 0;
  void add (double a, double b) {
    values++;
    if (a != b) {
      differ++;
      max_abs = std::max (max_abs, std::fabs (a - b));
    }
  }
};

} // namespace

int main (int argc, char **argv) {
  std::vector<std::string> images (argv + 1, argv + argc);
  CHECK_MSG (!images.empty (), "no images given");
  cl::Device dev;
  if (Error e = cl::open_device ("", false, &dev)) {
    std::fprintf (stderr, "no OpenCL device: %s\n", e.message.c_str ());
    return 1;
  }
  std::printf ("device: %s\n", dev.info.describe ().c_str ());
  for (int pad : {1, 10}) {
    FhogParams p;
    p.pad_rows = p.pad_cols = pad;
    cl::Program prog;
    ProgramSpec spec;
    FhogDevice::add_sources (&spec);
    if (Error e = cl::build_program (dev, spec.source, spec.hash,
                                         "-cl-std=CL1.2 " + FhogDevice::options (dev, p, 1), &prog)) {
      std::fprintf (stderr, "build: %s\n", e.message.c_str ());
      return 1;
    }
    // the per-pixel gradients (GPU schedule) without padding, the per-row
    // ones (CPU schedule) with it
    FhogDevice fd;
    CHECK (!fd.setup (prog, pad > 1));
    Diff pix_ref, pix_dlib, feat_ref, feat_dlib;
    int levels = 0;
    std::vector<std::string> all = images;
    for (const char *size : {"1x1", "8x8", "20x17", "63x63", "64x64", "80x80", "100x30", "30x300", "97x113"})
      all.push_back (std::string ("noise:") + size);
    for (const std::string &path : all) {
      Grey g;
      if (path.rfind ("noise:", 0) == 0) {
        std::sscanf (path.c_str () + 6, "%dx%d", &g.cols, &g.rows);
        uint32_t r = 12345;
        for (int i = 0; i < g.cols * g.rows; i++) {
          r = r * 1664525u + 1013904223u;
          g.px.push_back (static_cast<uint8_t> (r >> 24));
        }
      } else if (!read_pgm (path, &g)) {
        CHECK_MSG (false, "cannot read %s", path.c_str ());
        continue;
      }
      const FhogPlan plan = plan_fhog (g.cols, g.rows, p);
      // the device
      const FrameLayout layout{PixelFormat::Gray8, g.cols, g.rows};
      if (Error e = fd.geometry (dev, plan, layout)) {
        CHECK_MSG (false, "geometry: %s", e.message.c_str ());
        continue;
      }
      cl::Mem src, cand;
      CHECK (!cl::make_buffer (dev, &src, g.px.size (), CL_MEM_READ_ONLY, g.px.data ()));
      CHECK (!cl::make_buffer (dev, &cand, 64));
      QueueLauncher launcher (dev.queue.get ());
      CHECK (!fd.enqueue (src, cand, 0, 1, launcher));
      std::vector<uint8_t> dpix (std::max<size_t> (plan.pixels, 1));
      std::vector<float> dfeat (std::max<size_t> (plan.feat_plane * kFhogDims, 1));
      CHECK (clEnqueueReadBuffer (dev.queue.get (), fd.pixels ().get (), CL_TRUE, 0, plan.pixels, dpix.data (), 0,
                                  nullptr, nullptr) == CL_SUCCESS);
      CHECK (clEnqueueReadBuffer (dev.queue.get (), fd.features ().get (), CL_TRUE, 0,
                                  plan.feat_plane * kFhogDims * sizeof (float), dfeat.data (), 0, nullptr,
                                  nullptr) == CL_SUCCESS);
      // dlib
      dlib::array2d<unsigned char> img (g.rows, g.cols);
      for (int y = 0; y < g.rows; y++)
        std::memcpy (&img[y][0], &g.px[static_cast<size_t> (y) * g.cols], g.cols);
      dlib::array<dlib::array<dlib::array2d<float>>> feats;
      dlib::impl::create_fhog_pyramid<dlib::pyramid_down<6>> (img, dlib::default_fhog_feature_extractor (), feats, 8,
                                                              pad, pad, 64, 64, 1000);
      CHECK_MSG (feats.size () == plan.levels.size (), "%s: dlib %zu levels, plan %zu", path.c_str (),
                 static_cast<size_t> (feats.size ()), plan.levels.size ());
      {
        // the pyramid's level 0 is extract_fhog_features of the image itself
        dlib::array<dlib::array2d<float>> direct;
        dlib::extract_fhog_features (img, direct, 8, pad, pad);
        bool same = feats.size () > 0 && direct.size () == feats[0].size ();
        for (size_t k = 0; same && k < direct.size (); k++)
          same = direct[k].nr () == feats[0][k].nr () && direct[k].nc () == feats[0][k].nc () &&
                 (direct[k].size () == 0 ||
                  std::memcmp (&direct[k][0][0], &feats[0][k][0][0], direct[k].size () * sizeof (float)) == 0);
        CHECK_MSG (same, "%s: extract_fhog_features differs from the pyramid's level 0", path.c_str ());
      }
      dlib::pyramid_down<6> pyr;
      dlib::array2d<unsigned char> level, next;
      dlib::assign_image (level, img);
      std::vector<uint8_t> ref = g.px;
      for (size_t li = 0; li < plan.levels.size () && li < feats.size (); li++) {
        const FhogLevel &l = plan.levels[li];
        if (li > 0) {
          pyr (level, next);
          dlib::swap (level, next);
          ref = fhog_down (plan.levels[li - 1], ref, l);
        }
        CHECK_MSG (level.nr () == l.height && level.nc () == l.width, "%s level %zu: dlib %ldx%ld, plan %dx%d",
                   path.c_str (), li, level.nc (), level.nr (), l.width, l.height);
        if (level.nr () != l.height || level.nc () != l.width)
          break;
        for (int y = 0; y < l.height; y++)
          for (int x = 0; x < l.width; x++) {
            const size_t i = static_cast<size_t> (y) * l.width + x;
            pix_ref.add (dpix[l.pixel_offset + i], ref[i]);
            pix_dlib.add (dpix[l.pixel_offset + i], level[y][x]);
          }
        levels++;
        const std::vector<float> rc = fhog_cells (l, ref, p.cell);
        const std::vector<float> rf = l.feat_rows ? fhog_features (l, rc, p) : std::vector<float> ();
        const dlib::array<dlib::array2d<float>> &df = feats[li];
        const long fr = df.size () ? df[0].nr () : 0, fc = df.size () ? df[0].nc () : 0;
        CHECK_MSG (fr == l.feat_rows && fc == l.feat_cols, "%s level %zu: dlib features %ldx%ld, plan %dx%d",
                   path.c_str (), li, fc, fr, l.feat_cols, l.feat_rows);
        if (fr != l.feat_rows || fc != l.feat_cols)
          continue;
        const size_t plane = static_cast<size_t> (fr) * fc;
        for (int d = 0; d < kFhogDims; d++)
          for (long y = 0; y < fr; y++)
            for (long x = 0; x < fc; x++) {
              const size_t i = static_cast<size_t> (y) * fc + x;
              const float dv = dfeat[d * plan.feat_plane + l.feat_offset + i];
              feat_ref.add (dv, rf[d * plane + i]);
              feat_dlib.add (dv, df[d][y][x]);
            }
      }
    }
    std::printf ("padding %d: %d levels; pixels %zu, differing from the reference %zu, from dlib %zu; features %zu, "
                 "differing from the reference %zu (max %g), from dlib %zu (max %g)\n",
                 pad, levels, pix_ref.values, pix_ref.differ, pix_dlib.differ, feat_ref.values, feat_ref.differ,
                 feat_ref.max_abs, feat_dlib.differ, feat_dlib.max_abs);
    CHECK (levels > 0 && feat_ref.values > 0);
    CHECK (pix_ref.differ == 0);
    CHECK (pix_dlib.differ == 0);
    CHECK (feat_ref.differ == 0);
    CHECK (feat_dlib.differ == 0);
  }
  return finish ();
}
