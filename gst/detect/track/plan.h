// The template search's tiles schedule, planned: a cost model of the tiles
// kernel (kernels/track.cl) that picks, for a number of templates, how many
// parts each template's offset rows are cut into, the rows of a part and the
// work-items of its work-group, within the kernel's local memory; and the
// template rows per chunk where a whole template does not fit beside its
// area (docs/tracking.md, "Schedules of the search").
#pragma once

#include "search.h"

#include <cstddef>

namespace gpudetect {
namespace track {

// Parts of `rows` offset rows, `wg` work-items, `scratch` words of local
// memory for the area (and the reductions).
struct TilePlan {
  int parts = 1, rows = 1, wg = 32;
  size_t scratch = 0;
};

struct TilePlanner {
  Geometry geometry;
  int kx = 1;                 // offsets per work-item (the rows schedule's too)
  int tch = 0;                // template rows per chunk (template_h: the whole template)
  int parts = 1;              // 0: automatic, else fixed
  int work_group = 0;         // the configuration's cap on work-items (0: none)
  size_t max_wg = 0;          // the tiles kernel's work-group limit
  size_t local_words = 0;     // local memory left to its area, in words
  unsigned compute_units = 1;

  int row_words () const; // SWT in kernels/track.cl
  // Local memory words of the template's colours and weights (TCH rows).
  size_t template_words () const;
  // The area rows a work-group of `wg` holds at once for parts of `rows`
  // offset rows: all of them under the whole template, or (template rows in
  // chunks) those of a pass of one group of offsets per work-item under a
  // chunk.
  int area_rows (int rows, int wg) const;
  bool fits (int rows, int wg, size_t *scratch) const;
  // The work of a part of `rows` offset rows on `wg` work-items, in a
  // compute unit's lane-operations.
  double work (int rows, int wg) const;
  // The plan for `templates` templates: parts fixed by `parts`, or the one
  // that gives the busiest compute unit the least work.  templates 0: the
  // plan of the least work per template for many templates (the chunks'
  // choice).  False where nothing fits.
  bool plan (int templates, TilePlan *out, double *cost_out = nullptr) const;
  // The template rows per chunk for `local` bytes of local memory of which
  // `reserved` go to the kernel's other arrays and the driver.  Sets tch
  // and local_words; false where nothing fits.
  bool choose_chunks (size_t local, size_t reserved);
};

} // namespace track
} // namespace gpudetect
