// Training data: lists, PGM files, window sampling (dataset.h).
#include "dataset.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpudetect::train {

std::string read_pgm (const std::string &path, Image *out) {
  std::ifstream f (path, std::ios::binary);
  if (!f)
    return "cannot open " + path;
  std::string magic;
  int w = 0, h = 0, maxval = 0;
  auto skip_comments = [&] () {
    f >> std::ws;
    while (f.peek () == '#') {
      std::string line;
      std::getline (f, line);
      f >> std::ws;
    }
  };
  f >> magic;
  skip_comments ();
  f >> w;
  skip_comments ();
  f >> h;
  skip_comments ();
  f >> maxval;
  if (!f || magic != "P5" || maxval != 255 || w <= 0 || h <= 0 || w > 1 << 15 || h > 1 << 15)
    return path + ": not an 8-bit binary PGM";
  f.get ();
  out->width = w;
  out->height = h;
  out->px.resize (static_cast<size_t> (w) * h);
  f.read (reinterpret_cast<char *> (out->px.data ()), static_cast<std::streamsize> (out->px.size ()));
  if (!f)
    return path + ": truncated";
  return {};
}

std::string write_pgm (const std::string &path, const Image &img) {
  std::ofstream f (path, std::ios::binary);
  f << "P5\n" << img.width << " " << img.height << "\n255\n";
  f.write (reinterpret_cast<const char *> (img.px.data ()), static_cast<std::streamsize> (img.px.size ()));
  return f ? std::string () : "cannot write " + path;
}

static bool parse_boxes (const std::string &field, std::vector<Box> *out) {
  std::istringstream s (field);
  std::string b;
  while (s >> b) {
    Box x;
    if (std::sscanf (b.c_str (), "%lf,%lf,%lf,%lf", &x.x, &x.y, &x.w, &x.h) != 4 || !(x.w > 0) || !(x.h > 0))
      return false;
    out->push_back (x);
  }
  return true;
}

std::string read_face_list (const std::string &dir, const std::string &file, std::vector<LabelledImage> *out) {
  const std::string path = dir + "/" + file;
  std::ifstream f (path);
  if (!f)
    return "cannot open " + path;
  std::string line;
  int n = 0;
  while (std::getline (f, line)) {
    n++;
    if (line.empty ())
      continue;
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      const size_t tab = line.find ('\t', start);
      fields.push_back (line.substr (start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos)
        break;
      start = tab + 1;
    }
    LabelledImage li;
    li.path = dir + "/" + fields[0];
    if (fields.size () < 2 || !parse_boxes (fields[1], &li.faces) ||
        (fields.size () > 2 && !parse_boxes (fields[2], &li.ignore)))
      return path + ":" + std::to_string (n) + ": expected 'path TAB x,y,w,h ... TAB x,y,w,h ...'";
    out->push_back (std::move (li));
  }
  return {};
}

std::string read_path_list (const std::string &dir, const std::string &file, std::vector<std::string> *out) {
  const std::string path = dir + "/" + file;
  std::ifstream f (path);
  if (!f)
    return "cannot open " + path;
  std::string line;
  while (std::getline (f, line))
    if (!line.empty ())
      out->push_back (dir + "/" + line);
  return {};
}

void cut_window (const Image &img, double cx, double cy, double side, double angle, bool mirror, int size,
                 uint8_t *out) {
  const double step = side / size, c = std::cos (angle) * step, s = std::sin (angle) * step;
  for (int v = 0; v < size; v++) {
    for (int u = 0; u < size; u++) {
      // window pixel centre relative to the window's centre, in window pixels
      double du = u + 0.5 - size * 0.5, dv = v + 0.5 - size * 0.5;
      if (mirror)
        du = -du;
      const double x = cx + c * du - s * dv - 0.5, y = cy + s * du + c * dv - 0.5;
      const double fx = std::floor (x), fy = std::floor (y);
      const double ax = x - fx, ay = y - fy;
      auto px = [&] (int xx, int yy) {
        xx = std::clamp (xx, 0, img.width - 1);
        yy = std::clamp (yy, 0, img.height - 1);
        return static_cast<double> (img.at (xx, yy));
      };
      const int ix = static_cast<int> (fx), iy = static_cast<int> (fy);
      const double p = (px (ix, iy) * (1 - ax) + px (ix + 1, iy) * ax) * (1 - ay) +
                       (px (ix, iy + 1) * (1 - ax) + px (ix + 1, iy + 1) * ax) * ay;
      out[v * size + u] = static_cast<uint8_t> (std::clamp (std::lround (p), 0L, 255L));
    }
  }
}

