// gpudetect-stage-stats: how much work a cascade is on an image, as OpenCV's
// detectMultiScale schedules it (scale list, window step, skip after a
// stage-0 rejection): windows in the grid, windows evaluated, flat windows
// (Haar), and how many windows each stage rejects.  The floor of any
// implementation that gives OpenCV's answers is this work; the benchmark
// notes compare device times with it.
//
//   gpudetect-stage-stats --model NAME [--scale-factor 1.1] [--min-size 24] IMAGE
//
// A plain CPU evaluation with OpenCV's resize and integral (tools only).
#include "core/models.h"
#include "families/cascade/model.h"
#include "core/pyramid.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

using namespace gpudetect;

int main (int argc, char **argv) {
  std::string model_name, image;
  double scale_factor = 1.1;
  int min_size = 24;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--model" && i + 1 < argc) model_name = argv[++i];
    else if (a == "--scale-factor" && i + 1 < argc) scale_factor = std::atof (argv[++i]);
    else if (a == "--min-size" && i + 1 < argc) min_size = std::atoi (argv[++i]);
    else image = a;
  }
  if (model_name.empty () || image.empty ()) {
    std::fprintf (stderr, "usage: %s --model NAME [--scale-factor F] [--min-size S] IMAGE\n", argv[0]);
    return 2;
  }
  CascadeModel m;
  const std::string path = resolve_model (model_name);
  if (Error e = load_cascade_file (path, &m); e || path.empty ()) {
    std::fprintf (stderr, "%s\n", path.empty () ? "model not found" : e.message.c_str ());
    return 2;
  }
  cv::Mat img = cv::imread (image, cv::IMREAD_GRAYSCALE);
  if (img.empty ()) {
    std::fprintf (stderr, "cannot read %s\n", image.c_str ());
    return 2;
  }
  const PyramidGeometry g = plan_pyramid (img.cols, img.rows, m.window_width, m.window_height, scale_factor,
                                          {min_size, min_size}, {0, 0});
  const bool haar = m.feature_type == CascadeModel::FeatureType::Haar;
  const int S = static_cast<int> (m.stages.size ());
  std::vector<long> rejected (S, 0);
  long grid = 0, evaluated = 0, flat = 0, hits = 0;
  // Trees a stage would need if it stopped as soon as its sum so far, plus the
  // most (least) the trees left can add, is below (at or above) its threshold:
  // the same decision, fewer trees (per stage, and from stage 2 on).
  std::vector<std::vector<double>> rest_max (S), rest_min (S);
  for (int si = 0; si < S; si++) {
    const CascadeModel::Stage &st = m.stages[si];
    rest_max[si].assign (st.ntrees + 1, 0.0);
    rest_min[si].assign (st.ntrees + 1, 0.0);
    for (int t = st.ntrees - 1; t >= 0; t--) {
      const CascadeModel::Tree &tr = m.trees[st.first_tree + t];
      double hi = -1e30, lo = 1e30;
      for (int l = 0; l < tr.node_count + 1; l++) {
        hi = std::max (hi, static_cast<double> (m.leaves[tr.first_leaf + l]));
        lo = std::min (lo, static_cast<double> (m.leaves[tr.first_leaf + l]));
      }
      rest_max[si][t] = rest_max[si][t + 1] + hi;
      rest_min[si][t] = rest_min[si][t + 1] + lo;
    }
  }
  std::vector<long> stage_trees (S, 0), stage_bounded (S, 0);
  for (const PyramidLevel &L : g.levels) {
    cv::Mat r, sum, sq;
    cv::resize (img, r, cv::Size (L.width, L.height), 0, 0, cv::INTER_LINEAR_EXACT);
    cv::integral (r, sum, sq, CV_32S, CV_64F);
    for (int iy = 0; iy < L.ny; iy++) {
      bool skip = false;
      for (int ix = 0; ix < L.nx; ix++) {
        grid++;
        if (skip) {
          skip = false;
          continue;
        }
        evaluated++;
        const int x = ix * L.step, y = iy * L.step;
        auto I = [&] (int xx, int yy) { return sum.at<int> (y + yy, x + xx); };
        float vnf = 1;
        if (haar) { // OpenCV's setWindow: variance over the window inset by one pixel
          const int W = m.window_width, H = m.window_height;
          const double vs = I (1, 1) - I (W - 1, 1) - I (1, H - 1) + I (W - 1, H - 1);
          const double vq = sq.at<double> (y + 1, x + 1) - sq.at<double> (y + 1, x + W - 1) -
                            sq.at<double> (y + H - 1, x + 1) + sq.at<double> (y + H - 1, x + W - 1);
          const double area = (W - 2) * (H - 2);
          double nf = area * vq - vs * vs;
          if (nf > 0) {
            vnf = static_cast<float> (1 / std::sqrt (nf));
            if (area * vnf >= 0.1) {
              flat++;
              continue;
            }
          }
        }
        int si = 0;
        for (; si < S; si++) {
          const CascadeModel::Stage &st = m.stages[si];
          double acc = 0;
          long needed = -1;
          for (int t = 0; t < st.ntrees; t++) {
            const CascadeModel::Tree &tr = m.trees[st.first_tree + t];
            int idx = 0;
            do {
              const CascadeModel::Node &n = m.nodes[tr.first_node + idx];
              bool left;
              if (!haar) {
                const CascadeModel::LbpFeature &f = m.lbp_features[n.feature];
                auto B = [&] (int i, int j) {
                  const int x0 = f.x + i * f.w, y0 = f.y + j * f.h;
                  return I (x0, y0) - I (x0 + f.w, y0) - I (x0, y0 + f.h) + I (x0 + f.w, y0 + f.h);
                };
                const int c = B (1, 1);
                const int code = (B (0, 0) >= c ? 128 : 0) | (B (1, 0) >= c ? 64 : 0) | (B (2, 0) >= c ? 32 : 0) |
                                 (B (2, 1) >= c ? 16 : 0) | (B (2, 2) >= c ? 8 : 0) | (B (1, 2) >= c ? 4 : 0) |
                                 (B (0, 2) >= c ? 2 : 0) | (B (0, 1) >= c ? 1 : 0);
                left = (n.subset[code >> 5] >> (code & 31)) & 1;
              } else {
                const CascadeModel::HaarFeature &f = m.haar_features[n.feature];
                float v = 0;
                for (const CascadeModel::HaarRect &q : f.rect) {
                  if (q.weight == 0)
                    continue;
                  int s;
                  if (f.tilted) { // tilted integral not computed here: count the work, not the answer
                    s = I (q.x, q.y);
                  } else {
                    s = I (q.x, q.y) - I (q.x + q.w, q.y) - I (q.x, q.y + q.h) + I (q.x + q.w, q.y + q.h);
                  }
                  v += q.weight * static_cast<float> (s);
                }
                left = v * vnf < n.threshold;
              }
              idx = left ? n.left : n.right;
            } while (idx > 0);
            acc += m.leaves[tr.first_leaf - idx];
            if (needed < 0 && (acc + rest_max[si][t + 1] < st.threshold - 1e-4 ||
                               acc + rest_min[si][t + 1] >= st.threshold + 1e-4))
              needed = t + 1;
          }
          stage_trees[si] += st.ntrees;
          stage_bounded[si] += needed < 0 ? st.ntrees : needed;
          if (acc < st.threshold)
            break;
        }
        if (si == S)
          hits++;
        else
          rejected[si]++;
        if (si == 0)
          skip = true;
      }
    }
  }
  const long trees = std::accumulate (stage_trees.begin (), stage_trees.end (), 0L);
  std::printf ("%s on %s (%dx%d): %zu levels, %ld windows in the grid, %ld evaluated (%ld flat), %ld trees "
               "evaluated (%.1f per evaluated window), %ld raw hits%s\n",
               m.path.c_str (), image.c_str (), img.cols, img.rows, g.levels.size (), grid, evaluated, flat, trees,
               evaluated ? static_cast<double> (trees) / evaluated : 0.0, hits,
               m.has_tilted ? " (tilted features approximated: counts only)" : "");
  long alive = evaluated - flat, later = 0, later_bounded = 0;
  for (int si = 0; si < S; si++) {
    std::printf ("stage %2d: %3d trees, %9ld windows reach it, %9ld rejected; %10ld trees evaluated, %10ld with "
                 "bounds\n",
                 si, m.stages[si].ntrees, alive, rejected[si], stage_trees[si], stage_bounded[si]);
    alive -= rejected[si];
    if (si >= 2)
      later += stage_trees[si], later_bounded += stage_bounded[si];
  }
  std::printf ("stages 2 on: %ld trees evaluated, %ld with bounds (%.1f %%)\n", later, later_bounded,
               later ? 100.0 * later_bounded / later : 0.0);
  return 0;
}
