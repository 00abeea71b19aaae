// Converts dlib's frontal face detector (dlib::get_frontal_face_detector (),
// libdlib-dev's frontal_face_detector.h, Boost Software License) into the
// project's linear HOG filter model (models/README.md):
//
//   gpudetect-convert-dlib OUT.hogfilter
//
// Each filter is written as dlib's detector applies it: build_fhog_filterbank
// keeps, per feature plane, the rank-reduced filter of its SVD (singular
// values under max (1e-4, 0.1 % of the largest) dropped) wherever the
// separable form is the cheaper one, as it is for these filters; the
// coefficients are the sums of those rank-one terms, so that a direct
// correlation computes dlib's scores up to the order of float additions.
#include "families/hogfilter/model.h"

#include <dlib/image_processing/frontal_face_detector.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

using namespace gpudetect;

int main (int argc, char **argv) {
  if (argc != 2) {
    std::fprintf (stderr, "usage: %s OUT.hogfilter\n", argv[0]);
    return 2;
  }
  dlib::frontal_face_detector det = dlib::get_frontal_face_detector ();
  const auto &scanner = det.get_scanner ();
  if (scanner.get_padding () != 0) {
    std::fprintf (stderr, "a scanner with padding %lu is not supported (only 0)\n", scanner.get_padding ());
    return 1;
  }
  HogFilterModel m;
  m.name = "dlib-frontalface";
  m.cell = static_cast<int> (scanner.get_cell_size ());
  m.pyramid_down = 6; // frontal_face_detector's scan_fhog_pyramid<pyramid_down<6>>
  m.min_level_width = static_cast<int> (scanner.get_min_pyramid_layer_width ());
  m.min_level_height = static_cast<int> (scanner.get_min_pyramid_layer_height ());
  m.max_levels = static_cast<int> (std::min<unsigned long> (scanner.get_max_pyramid_levels (), kHogMaxLevels));
  m.iou = det.get_overlap_tester ().get_iou_thresh ();
  m.covered = det.get_overlap_tester ().get_percent_covered_thresh ();
  m.threshold = 0; // object_detector's adjust_threshold
  for (unsigned long i = 0; i < det.num_detectors (); i++) {
    const auto &w = det.get_w (i);
    const auto fb = scanner.build_fhog_filterbank (w);
    const auto &full = fb.get_filters ();
    const long rows = full[0].nr (), cols = full[0].nc ();
    m.rows = static_cast<int> (rows);
    m.cols = static_cast<int> (cols);
    // object_detector's choice (scan_fhog_pyramid.h, apply_filters_to_fhog)
    const bool separable =
        !(fb.num_separable_filters () > full.size () * std::min (rows, cols) / 3.0);
    HogFilterModel::Filter f;
    f.bias = w (scanner.get_num_dimensions ());
    for (size_t d = 0; d < full.size (); d++)
      for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++) {
          double v = full[d] (r, c);
          if (separable) {
            v = 0;
            for (size_t j = 0; j < fb.row_filters[d].size (); j++)
              v += static_cast<double> (fb.col_filters[d][j] (r)) * fb.row_filters[d][j] (c);
          }
          f.coef.push_back (static_cast<float> (v));
        }
    std::fprintf (stderr, "filter %lu: %ldx%ld cells, bias %.6g, %s\n", i, rows, cols, f.bias,
                  separable ? "rank-reduced (dlib evaluates it separably)" : "full");
    m.filters.push_back (std::move (f));
  }
  // the written text must read back as the same model
  const std::string text = write_hogfilter (m);
  HogFilterModel back;
  if (gpudetect::Error e = parse_hogfilter (text, &back)) {
    std::fprintf (stderr, "the converted model does not load: %s\n", e.message.c_str ());
    return 1;
  }
  std::ofstream out (argv[1], std::ios::binary);
  const size_t eol = text.find ('\n') + 1;
  out << text.substr (0, eol)
      << "# dlib's frontal face detector (dlib::get_frontal_face_detector, Boost Software License 1.0),\n"
         "# converted by gpudetect-convert-dlib\n"
      << text.substr (eol);
  if (!out.flush ()) {
    std::fprintf (stderr, "cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