std::vector<View> face_views (const Box &face, int count, const Augment &a, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> u (-1.0, 1.0);
  const double side0 = std::sqrt (face.w * face.h);
  std::vector<View> views;
  for (int k = 0; k < count; k++) {
    View v;
    v.cx = face.x + face.w * 0.5;
    v.cy = face.y + face.h * 0.5;
    v.side = side0;
    if (k > 0) {
      const double r[7] = {u (rng), u (rng), u (rng), u (rng), u (rng), u (rng), u (rng)};
      v.cx += r[0] * a.shift * side0;
      v.cy += r[1] * a.shift * side0;
      v.side *= std::exp2 (r[2] * a.scale);
      v.angle = r[3] * a.rotate * M_PI / 180;
      v.gain = std::exp2 (r[4] * a.contrast);
      v.bias = r[5] * a.brightness;
      v.mirror = a.mirror && r[6] > 0;
    }
    views.push_back (v);
  }
  return views;
}

void face_windows (const Image &img, const Box &face, int size, int count, const Augment &a, std::mt19937_64 &rng,
                   std::vector<uint8_t> *out) {
  const size_t n = static_cast<size_t> (size) * size;
  std::vector<uint8_t> w (n);
  for (const View &v : face_views (face, count, a, rng)) {
    cut_window (img, v.cx, v.cy, v.side, v.angle, v.mirror, size, w.data ());
    if (v.gain != 1 || v.bias != 0) {
      double mean = 0;
      for (uint8_t p : w)
        mean += p;
      mean /= static_cast<double> (n);
      for (uint8_t &p : w)
        p = static_cast<uint8_t> (std::clamp (std::lround ((p - mean) * v.gain + mean + v.bias), 0L, 255L));
    }
    out->insert (out->end (), w.begin (), w.end ());
  }
}

bool overlaps (double x, double y, double side, const std::vector<Box> &boxes, double limit) {
  for (const Box &b : boxes) {
    const double ix = std::max (0.0, std::min (x + side, b.x + b.w) - std::max (x, b.x));
    const double iy = std::max (0.0, std::min (y + side, b.y + b.h) - std::max (y, b.y));
    const double inter = ix * iy, uni = side * side + b.w * b.h - inter;
    if (uni > 0 && inter / uni >= limit)
      return true;
  }
  return false;
}

std::string load_training_set (const std::string &dir, TrainingSet *out) {
  std::vector<std::string> neg_paths;
  if (std::string e = read_face_list (dir, "faces-train.txt", &out->faces); !e.empty ())
    return e;
  if (std::string e = read_path_list (dir, "negatives-train.txt", &neg_paths); !e.empty ())
    return e;
  out->face_images.resize (out->faces.size ());
  for (size_t i = 0; i < out->faces.size (); i++) {
    if (std::string e = read_pgm (out->faces[i].path, &out->face_images[i]); !e.empty ())
      return e;
    out->face_count += out->faces[i].faces.size ();
  }
  out->negatives.resize (neg_paths.size ());
  for (size_t i = 0; i < neg_paths.size (); i++) {
    if (std::string e = read_pgm (neg_paths[i], &out->negatives[i]); !e.empty ())
      return e;
    out->negative_pixels += static_cast<double> (out->negatives[i].width) * out->negatives[i].height;
  }
  if (out->face_count == 0 || out->negatives.empty ())
    return "no faces or no negative images in " + dir;
  return {};
}

void class_weights (const std::vector<int64_t> &sum, size_t npos, std::vector<double> *w) {
  const size_t n = sum.size ();
  w->assign (n, 0);
  double mp = -INFINITY, mn = -INFINITY, tp = 0, tn = 0;
  for (size_t i = 0; i < n; i++) {
    const double f = static_cast<double> (sum[i]) / 4294967296.0;
    (*w)[i] = i < npos ? -f : f;
    double &m = i < npos ? mp : mn;
    m = std::max (m, (*w)[i]);
  }
  for (size_t i = 0; i < n; i++) {
    (*w)[i] = std::exp ((*w)[i] - (i < npos ? mp : mn));
    (i < npos ? tp : tn) += (*w)[i];
  }
  for (size_t i = 0; i < n; i++)
    (*w)[i] *= 0.5 / (i < npos ? tp : tn);
}

void parallel_for (int threads, size_t n, const std::function<void (int, size_t, size_t)> &f) {
  if (threads <= 1 || n < 2) {
    f (0, 0, n);
    return;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; t++) {
    const size_t a = n * t / threads, b = n * (t + 1) / threads;
    pool.emplace_back ([&f, t, a, b] { f (t, a, b); });
  }
  for (std::thread &t : pool)
    t.join ();
}

double now_seconds () {
  return std::chrono::duration<double> (std::chrono::steady_clock::now ().time_since_epoch ()).count ();
}

} // namespace gpudetect::train
