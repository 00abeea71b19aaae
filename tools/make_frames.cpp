// gpudetect-make-frames DIR [IMAGE...]: writes the benchmark frames as binary PGM, made
// from real images of Debian packages (opencv-doc, python3-skimage,
// python-matplotlib-data):
//   vga-faces.pgm     640x480  grace_hopper.jpg resized
//   vga-empty.pgm     640x480  home.jpg (no faces) resized
//   1080p-crowd.pgm   1920x1080  3x2 mosaic of six photos with faces
//   1080p-empty.pgm   1920x1080  building.jpg (no faces) resized
//   crowd-WxH.pgm     1080p-crowd resized to 640x352, 960x544, 1280x720, 1600x896
// and each IMAGE as DIR/parity/NAME.pgm, read as grey at its own size (the
// parity images, for gpudetect-bench --parity on hosts without image codecs).
// gpudetect-make-frames --parity-only DIR IMAGE...: only the IMAGEs, as
// DIR/NAME.pgm (the tests' grey inputs, made at build time).
// gpudetect-make-frames --video-frames DIR VIDEO N...: frames N... of VIDEO
// as DIR/STEM-N.pgm, grey (people walking: opencv-doc's vtest.avi).
// Where opencv-doc's vtest.avi can be read, the standard set also has
//   vga-people.pgm    640x480    its frame 300 resized
//   1080p-people.pgm  1920x1080  the same frame resized
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

static void save (const std::string &path, const cv::Mat &m) {
  if (!cv::imwrite (path, m)) {
    std::fprintf (stderr, "cannot write %s\n", path.c_str ());
    std::exit (2);
  }
}

static cv::Mat load (const std::string &path, cv::Size size) {
  cv::Mat g = cv::imread (path, cv::IMREAD_GRAYSCALE);
  if (g.empty ()) {
    std::fprintf (stderr, "cannot read %s\n", path.c_str ());
    std::exit (2);
  }
  cv::Mat r;
  cv::resize (g, r, size, 0, 0, size.area () < g.size ().area () ? cv::INTER_AREA : cv::INTER_LINEAR);
  return r;
}

// Each image as grey PGM in `dir`, named after it.
static int grey_copies (const std::string &dir, int n, char **images) {
  for (int i = 0; i < n; i++) {
    cv::Mat g = cv::imread (images[i], cv::IMREAD_GRAYSCALE);
    if (g.empty ()) {
      std::fprintf (stderr, "cannot read %s\n", images[i]);
      return 2;
    }
    std::string name = images[i];
    name = name.substr (name.find_last_of ('/') + 1);
    save (dir + "/" + name.substr (0, name.find_last_of ('.')) + ".pgm", g);
  }
  return 0;
}

// Frame n of a video, grey (empty where it cannot be read).
static cv::Mat video_frame (const std::string &path, int n) {
  cv::VideoCapture cap (path);
  cv::Mat f, g;
  for (int i = 0; cap.isOpened () && i <= n; i++)
    if (!cap.read (f))
      return {};
  if (!f.empty ())
    cv::cvtColor (f, g, cv::COLOR_BGR2GRAY);
  return g;
}

int main (int argc, char **argv) {
  if (argc >= 5 && std::string (argv[1]) == "--video-frames") {
    std::error_code ec;
    std::filesystem::create_directories (argv[2], ec);
    std::string stem = argv[3];
    stem = stem.substr (stem.find_last_of ('/') + 1);
    stem = stem.substr (0, stem.find_last_of ('.'));
    // one pass through the video
    cv::VideoCapture cap (argv[3]);
    cv::Mat f, g;
    int at = -1;
    for (int i = 4; i < argc; i++) {
      const int n = std::atoi (argv[i]);
      while (at < n && cap.isOpened () && cap.read (f))
        at++;
      if (at != n || f.empty ()) {
        std::fprintf (stderr, "cannot read frame %s of %s (frames in increasing order)\n", argv[i], argv[3]);
        return 2;
      }
      cv::cvtColor (f, g, cv::COLOR_BGR2GRAY);
      save (std::string (argv[2]) + "/" + stem + "-" + argv[i] + ".pgm", g);
    }
    return 0;
  }
  if (argc >= 3 && std::string (argv[1]) == "--parity-only") {
    std::error_code ec;
    std::filesystem::create_directories (argv[2], ec);
    return grey_copies (argv[2], argc - 3, argv + 3);
  }
  if (argc < 2) {
    std::fprintf (stderr, "usage: %s OUTPUT-DIR [IMAGE...]\n       %s --parity-only OUTPUT-DIR IMAGE...\n", argv[0],
                  argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  std::error_code ec;
  std::filesystem::create_directories (out + "/parity", ec);
  const std::string ocv = "/usr/share/doc/opencv-doc/examples/data/",
                    ski = "/usr/lib/python3/dist-packages/skimage/data/",
                    hopper = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg";
  save (out + "/vga-faces.pgm", load (hopper, {640, 480}));
  save (out + "/vga-empty.pgm", load (ocv + "home.jpg", {640, 480}));
  save (out + "/1080p-empty.pgm", load (ocv + "building.jpg", {1920, 1080}));
  cv::Mat crowd (1080, 1920, CV_8U);
  const std::string tiles[6] = {hopper, ski + "astronaut.png", ocv + "messi5.jpg", ocv + "basketball2.png",
                                ocv + "left01.jpg", ocv + "baboon.jpg"};
  for (int i = 0; i < 6; i++)
    load (tiles[i], {640, 540}).copyTo (crowd (cv::Rect ((i % 3) * 640, (i / 3) * 540, 640, 540)));
  save (out + "/1080p-crowd.pgm", crowd);
  // The crowd at smaller sizes, for tables by resolution.
  const cv::Size sizes[] = {{640, 352}, {960, 544}, {1280, 720}, {1600, 896}};
  for (const cv::Size &sz : sizes) {
    cv::Mat r;
    cv::resize (crowd, r, sz, 0, 0, cv::INTER_AREA);
    save (out + "/crowd-" + std::to_string (sz.width) + "x" + std::to_string (sz.height) + ".pgm", r);
  }
  int frames = 8;
  const cv::Mat people = video_frame (ocv + "vtest.avi", 300);
  if (!people.empty ()) {
    cv::Mat r;
    cv::resize (people, r, {640, 480}, 0, 0, cv::INTER_AREA);
    save (out + "/vga-people.pgm", r);
    cv::resize (people, r, {1920, 1080}, 0, 0, cv::INTER_LINEAR);
    save (out + "/1080p-people.pgm", r);
    frames += 2;
  }
  if (int e = grey_copies (out + "/parity", argc - 2, argv + 2))
    return e;
  std::printf ("wrote %d frames and %d parity images to %s\n", frames, argc - 2, out.c_str ());
  return 0;
}
