// The training data every trainer reads (tools/train/README.md): grey images,
// the labelled faces in them, and face-free images; window samples cut from
// them the way the detector sees its windows (bilinear resampling of the
// original image, as the engine's pyramid does), with augmentation.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace gpudetect::train {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> px; // row-major, width bytes a row
  uint8_t at (int x, int y) const { return px[static_cast<size_t> (y) * width + x]; }
};

// A binary 8-bit PGM (P5).  Returns an empty string on success.
std::string read_pgm (const std::string &path, Image *out);
std::string write_pgm (const std::string &path, const Image &img);

struct Box {
  double x = 0, y = 0, w = 0, h = 0;
};

struct LabelledImage {
  std::string path;
  std::vector<Box> faces, ignore;
};

// faces-{train,eval}.txt: "path TAB x,y,w,h ... TAB x,y,w,h ..." per line.
std::string read_face_list (const std::string &dir, const std::string &file, std::vector<LabelledImage> *out);
// negatives-{train,eval}.txt: one path per line.
std::string read_path_list (const std::string &dir, const std::string &file, std::vector<std::string> *out);

// How a face box is turned into training windows.
struct Augment {
  bool mirror = true;
  double shift = 0.10;     // of the box size, uniform in +-: about one step of the detection grid
  double scale = 0.15;     // log2 of the size, uniform in +-: about one level of a 1.1 pyramid
  double rotate = 8.0;     // degrees, uniform in +-
  double contrast = 0.25;  // gain 2^u, u uniform in +- (about the window's mean)
  double brightness = 20;  // added grey levels, uniform in +-
};

// A window of `size` x `size` pixels cut from `img`: the square centred on
// (cx, cy) with side `side` in image pixels, turned by `angle` radians,
// mirrored when asked, sampled bilinearly at the window's pixel centres
// (outside the image: the nearest edge pixel).
void cut_window (const Image &img, double cx, double cy, double side, double angle, bool mirror, int size,
                 uint8_t *out);

// One sampling of a face box: the square centred on (cx, cy) with side
// `side` in image pixels, turned by `angle` radians, mirrored when asked, its
// grey levels then mapped p -> (p - mean) * gain + mean + bias.
struct View {
  double cx = 0, cy = 0, side = 0, angle = 0, gain = 1, bias = 0;
  bool mirror = false;
};

// `count` views of a face box, the first without any change; every variate
// drawn in a fixed order, so that the stream does not depend on the settings.
std::vector<View> face_views (const Box &face, int count, const Augment &a, std::mt19937_64 &rng);

// `count` augmented windows of a face box (face_views, cut by cut_window).
void face_windows (const Image &img, const Box &face, int size, int count, const Augment &a, std::mt19937_64 &rng,
                   std::vector<uint8_t> *out);

// Does the square window (x, y, side) overlap any of `boxes` by IoU >= `limit`?
bool overlaps (double x, double y, double side, const std::vector<Box> &boxes, double limit);

// The training images of a data directory (tools/train/fetch-data.sh):
// faces-train.txt with its images, negatives-train.txt's face-free images.
struct TrainingSet {
  std::vector<LabelledImage> faces;
  std::vector<Image> face_images; // one per entry of faces
  std::vector<Image> negatives;
  size_t face_count = 0;          // labelled faces in all images
  double negative_pixels = 0;
};
std::string load_training_set (const std::string &dir, TrainingSet *out);

// Boosting weights e^(-y F) of samples whose running sums F are `sum` (fixed
// point, units of 2^-32), positives (y = 1) first (`npos` of them), each
// class summing to 1/2 (exponents taken relative to the class's largest, so
// that none overflows).
void class_weights (const std::vector<int64_t> &sum, size_t npos, std::vector<double> *w);

// Runs f(t, a, b) on `threads` threads, thread t taking [a, b) of [0, n).
void parallel_for (int threads, size_t n, const std::function<void (int, size_t, size_t)> &f);

// Seconds on a monotonic clock.
double now_seconds ();

} // namespace gpudetect::train
