// Deformable part models as OpenCV's cv::dpm (opencv_contrib 4.6, module
// dpm) reads and runs them: the model in memory, the loader of its XML
// (xml.cpp) and its limits.
//
// A model has components; a component has a root filter (evaluated on a
// level of the feature pyramid), parts (filters evaluated on the level of
// twice the resolution, `interval` levels below), each with an anchor and a
// quadratic deformation cost, a bias and location weights.  Filters are
// rows x cols cells of 32 features (Felzenszwalb's 31 + truncation; dpm.h).
//
// The file is what cv::dpm's CascadeModel::deserialize reads from an OpenCV
// FileStorage (models/README.md):
//   <opencv_storage>
//   <SBin>8</SBin> <Interval>5</Interval> <MaxSizeX>5</MaxSizeX> <MaxSizeY>15</MaxSizeY>
//   <NumComponents>2</NumComponents> <NumFeatures>32</NumFeatures> <PCADim>6</PCADim>
//   <ScoreThreshold>-0.5</ScoreThreshold>
//   <PCAcoeff type_id="opencv-matrix">..</PCAcoeff>      32 x PCADim
//   <Bias>b0 b1</Bias>                                     one per component
//   <RootFilters><_ type_id="opencv-matrix">rows x (cols * 32)</_>...</RootFilters>
//   <RootPCAFilters>..</RootPCAFilters> <PartFilters>..</PartFilters> <PartPCAFilters>..</PartPCAFilters>
//   <PrunThreshold><_>..</_>...</PrunThreshold>            per component
//   <Anchor><_>ax ay</_>...</Anchor> <Deformation><_>d0 d1 d2 d3</_>...</Deformation>  per part
//   <NumParts>n0 n1</NumParts> <PartOrder><_>..</_>...</PartOrder>
//   <LocationWeight><_>w0 w1 w2</_>...</LocationWeight>    per component
//   </opencv_storage>
// The part filters, anchors and deformations of component 0 come first, then
// those of component 1, and so on.  The PCA coefficients, PCA filters,
// pruning thresholds and part order drive cv::dpm's cascade (its early
// rejection); they are checked when present but not kept: gpudetect scores
// every window with the full model (dpm.h says how that gives cv::dpm's
// detections).
#pragma once

#include "cl/error.h"
#include <libxml/tree.h>

#include <cstddef>
#include <string>
#include <vector>

namespace gpudetect {

constexpr int kDpmDims = 32; // features per cell (cv::dpm's Feature::dimHOG)

struct DpmFilter {
  int rows = 0, cols = 0;
  std::vector<double> coef; // rows x cols x kDpmDims, as the file's matrix: row, then cell, then feature
  double at (int y, int x, int d) const { return coef[(static_cast<size_t> (y) * cols + x) * kDpmDims + d]; }
};

struct DpmPart {
  DpmFilter filter;
  int anchor_x = 0, anchor_y = 0; // (int) of the file's values, as cv::dpm uses them
  double def[4] = {};             // cost of a displacement (dx, dy): def0 dx^2 + def1 dx + def2 dy^2 + def3 dy
};

struct DpmComponent {
  DpmFilter root;
  double bias = 0;          // the file's value rounded to float (cv::dpm keeps it as a float)
  double location[3] = {};  // weights of the level's octave (cv::dpm's location features)
  std::vector<DpmPart> parts;
};

struct DpmModel {
  int sbin = 8;             // cell size in pixels of the root levels (parts: sbin / 2)
  int interval = 10;        // levels per octave
  int pad_x = 0, pad_y = 0; // MaxSizeX, MaxSizeY: the padding, in cells, around every level
  double threshold = 0;     // ScoreThreshold (a float in cv::dpm)
  std::vector<DpmComponent> components;
  std::string path, default_label; // set by the file loader
};

// Limits of what a file may hold (models/README.md).  The parameters that
// multiply the memory and work of a frame (levels an octave, padding, cell
// size, filters) are capped at a few times what real models use
// (inriaperson.xml: SBin 8, Interval 5, padding 5 x 15, 2 components of 8
// parts; Felzenszwalb's VOC models: Interval 10, up to 6 components of 8 parts).
constexpr int kDpmMaxComponents = 16;
constexpr int kDpmMaxParts = 32;         // per component
constexpr int kDpmMaxTotalParts = 128;   // every component's together
constexpr int kDpmMaxFilterSide = 64;    // cells
constexpr int kDpmMinSbin = 4;           // parts' cells of SBin / 2 pixels
constexpr int kDpmMaxSbin = 64;
constexpr int kDpmMaxInterval = 20;
constexpr int kDpmMaxPad = 32;
constexpr int kDpmMaxAnchor = 1024;
constexpr size_t kDpmMaxCoefficients = 1u << 22; // every filter together (inriaperson.xml: 23232)
constexpr double kDpmMaxValue = 1e6;     // |coefficient|, |bias|, |weight|, |deformation|, |threshold|

// Whether an XML document is a cv::dpm model (an <opencv_storage> holding
// <RootFilters>), and the model from it: an empty string on success, else a
// message naming the element (and its line) at fault.
bool is_dpm_storage (const xmlNode *root);
Error read_dpm_storage (const xmlNode *root, DpmModel *out);

// The same from a file's text (parses it first; for tests and the fuzzer).
Error parse_dpm_xml (const std::string &text, DpmModel *out);

} // namespace gpudetect
