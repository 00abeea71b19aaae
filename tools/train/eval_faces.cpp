// gpudetect-eval-faces: recall and false positives of face detectors on the
// held-out images of the training data (faces-eval.txt, negatives-eval.txt;
// tools/train/README.md), gpudetect's models beside OpenCV's
// CascadeClassifier on the same pixels and search parameters.
//
//   gpudetect-eval-faces --data DIR [--model M]... [--opencv CASCADE]... [--scale-factor 1.1]
//                        [--min-neighbors 3] [--min-size 24] [--device D] [--threshold T] [--iou X]
//                        [--levels-per-octave N] [--verbose 1]   (every false positive and miss)
//
// --levels-per-octave replaces a random-forest model's pyramid density (the
// element's levels-per-octave property); the scale factor is then unused for
// that model.
//
// A detection matches a labelled face when its centre lies within 0.3 of the
// face's width and 0.35 of its height from the face's centre and its width
// is 0.5 to 1.5 times the face's (greedy, nearest centre first): detectors
// frame faces differently (OpenCV's LBP cascades tighter than its Haar
// cascades, whose boxes are the labels), so an IoU rule would count a good
// detection of one convention as a miss and a false positive; --iou 0.5
// matches at IoU >= 0.5 instead.  An unmatched detection that overlaps an ignore box (a face only one teacher
// found) at IoU >= 0.3 or lies mostly inside it counts neither way; every
// other unmatched detection is a false positive.  Recall is given overall and
// by face size.
#include "dataset.h"
#include "detector.h"

#include <opencv2/core.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace gpudetect;
using namespace gpudetect::train;

namespace {

struct Tally {
  std::string name;
  int faces = 0, found = 0, fp = 0, fp_on_negatives = 0, images = 0, negative_images = 0;
  int size_faces[3] = {}, size_found[3] = {}; // < 48, 48-96, >= 96 px
  double seconds = 0;
};

int size_bucket (const Box &b) {
  const double s = std::max (b.w, b.h);
  return s < 48 ? 0 : s < 96 ? 1 : 2;
}

double box_iou (const Box &a, const Box &b) {
  const double ix = std::max (0.0, std::min (a.x + a.w, b.x + b.w) - std::max (a.x, b.x));
  const double iy = std::max (0.0, std::min (a.y + a.h, b.y + b.h) - std::max (a.y, b.y));
  const double inter = ix * iy, uni = a.w * a.h + b.w * b.h - inter;
  return uni > 0 ? inter / uni : 0;
}

bool ignorable (const Box &d, const std::vector<Box> &ignore) {
  for (const Box &b : ignore) {
    const double ix = std::max (0.0, std::min (d.x + d.w, b.x + b.w) - std::max (d.x, b.x));
    const double iy = std::max (0.0, std::min (d.y + d.h, b.y + b.h) - std::max (d.y, b.y));
    if (box_iou (d, b) >= 0.3 || ix * iy >= 0.5 * d.w * d.h)
      return true;
  }
  return false;
}

double g_iou = 0; // match by IoU at least this, instead of by centre and size
bool g_verbose = false; // print every false positive and miss

// How well a detection matches a face (higher is better), or a negative
// number when it does not.
double match (const Box &d, const Box &f) {
  if (g_iou > 0) {
    const double v = box_iou (d, f);
    return v >= g_iou ? v : -1;
  }
  const double dx = (d.x + d.w / 2 - f.x - f.w / 2) / f.w, dy = (d.y + d.h / 2 - f.y - f.h / 2) / f.h;
  const double r = d.w / f.w;
  if (std::fabs (dx) > 0.3 || std::fabs (dy) > 0.35 || r < 0.5 || r > 1.5)
    return -1;
  return 1 - std::hypot (dx, dy);
}

void score (const std::vector<Box> &dets, const LabelledImage &li, Tally *t) {
  std::vector<bool> used_d (dets.size ()), used_f (li.faces.size ());
  struct Pair {
    double q;
    size_t d, f;
  };
  std::vector<Pair> pairs;
  for (size_t d = 0; d < dets.size (); d++)
    for (size_t f = 0; f < li.faces.size (); f++)
      if (const double v = match (dets[d], li.faces[f]); v >= 0)
        pairs.push_back ({v, d, f});
  std::stable_sort (pairs.begin (), pairs.end (), [] (const Pair &a, const Pair &b) { return a.q > b.q; });
  for (const Pair &p : pairs)
    if (!used_d[p.d] && !used_f[p.f])
      used_d[p.d] = used_f[p.f] = true;
  for (size_t f = 0; f < li.faces.size (); f++) {
    t->faces++;
    t->size_faces[size_bucket (li.faces[f])]++;
    if (used_f[f]) {
      t->found++;
      t->size_found[size_bucket (li.faces[f])]++;
    }
  }
  for (size_t d = 0; d < dets.size (); d++)
    if (!used_d[d] && !ignorable (dets[d], li.ignore)) {
      t->fp++;
      if (g_verbose)
        std::printf ("%s: false positive %s at %.0f,%.0f %.0fx%.0f\n", t->name.c_str (), li.path.c_str (), dets[d].x,
                     dets[d].y, dets[d].w, dets[d].h);
    }
  if (g_verbose)
    for (size_t f = 0; f < li.faces.size (); f++)
      if (!used_f[f])
        std::printf ("%s: missed %s at %.0f,%.0f %.0fx%.0f\n", t->name.c_str (), li.path.c_str (), li.faces[f].x,
                     li.faces[f].y, li.faces[f].w, li.faces[f].h);
}

// Runs `detect` on every image (labelled ones first, then the `n_faces`..
// face-free ones) and scores it; an empty name on failure.
Tally run (const std::string &name, const std::vector<LabelledImage> &images, size_t n_faces,
           const std::function<std::string (Image &, std::vector<Box> *)> &detect) {
  Tally t;
  t.name = name;
  for (size_t i = 0; i < images.size (); i++) {
    Image img;
    std::vector<Box> boxes;
    std::string e = read_pgm (images[i].path, &img);
    if (e.empty ())
      e = detect (img, &boxes);
    if (!e.empty ()) {
      std::fprintf (stderr, "%s: %s: %s\n", name.c_str (), images[i].path.c_str (), e.c_str ());
      return {};
    }
    const int fp0 = t.fp;
    score (boxes, images[i], &t);
    (i < n_faces ? t.images : t.negative_images)++;
    if (i >= n_faces)
      t.fp_on_negatives += t.fp - fp0;
  }
  return t;
}

} // namespace

