// Converts OpenCV's people detector (cv::HOGDescriptor::getDefaultPeopleDetector
// of libopencv-objdetect, Apache License 2.0: Dalal and Triggs' linear SVM
// over HOG blocks of a 64 x 128 window) into the project's linear HOG filter
// model with features hog-dt (models/README.md):
//
//   gpudetect-convert-opencv-hog OUT.hogfilter
//
// The descriptor's parameters are HOGDescriptor's defaults, which the
// detector was trained with; the pyramid and grouping are
// detectMultiScale's defaults (scale 1.05, groupThreshold 2, eps 0.2,
// hitThreshold 0).  OpenCV's weight vector lists the blocks of the window
// column by column (x outer, y inner), each block's 36 values as its
// histogram holds them (cell x * 2 + cell y, 9 bins each); the file holds
// one plane of 15 x 7 block positions per value, row-major, and the bias
// minus rho (the score is the dot product plus rho).
#include "families/hogfilter/model.h"

#include <opencv2/objdetect.hpp>

#include <cstdio>
#include <fstream>

using namespace gpudetect;

int main (int argc, char **argv) {
  if (argc != 2) {
    std::fprintf (stderr, "usage: %s OUT.hogfilter\n", argv[0]);
    return 2;
  }
  const cv::HOGDescriptor hog;
  const std::vector<float> svm = cv::HOGDescriptor::getDefaultPeopleDetector ();
  HogFilterModel m;
  m.name = "hog-people";
  m.features = HogFeatures::DalalTriggs;
  m.cell = hog.cellSize.width;
  DtHogParams &p = m.dt;
  p.cell = hog.cellSize.width;
  p.block = hog.blockSize.width;
  p.block_stride = hog.blockStride.width;
  p.bins = hog.nbins;
  p.win_sigma = hog.getWinSigma ();
  p.l2hys = hog.L2HysThreshold;
  p.gamma = hog.gammaCorrection;
  p.max_levels = hog.nlevels;
  p.scale = 1.05;    // detectMultiScale's scale
  p.group = 2;       // its groupThreshold
  p.group_eps = 0.2; // its groupRectangles eps
  m.threshold = 0;   // its hitThreshold
  if (hog.cellSize.height != p.cell || hog.blockSize.height != p.block || hog.blockStride.height != p.block_stride ||
      hog.signedGradient || p.dims () != kDtDims) {
    std::fprintf (stderr, "HOGDescriptor's defaults are not the ones this converter knows\n");
    return 1;
  }
  m.rows = (hog.winSize.height - p.block) / p.block_stride + 1;
  m.cols = (hog.winSize.width - p.block) / p.block_stride + 1;
  const size_t dsize = hog.getDescriptorSize ();
  if (dsize != static_cast<size_t> (m.rows) * m.cols * p.dims () || svm.size () != dsize + 1) {
    std::fprintf (stderr, "the people detector has %zu weights, the descriptor %zu values\n", svm.size (), dsize);
    return 1;
  }
  HogFilterModel::Filter f;
  f.bias = -static_cast<double> (svm[dsize]);
  for (int d = 0; d < p.dims (); d++)
    for (int r = 0; r < m.rows; r++)
      for (int c = 0; c < m.cols; c++)
        f.coef.push_back (svm[(static_cast<size_t> (c) * m.rows + r) * p.dims () + d]);
  m.filters.push_back (std::move (f));
  // the written text must read back as the same model
  const std::string text = write_hogfilter (m);
  HogFilterModel back;
  if (gpudetect::Error e = parse_hogfilter (text, &back)) {
    std::fprintf (stderr, "the converted model does not load: %s\n", e.message.c_str ());
    return 1;
  }
  if (back.filters.size () != 1 || back.filters[0].coef != m.filters[0].coef) {
    std::fprintf (stderr, "the converted model reads back different\n");
    return 1;
  }
  std::ofstream out (argv[1], std::ios::binary);
  const size_t eol = text.find ('\n') + 1;
  out << text.substr (0, eol)
      << "# OpenCV's people detector (cv::HOGDescriptor::getDefaultPeopleDetector, Apache License 2.0),\n"
         "# converted by gpudetect-convert-opencv-hog\n"
      << text.substr (eol);
  if (!out.flush ()) {
    std::fprintf (stderr, "cannot write %s\n", argv[1]);
    return 1;
  }
  std::fprintf (stderr, "hog-people: %dx%d blocks of %d values, rho %.9g\n", m.rows, m.cols, p.dims (),
                static_cast<double> (svm[dsize]));
  return 0;
}
