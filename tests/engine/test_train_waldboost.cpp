// gpudetect-train-waldboost on synthetic data: it learns a pattern (a bright
// oval with two dark eyes and a dark mouth) from labelled images and
// face-free images of textured backgrounds; the model it writes reads back,
// the engine finds the pattern in images the training never saw and nothing
// in pattern-free ones; the same seed gives the same file with 1 and 2
// threads.
//
//   test-train-waldboost TRAINER
#include "check.h"
#include "dataset.h"
#include "detector.h"
#include "families/waldboost/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace gpudetect;
using namespace gpudetect::train;

namespace {

// Smooth random texture: a few random gradients and blobs.
Image background (int w, int h, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u (0, 1);
  Image img;
  img.width = w;
  img.height = h;
  img.px.resize (static_cast<size_t> (w) * h);
  const double gx = u (rng) * 2 - 1, gy = u (rng) * 2 - 1, base = 60 + 100 * u (rng);
  struct Blob {
    double x, y, r, a;
  };
  std::vector<Blob> blobs;
  for (int i = 0; i < 12; i++)
    blobs.push_back ({u (rng) * w, u (rng) * h, 4 + u (rng) * 30, (u (rng) * 2 - 1) * 60});
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double v = base + gx * x * 0.3 + gy * y * 0.3 + (u (rng) - 0.5) * 16;
      for (const Blob &b : blobs) {
        const double d2 = ((x - b.x) * (x - b.x) + (y - b.y) * (y - b.y)) / (b.r * b.r);
        v += b.a * std::exp (-d2);
      }
      img.px[static_cast<size_t> (y) * w + x] = static_cast<uint8_t> (std::clamp (v, 0.0, 255.0));
    }
  return img;
}

// Draws the pattern in the square (x, y, s).
void draw_face (Image *img, double x, double y, double s, double light) {
  for (int py = static_cast<int> (y); py < static_cast<int> (y + s); py++)
    for (int px = static_cast<int> (x); px < static_cast<int> (x + s); px++) {
      if (px < 0 || py < 0 || px >= img->width || py >= img->height)
        continue;
      const double u = (px + 0.5 - x) / s - 0.5, v = (py + 0.5 - y) / s - 0.5; // [-0.5, 0.5]
      if (u * u / 0.16 + v * v / 0.22 > 1)
        continue;
      double val = light;
      const double ex = std::fabs (u) - 0.17, ey = v + 0.1;
      if (ex * ex + ey * ey < 0.07 * 0.07)
        val = light * 0.25;
      if (std::fabs (u) < 0.16 && std::fabs (v - 0.22) < 0.04)
        val = light * 0.35;
      if (std::fabs (u) < 0.04 && v > -0.05 && v < 0.12)
        val = light * 0.8;
      img->px[static_cast<size_t> (py) * img->width + px] = static_cast<uint8_t> (std::clamp (val, 0.0, 255.0));
    }
}

struct Scene {
  Image img;
  std::vector<Box> faces;
};

Scene scene (std::mt19937_64 &rng, int n_faces) {
  std::uniform_real_distribution<double> u (0, 1);
  Scene s{background (200, 160, rng), {}};
  for (int i = 0; i < n_faces; i++) {
    for (int tries = 0; tries < 50; tries++) {
      const double side = 26 + u (rng) * 50, x = u (rng) * (200 - side), y = u (rng) * (160 - side);
      bool free = true;
      for (const Box &b : s.faces)
        free = free && (x + side < b.x || b.x + b.w < x || y + side < b.y || b.y + b.h < y);
      if (!free)
        continue;
      draw_face (&s.img, x, y, side, 170 + u (rng) * 80);
      s.faces.push_back ({x, y, side, side});
      break;
    }
  }
  return s;
}

std::string write_data (const std::string &dir, uint64_t seed) {
  std::mt19937_64 rng (seed);
  if (std::system (("mkdir -p '" + dir + "/images'").c_str ()) != 0)
    return "mkdir";
  std::ofstream faces (dir + "/faces-train.txt"), negs (dir + "/negatives-train.txt");
  for (int i = 0; i < 40; i++) {
    Scene s = scene (rng, 2);
    const std::string name = "images/f" + std::to_string (i) + ".pgm";
    if (std::string e = write_pgm (dir + "/" + name, s.img); !e.empty ())
      return e;
    faces << name << "\t";
    for (size_t k = 0; k < s.faces.size (); k++)
      faces << (k ? " " : "") << s.faces[k].x << "," << s.faces[k].y << "," << s.faces[k].w << ","
            << s.faces[k].h;
    faces << "\t\n";
  }
  for (int i = 0; i < 20; i++) {
    const std::string name = "images/n" + std::to_string (i) + ".pgm";
    if (std::string e = write_pgm (dir + "/" + name, background (320, 240, rng)); !e.empty ())
      return e;
    negs << name << "\n";
  }
  return {};
}

