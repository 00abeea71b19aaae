// The linear HOG filter model's file (families/hogfilter/text.cpp) over any
// bytes.  Beyond "no crash": a refused file leaves the model untouched and is
// named in under 400 bytes; a model that loads keeps every invariant the
// kernels and the plan rely on (cells of 8 pixels, filter sides and counts
// within their caps, dims x rows x cols finite coefficients a filter, overlap
// thresholds in [0, 1]; hog-dt: OpenCV's block geometry, one filter, its
// parameters in their ranges), and write_hogfilter gives a text that loads to
// the identical model and writes back to the same text.
#include "fuzz.h"

#include "families/hogfilter/model.h"

#include <cmath>
#include <cstring>

using namespace gpudetect;

static bool same (double a, double b) { return std::memcmp (&a, &b, sizeof a) == 0 || a == b; }

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  HogFilterModel m;
  m.name = "untouched";
  const std::string err = parse_hogfilter (fuzz_text (data, size), &m).message;
  if (!err.empty ()) {
    FUZZ_CHECK (m.name == "untouched" && m.filters.empty (), "a refused model was partly filled in: %s", err.c_str ());
    FUZZ_CHECK (err.size () < 400, "a message of %zu bytes", err.size ());
    return 0;
  }
  FUZZ_CHECK (m.cell == 8 && m.pyramid_down >= 4 && m.pyramid_down <= 20 && m.max_levels >= 1 &&
                  m.max_levels <= kHogMaxLevels && m.min_level_width >= 8 && m.min_level_height >= 8,
              "header");
  FUZZ_CHECK (m.rows >= 1 && m.cols >= 1 && m.rows <= kHogMaxFilterSide && m.cols <= kHogMaxFilterSide &&
                  !m.filters.empty () && m.filters.size () <= static_cast<size_t> (kHogMaxFilters),
              "%dx%d, %zu filters", m.rows, m.cols, m.filters.size ());
  FUZZ_CHECK (m.iou >= 0 && m.iou <= 1 && m.covered >= 0 && m.covered <= 1 && std::isfinite (m.threshold), "overlap");
  const DtHogParams &p = m.dt;
  if (m.features == HogFeatures::DalalTriggs)
    FUZZ_CHECK (m.dims () == kDtDims && p.bins == 9 && p.block == 16 && p.block_stride == 8 && p.cell == 8 &&
                    m.filters.size () == 1 && p.win_sigma > 0 && p.win_sigma <= 1000 && p.l2hys > 0 && p.l2hys <= 1 &&
                    p.scale >= kDtMinScale && p.scale <= 4 && p.max_levels >= 1 && p.max_levels <= kHogMaxLevels &&
                    p.group >= 0 && p.group <= 1000 && p.group_eps >= 0 && p.group_eps <= 1,
                "hog-dt header");
  else
    FUZZ_CHECK (m.dims () == kFhogDims, "%d dimensions", m.dims ());
  for (const HogFilterModel::Filter &f : m.filters) {
    FUZZ_CHECK (f.coef.size () == static_cast<size_t> (m.dims ()) * m.rows * m.cols, "%zu coefficients",
                f.coef.size ());
    FUZZ_CHECK (std::isfinite (f.bias), "bias");
    for (float c : f.coef)
      FUZZ_CHECK (std::isfinite (c), "coefficient");
  }
  const std::string written = write_hogfilter (m);
  HogFilterModel back;
  const std::string err2 = parse_hogfilter (written, &back).message;
  FUZZ_CHECK (err2.empty (), "the written model does not load: %s", err2.c_str ());
  FUZZ_CHECK (back.name == m.name && back.cell == m.cell && back.pyramid_down == m.pyramid_down &&
                  back.min_level_width == m.min_level_width && back.min_level_height == m.min_level_height &&
                  back.max_levels == m.max_levels && back.rows == m.rows && back.cols == m.cols &&
                  same (back.iou, m.iou) && same (back.covered, m.covered) && same (back.threshold, m.threshold) &&
                  back.filters.size () == m.filters.size () && back.features == m.features,
              "header came back different");
  const DtHogParams &q = back.dt;
  FUZZ_CHECK (q.bins == p.bins && q.block == p.block && q.block_stride == p.block_stride && same (q.win_sigma, p.win_sigma) &&
                  same (q.l2hys, p.l2hys) && q.gamma == p.gamma && same (q.scale, p.scale) &&
                  q.max_levels == p.max_levels && q.group == p.group && same (q.group_eps, p.group_eps),
              "hog-dt parameters came back different");
  for (size_t i = 0; i < m.filters.size () && i < back.filters.size (); i++)
    FUZZ_CHECK (same (back.filters[i].bias, m.filters[i].bias) && back.filters[i].coef == m.filters[i].coef,
                "filter %zu came back different", i);
  FUZZ_CHECK (write_hogfilter (back) == written, "writing the model again gives another text");
  return 0;
}
