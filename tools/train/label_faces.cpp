// gpudetect-label-faces: turns images, video frames and skimage's LFW subset into 8-bit grey PGM and labels the
// frontal faces in them with two teachers, OpenCV's Haar cascade and dlib's HOG frontal face detector.
//
//   gpudetect-label-faces --cascade haarcascade_frontalface_alt2.xml --root DIR [--jobs N] [--draw DIR] LIST > OUT.tsv
//
// LIST has one job per line, fields separated by TAB:
//   image  SRC  DEST.pgm  [MAXSIDE [PAD]] an image file OpenCV reads (downscaled to MAXSIDE if larger; framed by
//                                        a border of PAD times its longer side, in its mean grey, if PAD > 0)
//   video  SRC  DEST-PREFIX  STEP  [MAX] every STEP-th frame of a video (at most MAX frames): DEST-PREFIX_NNNNN.pgm
//   lfw    SRC.npy  DEST-PREFIX  COUNT   the first COUNT 25x25 images of skimage's lfw_subset.npy, 4x upscaled and
//                                        framed in a grey border (the crops are too tight for the teachers as is)
// DEST paths are relative to --root.  Each written image yields one line on stdout:
//   DEST  TAB  faces  TAB  ignore  TAB  opencv-count  TAB  dlib-count
// faces: boxes both teachers found (OpenCV's box, x,y,w,h, space-separated); ignore: boxes only one of them found.
// An image is face-free exactly when both lists are empty.
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string cascade;
  std::string cascade2;  // optional second OpenCV cascade: its boxes count for the OpenCV teacher too
  std::string root;
  std::string draw_dir;
  int jobs = 1;
  int min_face = 20;
};

struct Work {
  cv::Mat grey;      // the pixels written to DEST
  std::string dest;  // relative to root
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, '\t')) out.push_back(f);
  return out;
}

bool write_pgm(const fs::path& path, const cv::Mat& grey) {
  fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".part";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return false;
    f << "P5\n" << grey.cols << " " << grey.rows << "\n255\n";
    for (int y = 0; y < grey.rows; ++y) f.write(grey.ptr<const char>(y), grey.cols);
    if (!f) return false;
  }
  fs::rename(tmp, path);
  return true;
}

cv::Mat limit_size(const cv::Mat& grey, int maxside) {
  const int side = std::max(grey.cols, grey.rows);
  if (maxside <= 0 || side <= maxside) return grey;
  const double s = double(maxside) / side;
  cv::Mat out;
  cv::resize(grey, out, cv::Size(), s, s, cv::INTER_AREA);
  return out;
}

