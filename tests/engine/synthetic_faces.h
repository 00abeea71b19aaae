// Synthetic training data for the trainers' tests: a pattern (a bright oval
// with two dark eyes and a dark mouth) on smooth random textures, scenes with
// their labels, and a data directory laid out as tools/train/fetch-data.sh
// writes it.
#pragma once

#include "dataset.h"
#include "detector.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace gpudetect::train::synthetic {


// Smooth random texture: a few random gradients and blobs.
inline Image background (int w, int h, std::mt19937_64 &rng) {
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
inline void draw_face (Image *img, double x, double y, double s, double light) {
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

inline Scene scene (std::mt19937_64 &rng, int n_faces) {
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

inline std::string write_data (const std::string &dir, uint64_t seed, int negatives = 20) {
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
  for (int i = 0; i < negatives; i++) {
    const std::string name = "images/n" + std::to_string (i) + ".pgm";
    if (std::string e = write_pgm (dir + "/" + name, background (320, 240, rng)); !e.empty ())
      return e;
    negs << name << "\n";
  }
  return {};
}

inline std::string slurp (const std::string &path) {
  std::ifstream f (path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf ();
  return s.str ();
}

// A trained model on held-out data: 12 scenes of 2 patterns and 12
// pattern-free textures (from `seed`); a pattern is found by a box at
// IoU >= 0.5, a box at IoU < 0.3 with every pattern is a false positive.
struct HeldOut {
  int faces = 0, found = 0, false_pos = 0;
  std::string error; // the first detection error, if any
};
inline HeldOut held_out (const std::string &model, uint64_t seed) {
  HeldOut h;
  DetectorConfig cfg;
  cfg.model = model;
  cfg.min_neighbors = 2;
  cfg.min_size = {24, 24};
  cfg.slots = 1;
  std::unique_ptr<Detector> det;
  if (Error e = Detector::create (cfg, &det))
    h.error = e.message;
  if (!det)
    return h;
  std::mt19937_64 rng (seed);
  auto rect = [] (const Box &b) { return Rect{int (b.x), int (b.y), int (b.w), int (b.h)}; };
  for (int i = 0; i < 12 && h.error.empty (); i++) {
    Scene s = scene (rng, 2);
    FrameResult r;
    h.error = det->detect ({s.img.px.data (), s.img.width, s.img.height, s.img.width, PixelFormat::Gray8}, &r).message;
    for (const Box &b : s.faces) {
      h.faces++;
      for (const Detection &o : r.objects)
        if (iou (o.rect, rect (b)) >= 0.5) {
          h.found++;
          break;
        }
    }
    for (const Detection &o : r.objects) {
      bool near = false;
      for (const Box &b : s.faces)
        near = near || iou (o.rect, rect (b)) >= 0.3;
      h.false_pos += !near;
    }
    Image bg = background (200, 160, rng);
    FrameResult rb;
    if (h.error.empty ())
      h.error = det->detect ({bg.px.data (), bg.width, bg.height, bg.width, PixelFormat::Gray8}, &rb).message;
    h.false_pos += static_cast<int> (rb.objects.size ());
  }
  return h;
}

} // namespace gpudetect::train::synthetic
