// Linear filters over FHOG features (fhog.h), as dlib's
// object_detector<scan_fhog_pyramid<pyramid_down<N>>> applies them: every
// filter is correlated with every level's padded feature planes; a window is
// an object of filter i where its score minus the filter's bias reaches the
// threshold (0 by default: dlib's adjust_threshold); the objects of every
// filter are then sorted by that confidence and kept greedily unless they
// overlap one kept before (dlib's test_box_overlap: intersection over union
// above `iou`, or more than `covered` of either box covered).
//
// Or (features hog-dt) one linear SVM over Dalal and Triggs' HOG blocks, as
// OpenCV's HOGDescriptor::detectMultiScale applies it (dthog.h): the window is
// an object where its score minus the bias reaches the threshold (OpenCV's
// hitThreshold; the bias is minus OpenCV's rho), and the windows are grouped
// by OpenCV's groupRectangles.
//
// In-memory form and the file format's reader and writer (text.cpp,
// models/README.md).
#pragma once

#include "cl/error.h"
#include "dthog.h"
#include "fhog.h"

#include <string>
#include <vector>

namespace gpudetect {

enum class HogFeatures { Fhog31, DalalTriggs };

struct HogFilterModel {
  struct Filter {
    double bias = 0;
    std::vector<float> coef; // dims () planes of rows x cols, row-major, plane after plane
  };

  HogFeatures features = HogFeatures::Fhog31;
  DtHogParams dt; // features hog-dt
  int dims () const { return features == HogFeatures::DalalTriggs ? dt.dims () : kFhogDims; }

  std::string name;
  int cell = 8;
  int pyramid_down = 6;
  int min_level_width = 64, min_level_height = 64;
  int max_levels = 1000;
  int rows = 0, cols = 0;   // every filter's size in cells
  double iou = 0.5, covered = 1.0;
  double threshold = 0;     // the least confidence (score - bias) of an object
  std::vector<Filter> filters;
  std::string path, default_label; // set by the file loader

  FhogParams fhog () const {
    FhogParams p;
    p.cell = cell;
    p.pyramid_down = pyramid_down;
    p.min_level_width = min_level_width;
    p.min_level_height = min_level_height;
    p.max_levels = max_levels;
    p.pad_rows = rows;
    p.pad_cols = cols;
    return p;
  }
};

// Limits of what a file may hold (models/README.md).
constexpr int kHogMaxFilterSide = 64;
constexpr int kHogMaxFilters = 64;
constexpr int kHogMaxLevels = 1000;
constexpr double kDtMinScale = 1.01; // hog-dt's scale between levels
constexpr int kHogMaxMinLevel = 4096;
constexpr double kHogMaxCoef = 1e6;

// Whether a text is a filter model (its first line), the model from it (an
// empty string on success, else a message naming the line and column at
// fault), and the text for a model (every number written so that it reads
// back exactly).
bool is_hogfilter_text (const std::string &text);
Error parse_hogfilter (const std::string &text, HogFilterModel *out);
std::string write_hogfilter (const HogFilterModel &m);

} // namespace gpudetect
