// OpenCL C for the first stages of a cascade with the model written in as
// constants: feature offsets (as multiples of the integral's row stride),
// node thresholds, category subsets, leaf values and stage thresholds.  The
// generic, data-driven evaluation (kernels/cascade_eval.cl) reads all of these
// from memory for every tree; the generated stages only read the integral.
#pragma once

#include "model.h"

#include <string>

namespace gpudetect {

struct GeneratedStages {
  std::string source; // defines GEN_STAGES, SPEC_STAGES and spec_stage_passes (si, sum, tilted, s, vnf)
  int stages = 0;     // stages [0, stages) are generated (GEN_STAGES)
};

// How many stages from the first keep their trees within `max_trees` (stage
// 0 always, unless max_trees <= 0: none).
int stages_within_trees (const CascadeModel &model, int max_trees);

// Generates the first stages_within_trees (model, max_trees) stages, or fewer
// where deep or many trees would make the code slow to build (none at worst:
// the kernels then read every stage from memory), of which
// the first `first_stages` (all where negative or more) are SPEC_STAGES.  The
// arithmetic is OpenCV's, as in cascade_eval.cl: float feature values, acc_t
// stage sums in tree order.
// narrow_sum: the sum plane is kept modulo 2^16 (NARROW_SUM, Haar models
// without tilted features), so Haar rectangles of more than 257 pixels are
// summed in bands (narrow_band_height).
// asked: the count is the user's (tuning), not the model's default: only the
// depth bounds it.
GeneratedStages generate_stages (const CascadeModel &model, int max_trees, int first_stages = -1,
                                 bool narrow_sum = false, bool asked = false);

// With the sum plane modulo 2^16, a rectangle's corners give its exact sum
// when it holds at most 257 pixels (257 * 255 < 2^16): 0 for such a w x h
// rectangle, else the height of the bands of at most 257 pixels it is summed
// in (w <= 257).
int narrow_band_height (int w, int h);

// The CPU schedule's vector stages: stages [0, max_stages) over 16 adjacent
// windows at once (OpenCL vector types, so that a CPU device runs them as
// SIMD), for LBP stump models and Haar models without tilted features.
// Defines VEC_STAGES and vec_stages_step1/2 (p, q, s) (sum and squared sum at
// the first window), which give each window the number of stages it passed in
// a row, -1 for a flat Haar window; needs LD1/LD2/LDB1/LDB2 (the 16 windows'
// loads at a window step of 1 or 2), accv_t / convert_accv and, for Haar,
// VEC_WINDOW_NORM from the including program.  Other models, and models whose
// first stage's trees are too deep or too many for generated code: stages = 0,
// no source.
GeneratedStages generate_vector_stages (const CascadeModel &model, int max_stages, bool asked = false);

} // namespace gpudetect
