// gpudetect-train-xobjdetect: trains a WaldBoost face detector with OpenCV's
// own trainer (cv::xobjdetect::WBDetector::train) and writes it as
// WBDetector::write does, for gpudetect's xobjdetect loader and its parity test.
//
//   gpudetect-train-xobjdetect --faces LFW_SUBSET.npy --out MODEL.xml [--work DIR] [--seed N] NEGATIVE_IMAGE...
//
// Positives: the first 100 images of scikit-image's lfw_subset.npy (200 float
// images of 25x25 in [0, 1]: 100 faces, then 100 non-faces), as 8-bit grey
// resized to 24x24 (INTER_AREA).  Negatives: every 20th of those faces again
// (see kTwinEvery), the 100 non-faces (25x25) and the
// NEGATIVE_IMAGEs (read as grey), from which the trainer samples 24x24 patches
// and bootstraps hard windows.  Both are written to --work (default: a new
// directory under /tmp) as PNG, since the trainer reads directories.  The
// training is deterministic (cv::theRNG seeded, one thread).
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/xobjdetect.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

// Every kTwinEvery-th face is also a negative: the training data are then
// never separable exactly, where OpenCV's trainer would end with a weak learner
// of error 0, an infinite alpha and a model that accepts nothing.
constexpr int kTwinEvery = 20;

// A C-order float64 .npy array of shape (n, h, w).
bool read_npy (const std::string &path, int *n, int *h, int *w, std::vector<double> *data) {
  std::ifstream f (path, std::ios::binary);
  char magic[8];
  if (!f.read (magic, 8) || std::memcmp (magic, "\x93NUMPY", 6) != 0)
    return false;
  size_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (!f.read (reinterpret_cast<char *> (b), 2))
      return false;
    hlen = b[0] | b[1] << 8;
  } else {
    unsigned char b[4];
    if (!f.read (reinterpret_cast<char *> (b), 4))
      return false;
    hlen = b[0] | b[1] << 8 | b[2] << 16 | static_cast<size_t> (b[3]) << 24;
  }
  std::string header (hlen, '\0');
  if (!f.read (&header[0], hlen))
    return false;
  if (header.find ("'<f8'") == std::string::npos || header.find ("'fortran_order': False") == std::string::npos)
    return false;
  const size_t s = header.find ("'shape': (");
  if (s == std::string::npos || std::sscanf (header.c_str () + s, "'shape': (%d, %d, %d)", n, h, w) != 3 || *n <= 0 ||
      *h <= 0 || *w <= 0 || *n > 100000 || *h > 4096 || *w > 4096)
    return false;
  data->resize (static_cast<size_t> (*n) * *h * *w);
  return static_cast<bool> (f.read (reinterpret_cast<char *> (data->data ()), data->size () * sizeof (double)));
}

cv::Mat to_grey (const double *p, int h, int w) {
  cv::Mat m (h, w, CV_8U);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      m.at<uchar> (y, x) = cv::saturate_cast<uchar> (p[y * w + x] * 255.0);
  return m;
}

bool save (const std::string &path, const cv::Mat &m) {
  if (cv::imwrite (path, m))
    return true;
  std::fprintf (stderr, "cannot write %s\n", path.c_str ());
  return false;
}

} // namespace

int main (int argc, char **argv) {
  std::string faces, out, work;
  unsigned seed = 1;
  std::vector<std::string> negatives;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--faces" && i + 1 < argc) faces = argv[++i];
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--work" && i + 1 < argc) work = argv[++i];
    else if (a == "--seed" && i + 1 < argc) seed = static_cast<unsigned> (std::strtoul (argv[++i], nullptr, 10));
    else if (a == "-h" || a == "--help") {
      std::printf ("usage: %s --faces LFW_SUBSET.npy --out MODEL.xml [--work DIR] [--seed N] NEGATIVE_IMAGE...\n",
                   argv[0]);
      return 0;
    } else negatives.push_back (a);
  }
  if (faces.empty () || out.empty () || negatives.empty ()) {
    std::fprintf (stderr, "--faces, --out and negative images are needed (--help)\n");
    return 2;
  }
  int n, h, w;
  std::vector<double> data;
  if (!read_npy (faces, &n, &h, &w, &data) || n < 200) {
    std::fprintf (stderr, "%s: not a float64 array of at least 200 images\n", faces.c_str ());
    return 2;
  }
  if (work.empty ()) {
    char tmpl[] = "/tmp/gpudetect-train-xobjdetect-XXXXXX";
    if (!mkdtemp (tmpl)) {
      std::perror ("mkdtemp");
      return 2;
    }
    work = tmpl;
  }
  const std::string pos_dir = work + "/pos", neg_dir = work + "/neg";
  mkdir (work.c_str (), 0755);
  mkdir (pos_dir.c_str (), 0755);
  mkdir (neg_dir.c_str (), 0755);
  char name[64];
  for (int i = 0; i < 200; i++) {
    const cv::Mat g = to_grey (data.data () + static_cast<size_t> (i) * h * w, h, w);
    if (i < 100) {
      cv::Mat r;
      cv::resize (g, r, cv::Size (24, 24), 0, 0, cv::INTER_AREA);
      std::snprintf (name, sizeof name, "/face%03d.png", i);
      if (!save (pos_dir + name, r))
        return 2;
      if (i % kTwinEvery == kTwinEvery - 1) {
        // the face again among the negatives, padded to 25x25 so that the
        // trainer's patch sampling (and bootstrapping) takes its 24x24
        // top-left, the face itself
        cv::Mat twin;
        cv::copyMakeBorder (r, twin, 0, 1, 0, 1, cv::BORDER_REPLICATE);
        std::snprintf (name, sizeof name, "/a-twin%03d.png", i);
        if (!save (neg_dir + name, twin))
          return 2;
      }
    } else {
      std::snprintf (name, sizeof name, "/z-nonface%03d.png", i - 100);
      if (!save (neg_dir + name, g))
        return 2;
    }
  }
  for (size_t i = 0; i < negatives.size (); i++) {
    const cv::Mat g = cv::imread (negatives[i], cv::IMREAD_GRAYSCALE);
    if (g.empty ()) {
      std::fprintf (stderr, "cannot read %s\n", negatives[i].c_str ());
      return 2;
    }
    std::snprintf (name, sizeof name, "/image%02zu.png", i);
    if (!save (neg_dir + name, g))
      return 2;
  }
  cv::setNumThreads (1);
  cv::theRNG ().state = seed;
  cv::Ptr<cv::xobjdetect::WBDetector> det = cv::xobjdetect::WBDetector::create ();
  det->train (pos_dir, neg_dir);
  cv::FileStorage fs (out, cv::FileStorage::WRITE);
  if (!fs.isOpened ()) {
    std::fprintf (stderr, "cannot write %s\n", out.c_str ());
    return 2;
  }
  fs << "waldboost";
  det->write (fs);
  fs.release ();
  std::printf ("wrote %s (positives and negatives in %s)\n", out.c_str (), work.c_str ());
  return 0;
}
