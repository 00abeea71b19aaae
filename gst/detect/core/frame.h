// A frame as the engine takes it, and its pixel layout on the device.
#pragma once

#include "cl/cl.h"

#include <cstdint>

namespace gpudetect {

enum class PixelFormat { Gray8, Rgba, Bgra, Rgbx, Bgrx, Argb, Abgr, Xrgb, Xbgr };

struct Frame {
  const uint8_t *data = nullptr; // first pixel (Y plane for NV12/I420: pass Gray8)
  int width = 0, height = 0;
  int stride = 0;                // bytes per row
  PixelFormat format = PixelFormat::Gray8;
};

inline int bytes_per_pixel (PixelFormat f) { return f == PixelFormat::Gray8 ? 1 : 4; }

// Byte offsets of R, G, B inside a 4-byte pixel.
inline cl_int4 rgb_offsets (PixelFormat f) {
  switch (f) {
  case PixelFormat::Rgba: case PixelFormat::Rgbx: return {{0, 1, 2, 0}};
  case PixelFormat::Bgra: case PixelFormat::Bgrx: return {{2, 1, 0, 0}};
  case PixelFormat::Argb: case PixelFormat::Xrgb: return {{1, 2, 3, 0}};
  case PixelFormat::Abgr: case PixelFormat::Xbgr: return {{3, 2, 1, 0}};
  default: return {{0, 0, 0, 0}};
  }
}

// The frame as it lies on the device after the upload: rows packed
// (width * bytes per pixel apart), grey or 4-byte RGB.
struct FrameLayout {
  PixelFormat format = PixelFormat::Gray8;
  int width = 0, height = 0;
  int bpp () const { return bytes_per_pixel (format); }
  int stride () const { return width * bpp (); }
};

} // namespace gpudetect
