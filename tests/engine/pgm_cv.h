// The engine tests' grey PGM images (pgm.h) as OpenCV images, for the tests
// that compare with OpenCV.
#pragma once
#include "pgm.h"

#include <opencv2/core.hpp>

inline bool read_pgm (const std::string &path, cv::Mat *out) {
  Grey g;
  if (!read_pgm (path, &g))
    return false;
  *out = cv::Mat (g.rows, g.cols, CV_8U, g.px.data ()).clone ();
  return true;
}