// Reads the leading N images of a C-ordered float64 (H, W) stack from a .npy file (format version 1 or 2).
std::vector<cv::Mat> read_npy_stack(const std::string& path, int count) {
  std::ifstream f(path, std::ios::binary);
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) return {};
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    f.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    f.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  if (header.find("'<f8'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos) return {};
  const auto sp = header.find("'shape': (");
  if (sp == std::string::npos) return {};
  int n = 0, h = 0, w = 0;
  if (std::sscanf(header.c_str() + sp, "'shape': (%d, %d, %d)", &n, &h, &w) != 3) return {};
  std::vector<cv::Mat> out;
  std::vector<double> buf(size_t(h) * w);
  for (int i = 0; i < std::min(n, count); ++i) {
    if (!f.read(reinterpret_cast<char*>(buf.data()), std::streamsize(buf.size() * sizeof(double)))) break;
    cv::Mat m(h, w, CV_8U);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        m.at<uint8_t>(y, x) = cv::saturate_cast<uint8_t>(buf[size_t(y) * w + x] * 255.0);
    out.push_back(m);
  }
  return out;
}

struct Box {
  int x, y, w, h;
  double cx() const { return x + w * 0.5; }
  double cy() const { return y + h * 0.5; }
};

// Same face when the centres lie close (relative to the OpenCV box) and the sizes agree.  dlib's boxes are
// tighter (about 0.8-0.9 of a Haar box) and sit a little lower, so the ranges are asymmetric-tolerant.
bool same_face(const Box& o, const Box& d) {
  const double ratio = double(d.w) / o.w;
  return ratio > 0.5 && ratio < 1.5 && std::abs(d.cx() - o.cx()) < 0.3 * o.w && std::abs(d.cy() - o.cy()) < 0.35 * o.h;
}

std::string boxes_str(const std::vector<Box>& v) {
  std::string s;
  for (const Box& b : v) {
    if (!s.empty()) s += ' ';
    s += std::to_string(b.x) + "," + std::to_string(b.y) + "," + std::to_string(b.w) + "," + std::to_string(b.h);
  }
  return s;
}

class Teachers {
 public:
  explicit Teachers(const Options& o) : opt_(o), dlib_(dlib::get_frontal_face_detector()) {
    if (!cascade_.load(o.cascade)) throw std::runtime_error("cannot load cascade " + o.cascade);
    if (!o.cascade2.empty() && !cascade2_.load(o.cascade2))
      throw std::runtime_error("cannot load cascade " + o.cascade2);
  }

  std::string label(const cv::Mat& grey, int* n_cv, int* n_dlib, cv::Mat* drawing) {
    std::vector<Box> cvb = opencv_boxes(grey);
    std::vector<Box> dlb = dlib_boxes(grey);
    *n_cv = int(cvb.size());
    *n_dlib = int(dlb.size());
    std::vector<Box> faces, ignore;
    std::vector<bool> dused(dlb.size(), false);
    for (const Box& o : cvb) {
      int best = -1;
      double bestd = 1e9;
      for (size_t j = 0; j < dlb.size(); ++j) {
        if (dused[j] || !same_face(o, dlb[j])) continue;
        const double dist = std::hypot(dlb[j].cx() - o.cx(), dlb[j].cy() - o.cy());
        if (dist < bestd) bestd = dist, best = int(j);
      }
      if (best >= 0) {
        dused[best] = true;
        faces.push_back(o);
      } else {
        ignore.push_back(o);
      }
    }
    for (size_t j = 0; j < dlb.size(); ++j) {
      if (dused[j]) continue;
      // As an ignore region, dlib's box is widened to what a Haar box of that face would cover.
      const Box& d = dlb[j];
      const int s = int(std::lround(d.w * 1.2));
      Box e{int(std::lround(d.cx() - s * 0.5)), int(std::lround(d.cy() - s * 0.55)), s, s};
      e.x = std::max(0, e.x);
      e.y = std::max(0, e.y);
      e.w = std::min(e.w, grey.cols - e.x);
      e.h = std::min(e.h, grey.rows - e.y);
      if (e.w > 0 && e.h > 0) ignore.push_back(e);
    }
    if (drawing) {
      cv::cvtColor(grey, *drawing, cv::COLOR_GRAY2BGR);
      for (const Box& b : cvb) cv::rectangle(*drawing, cv::Rect(b.x, b.y, b.w, b.h), {0, 0, 255}, 1);
      for (const Box& b : dlb) cv::rectangle(*drawing, cv::Rect(b.x, b.y, b.w, b.h), {255, 0, 0}, 1);
      for (const Box& b : faces) cv::rectangle(*drawing, cv::Rect(b.x, b.y, b.w, b.h), {0, 255, 0}, 2);
    }
    return boxes_str(faces) + "\t" + boxes_str(ignore);
  }

 private:
  std::vector<Box> opencv_boxes(const cv::Mat& grey) {
    std::vector<cv::Rect> r;
    const cv::Size min(opt_.min_face, opt_.min_face);
    cascade_.detectMultiScale(grey, r, 1.1, 3, 0, min);
    if (!cascade2_.empty()) {
      // The second cascade only adds faces the first missed (its box where the first has none near).
      std::vector<cv::Rect> r2;
      cascade2_.detectMultiScale(grey, r2, 1.1, 3, 0, min);
      for (const cv::Rect& b : r2) {
        bool dup = false;
        for (const cv::Rect& a : r) dup = dup || (a & b).area() > 0.3 * std::min(a.area(), b.area());
        if (!dup) r.push_back(b);
      }
    }
    std::vector<Box> out;
    for (const cv::Rect& b : r) out.push_back({b.x, b.y, b.width, b.height});
    return out;
  }

  // dlib's detector finds faces from about 80 px; upsampling lets it see faces down to about 80/up px.  The
  // factor keeps the upsampled image within about 2.5 Mpixel.
  std::vector<Box> dlib_boxes(const cv::Mat& grey) {
    const double area = double(grey.cols) * grey.rows;
    int up = 1;
    while (up < 4 && area * (up + 1) * (up + 1) <= 2.6e6) ++up;
    dlib::array2d<unsigned char> img(grey.rows, grey.cols);
    for (int y = 0; y < grey.rows; ++y) std::memcpy(&img[y][0], grey.ptr(y), grey.cols);
    dlib::array2d<unsigned char> big;
    const dlib::array2d<unsigned char>* in = &img;
    if (up > 1) {
      big.set_size(grey.rows * up, grey.cols * up);
      dlib::resize_image(img, big, dlib::interpolate_bilinear());
      in = &big;
    }
    std::vector<dlib::rectangle> dets = dlib_(*in);
    std::vector<Box> out;
    for (const auto& r : dets) {
      Box b{int(std::lround(double(r.left()) / up)), int(std::lround(double(r.top()) / up)),
            int(std::lround(double(r.width()) / up)), int(std::lround(double(r.height()) / up))};
      b.x = std::max(0, b.x);
      b.y = std::max(0, b.y);
      b.w = std::min(b.w, grey.cols - b.x);
      b.h = std::min(b.h, grey.rows - b.y);
      if (b.w > 0 && b.h > 0) out.push_back(b);
    }
    return out;
  }

  const Options& opt_;
  cv::CascadeClassifier cascade_, cascade2_;
  dlib::frontal_face_detector dlib_;
};

int usage() {
  std::cerr << "usage: gpudetect-label-faces --cascade XML [--cascade2 XML] --root DIR [--jobs N] [--min-face PX]"
               " [--draw DIR] LIST\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string list;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--cascade") opt.cascade = next();
    else if (a == "--cascade2") opt.cascade2 = next();
    else if (a == "--root") opt.root = next();
    else if (a == "--jobs") opt.jobs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--min-face") opt.min_face = std::max(1, std::atoi(next().c_str()));
    else if (a == "--draw") opt.draw_dir = next();
    else if (!a.empty() && a[0] != '-') list = a;
    else return usage();
  }
  if (opt.cascade.empty() || opt.root.empty() || list.empty()) return usage();
  cv::setNumThreads(1);  // parallel over images instead

  // Expand the jobs into single images (video frames are decoded here, sequentially).
  std::ifstream lf(list);
  if (!lf) {
    std::cerr << "cannot read " << list << "\n";
    return 1;
  }
  std::vector<Work> work;
  std::string line;
  int bad = 0;
  while (std::getline(lf, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = split_tabs(line);
    if (f.size() < 3) {
      std::cerr << "bad job line: " << line << "\n";
      ++bad;
      continue;
    }
    if (f[0] == "image") {
      cv::Mat g = cv::imread(f[1], cv::IMREAD_GRAYSCALE);
      if (g.empty()) {
        std::cerr << "cannot read image " << f[1] << "\n";
        ++bad;
        continue;
      }
      g = limit_size(g, f.size() > 3 ? std::atoi(f[3].c_str()) : 0);
      const double pad = f.size() > 4 ? std::atof(f[4].c_str()) : 0.0;
      if (pad > 0) {
        // Tight face crops get a border of their mean grey, so that the cascade sees a whole face.
        const int b = int(std::lround(pad * std::max(g.cols, g.rows)));
        cv::Mat framed;
        cv::copyMakeBorder(g, framed, b, b, b, b, cv::BORDER_CONSTANT, cv::mean(g));
        g = framed;
      }
      work.push_back({g, f[2]});
    } else if (f[0] == "video") {
      const int step = f.size() > 3 ? std::max(1, std::atoi(f[3].c_str())) : 10;
      const int maxn = f.size() > 4 ? std::atoi(f[4].c_str()) : 0;
      cv::VideoCapture cap(f[1]);
      if (!cap.isOpened()) {
        std::cerr << "cannot open video " << f[1] << "\n";
        ++bad;
        continue;
      }
      cv::Mat frame, g;
      int n = 0, kept = 0;
      while (cap.read(frame)) {
        if (n % step == 0 && (maxn <= 0 || kept < maxn)) {
          cv::cvtColor(frame, g, cv::COLOR_BGR2GRAY);
          char suffix[32];
          std::snprintf(suffix, sizeof suffix, "_%05d.pgm", n);
          work.push_back({g.clone(), f[2] + suffix});
          ++kept;
        }
        ++n;
      }
      std::cerr << f[1] << ": " << n << " frames, kept " << kept << "\n";
    } else if (f[0] == "lfw") {
      const int count = f.size() > 3 ? std::atoi(f[3].c_str()) : 100;
      const auto crops = read_npy_stack(f[1], count);
      if (crops.empty()) {
        std::cerr << "cannot read " << f[1] << "\n";
        ++bad;
        continue;
      }
      for (size_t i = 0; i < crops.size(); ++i) {
        cv::Mat up, framed;
        cv::resize(crops[i], up, cv::Size(), 4, 4, cv::INTER_CUBIC);
        const cv::Scalar mean = cv::mean(up);
        cv::copyMakeBorder(up, framed, 40, 40, 40, 40, cv::BORDER_CONSTANT, mean);
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, "_%03zu.pgm", i);
        work.push_back({framed, f[2] + suffix});
      }
    } else {
      std::cerr << "unknown job kind " << f[0] << "\n";
      ++bad;
    }
  }
  std::cerr << "labelling " << work.size() << " images with " << opt.jobs << " thread(s)\n";

  std::vector<std::string> results(work.size());
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::mutex log_mutex;
  auto worker = [&]() {
    try {
      Teachers t(opt);
      for (size_t i; (i = next++) < work.size();) {
        const Work& w = work[i];
        if (!write_pgm(fs::path(opt.root) / w.dest, w.grey)) {
          std::lock_guard<std::mutex> l(log_mutex);
          std::cerr << "cannot write " << w.dest << "\n";
          failed = true;
          continue;
        }
        int ncv = 0, ndl = 0;
        cv::Mat drawing;
        const std::string labels = t.label(w.grey, &ncv, &ndl, opt.draw_dir.empty() ? nullptr : &drawing);
        if (!opt.draw_dir.empty()) {
          fs::path p = fs::path(opt.draw_dir) / w.dest;
          p.replace_extension(".png");
          fs::create_directories(p.parent_path());
          cv::imwrite(p.string(), drawing);
        }
        results[i] = w.dest + "\t" + labels + "\t" + std::to_string(ncv) + "\t" + std::to_string(ndl);
        const size_t d = ++done;
        if (d % 25 == 0 || d == work.size()) {
          std::lock_guard<std::mutex> l(log_mutex);
          std::cerr << "  " << d << "/" << work.size() << "\n";
        }
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> l(log_mutex);
      std::cerr << "error: " << e.what() << "\n";
      failed = true;
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < opt.jobs; ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (const auto& r : results)
    if (!r.empty()) std::cout << r << "\n";
  return failed || bad ? 1 : 0;
}
