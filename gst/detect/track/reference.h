// The template search's host reference: the same integer arithmetic as the
// kernels (track.cl), for the tests and the benchmark's CPU loop.
#pragma once

#include "search.h"

#include <cstdint>
#include <vector>

namespace gpudetect {
namespace track {

namespace reference {
// The frame as packed (R, G, B, 0).
std::vector<uint8_t> convert (const ColorFrame &frame);
// A template cut from a converted frame (R, G, B, m).
std::vector<uint8_t> extract (const uint8_t *rgbx, int fw, int fh, const Grid &grid, const Geometry &g,
                              const std::vector<uint8_t> &mask);
// All distances of a template in the area of `grid`, and the best and
// alternative offsets as the kernel picks them.
void search (const uint8_t *rgbx, int fw, int fh, const uint8_t *tmpl, const Grid &grid, const Geometry &g,
             std::vector<uint32_t> *dmap, Match *m);
} // namespace reference

} // namespace track
} // namespace gpudetect
