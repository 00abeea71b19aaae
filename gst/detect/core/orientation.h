// Felzenszwalb's snap of a gradient to one of 18 orientations, as dlib's FHOG
// and cv::dpm compute it (the host references of the families that use it;
// kernels/felzenszwalb.cl is the device's).
#pragma once

namespace gpudetect {

// The orientation (0-17: 9 directions, then their opposites) whose unit
// vector has the largest dot product with (dx, dy), computed in T as the
// reference does (the product with dx first); 0 for a zero gradient.
template <typename T> int snap_orientation (T dx, T dy) {
  static constexpr T u[9] = {T (1.0000), T (0.9397), T (0.7660), T (0.5000), T (0.1736),
                             T (-0.1736), T (-0.5000), T (-0.7660), T (-0.9397)};
  static constexpr T v[9] = {T (0.0000), T (0.3420), T (0.6428), T (0.8660), T (0.9848),
                             T (0.9848), T (0.8660), T (0.6428), T (0.3420)};
  T best = 0;
  int o = 0;
  for (int k = 0; k < 9; k++) {
    T dot = dx * u[k];
    dot += dy * v[k];
    if (dot > best) {
      best = dot;
      o = k;
    } else if (-dot > best) {
      best = -dot;
      o = k + 9;
    }
  }
  return o;
}

} // namespace gpudetect
