// gpudetect-make-frames DIR: writes the benchmark frames as binary PGM, made
// from real images of Debian packages (opencv-doc, python3-skimage,
// python-matplotlib-data):
//   vga-faces.pgm     640x480  grace_hopper.jpg resized
//   vga-empty.pgm     640x480  home.jpg (no faces) resized
//   1080p-crowd.pgm   1920x1080  3x2 mosaic of six photos with faces
//   1080p-empty.pgm   1920x1080  building.jpg (no faces) resized
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio>
#include <string>

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

int main (int argc, char **argv) {
  if (argc != 2) {
    std::fprintf (stderr, "usage: %s OUTPUT-DIR\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1], ocv = "/usr/share/doc/opencv-doc/examples/data/",
                    ski = "/usr/lib/python3/dist-packages/skimage/data/",
                    hopper = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg";
  cv::imwrite (out + "/vga-faces.pgm", load (hopper, {640, 480}));
  cv::imwrite (out + "/vga-empty.pgm", load (ocv + "home.jpg", {640, 480}));
  cv::imwrite (out + "/1080p-empty.pgm", load (ocv + "building.jpg", {1920, 1080}));
  cv::Mat crowd (1080, 1920, CV_8U);
  const std::string tiles[6] = {hopper, ski + "astronaut.png", ocv + "messi5.jpg", ocv + "basketball2.png",
                                ocv + "left01.jpg", ocv + "baboon.jpg"};
  for (int i = 0; i < 6; i++)
    load (tiles[i], {640, 540}).copyTo (crowd (cv::Rect ((i % 3) * 640, (i / 3) * 540, 640, 540)));
  cv::imwrite (out + "/1080p-crowd.pgm", crowd);
  std::printf ("wrote 4 frames to %s\n", out.c_str ());
  return 0;
}
