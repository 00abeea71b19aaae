#include "plan.h"

#include <algorithm>
#include <cmath>

namespace gpudetect {
namespace track {

int TilePlanner::row_words () const {
  const Geometry &g = geometry;
  const int pwk = (g.positions_w () + kx - 1) / kx;
  return (pwk * kx + g.template_w + 3) / 4 * 4;
}
size_t TilePlanner::template_words () const {
  return 2 * static_cast<size_t> ((geometry.template_w * tch + 3) / 4 * 4);
}
int TilePlanner::area_rows (int rows, int wg) const {
  const Geometry &g = geometry;
  if (tch >= g.template_h)
    return rows + g.template_h - 1;
  const int pwk = (g.positions_w () + kx - 1) / kx;
  return std::min (rows, (wg - 1) / pwk + 2) + tch - 1;
}
bool TilePlanner::fits (int rows, int wg, size_t *scratch) const {
  size_t np2 = 1;
  while (np2 < static_cast<size_t> (wg))
    np2 <<= 1;
  *scratch = std::max (static_cast<size_t> (area_rows (rows, wg)) * row_words (), 2 * np2);
  return *scratch <= local_words;
}
// The work of a part of `rows` offset rows on `wg` work-items, in a
// compute unit's lane-operations: its offsets' multiply-adds and SADs,
// the sampling of its area rows (once, or once per pass and chunk), a
// barrier's worth per pass and chunk.
double TilePlanner::work (int rows, int wg) const {
  const Geometry &g = geometry;
  const int pwk = (g.positions_w () + kx - 1) / kx;
  const double per_offset = 2.0 * g.template_w * g.template_h; // a multiply-add and a SAD per pixel
  const double iters = std::ceil (static_cast<double> (rows) * pwk / wg);
  double w = wg * iters * kx * per_offset;
  if (tch >= g.template_h)
    return w + static_cast<double> (rows + g.template_h - 1) * row_words () * 16;
  const double chunks = std::ceil (static_cast<double> (g.template_h) / tch);
  return w + iters * chunks * (static_cast<double> (area_rows (rows, wg)) * row_words () * 16 + wg * 32);
}
// The plan for `templates` templates: parts fixed by the configuration, or
// the one that gives the busiest compute unit the least work (the
// templates' work-groups spread evenly over the compute units, each
// work-group's work-items as many as its groups of offsets, in whole
// warps, up to the kernel's limit; its area's sampling besides; a second
// launch where there are several parts).  templates 0: the plan of the
// least work per template for many templates (the chunks' choice).
bool TilePlanner::plan (int templates, TilePlan *out, double *cost_out) const {
  const Geometry &g = geometry;
  const int ph = g.positions_h (), pwk = (g.positions_w () + kx - 1) / kx;
  size_t cap = max_wg;
  if (work_group > 0)
    cap = std::min<size_t> (cap, work_group);
  const int max_wg = static_cast<int> (cap >= 32 ? cap / 32 * 32 : cap);
  if (max_wg < 1)
    return false;
  auto threads = [&] (int rows) {
    const int want = rows * pwk;
    return std::min (max_wg, (want + 31) / 32 * 32);
  };
  const double cus = std::max (compute_units, 1u);
  if (parts > 0) { // fixed; more parts where the area's rows do not fit
    for (int rows = (ph + std::min (parts, ph) - 1) / std::min (parts, ph); rows >= 1; rows--) {
      const int wg = threads (rows);
      size_t scratch = 0;
      if (fits (rows, wg, &scratch)) {
        *out = {(ph + rows - 1) / rows, rows, wg, scratch};
        if (cost_out)
          *cost_out = out->parts * work (rows, wg);
        return true;
      }
    }
    return false;
  }
  double best_cost = 0;
  bool found = false;
  for (int rows = ph; rows >= 1; rows--) {
    const int p = (ph + rows - 1) / rows;
    const int wg = threads (rows);
    size_t scratch = 0;
    if (!fits (rows, wg, &scratch))
      continue;
    const double part_work = work (rows, wg);
    // a second launch: about 2 us of a compute unit's 128 lanes at 1.7 GHz
    const double cost = templates > 0 ? std::ceil (static_cast<double> (templates) * p / cus) * part_work +
                                            (p > 1 ? 4.4e5 : 0)
                                      : p * part_work;
    if (!found || cost < best_cost) {
      found = true;
      best_cost = cost;
      *out = {p, rows, wg, scratch};
    }
  }
  if (found && cost_out)
    *cost_out = best_cost;
  return found;
}

// The tiles' template rows per chunk for `local` bytes of local memory of
// which `reserved` go to the kernel's other arrays and the driver: the
// whole template where it and the area rows of one offset row fit, else
// the chunk size of the least work per template (plan (0)).  Sets
// tch and local_words; false where nothing fits.
bool TilePlanner::choose_chunks (size_t local, size_t reserved) {
  const int th = geometry.template_h;
  int best_tch = 0, last = 0;
  double best_cost = 0;
  for (int c = 1; c <= th; c++) {
    const int t = (th + c - 1) / c;
    if (t == last)
      continue;
    last = t;
    tch = t;
    const size_t words = template_words () + reserved / 4;
    local_words = local / 4 > words ? local / 4 - words : 0;
    TilePlan p;
    double cost = 0;
    if (!plan (0, &p, &cost))
      continue;
    if (t == th) { // the whole template: as measured (docs/tracking.md)
      best_tch = t;
      break;
    }
    if (!best_tch || cost < best_cost) {
      best_tch = t;
      best_cost = cost;
    }
  }
  if (!best_tch)
    return false;
  tch = best_tch;
  const size_t words = template_words () + reserved / 4;
  local_words = local / 4 > words ? local / 4 - words : 0;
  return true;
}

} // namespace track
} // namespace gpudetect
