#include "group.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

namespace gpudetect {

namespace {

bool similar (const Rect &a, const Rect &b, double eps) {
  double delta = eps * (std::min (a.width, b.width) + std::min (a.height, b.height)) * 0.5;
  return std::abs (a.x - b.x) <= delta && std::abs (a.y - b.y) <= delta &&
         std::abs (a.x + a.width - b.x - b.width) <= delta && std::abs (a.y + a.height - b.y - b.height) <= delta;
}

// The classes of OpenCV's partition() with similar(): the connected parts of
// the "similar" relation, numbered in the order of their first rectangle.
// similar() needs |a.x - b.x| <= delta <= eps * (a.width + a.height) / 2, so
// with the rectangles in order of x the neighbours of one lie within that
// distance of it.  Each class is gathered from a seed, breadth first, among
// the rectangles not yet in a class: those join as they are found and are
// not tested again, so a dense cluster (a face's few hundred raw windows are
// all similar to each other) costs about one test per rectangle rather than
// one per pair.
int partition (const std::vector<Rect> &v, double eps, std::vector<int> *labels) {
  const int n = static_cast<int> (v.size ());
  std::vector<int> order (n);
  std::iota (order.begin (), order.end (), 0);
  std::stable_sort (order.begin (), order.end (), [&] (int a, int b) { return v[a].x < v[b].x; });
  std::vector<int> xs (n);
  for (int k = 0; k < n; k++)
    xs[k] = v[order[k]].x;
  // next_free[k]: a position at or after k whose rectangle may still be
  // unclassed (n past the end); followed with path halving
  std::vector<int> next_free (n + 1);
  std::iota (next_free.begin (), next_free.end (), 0);
  auto free_from = [&] (int k) {
    while (next_free[k] != k)
      k = next_free[k] = next_free[next_free[k]];
    return k;
  };
  std::vector<int> pos (n), cls (n, -1), queue;
  for (int k = 0; k < n; k++)
    pos[order[k]] = k;
  int nclasses = 0;
  for (int seed = 0; seed < n; seed++) {
    if (cls[seed] >= 0)
      continue;
    const int c = nclasses++;
    cls[seed] = c;
    next_free[pos[seed]] = pos[seed] + 1;
    queue.assign (1, seed);
    while (!queue.empty ()) {
      const int u = queue.back ();
      queue.pop_back ();
      const Rect &r = v[u];
      const double reach = eps * (r.width + r.height) * 0.5;
      const int x0 = r.x - static_cast<int> (reach); // the least integer x within reach
      int k = static_cast<int> (std::lower_bound (xs.begin (), xs.end (), x0) - xs.begin ());
      for (k = free_from (k); k < n && xs[k] - r.x <= reach; k = free_from (k + 1)) {
        const int w = order[k];
        if (!similar (r, v[w], eps))
          continue;
        cls[w] = c;
        next_free[k] = k + 1;
        queue.push_back (w);
      }
    }
  }
  *labels = std::move (cls);
  return nclasses;
}

// saturate_cast<int>(float): round half to even.
int round_float (float v) { return static_cast<int> (std::nearbyint (v)); }

} // namespace

float confidence_from_neighbors (int n) { return n <= 0 ? 0.f : static_cast<float> (n) / (n + 4); }

std::vector<GroupedRect> group_rectangles (const std::vector<Rect> &raw, int min_neighbors, double eps,
                                           const std::vector<float> *scores) {
  std::vector<GroupedRect> out;
  if (min_neighbors <= 0 || raw.empty ()) {
    for (size_t i = 0; i < raw.size (); i++)
      out.push_back ({raw[i], 1, confidence_from_neighbors (1), scores ? (*scores)[i] : 0.f});
    return out;
  }
  std::vector<int> labels;
  int nclasses = partition (raw, eps, &labels);
  std::vector<Rect> sums (nclasses);
  std::vector<int> weights (nclasses, 0);
  std::vector<float> best (nclasses, -std::numeric_limits<float>::infinity ());
  for (size_t i = 0; i < raw.size (); i++) {
    if (scores)
      best[labels[i]] = std::max (best[labels[i]], (*scores)[i]);
    Rect &s = sums[labels[i]];
    s.x += raw[i].x;
    s.y += raw[i].y;
    s.width += raw[i].width;
    s.height += raw[i].height;
    weights[labels[i]]++;
  }
  std::vector<Rect> avg (nclasses);
  for (int i = 0; i < nclasses; i++) {
    float s = 1.f / weights[i];
    avg[i] = {round_float (sums[i].x * s), round_float (sums[i].y * s), round_float (sums[i].width * s),
              round_float (sums[i].height * s)};
  }
  for (int i = 0; i < nclasses; i++) {
    const Rect r1 = avg[i];
    const int n1 = weights[i];
    if (n1 <= min_neighbors)
      continue;
    int j = 0;
    for (; j < nclasses; j++) {
      const int n2 = weights[j];
      if (j == i || n2 <= min_neighbors)
        continue;
      const Rect r2 = avg[j];
      int dx = static_cast<int> (std::nearbyint (r2.width * eps));
      int dy = static_cast<int> (std::nearbyint (r2.height * eps));
      if (r1.x >= r2.x - dx && r1.y >= r2.y - dy && r1.x + r1.width <= r2.x + r2.width + dx &&
          r1.y + r1.height <= r2.y + r2.height + dy && (n2 > std::max (3, n1) || n1 < 3))
        break;
    }
    if (j == nclasses)
      out.push_back ({r1, n1, confidence_from_neighbors (n1), scores ? best[i] : 0.f});
  }
  return out;
}

Rect clip_rect (const Rect &r, int width, int height) {
  int x0 = std::max (r.x, 0), y0 = std::max (r.y, 0);
  int x1 = std::min (r.x + r.width, width), y1 = std::min (r.y + r.height, height);
  if (x1 <= x0 || y1 <= y0)
    return {x0, y0, 0, 0};
  return {x0, y0, x1 - x0, y1 - y0};
}

double iou (const Rect &a, const Rect &b) {
  int x0 = std::max (a.x, b.x), y0 = std::max (a.y, b.y);
  int x1 = std::min (a.x + a.width, b.x + b.width), y1 = std::min (a.y + a.height, b.y + b.height);
  double inter = std::max (0, x1 - x0) * static_cast<double> (std::max (0, y1 - y0));
  double uni = static_cast<double> (a.width) * a.height + static_cast<double> (b.width) * b.height - inter;
  return uni > 0 ? inter / uni : 0.0;
}

} // namespace gpudetect