int main (int argc, char **argv) {
  std::string data, device;
  std::vector<std::string> models, cascades;
  double scale_factor = 1.1;
  int min_neighbors = 3, min_size = 24, levels_per_octave = 0;
  std::optional<double> threshold;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf (stderr, "option %s needs a value\n", a.c_str ());
      return 2;
    }
    const char *v = argv[++i];
    if (a == "--data")
      data = v;
    else if (a == "--model")
      models.push_back (v);
    else if (a == "--opencv")
      cascades.push_back (v);
    else if (a == "--scale-factor")
      scale_factor = std::atof (v);
    else if (a == "--min-neighbors")
      min_neighbors = std::atoi (v);
    else if (a == "--min-size")
      min_size = std::atoi (v);
    else if (a == "--device")
      device = v;
    else if (a == "--threshold")
      threshold = std::atof (v);
    else if (a == "--levels-per-octave")
      levels_per_octave = std::atoi (v);
    else if (a == "--iou")
      g_iou = std::atof (v);
    else if (a == "--verbose")
      g_verbose = std::atoi (v) != 0;
    else {
      std::fprintf (stderr, "unknown option %s\n", a.c_str ());
      return 2;
    }
  }
  if (data.empty () || (models.empty () && cascades.empty ())) {
    std::fprintf (stderr, "usage: gpudetect-eval-faces --data DIR [--model M]... [--opencv CASCADE]... "
                          "[--scale-factor F] [--min-neighbors N] [--min-size S] [--device D] [--threshold T] [--iou X]\n"
                          "       [--levels-per-octave N] [--verbose 1]\n");
    return 2;
  }
  std::vector<LabelledImage> images;
  std::vector<std::string> negatives;
  if (gpudetect::Error e = read_face_list (data, "faces-eval.txt", &images)) {
    std::fprintf (stderr, "%s\n", e.message.c_str ());
    return 1;
  }
  if (gpudetect::Error e = read_path_list (data, "negatives-eval.txt", &negatives))
    std::fprintf (stderr, "%s (no face-free images)\n", e.message.c_str ());
  const size_t n_faces_images = images.size ();
  for (const std::string &p : negatives)
    images.push_back ({p, {}, {}});

  std::vector<Tally> tallies;
  for (const std::string &m : models) {
    DetectorConfig cfg;
    cfg.model = m;
    cfg.device = device;
    cfg.scale_factor = scale_factor;
    cfg.min_neighbors = min_neighbors;
    cfg.min_size = {min_size, min_size};
    cfg.threshold = threshold;
    cfg.levels_per_octave = levels_per_octave;
    cfg.slots = 1;
    std::string err;
    std::unique_ptr<Detector> det;
    if (gpudetect::Error e_ = Detector::create (cfg, &det))
      err = e_.message;
    if (!det) {
      std::fprintf (stderr, "%s: %s\n", m.c_str (), err.c_str ());
      return 1;
    }
    const std::string name = "gpudetect " + m + (levels_per_octave ? " N " + std::to_string (levels_per_octave) : "");
    Tally t = run (name, images, n_faces_images, [&] (Image &img, std::vector<Box> *boxes) {
      FrameResult r;
      const std::string e = det->detect ({img.px.data (), img.width, img.height, img.width, PixelFormat::Gray8}, &r).message;
      for (const Detection &d : r.objects)
        boxes->push_back ({double (d.rect.x), double (d.rect.y), double (d.rect.width), double (d.rect.height)});
      return e;
    });
    if (t.name.empty ())
      return 1;
    tallies.push_back (t);
  }
  for (const std::string &c : cascades) {
    std::string path = resolve_model (c);
    cv::CascadeClassifier cc;
    if (path.empty () || !cc.load (path)) {
      std::fprintf (stderr, "cannot load OpenCV cascade %s\n", c.c_str ());
      return 1;
    }
    Tally t = run ("OpenCV " + c, images, n_faces_images, [&] (Image &img, std::vector<Box> *boxes) {
      cv::Mat m (img.height, img.width, CV_8UC1, img.px.data ());
      std::vector<cv::Rect> found;
      cc.detectMultiScale (m, found, scale_factor, min_neighbors, 0, cv::Size (min_size, min_size));
      for (const cv::Rect &r : found)
        boxes->push_back ({double (r.x), double (r.y), double (r.width), double (r.height)});
      return std::string ();
    });
    if (t.name.empty ())
      return 1;
    tallies.push_back (t);
  }
  std::printf ("%zu images with %d labelled faces, %zu face-free images; scale factor %g, min neighbours %d, "
               "min size %d; %s\n\n",
               n_faces_images, tallies.empty () ? 0 : tallies[0].faces, negatives.size (), scale_factor,
               min_neighbors, min_size,
               g_iou > 0 ? ("matched at IoU >= " + std::to_string (g_iou)).c_str ()
                         : "matched by centre (0.3 w, 0.35 h) and width (0.5-1.5x)");
  std::printf ("| detector | recall | recall <48 px | 48-96 px | >=96 px | false positives | FP per image |\n");
  std::printf ("|---|---|---|---|---|---|---|\n");
  for (const Tally &t : tallies) {
    auto r = [] (int a, int b) { return b ? static_cast<double> (a) / b : 0.0; };
    std::printf ("| %s | %.3f (%d/%d) | %.3f (%d) | %.3f (%d) | %.3f (%d) | %d (%d on face-free images) | %.3f |\n",
                 t.name.c_str (), r (t.found, t.faces), t.found, t.faces, r (t.size_found[0], t.size_faces[0]),
                 t.size_faces[0], r (t.size_found[1], t.size_faces[1]), t.size_faces[1],
                 r (t.size_found[2], t.size_faces[2]), t.size_faces[2], t.fp, t.fp_on_negatives,
                 r (t.fp, t.images + t.negative_images));
  }
  return 0;
}
