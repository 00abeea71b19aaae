#include "patchwork.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpudetect {

namespace {

// The skyline of one patchwork: segments [x, x + w) whose lowest free row is y.
class Skyline {
public:
  Skyline (int rows, int cols) : rows_ (rows), cols_ (cols), segs_{{0, cols, 0}} {}

  // The lowest, then leftmost, place for rows x cols; false if none.
  bool find (int rows, int cols, int *by, int *bx) const {
    bool found = false;
    for (size_t i = 0; i < segs_.size (); i++) {
      const int x = segs_[i].x;
      if (x + cols > cols_)
        break;
      int top = 0;
      for (size_t j = i; j < segs_.size () && segs_[j].x < x + cols; j++)
        top = std::max (top, segs_[j].y);
      if (top + rows > rows_)
        continue;
      if (!found || top < *by || (top == *by && x < *bx)) {
        *by = top;
        *bx = x;
        found = true;
      }
    }
    return found;
  }

  void place (int y, int x, int rows, int cols) {
    std::vector<Seg> out;
    for (const Seg &s : segs_) {
      if (s.x + s.w <= x || s.x >= x + cols) {
        out.push_back (s);
        continue;
      }
      if (s.x < x)
        out.push_back ({s.x, x - s.x, s.y});
      if (s.x + s.w > x + cols)
        out.push_back ({x + cols, s.x + s.w - (x + cols), s.y});
    }
    out.push_back ({x, cols, y + rows});
    std::sort (out.begin (), out.end (), [] (const Seg &a, const Seg &b) { return a.x < b.x; });
    segs_.clear ();
    for (const Seg &s : out)
      if (!segs_.empty () && segs_.back ().y == s.y)
        segs_.back ().w += s.w;
      else
        segs_.push_back (s);
  }

private:
  struct Seg {
    int x, w, y;
  };
  int rows_, cols_;
  std::vector<Seg> segs_;
};

std::vector<int> friendly_between (int lo, int hi, bool even) {
  std::vector<int> v;
  for (int n = std::max (lo, 1); n <= hi; n++)
    if ((!even || n % 2 == 0) && patchwork_friendly (n))
      v.push_back (n);
  return v;
}

} // namespace

bool patchwork_friendly (int n) {
  if (n <= 0)
    return false;
  int e[3] = {0, 0, 0};
  const int primes[3] = {2, 3, 5};
  for (int i = 0; i < 3; i++)
    while (n % primes[i] == 0) {
      n /= primes[i];
      e[i]++;
    }
  return n == 1 && e[1] <= 2 && e[2] <= 1 && e[1] + e[2] <= 2;
}

bool pack_patchworks (const std::vector<PatchworkRect> &planes, int rows, int cols, PatchworkPlan *out) {
  PatchworkPlan plan;
  plan.rows = rows;
  plan.cols = cols;
  plan.places.assign (planes.size (), PatchworkPlace ());
  std::vector<size_t> order (planes.size ());
  std::iota (order.begin (), order.end (), size_t (0));
  std::stable_sort (order.begin (), order.end (), [&] (size_t a, size_t b) {
    return planes[a].rows != planes[b].rows ? planes[a].rows > planes[b].rows : planes[a].cols > planes[b].cols;
  });
  std::vector<Skyline> patches;
  for (size_t i : order) {
    const PatchworkRect &r = planes[i];
    if (r.rows <= 0 || r.cols <= 0)
      continue;
    if (r.rows > rows || r.cols > cols)
      return false;
    PatchworkPlace &p = plan.places[i];
    for (size_t k = 0; k < patches.size () && p.patch < 0; k++)
      if (patches[k].find (r.rows, r.cols, &p.y, &p.x))
        p.patch = static_cast<int> (k);
    if (p.patch < 0) {
      patches.emplace_back (rows, cols);
      p.patch = static_cast<int> (patches.size () - 1);
      p.y = p.x = 0;
    }
    patches[p.patch].place (p.y, p.x, r.rows, r.cols);
  }
  plan.count = static_cast<int> (patches.size ());
  *out = std::move (plan);
  return true;
}

PatchworkPlan plan_patchworks (const std::vector<PatchworkRect> &planes, const PatchworkWork &work) {
  int max_rows = 0, max_cols = 0;
  for (const PatchworkRect &r : planes)
    if (r.rows > 0 && r.cols > 0) {
      max_rows = std::max (max_rows, r.rows);
      max_cols = std::max (max_cols, r.cols);
    }
  PatchworkPlan best;
  if (max_rows == 0)
    return best;
  const double dims = std::max (work.dims, 1), filters = std::max (work.filters, 1);
  for (int rows : friendly_between (std::max (max_rows, 8), 2 * std::max (max_rows, 8), false))
    for (int cols : friendly_between (std::max (max_cols, 8), 2 * std::max (max_cols, 8), true)) {
      PatchworkPlan p;
      if (!pack_patchworks (planes, rows, cols, &p) || p.count == 0)
        continue;
      const uint64_t plane_bytes = uint64_t (rows) * (cols + 2) * 4;
      const uint64_t fwd = plane_bytes * p.count * work.dims, filt = plane_bytes * work.filters * work.dims,
                     inv = plane_bytes * p.count * work.filters;
      if (std::max ({fwd, filt, inv}) > work.max_buffer || fwd + filt + inv > work.max_total)
        continue;
      const double area = static_cast<double> (rows) * cols;
      // real transforms ~2.5 n log2 n flops each (dims forward, filters
      // inverse), a complex multiply-add 8 flops per frequency, n / 2 of
      // them per filter and dimension
      p.cost = p.count * area * (2.5 * (dims + filters) * std::log2 (area) + 4.0 * dims * filters);
      if (best.count == 0 || p.cost < best.cost ||
          (p.cost == best.cost && static_cast<double> (p.rows) * p.cols < static_cast<double> (best.rows) * best.cols))
        best = std::move (p);
    }
  return best;
}

} // namespace gpudetect