std::string slurp (const std::string &path) {
  std::ifstream f (path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf ();
  return s.str ();
}

} // namespace

int main (int argc, char **argv) {
  if (argc != 2) {
    std::fprintf (stderr, "usage: test-train-waldboost TRAINER\n");
    return 2;
  }
  char tmpl[] = "/tmp/gpudetect-train-XXXXXX";
  const char *dir = mkdtemp (tmpl);
  CHECK (dir != nullptr);
  if (!dir)
    return finish ();
  const std::string d = dir;
  const std::string e = write_data (d, 7);
  CHECK_MSG (e.empty (), "%s", e.c_str ());

  std::string common = std::string (argv[1]) + " --data " + d +
                       " --stages 48 --negatives 1500 --positives-per-face 6 --max-block 4 --mine-windows 2e7 --seed 3";
  CHECK (std::system ((common + " --threads 1 --out " + d + "/m1.xml > " + d + "/log1.txt").c_str ()) == 0);
  CHECK (std::system ((common + " --threads 2 --out " + d + "/m2.xml > " + d + "/log2.txt").c_str ()) == 0);
  const std::string m1 = slurp (d + "/m1.xml"), m2 = slurp (d + "/m2.xml");
  CHECK (!m1.empty ());
  CHECK_MSG (m1 == m2, "the same seed gave different models with 1 and 2 threads");

  WaldBoostModel m;
  const std::string le = parse_waldboost (m1, &m);
  CHECK_MSG (le.empty (), "%s", le.c_str ());
  CHECK (m.stages.size () >= 2 && m.stages.size () <= 48); // it stops once no negative is left to mine
  CHECK (m.window_width == 24 && m.window_height == 24);
  CHECK (m.tail_start () > 0); // the sequential test rejects from the first stages

  // Held-out scenes: found at IoU >= 0.5; nothing on pattern-free textures.
  DetectorConfig cfg;
  cfg.model = d + "/m1.xml";
  cfg.min_neighbors = 2;
  cfg.min_size = {24, 24};
  cfg.slots = 1;
  std::string err;
  std::unique_ptr<Detector> det = Detector::create (cfg, &err);
  CHECK_MSG (det != nullptr, "%s", err.c_str ());
  if (!det)
    return finish ();
  std::mt19937_64 rng (99);
  int faces = 0, found = 0, false_pos = 0;
  for (int i = 0; i < 12; i++) {
    Scene s = scene (rng, 2);
    FrameResult r;
    CHECK (det->detect ({s.img.px.data (), s.img.width, s.img.height, s.img.width, PixelFormat::Gray8}, &r).empty ());
    for (const Box &b : s.faces) {
      faces++;
      for (const Detection &o : r.objects)
        if (iou (o.rect, {int (b.x), int (b.y), int (b.w), int (b.h)}) >= 0.5) {
          found++;
          break;
        }
    }
    for (const Detection &o : r.objects) {
      bool near = false;
      for (const Box &b : s.faces)
        near = near || iou (o.rect, {int (b.x), int (b.y), int (b.w), int (b.h)}) >= 0.3;
      false_pos += !near;
    }
    Image bg = background (200, 160, rng);
    FrameResult rb;
    CHECK (det->detect ({bg.px.data (), bg.width, bg.height, bg.width, PixelFormat::Gray8}, &rb).empty ());
    false_pos += static_cast<int> (rb.objects.size ());
  }
  std::printf ("held-out: %d/%d patterns found, %d false positives in 24 images\n", found, faces, false_pos);
  CHECK_MSG (found >= faces * 9 / 10, "found %d of %d", found, faces);
  CHECK_MSG (false_pos <= 2, "%d false positives", false_pos);
  if (g_failed == 0)
    std::system (("rm -rf '" + d + "'").c_str ());
  return finish ();
}
